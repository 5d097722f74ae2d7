// DumpConfig parsing: msprobe's config.json, every key of every documented version (8.x and v26)
// in one table per section: honoured, or accepted with a one-line warning saying what numprobe
// does instead; a key in no version is an error naming it with a "did you mean" hint.
#include "numprobe/dump_config.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>
#include <utility>

#include "numprobe/json_value.h"

#include "capture/config_keys.h"
#include "core/json.h"

namespace numprobe {
namespace {

using config_detail::AddKeyWarning;
using config_detail::ApplyConfigKeys;
using config_detail::ConfigKey;
using config_detail::GetBool;
using config_detail::GetChoice;
using config_detail::GetIndexList;
using config_detail::GetInt;
using config_detail::GetString;
using config_detail::GetStringList;
using config_detail::KeyError;
using config_detail::SetBenchPath;
using config_detail::SetDiffNums;
using config_detail::SetDumpLayout;
using config_detail::SetDumpPath;
using config_detail::SetLevel;
using config_detail::SetList;
using config_detail::SetRank;
using config_detail::SetScope;
using config_detail::SetStopAtFirst;
using config_detail::SetTensorDurability;
using config_detail::SetTensorFileFormat;

constexpr std::array<std::string_view, 3> kTaskNames = {"statistics", "tensor", "overflow_check"};
constexpr std::array<std::string_view, 5> kLevelNames = {"L0", "L1", "mix", "L2", "debug"};

// Every task of every documented msprobe version (8.x and v26), what numprobe captures for it,
// and, when that is not the task itself, what the warning says.
struct TaskSpec {
  std::string_view name;
  DumpTask runs_as;
  std::string_view instead;
};
constexpr std::array<TaskSpec, 11> kTasks = {{
    {"statistics", DumpTask::kStatistics, ""},
    {"tensor", DumpTask::kTensor, ""},
    {"overflow_check", DumpTask::kOverflowCheck, ""},
    {"acc_check", DumpTask::kStatistics,
     "msprobe's API accuracy pre-check does not run during capture; numprobe dumps statistics"},
    {"run_ut", DumpTask::kStatistics,
     "msprobe's API accuracy pre-check does not run during capture; numprobe dumps statistics"},
    {"nan_check", DumpTask::kOverflowCheck,
     "numprobe checks every API's outputs for NaN/Inf (overflow_check, unlimited) instead of "
     "reading the NPU's NaN/Inf register"},
    {"structure", DumpTask::kStatistics,
     "numprobe dumps statistics along with the structure (dump.json, stack.json, construct.json)"},
    {"exception_dump", DumpTask::kStatistics,
     "MindSpore's exception dump is not captured; numprobe dumps statistics"},
    {"diff_check", DumpTask::kStatistics,
     "numprobe dumps md5 checksums, judged live against bench_path when it is given (an "
     "incremental dump: docs/capture.md); without it, compare two dumps with numprobe compare"},
    {"free_benchmark", DumpTask::kStatistics,
     "numprobe does not re-run APIs on perturbed inputs; it dumps statistics"},
    {"grad_probe", DumpTask::kStatistics,
     "numprobe does not write grad_probe summaries; it dumps statistics (parameter gradients "
     "are parameters_grad entries at level L0 or mix)"},
}};

const TaskSpec* FindTask(std::string_view name) {
  for (const TaskSpec& t : kTasks) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// --- Handlers of the task sections' keys.

Status SetTensorList(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(auto list, GetStringList(key, v));
  if (apply) c->tensor_list = std::move(list);
  return Status::Ok();
}

Status SetDataMode(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(auto modes, GetStringList(key, v));
  if (modes.empty()) return KeyError(key, "must not be empty");
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
      return KeyError(key, "'" + m + "' is not one of all, forward, backward, input, output");
    }
  }
  if (all) fwd = bwd = in = out = true;
  // Naming only a direction keeps both sides and vice versa (msprobe's rule).
  if (!fwd && !bwd) fwd = bwd = true;
  if (!in && !out) in = out = true;
  if (apply) {
    c->dump_forward = fwd;
    c->dump_backward = bwd;
    c->dump_input = in;
    c->dump_output = out;
  }
  return Status::Ok();
}

Status SetSummaryMode(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(size_t i, GetChoice(key, v, {"statistics", "md5", "xor"}));
  if (!apply) return Status::Ok();
  if (i == 2) {
    AddKeyWarning(key,
                  "xor: numprobe writes the CRC-32 of md5 mode (with statistics) instead of a "
                  "64-bit XOR checksum",
                  c);
    i = 1;
  }
  c->summary_mode = static_cast<SummaryMode>(i);
  return Status::Ok();
}

Status SetOverflowNums(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(int64_t n, config_detail::GetCountOrUnlimited(key, v));
  if (apply) c->overflow_nums = n;
  return Status::Ok();
}

Status CheckCheckMode(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig*) {
  return GetChoice(key, v, {"all", "aicore", "atomic"}).status();
}

using config_detail::CheckAny;
using config_detail::CheckBool;
using config_detail::CheckInt;
using config_detail::CheckList;
using config_detail::CheckString;
using config_detail::CheckStringList;

constexpr std::string_view kNoSlice = "numprobe dumps whole tensors, not slices";
constexpr std::string_view kNoOnline =
    "numprobe has no online pre-check; the key is read and not used";

// Keys every task section takes (msprobe v26's BaseConfig reads them for every task).
constexpr std::array<ConfigKey, 8> kBaseSectionKeys = {{
    {"scope", &SetScope, ""},
    {"list", &SetList, ""},
    {"data_mode", &SetDataMode, ""},
    {"summary_mode", &SetSummaryMode, ""},
    {"slice", &CheckList, kNoSlice},
    {"request_id", &CheckString, kNoSlice},
    {"diff_nums", &SetDiffNums, ""},
    {"stop_at_first", &SetStopAtFirst, ""},  // numprobe's own (docs/capture.md)
}};

// The keys of each task's section beyond the base ones.
struct SectionSpec {
  std::string_view task;
  std::vector<ConfigKey> extra;
};

const std::vector<SectionSpec>& SectionSpecs() {
  static const std::vector<SectionSpec> kSpecs = {
      {"statistics",
       {{"tensor_list", &SetTensorList, ""},
        {"bench_path", &SetBenchPath, ""},
        {"device", &CheckString,
         "statistics are computed where numprobe's kernels run (MindSpore's device/host choice "
         "does not apply)"},
        {"precision", &CheckString,
         "numprobe takes the statistics precision from the top-level precision key"}}},
      {"tensor",
       {{"file_format", &SetTensorFileFormat, ""},
        {"bench_path", &SetBenchPath, ""},
        {"backward_input", &CheckStringList,
         "numprobe does not re-run backward APIs from saved inputs; it dumps what the run "
         "computes"},
        {"backward.input", &CheckStringList,
         "numprobe does not re-run backward APIs from saved inputs; it dumps what the run "
         "computes"},
        {"online_run_ut", &CheckBool, kNoOnline},
        {"online_run_ut_recompute", &CheckBool, kNoOnline},
        {"nfs_path", &CheckString, kNoOnline},
        {"host", &CheckString, kNoOnline},
        {"port", &CheckInt, kNoOnline},
        {"tls_path", &CheckString, kNoOnline}}},
      {"overflow_check",
       {{"overflow_nums", &SetOverflowNums, ""},
        {"overflow_num", &SetOverflowNums, ""},
        {"check_mode", &CheckCheckMode,
         "numprobe checks API outputs for NaN/Inf; AI Core / Atomic kernel overflow modes do not "
         "apply"},
        {"file_format", &SetTensorFileFormat, ""}}},
      {"acc_check",
       {{"white_list", &CheckStringList,
         "numprobe's capture does not use the pre-check's API lists"},
        {"black_list", &CheckStringList,
         "numprobe's capture does not use the pre-check's API lists"},
        {"error_data_path", &CheckString, "numprobe does not run the pre-check during capture"},
        {"is_online", &CheckBool, kNoOnline},
        {"nfs_path", &CheckString, kNoOnline},
        {"host", &CheckString, kNoOnline},
        {"port", &CheckInt, kNoOnline},
        {"rank_list", &CheckList, kNoOnline},
        {"tls_path", &CheckString, kNoOnline},
        {"is_benchmark_device", &CheckBool, kNoOnline}}},
      {"nan_check", {{"tensor_list", &SetTensorList, ""}}},
      {"structure", {}},
      {"exception_dump", {}},
      {"diff_check", {{"bench_path", &SetBenchPath, ""}}},
      {"free_benchmark",
       {{"fuzz_device", &CheckString, "free_benchmark does not run in numprobe"},
        {"pert_mode", &CheckString, "free_benchmark does not run in numprobe"},
        {"handler_type", &CheckString, "free_benchmark does not run in numprobe"},
        {"fuzz_level", &CheckString, "free_benchmark does not run in numprobe"},
        {"fuzz_stage", &CheckString, "free_benchmark does not run in numprobe"},
        {"if_preheat", &CheckAny, "free_benchmark does not run in numprobe"},
        {"preheat_step", &CheckInt, "free_benchmark does not run in numprobe"},
        {"max_sample", &CheckInt, "free_benchmark does not run in numprobe"}}},
      {"grad_probe",
       {{"grad_level", &CheckString, "grad_probe does not run in numprobe"},
        {"param_list", &CheckStringList, "grad_probe does not run in numprobe"},
        {"bounds", &CheckList, "grad_probe does not run in numprobe"}}},
  };
  return kSpecs;
}

// The whole key table of a task's section (run_ut is acc_check's 8.x name).
const std::vector<ConfigKey>* SectionKeys(std::string_view task) {
  static const auto kTables = [] {
    std::vector<std::pair<std::string_view, std::vector<ConfigKey>>> tables;
    for (const SectionSpec& spec : SectionSpecs()) {
      std::vector<ConfigKey> keys(kBaseSectionKeys.begin(), kBaseSectionKeys.end());
      for (const ConfigKey& k : spec.extra) {
        auto same = std::find_if(keys.begin(), keys.end(),
                                 [&](const ConfigKey& b) { return b.name == k.name; });
        if (same != keys.end()) {
          *same = k;
        } else {
          keys.push_back(k);
        }
      }
      tables.emplace_back(spec.task, keys);
      if (spec.task == "acc_check") tables.emplace_back("run_ut", std::move(keys));
    }
    return tables;
  }();
  for (const auto& entry : kTables) {
    if (entry.first == task) return &entry.second;
  }
  return nullptr;
}

// --- Handlers of the top-level keys.

Status SetStep(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(c->steps, GetIndexList(key, v));
  return Status::Ok();
}

Status SetAsyncDump(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(c->async_dump, GetBool(key, v));
  return Status::Ok();
}

Status SetExtraInfo(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(c->extra_info, GetBool(key, v));
  return Status::Ok();
}

Status SetDeterministic(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(c->is_deterministic, GetBool(key, v));
  return Status::Ok();
}

Status SetSeed(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(c->seed, GetInt(key, v));
  if (c->seed < 0 || c->seed > 0xFFFFFFFFll) return KeyError(key, "must be in 0..2^32-1");
  return Status::Ok();
}

Status SetPrecision(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(size_t i, GetChoice(key, v, {"low", "high"}));
  c->precision = static_cast<StatsPrecision>(i);
  return Status::Ok();
}

Status SetRiskLevel(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* c) {
  NUMPROBE_ASSIGN_OR_RETURN(size_t i, GetChoice(key, v, {"ALL", "CORE", "FOCUS"}));
  c->risk_level = static_cast<RiskLevel>(i);
  return Status::Ok();
}

Status CheckFramework(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig*) {
  return GetChoice(key, v, {"pytorch"}).status();
}

Status SetTask(std::string_view key, const JsonValue& v, bool /*apply*/, DumpConfig* /*c*/) {
  return GetString(key, v).status();  // read before the other keys (see Parse)
}

// A task section: validated always, applied when it is the section of the requested task.
Status SetSection(std::string_view key, const JsonValue& v, bool apply, DumpConfig* c) {
  const std::vector<ConfigKey>* keys = SectionKeys(key);
  return ApplyConfigKeys(*keys, key, v, apply && key == c->requested_task, c);
}

constexpr std::array<ConfigKey, 33> kTopLevelKeys = {{
    {"task", &SetTask, ""},
    {"dump_path", &SetDumpPath, ""},
    {"rank", &SetRank, ""},
    {"step", &SetStep, ""},
    {"level", &SetLevel, ""},
    {"async_dump", &SetAsyncDump, ""},
    {"enable_async_dump", &SetAsyncDump, ""},
    {"extra_info", &SetExtraInfo, ""},
    {"is_deterministic", &SetDeterministic, ""},
    {"seed", &SetSeed, ""},
    {"precision", &SetPrecision, ""},
    {"risk_level", &SetRiskLevel, ""},
    {"tensor_durability", &SetTensorDurability, ""},  // numprobe's own (docs/capture.md)
    {"dump_layout", &SetDumpLayout, ""},              // numprobe's own (docs/capture.md)
    {"framework", &CheckFramework, ""},
    {"enable_dataloader", &CheckBool,
     "numprobe does not end the run after the configured steps; steps advance on "
     "optimizer.step() or debugger.step()"},
    {"acl_config", &CheckString,
     "level L2 dumps through numprobe's aten hooks; the ACL dump config is not used"},
    {"dump_enable", &CheckBool,
     "numprobe reads the config once at start and does not switch dumping on or off at run "
     "time; use debugger.start() and stop()"},
    {"custom_op_namespaces", &CheckStringList, "numprobe does not wrap custom operator namespaces"},
    {"statistics", &SetSection, ""},
    {"tensor", &SetSection, ""},
    {"overflow_check", &SetSection, ""},
    {"acc_check", &SetSection, ""},
    {"run_ut", &SetSection, ""},
    {"nan_check", &SetSection, ""},
    {"structure", &SetSection, ""},
    {"exception_dump", &SetSection, ""},
    {"diff_check", &SetSection, ""},
    {"free_benchmark", &SetSection, ""},
    {"grad_probe", &SetSection, ""},
    // Online pre-check keys some 8.x configs carry at the top level.
    {"is_online", &CheckBool, kNoOnline},
    {"nfs_path", &CheckString, kNoOnline},
    {"tls_path", &CheckString, kNoOnline},
}};

}  // namespace

