// The capture journal: the writer the Dumper appends to, and the reader that rebuilds dump.json /
// stack.json / construct.json from it.
#include "msprobe/dump_journal.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string_view>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/json.h"
#include "core/process_id.h"
#include "core/py_format.h"
#include "core/regular_file.h"
#include "core/text_file.h"
#include "msprobe/dump_tables.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

std::string ErrnoText() { return std::strerror(errno); }

// The line AppendWritten ends a journal with once the JSON files hold everything before it.
constexpr std::string_view kWrittenMarker = R"({"k":"w"})";

// Writes the marker line at `offset` of the journal open as `fd`, through the file (not the
// mapping): the journal's end, which the caller has checked.
Status WriteMarkerAt(int fd, uint64_t offset, const fs::path& path) {
  std::string line(kWrittenMarker);
  line.push_back('\n');
  if (::pwrite(fd, line.data(), line.size(), static_cast<off_t>(offset)) !=
      static_cast<ssize_t>(line.size())) {
    return Status::IoError(path.string() + ": cannot append: " + ErrnoText());
  }
  return Status::Ok();
}

// True when the journal's last line is the written marker, read from its last bytes alone: a
// finished dump's reader then skips parsing the journal (as large as dump.json) only to learn that
// dump.json is current. Anything else (a zero-filled tail left by a killed writer, records after
// the marker, an unreadable file) answers false and is left to the full read.
bool JournalEndsWithWrittenMarker(const fs::path& journal) {
  auto file = detail::OpenRegularFile(journal);
  if (!file) return false;
  // The marker, its newline and the newline that ends the line before it (if any).
  constexpr size_t kTail = kWrittenMarker.size() + 2;
  char tail[kTail];
  const size_t want = static_cast<size_t>(std::min<uint64_t>(file->size(), kTail));
  if (want < kWrittenMarker.size() + 1) return false;
  const auto from = static_cast<off_t>(file->size() - want);
  if (::pread(file->fd(), tail, want, from) != static_cast<ssize_t>(want)) return false;
  const std::string_view got(tail, want);
  if (got.back() != '\n') return false;
  const std::string_view line = got.substr(want - 1 - kWrittenMarker.size(), kWrittenMarker.size());
  const bool whole_line = want < kTail || got.front() == '\n';
  return whole_line && line == kWrittenMarker;
}

// Appends `s` as a JSON string, spelled as JsonValue's serializer writes the rest of the line.
void AppendJsonString(std::string_view s, std::string* out) {
  detail::AppendJsonString(s, out, {.invalid = detail::Utf8Invalid::kReplace, .escape_del = false});
}

Result<std::string> ReadWholeFile(const fs::path& path) {
  // No size cap beyond the system's: a journal is as large as the run it recorded.
  return detail::ReadTextFile(path, UINTMAX_MAX);
}

const std::string* StringMember(const JsonValue& v, std::string_view key) {
  const JsonValue* m = v.Find(key);
  return (m != nullptr && m->kind() == JsonValue::Kind::kString) ? &m->string_value() : nullptr;
}

}  // namespace

Status DumpJournalWriter::Open(const fs::path& path) {
  Close();
  std::unique_lock lock = Lock();
  pid_ = detail::CurrentProcessId();
  auto file = detail::OpenRegularFileForWriting(path, detail::WriteMode::kTruncate);
  if (!file) return file.error().WithNote("the capture journal cannot be written there");
  fd_ = file->Release();
  path_ = path;
  return Status::Ok();
}

bool DumpJournalWriter::Writable() const { return fd_ >= 0 && detail::CurrentProcessId() == pid_; }

void DumpJournalWriter::Close() {
  std::unique_lock lock = Lock();
  // Only the process that writes the journal may cut it (a forked child's view is stale).
  if (detail::CurrentProcessId() == pid_) (void)CutLocked();
  if (map_ != nullptr) ::munmap(map_, capacity_);
  if (fd_ >= 0) ::close(fd_);
  map_ = nullptr;
  fd_ = -1;
  size_ = capacity_ = 0;
}

