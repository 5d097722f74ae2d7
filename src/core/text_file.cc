#include "core/text_file.h"

#include <fstream>
#include <iterator>
#include <system_error>

namespace numprobe::detail {

Result<std::string> ReadTextFile(const std::filesystem::path& path, uintmax_t max_bytes) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return Status::IoError(path.string() + ": " + ec.message());
  if (size > max_bytes) {
    return Status::OutOfRange(path.string() + ": larger than " + std::to_string(max_bytes) +
                              " bytes");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path.string() + ": cannot be read");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace numprobe::detail
