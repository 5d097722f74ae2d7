// The table-driven reading of capture configs: each dialect (msprobe's config.json, MindSpore's
// dump_config.json, ...) is a set of key tables, one per section, whose entries validate a key's
// value, apply it when its section is in force, and say what numprobe does instead when it does
// not honour the key. Also the value readers the tables share. Internal to src/capture.
#ifndef NUMPROBE_CAPTURE_CONFIG_KEYS_H_
#define NUMPROBE_CAPTURE_CONFIG_KEYS_H_

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/dump_config.h"
#include "numprobe/json_value.h"
#include "numprobe/result.h"

namespace numprobe::config_detail {

// Validates `value` of key `full_name` ("tensor.list"); sets it in *config when `apply`.
using KeyHandler = Status (*)(std::string_view full_name, const JsonValue& value, bool apply,
                              DumpConfig* config);

struct ConfigKey {
  std::string_view name;
  KeyHandler handle;
  // Empty when numprobe honours the key; otherwise what numprobe does instead (the text of the
  // one-line warning given when the key is present in a section in force).
  std::string_view instead;
};

// Runs every member of `object` (a JSON object, else kInvalidArgument) through `keys`. A member
// no entry names is kInvalidArgument naming it, with the closest known name as a hint. When
// `apply`, values are set in *config and each present key with an `instead` adds a warning.
Status ApplyConfigKeys(std::span<const ConfigKey> keys, std::string_view section,
                       const JsonValue& object, bool apply, DumpConfig* config);

// The handler of a section whose keys are the table `kKeys`.
template <const auto& kKeys>
Status ApplySection(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c) {
  return ApplyConfigKeys(kKeys, key, v, apply, c);
}

// "config key 'x': what".
Status KeyError(std::string_view key, std::string_view what);
// " (did you mean 'y'?)" for the known name closest to `key`, or "" when none is close.
std::string DidYouMean(std::string_view key, const std::vector<std::string_view>& known);
// Adds "config key 'key': ... numprobe ..." to config->warnings once.
void AddKeyWarning(std::string_view key, std::string_view instead, DumpConfig* config);

std::string KindName(const JsonValue& v);
Result<std::string> GetString(std::string_view key, const JsonValue& v);
Result<bool> GetBool(std::string_view key, const JsonValue& v);
Result<int64_t> GetInt(std::string_view key, const JsonValue& v);
Result<std::vector<std::string>> GetStringList(std::string_view key, const JsonValue& v);
// A positive count, or -1 for unlimited (overflow_nums, diff_nums).
Result<int64_t> GetCountOrUnlimited(std::string_view key, const JsonValue& v);
// One of `choices`, returned as its index.
Result<size_t> GetChoice(std::string_view key, const JsonValue& v,
                         std::initializer_list<std::string_view> choices);
// rank / step lists: ints, "3" or inclusive ranges "4-6"; sorted and de-duplicated.
Result<std::vector<int64_t>> GetIndexList(std::string_view key, const JsonValue& v);

// MindSpore's step syntax, also the closed-loop dialect's: "0|5-8|100-120", or "all" (an empty
// list: every step).
Result<std::vector<int64_t>> GetStepSelection(std::string_view key, const JsonValue& v);

// 0 (inputs and outputs), 1 (inputs only) or 2 (outputs only) into dump_input / dump_output
// (MindSpore's input_output, the closed-loop dialect's dump_input_output).
Status SetInputOutputMode(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c);

// The msprobe config.json with the same meaning as `c` (the source_json of a config read from
// another dialect, which Override edits and parses again).
std::string MsprobeJsonOf(const DumpConfig& c);

// Handlers of keys several dialects share (msprobe's config.json and the closed-loop dialect).
// scope: two names or none; list: non-empty names; file_format: pt, npy, or bin (read as npy).
Status SetScope(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c);
Status SetList(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c);
Status SetTensorFileFormat(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c);
Status SetDumpPath(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c);
Status SetRank(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c);
Status SetLevel(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c);
// numprobe's own tensor-file keys (docs/capture.md): tensor_durability step|file, dump_layout
// files|packed.
Status SetTensorDurability(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c);
Status SetDumpLayout(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c);
// The incremental dump's keys (DumpConfig::bench_path): a non-empty path; a positive count or -1;
// true/false.
Status SetBenchPath(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c);
Status SetDiffNums(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c);
Status SetStopAtFirst(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c);

// Handlers that only validate the value's type, for keys numprobe does not honour.
Status CheckBool(std::string_view key, const JsonValue& v, bool apply, DumpConfig* config);
Status CheckString(std::string_view key, const JsonValue& v, bool apply, DumpConfig* config);
Status CheckInt(std::string_view key, const JsonValue& v, bool apply, DumpConfig* config);
Status CheckStringList(std::string_view key, const JsonValue& v, bool apply, DumpConfig* config);
Status CheckList(std::string_view key, const JsonValue& v, bool apply, DumpConfig* config);
Status CheckAny(std::string_view key, const JsonValue& v, bool apply, DumpConfig* config);

// MindSpore's dump_config.json (a root with "common_dump_settings"), as DumpConfig::Parse reads it.
Result<DumpConfig> ParseMindSporeDumpConfig(const JsonValue& root);

// Whether `root` is written in the closed-loop dialect: it has a dump, compare or config_check
// section, or an overflow_check section with enable / check_step (msprobe's overflow_check
// section has neither).
bool IsClosedLoopConfig(const JsonValue& root);
// The closed-loop dialect (docs/config-dialect.md), as DumpConfig::Parse reads it.
Result<DumpConfig> ParseClosedLoopConfig(const JsonValue& root);

}  // namespace numprobe::config_detail

#endif  // NUMPROBE_CAPTURE_CONFIG_KEYS_H_
