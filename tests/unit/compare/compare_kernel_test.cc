// The tensor-pair metric kernel: the Highway kernel must give the scalar reference's bits for
// every accumulated quantity (random data with NaN, Inf, zeros of both signs, subnormals, ties,
// odd lengths), and CompareTensorPair must give the same bits with the SIMD kernel or the forced
// scalar one, with any thread count.
#include "kernels/compare_kernel.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/compare_metrics.h"
#include "numprobe/float_convert.h"
#include "numprobe/tensor.h"
#include "numprobe/thread_pool.h"

#include "metrics_equality.h"

namespace numprobe {
namespace {

using detail::CmpAcc;
using detail::CmpFloat;
using detail::CmpSetup;
using detail::CmpUlp;

// A value of `dtype` (as double), drawn to hit the special cases often.
double Draw(std::mt19937_64& rng, DType dtype) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  const double p = u(rng);
  double v = 0;
  if (p < 0.04) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (p < 0.07) {
    v = std::numeric_limits<double>::infinity();
  } else if (p < 0.10) {
    v = -std::numeric_limits<double>::infinity();
  } else if (p < 0.16) {
    v = u(rng) < 0.5 ? 0.0 : -0.0;
  } else if (p < 0.22) {  // subnormal of the dtype (or of f32 for the narrower ones)
    const double tiny = dtype == DType::kF64 ? 4.9e-324 : dtype == DType::kF16 ? 5.96e-8 : 1.4e-45;
    v = tiny * std::floor(1 + 100 * u(rng)) * (u(rng) < 0.5 ? -1 : 1);
  } else if (p < 0.25) {  // near the top of the range: sums and differences overflow
    const double top = dtype == DType::kF64 ? 1.7e308 : dtype == DType::kF16 ? 65000 : 3.3e38;
    v = top * (0.5 + 0.5 * u(rng)) * (u(rng) < 0.5 ? -1 : 1);
  } else {
    v = normal(rng) * std::ldexp(1.0, static_cast<int>(u(rng) * 20) - 10);
  }
  switch (dtype) {
    case DType::kF32:
      return static_cast<float>(v);
    case DType::kBF16:
      return std::isnan(v) ? v : BF16ToF32(F32ToBF16(static_cast<float>(v)));
    case DType::kF16:
      return std::isnan(v) ? v : F16ToF32(F32ToF16(static_cast<float>(v)));
    case DType::kI32:
      return std::isfinite(v) ? std::nearbyint(std::fmax(-2e9, std::fmin(2e9, v * 1000))) : 7;
    default:
      return v;
  }
}

// A golden value near `t` (same, perturbed, or independent), in `dtype`.
double DrawNear(std::mt19937_64& rng, double t, DType dtype) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double p = u(rng);
  double v = 0;
  if (p < 0.15 || !std::isfinite(t)) {
    v = p < 0.6 ? t : Draw(rng, dtype);
  } else if (p < 0.75) {
    v = t * (1 + 1e-3 * (u(rng) - 0.5));
  } else {
    return Draw(rng, dtype);
  }
  switch (dtype) {
    case DType::kF32:
      return static_cast<float>(v);
    case DType::kBF16:
      return std::isnan(v) ? v : BF16ToF32(F32ToBF16(static_cast<float>(v)));
    case DType::kF16:
      return std::isnan(v) ? v : F16ToF32(F32ToF16(static_cast<float>(v)));
    case DType::kI32:
      return std::isfinite(v) ? std::nearbyint(std::fmax(-2e9, std::fmin(2e9, v))) : 3;
    default:
      return v;
  }
}

struct Case {
  const char* name;
  DType t, g;
  CmpSetup setup;
};

CmpSetup Setup(DType t, DType g, CmpFloat rel, CmpUlp ulp, DType low) {
  CmpSetup s;
  s.t_dtype = t;
  s.g_dtype = g;
  s.rel = rel;
  s.thr1 = rel == CmpFloat::kF64 ? 0.001 : static_cast<double>(0.001f);
  s.thr5 = rel == CmpFloat::kF64 ? 0.005 : static_cast<double>(0.005f);
  s.ulp = ulp;
  s.low = low;
  if (ulp != CmpUlp::kNone) std::tie(s.rtol, s.atol) = AllcloseTolerance(low);
  return s;
}