Status DumpJournalWriter::Cut() {
  std::unique_lock lock = Lock();
  if (!Writable()) return Status::Ok();
  return CutLocked();
}

Status DumpJournalWriter::CutLocked() {
  // Unmapped, the file is already its length (never grown, or cut): a second ftruncate to the
  // same length would still wait for the last page's writeback.
  if (fd_ < 0 || map_ == nullptr) return Status::Ok();
  ::munmap(map_, capacity_);
  map_ = nullptr;
  capacity_ = 0;
  last_length_ = size_;
  if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
    return Status::IoError(path_.string() +
                           ": cannot cut the journal to its length: " + ErrnoText());
  }
  return Status::Ok();
}

Status DumpJournalWriter::AppendHeader(const JsonValue& header) {
  std::unique_lock lock = Lock();
  if (!Writable()) return Status::Ok();
  JsonValue record = header;
  record.Set("k", JsonValue::String("h"));
  line_.clear();
  AppendJson(record, -1, &line_);
  return AppendLine();
}

void DumpJournalWriter::FormatNamedValue(std::string_view kind, std::string_view name,
                                         const JsonValue& value, std::string* line) {
  line->assign(R"({"k":")");
  line->append(kind);
  line->append(R"(","n":)");
  AppendJsonString(name, line);
  line->append(R"(,"v":)");
  AppendJson(value, -1, line);
  line->push_back('}');
}

Status DumpJournalWriter::AppendNamedValue(std::string_view kind, std::string_view name,
                                           const JsonValue& value) {
  std::unique_lock lock = Lock();
  if (!Writable()) return Status::Ok();
  FormatNamedValue(kind, name, value, &line_);
  return AppendLine();
}

Status DumpJournalWriter::AppendData(std::string_view entry, const JsonValue& part) {
  return AppendNamedValue("d", entry, part);
}

std::string DumpJournalWriter::DataLine(std::string_view entry, const JsonValue& part) {
  std::string line;
  FormatNamedValue("d", entry, part, &line);
  return line;
}

std::string DumpJournalWriter::DebugLine(std::string_view name, const JsonValue& value) {
  std::string line;
  FormatNamedValue("g", name, value, &line);
  return line;
}

Status DumpJournalWriter::AppendFormatted(std::string_view line) {
  std::unique_lock lock = Lock();
  if (!Writable()) return Status::Ok();
  line_.assign(line);
  return AppendLine();
}

Status DumpJournalWriter::AppendStack(std::string_view name,
                                      const std::vector<std::string>& frames) {
  std::unique_lock lock = Lock();
  if (!Writable()) return Status::Ok();
  line_.assign(R"({"k":"s","n":)");
  AppendJsonString(name, &line_);
  line_.append(R"(,"f":[)");
  for (size_t i = 0; i < frames.size(); ++i) {
    if (i > 0) line_.push_back(',');
    AppendJsonString(frames[i], &line_);
  }
  line_.append("]}");
  return AppendLine();
}

Status DumpJournalWriter::AppendStackRef(std::string_view name, size_t group) {
  std::unique_lock lock = Lock();
  if (!Writable()) return Status::Ok();
  line_.assign(R"({"k":"s","n":)");
  AppendJsonString(name, &line_);
  line_.append(R"(,"g":)");
  line_.append(std::to_string(group));
  line_.push_back('}');
  return AppendLine();
}

Status DumpJournalWriter::AppendConstruct(std::string_view name,
                                          const std::optional<std::string>& parent) {
  std::unique_lock lock = Lock();
  if (!Writable()) return Status::Ok();
  line_.assign(R"({"k":"c","n":)");
  AppendJsonString(name, &line_);
  line_.append(R"(,"p":)");
  if (parent) {
    AppendJsonString(*parent, &line_);
  } else {
    line_.append("null");
  }
  line_.push_back('}');
  return AppendLine();
}

Status DumpJournalWriter::AppendDebug(std::string_view name, const JsonValue& value) {
  return AppendNamedValue("g", name, value);
}

