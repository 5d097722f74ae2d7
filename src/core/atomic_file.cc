#include "core/atomic_file.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace numprobe::detail {
namespace {

namespace fs = std::filesystem;

std::string ErrnoText() { return std::strerror(errno); }

// What a non-regular file is, for the refusal's message.
const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a plain file";
}

Status NotRegular(const fs::path& path, mode_t mode) {
  return Status::IoError(path.string() + ": not a regular file (" + KindOf(mode) +
                         "); numprobe writes only to a new or regular file");
}

// Where an output named `path` really goes: `path` itself when nothing or a regular file is
// there, the file a symbolic link resolves to when that is a regular file (written through, on
// purpose: see the header), an error for anything else.
Result<fs::path> ResolveTarget(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return path;
    return Status::IoError(path.string() + ": cannot stat: " + ErrnoText());
  }
  if (S_ISREG(st.st_mode)) return path;
  if (!S_ISLNK(st.st_mode)) return NotRegular(path, st.st_mode);
  std::error_code ec;
  fs::path target = fs::canonical(path, ec);
  if (ec) {
    return Status::IoError(path.string() + ": a symbolic link that does not resolve (" +
                           ec.message() + "); numprobe writes through a link only to a file");
  }
  if (::stat(target.c_str(), &st) != 0) {
    return Status::IoError(target.string() + ": cannot stat: " + ErrnoText());
  }
  if (!S_ISREG(st.st_mode)) {
    return NotRegular(path, st.st_mode).WithNote("the link resolves to " + target.string());
  }
  return target;
}

// The pid in a temporary name ".<name>.numprobe-tmp.<pid>.<random>", 0 when `name` is not one.
pid_t PidOfTemporary(std::string_view name) {
  const size_t marker = name.rfind(kAtomicTempMarker);
  if (name.empty() || name[0] != '.' || marker == std::string_view::npos) return 0;
  std::string_view rest = name.substr(marker + kAtomicTempMarker.size());
  const size_t dot = rest.find('.');
  if (dot == std::string_view::npos || dot + 1 == rest.size()) return 0;
  pid_t pid = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + dot, pid);
  if (ec != std::errc() || end != rest.data() + dot || pid <= 0) return 0;
  return pid;
}

bool ProcessIsGone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

// Cleans each folder once per process: an output folder may receive many thousands of files (a
// dump's dump_tensor_data), and scanning it for each would cost quadratic time.
void RemoveStaleOnce(const fs::path& folder) {
  static std::mutex mutex;
  static std::set<std::string> cleaned;
  {
    std::lock_guard lock(mutex);
    if (!cleaned.insert(folder.string()).second) return;
  }
  (void)RemoveStaleAtomicTemporaries(folder);
}

}  // namespace

size_t RemoveStaleAtomicTemporaries(const fs::path& folder) {
  std::error_code ec;
  fs::directory_iterator it(folder.empty() ? fs::path(".") : folder, ec);
  size_t removed = 0;
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const pid_t pid = PidOfTemporary(name);
    if (pid == 0 || pid == ::getpid() || !ProcessIsGone(pid)) continue;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (::unlink(it->path().c_str()) == 0) ++removed;
  }
  return removed;
}

AtomicOutput::~AtomicOutput() { Discard(); }

AtomicOutput::AtomicOutput(AtomicOutput&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      final_path_(std::move(other.final_path_)),
      target_(std::move(other.target_)),
      temp_path_(std::move(other.temp_path_)),
      offset_(other.offset_),
      pending_(std::move(other.pending_)),
      handed_over_(other.handed_over_),
      writeback_from_(other.writeback_from_),
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
    target_ = std::move(other.target_);
    temp_path_ = std::move(other.temp_path_);
    other.temp_path_.clear();
    offset_ = other.offset_;
    pending_ = std::move(other.pending_);
    handed_over_ = other.handed_over_;
    writeback_from_ = other.writeback_from_;
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

Result<AtomicOutput> AtomicOutput::Start(const fs::path& path, FileSync sync) {
  AtomicOutput out;
  out.final_path_ = path;
  out.sync_ = sync;
  NUMPROBE_ASSIGN_OR_RETURN(out.target_, ResolveTarget(path));
  RemoveStaleOnce(out.target_.parent_path());
  return out;
}

bool AtomicOutput::TakeTemporaryName(const std::function<bool(const char* name)>& create) {
  // ".<name>.numprobe-tmp.<pid>.<random>": hidden, recognisable, and the pid tells a later run
  // whether its writer is gone. The name part is cut so that the whole stays within NAME_MAX.
  constexpr size_t kMaxNamePart = 200;
  const std::string prefix = "." + target_.filename().string().substr(0, kMaxNamePart) +
                             std::string(kAtomicTempMarker) + std::to_string(::getpid()) + ".";
  // Exclusive creation (O_EXCL, link(2)) of a random name rather than mkstemp: the file is
  // created with mode 0666 minus the umask, like any other file the user writes, without
  // touching the process umask.
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  // Seeded once per thread: a std::random_device per file cost more than the file's open (a
  // tensor dump creates hundreds of files a step). A forked child repeats its parent's sequence,
  // but the pid in the name keeps them apart and the exclusive creation catches any clash.
  thread_local std::mt19937 random{std::random_device{}()};
  const fs::path folder = target_.parent_path();
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = (folder / prefix).string();
    for (int i = 0; i < 6; ++i) name += kAlphabet[random() % (sizeof(kAlphabet) - 1)];
    if (create(name.c_str())) {
      temp_path_ = std::move(name);
      return true;
    }
    if (errno != EEXIST) return false;
  }
  return false;
}