std::vector<Case> Cases() {
  using F = CmpFloat;
  using U = CmpUlp;
  return {
      {"f32/f32", DType::kF32, DType::kF32,
       Setup(DType::kF32, DType::kF32, F::kF32, U::kF32, DType::kF32)},
      {"bf16/f32", DType::kBF16, DType::kF32,
       Setup(DType::kBF16, DType::kF32, F::kF32, U::kBF16, DType::kBF16)},
      {"f64/f64", DType::kF64, DType::kF64,
       Setup(DType::kF64, DType::kF64, F::kF64, U::kF64, DType::kF64)},
      {"f32/f64", DType::kF32, DType::kF64,
       Setup(DType::kF32, DType::kF64, F::kF64, U::kF32, DType::kF32)},
      {"f64/bf16", DType::kF64, DType::kBF16,
       Setup(DType::kF64, DType::kBF16, F::kF64, U::kBF16, DType::kBF16)},
      {"f16/f16", DType::kF16, DType::kF16,
       Setup(DType::kF16, DType::kF16, F::kF32, U::kOther, DType::kF16)},
      {"f16/f32", DType::kF16, DType::kF32,
       Setup(DType::kF16, DType::kF32, F::kF32, U::kOther, DType::kF16)},
      {"i32/f32", DType::kI32, DType::kF32,
       Setup(DType::kI32, DType::kF32, F::kF64, U::kNone, DType::kF64)},
  };
}

uint64_t Bits(double v) { return std::bit_cast<uint64_t>(v); }

void ExpectSameAcc(const CmpAcc& a, const CmpAcc& b, const std::string& where) {
  for (int j = 0; j < detail::kCmpLanes; ++j) {
    EXPECT_EQ(Bits(a.dot[j]), Bits(b.dot[j])) << where << " dot lane " << j;
    EXPECT_EQ(Bits(a.tt[j]), Bits(b.tt[j])) << where << " tt lane " << j;
    EXPECT_EQ(Bits(a.gg[j]), Bits(b.gg[j])) << where << " gg lane " << j;
    EXPECT_EQ(Bits(a.dd[j]), Bits(b.dd[j])) << where << " dd lane " << j;
    EXPECT_EQ(Bits(a.sum_abs[j]), Bits(b.sum_abs[j])) << where << " sum_abs lane " << j;
    EXPECT_EQ(Bits(a.sum_sq[j]), Bits(b.sum_sq[j])) << where << " sum_sq lane " << j;
    EXPECT_EQ(Bits(a.sum_g2[j]), Bits(b.sum_g2[j])) << where << " sum_g2 lane " << j;
    EXPECT_EQ(Bits(a.sum_t2[j]), Bits(b.sum_t2[j])) << where << " sum_t2 lane " << j;
    EXPECT_EQ(Bits(a.sum_rel[j]), Bits(b.sum_rel[j])) << where << " sum_rel lane " << j;
    EXPECT_EQ(Bits(a.sum_ulp[j]), Bits(b.sum_ulp[j])) << where << " sum_ulp lane " << j;
  }
  EXPECT_EQ(a.finite, b.finite) << where;
  EXPECT_EQ(a.rel_count, b.rel_count) << where;
  EXPECT_EQ(a.ulp_count, b.ulp_count) << where;
  EXPECT_EQ(a.close, b.close) << where;
  EXPECT_EQ(a.nan_mm, b.nan_mm) << where;
  EXPECT_EQ(a.pinf_mm, b.pinf_mm) << where;
  EXPECT_EQ(a.ninf_mm, b.ninf_mm) << where;
  EXPECT_EQ(a.below_1, b.below_1) << where;
  EXPECT_EQ(a.below_5, b.below_5) << where;
  EXPECT_EQ(a.mask_mismatch, b.mask_mismatch) << where;
  EXPECT_EQ(a.rel_nan, b.rel_nan) << where;
  EXPECT_EQ(a.all_finite, b.all_finite) << where;
  EXPECT_EQ(Bits(a.max_abs), Bits(b.max_abs)) << where;
  EXPECT_EQ(Bits(a.max_rel), Bits(b.max_rel)) << where;
  EXPECT_EQ(Bits(a.max_ulp), Bits(b.max_ulp)) << where;
  EXPECT_EQ(Bits(a.worst), Bits(b.worst)) << where;
  EXPECT_EQ(a.worst_index, b.worst_index) << where;
}

