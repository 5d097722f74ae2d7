// msprobe's acc_check judgment and its standards, on the examples its documentation gives
// (docs/en/accuracy_checker/pytorch_accuracy_checker_instruct.md: the rules of "API Pre-check
// Metrics", the rows of its accuracy_checking_details figure, the ULP and dual-1000 criteria),
// plus numprobe's verdict by the API's standard and the aggregation of an API's rows.
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "numprobe/app/precheck.h"

namespace numprobe {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Metrics of a well-behaved output: everything zero or perfect.
PrecheckMetrics Clean(int64_t count = 1000) {
  PrecheckMetrics m;
  m.count = count;
  m.cosine = 1.0;
  m.max_abs_d = m.max_abs_b = 1.0;
  m.dual[0] = m.dual[1] = m.dual[2] = 1.0;
  return m;
}

TensorOutputInfo Info(std::string api, DType dtype) {
  TensorOutputInfo info;
  info.name = "Functional." + api + ".0.forward.output.0";
  info.api = std::move(api);
  info.device_dtype = dtype;
  info.shape = {10, 100};
  return info;
}

TEST(PrecheckJudgeTest, CosineAtOrBelow099IsAnErrorThatStopsTheRow) {
  // The first row of msprobe's details figure: float32, cosine 0.739174, error; the max abs
  // error and the dual ratios are left empty ("skip other check and set to SPACE").
  PrecheckMetrics m = Clean();
  m.cosine = 0.739174;
  m.max_abs_err = 21247.78;
  const PrecheckRow r = JudgeTensorOutput(Info("conv2d", DType::kF32), m);
  EXPECT_EQ(r.status, PrecheckStatus::kError);
  EXPECT_EQ(*r.columns[kPcCosine], 0.739174);
  EXPECT_FALSE(r.columns[kPcMaxAbsErr].has_value());
  EXPECT_FALSE(r.columns[kPcDual10000].has_value());
  EXPECT_NE(r.message.find("Cosine similarity is less than 0.99, consider as error"),
            std::string::npos);
  m.cosine = 0.99;  // "less than or equal to 0.99" fails
  EXPECT_EQ(JudgeTensorOutput(Info("conv2d", DType::kF32), m).status, PrecheckStatus::kError);
}

TEST(PrecheckJudgeTest, MaxAbsErrorBelow0001Passes) {
  PrecheckMetrics m = Clean();
  m.max_abs_err = 0.000999;
  m.dual[1] = 0.5;  // never looked at
  const PrecheckRow r = JudgeTensorOutput(Info("gelu", DType::kF32), m);
  EXPECT_EQ(r.status, PrecheckStatus::kPass);
  EXPECT_FALSE(r.columns[kPcDual1000].has_value());
  EXPECT_NE(r.message.find("Max abs error is less than 0.001, consider as pass"),
            std::string::npos);
}

TEST(PrecheckJudgeTest, Float32RowsFollowDual1000ThenDual10000) {
  // The third row of msprobe's figure: float32, cosine 1, max abs error 1318.25, dual-1000
  // 0.777423, dual-10000 0.172832: error, with both ratios written.
  PrecheckMetrics m = Clean();
  m.max_abs_err = 1318.25;
  m.dual[1] = 0.777423;
  m.dual[2] = 0.172832;
  PrecheckRow r = JudgeTensorOutput(Info("conv2d", DType::kF32), m);
  EXPECT_EQ(r.status, PrecheckStatus::kError);
  EXPECT_EQ(*r.columns[kPcDual1000], 0.777423);
  EXPECT_EQ(*r.columns[kPcDual10000], 0.172832);
  EXPECT_NE(r.message.find("Relative error is greater than 0.001, consider as error"),
            std::string::npos);
  // Dual-1000 met, dual-10000 not: warning.
  m.dual[1] = 0.9995;
  m.dual[2] = 0.9;
  r = JudgeTensorOutput(Info("gelu", DType::kF32), m);
  EXPECT_EQ(r.status, PrecheckStatus::kWarning);
  // Both met: pass.
  m.dual[2] = 0.99995;
  EXPECT_EQ(JudgeTensorOutput(Info("gelu", DType::kF32), m).status, PrecheckStatus::kPass);
  // The ratio must exceed 1 - threshold: exactly 0.999 is not enough.
  m.dual[1] = 0.999;
  EXPECT_EQ(JudgeTensorOutput(Info("gelu", DType::kF32), m).status, PrecheckStatus::kError);
}

TEST(PrecheckJudgeTest, HalfPrecisionRowsFollowDual100ThenDual1000) {
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    PrecheckMetrics m = Clean();
    m.max_abs_err = 0.01;
    m.dual[0] = 0.98;  // dual-100 fails: error
    PrecheckRow r = JudgeTensorOutput(Info("gelu", dtype), m);
    EXPECT_EQ(r.status, PrecheckStatus::kError);
    EXPECT_FALSE(r.columns[kPcDual1000].has_value());
    m.dual[0] = 0.995;
    m.dual[1] = 0.99;  // dual-100 passes, dual-1000 fails: warning
    r = JudgeTensorOutput(Info("gelu", dtype), m);
    EXPECT_EQ(r.status, PrecheckStatus::kWarning);
    EXPECT_FALSE(r.columns[kPcDual10000].has_value());  // not a criterion for 16-bit types
    m.dual[1] = 0.9999;
    EXPECT_EQ(JudgeTensorOutput(Info("gelu", dtype), m).status, PrecheckStatus::kPass);
  }
}

