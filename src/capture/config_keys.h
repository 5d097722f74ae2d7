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
// One of `choices`, returned as its index.
Result<size_t> GetChoice(std::string_view key, const JsonValue& v,
                         std::initializer_list<std::string_view> choices);
// rank / step lists: ints, "3" or inclusive ranges "4-6"; sorted and de-duplicated.
Result<std::vector<int64_t>> GetIndexList(std::string_view key, const JsonValue& v);

// Handlers that only validate the value's type, for keys numprobe does not honour.
Status CheckBool(std::string_view key, const JsonValue& v, bool apply, DumpConfig* config);
Status CheckString(std::string_view key, const JsonValue& v, bool apply, DumpConfig* config);
Status CheckInt(std::string_view key, const JsonValue& v, bool apply, DumpConfig* config);
Status CheckStringList(std::string_view key, const JsonValue& v, bool apply, DumpConfig* config);
Status CheckList(std::string_view key, const JsonValue& v, bool apply, DumpConfig* config);
Status CheckAny(std::string_view key, const JsonValue& v, bool apply, DumpConfig* config);

// MindSpore's dump_config.json (a root with "common_dump_settings"), as DumpConfig::Parse reads it.
Result<DumpConfig> ParseMindSporeDumpConfig(const JsonValue& root);

}  // namespace numprobe::config_detail

#endif  // NUMPROBE_CAPTURE_CONFIG_KEYS_H_