TEST(CompareKernelTest, HighwayKernelGivesTheReferenceBits) {
  const auto kernels = detail::HwyCmpAccumulateFnsPerTarget();
  if (kernels.empty()) GTEST_SKIP() << "no Highway kernel on this build or CPU";
  std::mt19937_64 rng(20240611);
  for (const auto& [target, simd] : kernels) {
    std::cout << "target " << target << "\n";
    for (const Case& c : Cases()) {
      // Mode 0: NaN/Inf anywhere; 1: finite only; 2: finite but one NaN late in the second call.
      for (int mode : {0, 1, 2}) {
        for (int64_t n : {1, 15, 16, 17, 33, 1000, 1024}) {
          std::vector<double> t(static_cast<size_t>(n));
          std::vector<double> g(static_cast<size_t>(n));
          for (int64_t k = 0; k < n; ++k) {
            do {
              t[k] = Draw(rng, c.t);
              g[k] = DrawNear(rng, t[k], c.g);
            } while (mode != 0 && (!std::isfinite(t[k]) || !std::isfinite(g[k])));
          }
          if (mode == 2) g[n * 3 / 4] = std::nan("");
          if (n > 40) {  // equal largest |t - g| in several lanes: the first index must win
            const double top = c.t == DType::kI32
                                   ? 2e9
                                   : static_cast<double>(c.t == DType::kF16   ? 65504.0f
                                                         : c.t == DType::kF64 ? 1e300
                                                                              : 3.38e38f);
            const double bottom = c.g == DType::kF16   ? -65504.0
                                  : c.g == DType::kF64 ? -1e300
                                                       : -3.38e38;
            for (int64_t k : {int64_t{5}, int64_t{21}, n - 3}) {
              t[k] = top;
              g[k] =
                  c.g == DType::kBF16 ? BF16ToF32(F32ToBF16(static_cast<float>(bottom))) : bottom;
            }
          }
          // What the vector kernel is given precomputed for setups it does not compute itself.
          std::vector<double> ulp(static_cast<size_t>(n));
          for (int64_t k = 0; k < n; ++k) {
            ulp[k] = c.setup.ulp != CmpUlp::kNone && std::isfinite(t[k]) && std::isfinite(g[k])
                         ? detail::CmpUlpDistance(c.setup, t[k], g[k])
                         : std::nan("");
          }
          const double* pre_ulp =
              c.setup.ulp != CmpUlp::kNone && !detail::CmpUlpIsSimd(c.setup) ? ulp.data() : nullptr;
          CmpAcc ref;
          CmpAcc vec;
          detail::ResetCmpAcc(&ref);
          detail::ResetCmpAcc(&vec);
          // The reference computes relative errors and ULP distances itself; the kernel runs in two
          // calls split at a lane-aligned offset, as blocks of a chunk are.
          detail::CmpAccumulateScalar(c.setup, t.data(), g.data(), nullptr, n, 100, &ref);
          const int64_t split = n / 2 / detail::kCmpLanes * detail::kCmpLanes;
          simd(c.setup, t.data(), g.data(), pre_ulp, split, 100, &vec);
          simd(c.setup, t.data() + split, g.data() + split, pre_ulp ? pre_ulp + split : nullptr,
               n - split, 100 + split, &vec);
          ExpectSameAcc(
              ref, vec,
              target + " " + c.name + " mode " + std::to_string(mode) + " n=" + std::to_string(n));
          // The worst index is the first index of the largest |t - g| over finite pairs.
          double worst = -1;
          int64_t worst_index = -1;
          for (int64_t k = 0; k < n; ++k) {
            if (std::isfinite(t[k]) && std::isfinite(g[k]) && std::fabs(t[k] - g[k]) > worst) {
              worst = std::fabs(t[k] - g[k]);
              worst_index = 100 + k;
            }
          }
          EXPECT_EQ(ref.worst_index, worst_index) << c.name;
          bool all_finite = true;
          for (int64_t k = 0; k < n; ++k) {
            all_finite = all_finite && std::isfinite(t[k]) && std::isfinite(g[k]);
          }
          EXPECT_EQ(ref.all_finite, all_finite) << c.name;
          if (mode != 0) {
            EXPECT_EQ(all_finite, mode == 1);
          }
        }
      }
    }
  }
}

