// Bit-for-bit equality of two tensor pairs' metrics, every field: the streamed, threaded and SIMD
// paths must give exactly the one-pass scalar result (results never depend on the path taken).
#ifndef NUMPROBE_TESTS_UNIT_COMPARE_METRICS_EQUALITY_H_
#define NUMPROBE_TESTS_UNIT_COMPARE_METRICS_EQUALITY_H_

#include <bit>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "numprobe/compare_metrics.h"

namespace numprobe::testing {

inline uint64_t MetricBits(double v) { return std::bit_cast<uint64_t>(v); }

inline void ExpectSameMetrics(const TensorPairMetrics& a, const TensorPairMetrics& b,
                              const std::string& where) {
  EXPECT_EQ(a.compared, b.compared) << where;
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ(a.msprobe[k].kind, b.msprobe[k].kind) << where << " col " << k;
    EXPECT_EQ(MetricBits(a.msprobe[k].value), MetricBits(b.msprobe[k].value))
        << where << " col " << k;
  }
  ASSERT_EQ(a.extras.has_value(), b.extras.has_value()) << where;
  if (a.extras.has_value()) {
    const TensorExtras& x = *a.extras;
    const TensorExtras& y = *b.extras;
    EXPECT_EQ(MetricBits(x.mean_abs_err), MetricBits(y.mean_abs_err)) << where;
    EXPECT_EQ(MetricBits(x.mean_rel_err), MetricBits(y.mean_rel_err)) << where;
    EXPECT_EQ(MetricBits(x.rmse), MetricBits(y.rmse)) << where;
    EXPECT_EQ(MetricBits(x.sqnr_db), MetricBits(y.sqnr_db)) << where;
    EXPECT_EQ(MetricBits(x.max_ulp), MetricBits(y.max_ulp)) << where;
    EXPECT_EQ(MetricBits(x.mean_ulp), MetricBits(y.mean_ulp)) << where;
    EXPECT_EQ(MetricBits(x.allclose_ratio), MetricBits(y.allclose_ratio)) << where;
    EXPECT_EQ(x.nan_mismatch, y.nan_mismatch) << where;
    EXPECT_EQ(x.pos_inf_mismatch, y.pos_inf_mismatch) << where;
    EXPECT_EQ(x.neg_inf_mismatch, y.neg_inf_mismatch) << where;
    EXPECT_EQ(x.worst_index, y.worst_index) << where;
  }
  EXPECT_EQ(MetricBits(a.rel_l2), MetricBits(b.rel_l2)) << where;
}

}  // namespace numprobe::testing

#endif  // NUMPROBE_TESTS_UNIT_COMPARE_METRICS_EQUALITY_H_
