// MindSpore .ckpt reader and writer. The wire walk is in ckpt_wire.cc; this file turns values
// into tensors (joining split tensors, mapping dtypes, checking sizes) and writes checkpoints.
//
// Decisions, from MindSpore's serialization.py:
// - crc_num trailer: MindSpore strips it and, when asked to check (crc_check=True), refuses a file
//   whose CRC differs ("the crc check is failed"). numprobe always checks a trailer that is
//   present and refuses a mismatch (kCorrupt): values from a damaged file are not compared.
// - Scalars: new writers leave dims empty, old ones wrote dims [0]; dims [0] with exactly one
//   element of content is read as a 0-d tensor, dims [0] with no content as shape (0,).
// - "str" values (append_dict) become metadata entries (tag -> text), not tensors.
// - Int4 (qint4x2) and MapTensor values are kUnsupported naming the tag: their layout is not
//   pinned down, and skipping them would present a partial checkpoint as complete.
// - Memory: a tensor stored in one value whose bytes are aligned for its dtype views the file's
//   buffer (no copy); split tensors, unaligned contents and bools needing sanitizing are copied
//   once into a new Buffer. Nothing is copied through protobuf strings.
#include "numprobe/ckpt.h"

#include <fmt/format.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/common.h>
#ifdef NUMPROBE_WITH_ZLIB
#include <zlib.h>
#endif

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "checkpoint.pb.h"
#include "core/atomic_file.h"
#include "core/checked.h"
#include "formats/ckpt_internal.h"

namespace numprobe {
namespace {

using detail::CkptRawValue;
using detail::CkptValueWhere;
using detail::QuoteCkptText;

// MindSpore's cipher files start with one of these int32 (little-endian) block magics.
struct CipherMagic {
  uint32_t magic;
  const char* mode;
};
constexpr CipherMagic kCipherMagics[] = {
    {0x7F3A5ED8, "AES-GCM"}, {0x7F3A5ED9, "AES-CBC"}, {0x7F3A5EDA, "SM4-CBC"}};

std::string DimsText(const std::vector<int64_t>& dims) {
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

#ifdef NUMPROBE_WITH_ZLIB
uint32_t Crc32(uint32_t crc, const void* data, size_t size) {
  return static_cast<uint32_t>(crc32_z(crc, static_cast<const Bytef*>(data), size));
}
#endif

Status CheckCipherMagic(std::span<const std::byte> bytes) {
  if (bytes.size() < 4) return Status::Ok();
  uint32_t magic = 0;
  for (int i = 3; i >= 0; --i) magic = (magic << 8) | static_cast<uint8_t>(bytes[i]);
  for (const CipherMagic& m : kCipherMagics) {
    if (magic == m.magic) {
      return Status::Rejected(fmt::format(
          "file looks encrypted or is not a MindSpore checkpoint: it starts with MindSpore's {} "
          "cipher magic 0x{:08X}; decrypt it with MindSpore (dec_key) first",
          m.mode, m.magic));
    }
  }
  return Status::Ok();
}

// Returns the records before the optional crc_num trailer, having checked the trailer's CRC.
Result<std::span<const std::byte>> StripCrcTrailer(std::span<const std::byte> bytes,
                                                   std::vector<std::string>* warnings) {
  constexpr size_t kTrailer = detail::kCkptCrcTrailerBytes;
  const std::string_view magic = detail::kCkptCrcMagic;
  if (bytes.size() < kTrailer ||
      std::memcmp(bytes.data() + bytes.size() - kTrailer, magic.data(), magic.size()) != 0) {
    return bytes;
  }
  const std::span<const std::byte> records = bytes.first(bytes.size() - kTrailer);
  const std::span<const std::byte> stored = bytes.last(kTrailer - magic.size());
  // 10 big-endian bytes; a CRC-32 fills only the last 4.
  uint64_t high = 0;
  for (size_t i = 0; i < stored.size() - 4; ++i) high |= static_cast<uint8_t>(stored[i]);
  uint32_t crc = 0;
  for (size_t i = stored.size() - 4; i < stored.size(); ++i) {
    crc = (crc << 8) | static_cast<uint8_t>(stored[i]);
  }
  const uint64_t trailer_offset = records.size();
  if (high != 0) {
    return Status::Corrupt(fmt::format(
        "crc_num trailer at offset {} holds a value wider than 32 bits: the file is damaged",
        trailer_offset));
  }
#ifdef NUMPROBE_WITH_ZLIB
  const uint32_t actual = Crc32(0, records.data(), records.size());
  if (actual != crc) {
    return Status::Corrupt(fmt::format(
        "crc_num trailer at offset {} says 0x{:08x} but the records' CRC-32 is 0x{:08x}: the "
        "file is damaged",
        trailer_offset, crc, actual));
  }
#else
  warnings->push_back("crc_num trailer not verified: numprobe was built without zlib");
#endif
  (void)warnings;
  return records;
}

// numpy '<U' text (UTF-32LE, padded with NULs) as UTF-8.
Result<std::string> DecodeUtf32(std::span<const std::byte> bytes, const std::string& where) {
  if (bytes.size() % 4 != 0) {
    return Status::Corrupt(fmt::format(
        "{}: str content of {} bytes is not UTF-32 (a multiple of 4 bytes)", where, bytes.size()));
  }
  auto at = [&](size_t i) {
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data()) + 4 * i;
    return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
  };
  size_t n = bytes.size() / 4;
  while (n > 0 && at(n - 1) == 0) --n;  // numpy strips the padding
  std::string out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t cp = at(i);
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return Status::Corrupt(fmt::format(
          "{}: str content has invalid code point 0x{:X} at character {}", where, cp, i));
    }
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  return out;
}

class Assembler {
 public:
  Assembler(std::shared_ptr<const Buffer> file, const ReadOptions& options, TensorFile* out)
      : file_(std::move(file)), options_(options), out_(out) {}

