// Opening a file for reading that must be a regular file (a tensor file, a dump's JSON). The open
// never blocks: a FIFO or a device put where a data file is expected would otherwise hang open()
// or read() forever. The type is checked with fstat on the opened descriptor, so nothing can be
// swapped in between a check by name and the open.
#ifndef NUMPROBE_CORE_REGULAR_FILE_H_
#define NUMPROBE_CORE_REGULAR_FILE_H_

#include <cstdint>
#include <filesystem>

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

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Opens `path` for reading. kNotFound when it does not exist, kIoError "PATH: not a regular file"
// for a FIFO, device, socket or folder (and for any other refusal of the system); messages start
// with the path.
Result<RegularFile> OpenRegularFile(const std::filesystem::path& path);

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_REGULAR_FILE_H_
