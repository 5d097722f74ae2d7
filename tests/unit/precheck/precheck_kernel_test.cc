// The pre-check metric kernel: the Highway kernel of every target must give the scalar
// reference's bits for every accumulated quantity (random data with NaN, Inf, zeros of both
// signs, subnormals, values past the compare dtype's range, odd lengths), and PrecheckTensorPair
// must give the same bits with the SIMD kernel or the forced scalar one, with any thread count.
// The metrics and ULP errors are checked against values worked out by hand.
#include "kernels/precheck_kernel.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/float_convert.h"
#include "numprobe/app/precheck.h"
#include "numprobe/tensor.h"
#include "numprobe/thread_pool.h"

namespace numprobe {
namespace {

using detail::PcAcc;
using detail::PcRound;
using detail::PcSetup;
using detail::PcUlp;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

uint64_t Bits(double v) { return std::bit_cast<uint64_t>(v); }

double InDType(double v, DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return std::isfinite(v) && std::fabs(v) > 3.4e38 ? std::copysign(kInf, v)
                                                       : static_cast<double>(static_cast<float>(v));
    case DType::kBF16:
      return std::isnan(v) ? v : BF16ToF32(F32ToBF16(static_cast<float>(v)));
    case DType::kF16:
      return std::isnan(v) ? v : F16ToF32(F32ToF16(static_cast<float>(v)));
    default:
      return v;
  }
}

// A device value of `dtype`, drawn to hit the special cases often.
double DrawDevice(std::mt19937_64& rng, DType dtype) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  const double p = u(rng);
  double v = 0;
  if (p < 0.03) {
    v = kNaN;
  } else if (p < 0.05) {
    v = u(rng) < 0.5 ? kInf : -kInf;
  } else if (p < 0.10) {
    v = u(rng) < 0.5 ? 0.0 : -0.0;
  } else if (p < 0.16) {  // tiny: subnormal in f16/f32, small values
    v = std::ldexp(normal(rng), -static_cast<int>(u(rng) * 140));
  } else if (p < 0.20) {  // near the top of f16 / f32
    v = (dtype == DType::kF16 ? 65000.0 : 3.3e38) * (0.5 + 0.5 * u(rng)) * (u(rng) < 0.5 ? -1 : 1);
  } else {
    v = normal(rng) * std::ldexp(1.0, static_cast<int>(u(rng) * 24) - 12);
  }
  return InDType(v, dtype);
}

// A float64 benchmark near the device value (equal, within a few ULP, or unrelated).
double DrawBench(std::mt19937_64& rng, double d, DType dtype) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double p = u(rng);
  if (p < 0.1 || !std::isfinite(d)) return p < 0.7 ? d : DrawDevice(rng, DType::kF64);
  if (p < 0.8) {
    const double ulp = dtype == DType::kF16 ? 0x1p-11 : dtype == DType::kBF16 ? 0x1p-8 : 0x1p-24;
    return d * (1 + ulp * 8 * (u(rng) - 0.5));
  }
  if (p < 0.85) return 1e300 * (u(rng) - 0.5);  // far outside every compare dtype
  return DrawDevice(rng, DType::kF64);
}

PcSetup SetupFor(DType dtype) {
  PcSetup s;
  const auto t = ThresholdsFor(dtype);
  if (t) {
    s.round = dtype == DType::kF16 ? PcRound::kF16 : PcRound::kF32;
    s.eps = t->eps;
    s.small_value = t->small_value;
    s.small_atol = t->small_atol;
    s.rtol = t->rtol;
    s.clip = t->clip;
    s.ulp = dtype == DType::kF32 ? PcUlp::kDouble : PcUlp::kFloat;
    s.ulp_min_exp = t->ulp_min_exp;
    s.ulp_mant = t->ulp_mant;
    s.ulp_thr = t->ulp_thr;
  } else {
    s.round = PcRound::kF64;
    s.eps = 0x1p-52;
    s.clip = std::numeric_limits<double>::max();
  }
  return s;
}