  // Joins runs of consecutive values with the same tag and adds each run as one entry.
  Status Run(const std::vector<CkptRawValue>& values) {
    std::unordered_map<std::string_view, size_t> seen;  // tag -> index of its first value
    for (size_t i = 0; i < values.size();) {
      size_t end = i + 1;
      while (end < values.size() && values[end].tag == values[i].tag) ++end;
      const CkptRawValue& first = values[i];
      if (auto it = seen.find(first.tag); it != seen.end()) {
        return Status::Corrupt(fmt::format(
            "{}: tag repeats value {} with other values in between (the parts of a split tensor "
            "must be consecutive)",
            CkptValueWhere(i, first.offset, first.tag), it->second));
      }
      seen.emplace(first.tag, i);
      NUMPROBE_RETURN_IF_ERROR(
          AddRun(std::span<const CkptRawValue>(values).subspan(i, end - i), i));
      i = end;
    }
    return Status::Ok();
  }

 private:
  Status AddRun(std::span<const CkptRawValue> run, size_t index) {
    const CkptRawValue& first = run.front();
    const std::string where = CkptValueWhere(index, first.offset, first.tag);
    uint64_t total = 0;
    for (size_t k = 0; k < run.size(); ++k) {
      const CkptRawValue& part = run[k];
      if (!part.has_tensor) {
        return Status::Corrupt(fmt::format("{}: value has no tensor",
                                           CkptValueWhere(index + k, part.offset, part.tag)));
      }
      if (part.tensor_type != first.tensor_type || part.dims != first.dims) {
        return Status::Corrupt(fmt::format(
            "{}: part {} of a split tensor is {} {} but part 0 is {} {}",
            CkptValueWhere(index + k, part.offset, part.tag), k, QuoteCkptText(part.tensor_type),
            DimsText(part.dims), QuoteCkptText(first.tensor_type), DimsText(first.dims)));
      }
      total += part.content.size();  // cannot overflow: parts are disjoint ranges of the file
    }
    if (first.tensor_type == "str") return AddText(run, where, total);
    if (first.tensor_type == "Int4") {
      return Status::Unsupported(fmt::format(
          "{}: tensor_type Int4 (qint4x2, two 4-bit integers per byte) is not supported", where));
    }
    const std::optional<DType> dtype = DTypeFromMindSpore(first.tensor_type);
    if (!dtype) {
      return Status::Unsupported(
          fmt::format("{}: unknown tensor_type {}", where, QuoteCkptText(first.tensor_type)));
    }
    for (size_t k = 0; k < first.dims.size(); ++k) {
      if (first.dims[k] < 0) {
        return Status::Corrupt(fmt::format("{}: negative dim {} at index {} of dims {}", where,
                                           first.dims[k], k, DimsText(first.dims)));
      }
    }
    const int item = ItemSize(*dtype);
    const std::optional<int64_t> numel = CheckedNumel(first.dims);
    const std::optional<int64_t> need =
        numel ? CheckedMul<int64_t>(*numel, item) : std::optional<int64_t>();
    if (!need) {
      return Status::OutOfRange(fmt::format("{}: dims {} of {} overflow 64 bits", where,
                                            DimsText(first.dims), first.tensor_type));
    }
    std::vector<int64_t> shape = first.dims;
    // Old writers stored scalars as dims [0] with one element of content.
    const bool old_scalar =
        shape == std::vector<int64_t>{0} && total == static_cast<uint64_t>(item);
    if (old_scalar) shape.clear();
    if (!old_scalar && total != static_cast<uint64_t>(*need)) {
      return Status::Corrupt(fmt::format(
          "{}: dims {} of {} need {} bytes{} but tensor_content has {}", where,
          DimsText(first.dims), first.tensor_type, *need,
          first.dims == std::vector<int64_t>{0} ? fmt::format(" ({} for a scalar)", item) : "",
          total));
    }
    NUMPROBE_ASSIGN_OR_RETURN(Tensor tensor,
                              MakeTensor(run, *dtype, std::move(shape), total, where));
    out_->tensors.push_back(NamedTensor{first.tag, std::move(tensor), ""});
    return Status::Ok();
  }

