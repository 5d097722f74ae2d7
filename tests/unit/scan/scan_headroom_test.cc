// Precision headroom verdicts at the exact rounding boundaries of each target, computed by hand
// from the formats' definitions (round to nearest, ties to even).
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/scan.h"

#include "scan/scan_internal.h"

namespace numprobe {
namespace {

using detail::FitOf;

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

TEST(ScanHeadroomTest, Fp16OverflowsAtTheRoundingMidpointAboveItsMaximum) {
  // 65504 = max fp16; the next step would be 65536, so 65520 is the midpoint, which ties to
  // the even neighbour: Inf.
  EXPECT_FALSE(FitOf(DType::kF16, 65504.0, kUnknown).overflow);
  EXPECT_FALSE(FitOf(DType::kF16, 65519.99, kUnknown).overflow);
  EXPECT_TRUE(FitOf(DType::kF16, 65520.0, kUnknown).overflow);
  EXPECT_DOUBLE_EQ(FitOf(DType::kF16, 65504.0 / 8, kUnknown).headroom_log2, 3.0);
  EXPECT_LT(FitOf(DType::kF16, 1e5, kUnknown).headroom_log2, 0.0);
}

TEST(ScanHeadroomTest, Fp16UnderflowAndSubnormals) {
  const double min_sub = std::ldexp(1.0, -24);
  EXPECT_TRUE(FitOf(DType::kF16, 1.0, std::ldexp(1.0, -25)).underflow);  // tie -> 0
  const TargetFit above_half = FitOf(DType::kF16, 1.0, std::ldexp(1.0, -25) * 1.0001);
  EXPECT_FALSE(above_half.underflow);
  EXPECT_TRUE(above_half.subnormal);
  EXPECT_TRUE(FitOf(DType::kF16, 1.0, min_sub).subnormal);
  const TargetFit normal = FitOf(DType::kF16, 1.0, std::ldexp(1.0, -14));
  EXPECT_FALSE(normal.subnormal);
  EXPECT_FALSE(normal.underflow);
  EXPECT_TRUE(normal.min_known);
}

TEST(ScanHeadroomTest, Bf16KeepsFp32RangeButNotItsTop) {
  // bf16 max = (2 - 2^-7) * 2^127; midpoint to 2^128 = (2 - 2^-8) * 2^127.
  const double max_bf16 = (2.0 - std::ldexp(1.0, -7)) * std::ldexp(1.0, 127);
  const double midpoint = (2.0 - std::ldexp(1.0, -8)) * std::ldexp(1.0, 127);
  EXPECT_FALSE(FitOf(DType::kBF16, max_bf16, kUnknown).overflow);
  EXPECT_TRUE(FitOf(DType::kBF16, midpoint, kUnknown).overflow);
  EXPECT_FALSE(FitOf(DType::kBF16, 65520.0, kUnknown).overflow);
  EXPECT_FALSE(FitOf(DType::kBF16, 1.0, std::ldexp(1.0, -126)).subnormal);
  EXPECT_TRUE(FitOf(DType::kBF16, 1.0, std::ldexp(1.0, -127)).subnormal);
  EXPECT_TRUE(FitOf(DType::kBF16, 1.0, std::ldexp(1.0, -134)).underflow);  // half of 2^-133
}

TEST(ScanHeadroomTest, Fp8E4m3HasNoInfinityAndTiesDownAt464) {
  // e4m3fn: max 448 = 1.75 * 2^8; 480 would be the NaN code. 464 ties to 448 (even mantissa).
  EXPECT_FALSE(FitOf(DType::kF8E4M3FN, 448.0, kUnknown).overflow);
  EXPECT_FALSE(FitOf(DType::kF8E4M3FN, 464.0, kUnknown).overflow);
  EXPECT_TRUE(FitOf(DType::kF8E4M3FN, 464.5, kUnknown).overflow);
  EXPECT_TRUE(FitOf(DType::kF8E4M3FN, 1.0, std::ldexp(1.0, -10)).underflow);  // half of 2^-9
  EXPECT_TRUE(FitOf(DType::kF8E4M3FN, 1.0, std::ldexp(1.0, -9)).subnormal);
  EXPECT_FALSE(FitOf(DType::kF8E4M3FN, 1.0, std::ldexp(1.0, -6)).subnormal);
  EXPECT_DOUBLE_EQ(FitOf(DType::kF8E4M3FN, 56.0, kUnknown).headroom_log2, 3.0);
}

TEST(ScanHeadroomTest, Fp8E5m2OverflowsAt61440) {
  // e5m2: max 57344 = 1.75 * 2^15, next 2^16; midpoint 61440 ties to 2^16 (even): Inf.
  EXPECT_FALSE(FitOf(DType::kF8E5M2, 57344.0, kUnknown).overflow);
  EXPECT_FALSE(FitOf(DType::kF8E5M2, 61439.0, kUnknown).overflow);
  EXPECT_TRUE(FitOf(DType::kF8E5M2, 61440.0, kUnknown).overflow);
  EXPECT_TRUE(FitOf(DType::kF8E5M2, 1.0, std::ldexp(1.0, -17)).underflow);
  EXPECT_TRUE(FitOf(DType::kF8E5M2, 1.0, std::ldexp(1.0, -16)).subnormal);
}

// VerdictsOf compares with each type's rounding edges; it must say what rounding each magnitude
// says, at every value of a sweep over the types' ranges (every 1/256 step of the mantissa, from
// below the smallest bf16 subnormal to above its largest value) and at each value's neighbours.
TEST(ScanHeadroomTest, VerdictsFromTheRoundingEdgesAreTheRoundingsOwn) {
  std::vector<double> values = {0.0,
                                -1.0,
                                std::numeric_limits<double>::denorm_min(),
                                std::numeric_limits<double>::min(),
                                std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::infinity(),
                                kUnknown,
                                65504.0,
                                65520.0,
                                464.0,
                                61440.0,
                                std::ldexp(1.0, -25)};
  for (int e = -140; e <= 130; ++e) {
    for (int j = 0; j < 256; ++j) values.push_back(std::ldexp(1.0 + j / 256.0, e));
  }
  const size_t swept = values.size();
  for (size_t i = 0; i < swept; ++i) {
    values.push_back(std::nextafter(values[i], 0.0));
    values.push_back(std::nextafter(values[i], std::numeric_limits<double>::infinity()));
  }
  for (const DType target : {DType::kF16, DType::kBF16, DType::kF8E4M3FN, DType::kF8E5M2,
                             DType::kF8E4M3FNUZ, DType::kF8E5M2FNUZ, DType::kF32}) {
    int disagreements = 0;
    for (const double v : values) {
      // The same magnitude as the largest and as the smallest non-zero one.
      const TargetFit fast = detail::VerdictsOf(target, v, v);
      const TargetFit slow = detail::VerdictsByRounding(target, v, v);
      if (fast.overflow != slow.overflow || fast.underflow != slow.underflow ||
          fast.subnormal != slow.subnormal || fast.min_known != slow.min_known) {
        if (++disagreements <= 5) ADD_FAILURE() << Name(target) << " at " << v;
      }
    }
    EXPECT_EQ(disagreements, 0) << Name(target);
  }
  // The sweep crosses every edge: each verdict is seen both ways.
  EXPECT_TRUE(detail::VerdictsOf(DType::kBF16, std::ldexp(1.0, 128), 1).overflow);
  EXPECT_TRUE(detail::VerdictsOf(DType::kBF16, 1, std::ldexp(1.0, -135)).underflow);
  EXPECT_FALSE(detail::VerdictsOf(DType::kBF16, 1, std::ldexp(1.0, -133)).underflow);
}

TEST(ScanHeadroomTest, UnknownAndEmptyMagnitudes) {
  const TargetFit unknown = FitOf(DType::kF16, 2.0, kUnknown);
  EXPECT_FALSE(unknown.min_known);
  EXPECT_FALSE(unknown.underflow);
  // All zeros: the smallest non-zero |x| is +Inf ("none"), known, nothing underflows.
  const TargetFit zeros = FitOf(DType::kF16, 0.0, HUGE_VAL);
  EXPECT_TRUE(zeros.min_known);
  EXPECT_FALSE(zeros.underflow);
  EXPECT_FALSE(zeros.overflow);
  EXPECT_TRUE(std::isnan(zeros.headroom_log2));
}

TEST(ScanHeadroomTest, SummaryListsLayersInOrderOfAppearance) {
  std::vector<HeadroomRow> rows;
  auto row = [&](const char* tensor, const char* layer, double max_abs, double min_nz) {
    HeadroomRow r;
    r.tensor = tensor;
    r.layer = layer;
    r.max_abs = max_abs;
    r.min_nonzero_abs = min_nz;
    rows.push_back(r);
  };
  row("a.out", "Module.b.Lin", 7e4, 1.0);
  row("b.out", "Module.a.Lin", 1e5, std::ldexp(1.0, -30));
  row("c.out", "Module.b.Lin", 3e5, 1.0);
  row("d.out", "Module.c.Lin", 1.0, 0.5);
  HeadroomRow bad;
  bad.tensor = "nan.out";
  bad.layer = "Module.d.Lin";
  bad.nonfinite = true;
  rows.push_back(bad);
  const auto summary = detail::SummarizeHeadroom(rows, {DType::kF16});
  ASSERT_EQ(summary.size(), 1u);
  const HeadroomSummary& s = summary[0];
  EXPECT_EQ(s.tensors, 4);
  EXPECT_EQ(s.overflow, 3);
  EXPECT_EQ(s.underflow, 1);
  ASSERT_EQ(s.keep_higher.size(), 2u);
  EXPECT_EQ(s.keep_higher[0].layer, "Module.b.Lin");
  EXPECT_EQ(s.keep_higher[0].tensors, 2);
  EXPECT_EQ(s.keep_higher[0].max_abs, 3e5);
  EXPECT_EQ(s.keep_higher[0].worst_tensor, "c.out");
  EXPECT_EQ(s.keep_higher[1].layer, "Module.a.Lin");
  ASSERT_EQ(s.underflowing.size(), 1u);
  EXPECT_EQ(s.underflowing[0].layer, "Module.a.Lin");
}

// The targets are summarized in one pass over the rows; each target's summary is the one it has
// alone (its counts, and its layers in their own order of appearance).
TEST(ScanHeadroomTest, TargetsSummarizedTogetherAreSummarizedAsAlone) {
  std::vector<HeadroomRow> rows;
  const std::vector<std::string> layers = {"Module.a", "Module.b", "Module.c", "Module.d"};
  const std::vector<std::string> tensors = {"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"};
  // Magnitudes that overflow or underflow some targets and not others (fp8 e4m3 tops at 448,
  // e5m2 at 57344, fp16 at 65504; bf16's smallest subnormal is 2^-133).
  const std::vector<std::pair<double, double>> magnitudes = {{500.0, 1.0},
                                                             {6e4, 1e-3},
                                                             {7e4, std::ldexp(1.0, -20)},
                                                             {1.0, std::ldexp(1.0, -26)},
                                                             {300.0, 0.01},
                                                             {1e39, 1e-40},
                                                             {2.0, kUnknown},
                                                             {4e4, std::ldexp(1.0, -140)}};
  for (size_t i = 0; i < magnitudes.size(); ++i) {
    HeadroomRow r;
    r.tensor = tensors[i];
    r.layer = layers[(i * 3) % layers.size()];
    r.max_abs = magnitudes[i].first;
    r.min_nonzero_abs = magnitudes[i].second;
    rows.push_back(r);
  }
  const std::vector<DType> targets = {DType::kF16, DType::kBF16, DType::kF8E4M3FN, DType::kF8E5M2};
  const auto together = detail::SummarizeHeadroom(rows, targets);
  ASSERT_EQ(together.size(), targets.size());
  auto same_layers = [](const std::vector<LayerHeadroom>& a, const std::vector<LayerHeadroom>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].layer != b[i].layer || a[i].tensors != b[i].tensors ||
          a[i].max_abs != b[i].max_abs || a[i].worst_tensor != b[i].worst_tensor) {
        return false;
      }
    }
    return true;
  };
  int listed = 0;
  for (size_t t = 0; t < targets.size(); ++t) {
    const HeadroomSummary alone = detail::SummarizeHeadroom(rows, {targets[t]})[0];
    const HeadroomSummary& s = together[t];
    EXPECT_EQ(s.target, targets[t]);
    EXPECT_EQ(std::tie(s.tensors, s.overflow, s.underflow, s.subnormal, s.min_unknown),
              std::tie(alone.tensors, alone.overflow, alone.underflow, alone.subnormal,
                       alone.min_unknown))
        << Name(targets[t]);
    EXPECT_TRUE(same_layers(s.keep_higher, alone.keep_higher)) << Name(targets[t]);
    EXPECT_TRUE(same_layers(s.underflowing, alone.underflowing)) << Name(targets[t]);
    listed += static_cast<int>(s.keep_higher.size() + s.underflowing.size());
  }
  EXPECT_GT(listed, 4);                                   // the rows do reach the layer lists
  EXPECT_NE(together[0].overflow, together[2].overflow);  // fp16 and fp8 e4m3 differ
}

TEST(ScanHeadroomTest, TargetNamesRoundTrip) {
  for (DType t : {DType::kF16, DType::kBF16, DType::kF8E4M3FN, DType::kF8E5M2}) {
    EXPECT_EQ(ParseHeadroomTarget(HeadroomTargetName(t)), t);
  }
  EXPECT_EQ(HeadroomTargetName(DType::kF8E4M3FN), "fp8_e4m3");
  EXPECT_FALSE(ParseHeadroomTarget("fp32").has_value());
}

}  // namespace
}  // namespace numprobe