Result<AtomicOutput> AtomicOutput::Create(const std::filesystem::path& path, FileSync sync) {
  NUMPROBE_ASSIGN_OR_RETURN(AtomicOutput out, Start(path, sync));
  const bool created = out.TakeTemporaryName([&out](const char* name) {
    out.fd_ = ::open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    return out.fd_ >= 0;
  });
  if (!created) {
    return Status::IoError(path.string() + ": cannot create a temporary file: " + ErrnoText());
  }
  return out;
}

Status AtomicOutput::CreateAsLinkTo(const fs::path& path, const fs::path& existing, FileSync sync) {
  struct stat st {};
  if (::lstat(existing.c_str(), &st) != 0) {
    return Status::IoError(path.string() + ": cannot link to " + existing.string() + ": " +
                           ErrnoText());
  }
  if (!S_ISREG(st.st_mode)) return NotRegular(existing, st.st_mode);
  NUMPROBE_ASSIGN_OR_RETURN(AtomicOutput out, Start(path, sync));
  // Nothing at the target yet (the usual case: a step's folder starts empty): the link is made
  // there at once. link(2) never replaces a name and the name appears whole, as a rename makes
  // it, so no temporary name is needed; a link and a rename were two changes of the folder for
  // every repeat of a mix-level dump.
  if (::link(existing.c_str(), out.target_.c_str()) == 0) return Status::Ok();
  struct stat at_target {};
  if (::lstat(out.target_.c_str(), &at_target) == 0 && at_target.st_dev == st.st_dev &&
      at_target.st_ino == st.st_ino) {
    // Already that file (rename(2) between two links of one file does nothing, and would leave
    // the temporary name behind).
    return Status::Ok();
  }
  // No temporary file is created for the link: on ext4 without a journal every inode created
  // and freed makes the next creations slower (docs/capture.md), and a link needs none.
  if (out.TakeTemporaryName(
          [&existing](const char* name) { return ::link(existing.c_str(), name) == 0; })) {
    return out.RenameIntoPlace();  // a link adds no data to flush
  }
  // No hard links here (EPERM, EXDEV, EMLINK, ENOTSUP...): a copy, written by name and
  // committed (flushed with FileSync::kNow) as any file.
  NUMPROBE_ASSIGN_OR_RETURN(AtomicOutput copy, Create(path, sync));
  std::error_code ec;
  fs::copy_file(existing, copy.LibraryPath(), fs::copy_options::overwrite_existing, ec);
  if (ec) {
    return Status::IoError(path.string() + ": cannot copy " + existing.string() + ": " +
                           ec.message());
  }
  return copy.Commit();
}

Status AtomicOutput::Write(std::span<const std::byte> bytes) {
  if (!error_.ok()) return error_;
  if (fd_ < 0) return Status::Internal("write after commit");
  // Pieces below this size wait in memory; larger ones go straight to the file.
  constexpr size_t kGather = size_t{64} << 10;
  if (pending_.size() + bytes.size() > kGather) NUMPROBE_RETURN_IF_ERROR(FlushPending());
  if (bytes.size() < kGather) {
    pending_.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  } else {
    NUMPROBE_RETURN_IF_ERROR(WriteAll(bytes));
  }
  offset_ += bytes.size();
  return Status::Ok();
}

Status AtomicOutput::FlushPending() {
  if (pending_.empty()) return Status::Ok();
  Status st = WriteAll(std::as_bytes(std::span(pending_)));
  pending_.clear();
  return st;
}

Status AtomicOutput::WriteAll(std::span<const std::byte> bytes) {
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
  handed_over_ += bytes.size();
  // A large file has its writeback started as it grows (kWritebackEvery): Commit()'s fsync, or
  // the caller's sync of a kDeferred batch, then waits for the last piece only (Commit() waited
  // 0.17 s for each 300 MB table of a large compare).
  if (handed_over_ - writeback_from_ >= kWritebackEvery) {
    StartWriteback(fd_, writeback_from_, handed_over_);
    writeback_from_ = handed_over_;
  }
  return Status::Ok();
}

