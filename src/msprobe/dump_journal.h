// The capture journal: dump.json.journal beside dump.json in a rank folder, one compact JSON
// object per line, appended by the Dumper as each record happens. Reading it back rebuilds
// dump.json, stack.json and construct.json as they would have been written at Stop(), so a run
// killed mid-step loses nothing it recorded. A line cut short by the crash is skipped and
// reported, and the zero bytes after the last line (the journal grows in steps) are ignored.
// Readers (inspect, compare) call LoadDumpJson, which prefers dump.json and falls back to the
// journal when dump.json is missing or older than the journal's last record.
//
// Line kinds: {"k":"h",...header} {"k":"d","n":entry,"v":{part}} (merged into the entry like
// Python's dict.update) {"k":"s","n":name,"f":[frames]} {"k":"c","n":name,"p":parent}
// {"k":"g","n":name,"v":value} (debug.json) {"k":"w"} (dump.json was written and holds everything
// before this line).
#ifndef NUMPROBE_MSPROBE_DUMP_JOURNAL_H_
#define NUMPROBE_MSPROBE_DUMP_JOURNAL_H_

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "numprobe/dump.h"
#include "numprobe/json_value.h"
#include "numprobe/result.h"

namespace numprobe {

struct RecoveredDump {
  JsonValue dump;       // {"task", "level", "framework", "dump_data_dir", "data": {...}}
  JsonValue stack;      // stack.json's content
  JsonValue construct;  // construct.json's content
  JsonValue debug;      // debug.json's "data" (PrecisionDebugger.save), empty when none
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
