#include "core/regular_file.h"

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace numprobe::detail {

RegularFile::RegularFile(RegularFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}

RegularFile& RegularFile::operator=(RegularFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
  }
  return *this;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<RegularFile> OpenRegularFile(const std::filesystem::path& path) {
  // O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer. It changes nothing for
  // reading a regular file, which never blocks in the O_NONBLOCK sense.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::NotFound(path.string() + ": no such file");
    if (err == ENXIO) return Status::IoError(path.string() + ": not a regular file");  // a socket
    return Status::IoError(path.string() + ": cannot open: " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::IoError(path.string() + ": cannot stat: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::IoError(path.string() + ": not a regular file");
  }
  return RegularFile(fd, static_cast<uint64_t>(st.st_size));
}

Result<RegularFile> OpenRegularFileForWriting(const std::filesystem::path& path, WriteMode mode) {
  // O_NONBLOCK: opening a FIFO for writing otherwise waits for a reader (without one it fails
  // with ENXIO). O_TRUNC waits for the type check: a device must not be truncated.
  const int flags = O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOCTTY |
                    (mode == WriteMode::kAppend ? O_APPEND : 0);
  const int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) {
    const int err = errno;
    if (err == ENXIO || err == EISDIR)
      return Status::IoError(path.string() + ": not a regular file");
    return Status::IoError(path.string() + ": cannot open for writing: " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::IoError(path.string() + ": not a regular file");
  }
  // Back to blocking writes: a full pipe never applies here, but a slow disk must not look like
  // EAGAIN to a writer that does not expect it.
  const int status_flags = ::fcntl(fd, F_GETFL);
  if (status_flags < 0 || ::fcntl(fd, F_SETFL, status_flags & ~O_NONBLOCK) != 0 ||
      (mode == WriteMode::kTruncate && ::ftruncate(fd, 0) != 0)) {
    const int err = errno;
    ::close(fd);
    return Status::IoError(path.string() + ": cannot open for writing: " + std::strerror(err));
  }
  return RegularFile(fd, mode == WriteMode::kTruncate ? 0 : static_cast<uint64_t>(st.st_size));
}

}  // namespace numprobe::detail