void ExpectSameAcc(const PcAcc& a, const PcAcc& b, const std::string& where) {
  for (int j = 0; j < detail::kCmpLanes; ++j) {
    EXPECT_EQ(Bits(a.dot[j]), Bits(b.dot[j])) << where << " dot lane " << j;
    EXPECT_EQ(Bits(a.dd[j]), Bits(b.dd[j])) << where << " dd lane " << j;
    EXPECT_EQ(Bits(a.bb[j]), Bits(b.bb[j])) << where << " bb lane " << j;
    EXPECT_EQ(Bits(a.sum_rel[j]), Bits(b.sum_rel[j])) << where << " sum_rel lane " << j;
    EXPECT_EQ(Bits(a.sum_sq[j]), Bits(b.sum_sq[j])) << where << " sum_sq lane " << j;
    EXPECT_EQ(Bits(a.sum_ulp[j]), Bits(b.sum_ulp[j])) << where << " sum_ulp lane " << j;
  }
  for (int r = 0; r < detail::kPcRatios; ++r) EXPECT_EQ(a.below[r], b.below[r]) << where << r;
  EXPECT_EQ(a.small, b.small) << where;
  EXPECT_EQ(a.small_err, b.small_err) << where;
  EXPECT_EQ(a.normal, b.normal) << where;
  EXPECT_EQ(a.normal_err, b.normal_err) << where;
  EXPECT_EQ(a.infnan, b.infnan) << where;
  EXPECT_EQ(a.infnan_err, b.infnan_err) << where;
  EXPECT_EQ(a.greater, b.greater) << where;
  EXPECT_EQ(a.less, b.less) << where;
  EXPECT_EQ(a.ulp_over, b.ulp_over) << where;
  EXPECT_EQ(a.not_equal, b.not_equal) << where;
  EXPECT_EQ(a.ae_nan, b.ae_nan) << where;
  EXPECT_EQ(a.ulp_nan, b.ulp_nan) << where;
  EXPECT_EQ(a.d_nan, b.d_nan) << where;
  EXPECT_EQ(a.b_nan, b.b_nan) << where;
  EXPECT_EQ(Bits(a.max_ae), Bits(b.max_ae)) << where;
  EXPECT_EQ(Bits(a.max_rel), Bits(b.max_rel)) << where;
  EXPECT_EQ(Bits(a.max_ulp), Bits(b.max_ulp)) << where;
  EXPECT_EQ(Bits(a.max_abs_d), Bits(b.max_abs_d)) << where;
  EXPECT_EQ(Bits(a.max_abs_b), Bits(b.max_abs_b)) << where;
  EXPECT_EQ(Bits(a.worst), Bits(b.worst)) << where;
  EXPECT_EQ(a.worst_index, b.worst_index) << where;
}

TEST(PrecheckKernelTest, HighwayKernelGivesTheReferenceBits) {
  const auto kernels = detail::HwyPcAccumulateFnsPerTarget();
  if (kernels.empty()) GTEST_SKIP() << "no Highway kernel on this build or CPU";
  std::mt19937_64 rng(20250101);
  for (const auto& [target, simd] : kernels) {
    std::cout << "target " << target << "\n";
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
      PcSetup s = SetupFor(dtype);
      for (const double scale : {1.0, 0x1p-500}) {
        s.scale_d = s.scale_b = scale;
        for (int64_t n : {1, 15, 16, 17, 33, 1000, 1024}) {
          std::vector<double> d(static_cast<size_t>(n));
          std::vector<double> b(static_cast<size_t>(n));
          std::vector<double> bc(static_cast<size_t>(n));
          for (int64_t k = 0; k < n; ++k) {
            d[k] = DrawDevice(rng, dtype);
            b[k] = DrawBench(rng, d[k], dtype);
            bc[k] = detail::PcRoundF16(b[k]);
          }
          const double* bcp = s.round == PcRound::kF16 ? bc.data() : nullptr;
          PcAcc ref;
          PcAcc vec;
          detail::ResetPcAcc(&ref);
          detail::ResetPcAcc(&vec);
          detail::PcAccumulateScalar(s, d.data(), b.data(), bcp, n, 100, &ref);
          // Two calls split at a lane-aligned offset, as blocks of a chunk are.
          const int64_t split = n / 2 / detail::kCmpLanes * detail::kCmpLanes;
          simd(s, d.data(), b.data(), bcp, split, 100, &vec);
          simd(s, d.data() + split, b.data() + split, bcp ? bcp + split : nullptr, n - split,
               100 + split, &vec);
          ExpectSameAcc(ref, vec,
                        target + " " + std::string(Name(dtype)) + " n=" + std::to_string(n));
        }
      }
    }
  }
}

