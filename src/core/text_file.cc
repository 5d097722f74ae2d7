#include "core/text_file.h"

#include <cerrno>
#include <cstring>

#include <unistd.h>

#include "core/regular_file.h"

namespace numprobe::detail {

Result<std::string> ReadTextFile(const std::filesystem::path& path, uintmax_t max_bytes) {
  NUMPROBE_ASSIGN_OR_RETURN(const RegularFile file, OpenRegularFile(path));
  if (file.size() > max_bytes) {
    return Status::OutOfRange(path.string() + ": larger than " + std::to_string(max_bytes) +
                              " bytes");
  }
  std::string text(static_cast<size_t>(file.size()), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(file.fd(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IoError(path.string() + ": cannot be read: " + std::strerror(errno));
    if (n == 0) break;  // shrank while read: what is there
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  return text;
}

}  // namespace numprobe::detail
