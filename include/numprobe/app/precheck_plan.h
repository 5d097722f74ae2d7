// The static pre-check of a planned precision (numprobe precheck --plan DTYPE DUMP): from one
// statistics run in fp32, what will break in fp16, bf16 or fp8 before anyone runs it there.
//   range      tensors whose largest magnitude overflows the target, or whose smallest non-zero
//              one flushes to zero or lands among its subnormals (scan's headroom, per tensor);
//   ops        precision-sensitive ops that would run in the target dtype: softmax, log_softmax,
//              layer/group/batch norm, exp, log, pow, cumsum/cumprod, long reductions, division
//              by values that reach zero (with autocast on, only those autocast leaves in the
//              low dtype are listed);
//   optimizer  settings that vanish in the dtype: an Adam eps below its smallest value, a
//              weight decay step below its resolution;
//   gradients  gradients that underflow the target while loss scaling is off.
// Each finding says what to do. The run's settings (optimizer, loss scaling, autocast) come from
// a small JSON file (PlanSettings) that numprobe.precheck.plan writes beside the dump it takes;
// without one, the optimizer checks are skipped and loss scaling counts as off.
#ifndef NUMPROBE_APP_PRECHECK_PLAN_H_
#define NUMPROBE_APP_PRECHECK_PLAN_H_

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/dtype.h"
#include "numprobe/enum_names.h"
#include "numprobe/result.h"

namespace numprobe {

// precheck_settings.json: {"optimizer": {"type": "AdamW", "lr": 1e-3, "eps": 1e-8,
// "weight_decay": 0.01}, "loss_scaling": false, "loss_scale": 65536, "autocast": true}; every key
// optional.
struct PlanSettings {
  std::string optimizer;  // "" when unknown
  std::optional<double> lr, eps, weight_decay;
  std::optional<bool> loss_scaling;
  std::optional<double> loss_scale;
  std::optional<bool> autocast;
};
inline constexpr std::string_view kPlanSettingsFile = "precheck_settings.json";
// kCorrupt for malformed JSON or a key of the wrong type.
Result<PlanSettings> ReadPlanSettings(const std::filesystem::path& path);

enum class PlanSeverity : uint8_t { kInfo, kWarning, kError };
inline constexpr EnumNameEntry<PlanSeverity> kPlanSeverityNames[] = {
    {PlanSeverity::kInfo, "info"},
    {PlanSeverity::kWarning, "warning"},
    {PlanSeverity::kError, "error"}};
constexpr const auto& EnumNameTable(PlanSeverity /*unused*/) { return kPlanSeverityNames; }

struct PlanFinding {
  PlanSeverity severity = PlanSeverity::kWarning;
  std::string kind;  // "overflow", "underflow", "subnormal", "sensitive_op", "optimizer",
                     // "gradient_underflow"
  std::string op;    // the dump entry ("Functional.softmax.0.forward"), "" for settings
  std::string tensor;
  std::string detail;  // what was measured
  std::string advice;  // what to do
  double value = 0;    // the number the finding is about (max |x|, eps, reduction length, ...)
};

struct PlanReport {
  DType target = DType::kF16;
  std::string dump;
  PlanSettings settings;
  bool settings_known = false;
  int64_t tensors = 0;                // tensors with a range verdict
  int64_t ops = 0;                    // forward API calls looked at
  std::vector<PlanFinding> findings;  // errors first, then warnings, then info; dump order within
  std::vector<std::string> warnings;
  int64_t Count(PlanSeverity severity) const;
};

// Plans `target` (fp16, bf16, fp8) for the dump at `path` (any layout numprobe scan reads).
// `settings` may be null (then kPlanSettingsFile beside the first dump.json is read if present).
Result<PlanReport> PlanPrecision(const std::filesystem::path& path, DType target,
                                 const PlanSettings* settings = nullptr);

// precheck_plan_{dtype}_{ts}.json and .csv in `dir`.
Status WritePlanReport(const PlanReport& report, const std::filesystem::path& dir,
                       std::string_view timestamp);

}  // namespace numprobe

#endif  // NUMPROBE_APP_PRECHECK_PLAN_H_
