// The static plan of a lower precision: an fp32 run whose activations exceed fp16's range is
// flagged for fp16 and not for bf16; AdamW's eps of 1e-8 vanishes in fp16; sensitive ops are
// listed unless autocast keeps them in float32; gradients that underflow without loss scaling.
#include "numprobe/app/precheck_plan.h"

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/scan.h"

#include "precheck/precheck_plan_parts.h"
#include "testing/dump_builder.h"
#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

std::string F32(std::vector<int64_t> shape, double max, double min, double mean, double norm) {
  return test::TensorLeaf("torch.float32", shape, max, min, mean, norm);
}

// A statistics dump under tmp/step0/rank0 (and its precheck_settings.json unless `settings` is "").
fs::path MakeDump(const test::TempDir& tmp, const std::string& settings) {
  const std::string wide = F32({4, 16}, 1e5, -3, 100, 2e5);  // beyond fp16's 65504
  const fs::path dir = test::WriteDump(
      tmp / "step0" / "rank0", {.task = "statistics", .level = "L1", .framework = "pytorch"},
      {test::ForwardEntry("Functional.linear.0.forward",
                          F32({4, 8}, 2, -2, 0, 5) + ", " + F32({16, 8}, 0.5, -0.5, 0, 4), wide),
       test::ForwardEntry("Functional.softmax.0.forward", wide, F32({4, 16}, 1, 0, 0.0625, 2)),
       test::BackwardEntry("Functional.linear.0.backward", F32({4, 16}, 1e-9, -1e-9, 0, 1e-8),
                           F32({4, 8}, 1e-9, -1e-9, 0, 1e-8))});
  if (!settings.empty()) test::WriteFile(dir / "precheck_settings.json", settings);
  return dir;
}

bool Has(const PlanReport& r, const std::string& kind, PlanSeverity severity,
         const std::string& op_part = "") {
  for (const PlanFinding& f : r.findings) {
    if (f.kind == kind && f.severity == severity &&
        (op_part.empty() || f.op.find(op_part) != std::string::npos)) {
      return true;
    }
  }
  return false;
}

TEST(PrecheckPlanTest, RangesAndOptimizerSettings) {
  const test::TempDir tmp("numprobe_plan_adamw");
  const fs::path dump = MakeDump(tmp, R"({"optimizer": {"type": "AdamW", "lr": 0.001, "eps": 1e-08,
                   "weight_decay": 0.01}, "loss_scaling": false, "autocast": false})");
  auto fp16 = PlanPrecision(dump, DType::kF16);
  ASSERT_TRUE(fp16.ok()) << fp16.error().ToString();
  EXPECT_TRUE(fp16->settings_known);
  EXPECT_TRUE(Has(*fp16, "overflow", PlanSeverity::kError, "Functional.linear.0.forward"));
  EXPECT_TRUE(Has(*fp16, "optimizer", PlanSeverity::kError));  // eps 1e-8 rounds to 0
  EXPECT_TRUE(Has(*fp16, "gradient_underflow", PlanSeverity::kError));
  EXPECT_TRUE(Has(*fp16, "sensitive_op", PlanSeverity::kWarning, "Functional.softmax.0"));
  EXPECT_EQ(fp16->findings.front().severity, PlanSeverity::kError);  // errors first

  auto bf16 = PlanPrecision(dump, DType::kBF16);
  ASSERT_TRUE(bf16.ok());
  EXPECT_FALSE(Has(*bf16, "overflow", PlanSeverity::kError));
  EXPECT_FALSE(Has(*bf16, "gradient_underflow", PlanSeverity::kError));
  for (const PlanFinding& f : bf16->findings) {
    EXPECT_FALSE(f.kind == "optimizer" && f.detail.find("eps") != std::string::npos) << f.detail;
  }
  // lr * weight_decay = 1e-5 is below bf16's unit roundoff 2^-8.
  EXPECT_TRUE(Has(*bf16, "optimizer", PlanSeverity::kWarning));
}

