#include "msprobe/data_file.h"

#include <algorithm>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "msprobe/packed_tensors.h"

namespace numprobe::detail {

namespace fs = std::filesystem;

Status CheckDataFileName(std::string_view name) {
  if (name.empty() || name.size() > 255 || name == "." || name == ".." ||
      name.find_first_of(std::string_view("/\\\0", 3)) != std::string_view::npos) {
    return Status::Rejected(fmt::format(
        "tensor file name '{}' is not a plain file name inside the dump", name.substr(0, 80)));
  }
  return Status::Ok();
}

Result<fs::path> ResolveDataFile(const fs::path& tensor_dir, std::string_view name) {
  NUMPROBE_RETURN_IF_ERROR(CheckDataFileName(name));
  fs::path path = tensor_dir / fs::path(std::string(name));
  std::error_code ec;
  // Both sides resolved, so that a dump reached through a link of its own still holds its files.
  const fs::path dump_dir = fs::canonical(
      tensor_dir.parent_path().empty() ? fs::path(".") : tensor_dir.parent_path(), ec);
  if (ec)
    return Status::NotFound(fmt::format("{}: {}", tensor_dir.parent_path().string(), ec.message()));
  const fs::path resolved = fs::canonical(path, ec);
  if (ec) return Status::NotFound(fmt::format("{}: no such file", path.string()));
  const auto [dir_end, unused] =
      std::mismatch(dump_dir.begin(), dump_dir.end(), resolved.begin(), resolved.end());
  if (dir_end != dump_dir.end()) {
    return Status::Rejected(fmt::format("{}: resolves to {}, outside the dump folder {}; not read",
                                        path.string(), resolved.string(), dump_dir.string()));
  }
  return path;
}

Result<DataFileRef> LocateDataFile(const fs::path& tensor_dir, std::string_view name) {
  auto path = ResolveDataFile(tensor_dir, name);
  if (path) {
    DataFileRef ref;
    ref.path = std::move(*path);
    std::error_code ec;
    const uintmax_t size = fs::file_size(ref.path, ec);
    ref.bytes = ec ? 0 : static_cast<uint64_t>(size);
    return ref;
  }
  if (path.error().code() != ErrorCode::kNotFound) return path.error();
  std::error_code ec;
  if (!fs::exists(tensor_dir / kPackedIndexName, ec) &&
      !fs::is_symlink(tensor_dir / kPackedIndexName, ec)) {
    return path.error();  // the files layout, and the file is missing
  }
  NUMPROBE_ASSIGN_OR_RETURN(std::shared_ptr<const PackedIndex> index,
                            CachedPackedIndex(tensor_dir));
  const auto it = index->by_name.find(std::string(name));
  if (it == index->by_name.end()) {
    return Status::NotFound(fmt::format("{}: no such file, nor an entry of {}",
                                        (tensor_dir / fs::path(std::string(name))).string(),
                                        kPackedIndexName));
  }
  DataFileRef ref;
  ref.path = tensor_dir / fs::path(std::string(name));
  ref.entry = it->second;
  const PackedEntry& e = index->entries[it->second];
  ref.bytes = e.end - e.begin;
  ref.packed = std::move(index);
  return ref;
}

Result<TensorFile> ReadDataFile(const DataFileRef& ref, const ReadOptions& options) {
  if (ref.packed == nullptr) return ReadTensorFile(ref.path, options);
  const PackedEntry& e = ref.packed->entries[ref.entry];
  if (e.end - e.begin > options.max_inflated_bytes && !e.truncated &&
      reinterpret_cast<uintptr_t>(ref.packed->data->data() + e.begin) %
              static_cast<uintptr_t>(ItemSize(e.dtype)) !=
          0) {
    return Status::OutOfRange(fmt::format("{}: {} bytes to copy exceed the memory cap of {}",
                                          ref.path.string(), e.end - e.begin,
                                          options.max_inflated_bytes));
  }
  NUMPROBE_ASSIGN_OR_RETURN(Tensor tensor, PackedTensor(ref.packed, ref.entry));
  TensorFile out;
  out.format = FileFormat::kPacked;
  NamedTensor named;
  named.tensor = std::move(tensor);
  out.tensors.push_back(std::move(named));
  return out;
}

Result<TensorFile> ReadDataFile(const fs::path& tensor_dir, std::string_view name,
                                const ReadOptions& options) {
  NUMPROBE_ASSIGN_OR_RETURN(DataFileRef ref, LocateDataFile(tensor_dir, name));
  return ReadDataFile(ref, options);
}

}  // namespace numprobe::detail