// A contiguous tensor of `dtype` holding `values`.
struct Stored {
  std::vector<uint8_t> bytes;
  DType dtype;
  int64_t n;
  TensorView View() const { return TensorView::Contiguous(bytes.data(), dtype, {n}); }
};

Stored Store(const std::vector<double>& values, DType dtype) {
  Stored s{{}, dtype, static_cast<int64_t>(values.size())};
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
        const uint16_t h = F32ToBF16(static_cast<float>(values[k]));
        std::memcpy(p, &h, 2);
        break;
      }
      case DType::kF16: {
        const uint16_t h = F32ToF16(static_cast<float>(values[k]));
        std::memcpy(p, &h, 2);
        break;
      }
      default:
        std::memcpy(p, &values[k], 8);
    }
  }
  return s;
}

void ExpectSameMetrics(const PrecheckMetrics& a, const PrecheckMetrics& b, const std::string& w) {
  const double pa[] = {a.cosine,
                       a.max_abs_d,
                       a.max_abs_b,
                       a.max_abs_err,
                       a.dual[0],
                       a.dual[1],
                       a.dual[2],
                       a.error_rate,
                       a.error_balance,
                       a.rmse,
                       a.small_value_err_ratio,
                       a.max_rel_err,
                       a.mean_rel_err,
                       a.inf_nan_err_ratio,
                       a.rel_err_ratio,
                       a.abs_err_ratio,
                       a.max_ulp_err,
                       a.mean_ulp_err,
                       a.ulp_err_proportion,
                       a.worst_device,
                       a.worst_bench};
  const double pb[] = {b.cosine,
                       b.max_abs_d,
                       b.max_abs_b,
                       b.max_abs_err,
                       b.dual[0],
                       b.dual[1],
                       b.dual[2],
                       b.error_rate,
                       b.error_balance,
                       b.rmse,
                       b.small_value_err_ratio,
                       b.max_rel_err,
                       b.mean_rel_err,
                       b.inf_nan_err_ratio,
                       b.rel_err_ratio,
                       b.abs_err_ratio,
                       b.max_ulp_err,
                       b.mean_ulp_err,
                       b.ulp_err_proportion,
                       b.worst_device,
                       b.worst_bench};
  for (size_t i = 0; i < std::size(pa); ++i) EXPECT_EQ(Bits(pa[i]), Bits(pb[i])) << w << " #" << i;
  EXPECT_EQ(a.worst_index, b.worst_index) << w;
  EXPECT_EQ(a.cosine_defined, b.cosine_defined) << w;
}

TEST(PrecheckKernelTest, PairMetricsAreTheSameWithAnyKernelAndThreadCount) {
  std::mt19937_64 rng(99);
  const int64_t n = 3 * detail::kCmpChunk + 77;  // three chunks and an odd tail
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
    for (const double magnitude : {1.0, 1e200}) {  // 1e200 takes the rescaled cosine path
      std::vector<double> d(static_cast<size_t>(n));
      std::vector<double> b(static_cast<size_t>(n));
      for (int64_t k = 0; k < n; ++k) {
        d[k] = DrawDevice(rng, dtype);
        b[k] = DrawBench(rng, d[k], dtype);
        if (dtype == DType::kF64 && std::isfinite(d[k])) {
          d[k] *= magnitude;
          b[k] *= magnitude;
        }
      }
      const Stored ds = Store(d, dtype);
      const Stored bs = Store(b, DType::kF64);
      const std::string where = std::string(Name(dtype)) + " x" + std::to_string(magnitude);
      ::setenv("NUMPROBE_FORCE_SCALAR", "1", 1);
      const auto ref = PrecheckTensorPair(ds.View(), bs.View(), nullptr);
      ::unsetenv("NUMPROBE_FORCE_SCALAR");
      ASSERT_TRUE(ref.ok()) << ref.error().ToString();
      for (int threads : {0, 1, 2, 3, 5}) {
        std::unique_ptr<ThreadPool> pool;
        if (threads > 0) pool = std::make_unique<ThreadPool>(threads);
        const auto got = PrecheckTensorPair(ds.View(), bs.View(), pool.get());
        ASSERT_TRUE(got.ok());
        ExpectSameMetrics(*ref, *got, where + " threads " + std::to_string(threads));
      }
    }
  }
}

