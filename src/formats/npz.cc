#include "numprobe/npz.h"

#include <string>
#include <utility>

#include "numprobe/npy.h"

#include "core/quoted.h"
#include "formats/zip.h"

namespace numprobe {
namespace {

constexpr std::string_view kNpySuffix = ".npy";

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
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
