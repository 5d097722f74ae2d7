// DumpConfig parsing: msprobe's config.json keys, each validated with a message naming the key.
#include "numprobe/dump_config.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <sstream>

#include "numprobe/json_value.h"

namespace numprobe {
namespace {

constexpr int64_t kMaxStepOrRank = 1'000'000;

Status KeyError(std::string_view key, std::string_view what) {
  return Status::InvalidArgument("config key '" + std::string(key) + "': " + std::string(what));
}

std::string KindName(const JsonValue& v) {
  switch (v.kind()) {
    case JsonValue::Kind::kNull:
      return "null";
    case JsonValue::Kind::kBool:
      return "a boolean";
    case JsonValue::Kind::kInt:
    case JsonValue::Kind::kDouble:
      return "a number";
    case JsonValue::Kind::kString:
      return "a string";
    case JsonValue::Kind::kArray:
      return "a list";
    case JsonValue::Kind::kObject:
      return "an object";
  }
  return "a value";
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

// One of `choices`, returned as its index.
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

Result<int64_t> ParseNonNegative(std::string_view key, std::string_view text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto res = std::from_chars(text.data(), end, value);
  if (res.ec != std::errc() || res.ptr != end || text.empty()) {
    return KeyError(key, "'" + std::string(text) + "' is not an integer or a range like \"4-6\"");
  }
  return value;
}

// rank / step: a list of ints, "3" or inclusive ranges "4-6"; de-duplicated and sorted.
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

constexpr std::array<std::string_view, 3> kTaskNames = {"statistics", "tensor", "overflow_check"};
constexpr std::array<std::string_view, 5> kLevelNames = {"L0", "L1", "mix", "L2", "debug"};

Status ParseSection(std::string_view section_name, const JsonValue& section, bool is_current,
                    DumpConfig* config) {
  if (!section.is_object()) {
    return KeyError(section_name, "expected an object, got " + KindName(section));
  }
  for (const auto& [key, value] : section.object()) {
    const std::string full = std::string(section_name) + "." + key;
    const bool apply = is_current;
    if (key == "scope") {
      NUMPROBE_ASSIGN_OR_RETURN(auto scope, GetStringList(full, value));
      if (!scope.empty() && scope.size() != 2) {
        return KeyError(full,
                        "expected exactly two names (the start and the end of the range), got " +
                            std::to_string(scope.size()));
      }
      if (apply) config->scope = std::move(scope);
    } else if (key == "list") {
      NUMPROBE_ASSIGN_OR_RETURN(auto list, GetStringList(full, value));
      for (const std::string& item : list) {
        if (item.empty()) return KeyError(full, "contains an empty name");
      }
      if (apply) config->list = std::move(list);
    } else if (key == "tensor_list" && section_name == "statistics") {
      NUMPROBE_ASSIGN_OR_RETURN(auto list, GetStringList(full, value));
      if (apply) config->tensor_list = std::move(list);
    } else if (key == "data_mode") {
      NUMPROBE_ASSIGN_OR_RETURN(auto modes, GetStringList(full, value));
      if (modes.empty()) return KeyError(full, "must not be empty");
      bool all = false, fwd = false, bwd = false, in = false, out = false;
      for (const std::string& m : modes) {
        if (m == "all") {
          all = true;
        } else if (m == "forward") {
          fwd = true;
        } else if (m == "backward") {
          bwd = true;
        } else if (m == "input") {
          in = true;
        } else if (m == "output") {
          out = true;
        } else {
          return KeyError(full, "'" + m + "' is not one of all, forward, backward, input, output");
        }
      }
      if (all) fwd = bwd = in = out = true;
      // Naming only a direction keeps both sides and vice versa (msprobe's rule).
      if (!fwd && !bwd) fwd = bwd = true;
      if (!in && !out) in = out = true;
      if (apply) {
        config->dump_forward = fwd;
        config->dump_backward = bwd;
        config->dump_input = in;
        config->dump_output = out;
      }
    } else if (key == "summary_mode" && section_name != "overflow_check") {
      NUMPROBE_ASSIGN_OR_RETURN(size_t i, GetChoice(full, value, {"statistics", "md5"}));
      if (apply) config->summary_mode = static_cast<SummaryMode>(i);
    } else if (key == "overflow_nums" && section_name == "overflow_check") {
      NUMPROBE_ASSIGN_OR_RETURN(int64_t n, GetInt(full, value));
      if (n < 1 && n != -1) return KeyError(full, "must be a positive count or -1 (unlimited)");
      if (apply) config->overflow_nums = n;
    } else if (key == "check_mode" && section_name == "overflow_check") {
      NUMPROBE_ASSIGN_OR_RETURN(size_t i, GetChoice(full, value, {"all"}));
      (void)i;
    } else if (key == "file_format" && section_name == "tensor") {
      NUMPROBE_ASSIGN_OR_RETURN(size_t i, GetChoice(full, value, {"pt", "npy"}));
      if (apply) config->file_format = static_cast<TensorFileFormat>(i);
    } else {
      return KeyError(full, "unknown key");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<DumpConfig> DumpConfig::Parse(std::string_view json_text) {
  auto parsed = ParseJson(json_text);
  if (!parsed)
    return Status::InvalidArgument("config is not valid JSON: " + parsed.error().message());
  const JsonValue& root = *parsed;
  if (!root.is_object()) return Status::InvalidArgument("config must be a JSON object");
  DumpConfig config;
  config.source_json = ToJson(root, -1);
  // The task decides which section applies, so read it first.
  if (const JsonValue* task = root.Find("task")) {
    NUMPROBE_ASSIGN_OR_RETURN(size_t i,
                              GetChoice("task", *task, {"statistics", "tensor", "overflow_check"}));
    config.task = static_cast<DumpTask>(i);
  }
  bool has_dump_path = false;
  for (const auto& [key, value] : root.object()) {
    if (key == "task") continue;
    if (key == "dump_path") {
      NUMPROBE_ASSIGN_OR_RETURN(config.dump_path, GetString(key, value));
      if (config.dump_path.empty()) return KeyError(key, "must not be empty");
      has_dump_path = true;
    } else if (key == "rank") {
      NUMPROBE_ASSIGN_OR_RETURN(config.ranks, GetIndexList(key, value));
    } else if (key == "step") {
      NUMPROBE_ASSIGN_OR_RETURN(config.steps, GetIndexList(key, value));
    } else if (key == "level") {
      NUMPROBE_ASSIGN_OR_RETURN(size_t i,
                                GetChoice(key, value, {"L0", "L1", "mix", "L2", "debug"}));
      config.level = static_cast<DumpLevel>(i);
    } else if (key == "async_dump") {
      NUMPROBE_ASSIGN_OR_RETURN(config.async_dump, GetBool(key, value));
    } else if (key == "extra_info") {
      NUMPROBE_ASSIGN_OR_RETURN(config.extra_info, GetBool(key, value));
    } else if (key == "is_deterministic") {
      NUMPROBE_ASSIGN_OR_RETURN(config.is_deterministic, GetBool(key, value));
    } else if (key == "seed") {
      NUMPROBE_ASSIGN_OR_RETURN(config.seed, GetInt(key, value));
      if (config.seed < 0 || config.seed > 0xFFFFFFFFll)
        return KeyError(key, "must be in 0..2^32-1");
    } else if (key == "precision") {
      NUMPROBE_ASSIGN_OR_RETURN(size_t i, GetChoice(key, value, {"low", "high"}));
      config.precision = static_cast<StatsPrecision>(i);
    } else if (key == "risk_level") {
      NUMPROBE_ASSIGN_OR_RETURN(size_t i, GetChoice(key, value, {"ALL", "CORE", "FOCUS"}));
      config.risk_level = static_cast<RiskLevel>(i);
    } else if (key == "framework") {
      NUMPROBE_ASSIGN_OR_RETURN(size_t i, GetChoice(key, value, {"pytorch"}));
      (void)i;
    } else if (key == "statistics" || key == "tensor" || key == "overflow_check") {
      const bool is_current = key == kTaskNames[static_cast<size_t>(config.task)];
      NUMPROBE_RETURN_IF_ERROR(ParseSection(key, value, is_current, &config));
    } else {
      return KeyError(key, "unknown key");
    }
  }
  if (!has_dump_path) return KeyError("dump_path", "is required");
  NUMPROBE_RETURN_IF_ERROR(config.Validate());
  return config;
}

Result<DumpConfig> DumpConfig::Load(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return Status::NotFound(path.string() + ": config file not found");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path.string() + ": cannot open config file");
  std::ostringstream text;
  text << in.rdbuf();
  auto config = Parse(text.str());
  if (!config) return config.error().WithContext(path.string());
  return config;
}

Status DumpConfig::Override(std::string_view key, std::string_view json_value) {
  auto value = ParseJson(json_value);
  if (!value) return KeyError(key, "value is not valid JSON");
  auto root = ParseJson(source_json);
  if (!root) return Status::Internal("stored config text does not parse");
  JsonValue updated = std::move(*root);
  updated.Set(std::string(key), std::move(*value));
  NUMPROBE_ASSIGN_OR_RETURN(DumpConfig parsed, Parse(ToJson(updated, -1)));
  *this = std::move(parsed);
  return Status::Ok();
}

std::string_view DumpConfig::task_name() const { return kTaskNames[static_cast<size_t>(task)]; }
std::string_view DumpConfig::level_name() const { return kLevelNames[static_cast<size_t>(level)]; }

bool DumpConfig::StepSelected(int64_t step) const {
  return steps.empty() || std::binary_search(steps.begin(), steps.end(), step);
}

bool DumpConfig::RankSelected(int64_t rank) const {
  return ranks.empty() || std::binary_search(ranks.begin(), ranks.end(), rank);
}

Status DumpConfig::Validate() const {
  if (async_dump && task == DumpTask::kTensor && list.empty()) {
    return KeyError("async_dump", "a tensor dump with async_dump needs tensor.list");
  }
  if (async_dump && summary_mode == SummaryMode::kMd5) {
    return KeyError("async_dump", "md5 summary_mode cannot be combined with async_dump");
  }
#ifndef NUMPROBE_WITH_ZLIB
  if (summary_mode == SummaryMode::kMd5) {
    return KeyError("summary_mode", "md5 needs numprobe built with zlib (NUMPROBE_WITH_ZLIB)");
  }
#endif
  return Status::Ok();
}

}  // namespace numprobe