  Result<Tensor> MakeTensor(std::span<const CkptRawValue> run, DType dtype,
                            std::vector<int64_t> shape, uint64_t total, const std::string& where) {
    uint64_t bad_bools = 0;
    if (dtype == DType::kBool) {
      for (const CkptRawValue& part : run) {
        for (std::byte b : part.content) bad_bools += static_cast<uint8_t>(b) > 1 ? 1 : 0;
      }
    }
    const auto alignment = static_cast<uintptr_t>(std::min(ItemSize(dtype), 8));
    const std::byte* data = run.front().content.data();
    if (run.size() == 1 && bad_bools == 0 && reinterpret_cast<uintptr_t>(data) % alignment == 0) {
      return Tensor(file_, TensorView::Contiguous(data, dtype, std::move(shape)));
    }
    // The parts' contents add up to `total`: every byte is written below.
    NUMPROBE_ASSIGN_OR_RETURN(auto buffer,
                              Buffer::AllocateUninitialized(static_cast<size_t>(total)));
    size_t at = 0;
    for (const CkptRawValue& part : run) {
      if (!part.content.empty()) {
        std::memcpy(buffer->mutable_data() + at, part.content.data(), part.content.size());
      }
      at += part.content.size();
    }
    if (bad_bools != 0) {
      std::byte* p = buffer->mutable_data();
      for (size_t i = 0; i < at; ++i) p[i] = p[i] != std::byte{0} ? std::byte{1} : std::byte{0};
      out_->warnings.push_back(
          fmt::format("{}: {} bool bytes other than 0 and 1 read as true", where, bad_bools));
    }
    TensorView view = TensorView::Contiguous(buffer->data(), dtype, std::move(shape));
    return Tensor(std::move(buffer), std::move(view));
  }

