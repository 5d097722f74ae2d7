// AtomicOutput: writes a file under a temporary name beside its final path ("<path>.tmp-XXXXXX")
// and renames it into place on Commit() after an fsync, so that a crash or an error never leaves a
// half-written file under the final name. Every file the library writes goes through it (.npy,
// zip, safetensors, MindSpore .ckpt, result tables, xlsx workbooks, JSON reports, the capture's
// dump.json). Not thread-safe; one writer each.
#ifndef NUMPROBE_CORE_ATOMIC_FILE_H_
#define NUMPROBE_CORE_ATOMIC_FILE_H_

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "numprobe/file_sync.h"
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

  // Creates the temporary file. kIoError if the folder is not writable. With FileSync::kDeferred
  // Commit() renames without the fsync (see SyncFolderContents).
  static Result<AtomicOutput> Create(const std::filesystem::path& path,
                                     FileSync sync = FileSync::kNow);

  // Appends `bytes`; kIoError on a failed write (the error sticks: later calls and Commit() fail
  // with it).
  Status Write(std::span<const std::byte> bytes);
  Status Write(std::string_view text) { return Write(std::as_bytes(std::span(text))); }
  // Bytes written so far (through Write).
  uint64_t offset() const { return offset_; }
  // The temporary file's name, for a library that writes the file itself, by name
  // (libxlsxwriter's workbook_new). It writes there before Commit(), which then flushes what is
  // under that name to disk (opening it again, so a library that replaced the file is covered
  // too) and renames it into place.
  const std::string& LibraryPath();
  // Flushes to disk (fsync, unless created with FileSync::kDeferred), closes and renames the
  // file to its final path.
  Status Commit();

 private:
  AtomicOutput() = default;
  void Discard();

  int fd_ = -1;
  std::filesystem::path final_path_;
  std::string temp_path_;
  uint64_t offset_ = 0;
  bool written_by_name_ = false;
  FileSync sync_ = FileSync::kNow;
  Status error_;
};

// Replaces `path` with `content` through an AtomicOutput.
Status WriteFileAtomically(const std::filesystem::path& path, std::string_view content);

// Makes every file written so far under `folder` durable at once: one syncfs(2) of the folder's
// filesystem (one flush for a whole batch of FileSync::kDeferred files, where an fsync per file
// costs a journal commit each) and an fsync of the folder itself (its new names).
Status SyncFolderContents(const std::filesystem::path& folder);

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_ATOMIC_FILE_H_
