#include "numprobe/npz.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "numprobe/npy.h"

#include "core/quoted.h"
#include "formats/npy_internal.h"
#include "formats/zip.h"

namespace numprobe {
namespace {

constexpr std::string_view kNpySuffix = ".npy";

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The first bytes of `entry` up to the end of its .npy header; nullopt when the header is not
// whole within them or longer than `max_header` (the caller then reads the member whole, which
// reports the problem).
Result<std::optional<std::vector<std::byte>>> NpyHead(const StreamedStorage& member,
                                                      uint64_t max_header) {
  constexpr size_t kFixed = 12;  // magic, version, header length (v2/v3: 4 bytes)
  NUMPROBE_ASSIGN_OR_RETURN(std::unique_ptr<ByteStream> pass, member.Open());
  std::vector<std::byte> head(static_cast<size_t>(std::min<uint64_t>(member.size(), kFixed)));
  NUMPROBE_ASSIGN_OR_RETURN(const size_t got, pass->Read(head));
  if (got < kFixed) return std::optional<std::vector<std::byte>>();
  const int major = std::to_integer<int>(head[6]);
  uint64_t header_len =
      std::to_integer<uint64_t>(head[8]) | (std::to_integer<uint64_t>(head[9]) << 8);
  if (major >= 2) {
    header_len |=
        (std::to_integer<uint64_t>(head[10]) << 16) | (std::to_integer<uint64_t>(head[11]) << 24);
  }
  const uint64_t need = (major == 1 ? 10 : 12) + header_len;
  if (header_len > max_header || need > member.size()) {
    return std::optional<std::vector<std::byte>>();
  }
  if (need > head.size()) {
    const size_t old = head.size();
    head.resize(static_cast<size_t>(need));
    NUMPROBE_ASSIGN_OR_RETURN(const size_t more,
                              pass->Read(std::span(head.data() + old, head.size() - old)));
    if (more != head.size() - old) return std::optional<std::vector<std::byte>>();
  }
  return std::optional<std::vector<std::byte>>(std::move(head));
}

// A large deflated member left compressed: its array's header is read, its data streamed
// (ReadOptions::stream_deflated_over). nullopt when the array cannot be streamed as it is stored
// (big-endian, bool, an unreadable header): the caller reads it whole.
Result<std::optional<Tensor>> StreamedArray(const ZipArchive& archive, const ZipEntry& entry,
                                            const NpyReadOptions& options,
                                            std::vector<std::string>* warnings) {
  NUMPROBE_ASSIGN_OR_RETURN(std::shared_ptr<const StreamedStorage> member, archive.Streamed(entry));
  NUMPROBE_ASSIGN_OR_RETURN(auto head, NpyHead(*member, options.base.max_header_bytes));
  if (!head.has_value()) return std::optional<Tensor>();
  std::string descr_warning;
  NUMPROBE_ASSIGN_OR_RETURN(const NpyHeader h, detail::ParseNpyHeaderPrefix(
                                                   *head, member->size(), options, &descr_warning));
  const int item = ItemSize(h.dtype);
  const int swap_width = IsComplex(h.dtype) ? item / 2 : item;
  if ((h.big_endian && swap_width > 1) || h.dtype == DType::kBool) return std::optional<Tensor>();
  if (!descr_warning.empty()) warnings->push_back(descr_warning);
  const uint64_t trailing = member->size() - h.data_offset - h.data_bytes;
  if (trailing > 0) {
    warnings->push_back(std::to_string(trailing) + " trailing bytes after the array data ignored");
  }
  TensorView view;
  view.dtype = h.dtype;
  view.shape = h.shape;
  view.strides = ContiguousStrides(h.shape);
  if (h.fortran_order) {
    int64_t step = 1;
    for (size_t d = 0; d < h.shape.size(); ++d) {
      view.strides[d] = step;
      step *= std::max<int64_t>(h.shape[d], 1);
    }
  }
  NUMPROBE_RETURN_IF_ERROR(ValidateView(view.dtype, view.shape, view.strides, 0, h.data_bytes));
  NUMPROBE_ASSIGN_OR_RETURN(std::shared_ptr<const StreamedStorage> data,
                            archive.Streamed(entry, h.data_offset, h.data_bytes));
  return std::optional<Tensor>(Tensor(std::move(data), std::move(view)));
}

}  // namespace

Result<TensorFile> ReadNpz(std::shared_ptr<const Buffer> file, const ReadOptions& options) {
  if (!file) return Status::InvalidArgument("no buffer");
  ZipLimits limits;
  limits.max_inflated_bytes = options.max_inflated_bytes;
  NUMPROBE_ASSIGN_OR_RETURN(ZipArchive archive, ZipArchive::Open(std::move(file), limits));
  NpyReadOptions npy_options;
  npy_options.base = options;
  TensorFile out;
  out.format = FileFormat::kNpz;
  for (const ZipEntry& entry : archive.entries()) {
    const std::string context = "member " + detail::Quoted(entry.name);
    if (!EndsWith(entry.name, kNpySuffix)) {
      // np.load ignores nothing but also reads nothing else as an array; a directory entry or a
      // stray file is reported, not read.
      if (entry.name.back() != '/')
        out.warnings.push_back(context + " is not a .npy array; skipped");
      continue;
    }
    if (options.stream_deflated_over > 0 && entry.method == 8 &&
        entry.uncompressed_size > options.stream_deflated_over) {
      std::vector<std::string> warnings;
      auto streamed = StreamedArray(archive, entry, npy_options, &warnings);
      if (!streamed) return streamed.error().WithContext(context);
      if (streamed->has_value()) {
        for (std::string& w : warnings) out.warnings.push_back(context + ": " + std::move(w));
        std::string name = entry.name.substr(0, entry.name.size() - kNpySuffix.size());
        out.tensors.push_back(NamedTensor{std::move(name), std::move(**streamed), ""});
        continue;
      }
    }
    auto data = archive.Read(entry);
    if (!data) return data.error();  // the zip reader's message names the entry already
    // Inflated members are CRC-checked (cheap next to inflating); stored members are not, so that
    // a large np.savez archive is read at the speed of its bytes, as a .npy file would be.
    if (entry.method != 0 && !ZipArchive::CrcMatches(entry, data->bytes)) {
      out.warnings.push_back(context + ": CRC-32 mismatch (the data may be damaged)");
    }
    std::vector<std::string> warnings;
    auto tensor = ReadNpyArray(data->owner, data->bytes, npy_options, &warnings);
    if (!tensor) return tensor.error().WithContext(context);
    for (std::string& w : warnings) out.warnings.push_back(context + ": " + std::move(w));
    std::string name = entry.name.substr(0, entry.name.size() - kNpySuffix.size());
    out.tensors.push_back(NamedTensor{std::move(name), std::move(*tensor), ""});
  }
  return out;
}

Status WriteNpz(const std::filesystem::path& path, std::span<const NamedView> tensors,
                bool compress) {
  NUMPROBE_ASSIGN_OR_RETURN(ZipWriter writer, ZipWriter::Create(path));
  for (const NamedView& t : tensors) {
    const std::string member = t.name + std::string(kNpySuffix);
    auto bytes = EncodeNpy(t.view);
    if (!bytes) return bytes.error().WithContext("tensor '" + t.name + "'");
    NUMPROBE_RETURN_IF_ERROR(compress ? writer.AddDeflated(member, *bytes)
                                      : writer.AddStored(member, *bytes));
  }
  return writer.Finish();
}

}  // namespace numprobe