TEST(PrecheckKernelTest, UlpErrorsMatchTheDefinitionByHand) {
  const PcSetup f32 = SetupFor(DType::kF32);
  // |b| = 1 has exponent 0: one f32 step above it is 2^-23 * 2^23 = 1 ULP.
  EXPECT_EQ(detail::PcUlpError(f32, 1.0 + 0x1p-23, 1.0), 1.0);
  // 3 = 1.5 * 2^1: steps are 2^-22 there.
  EXPECT_EQ(detail::PcUlpError(f32, 3.0 + 0x1p-22, 3.0), 1.0);
  // b == 0 counts as exponent 0 (msprobe's np.where(abs_bench == 0, 0, ...)).
  EXPECT_EQ(detail::PcUlpError(f32, 0x1p-30, 0.0), 0x1p-7);
  // Below 2^-126 the exponent is clamped: 1e-40 * 2^(23 + 126).
  EXPECT_EQ(detail::PcUlpError(f32, 0.0, 1e-40), 1e-40 * 0x1p149);
  // A non-finite benchmark has no exponent: NaN.
  EXPECT_TRUE(std::isnan(detail::PcUlpError(f32, 1.0, kInf)));

  const PcSetup f16 = SetupFor(DType::kF16);
  EXPECT_EQ(detail::PcUlpError(f16, 1.0 + 0x1p-10, 1.0), 1.0);
  // 2^-20 lies below f16's normal range: exponent -14, so 2^-20 * 2^24 = 16 ULP.
  EXPECT_EQ(detail::PcUlpError(f16, 0.0, 0x1p-20), 16.0);
  // In f32 arithmetic: the difference is rounded to f32 first (a third of an ULP of 1 is not a
  // float), then scaled by 2^10 exactly.
  const double third = 1.0 + 1.0 / 3 * 0x1p-10;
  const auto diff32 = static_cast<float>(1.0 - third);
  ASSERT_NE(static_cast<double>(diff32), 1.0 - third);
  EXPECT_EQ(detail::PcUlpError(f16, 1.0, third), std::fabs(static_cast<double>(diff32)) * 0x1p10);

  const PcSetup bf16 = SetupFor(DType::kBF16);
  EXPECT_EQ(detail::PcUlpError(bf16, 1.0 + 0x1p-7, 1.0), 1.0);
  // |b| < 2^-126: 2^(7 + 126) is Inf in f32, so any difference is Inf and none is NaN.
  EXPECT_EQ(detail::PcUlpError(bf16, 0.0, 1e-39), kInf);
  EXPECT_TRUE(std::isnan(detail::PcUlpError(bf16, 1e-39, 1e-39)));
}