Status DumpJournalWriter::AppendCastsMarker() {
  std::unique_lock lock = Lock();
  if (!Writable()) return Status::Ok();
  line_.assign(R"({"k":"x"})");
  return AppendLine();
}

Status DumpJournalWriter::AppendCast(const JsonValue& cast) {
  std::unique_lock lock = Lock();
  if (!Writable()) return Status::Ok();
  line_.assign(R"({"k":"x","v":)");
  AppendJson(cast, -1, &line_);
  line_.push_back('}');
  return AppendLine();
}

Status DumpJournalWriter::AppendWritten() {
  std::unique_lock lock = Lock();
  if (!Writable()) return Status::Ok();
  line_.assign(kWrittenMarker);
  return AppendLine();
}

uint64_t DumpJournalWriter::size() {
  std::unique_lock lock = Lock();
  return size_;
}

Status DumpJournalWriter::AppendWrittenIfUnchanged(const fs::path& path, uint64_t size) {
  std::unique_lock lock = Lock();
  if (fd_ >= 0 && path_ == path) {
    if (!Writable() || size_ != size) return Status::Ok();
    if (map_ != nullptr) {
      line_.assign(kWrittenMarker);
      return AppendLine();
    }
    // Cut (Cut()): the marker is written through the file rather than mapping it again, which
    // would grow it by a megabyte for one line.
    NUMPROBE_RETURN_IF_ERROR(WriteMarkerAt(fd_, size_, path_));
    size_ += kWrittenMarker.size() + 1;
    return Status::Ok();
  }
  // Closed (the step ended, Close() cut the file to its length): appended through the file, under
  // the lock so that it is not reopened meanwhile.
  auto file = detail::OpenRegularFileForWriting(path, detail::WriteMode::kAppend);
  if (!file) return file.error();
  struct stat st {};
  if (::fstat(file->fd(), &st) != 0) {
    return Status::IoError(path.string() + ": " + ErrnoText());
  }
  if (static_cast<uint64_t>(st.st_size) != size) return Status::Ok();
  return WriteMarkerAt(file->fd(), size, path);
}

std::unique_lock<std::mutex> DumpJournalWriter::Lock() {
  // A forked child's copy of the lock may have been taken by a thread the child does not have;
  // the child never writes the parent's journal (Writable() is false there), so it does not wait.
  if (pid_ != 0 && detail::CurrentProcessId() != pid_) return {};
  return std::unique_lock(mu_);
}

Status DumpJournalWriter::AppendLine() {
  line_.push_back('\n');
  if (size_ + line_.size() > capacity_) NUMPROBE_RETURN_IF_ERROR(Grow(size_ + line_.size()));
  std::memcpy(map_ + size_, line_.data(), line_.size());
  size_ += line_.size();
  return Status::Ok();
}

Status DumpJournalWriter::Grow(size_t needed) {
  // A step's journal is first mapped at the size the previous one reached, with a quarter more
  // for a step that records more, rounded up to a power of two (at least 64 KiB); the first one
  // at 1 MiB. Each mapping is populated below, so its unused pages cost as much as used ones: the
  // demo's steps write 180 KB of journal each, and populating 1 MiB for them was half of Start().
  size_t capacity = capacity_ * 2;
  if (capacity_ == 0) {
    capacity = size_t{1} << 20;
    if (last_length_ > 0) {
      capacity = size_t{64} << 10;
      while (capacity < last_length_ + last_length_ / 4) capacity *= 2;
    }
  }
  while (capacity < needed) capacity *= 2;
  if (::ftruncate(fd_, static_cast<off_t>(capacity)) != 0) {
    return Status::IoError(path_.string() + ": cannot grow journal: " + ErrnoText());
  }
  // A small journal (a step's, most often well under a MiB) is mapped populated: its pages are
  // then in place at once rather than faulted in one by one as records reach them, each fault a
  // trap on a VM (the demo's statistics dump: 70 of the journal's page-fault samples down to 13,
  // and its per-step Start() 18 to 15 ms over 24 steps). A large one, whose second half may
  // never be written, is faulted in as it is used.
  constexpr size_t kPopulatedUpTo = size_t{16} << 20;
  int flags = MAP_SHARED;
#ifdef MAP_POPULATE
  if (capacity <= kPopulatedUpTo) flags |= MAP_POPULATE;
#endif
  void* map = ::mmap(nullptr, capacity, PROT_READ | PROT_WRITE, flags, fd_, 0);
  if (map == MAP_FAILED)
    return Status::IoError(path_.string() + ": cannot map journal: " + ErrnoText());
  if (map_ != nullptr) ::munmap(map_, capacity_);
  map_ = static_cast<char*>(map);
  capacity_ = capacity;
  return Status::Ok();
}