TEST(PrecheckJudgeTest, SpecialCosineCases) {
  PrecheckMetrics m = Clean(1);  // one element: no cosine, judged by the errors
  m.cosine_defined = false;
  m.max_abs_err = 0;
  PrecheckRow r = JudgeTensorOutput(Info("gelu", DType::kF32), m);
  EXPECT_EQ(r.status, PrecheckStatus::kPass);
  EXPECT_FALSE(r.columns[kPcCosine].has_value());
  EXPECT_NE(r.message.find("scalar"), std::string::npos);
  m = Clean();
  m.cosine_defined = false;  // the device's output is all zero, the benchmark's is not
  m.max_abs_d = 0;
  EXPECT_EQ(JudgeTensorOutput(Info("gelu", DType::kF32), m).status, PrecheckStatus::kError);
  m.max_abs_b = 0;  // both all zero: fine
  m.max_abs_err = 0;
  EXPECT_EQ(JudgeTensorOutput(Info("gelu", DType::kF32), m).status, PrecheckStatus::kPass);
  m = Clean();
  m.cosine = kNaN;  // NaN does not fail the cosine rule; the ratios decide
  m.max_abs_err = kNaN;
  m.dual[1] = 0.5;
  r = JudgeTensorOutput(Info("gelu", DType::kF32), m);
  EXPECT_EQ(r.status, PrecheckStatus::kError);
  EXPECT_TRUE(std::isnan(*r.columns[kPcCosine]));
}

TEST(PrecheckJudgeTest, IntegerOutputsAreBinary) {
  // The fourth row of msprobe's figure: Tensor.add on int64, error rate 0: pass.
  PrecheckMetrics m = Clean();
  m.error_rate = 0;
  PrecheckRow r = JudgeTensorOutput(Info("add", DType::kI64), m);
  EXPECT_EQ(r.status, PrecheckStatus::kPass);
  EXPECT_EQ(*r.columns[kPcErrorRate], 0.0);
  EXPECT_EQ(r.standard, "binary_consistency");
  m.error_rate = 0.001;
  EXPECT_EQ(JudgeTensorOutput(Info("add", DType::kI64), m).status, PrecheckStatus::kError);
}

