// The key-table machinery and value readers shared by the capture config dialects.
#include "capture/config_keys.h"

#include <algorithm>
#include <charconv>

#include "numprobe/enum_names.h"

#include "core/json.h"

namespace numprobe::config_detail {
namespace {

constexpr int64_t kMaxStepOrRank = 1'000'000;

// Levenshtein distance, for the "did you mean" hint (a few dozen short names: written out here
// rather than pulling in a library for it).
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

Result<int64_t> ParseNonNegative(std::string_view key, std::string_view text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto res = std::from_chars(text.data(), end, value);
  if (res.ec != std::errc() || res.ptr != end || text.empty()) {
    return KeyError(key, "'" + std::string(text) + "' is not an integer or a range like \"4-6\"");
  }
  return value;
}

}  // namespace

Status KeyError(std::string_view key, std::string_view what) {
  return Status::InvalidArgument("config key '" + std::string(key) + "': " + std::string(what));
}

std::string DidYouMean(std::string_view key, const std::vector<std::string_view>& known) {
  std::string_view best;
  size_t best_distance = 0;
  for (std::string_view name : known) {
    const size_t d = EditDistance(key, name);
    if (best.empty() || d < best_distance) {
      best = name;
      best_distance = d;
    }
  }
  // Close enough to be a typo: at most a third of the name (and at least 2 edits allowed).
  const size_t limit = std::max<size_t>(2, key.size() / 3);
  if (best.empty() || best_distance > limit) return "";
  return " (did you mean '" + std::string(best) + "'?)";
}

void AddKeyWarning(std::string_view key, std::string_view instead, DumpConfig* config) {
  std::string line = "config key '" + std::string(key) + "': " + std::string(instead);
  if (std::find(config->warnings.begin(), config->warnings.end(), line) == config->warnings.end()) {
    config->warnings.push_back(std::move(line));
  }
}

Status ApplyConfigKeys(std::span<const ConfigKey> keys, std::string_view section,
                       const JsonValue& object, bool apply, DumpConfig* config) {
  if (!object.is_object()) {
    return KeyError(section, "expected an object, got " + KindName(object));
  }
  for (const auto& [name, value] : object.object()) {
    const std::string full = section.empty() ? name : std::string(section) + "." + name;
    const auto it =
        std::find_if(keys.begin(), keys.end(), [&](const ConfigKey& k) { return k.name == name; });
    if (it == keys.end()) {
      std::vector<std::string_view> known;
      for (const ConfigKey& k : keys) known.push_back(k.name);
      return KeyError(full, "unknown key" + DidYouMean(name, known));
    }
    NUMPROBE_RETURN_IF_ERROR(it->handle(full, value, apply, config));
    if (apply && !it->instead.empty()) AddKeyWarning(full, it->instead, config);
  }
  return Status::Ok();
}

std::string KindName(const JsonValue& v) {
  static constexpr EnumNameEntry<JsonValue::Kind> kKinds[] = {
      {JsonValue::Kind::kNull, "null"},       {JsonValue::Kind::kBool, "a boolean"},
      {JsonValue::Kind::kInt, "a number"},    {JsonValue::Kind::kBigInt, "a number"},
      {JsonValue::Kind::kDouble, "a number"}, {JsonValue::Kind::kString, "a string"},
      {JsonValue::Kind::kArray, "a list"},    {JsonValue::Kind::kObject, "an object"}};
  return std::string(NameIn(kKinds, v.kind(), "a value"));
}

Result<std::string> GetString(std::string_view key, const JsonValue& v) {
  if (v.kind() != JsonValue::Kind::kString) {
    return KeyError(key, "expected a string, got " + KindName(v));
  }
  return v.string_value();
}

Result<bool> GetBool(std::string_view key, const JsonValue& v) {
  if (v.kind() != JsonValue::Kind::kBool) {
    return KeyError(key, "expected true or false, got " + KindName(v));
  }
  return v.bool_value();
}

Result<int64_t> GetInt(std::string_view key, const JsonValue& v) {
  if (v.kind() != JsonValue::Kind::kInt) {
    return KeyError(key, "expected an integer, got " + KindName(v));
  }
  return v.int_value();
}

Result<std::vector<std::string>> GetStringList(std::string_view key, const JsonValue& v) {
  if (!v.is_array()) return KeyError(key, "expected a list of strings, got " + KindName(v));
  std::vector<std::string> out;
  for (const JsonValue& item : v.array()) {
    if (item.kind() != JsonValue::Kind::kString) {
      return KeyError(key, "expected a list of strings, found " + KindName(item));
    }
    out.push_back(item.string_value());
  }
  return out;
}

Result<size_t> GetChoice(std::string_view key, const JsonValue& v,
                         std::initializer_list<std::string_view> choices) {
  NUMPROBE_ASSIGN_OR_RETURN(std::string text, GetString(key, v));
  size_t i = 0;
  std::string joined;
  for (std::string_view c : choices) {
    if (c == text) return i;
    if (!joined.empty()) joined += ", ";
    joined += c;
    ++i;
  }
  return KeyError(key, "'" + text + "' is not one of " + joined);
}

Result<std::vector<int64_t>> GetIndexList(std::string_view key, const JsonValue& v) {
  if (!v.is_array()) return KeyError(key, "expected a list, got " + KindName(v));
  std::vector<int64_t> values;
  const auto check = [&](int64_t x) -> Status {
    if (x < 0 || x > kMaxStepOrRank) {
      return KeyError(key, std::to_string(x) + " is outside 0.." + std::to_string(kMaxStepOrRank));
    }
    return Status::Ok();
  };
  for (const JsonValue& item : v.array()) {
    if (item.kind() == JsonValue::Kind::kInt) {
      NUMPROBE_RETURN_IF_ERROR(check(item.int_value()));
      values.push_back(item.int_value());
      continue;
    }
    if (item.kind() != JsonValue::Kind::kString) {
      return KeyError(key, "expected integers or strings like \"4-6\", found " + KindName(item));
    }
    std::string_view text = item.string_value();
    const size_t dash = text.find('-', 1);
    if (dash == std::string_view::npos) {
      NUMPROBE_ASSIGN_OR_RETURN(int64_t x, ParseNonNegative(key, text));
      NUMPROBE_RETURN_IF_ERROR(check(x));
      values.push_back(x);
      continue;
    }
    NUMPROBE_ASSIGN_OR_RETURN(int64_t lo, ParseNonNegative(key, text.substr(0, dash)));
    NUMPROBE_ASSIGN_OR_RETURN(int64_t hi, ParseNonNegative(key, text.substr(dash + 1)));
    NUMPROBE_RETURN_IF_ERROR(check(lo));
    NUMPROBE_RETURN_IF_ERROR(check(hi));
    if (lo > hi) {
      return KeyError(key, "range '" + std::string(text) + "' has its start after its end");
    }
    for (int64_t x = lo; x <= hi; ++x) values.push_back(x);
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

Result<std::vector<int64_t>> GetStepSelection(std::string_view key, const JsonValue& v) {
  NUMPROBE_ASSIGN_OR_RETURN(std::string text, GetString(key, v));
  if (text == "all") return std::vector<int64_t>();
  // Each "|"-separated part is read as a step list's item ("3" or "4-6").
  JsonValue parts = JsonValue::MakeArray();
  size_t start = 0;
  while (start <= text.size()) {
    const size_t bar = text.find('|', start);
    const size_t end = bar == std::string::npos ? text.size() : bar;
    parts.array().push_back(JsonValue::String(text.substr(start, end - start)));
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  return GetIndexList(key, parts);
}

Status SetInputOutputMode(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(int64_t mode, GetInt(key, v));
  if (mode < 0 || mode > 2) return KeyError(key, "must be 0 (both), 1 (inputs) or 2 (outputs)");
  c->dump_input = mode != 2;
  c->dump_output = mode != 1;
  return Status::Ok();
}

std::string MsprobeJsonOf(const DumpConfig& c) {
  const auto strings = [](const std::vector<std::string>& items) {
    JsonValue list = JsonValue::MakeArray();
    for (const std::string& item : items) list.array().push_back(JsonValue::String(item));
    return list;
  };
  const auto ints = [](const std::vector<int64_t>& items) {
    JsonValue list = JsonValue::MakeArray();
    for (int64_t item : items) list.array().push_back(JsonValue::Int(item));
    return list;
  };
  JsonValue root = JsonValue::MakeObject();
  const std::string task(c.task_name());
  root.Set("task", JsonValue::String(task));
  root.Set("dump_path", JsonValue::String(c.dump_path));
  root.Set("step", ints(c.steps));
  root.Set("rank", ints(c.ranks));
  root.Set("level", JsonValue::String(std::string(c.level_name())));
  root.Set("precision", JsonValue::String(c.precision == StatsPrecision::kHigh ? "high" : "low"));
  JsonValue section = JsonValue::MakeObject();
  section.Set("scope", strings(c.scope));
  section.Set("list", strings(c.list));
  JsonValue modes = JsonValue::MakeArray();
  if (c.dump_input && !c.dump_output) modes.array().push_back(JsonValue::String("input"));
  if (c.dump_output && !c.dump_input) modes.array().push_back(JsonValue::String("output"));
  if (c.dump_forward && !c.dump_backward) modes.array().push_back(JsonValue::String("forward"));
  if (c.dump_backward && !c.dump_forward) modes.array().push_back(JsonValue::String("backward"));
  if (modes.array().empty()) modes.array().push_back(JsonValue::String("all"));
  section.Set("data_mode", std::move(modes));
  if (c.summary_mode == SummaryMode::kMd5) section.Set("summary_mode", JsonValue::String("md5"));
  if (c.task == DumpTask::kOverflowCheck) {
    section.Set("overflow_nums", JsonValue::Int(c.overflow_nums));
  }
  if (c.task != DumpTask::kStatistics) {
    section.Set("file_format",
                JsonValue::String(c.file_format == TensorFileFormat::kNpy ? "npy" : "pt"));
  }
  if (!c.bench_path.empty()) {
    section.Set("bench_path", JsonValue::String(c.bench_path));
    section.Set("diff_nums", JsonValue::Int(c.diff_nums));
    section.Set("stop_at_first", JsonValue::Bool(c.stop_at_first));
  }
  // numprobe's own top-level keys, written only when not the default (msprobe would warn).
  if (c.tensor_durability == TensorDurability::kFile) {
    root.Set("tensor_durability", JsonValue::String("file"));
  }
  if (c.dump_layout == DumpLayout::kPacked) root.Set("dump_layout", JsonValue::String("packed"));
  root.Set(task, std::move(section));
  return ToJson(root, -1);
}

Status SetTensorDurability(std::string_view key, const JsonValue& v, bool /*apply*/,
                           DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(size_t i, GetChoice(key, v, {"step", "file"}));
  c->tensor_durability = static_cast<TensorDurability>(i);
  return Status::Ok();
}

Status SetDumpLayout(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(size_t i, GetChoice(key, v, {"files", "packed"}));
  c->dump_layout = static_cast<DumpLayout>(i);
  return Status::Ok();
}

Status SetScope(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(auto scope, GetStringList(key, v));
  if (!scope.empty() && scope.size() != 2) {
    return KeyError(key, "expected exactly two names (the start and the end of the range), got " +
                             std::to_string(scope.size()));
  }
  if (apply) c->scope = std::move(scope);
  return Status::Ok();
}

Status SetList(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(auto list, GetStringList(key, v));
  for (const std::string& item : list) {
    if (item.empty()) return KeyError(key, "contains an empty name");
  }
  if (apply) c->list = std::move(list);
  return Status::Ok();
}

Status SetTensorFileFormat(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(size_t i, GetChoice(key, v, {"pt", "npy", "bin"}));
  if (!apply) return Status::Ok();
  if (i == 2) {
    AddKeyWarning(key, "bin: numprobe writes .npy tensor files instead of MindSpore's .bin", c);
    i = 1;
  }
  c->file_format = static_cast<TensorFileFormat>(i);
  return Status::Ok();
}

Status SetDumpPath(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(c->dump_path, GetString(key, v));
  if (c->dump_path.empty()) return KeyError(key, "must not be empty");
  return Status::Ok();
}

Status SetRank(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(c->ranks, GetIndexList(key, v));
  return Status::Ok();
}

Status SetLevel(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(size_t i, GetChoice(key, v, {"L0", "L1", "mix", "L2", "debug"}));
  c->level = static_cast<DumpLevel>(i);
  return Status::Ok();
}

Status SetBenchPath(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(std::string path, GetString(key, v));
  if (path.empty()) return KeyError(key, "must name the golden dump (a folder or its dump.json)");
  if (apply) c->bench_path = std::move(path);
  return Status::Ok();
}

Result<int64_t> GetCountOrUnlimited(std::string_view key, const JsonValue& v) {
  NUMPROBE_ASSIGN_OR_RETURN(int64_t n, GetInt(key, v));
  if (n < 1 && n != -1) return KeyError(key, "must be a positive count or -1 (unlimited)");
  return n;
}

Status SetDiffNums(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(int64_t n, GetCountOrUnlimited(key, v));
  if (apply) c->diff_nums = n;
  return Status::Ok();
}

Status SetStopAtFirst(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(bool stop, GetBool(key, v));
  if (apply) c->stop_at_first = stop;
  return Status::Ok();
}

Status CheckBool(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* /*c*/) {
  return GetBool(key, v).status();
}

Status CheckString(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* /*c*/) {
  return GetString(key, v).status();
}

Status CheckInt(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* /*c*/) {
  return GetInt(key, v).status();
}

Status CheckStringList(std::string_view key, const JsonValue& v, bool /*apply*/,
                       DumpConfig* /*c*/) {
  return GetStringList(key, v).status();
}

Status CheckList(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* /*c*/) {
  if (!v.is_array()) return KeyError(key, "expected a list, got " + KindName(v));
  return Status::Ok();
}

Status CheckAny(std::string_view /*key*/, const JsonValue& /*v*/, bool /*apply*/,
                DumpConfig* /*c*/) {
  return Status::Ok();
}

}  // namespace numprobe::config_detail