Result<DumpConfig> DumpConfig::Parse(std::string_view json_text) {
  auto parsed = ParseJson(json_text, kPythonJson);
  if (!parsed)
    return Status::InvalidArgument("config is not valid JSON: " + parsed.error().message());
  const JsonValue& root = *parsed;
  if (!root.is_object()) return Status::InvalidArgument("config must be a JSON object");
  if (root.Find("common_dump_settings") != nullptr) {
    return config_detail::ParseMindSporeDumpConfig(root);
  }
  if (config_detail::IsClosedLoopConfig(root)) return config_detail::ParseClosedLoopConfig(root);
  DumpConfig config;
  config.source_json = ToJson(root, -1);
  // The task decides which section applies, so read it first.
  if (const JsonValue* task = root.Find("task")) {
    NUMPROBE_ASSIGN_OR_RETURN(std::string name, GetString("task", *task));
    const TaskSpec* spec = FindTask(name);
    if (spec == nullptr) {
      std::vector<std::string_view> known;
      for (const TaskSpec& t : kTasks) known.push_back(t.name);
      std::string all;
      for (std::string_view t : known) all += (all.empty() ? "" : ", ") + std::string(t);
      return KeyError(
          "task", "'" + name + "' is not one of " + all + config_detail::DidYouMean(name, known));
    }
    config.requested_task = spec->name;
    config.task = spec->runs_as;
    if (!spec->instead.empty())
      AddKeyWarning("task", name + ": " + std::string(spec->instead), &config);
    if (spec->name == "nan_check") config.overflow_nums = -1;
    if (spec->name == "diff_check") config.summary_mode = SummaryMode::kMd5;
  }
  NUMPROBE_RETURN_IF_ERROR(ApplyConfigKeys(kTopLevelKeys, "", root, true, &config));
  if (config.dump_path.empty()) return KeyError("dump_path", "is required");
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
  auto value = ParseJson(json_value, kPythonJson);
  if (!value) return KeyError(key, "value is not valid JSON");
  auto root = ParseJson(source_json, kPythonJson);
  if (!root) return Status::Internal("stored config text does not parse");
  JsonValue updated = std::move(*root);
  updated.Set(std::string(key), std::move(*value));
  NUMPROBE_ASSIGN_OR_RETURN(DumpConfig parsed, Parse(ToJson(updated, -1)));
  for (std::string& w : warnings) {  // what the first parse warned about still holds
    if (std::find(parsed.warnings.begin(), parsed.warnings.end(), w) == parsed.warnings.end()) {
      parsed.warnings.push_back(std::move(w));
    }
  }
  // A closed-loop config's source_json is its dump section in msprobe's keys: its other sections
  // stay as they were.
  parsed.closed_loop_dialect = closed_loop_dialect;
  parsed.loop = std::move(loop);
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
  // msprobe also refuses async_dump for a tensor dump without `list` and for md5; numprobe takes
  // both (host copies on a copy stream, files and md5s at the step's end: docs/capture.md).
  if (!bench_path.empty() && task == DumpTask::kOverflowCheck) {
    return KeyError("bench_path", "an incremental dump needs task statistics or tensor");
  }
  if (!bench_path.empty() && async_dump) {
    return KeyError("bench_path",
                    "an incremental dump judges each record as it is made; async_dump defers "
                    "the statistics it needs");
  }
  return Status::Ok();
}

}  // namespace numprobe
