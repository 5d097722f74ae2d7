// The capture journal: dump.json.journal beside dump.json in a rank folder, one compact JSON
// object per line, appended by the Dumper (through DumpJournalWriter) as each record happens.
// Reading it back rebuilds dump.json, stack.json and construct.json as they would have been
// written at Stop(), so a run killed mid-step loses nothing it recorded. A line cut short by the
// crash is skipped and reported, and the zero bytes after the last line (the journal grows in
// steps) are ignored. Readers (inspect, compare) call LoadDumpJson, which prefers dump.json and
// falls back to the journal when dump.json is missing or older than the journal's last record.
//
// Line kinds: {"k":"h",...header} {"k":"d","n":entry,"v":{part}} (merged into the entry like
// Python's dict.update) {"k":"s","n":name,"f":[frames]} {"k":"c","n":name,"p":parent}
// {"k":"g","n":name,"v":value} (debug.json) {"k":"x"} (the step records casts: casts.h) and
// {"k":"x","v":{cast}} (one narrowing cast) {"k":"w"} (dump.json was written and holds
// everything before this line).
#ifndef NUMPROBE_MSPROBE_DUMP_JOURNAL_H_
#define NUMPROBE_MSPROBE_DUMP_JOURNAL_H_

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>
#include <unistd.h>

#include "numprobe/dump.h"
#include "numprobe/json_value.h"
#include "numprobe/result.h"

namespace numprobe {

// Appends records to a journal. Lines are copied into a shared memory mapping of the file: once
// copied they belong to the kernel's page cache, so a killed process (SIGKILL included) loses none
// of them, without a write(2) per record (which costs tens of microseconds per op). The file grows
// in doubling steps and is cut to its real length at Cut() or Close(); after a crash the unused
// tail is zero bytes, which the reader skips. Appending to a closed writer, or from a forked child
// (whose mapping is the parent's journal), does nothing. Thread-safe: the capture's background file
// writer appends the records whose tensor files it has just written.
class DumpJournalWriter {
 public:
  DumpJournalWriter() = default;
  DumpJournalWriter(const DumpJournalWriter&) = delete;
  DumpJournalWriter& operator=(const DumpJournalWriter&) = delete;
  ~DumpJournalWriter() { Close(); }

  // Starts a new journal at `path` (an existing one is replaced).
  Status Open(const std::filesystem::path& path);
  bool is_open() const { return fd_ >= 0; }
  void Close();
  // Cuts the file to its length now and unmaps it, leaving it open: the next record maps it
  // again. The capture cuts a step's journal before it queues the step's sync: cutting it later,
  // while the sync writes the last page back, waits for that write (ftruncate zeroes the page
  // past the new end, so it waits for the page's writeback): 7 ms a step at tensor level L1.
  Status Cut();

  // {"task", "level", "framework", "dump_data_dir" (the members of `header`), "k": "h"}
  Status AppendHeader(const JsonValue& header);
  // {"k": "d", "n": entry, "v": part}: `part` is merged into the entry (Python's dict.update).
  Status AppendData(std::string_view entry, const JsonValue& part);
  // The line AppendData / AppendDebug would append (without its newline), to be appended later
  // with AppendFormatted (once the tensor files it names are written).
  static std::string DataLine(std::string_view entry, const JsonValue& part);
  static std::string DebugLine(std::string_view name, const JsonValue& value);
  Status AppendFormatted(std::string_view line);
  // {"k": "s", "n": name, "f": frames}
  Status AppendStack(std::string_view name, const std::vector<std::string>& frames);
  // {"k": "s", "n": name, "g": group}: `name` has the frames of the step's group-th distinct
  // stack (StackTable's order), written once in full by AppendStack.
  Status AppendStackRef(std::string_view name, size_t group);
  // {"k": "c", "n": name, "p": parent or null}
  Status AppendConstruct(std::string_view name, const std::optional<std::string>& parent);
  // {"k": "g", "n": name, "v": value}: a debug.json member.
  Status AppendDebug(std::string_view name, const JsonValue& value);
  // {"k": "x"}: the step records narrowing casts (casts.h), so casts.json is rebuilt even empty.
  Status AppendCastsMarker();
  // {"k": "x", "v": cast}: one narrowing cast (casts.json's element).
  Status AppendCast(const JsonValue& cast);
  // {"k": "w"}: dump.json was written and holds every record before this one.
  Status AppendWritten();
  // The journal's length in bytes (what Close() cuts it to).
  uint64_t size();
  // AppendWritten for JSON files that were written when the journal at `path` was `size` bytes
  // long and have since been made durable, from another thread (the capture's background sync):
  // appended only if nothing was recorded meanwhile (the files would then not hold it), whether
  // the journal is still open here or already closed (then through the file itself).
  Status AppendWrittenIfUnchanged(const std::filesystem::path& path, uint64_t size);

 private:
  // {"k": kind, "n": name, "v": value}
  Status AppendNamedValue(std::string_view kind, std::string_view name, const JsonValue& value);
  static void FormatNamedValue(std::string_view kind, std::string_view name, const JsonValue& value,
                               std::string* line);
  std::unique_lock<std::mutex> Lock();
  // Open, and this is the process that opened it (without a getpid() trap per record).
  bool Writable() const;
  // Appends `line_` plus a newline.
  Status AppendLine();
  Status Grow(size_t needed);
  Status CutLocked();

  std::mutex mu_;
  int fd_ = -1;
  pid_t pid_ = 0;
  std::filesystem::path path_;
  char* map_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  size_t last_length_ = 0;  // the length the last journal was cut to (Grow's first size)
  std::string line_;
};

struct RecoveredDump {
  JsonValue dump;       // {"task", "level", "framework", "dump_data_dir", "data": {...}}
  JsonValue stack;      // stack.json's content
  JsonValue construct;  // construct.json's content
  JsonValue debug;      // debug.json's "data" (PrecisionDebugger.save), empty when none
  // casts.json's "casts" elements (an array) when the step recorded casts (casts.h).
  std::optional<JsonValue> casts;
  int64_t records = 0;  // data lines applied
  // True when dump.json holds everything (the last complete line is a "w" marker).
  bool dump_json_current = false;
  bool truncated_tail = false;  // the last line was cut short (skipped)
};

// Reads the journal at `path`. kNotFound if absent; kCorrupt naming the line for a malformed
// line before the last one.
Result<RecoveredDump> ReadDumpJournal(const std::filesystem::path& path);

// True when `rank_dir` holds a capture journal.
bool HasDumpJournal(const std::filesystem::path& rank_dir);

// The journal of `rank_dir` when it must be read instead of the JSON files: dump.json is missing,
// or the journal holds records written after it. nullopt when the files are current or there is
// no journal.
Result<std::optional<RecoveredDump>> ReadJournalIfNewer(const std::filesystem::path& rank_dir);

}  // namespace numprobe

#endif  // NUMPROBE_MSPROBE_DUMP_JOURNAL_H_
