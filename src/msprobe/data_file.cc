#include "msprobe/data_file.h"

#include <algorithm>
#include <string>
#include <system_error>

#include <fmt/format.h>

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

}  // namespace numprobe::detail