TEST(PrecheckJudgeTest, StandardsByApiClass) {
  EXPECT_EQ(StandardFor("matmul", DType::kF16), PrecheckStandard::kUlp);
  EXPECT_EQ(StandardFor("__add__", DType::kF32), PrecheckStandard::kAbsoluteThreshold);
  EXPECT_EQ(StandardFor("relu", DType::kBF16), PrecheckStandard::kBinaryConsistency);
  EXPECT_EQ(StandardFor("conv2d", DType::kF32), PrecheckStandard::kThousandth);
  EXPECT_EQ(StandardFor("softmax", DType::kF32), PrecheckStandard::kBenchmark);
  EXPECT_EQ(StandardFor("softmax", DType::kBool), PrecheckStandard::kBinaryConsistency);
  EXPECT_EQ(MonitoringLevel("layer_norm"), 2);
  EXPECT_EQ(MonitoringLevel("embedding"), 1);
  EXPECT_EQ(MonitoringLevel("softmax"), 0);
}

TEST(PrecheckJudgeTest, UlpStandardOfTheDocs) {
  // float32: pass when the mean ULP error is below 64 or the share above 32 ULP below 0.05.
  PrecheckMetrics m = Clean();
  m.max_abs_err = 0.5;  // msprobe's Status passes on the ratios
  m.mean_ulp_err = 63;
  m.ulp_err_proportion = 0.5;
  PrecheckRow r = JudgeTensorOutput(Info("matmul", DType::kF32), m);
  EXPECT_EQ(r.standard_result, PrecheckStatus::kPass);
  EXPECT_TRUE(r.columns[kPcMeanUlpErr].has_value());
  m.mean_ulp_err = 64;
  m.ulp_err_proportion = 0.049;
  EXPECT_EQ(JudgeTensorOutput(Info("matmul", DType::kF32), m).standard_result,
            PrecheckStatus::kPass);
  m.ulp_err_proportion = 0.05;
  r = JudgeTensorOutput(Info("matmul", DType::kF32), m);
  EXPECT_EQ(r.standard_result, PrecheckStatus::kError);
  EXPECT_EQ(r.verdict(), PrecheckStatus::kError);  // numprobe's verdict: the worse of the two
  EXPECT_EQ(r.status, PrecheckStatus::kPass);
  // float16 / bfloat16: pass when the share above 1 ULP is below 0.001.
  m.mean_ulp_err = 0;
  m.ulp_err_proportion = 0.0009;
  EXPECT_EQ(JudgeTensorOutput(Info("mm", DType::kF16), m).standard_result, PrecheckStatus::kPass);
  m.ulp_err_proportion = 0.001;
  EXPECT_EQ(JudgeTensorOutput(Info("mm", DType::kBF16), m).standard_result, PrecheckStatus::kError);
}

TEST(PrecheckJudgeTest, GradientsAreJudgedByTheirStandardOnlyAgainstAReference) {
  // A faithful float32 bias gradient (a sum over the batch) far from float64 in ULP near
  // cancellation: msprobe's Status decides, the ULP standard waits for precheck-compare.
  PrecheckMetrics m = Clean();
  m.max_abs_err = 1e-5;
  m.mean_ulp_err = 1.5e6;
  m.ulp_err_proportion = 0.3;
  TensorOutputInfo info = Info("linear", DType::kF32);
  info.name = "Functional.linear.0.backward.output.2";
  PrecheckRow r = JudgeTensorOutput(info, m);
  EXPECT_EQ(r.standard, "ulp_compare");
  EXPECT_EQ(r.standard_result, PrecheckStatus::kNone);
  EXPECT_TRUE(r.columns[kPcMeanUlpErr].has_value());  // msprobe's columns are still filled
  EXPECT_EQ(r.verdict(), PrecheckStatus::kPass);
  info.name = "Functional.linear.0.forward.output.0";  // the same on a forward output fails
  EXPECT_EQ(JudgeTensorOutput(info, m).standard_result, PrecheckStatus::kError);
  // The binary standard (relu's gradient is exact) still judges gradients alone.
  info = Info("relu", DType::kF32);
  info.name = "Functional.relu.0.backward.output.0";
  m.error_rate = 0.01;
  EXPECT_EQ(JudgeTensorOutput(info, m).standard_result, PrecheckStatus::kError);
}