  Status AddText(std::span<const CkptRawValue> run, const std::string& where, uint64_t total) {
    const std::vector<int64_t>& dims = run.front().dims;
    if (!dims.empty() && dims != std::vector<int64_t>{0}) {
      return Status::Unsupported(
          fmt::format("{}: str value with dims {} (an array of strings) is not supported", where,
                      DimsText(dims)));
    }
    if (total > options_.max_header_bytes) {
      return Status::OutOfRange(fmt::format("{}: str value of {} bytes exceeds the cap of {}",
                                            where, total, options_.max_header_bytes));
    }
    std::vector<std::byte> joined;
    joined.reserve(static_cast<size_t>(total));
    for (const CkptRawValue& part : run) {
      joined.insert(joined.end(), part.content.begin(), part.content.end());
    }
    NUMPROBE_ASSIGN_OR_RETURN(std::string text, DecodeUtf32(joined, where));
    out_->metadata.emplace_back(run.front().tag, std::move(text));
    return Status::Ok();
  }

  std::shared_ptr<const Buffer> file_;
  const ReadOptions& options_;
  TensorFile* out_;
};

// Passes protobuf's output on to an AtomicOutput, keeping the CRC-32 of the bytes for the
// crc_num trailer.
class CrcOutputStream : public google::protobuf::io::CopyingOutputStream {
 public:
  explicit CrcOutputStream(detail::AtomicOutput* out) : out_(out) {}

  bool Write(const void* buffer, int size) override {
    const std::span<const std::byte> bytes(static_cast<const std::byte*>(buffer),
                                           static_cast<size_t>(size));
#ifdef NUMPROBE_WITH_ZLIB
    crc_ = Crc32(crc_, bytes.data(), bytes.size());
#endif
    status_ = out_->Write(bytes);
    return status_.ok();
  }

  uint32_t crc() const { return crc_; }
  // The first write error (kIoError naming the file), or Ok.
  const Status& status() const { return status_; }

 private:
  detail::AtomicOutput* out_;
  uint32_t crc_ = 0;
  Status status_;
};

Status CheckWritable(std::span<const NamedView> tensors, bool with_crc) {
  if (tensors.empty()) {
    return Status::InvalidArgument(
        "no tensors to write: MindSpore cannot load an empty checkpoint");
  }
#ifndef NUMPROBE_WITH_ZLIB
  if (with_crc) {
    return Status::Unsupported("the crc_num trailer needs zlib (built without NUMPROBE_WITH_ZLIB)");
  }
#endif
  (void)with_crc;
  std::unordered_set<std::string_view> names;
  for (const NamedView& t : tensors) {
    if (!names.insert(t.name).second) {
      return Status::InvalidArgument(
          fmt::format("duplicate tensor name {}", QuoteCkptText(t.name)));
    }
    if (t.name.size() > detail::kCkptMaxTagBytes ||
        !google::protobuf::internal::IsStructurallyValidUTF8(t.name.data(),
                                                             static_cast<int>(t.name.size()))) {
      return Status::InvalidArgument(
          fmt::format("tensor name {} is not valid UTF-8 of at most {} bytes",
                      QuoteCkptText(t.name), detail::kCkptMaxTagBytes));
    }
    if (Traits(t.view.dtype).mindspore_name.empty()) {
      return Status::Unsupported(fmt::format("tensor {}: MindSpore has no {} tensor_type",
                                             QuoteCkptText(t.name), Name(t.view.dtype)));
    }
    const std::optional<int64_t> numel = CheckedNumel(t.view.shape);
    if (!numel || !CheckedMul<int64_t>(*numel, ItemSize(t.view.dtype))) {
      return Status::InvalidArgument(fmt::format("tensor {}: invalid shape {}",
                                                 QuoteCkptText(t.name), DimsText(t.view.shape)));
    }
  }
  return Status::Ok();
}

Status WriteTensor(const NamedView& t, uint64_t slice_bytes,
                   google::protobuf::io::CopyingOutputStreamAdaptor* stream) {
  Tensor copy;  // holds a contiguous copy of a strided view while it is written
  const std::byte* data = t.view.first();
  if (!t.view.is_contiguous()) {
    NUMPROBE_ASSIGN_OR_RETURN(copy, Tensor::CopyOf(t.view));
    data = copy.view().first();
  }
  const uint64_t bytes =
      static_cast<uint64_t>(t.view.numel()) * static_cast<uint64_t>(ItemSize(t.view.dtype));
  const std::string type(Traits(t.view.dtype).mindspore_name);
  uint64_t offset = 0;
  // As save_checkpoint: one value per slice, each with the full dims; an empty tensor is one
  // value with empty content (scalars have empty dims, as new MindSpore writes them).
  do {
    const uint64_t size = std::min(slice_bytes, bytes - offset);
    numprobe::mindspore::Checkpoint checkpoint;
    auto* value = checkpoint.add_value();
    value->set_tag(t.name);
    auto* tensor = value->mutable_tensor();
    for (int64_t d : t.view.shape) tensor->add_dims(d);
    tensor->set_tensor_type(type);
    if (size == 0) {
      tensor->set_tensor_content(std::string());  // present (required) and empty
    } else {
      tensor->set_tensor_content(data + offset, static_cast<size_t>(size));
    }
    if (!checkpoint.SerializeToZeroCopyStream(stream)) {
      return Status::IoError(fmt::format("cannot write tensor {}", QuoteCkptText(t.name)));
    }
    offset += size;
  } while (offset < bytes);
  return Status::Ok();
}

}  // namespace

