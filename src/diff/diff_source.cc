// Loading one side of a diff: a tensor file, or a folder of .npy files / an msprobe dump tree.
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "numprobe/diff.h"

#include "msprobe/data_file.h"
#include "msprobe/packed_tensors.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kDumpTensorDir = "dump_tensor_data";

// Natural order: digit runs compare by value, so "grad_2" sorts before "grad_10" (numbered
// tensors keep their saving order, which shape alignment relies on).
bool NaturalLess(const std::string& x, const std::string& y) {
  size_t i = 0;
  size_t j = 0;
  while (i < x.size() && j < y.size()) {
    const bool dx = std::isdigit(static_cast<unsigned char>(x[i])) != 0;
    const bool dy = std::isdigit(static_cast<unsigned char>(y[j])) != 0;
    if (dx && dy) {
      size_t ei = i;
      size_t ej = j;
      while (ei < x.size() && std::isdigit(static_cast<unsigned char>(x[ei])) != 0) ++ei;
      while (ej < y.size() && std::isdigit(static_cast<unsigned char>(y[ej])) != 0) ++ej;
      size_t si = i;
      size_t sj = j;
      while (si + 1 < ei && x[si] == '0') ++si;  // leading zeros do not change the value
      while (sj + 1 < ej && y[sj] == '0') ++sj;
      if (ei - si != ej - sj) return ei - si < ej - sj;
      const int c = x.compare(si, ei - si, y, sj, ej - sj);
      if (c != 0) return c < 0;
      i = ei;
      j = ej;
      continue;
    }
    if (x[i] != y[j]) return x[i] < y[j];
    ++i;
    ++j;
  }
  if (x.size() - i != y.size() - j) return x.size() - i < y.size() - j;
  return x < y;
}

struct FolderFile {
  fs::path path;
  std::string name;  // relative path without extension, dump_tensor_data segments dropped
  std::optional<detail::DataFileRef> packed;  // an entry of a packed container (the packed layout)
};

// The name a file at `rel` (relative to the folder) gets, and whether it lies in dump_tensor_data.
std::string FolderName(const fs::path& rel, bool* in_dump) {
  std::string name;
  for (auto part = rel.begin(); part != rel.end(); ++part) {
    if (std::next(part) == rel.end()) break;  // the file itself
    if (part->string() == kDumpTensorDir) {
      *in_dump = true;
      continue;
    }
    name += part->string() + "/";
  }
  return name + rel.stem().string();
}

Result<std::vector<FolderFile>> ListFolder(const fs::path& root, bool* is_dump) {
  std::vector<FolderFile> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_symlink(ec)) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    const fs::path rel = it->path().lexically_relative(root);
    const std::string ext = rel.extension().string();
    bool in_dump = false;
    std::string name = FolderName(rel, &in_dump);
    if (in_dump && rel.filename() == detail::kPackedIndexName) {
      // The packed layout: each entry stands for the data file of its name.
      NUMPROBE_ASSIGN_OR_RETURN(auto index, detail::ReadPackedIndex(it->path().parent_path()));
      for (size_t i = 0; i < index->entries.size(); ++i) {
        const detail::PackedEntry& e = index->entries[i];
        if (index->by_name.at(e.name) != i) continue;  // rewritten later under the same name
        detail::DataFileRef ref;
        ref.path = it->path().parent_path() / e.name;
        ref.packed = index;
        ref.entry = i;
        ref.bytes = e.end - e.begin;
        std::error_code exists_ec;
        if (fs::exists(ref.path, exists_ec)) continue;  // a file of its own is read as one
        bool entry_in_dump = false;
        std::string entry_name = FolderName(rel.parent_path() / e.name, &entry_in_dump);
        *is_dump = true;
        files.push_back({ref.path, std::move(entry_name), std::move(ref)});
      }
      continue;
    }
    const bool tensor_ext = ext == ".npy" || (in_dump && (ext == ".pt" || ext == ".pth"));
    if (!tensor_ext) continue;
    *is_dump |= in_dump;
    files.push_back({it->path(), std::move(name), std::nullopt});
  }
  if (ec) return Status::IoError(fmt::format("{}: {}", root.string(), ec.message()));
  std::sort(files.begin(), files.end(),
            [](const FolderFile& x, const FolderFile& y) { return NaturalLess(x.name, y.name); });
  return files;
}

}  // namespace

Result<DiffSource> LoadDiffSource(const fs::path& path, const ReadOptions& options) {
  DiffSource source;
  source.path = path;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    // A data file of a dump in the packed layout: an entry of its folder's container.
    if (!path.parent_path().empty() &&
        fs::exists(path.parent_path() / detail::kPackedIndexName, ec)) {
      NUMPROBE_ASSIGN_OR_RETURN(
          TensorFile file,
          detail::ReadDataFile(path.parent_path(), path.filename().string(), options));
      source.kind = std::string(EnumName(file.format));
      source.tensors = std::move(file.tensors);
      return source;
    }
    return Status::NotFound(fmt::format("{}: no such file", path.string()));
  }
  if (!fs::is_directory(st)) {
    NUMPROBE_ASSIGN_OR_RETURN(TensorFile file, ReadTensorFile(path, options));
    source.kind = std::string(EnumName(file.format));
    source.tensors = std::move(file.tensors);
    for (std::string& w : file.warnings) source.warnings.push_back(path.string() + ": " + w);
    return source;
  }
  bool is_dump = false;
  NUMPROBE_ASSIGN_OR_RETURN(std::vector<FolderFile> files, ListFolder(path, &is_dump));
  if (files.empty()) {
    return Status::NotFound(fmt::format(
        "{}: no tensor files (.npy, or dump_tensor_data/*.pt) in this folder", path.string()));
  }
  source.kind = is_dump ? "dump" : "npy folder";
  for (FolderFile& f : files) {
    NUMPROBE_ASSIGN_OR_RETURN(TensorFile file, f.packed ? detail::ReadDataFile(*f.packed, options)
                                                        : ReadTensorFile(f.path, options));
    for (std::string& w : file.warnings) source.warnings.push_back(f.path.string() + ": " + w);
    if (file.tensors.size() == 1) {
      file.tensors[0].name = f.name;
      source.tensors.push_back(std::move(file.tensors[0]));
      continue;
    }
    for (NamedTensor& t : file.tensors) {  // a file holding several tensors: name each inside
      t.name = f.name + "/" + t.name;
      source.tensors.push_back(std::move(t));
    }
  }
  return source;
}

}  // namespace numprobe
