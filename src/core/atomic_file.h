// AtomicOutput: the one atomic writer. Every file the library writes whole goes through it (.npy,
// zip, safetensors, MindSpore .ckpt, result tables, xlsx workbooks, JSON reports, report.html,
// the capture's dump.json); the only other writers append by design (the capture journal, the
// resumable precheck result tables) and open their files through OpenFileForAppend
// (regular_file.h).
//
// What it does with an output PATH (docs/outputs.md says the same to users):
// - The file is written under a temporary name in PATH's folder,
//   ".<name>.numprobe-tmp.<pid>.<random>", flushed to disk (fsync) and renamed into place on
//   Commit(), so that a crash or an error never leaves a half-written file under the final name.
// - Only a regular file is ever replaced. A directory, FIFO, device node or socket at PATH is
//   refused with kIoError "PATH: not a regular file (a FIFO) ..." (the CLI exits 3): renaming
//   over /dev/null as root would replace the device node with a plain file.
// - A symbolic link at PATH is written through, deliberately: the link stays and the file it
//   resolves to (which must be an existing regular file) is replaced, as `cmd > link` would. A
//   dangling link, or one that resolves to something other than a regular file, is refused.
// - A killed run leaves its temporary file behind; the first output into a folder in a process
//   removes the temporary files there whose process is gone (checked by pid with kill(pid, 0);
//   a live process's files are left alone).
// Not thread-safe; one writer each (different writers may run in different threads).
#ifndef NUMPROBE_CORE_ATOMIC_FILE_H_
#define NUMPROBE_CORE_ATOMIC_FILE_H_

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

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

  // Creates the temporary file. kIoError if the folder is not writable or if PATH holds
  // something other than a regular file (or a symbolic link to one). With FileSync::kDeferred
  // Commit() renames without the fsync (see MakeDurable).
  static Result<AtomicOutput> Create(const std::filesystem::path& path,
                                     FileSync sync = FileSync::kNow);
  // Makes `path` name the regular file `existing` (a tensor a dump records twice in a step) as
  // one committed output: a hard link made at `path` when nothing is there yet, or else under a
  // temporary name and renamed into place as Commit() renames, with the same checks on `path`,
  // so no byte is copied and no file is created. Where the filesystem has no hard links (or
  // `existing` is on another one), a copy of its bytes is committed instead (flushed with
  // FileSync::kNow; a link has no data to flush).
  static Status CreateAsLinkTo(const std::filesystem::path& path,
                               const std::filesystem::path& existing,
                               FileSync sync = FileSync::kNow);

  // Appends `bytes`; kIoError on a failed write (the error sticks: later calls and Commit() fail
  // with it). Small writes are gathered in memory and reach the file in one write(2) (a .pt
  // file's headers, pickle and directory are nine small pieces), so a failure may show only at
  // a later Write() or at Commit().
  Status Write(std::span<const std::byte> bytes);
  Status Write(std::string_view text) { return Write(std::as_bytes(std::span(text))); }
  // Hands what Write() gathered to the file (not to disk: Commit() or a sync of the folder's
  // filesystem does that).
  Status Flush() { return error_.ok() ? FlushPending() : error_; }
  // Bytes written so far (through Write).
  uint64_t offset() const { return offset_; }
  // The file the rename replaces (a symbolic link's file: see above).
  const std::filesystem::path& target() const { return target_; }
  // The folder the file is renamed into (a symbolic link's file's folder: see above).
  std::filesystem::path target_folder() const {
    std::filesystem::path folder = target_.parent_path();
    return folder.empty() ? std::filesystem::path(".") : folder;
  }
  // The temporary file's name, for a library that writes the file itself, by name
  // (libxlsxwriter's workbook_new). It writes there before Commit(), which then flushes what is
  // under that name to disk (opening it again, so a library that replaced the file is covered
  // too) and renames it into place.
  const std::string& LibraryPath();
  // Flushes to disk (fsync, unless created with FileSync::kDeferred), closes and renames the
  // file to its final path (refusing, as Create() does, if something other than a regular file
  // appeared there meanwhile).
  Status Commit();

 private:
  AtomicOutput() = default;
  // An output to `path` with no temporary name yet: its target resolved, its folder cleaned.
  static Result<AtomicOutput> Start(const std::filesystem::path& path, FileSync sync);
  // Creates a fresh temporary name beside the target with `create` (an exclusive creation:
  // false with errno set on failure, EEXIST to try another name) and keeps it in temp_path_.
  bool TakeTemporaryName(const std::function<bool(const char* name)>& create);
  void Discard();
  // write(2) all of `bytes` to the file; sets and returns error_ on failure.
  Status WriteAll(std::span<const std::byte> bytes);
  Status FlushPending();
  // Commit()'s last part: the checks on the target, then the rename of the temporary file.
  Status RenameIntoPlace();

  int fd_ = -1;
  std::filesystem::path final_path_;  // as the caller named it, for messages
  std::filesystem::path target_;      // where the rename goes: final_path_ with links resolved
  std::string temp_path_;
  uint64_t offset_ = 0;
  std::string pending_;          // small writes not yet in the file
  uint64_t handed_over_ = 0;     // bytes given to write(2)
  uint64_t writeback_from_ = 0;  // where writeback has not been started yet (see WriteAll)
  bool written_by_name_ = false;
  FileSync sync_ = FileSync::kNow;
  Status error_;
};

