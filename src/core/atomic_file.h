// AtomicOutput: writes a file under a temporary name beside its final path ("<path>.tmp-XXXXXX")
// and renames it into place on Commit() after an fsync, so that a crash or an error never leaves a
// half-written file under the final name. Every writer of the library goes through it (.npy, zip,
// safetensors, MindSpore .ckpt). Not thread-safe; one writer each.
#ifndef NUMPROBE_CORE_ATOMIC_FILE_H_
#define NUMPROBE_CORE_ATOMIC_FILE_H_

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "numprobe/result.h"

namespace numprobe::detail {

class AtomicOutput {
 public:
  // Removes the temporary file unless Commit() succeeded.
  ~AtomicOutput();
  AtomicOutput(AtomicOutput&& other) noexcept;
  AtomicOutput& operator=(AtomicOutput&& other) noexcept;
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  // Creates the temporary file. kIoError if the folder is not writable.
  static Result<AtomicOutput> Create(const std::filesystem::path& path);

  // Appends `bytes`; kIoError on a failed write (the error sticks: later calls and Commit() fail
  // with it).
  Status Write(std::span<const std::byte> bytes);
  Status Write(std::string_view text) { return Write(std::as_bytes(std::span(text))); }
  // Bytes written so far.
  uint64_t offset() const { return offset_; }
  // Flushes to disk (fsync), closes and renames the file to its final path.
  Status Commit();

 private:
  AtomicOutput() = default;
  void Discard();

  int fd_ = -1;
  std::filesystem::path final_path_;
  std::string temp_path_;
  uint64_t offset_ = 0;
  Status error_;
};

// Replaces `path` with `content` through an AtomicOutput.
Status WriteFileAtomically(const std::filesystem::path& path, std::string_view content);

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_ATOMIC_FILE_H_
