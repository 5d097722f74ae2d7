// Opening a file for reading that must be a regular file (a tensor file, a dump's JSON). The open
// never blocks: a FIFO or a device put where a data file is expected would otherwise hang open()
// or read() forever. The type is checked with fstat on the opened descriptor, so nothing can be
// swapped in between a check by name and the open.
#ifndef NUMPROBE_CORE_REGULAR_FILE_H_
#define NUMPROBE_CORE_REGULAR_FILE_H_

#include <cstdint>
#include <filesystem>
#include <utility>

#include "numprobe/result.h"

namespace numprobe::detail {

// An open, read-only descriptor of a regular file and its size; closes on destruction.
class RegularFile {
 public:
  RegularFile() = default;
  RegularFile(int fd, uint64_t size) : fd_(fd), size_(size) {}
  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&& other) noexcept;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();

  int fd() const { return fd_; }
  uint64_t size() const { return size_; }
  // Hands the descriptor over to the caller, who closes it from then on.
  int Release() { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Opens `path` for reading. kNotFound when it does not exist, kIoError "PATH: not a regular file"
// for a FIFO, device, socket or folder (and for any other refusal of the system); messages start
// with the path.
Result<RegularFile> OpenRegularFile(const std::filesystem::path& path);

// Opens `path` for writing in place (read-write, created with mode 0644 minus the umask when
// absent), for the writers that append as they go rather than replace a file whole (the capture
// journal, precheck's resumable result tables; everything else goes through AtomicOutput). The
// same rules as AtomicOutput: a symbolic link is written through to the regular file it names,
// anything else that is not a regular file (a FIFO, a device such as /dev/null, a folder) is
// refused with kIoError "PATH: not a regular file", and the open never blocks. `truncate` empties
// the file, `append` makes every write go to its end.
enum class WriteMode { kTruncate, kAppend };
Result<RegularFile> OpenRegularFileForWriting(const std::filesystem::path& path, WriteMode mode);

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_REGULAR_FILE_H_
