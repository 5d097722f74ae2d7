#include "core/atomic_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

namespace numprobe::detail {
namespace {

std::string ErrnoText() { return std::strerror(errno); }

}  // namespace

AtomicOutput::~AtomicOutput() { Discard(); }

AtomicOutput::AtomicOutput(AtomicOutput&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      final_path_(std::move(other.final_path_)),
      temp_path_(std::move(other.temp_path_)),
      offset_(other.offset_),
      written_by_name_(other.written_by_name_),
      sync_(other.sync_),
      error_(std::move(other.error_)) {
  other.temp_path_.clear();
}

AtomicOutput& AtomicOutput::operator=(AtomicOutput&& other) noexcept {
  if (this != &other) {
    Discard();
    fd_ = std::exchange(other.fd_, -1);
    final_path_ = std::move(other.final_path_);
    temp_path_ = std::move(other.temp_path_);
    other.temp_path_.clear();
    offset_ = other.offset_;
    written_by_name_ = other.written_by_name_;
    sync_ = other.sync_;
    error_ = std::move(other.error_);
  }
  return *this;
}

void AtomicOutput::Discard() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!temp_path_.empty()) {
    ::unlink(temp_path_.c_str());
    temp_path_.clear();
  }
}

Result<AtomicOutput> AtomicOutput::Create(const std::filesystem::path& path, FileSync sync) {
  AtomicOutput out;
  out.final_path_ = path;
  out.sync_ = sync;
  // O_EXCL with a random suffix rather than mkstemp: the file is created with mode 0666 minus
  // the umask, like any other file the user writes, without touching the process umask.
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device random;
  int fd = -1;
  std::string name;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    name = path.string() + ".tmp-";
    for (int i = 0; i < 6; ++i) name += kAlphabet[random() % (sizeof(kAlphabet) - 1)];
    fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    return Status::IoError(path.string() + ": cannot create a temporary file: " + ErrnoText());
  }
  out.fd_ = fd;
  out.temp_path_ = name;
  return out;
}

Status AtomicOutput::Write(std::span<const std::byte> bytes) {
  if (!error_.ok()) return error_;
  if (fd_ < 0) return Status::Internal("write after commit");
  // At most 1 GiB per call: write(2) transfers at most about 2 GiB at once anyway.
  constexpr size_t kMaxChunk = size_t{1} << 30;
  const std::byte* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, std::min(left, kMaxChunk));
    if (n < 0) {
      if (errno == EINTR) continue;
      error_ = Status::IoError(final_path_.string() + ": write failed: " + ErrnoText());
      return error_;
    }
    if (n == 0) {  // never loop on a write that makes no progress
      error_ = Status::IoError(final_path_.string() + ": write failed: no progress");
      return error_;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  offset_ += bytes.size();
  return Status::Ok();
}

const std::string& AtomicOutput::LibraryPath() {
  written_by_name_ = true;
  return temp_path_;
}

Status AtomicOutput::Commit() {
  if (!error_.ok()) return error_;
  if (fd_ < 0) return Status::Internal("commit twice");
  int sync_fd = fd_;
  if (written_by_name_ && sync_ == FileSync::kNow) {
    sync_fd = ::open(temp_path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (sync_fd < 0) {
      error_ = Status::IoError(final_path_.string() + ": the written file is gone: " + ErrnoText());
      return error_;
    }
  }
  const bool synced = sync_ == FileSync::kDeferred || ::fsync(sync_fd) == 0;
  const std::string sync_error = synced ? std::string() : ErrnoText();
  if (sync_fd != fd_) ::close(sync_fd);
  if (!synced) {
    error_ = Status::IoError(final_path_.string() + ": fsync failed: " + sync_error);
    return error_;
  }
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) {
    error_ = Status::IoError(final_path_.string() + ": close failed: " + ErrnoText());
    return error_;
  }
  if (std::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
    error_ = Status::IoError(final_path_.string() +
                             ": cannot rename the temporary file into place: " + ErrnoText());
    return error_;
  }
  temp_path_.clear();
  return Status::Ok();
}

Status WriteFileAtomically(const std::filesystem::path& path, std::string_view content) {
  NUMPROBE_ASSIGN_OR_RETURN(AtomicOutput out, AtomicOutput::Create(path));
  NUMPROBE_RETURN_IF_ERROR(out.Write(content));
  return out.Commit();
}

Status SyncFolderContents(const std::filesystem::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::IoError(folder.string() + ": cannot open to sync: " + ErrnoText());
  Status st;
  if (::syncfs(fd) != 0) {
    st = Status::IoError(folder.string() + ": syncfs failed: " + ErrnoText());
  } else if (::fsync(fd) != 0) {
    st = Status::IoError(folder.string() + ": fsync failed: " + ErrnoText());
  }
  ::close(fd);
  return st;
}

}  // namespace numprobe::detail