TEST(CompareKernelTest, ReferenceMatchesTheDefinitionsOnKnownValues) {
  const CmpSetup s = Cases()[0].setup;  // f32/f32
  // g == 0 adds f32's epsilon (2^-23) to both sides: |(1 + eps) - eps| / eps in f32 is 2^23; for
  // 2, 2 + 2^-23 rounds back to 2 in f32, so (2 - 2^-23) / 2^-23 = 2^24 - 1 (msprobe's
  // MaxRelativeErr 16777215.0 for [1, 2] against [0, 0] since its 2026-07-07 change).
  EXPECT_EQ(detail::CmpRelError(s, 1.0, 0.0), 8388608.0);
  EXPECT_EQ(detail::CmpRelError(s, 2.0, 0.0), 16777215.0);
  EXPECT_EQ(detail::CmpRelError(s, -0.0, 0.0), 0.0);
  // f64 pairs keep float64's epsilon: 2 + 2^-52 rounds to 2, so (2 - 2^-52) / 2^-52 = 2^53 - 1.
  EXPECT_EQ(detail::CmpRelError(Cases()[2].setup, 2.0, 0.0), 9007199254740991.0);
  EXPECT_EQ(detail::CmpRelError(s, 1.5, 1.0), 0.5);
  // Neighbouring floats are one ULP apart, across zero the positions add.
  EXPECT_EQ(detail::CmpUlpDistance(s, 1.0, static_cast<double>(std::nextafter(1.0f, 2.0f))), 1.0);
  EXPECT_EQ(detail::CmpUlpDistance(s, -0.0, 0.0), 0.0);
  EXPECT_EQ(detail::CmpUlpDistance(s, -1.4e-45, 1.4e-45), 2.0);
  // f64 positions at both ends of the range: the distance exceeds int64 and is still exact-ish.
  const CmpSetup s64 = Cases()[2].setup;
  const double far = detail::CmpUlpDistance(s64, 1.7e308, -1.7e308);
  EXPECT_EQ(far, 2.0 * static_cast<double>(std::bit_cast<uint64_t>(1.7e308)));
  // bf16: 1.0 and 1.0 + 2^-8 are one bf16 step apart (1 + 2^-8 rounds to even, i.e. to 1.0).
  const CmpSetup sbf = Cases()[1].setup;
  EXPECT_EQ(detail::CmpUlpDistance(sbf, 1.0, 1.0 + 0x1p-7), 1.0);
  EXPECT_EQ(detail::CmpUlpDistance(sbf, 1.0, 1.0 + 0x1p-8), 0.0);
  EXPECT_TRUE(std::isnan(detail::CmpUlpDistance(sbf, 1.0, 3.4e38)));  // rounds to bf16 Inf
  // The lane tree adds lanes in its fixed order.
  double lanes[detail::kCmpLanes];
  // 2^53 + 1 rounds back to 2^53 (a sequential sum stays there); the tree adds the ones first.
  for (int j = 0; j < detail::kCmpLanes; ++j) lanes[j] = j == 0 ? 0x1p53 : 1.0;
  EXPECT_EQ(detail::CombineCmpLanes(lanes), 0x1p53 + 14.0);
}

// A tensor of `dtype` holding `values` (already representable), stored as the dtype.
struct Stored {
  std::vector<uint8_t> bytes;
  DType dtype;
  TensorView View(int64_t n) const { return TensorView::Contiguous(bytes.data(), dtype, {n}); }
};

Stored Store(const std::vector<double>& values, DType dtype) {
  Stored s{{}, dtype};
  s.bytes.resize(values.size() * static_cast<size_t>(ItemSize(dtype)));
  for (size_t k = 0; k < values.size(); ++k) {
    uint8_t* p = s.bytes.data() + k * static_cast<size_t>(ItemSize(dtype));
    switch (dtype) {
      case DType::kF32: {
        const auto f = static_cast<float>(values[k]);
        std::memcpy(p, &f, 4);
        break;
      }
      case DType::kBF16: {
        const uint16_t h =
            std::isnan(values[k]) ? uint16_t{0x7fc0} : F32ToBF16(static_cast<float>(values[k]));
        std::memcpy(p, &h, 2);
        break;
      }
      case DType::kF16: {
        const uint16_t h = F32ToF16(static_cast<float>(values[k]));
        std::memcpy(p, &h, 2);
        break;
      }
      case DType::kI32: {
        const auto i = static_cast<int32_t>(values[k]);
        std::memcpy(p, &i, 4);
        break;
      }
      default:
        std::memcpy(p, &values[k], 8);
    }
  }
  return s;
}

TEST(CompareKernelTest, VectorDecodeIsExact) {
  std::mt19937_64 rng(5);
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF64}) {
    for (int64_t n : {1, 7, 8, 9, 33, 1024}) {
      std::vector<double> values(static_cast<size_t>(n));
      for (double& v : values) v = Draw(rng, dtype);
      const Stored s = Store(values, dtype);
      std::vector<double> out(static_cast<size_t>(n), -1.0);
      if (!detail::CmpDecode(dtype, reinterpret_cast<const std::byte*>(s.bytes.data()), n,
                             out.data())) {
        GTEST_SKIP() << "no vector decode on this build";
      }
      for (int64_t k = 0; k < n; ++k) {
        if (std::isnan(values[k])) {
          EXPECT_TRUE(std::isnan(out[k])) << Name(dtype) << " " << k;
        } else {
          EXPECT_EQ(Bits(out[k]), Bits(values[k])) << Name(dtype) << " " << k;
        }
      }
    }
  }
}