// A file that is made durable later (by an fsync, or a syncfs of its batch) has its writeback
// started every kWritebackEvery bytes as it grows, so that the sync waits for the last piece only
// and the disk works meanwhile (a compare's 300 MB table; a capture step's packed container).
inline constexpr uint64_t kWritebackEvery = uint64_t{4} << 20;
// Queues the writeback of bytes [from, to) of `fd` (sync_file_range(SYNC_FILE_RANGE_WRITE) only
// queues the pages; advisory: a failure shows at the sync).
void StartWriteback(int fd, uint64_t from, uint64_t to);

// Replaces `path` with `content` through an AtomicOutput.
Status WriteFileAtomically(const std::filesystem::path& path, std::string_view content);

// One file of a batch that ReplaceFilesNotYetDurable replaces.
struct FileContent {
  std::filesystem::path path;
  std::string content;
};

// How MakeDurable makes a batch durable.
enum class BatchFlush {
  // An fsync per file: touches only these files, whatever else the filesystem holds unwritten.
  // For a few files (a statistics step's JSON files).
  kEachFile,
  // One syncfs(2) per filesystem: one flush for the batch and everything written before it (a
  // capture step's tensor files), where an fsync each would cost a journal commit per file. It
  // also waits for other writers' unwritten data on that filesystem.
  kFilesystem,
};

// Files renamed into place before they are durable (ReplaceFilesNotYetDurable), and what
// MakeDurable needs to make them so: their final paths and the folders they went to.
struct NotYetDurable {
  std::vector<std::filesystem::path> files;    // the renamed files (through links: their files)
  std::vector<std::filesystem::path> folders;  // each once
};

// Replaces each of `files` atomically (written under a temporary name, renamed into place
// complete), without waiting for the disk: for a writer that makes its files durable later, off
// its critical path (the capture's step end: a background MakeDurable, after which the journal's
// written marker says they are durable). A crash of the process never leaves a half-written file
// under its name; a crash of the machine before MakeDurable can, which is what the later marker
// is for. Every file is written before any is renamed: a file that cannot be created (or
// written) fails the batch with every file as it was.
Result<NotYetDurable> ReplaceFilesNotYetDurable(std::span<const FileContent> files);

// Makes `pending` (plus the folders of `also_sync`) durable: an fsync per file (kEachFile) or
// one syncfs(2) per filesystem of its folders (kFilesystem), then an fsync of each folder (the
// new names). With nothing pending, kFilesystem and `also_sync` make every file written so far
// under those folders durable: one flush for a batch of FileSync::kDeferred files, where an fsync
// per file costs a journal commit each.
Status MakeDurable(const NotYetDurable& pending, BatchFlush flush,
                   std::span<const std::filesystem::path> also_sync = {});

// The marker in AtomicOutput's temporary names (".<name>.numprobe-tmp.<pid>.<random>").
inline constexpr std::string_view kAtomicTempMarker = ".numprobe-tmp.";

// Removes the temporary files AtomicOutput left in `folder` whose process is gone; returns how
// many it removed. AtomicOutput::Create calls it once per folder and process; exposed for tests.
size_t RemoveStaleAtomicTemporaries(const std::filesystem::path& folder);

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_ATOMIC_FILE_H_