Result<TensorFile> ReadMindSporeCkpt(std::shared_ptr<const Buffer> file,
                                     const ReadOptions& options) {
  TensorFile out;
  out.format = FileFormat::kMindSporeCkpt;
  std::span<const std::byte> bytes = file->bytes();
  if (bytes.empty()) {
    return Status::Corrupt("empty file: a MindSpore checkpoint holds at least one value");
  }
  NUMPROBE_RETURN_IF_ERROR(CheckCipherMagic(bytes));
  NUMPROBE_ASSIGN_OR_RETURN(bytes, StripCrcTrailer(bytes, &out.warnings));
  if (bytes.empty()) return Status::Corrupt("no values before the crc_num trailer");
  NUMPROBE_ASSIGN_OR_RETURN(const std::vector<CkptRawValue> values,
                            detail::DecodeCkptValues(bytes));
  Assembler assembler(std::move(file), options, &out);
  NUMPROBE_RETURN_IF_ERROR(assembler.Run(values));
  return out;
}

Status WriteMindSporeCkpt(const std::filesystem::path& path, std::span<const NamedView> tensors,
                          bool with_crc) {
  return detail::WriteMindSporeCkptSliced(path, tensors, with_crc, detail::kCkptSliceBytes);
}

namespace detail {

Status WriteMindSporeCkptSliced(const std::filesystem::path& path,
                                std::span<const NamedView> tensors, bool with_crc,
                                uint64_t slice_bytes) {
  if (slice_bytes == 0 || slice_bytes > (uint64_t{1} << 30)) {
    return Status::InvalidArgument(fmt::format("slice size {} not in [1, 1 GiB]", slice_bytes));
  }
  NUMPROBE_RETURN_IF_ERROR(CheckWritable(tensors, with_crc));
  NUMPROBE_ASSIGN_OR_RETURN(AtomicOutput file, AtomicOutput::Create(path));
  CrcOutputStream output(&file);
  {
    google::protobuf::io::CopyingOutputStreamAdaptor stream(&output);
    for (const NamedView& t : tensors) {
      const Status status = WriteTensor(t, slice_bytes, &stream);
      if (!output.status().ok()) return output.status();
      if (!status.ok()) {
        return Status::IoError(
            fmt::format("{}: cannot write: {}", path.string(), status.message()));
      }
    }
    if (!stream.Flush()) {
      if (!output.status().ok()) return output.status();
      return Status::IoError(fmt::format("{}: cannot write", path.string()));
    }
  }
  if (with_crc) {
    std::string trailer(kCkptCrcMagic);
    for (int shift = 72; shift >= 0; shift -= 8) {
      trailer += static_cast<char>(shift >= 32 ? 0 : (output.crc() >> shift) & 0xFF);
    }
    NUMPROBE_RETURN_IF_ERROR(file.Write(trailer));  // not part of the CRC it carries
  }
  return file.Commit();
}

}  // namespace detail
}  // namespace numprobe