TEST(CompareKernelTest, PairMetricsAreTheSameWithAnyKernelAndThreadCount) {
  std::mt19937_64 rng(77);
  // Three chunks and an odd tail; one pair without NaN/Inf so that msprobe's columns are values.
  const int64_t n = 3 * detail::kCmpChunk + 77;
  for (const Case& c : Cases()) {
    for (const bool specials : {true, false}) {
      std::vector<double> t(static_cast<size_t>(n));
      std::vector<double> g(static_cast<size_t>(n));
      for (int64_t k = 0; k < n; ++k) {
        do {
          t[k] = Draw(rng, c.t);
          g[k] = DrawNear(rng, t[k], c.g);
        } while (!specials && (!std::isfinite(t[k]) || !std::isfinite(g[k])));
      }
      const Stored ts = Store(t, c.t);
      const Stored gs = Store(g, c.g);
      const std::string where = std::string(c.name) + (specials ? " with NaN/Inf" : " finite");
      ::setenv("NUMPROBE_FORCE_SCALAR", "1", 1);
      const TensorPairMetrics ref = CompareTensorPair(ts.View(n), gs.View(n), nullptr);
      ::unsetenv("NUMPROBE_FORCE_SCALAR");
      EXPECT_EQ(ref.msprobe[0].kind == MetricCell::Kind::kNA, specials) << where;
      for (int threads : {0, 1, 2, 3, 5}) {
        if (threads == 0) {
          testing::ExpectSameMetrics(ref, CompareTensorPair(ts.View(n), gs.View(n), nullptr), where);
        } else {
          ThreadPool pool(threads);
          testing::ExpectSameMetrics(ref, CompareTensorPair(ts.View(n), gs.View(n), &pool),
                            where + " " + std::to_string(threads) + " threads");
        }
      }
    }
  }
}

}  // namespace
}  // namespace numprobe

namespace numprobe {
namespace {

// msprobe's get_relative_err since its commit 78bf1bed (2026-07-07): float32 pairs in float32
// with float32's epsilon where the golden value is 0, float16 pairs promoted to float32 too.
TEST(CompareKernelTest, RelativeErrorFollowsMsprobesCurrentRule) {
  const float t32[2] = {1.0f, 2.0f};
  const float g32[2] = {0.0f, 0.0f};
  const TensorPairMetrics m32 =
      CompareTensorPair(TensorView::Contiguous(t32, DType::kF32, {2}),
                        TensorView::Contiguous(g32, DType::kF32, {2}), nullptr);
  EXPECT_EQ(m32.msprobe[3].Text(), "16777215.0");  // MaxRelativeErr (was 9007199254740992.0)
  // f16: 543/65536 against 0 is (n + 2^-23 - 2^-23) / 2^-23 in f32 = 69504 (before, float64's
  // epsilon vanished in f16 arithmetic and a zero golden value divided by zero).
  const uint16_t t16[2] = {F32ToF16(543.0f / 65536.0f), F32ToF16(0.25f)};
  const uint16_t g16[2] = {F32ToF16(0.0f), F32ToF16(0.25f)};
  const TensorPairMetrics m16 =
      CompareTensorPair(TensorView::Contiguous(t16, DType::kF16, {2}),
                        TensorView::Contiguous(g16, DType::kF16, {2}), nullptr);
  EXPECT_EQ(m16.msprobe[3].Text(), "69504.0");
  EXPECT_EQ(m16.msprobe[4].Text(), "0.5");  // One Thousandth Err Ratio: the equal pair only
  // Every path gives the same (the scalar reference).
  setenv("NUMPROBE_FORCE_SCALAR", "1", 1);
  const TensorPairMetrics s16 =
      CompareTensorPair(TensorView::Contiguous(t16, DType::kF16, {2}),
                        TensorView::Contiguous(g16, DType::kF16, {2}), nullptr);
  unsetenv("NUMPROBE_FORCE_SCALAR");
  EXPECT_EQ(s16.msprobe[3].Text(), "69504.0");
}

}  // namespace
}  // namespace numprobe
