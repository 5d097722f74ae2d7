// msprobe's precision standards as data: which API is judged by which standard, its monitoring
// level, and the per-dtype constants. The API classes are msprobe's api_precision_standard.yaml,
// the levels its operator monitoring levels, the constants those its accuracy-checker
// documentation gives (small value 2^-14 / 2^-11 / 2^-8 with absolute error 2^-30 / 2^-16 / 2^-16
// for f32 / f16 / bf16) and its StandardConfig (relative tolerances, ULP parameters, minimum
// errors of precheck-compare ratios).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string_view>

#include "numprobe/app/precheck.h"

namespace numprobe {
namespace {

constexpr std::string_view kAbsoluteThreshold[] = {
    "mul",     "mul_",       "__mul__",     "__imul__", "__rmul__",   "add",
    "add_",    "__add__",    "__iadd__",    "__radd__", "div",        "div_",
    "__div__", "__idiv__",   "divide",      "divide_",  "leaky_relu", "leaky_relu_",
    "prelu",   "reciprocal", "reciprocal_", "rsqrt",    "rsqrt_",     "square",
    "square_", "sub",        "sub_",        "rsub",     "__isub__",   "__sub__"};

constexpr std::string_view kBinaryConsistency[] = {
    "abs",           "abs_",           "absolute",    "absolute_",   "argmin",       "bitwise_and",
    "bitwise_and_",  "broadcast_to",   "ceil",        "ceil_",       "equal",        "fill_",
    "flatten",       "floor",          "floor_",      "gather",      "greater",      "greater_",
    "greater_equal", "greater_equal_", "histc",       "isfinite",    "isnan",        "less",
    "less_",         "less_equal",     "less_equal_", "logical_and", "logical_and_", "logical_not",
    "logical_not_",  "logical_or",     "logical_or_", "masked_fill", "masked_fill_", "max_pool3d",
    "maximum",       "minimum",        "neg",         "neg_",        "nonzero",      "not_equal",
    "not_equal_",    "one_hot",        "pad",         "relu",        "reshape",      "round",
    "round_",        "select",         "sign",        "sign_",       "sort",         "tile",
    "topk",          "transpose",      "transpose_",  "tril",        "tril_",        "triu",
    "triu_",         "type_as"};

constexpr std::string_view kUlp[] = {"__matmul__", "addbmm",   "addbmm_",  "addmm", "addmm_",
                                     "baddbmm",    "baddbmm_", "bilinear", "bmm",   "chain_matmul",
                                     "hspmm",      "linear",   "matmul",   "mm",    "mv",
                                     "smm",        "sspaddmm"};

constexpr std::string_view kThousandth[] = {"conv1d", "conv2d"};

constexpr std::string_view kLevel1[] = {"embedding", "npu_fusion_attention_grad",
                                        "npu_fusion_attention", "scatter_", "scatter_add_"};
constexpr std::string_view kLevel2[] = {"addmm",
                                        "npu_cross_entropy_loss",
                                        "npu_cross_entropy_loss_backward",
                                        "GELU",
                                        "layer_norm",
                                        "matmul",
                                        "mm",
                                        "index",
                                        "one_hot",
                                        "sum",
                                        "npu_rms_norm",
                                        "npu_rms_norm_backward",
                                        "nonzero"};

template <size_t N>
bool In(const std::string_view (&list)[N], std::string_view name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

}  // namespace

PrecheckStandard StandardFor(std::string_view api, DType output) {
  if (!IsFloating(output)) return PrecheckStandard::kBinaryConsistency;
  if (In(kBinaryConsistency, api)) return PrecheckStandard::kBinaryConsistency;
  if (In(kAbsoluteThreshold, api)) return PrecheckStandard::kAbsoluteThreshold;
  if (In(kUlp, api)) return PrecheckStandard::kUlp;
  if (In(kThousandth, api)) return PrecheckStandard::kThousandth;
  return PrecheckStandard::kBenchmark;
}

int MonitoringLevel(std::string_view api) {
  if (In(kLevel2, api)) return 2;
  if (In(kLevel1, api)) return 1;
  return 0;
}

std::optional<PrecheckThresholds> ThresholdsFor(DType output) {
  // eps: msprobe's benchmark of an f16 output is f32 (f32's epsilon), of an f32 output f64; for
  // bf16 it adds its BFLOAT16_EPS. clip: the largest finite value msprobe clips to.
  static constexpr std::pair<DType, PrecheckThresholds> kTable[] = {
      {DType::kF16,
       {.small_value = 0x1p-11,
        .small_atol = 0x1p-16,
        .rtol = 0x1p-10,
        .eps = 0x1p-23,
        .clip = 65504.0,
        .ulp = true,
        .ulp_min_exp = -14,
        .ulp_mant = 10,
        .ulp_thr = 1,
        .minimum_err = 0x1p-11}},
      {DType::kBF16,
       {.small_value = 0x1p-8,
        .small_atol = 0x1p-16,
        .rtol = 0x1p-8,
        .eps = 0x1p-8,
        .clip = 3.3895313892515355e38,
        .ulp = true,
        .ulp_min_exp = -126,
        .ulp_mant = 7,
        .ulp_thr = 1,
        .minimum_err = 0x1p-8}},
      {DType::kF32,
       {.small_value = 0x1p-14,
        .small_atol = 0x1p-30,
        .rtol = 0x1p-20,
        .eps = 0x1p-52,
        .clip = static_cast<double>(std::numeric_limits<float>::max()),
        .ulp = true,
        .ulp_min_exp = -126,
        .ulp_mant = 23,
        .ulp_thr = 32,
        .minimum_err = 0x1p-14}},
  };
  for (const auto& [dtype, thresholds] : kTable) {
    if (dtype == output) return thresholds;
  }
  return std::nullopt;
}

PrecheckStatus WorseStatus(PrecheckStatus a, PrecheckStatus b) {
  auto rank = [](PrecheckStatus s) {
    switch (s) {
      case PrecheckStatus::kError:
        return 4;
      case PrecheckStatus::kWarning:
        return 3;
      case PrecheckStatus::kPass:
        return 2;
      case PrecheckStatus::kSkip:
        return 1;
      default:
        return 0;
    }
  };
  return rank(a) >= rank(b) ? a : b;
}

}  // namespace numprobe
