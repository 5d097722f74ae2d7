// The closed-loop config dialect: one file describes the whole debugging loop, in four sections
//   dump            dump_path, dump_step ("0|1|5-8" / "all"), dump_mode (tensor / statistics /
//                   md5), dump_layers (msprobe's list), dump_input_output (0 both, 1 inputs,
//                   2 outputs), and numprobe's level, rank, scope, file_format, and the
//                   incremental dump's bench_path, diff_nums, stop_at_first, and the tensor
//                   files' tensor_durability and dump_layout
//   overflow_check  enable, check_step: the first NaN/Inf output is reported when it happens
//   compare         enable, base_path (the baseline's dump tree), metrics (short names)
//   config_check    enable, base_config (the baseline's config-check snapshot)
// The dump section becomes the msprobe config with the same meaning (source_json, so that
// PrecisionDebugger's keyword overrides work as with msprobe's dialect); the other sections go to
// DumpConfig::loop. docs/config-dialect.md maps every key to msprobe's.
#include <array>
#include <string>

#include "numprobe/compare.h"
#include "numprobe/json_value.h"

#include "capture/config_keys.h"

namespace numprobe::config_detail {
namespace {

// --- dump

// "0|1|5-8" or "all" as MindSpore writes it; msprobe's step list ([0, "5-8"]) is read too.
Result<std::vector<int64_t>> GetSteps(std::string_view key, const JsonValue& v) {
  if (v.is_array()) return GetIndexList(key, v);
  if (v.kind() == JsonValue::Kind::kInt) return GetIndexList(key, JsonValue::MakeArray({v}));
  if (v.kind() != JsonValue::Kind::kString) {
    return KeyError(key, "expected \"all\", steps like \"0|1|5-8\" or a list, got " + KindName(v));
  }
  return GetStepSelection(key, v);
}

Status SetDumpStep(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(c->steps, GetSteps(key, v));
  return Status::Ok();
}

Status SetDumpMode(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(size_t i, GetChoice(key, v, {"tensor", "statistics", "md5"}));
  c->task = i == 0 ? DumpTask::kTensor : DumpTask::kStatistics;
  c->summary_mode = i == 2 ? SummaryMode::kMd5 : SummaryMode::kStatistics;
  return Status::Ok();
}

constexpr std::array<ConfigKey, 14> kDumpKeys = {{
    {"dump_path", &SetDumpPath, ""},
    {"dump_step", &SetDumpStep, ""},
    {"dump_mode", &SetDumpMode, ""},
    {"dump_layers", &SetList, ""},
    {"dump_input_output", &SetInputOutputMode, ""},
    {"level", &SetLevel, ""},
    {"rank", &SetRank, ""},
    {"scope", &SetScope, ""},
    {"file_format", &SetTensorFileFormat, ""},
    {"bench_path", &SetBenchPath, ""},
    {"diff_nums", &SetDiffNums, ""},
    {"stop_at_first", &SetStopAtFirst, ""},
    {"tensor_durability", &SetTensorDurability, ""},
    {"dump_layout", &SetDumpLayout, ""},
}};

// --- overflow_check

Status SetOverflowEnable(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(c->loop.overflow_check, GetBool(key, v));
  return Status::Ok();
}

Status SetCheckStep(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(c->loop.check_steps, GetSteps(key, v));
  return Status::Ok();
}

constexpr std::array<ConfigKey, 2> kOverflowKeys = {{
    {"enable", &SetOverflowEnable, ""},
    {"check_step", &SetCheckStep, ""},
}};

// --- compare

Status SetCompareEnable(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(c->loop.compare, GetBool(key, v));
  return Status::Ok();
}

Status SetBasePath(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(c->loop.compare_base, GetString(key, v));
  if (c->loop.compare_base.empty()) return KeyError(key, "must not be empty");
  return Status::Ok();
}

Status SetMetrics(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(std::vector<std::string> metrics, GetStringList(key, v));
  std::vector<std::string_view> known;
  for (const CompareMetricName& m : kCompareMetricNames) known.push_back(m.name);
  for (const std::string& name : metrics) {
    if (FindCompareMetric(name) == nullptr) {
      std::string all;
      for (std::string_view k : known) all += (all.empty() ? "" : ", ") + std::string(k);
      return KeyError(key, "'" + name + "' is not a metric" + DidYouMean(name, known) +
                               "; the metrics are " + all);
    }
  }
  c->loop.metrics = std::move(metrics);
  return Status::Ok();
}

constexpr std::array<ConfigKey, 3> kCompareKeys = {{
    {"enable", &SetCompareEnable, ""},
    {"base_path", &SetBasePath, ""},
    {"metrics", &SetMetrics, ""},
}};

// --- config_check

Status SetConfigCheckEnable(std::string_view key, const JsonValue& v, bool /*apply*/,
                            DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(c->loop.config_check, GetBool(key, v));
  return Status::Ok();
}

Status SetBaseConfig(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(c->loop.config_base, GetString(key, v));
  if (c->loop.config_base.empty()) return KeyError(key, "must not be empty");
  return Status::Ok();
}

constexpr std::array<ConfigKey, 2> kConfigCheckKeys = {{
    {"enable", &SetConfigCheckEnable, ""},
    {"base_config", &SetBaseConfig, ""},
}};

// --- the root

constexpr std::array<ConfigKey, 4> kRootKeys = {{
    {"dump", &ApplySection<kDumpKeys>, ""},
    {"overflow_check", &ApplySection<kOverflowKeys>, ""},
    {"compare", &ApplySection<kCompareKeys>, ""},
    {"config_check", &ApplySection<kConfigCheckKeys>, ""},
}};

// The metrics printed when compare.metrics is not given (the ones the dialect's users know).
constexpr std::array<std::string_view, 3> kDefaultMetrics = {"cosine", "mae", "relative"};

}  // namespace

bool IsClosedLoopConfig(const JsonValue& root) {
  if (root.Find("dump") != nullptr || root.Find("compare") != nullptr ||
      root.Find("config_check") != nullptr) {
    return true;
  }
  const JsonValue* overflow = root.Find("overflow_check");
  return overflow != nullptr && overflow->is_object() &&
         (overflow->Find("enable") != nullptr || overflow->Find("check_step") != nullptr);
}

Result<DumpConfig> ParseClosedLoopConfig(const JsonValue& root) {
  DumpConfig config;
  config.closed_loop_dialect = true;
  config.loop.metrics.assign(kDefaultMetrics.begin(), kDefaultMetrics.end());
  Status applied = ApplyConfigKeys(kRootKeys, "", root, true, &config);
  if (!applied.ok()) {
    return applied.WithContext(
        "closed-loop config (sections dump, overflow_check, compare, config_check)");
  }
  if (root.Find("dump") == nullptr) {
    return KeyError("dump", "is required: the section that names dump_path");
  }
  if (config.dump_path.empty()) return KeyError("dump.dump_path", "is required");
  if (config.loop.compare && config.loop.compare_base.empty()) {
    return KeyError("compare.base_path", "is required when compare.enable is true");
  }
  if (config.loop.config_check && config.loop.config_base.empty()) {
    return KeyError("config_check.base_config", "is required when config_check.enable is true");
  }
  config.requested_task = std::string(config.task_name());
  config.source_json = MsprobeJsonOf(config);
  NUMPROBE_RETURN_IF_ERROR(config.Validate());
  return config;
}

}  // namespace numprobe::config_detail
