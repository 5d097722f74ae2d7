// Internals of the MindSpore .ckpt reader and writer, shared by ckpt.cc, ckpt_wire.cc, the unit
// tests and the fuzz target. Not installed.
//
// The file is a sequence of `Checkpoint.value` records (field 1 of Checkpoint). DecodeCkptValues
// walks them with libprotobuf's CodedInputStream, which decodes every varint and bounds every
// read by the enclosing message; the walk follows the three fixed message levels (Checkpoint >
// Value > TensorProto) and applies the generated parser's stricter rules to tags and lengths and
// its depth budget to unknown groups: it never accepts bytes the generated parser refuses (it
// refuses more: the caps below, MapTensor values) and reads the same values. It does not use the
// generated parser because that parser copies every tensor_content into a std::string (a second
// copy of the checkpoint, and no way to know where the bytes were in the memory map) and cannot
// take a file over 2 GiB in one message. DecodeCkptValuesReference does use the generated parser
// and is the oracle the tests and the fuzz target compare against.
#ifndef NUMPROBE_FORMATS_CKPT_INTERNAL_H_
#define NUMPROBE_FORMATS_CKPT_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/result.h"
#include "numprobe/tensor_file.h"

namespace numprobe::detail {

// MindSpore's SLICE_SIZE: tensors larger than this are written as several same-tag values.
inline constexpr uint64_t kCkptSliceBytes = uint64_t{512} << 20;
// Group nesting allowed while skipping unknown fields (the schema itself needs 3 levels).
inline constexpr int kCkptMaxNesting = 32;
// Caps on the fields numprobe keeps; real files are far below them.
inline constexpr size_t kCkptMaxDims = 64;
inline constexpr uint64_t kCkptMaxTagBytes = uint64_t{1} << 16;
inline constexpr uint64_t kCkptMaxTypeBytes = 256;
// The optional trailer: "crc_num" + the CRC-32 of everything before it as 10 big-endian bytes.
inline constexpr std::string_view kCkptCrcMagic = "crc_num";
inline constexpr size_t kCkptCrcTrailerBytes = 17;

// One `Checkpoint.Value` as it is on the wire, merged as protobuf merges repeated occurrences
// of a field inside one message.
struct CkptRawValue {
  uint64_t offset = 0;  // of the record (its field-1 tag) from the start of the input
  std::string tag;
  bool has_tensor = false;  // false: the value's oneof is empty
  std::vector<int64_t> dims;
  std::string tensor_type;
  std::span<const std::byte> content;  // inside the input bytes (not copied)
};

// Decodes the records of `bytes` (a checkpoint without its crc_num trailer). kCorrupt for
// malformed or truncated protobuf, missing required fields (tag, tensor_type, tensor_content) or
// a first byte that is not a Checkpoint.value tag ("file looks encrypted or is not a MindSpore
// checkpoint"); kOutOfRange for a record over 2 GiB or a field over the caps above;
// kUnsupported for a MapTensor value. Messages name the value index, offset and tag.
Result<std::vector<CkptRawValue>> DecodeCkptValues(std::span<const std::byte> bytes);

// Decodes only the first record of `bytes`, with the rules and errors of DecodeCkptValues; the
// record must be present in full. Format detection uses it as the trial parse that recognises a
// checkpoint without its .ckpt extension.
Result<CkptRawValue> DecodeFirstCkptValue(std::span<const std::byte> bytes);

// A value as the generated parser (checkpoint.pb.h) sees it.
struct CkptReferenceValue {
  std::string tag;
  bool has_tensor = false;
  bool has_maptensor = false;
  std::vector<int64_t> dims;
  std::string tensor_type;
  std::string content;
};

// Parses `bytes` with the generated Checkpoint parser (CodedInputStream with bounded total size
// and recursion). kCorrupt when protobuf refuses the bytes or required fields are missing;
// kOutOfRange for inputs over 2 GiB.
Result<std::vector<CkptReferenceValue>> DecodeCkptValuesReference(std::span<const std::byte> bytes);

// `text` quoted for a one-line message: non-printable bytes as \xNN, cut after 200 bytes.
std::string QuoteCkptText(std::string_view text);
// Where a value is, for messages: "value 3 at offset 120 ('fc.weight')" (no tag part when empty).
std::string CkptValueWhere(size_t index, uint64_t offset, std::string_view tag);

// True when `walked` and `reference` describe the same values (tags, oneof, dims, tensor_type,
// content bytes), in the same order.
bool SameCkptValues(const std::vector<CkptRawValue>& walked,
                    const std::vector<CkptReferenceValue>& reference);

// WriteMindSporeCkpt with the split size as a parameter, so that tests can split small tensors.
// `slice_bytes` must be in [1, 1 GiB].
Status WriteMindSporeCkptSliced(const std::filesystem::path& path,
                                std::span<const NamedView> tensors, bool with_crc,
                                uint64_t slice_bytes);

}  // namespace numprobe::detail

#endif  // NUMPROBE_FORMATS_CKPT_INTERNAL_H_