TEST(PrecheckKernelTest, MetricsMatchTheDefinitionsByHand) {
  // f32 outputs against their float64 benchmark. The last value is small (|b| <= 2^-14).
  const std::vector<double> b = {1.0, 2.0, 4.0, 0x1p-16};
  const std::vector<double> d = {1.0, 2.0 + 0x1p-22, 4.0 - 0x1p-21, 0x1p-16 + 0x1p-39};
  const Stored ds = Store(d, DType::kF32);
  const Stored bs = Store(b, DType::kF64);
  const auto m = PrecheckTensorPair(ds.View(), bs.View());
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->max_abs_err, 0x1p-21);
  // Normal values: relative errors 0, 2^-22 / 2, 2^-21 / 4 (2 + 2^-52 rounds to 2).
  EXPECT_EQ(m->max_rel_err, 0x1p-23);
  EXPECT_EQ(m->mean_rel_err, (0x1p-23 + 0x1p-23) / 3);
  EXPECT_EQ(m->small_value_err_ratio, 0.0);  // 2^-39 <= 2^-30
  EXPECT_EQ(m->abs_err_ratio, 0.0);
  EXPECT_EQ(m->rel_err_ratio, 0.0);  // 2^-23 <= rtol 2^-20
  EXPECT_EQ(m->inf_nan_err_ratio, 0.0);
  // RMSE over normal values, corrected for the one masked small value.
  const double mse = (0x1p-44 + 0x1p-42) / 4 * (4 / (4 - 1 + 0.0001) + 0.0001);
  EXPECT_EQ(m->rmse, std::sqrt(mse));
  EXPECT_EQ(m->error_balance, 0.25);  // two above, one below, of four
  EXPECT_EQ(m->error_rate, 0.75);
  for (double r : m->dual) EXPECT_EQ(r, 1.0);
  // ULP errors 0, 1, 1, 1 (each difference is one step of its benchmark's binade).
  EXPECT_EQ(m->max_ulp_err, 1.0);
  EXPECT_EQ(m->mean_ulp_err, 0.75);
  EXPECT_EQ(m->ulp_err_proportion, 0.0);
  EXPECT_NEAR(m->cosine, 1.0, 1e-12);
  EXPECT_EQ(m->worst_index, 2);
  EXPECT_EQ(m->worst_device, 4.0 - 0x1p-21);
  EXPECT_EQ(m->worst_bench, 4.0);
}

TEST(PrecheckKernelTest, NonFinitePositionsFollowMsprobe) {
  const std::vector<double> b = {kInf, 1.0, kNaN, 1.0};
  const std::vector<double> d = {kInf, 1.0, kNaN, 2.0};
  const Stored ds = Store(d, DType::kF32);
  const Stored bs = Store(b, DType::kF64);
  const auto m = PrecheckTensorPair(ds.View(), bs.View());
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(std::isnan(m->cosine));       // NaN/Inf anywhere: NaN
  EXPECT_TRUE(std::isnan(m->max_abs_err));  // numpy's max of |inf - inf| = NaN
  EXPECT_EQ(m->inf_nan_err_ratio, 0.0);     // Inf = Inf after clipping, NaN = NaN
  EXPECT_EQ(m->dual[1], 0.25);              // only the exact 1.0 is below 0.1%
  EXPECT_EQ(m->error_rate, 0.5);            // NaN != NaN, and 2 != 1
  // Inf against a finite benchmark fails the clipped check.
  const Stored d2 = Store({kInf, 1.0}, DType::kF32);
  const Stored b2 = Store({5.0, 1.0}, DType::kF64);
  const auto m2 = PrecheckTensorPair(d2.View(), b2.View());
  ASSERT_TRUE(m2.ok());
  EXPECT_EQ(m2->inf_nan_err_ratio, 1.0);
}

TEST(PrecheckKernelTest, IntegerOutputsAreComparedExactly) {
  std::vector<int64_t> a = {1, 2, (int64_t{1} << 60) + 1, 4};
  std::vector<int64_t> c = {1, 2, (int64_t{1} << 60), 4};  // equal as doubles, not as integers
  const auto m = PrecheckTensorPair(TensorView::Contiguous(a.data(), DType::kI64, {4}),
                                    TensorView::Contiguous(c.data(), DType::kI64, {4}));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->error_rate, 0.25);
}

TEST(PrecheckKernelTest, RejectsStridedAndMismatchedViews) {
  std::vector<float> a(8, 1.0f);
  std::vector<double> b(8, 1.0);
  TensorView strided = TensorView::Contiguous(a.data(), DType::kF32, {4});
  strided.strides = {2};
  EXPECT_EQ(PrecheckTensorPair(strided, TensorView::Contiguous(b.data(), DType::kF64, {4}))
                .error()
                .code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(PrecheckTensorPair(TensorView::Contiguous(a.data(), DType::kF32, {8}),
                               TensorView::Contiguous(b.data(), DType::kF64, {4}))
                .error()
                .code(),
            ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace numprobe