void StartWriteback(int fd, uint64_t from, uint64_t to) {
  if (to <= from) return;
  (void)::sync_file_range(fd, static_cast<off_t>(from), static_cast<off_t>(to - from),
                          SYNC_FILE_RANGE_WRITE);
}

const std::string& AtomicOutput::LibraryPath() {
  (void)FlushPending();  // a failure sticks in error_ and Commit() reports it
  written_by_name_ = true;
  return temp_path_;
}

Status AtomicOutput::Commit() {
  if (!error_.ok()) return error_;
  if (fd_ < 0) return Status::Internal("commit twice");
  NUMPROBE_RETURN_IF_ERROR(FlushPending());
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
  return RenameIntoPlace();
}

Status AtomicOutput::RenameIntoPlace() {
  // Something other than a regular file may have appeared at the target since Create().
  struct stat st {};
  if (::lstat(target_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    error_ = NotRegular(target_, st.st_mode);
    return error_;
  }
  if (std::rename(temp_path_.c_str(), target_.c_str()) != 0) {
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

namespace {

// fsync by name: of a folder (its new and renamed names made durable), or of a file already
// renamed into place (the writer's descriptor is closed; O_NONBLOCK: a FIFO put there meanwhile
// does not block the open, and its fsync fails).
enum class SyncTarget { kFolder, kFile };
Status SyncByName(const fs::path& path, SyncTarget target) {
  const int flags = target == SyncTarget::kFolder ? O_DIRECTORY : O_NONBLOCK;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | flags);
  if (fd < 0) return Status::IoError(path.string() + ": cannot open to sync: " + ErrnoText());
  Status st;
  if (::fsync(fd) != 0) st = Status::IoError(path.string() + ": fsync failed: " + ErrnoText());
  ::close(fd);
  return st;
}

Status SyncFolder(const fs::path& folder) { return SyncByName(folder, SyncTarget::kFolder); }

// One syncfs(2) per filesystem that `folders` are on: everything written there is on disk.
Status SyncFilesystemsOf(const std::vector<fs::path>& folders) {
  std::vector<dev_t> synced;
  for (const fs::path& folder : folders) {
    const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return Status::IoError(folder.string() + ": cannot open to sync: " + ErrnoText());
    struct stat st {};
    bool ok = ::fstat(fd, &st) == 0;
    if (ok && std::find(synced.begin(), synced.end(), st.st_dev) == synced.end()) {
      ok = ::syncfs(fd) == 0;
      synced.push_back(st.st_dev);
    }
    const std::string error = ok ? std::string() : ErrnoText();
    ::close(fd);
    if (!ok) return Status::IoError(folder.string() + ": syncfs failed: " + error);
  }
  return Status::Ok();
}

// Appends `folder` unless `folders` holds it already (a batch's files share a few folders).
void AddFolderOnce(std::vector<fs::path>* folders, fs::path folder) {
  if (std::find(folders->begin(), folders->end(), folder) == folders->end()) {
    folders->push_back(std::move(folder));
  }
}

}  // namespace

Result<NotYetDurable> ReplaceFilesNotYetDurable(std::span<const FileContent> files) {
  NotYetDurable pending;
  std::vector<AtomicOutput> outputs;
  outputs.reserve(files.size());
  // Every file is written before any is renamed: a file that cannot be created fails the batch
  // with the old files in place.
  for (const FileContent& file : files) {
    NUMPROBE_ASSIGN_OR_RETURN(AtomicOutput out,
                              AtomicOutput::Create(file.path, FileSync::kDeferred));
    NUMPROBE_RETURN_IF_ERROR(out.Write(file.content));
    NUMPROBE_RETURN_IF_ERROR(out.Flush());
    outputs.push_back(std::move(out));
  }
  for (AtomicOutput& out : outputs) {
    NUMPROBE_RETURN_IF_ERROR(out.Commit());
    pending.files.push_back(out.target());
    AddFolderOnce(&pending.folders, out.target_folder());
  }
  return pending;
}

Status MakeDurable(const NotYetDurable& pending, BatchFlush flush,
                   std::span<const std::filesystem::path> also_sync) {
  std::vector<fs::path> folders = pending.folders;
  for (const fs::path& folder : also_sync) AddFolderOnce(&folders, folder);
  if (flush == BatchFlush::kFilesystem) {
    NUMPROBE_RETURN_IF_ERROR(SyncFilesystemsOf(folders));
  } else {
    for (const fs::path& file : pending.files) {
      NUMPROBE_RETURN_IF_ERROR(SyncByName(file, SyncTarget::kFile));
    }
  }
  for (const fs::path& folder : folders) NUMPROBE_RETURN_IF_ERROR(SyncFolder(folder));
  return Status::Ok();
}

}  // namespace numprobe::detail