TEST(PrecheckPlanTest, AutocastAndLossScalingChangeTheFindings) {
  const test::TempDir tmp("numprobe_plan_amp");
  const fs::path dump =
      MakeDump(tmp, R"({"optimizer": {"type": "AdamW", "eps": 1e-08}, "loss_scaling": true,
                 "loss_scale": 1024, "autocast": true})");
  auto r = PlanPrecision(dump, DType::kF16);
  ASSERT_TRUE(r.ok());
  // torch.autocast runs softmax in float32; a loss scale of 2^10 cannot lift 1e-9 into fp16.
  EXPECT_FALSE(Has(*r, "sensitive_op", PlanSeverity::kWarning, "softmax"));
  EXPECT_TRUE(Has(*r, "gradient_underflow", PlanSeverity::kError));
  // 2^16 can (1e-9 * 65536 is above fp16's smallest normal).
  test::WriteFile(dump / "precheck_settings.json",
                  R"({"loss_scaling": true, "loss_scale": 65536, "autocast": true})");
  auto scaled = PlanPrecision(dump, DType::kF16);
  ASSERT_TRUE(scaled.ok());
  EXPECT_FALSE(Has(*scaled, "gradient_underflow", PlanSeverity::kError));
  // Without a settings file the optimizer is not checked and loss scaling counts as off.
  fs::remove(dump / "precheck_settings.json");
  auto bare = PlanPrecision(dump, DType::kF16);
  ASSERT_TRUE(bare.ok());
  EXPECT_FALSE(bare->settings_known);
  EXPECT_FALSE(Has(*bare, "optimizer", PlanSeverity::kError));
  EXPECT_FALSE(bare->warnings.empty());
}

TEST(PrecheckPlanTest, BadSettingsAndTargets) {
  const test::TempDir tmp("numprobe_plan_bad");
  const fs::path dump = MakeDump(tmp, R"({"optimizer": {"eps": "small"}})");
  EXPECT_EQ(PlanPrecision(dump, DType::kF16).error().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(PlanPrecision(dump, DType::kF32).error().code(), ErrorCode::kInvalidArgument);
}

// The parts a distributed run takes (precheck_plan_parts.h): each rank's facts encoded and decoded
// as they travel to process 0 give PlanPrecision's report; the encoding is exact and strict.
TEST(PrecheckPlanTest, PartsThroughTheirEncodingGiveTheSameReport) {
  const test::TempDir tmp("numprobe_plan_parts");
  const fs::path dump = MakeDump(tmp, R"({"optimizer": {"type": "AdamW", "eps": 1e-08}})");
  auto direct = PlanPrecision(tmp.path(), DType::kF16);
  ASSERT_TRUE(direct.ok()) << direct.error().ToString();
  auto scan = ScanDump(tmp.path(), detail::PlanScanOptions(DType::kF16));
  ASSERT_TRUE(scan.ok());
  auto inputs = detail::PlanInputsOf(tmp.path(), DType::kF16, nullptr);
  ASSERT_TRUE(inputs.ok());
  ASSERT_EQ(inputs->pairs.size(), 1u);
  auto facts = detail::PlanPair(*inputs->pairs[0].target, DType::kF16, inputs->report.settings);
  ASSERT_TRUE(facts.ok());
  ASSERT_FALSE(facts->findings.empty());
  const std::string bytes = detail::EncodePlanPairFacts(*facts);
  auto back = detail::DecodePlanPairFacts(bytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(detail::EncodePlanPairFacts(*back), bytes);
  for (size_t n = 0; n < bytes.size(); n += 5) {
    EXPECT_FALSE(detail::DecodePlanPairFacts(std::string_view(bytes).substr(0, n)).ok()) << n;
  }
  const PlanReport parts = detail::FinishPlan(std::move(*inputs), *scan, {*back});
  const test::TempDir out("numprobe_plan_parts_out");
  ASSERT_TRUE(WritePlanReport(*direct, out / "direct", "20261202000000").ok());
  ASSERT_TRUE(WritePlanReport(parts, out / "parts", "20261202000000").ok());
  for (const char* name :
       {"precheck_plan_fp16_20261202000000.json", "precheck_plan_fp16_20261202000000.csv"}) {
    EXPECT_EQ(test::ReadFile(out / "direct" / name), test::ReadFile(out / "parts" / name)) << name;
  }
  EXPECT_EQ(parts.warnings, direct->warnings);
  EXPECT_EQ(parts.ops, direct->ops);
}

}  // namespace
}  // namespace numprobe