TEST(PrecheckJudgeTest, AbsoluteThresholdAndDual1000Standards) {
  PrecheckMetrics m = Clean();
  m.max_abs_err = 0;
  PrecheckRow r = JudgeTensorOutput(Info("mul", DType::kF16), m);
  EXPECT_EQ(r.standard, "absolute_threshold");
  EXPECT_EQ(r.standard_result, PrecheckStatus::kPass);
  m.rel_err_ratio = 0.001;  // any relative error above rtol fails
  EXPECT_EQ(JudgeTensorOutput(Info("mul", DType::kF16), m).standard_result, PrecheckStatus::kError);
  // Dual-1000 (conv1d, conv2d): "greater than 0.999" passes per the docs' judgment.
  m = Clean();
  m.max_abs_err = 0;
  m.dual[1] = 0.9995;
  EXPECT_EQ(JudgeTensorOutput(Info("conv1d", DType::kF32), m).standard_result,
            PrecheckStatus::kPass);
  m.dual[1] = 0.777423;
  r = JudgeTensorOutput(Info("conv1d", DType::kF32), m);
  EXPECT_EQ(r.standard_result, PrecheckStatus::kError);
  EXPECT_EQ(*r.columns[kPcDual1000], 0.777423);  // the standard writes it even on an early pass
  // The benchmark standard needs a second device: no verdict from one run.
  EXPECT_EQ(JudgeTensorOutput(Info("softmax", DType::kF32), Clean()).standard_result,
            PrecheckStatus::kNone);
  // float64 outputs are outside msprobe's standards.
  r = JudgeTensorOutput(Info("softmax", DType::kF64), Clean());
  EXPECT_NE(r.message.find("torch.float64 is not supported for new precision standard"),
            std::string::npos);
  EXPECT_TRUE(r.standard.empty());
}

TEST(PrecheckJudgeTest, ApiAggregation) {
  // Every output must pass for the API to pass; any error makes it an error; else a warning.
  PrecheckApiResult a;
  a.api = "Torch.matmul.0";
  a.forward_rows = {MessageRow("Torch.matmul.0.forward.output.0", PrecheckStatus::kPass, ""),
                    MessageRow("Torch.matmul.0.forward.output.1", PrecheckStatus::kWarning, "")};
  Aggregate(&a);
  EXPECT_EQ(a.forward, PrecheckStatus::kWarning);
  EXPECT_EQ(a.backward, PrecheckStatus::kNone);  // no backward rows: " "
  a.backward_rows = {MessageRow("Torch.matmul.0.backward.output.0", PrecheckStatus::kError, ""),
                     MessageRow("Torch.matmul.0.backward.output.1", PrecheckStatus::kWarning, "")};
  Aggregate(&a);
  EXPECT_EQ(a.backward, PrecheckStatus::kError);
  EXPECT_EQ(a.verdict, PrecheckStatus::kError);
  const PrecheckApiResult s = SkippedApi("Distributed.all_reduce.0", "not supported");
  EXPECT_EQ(s.forward, PrecheckStatus::kSkip);
  EXPECT_EQ(s.backward, PrecheckStatus::kSkip);
  EXPECT_EQ(s.message, "not supported");
  EXPECT_EQ(s.forward_rows.front().name, "Distributed.all_reduce.0.forward.output.0");
}

TEST(PrecheckJudgeTest, DropoutRule) {
  EXPECT_EQ(JudgeDropout(50, 40, 99), PrecheckStatus::kPass);  // fewer than 100 elements
  EXPECT_EQ(JudgeDropout(500, 450, 1000), PrecheckStatus::kPass);
  EXPECT_EQ(JudgeDropout(500, 400, 1000), PrecheckStatus::kError);  // 0.1 is not below 0.1
}

}  // namespace
}  // namespace numprobe