Result<RecoveredDump> ReadDumpJournal(const std::filesystem::path& path) {
  NUMPROBE_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  // A journal whose writer died still has the zero-filled tail of its last growth step.
  if (const size_t nul = text.find('\0'); nul != std::string::npos) text.resize(nul);
  RecoveredDump out;
  detail::EntryTable entries;
  detail::StackTable stacks;
  detail::ConstructTable construct;
  JsonValue header = JsonValue::MakeObject({{"task", JsonValue()},
                                            {"level", JsonValue()},
                                            {"framework", JsonValue()},
                                            {"dump_data_dir", JsonValue()}});
  JsonValue debug = JsonValue::MakeObject();
  size_t pos = 0;
  int64_t line_no = 0;
  bool last_was_write_marker = false;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    const bool complete = end != std::string::npos;
    if (!complete) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = complete ? end + 1 : end;
    ++line_no;
    if (line.empty()) continue;
    // Written by DumpJournalWriter as Python's json writes: bare NaN/Infinity tokens.
    auto parsed = ParseJson(line, kPythonJson);
    if (!parsed || !parsed->is_object()) {
      // Only the last line may be cut short by a crash; anything earlier is damage.
      if (!complete) {
        out.truncated_tail = true;
        break;
      }
      return Status::Corrupt("journal line " + std::to_string(line_no) + " is not a JSON object" +
                             (parsed ? std::string() : ": " + parsed.error().message()));
    }
    if (!complete) {
      // A final line without its newline was not finished either (the writer ends every line).
      out.truncated_tail = true;
      break;
    }
    JsonValue& rec = *parsed;
    const std::string* kind = StringMember(rec, "k");
    if (kind == nullptr) {
      return Status::Corrupt("journal line " + std::to_string(line_no) + " has no record kind");
    }
    last_was_write_marker = false;
    if (*kind == "h") {
      for (const char* key : {"task", "level", "framework", "dump_data_dir"}) {
        if (const JsonValue* v = rec.Find(key)) header.Set(key, *v);
      }
    } else if (*kind == "d") {
      const std::string* name = StringMember(rec, "n");
      JsonValue* part = rec.Find("v");
      if (name == nullptr || part == nullptr || !part->is_object()) {
        return Status::Corrupt("journal line " + std::to_string(line_no) +
                               ": malformed data record");
      }
      entries.Merge(*name, std::move(*part));
      ++out.records;
    } else if (*kind == "s") {
      const std::string* name = StringMember(rec, "n");
      if (const JsonValue* group = rec.Find("g"); group != nullptr && name != nullptr) {
        // A stack already written in full: its group in this journal's order.
        if (group->kind() != JsonValue::Kind::kInt || group->int_value() < 0 ||
            !stacks.AddToGroup(*name, static_cast<size_t>(group->int_value()))) {
          return Status::Corrupt("journal line " + std::to_string(line_no) +
                                 ": stack record names no earlier stack");
        }
        continue;
      }
      const JsonValue* frames = rec.Find("f");
      if (name == nullptr || frames == nullptr || !frames->is_array()) {
        return Status::Corrupt("journal line " + std::to_string(line_no) +
                               ": malformed stack record");
      }
      std::vector<std::string> f;
      for (const JsonValue& item : frames->array()) {
        if (item.kind() != JsonValue::Kind::kString) {
          return Status::Corrupt("journal line " + std::to_string(line_no) +
                                 ": stack frame is not a string");
        }
        f.push_back(item.string_value());
      }
      stacks.Add(*name, std::move(f));
    } else if (*kind == "c") {
      const std::string* name = StringMember(rec, "n");
      if (name == nullptr) {
        return Status::Corrupt("journal line " + std::to_string(line_no) +
                               ": malformed construct record");
      }
      const std::string* parent = StringMember(rec, "p");
      construct.Add(*name, parent != nullptr ? std::optional<std::string>(*parent) : std::nullopt);
    } else if (*kind == "g") {
      const std::string* name = StringMember(rec, "n");
      JsonValue* value = rec.Find("v");
      if (name == nullptr || value == nullptr) {
        return Status::Corrupt("journal line " + std::to_string(line_no) +
                               ": malformed debug record");
      }
      debug.Set(*name, std::move(*value));
    } else if (*kind == "x") {
      if (!out.casts.has_value()) out.casts = JsonValue::MakeArray();
      if (JsonValue* cast = rec.Find("v")) {
        if (!cast->is_object()) {
          return Status::Corrupt("journal line " + std::to_string(line_no) +
                                 ": malformed cast record");
        }
        out.casts->array().push_back(std::move(*cast));
      }
    } else if (*kind == "w") {
      last_was_write_marker = true;
    } else {
      return Status::Corrupt("journal line " + std::to_string(line_no) + ": unknown record kind '" +
                             *kind + "'");
    }
  }
  out.dump_json_current = last_was_write_marker;
  out.dump = entries.ToDumpJson(header);
  out.stack = stacks.ToJson();
  out.construct = construct.ToJson();
  out.debug = std::move(debug);
  return out;
}

