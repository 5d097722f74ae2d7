// NumPy .npy files, versions 1.0, 2.0 and 3.0: every standard descr in either byte order,
// Fortran order, bool, complex, and ml_dtypes' bfloat16 written as '<V2'. The header (a Python
// dict literal) is parsed by a small literal parser, never evaluated. Aligned little-endian data
// is viewed in place; big-endian or unaligned data is copied (and byte-swapped).
#ifndef NUMPROBE_NPY_H_
#define NUMPROBE_NPY_H_

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "numprobe/file_sync.h"
#include "numprobe/tensor_file.h"

namespace numprobe {

struct NpyHeader {
  int major = 1;
  int minor = 0;
  std::string descr;  // as written: "<f4", "|b1", "<V2"
  DType dtype = DType::kF32;
  bool big_endian = false;
  bool fortran_order = false;
  // Set for descrs that only say "N opaque bytes" ('<V2' as ml_dtypes writes bfloat16). The
  // dtype is then the one the caller supplied or assumed, and a warning says so.
  bool dtype_assumed = false;
  std::vector<int64_t> shape;
  uint64_t data_offset = 0;  // from the start of the file
  uint64_t data_bytes = 0;   // numel * itemsize
};

struct NpyReadOptions {
  ReadOptions base;
  // The dtype of '<V2' elements when the context knows it (an msprobe MindSpore dump says
  // "BFloat16"); without it V2 is read as bf16 and flagged with a warning.
  std::optional<DType> void2_dtype;
  // The same for '|V1' elements (the float8 types, which EncodeNpy writes as '|V1'); without it
  // V1 is read as uint8 and flagged with a warning.
  std::optional<DType> void1_dtype;
};

// Parses and validates the header of .npy `bytes` (header size cap, shape product, data present).
Result<NpyHeader> ParseNpyHeader(std::span<const std::byte> bytes, const NpyReadOptions& options);

// Reads one array from `bytes`, which lie inside `owner` (kept alive by the tensor when viewed in
// place). Warnings (assumed dtype, trailing bytes) are appended to `warnings`.
Result<Tensor> ReadNpyArray(const std::shared_ptr<const Buffer>& owner,
                            std::span<const std::byte> bytes, const NpyReadOptions& options,
                            std::vector<std::string>* warnings);

// A whole .npy file as a TensorFile with one tensor named after nothing ("").
Result<TensorFile> ReadNpy(std::shared_ptr<const Buffer> file, const ReadOptions& options);

// Serializes `view` (any strides) as a v1.0 .npy (v2.0 if the header needs it), C order,
// little-endian, 64-byte aligned data. bf16 is written as '<V2' (as ml_dtypes does); fp8 types
// are written as '|V1' with a warning-free opaque descr.
Result<std::vector<std::byte>> EncodeNpy(const TensorView& view);
// EncodeNpy to `path`, through a temporary file renamed into place (`sync`: file_sync.h).
Status WriteNpy(const std::filesystem::path& path, const TensorView& view,
                FileSync sync = FileSync::kNow);

}  // namespace numprobe

#endif  // NUMPROBE_NPY_H_
