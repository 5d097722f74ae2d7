// MindSpore's native dump config (the dump_config.json MINDSPORE_DUMP_CONFIG names), read as a
// capture config with the same meaning where numprobe has one: path, iteration ("0|5-8" or
// "all"), saved_data, input_output, kernels, op_debug_mode 3 (overflow operators only) with
// overflow_number, and e2e_dump_settings' device_stat_precision_mode. The other documented keys
// are accepted with a warning saying what numprobe does instead. numprobe writes msprobe's dump
// tree (step{N}/rank{R}/dump.json ...), which numprobe and msprobe compare; not MindSpore's
// rank_{id}/{net}/{graph}/{iteration}/ layout, which numprobe reads (src/mindspore).
#include <array>
#include <cstdlib>
#include <string>

#include "numprobe/json_value.h"

#include "capture/config_keys.h"

namespace numprobe::config_detail {
namespace {

Status SetPath(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(c->dump_path, GetString(key, v));
  return Status::Ok();
}

// "0|5-8|100-120" or "all".
Status SetIteration(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(c->steps, GetStepSelection(key, v));
  return Status::Ok();
}

Status SetSavedData(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(size_t i, GetChoice(key, v, {"tensor", "statistic", "full"}));
  if (c->task != DumpTask::kOverflowCheck) {
    c->task = i == 1 ? DumpTask::kStatistics : DumpTask::kTensor;
  }
  return Status::Ok();
}

Status SetKernels(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(c->list, GetStringList(key, v));
  for (const std::string& k : c->list) {
    if (k.rfind("name-regex(", 0) == 0) {
      AddKeyWarning(
          key,
          "numprobe matches name-regex(...) entries as plain substrings of API names, not "
          "as regular expressions",
          c);
    }
  }
  return Status::Ok();
}

Status SetOpDebugMode(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(int64_t mode, GetInt(key, v));
  if (mode < 0 || mode > 4) return KeyError(key, "must be 0, 1, 2, 3 or 4");
  if (mode == 1 || mode == 2 || mode == 3) {
    c->task = DumpTask::kOverflowCheck;
    c->requested_task = "overflow_check";
    if (mode != 3) {
      AddKeyWarning(key,
                    "AI Core / Atomic overflow modes: numprobe checks every API's outputs for "
                    "NaN/Inf instead",
                    c);
    }
  } else if (mode == 4) {
    AddKeyWarning(key, "4 (exception dump) is not captured; numprobe dumps as configured", c);
  }
  return Status::Ok();
}

Status SetOverflowNumber(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(int64_t n, GetInt(key, v));
  if (n < 0) return KeyError(key, "must be 0 (unlimited) or a positive count");
  c->overflow_nums = n == 0 ? -1 : n;
  return Status::Ok();
}

Status SetFileFormat(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(size_t i, GetChoice(key, v, {"npy", "bin"}));
  if (i == 1) AddKeyWarning(key, "bin: numprobe writes .npy tensor files", c);
  c->file_format = TensorFileFormat::kNpy;
  return Status::Ok();
}

Status SetStatPrecision(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(size_t i, GetChoice(key, v, {"high", "low"}));
  c->precision = i == 0 ? StatsPrecision::kHigh : StatsPrecision::kLow;
  return Status::Ok();
}

Status CheckDumpMode(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(int64_t mode, GetInt(key, v));
  if (mode < 0 || mode > 2) return KeyError(key, "must be 0 (all), 1 (kernels) or 2 (set_dump)");
  if (mode == 2) {
    AddKeyWarning(key,
                  "2 (ops marked with set_dump) is not supported; numprobe dumps every API unless "
                  "kernels names some",
                  c);
  }
  return Status::Ok();
}

Status CheckStatCalcMode(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig*) {
  return GetChoice(key, v, {"host", "device"}).status();
}

constexpr std::array<ConfigKey, 14> kCommonKeys = {{
    {"op_debug_mode", &SetOpDebugMode, ""},
    {"dump_mode", &CheckDumpMode, ""},
    {"path", &SetPath, ""},
    {"net_name", &CheckString,
     "numprobe writes msprobe's dump tree (step{N}/rank{R}/), which has no net_name level"},
    {"iteration", &SetIteration, ""},
    {"saved_data", &SetSavedData, ""},
    {"input_output", &SetInputOutputMode, ""},
    {"kernels", &SetKernels, ""},
    {"support_device", &CheckList, "numprobe dumps every device; select ranks with msprobe's rank"},
    {"statistic_category", &CheckStringList,
     "numprobe records Max, Min, Mean and Norm for every tensor"},
    {"overflow_number", &SetOverflowNumber, ""},
    {"initial_iteration", &CheckInt, "numprobe numbers steps from 0"},
    {"file_format", &SetFileFormat, ""},
    {"sample_mode", &CheckInt, "numprobe dumps whole tensors, not samples"},
}};

constexpr std::array<ConfigKey, 7> kE2eKeys = {{
    {"enable", &CheckBool,
     "numprobe captures the same way whether MindSpore would dump synchronously or not"},
    {"trans_flag", &CheckBool, "numprobe dumps tensors in the framework's own layout"},
    {"stat_calc_mode", &CheckStatCalcMode, "statistics are computed where numprobe's kernels run"},
    {"device_stat_precision_mode", &SetStatPrecision, ""},
    {"sample_mode", &CheckInt, "numprobe dumps whole tensors, not samples"},
    {"sample_num", &CheckInt, "numprobe dumps whole tensors, not samples"},
    {"save_kernel_args", &CheckBool, "numprobe does not save kernel arguments"},
}};

constexpr std::array<ConfigKey, 2> kRootKeys = {{
    {"common_dump_settings", &ApplySection<kCommonKeys>, ""},
    {"e2e_dump_settings", &ApplySection<kE2eKeys>, ""},
}};

}  // namespace

Result<DumpConfig> ParseMindSporeDumpConfig(const JsonValue& root) {
  DumpConfig config;
  config.level = DumpLevel::kL1;
  config.task = DumpTask::kTensor;  // saved_data's default
  config.file_format = TensorFileFormat::kNpy;
  NUMPROBE_RETURN_IF_ERROR(ApplyConfigKeys(kRootKeys, "", root, true, &config));
  if (config.dump_path.empty()) {
    // MindSpore's rule for an empty path.
    const char* diag = std::getenv("MS_DIAGNOSTIC_DATA_PATH");
    if (diag == nullptr || *diag == '\0') {
      return KeyError("common_dump_settings.path",
                      "is empty and MS_DIAGNOSTIC_DATA_PATH is not set");
    }
    config.dump_path = std::string(diag) + "/debug_dump";
  }
  config.requested_task = std::string(config.task_name());
  AddKeyWarning("common_dump_settings",
                "MindSpore dump config read: numprobe dumps framework APIs (level L1) into "
                "msprobe's dump tree, not graph kernels into rank_{id}/{net}/{graph}/{iteration}/",
                &config);
  config.source_json = MsprobeJsonOf(config);
  NUMPROBE_RETURN_IF_ERROR(config.Validate());
  return config;
}

}  // namespace numprobe::config_detail