bool HasDumpJournal(const std::filesystem::path& rank_dir) {
  std::error_code ec;
  return fs::is_regular_file(rank_dir / std::string(kDumpJournalName), ec);
}

Result<std::optional<RecoveredDump>> ReadJournalIfNewer(const std::filesystem::path& rank_dir) {
  if (!HasDumpJournal(rank_dir)) return std::optional<RecoveredDump>();
  const fs::path journal = rank_dir / std::string(kDumpJournalName);
  std::error_code ec;
  const bool has_dump_json = fs::exists(rank_dir / "dump.json", ec);
  if (has_dump_json && JournalEndsWithWrittenMarker(journal)) return std::optional<RecoveredDump>();
  auto recovered = ReadDumpJournal(journal);
  if (!recovered) return recovered.error().WithContext(journal.string());
  if (has_dump_json && recovered->dump_json_current) {
    return std::optional<RecoveredDump>();
  }
  return std::optional<RecoveredDump>(std::move(*recovered));
}

Result<DumpJsonText> LoadDumpJson(const std::filesystem::path& rank_dir) {
  const fs::path dump_json = rank_dir / "dump.json";
  std::error_code ec;
  if (!fs::exists(dump_json, ec) && !HasDumpJournal(rank_dir)) {
    return Status::NotFound(rank_dir.string() + ": no dump.json and no " +
                            std::string(kDumpJournalName));
  }
  DumpJsonText out;
  NUMPROBE_ASSIGN_OR_RETURN(auto recovered, ReadJournalIfNewer(rank_dir));
  if (recovered.has_value()) {
    out.text = ToJson(recovered->dump, 1);
    out.from_journal = true;
    out.truncated_tail = recovered->truncated_tail;
    return out;
  }
  NUMPROBE_ASSIGN_OR_RETURN(out.text, ReadWholeFile(dump_json));
  return out;
}

Result<JournalText> ReadDumpJournalText(const std::filesystem::path& path) {
  NUMPROBE_ASSIGN_OR_RETURN(RecoveredDump recovered, ReadDumpJournal(path));
  JournalText out;
  out.dump = ToJson(recovered.dump, 1);
  out.stack = ToJson(recovered.stack, 1);
  out.construct = ToJson(recovered.construct, 1);
  out.debug = ToJson(recovered.debug, 1);
  out.records = recovered.records;
  out.dump_json_current = recovered.dump_json_current;
  out.truncated_tail = recovered.truncated_tail;
  return out;
}

}  // namespace numprobe
