// Reading any supported tensor file: the format is detected from its first bytes (and its
// extension where bytes alone are ambiguous), every size and offset is validated before use, and
// tensors view the file's memory map wherever alignment allows (copies otherwise). Each format
// also has its own header (npy.h, npz.h, safetensors.h, torch_pt.h, ckpt.h) with the same
// Read<Format>(Buffer, options) shape, used by ReadTensorFile and by the fuzz targets.
#ifndef NUMPROBE_TENSOR_FILE_H_
#define NUMPROBE_TENSOR_FILE_H_

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "numprobe/buffer.h"
#include "numprobe/enum_names.h"
#include "numprobe/result.h"
#include "numprobe/tensor.h"

namespace numprobe {

enum class FileFormat {
  kUnknown,
  kNpy,
  kNpz,
  kSafetensors,
  kTorch,  // torch.save zip (>= 1.6) or legacy stream
  kMindSporeCkpt,
  kPacked,  // an entry of a dump's packed container (read through its dump folder, not alone)
};

inline constexpr EnumNameEntry<FileFormat> kFileFormatNames[] = {
    {FileFormat::kUnknown, "unknown"}, {FileFormat::kNpy, "npy"},
    {FileFormat::kNpz, "npz"},         {FileFormat::kSafetensors, "safetensors"},
    {FileFormat::kTorch, "pt"},        {FileFormat::kMindSporeCkpt, "ckpt"},
    {FileFormat::kPacked, "packed"}};
constexpr const auto& EnumNameTable(FileFormat /*unused*/) { return kFileFormatNames; }

// Guesses the format from the first bytes of a file (at least 16 where available) and its path.
// A MindSpore checkpoint without the .ckpt extension is recognised only when `head` holds its
// whole first record (a trial parse of it decides): pass the whole file where it matters.
FileFormat DetectFormat(std::span<const std::byte> head, const std::filesystem::path& path);

struct NamedTensor {
  std::string name;  // flattened with dots for nested containers: "optimizer.state.0.exp_avg"
  Tensor tensor;
  std::string device;  // where the writer said it lived ("cuda:0", "npu:0"); "" if not recorded
};

// A tensor to write, by name.
struct NamedView {
  std::string name;
  TensorView view;
};

struct TensorFile {
  FileFormat format = FileFormat::kUnknown;
  std::vector<NamedTensor> tensors;                           // in file order
  std::vector<std::pair<std::string, std::string>> metadata;  // e.g. safetensors __metadata__
  std::vector<std::string> warnings;                          // non-fatal findings (CRC, ...)
};

struct ReadOptions {
  // Pickles (.pt): false = strict (any global outside the allowlist is an error); true = inert
  // (unknown objects become opaque, tensors inside are still extracted, with a warning).
  bool inert_pickle = false;
  // Cap on the bytes one compressed member may inflate to, and on their total (zip bombs).
  uint64_t max_inflated_bytes = uint64_t{16} << 30;
  // Cap on header / metadata sizes (npy header, safetensors JSON, pickle).
  uint64_t max_header_bytes = 100'000'000;
  // CRC-32 of .pt storage records (a mismatch only adds a warning): callers that keep no
  // warnings, such as compare, turn it off and save a pass over every byte.
  bool check_crc = true;
  // 0: every compressed member is inflated into memory (under max_inflated_bytes). Otherwise a
  // deflated .pt storage or .npz array larger than this many bytes is left compressed: its
  // tensor is streamed (Tensor::is_streamed, view().data nullptr), read in passes by
  // ComputeTensorStats or loaded whole by Tensor::InMemory under a limit. Only for callers that
  // handle streamed tensors (inspect, scan); its CRC-32 is checked at the end of each pass.
  uint64_t stream_deflated_over = 0;
};

// The stream_deflated_over of the commands that stream (inspect, scan): members above 4 MiB.
inline constexpr uint64_t kStreamDeflatedOver = uint64_t{4} << 20;

// Reads the tensors of the file at `path`. kNotFound / kIoError if it cannot be read;
// kCorrupt / kOutOfRange / kUnsupported / kRejected with a message naming the file, the problem
// and where it is.
Result<TensorFile> ReadTensorFile(const std::filesystem::path& path,
                                  const ReadOptions& options = {});

// The same for bytes already in memory (tests, fuzzers, archive members); `name_hint` plays the
// role of the path for detection and messages.
Result<TensorFile> ReadTensorBuffer(std::shared_ptr<const Buffer> buffer,
                                    const std::filesystem::path& name_hint,
                                    const ReadOptions& options = {});

}  // namespace numprobe

#endif  // NUMPROBE_TENSOR_FILE_H_
