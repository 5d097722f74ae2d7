#include "numprobe/stats.h"

#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <stdlib.h>

#include "numprobe/float_convert.h"
#include "numprobe/thread_pool.h"

#include "kernels/stats_internal.h"

namespace numprobe {
namespace {

using detail::kStatsChunk;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Owned bytes plus a view over them. The data starts one byte into the storage when `misalign`
// is set, as a memory-mapped tensor may.
struct Owned {
  std::vector<std::byte> bytes;
  TensorView view;
};

Owned FromBytes(DType dtype, std::vector<int64_t> shape, const void* data, size_t size,
                bool misalign = false) {
  Owned o;
  const size_t pad = misalign ? 1 : 0;
  o.bytes.resize(size + pad + 1);
  if (size > 0) std::memcpy(o.bytes.data() + pad, data, size);
  o.view = TensorView::Contiguous(o.bytes.data() + pad, dtype, std::move(shape));
  return o;
}

template <typename T>
Owned Make(DType dtype, std::vector<int64_t> shape, const std::vector<T>& values,
           bool misalign = false) {
  return FromBytes(dtype, std::move(shape), values.data(), values.size() * sizeof(T), misalign);
}

template <typename T>
Owned Make1D(DType dtype, const std::vector<T>& values, bool misalign = false) {
  return Make(dtype, {static_cast<int64_t>(values.size())}, values, misalign);
}

TensorStats Stats(const TensorView& view, bool scalar = false, ThreadPool* pool = nullptr) {
  StatsOptions options;
  options.force_scalar = scalar;
  options.pool = pool;
  Result<TensorStats> r = ComputeStats(view, options);
  EXPECT_TRUE(r.ok()) << r.error().ToString();
  return r.ok() ? *r : TensorStats{};
}

uint64_t Bits(double x) { return std::bit_cast<uint64_t>(x); }

// Every field, doubles compared bit for bit.
void ExpectIdentical(const TensorStats& a, const TensorStats& b, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.has_minmax, b.has_minmax);
  EXPECT_EQ(a.has_mean_norm, b.has_mean_norm);
  EXPECT_EQ(Bits(a.max), Bits(b.max)) << a.max << " vs " << b.max;
  EXPECT_EQ(Bits(a.min), Bits(b.min)) << a.min << " vs " << b.min;
  EXPECT_EQ(Bits(a.mean), Bits(b.mean)) << a.mean << " vs " << b.mean;
  EXPECT_EQ(Bits(a.norm), Bits(b.norm)) << a.norm << " vs " << b.norm;
  EXPECT_EQ(a.nan_count, b.nan_count);
  EXPECT_EQ(a.pos_inf_count, b.pos_inf_count);
  EXPECT_EQ(a.neg_inf_count, b.neg_inf_count);
  EXPECT_EQ(a.zero_count, b.zero_count);
  EXPECT_EQ(Bits(a.max_abs), Bits(b.max_abs)) << a.max_abs << " vs " << b.max_abs;
  EXPECT_EQ(Bits(a.min_nonzero_abs), Bits(b.min_nonzero_abs))
      << a.min_nonzero_abs << " vs " << b.min_nonzero_abs;
}

// Both paths must agree bit for bit; returns the scalar result.
TensorStats BothPaths(const TensorView& view, const std::string& what) {
  const TensorStats scalar = Stats(view, /*scalar=*/true);
  ExpectIdentical(Stats(view, /*scalar=*/false), scalar, what + " simd vs scalar");
  return scalar;
}

// Runs `body` once per SIMD target this CPU supports, restricting dispatch to it (once with the
// default dispatch when Highway is not built in), then restores the default dispatch.
template <typename Fn>
void ForEachTarget(Fn&& body) {
  const std::vector<std::string> targets = detail::StatsSimdTargets();
  for (const std::string& target : targets) {
    ASSERT_TRUE(detail::ForceStatsSimdTarget(target));
    SCOPED_TRACE("target " + target);
    const std::string expected = target == "SCALAR" ? "scalar" : target;
    EXPECT_EQ(std::string(StatsKernelName()), expected);
    body();
  }
  ASSERT_TRUE(detail::ForceStatsSimdTarget(""));
  if (targets.empty()) body();
}

// ----------------------------------------------------------------------------------------------
// Hand-computed edge cases.

TEST(StatsTest, F32Basics) {
  const Owned t = Make1D<float>(DType::kF32, {1.0f, -2.0f, 3.5f, 0.0f});
  const TensorStats s = BothPaths(t.view, "basic");
  EXPECT_EQ(s.count, 4);
  EXPECT_TRUE(s.has_minmax);
  EXPECT_TRUE(s.has_mean_norm);
  EXPECT_EQ(s.max, 3.5);
  EXPECT_EQ(s.min, -2.0);
  EXPECT_EQ(s.mean, 0.625);
  EXPECT_EQ(s.norm, std::sqrt(17.25));
  EXPECT_EQ(s.nan_count, 0);
  EXPECT_EQ(s.pos_inf_count, 0);
  EXPECT_EQ(s.neg_inf_count, 0);
  EXPECT_EQ(s.zero_count, 1);
  EXPECT_EQ(s.max_abs, 3.5);
  EXPECT_EQ(s.min_nonzero_abs, 1.0);
}

TEST(StatsTest, NaNPropagatesToMaxMinMeanNorm) {
  const Owned t = Make1D<double>(DType::kF64, {1.0, kNaN, -3.0, -kNaN});
  const TensorStats s = BothPaths(t.view, "nan");
  EXPECT_TRUE(std::isnan(s.max));
  EXPECT_TRUE(std::isnan(s.min));
  EXPECT_TRUE(std::isnan(s.mean));
  EXPECT_TRUE(std::isnan(s.norm));
  EXPECT_EQ(s.nan_count, 2);
  EXPECT_EQ(s.max_abs, 3.0);  // over non-NaN elements
  EXPECT_EQ(s.min_nonzero_abs, 1.0);
  // NaN results are the canonical quiet NaN whatever the input payload.
  EXPECT_EQ(Bits(s.max), Bits(kNaN));
  EXPECT_EQ(Bits(s.mean), Bits(kNaN));
}

TEST(StatsTest, AllNaN) {
  const Owned t = Make1D<float>(DType::kF32, std::vector<float>(20, std::nanf("")));
  const TensorStats s = BothPaths(t.view, "all nan");
  EXPECT_TRUE(std::isnan(s.max));
  EXPECT_EQ(s.nan_count, 20);
  EXPECT_EQ(s.max_abs, 0.0);
  EXPECT_EQ(s.min_nonzero_abs, kInf);
  EXPECT_EQ(s.zero_count, 0);
}

TEST(StatsTest, Infinities) {
  const float inf = std::numeric_limits<float>::infinity();
  const Owned t = Make1D<float>(DType::kF32, {inf, -inf, 2.0f, -inf});
  const TensorStats s = BothPaths(t.view, "inf");
  EXPECT_EQ(s.max, kInf);
  EXPECT_EQ(s.min, -kInf);
  EXPECT_TRUE(std::isnan(s.mean));  // inf + -inf
  EXPECT_EQ(s.norm, kInf);
  EXPECT_EQ(s.pos_inf_count, 1);
  EXPECT_EQ(s.neg_inf_count, 2);
  EXPECT_EQ(s.max_abs, kInf);
  EXPECT_EQ(s.min_nonzero_abs, 2.0);

  const Owned u = Make1D<float>(DType::kF32, {inf, 1.0f});
  const TensorStats su = BothPaths(u.view, "inf mean");
  EXPECT_EQ(su.mean, kInf);
  EXPECT_EQ(su.min, 1.0);
}

TEST(StatsTest, SignedZeroRule) {
  // Every zero is -0.0: a zero max/min is -0.0.
  const TensorStats neg = BothPaths(Make1D<float>(DType::kF32, {-0.0f, -0.0f}).view, "-0 -0");
  EXPECT_TRUE(std::signbit(neg.max) && neg.max == 0.0);
  EXPECT_TRUE(std::signbit(neg.min) && neg.min == 0.0);
  EXPECT_EQ(neg.zero_count, 2);
  EXPECT_EQ(neg.max_abs, 0.0);
  EXPECT_EQ(neg.min_nonzero_abs, kInf);
  EXPECT_FALSE(std::signbit(neg.mean));  // sums start at +0.0

  // Mixed zeros: +0.0, in either order.
  for (const std::vector<float>& v : {std::vector<float>{-0.0f, 0.0f}, {0.0f, -0.0f}}) {
    const TensorStats mixed = BothPaths(Make1D<float>(DType::kF32, v).view, "mixed zeros");
    EXPECT_FALSE(std::signbit(mixed.max));
    EXPECT_FALSE(std::signbit(mixed.min));
  }
  const TensorStats below = BothPaths(Make1D<float>(DType::kF32, {-1.0f, -0.0f}).view, "-1 -0");
  EXPECT_TRUE(std::signbit(below.max) && below.max == 0.0);
  EXPECT_EQ(below.min, -1.0);
  const TensorStats above =
      BothPaths(Make1D<double>(DType::kF64, {1.0, -0.0, 0.0}).view, "1 -0 +0");
  EXPECT_FALSE(std::signbit(above.min));
  EXPECT_EQ(above.min, 0.0);

  // The same rule on the SIMD path with enough elements for full vectors.
  std::vector<float> many(100, -0.0f);
  many[37] = -5.0f;
  const TensorStats m = BothPaths(Make1D<float>(DType::kF32, many).view, "many -0");
  EXPECT_TRUE(std::signbit(m.max) && m.max == 0.0);
  many[90] = 0.0f;
  const TensorStats m2 = BothPaths(Make1D<float>(DType::kF32, many).view, "many -0 one +0");
  EXPECT_FALSE(std::signbit(m2.max));
  EXPECT_EQ(m2.zero_count, 99);
}

TEST(StatsTest, EmptyTensor) {
  for (DType dtype : {DType::kF32, DType::kI64, DType::kBool, DType::kC64}) {
    Owned t = FromBytes(dtype, {0, 3}, nullptr, 0);
    const TensorStats s = BothPaths(t.view, std::string(Name(dtype)));
    EXPECT_EQ(s.count, 0);
    EXPECT_FALSE(s.has_minmax);
    EXPECT_FALSE(s.has_mean_norm);
    EXPECT_TRUE(std::isnan(s.max) && std::isnan(s.min) && std::isnan(s.mean) && std::isnan(s.norm));
    EXPECT_EQ(s.max_abs, 0.0);
    EXPECT_EQ(s.min_nonzero_abs, kInf);
    EXPECT_EQ(s.nan_count + s.zero_count + s.pos_inf_count + s.neg_inf_count, 0);
  }
  // An empty view may have no data pointer at all.
  TensorView none;
  none.shape = {4, 0};
  none.strides = {0, 1};
  EXPECT_EQ(Stats(none).count, 0);
}

TEST(StatsTest, ZeroDimTensorsReportTheValueAsAllFour) {
  const auto check = [](const Owned& t, double value, const std::string& what) {
    ASSERT_EQ(t.view.ndim(), 0);
    const TensorStats s = BothPaths(t.view, what);
    SCOPED_TRACE(what);
    EXPECT_EQ(s.count, 1);
    EXPECT_TRUE(s.has_minmax);
    EXPECT_TRUE(s.has_mean_norm);
    for (double stat : {s.max, s.min, s.mean, s.norm}) {
      if (std::isnan(value)) {
        EXPECT_EQ(Bits(stat), Bits(kNaN));
      } else {
        EXPECT_EQ(Bits(stat), Bits(value));
      }
    }
  };
  check(Make<float>(DType::kF32, {}, {-2.5f}), -2.5, "f32");
  check(Make<float>(DType::kF32, {}, {-0.0f}), -0.0, "f32 -0");
  check(Make<double>(DType::kF64, {}, {kNaN}), kNaN, "f64 nan");
  check(Make<int32_t>(DType::kI32, {}, {-7}), -7.0, "i32");
  check(Make<uint8_t>(DType::kBool, {}, {1}), 1.0, "bool true");
  check(Make<uint8_t>(DType::kBool, {}, {0}), 0.0, "bool false");
  check(Make<float>(DType::kC64, {}, {3.0f, -4.0f}), 5.0, "c64");
  check(Make<uint16_t>(DType::kBF16, {}, {0xC0A0}), -5.0, "bf16");
  check(Make<uint8_t>(DType::kF8E4M3FN, {}, {0x38}), 1.0, "e4m3fn");

  const TensorStats s = Stats(Make<int64_t>(DType::kI64, {}, {0}).view);
  EXPECT_EQ(s.zero_count, 1);
  EXPECT_EQ(s.min_nonzero_abs, kInf);
}

TEST(StatsTest, Bool) {
  const TensorStats mixed = BothPaths(Make1D<uint8_t>(DType::kBool, {1, 0, 1}).view, "mixed");
  EXPECT_EQ(mixed.max, 1.0);  // any
  EXPECT_EQ(mixed.min, 0.0);  // all
  EXPECT_TRUE(mixed.has_minmax);
  EXPECT_FALSE(mixed.has_mean_norm);
  EXPECT_EQ(mixed.zero_count, 1);
  EXPECT_EQ(mixed.max_abs, 1.0);
  EXPECT_EQ(mixed.min_nonzero_abs, 1.0);

  const TensorStats all = BothPaths(Make1D<uint8_t>(DType::kBool, {1, 1}).view, "all");
  EXPECT_EQ(all.max, 1.0);
  EXPECT_EQ(all.min, 1.0);
  EXPECT_EQ(all.zero_count, 0);

  const TensorStats none = BothPaths(Make1D<uint8_t>(DType::kBool, {0, 0, 0}).view, "none");
  EXPECT_EQ(none.max, 0.0);
  EXPECT_EQ(none.min, 0.0);
  EXPECT_EQ(none.zero_count, 3);
  EXPECT_EQ(none.max_abs, 0.0);
  EXPECT_EQ(none.min_nonzero_abs, kInf);

  // A byte other than 0/1 counts as true; long enough for full vectors.
  std::vector<uint8_t> bytes(200, 2);
  bytes[150] = 0;
  const TensorStats odd = BothPaths(Make1D<uint8_t>(DType::kBool, bytes).view, "odd bytes");
  EXPECT_EQ(odd.max, 1.0);
  EXPECT_EQ(odd.min, 0.0);
  EXPECT_EQ(odd.max_abs, 1.0);
  EXPECT_EQ(odd.zero_count, 1);
}

TEST(StatsTest, ComplexUsesMagnitude) {
  const Owned t = Make<float>(DType::kC64, {3}, {3.0f, 4.0f, 0.0f, -0.0f, -5.0f, 12.0f});
  const TensorStats s = BothPaths(t.view, "c64");
  EXPECT_TRUE(s.has_mean_norm);
  EXPECT_EQ(s.max, 13.0);
  EXPECT_EQ(s.min, 0.0);
  EXPECT_FALSE(std::signbit(s.min));
  EXPECT_EQ(s.mean, 6.0);
  EXPECT_EQ(s.norm, std::sqrt(194.0));
  EXPECT_EQ(s.zero_count, 1);
  EXPECT_EQ(s.max_abs, 13.0);
  EXPECT_EQ(s.min_nonzero_abs, 5.0);

  // hypot(inf, nan) is +inf (C99), hypot(nan, 1) is NaN.
  const Owned u = Make<double>(DType::kC128, {3}, {kInf, kNaN, kNaN, 1.0, -1.0, 0.0});
  const TensorStats su = BothPaths(u.view, "c128");
  EXPECT_EQ(su.pos_inf_count, 1);
  EXPECT_EQ(su.neg_inf_count, 0);
  EXPECT_EQ(su.nan_count, 1);
  EXPECT_TRUE(std::isnan(su.max));
  EXPECT_EQ(su.max_abs, kInf);
  EXPECT_EQ(su.min_nonzero_abs, 1.0);

  // |x| of c64 is computed in float, as torch.abs and numpy.abs do.
  const float re = 1.0f;
  const float im = 1e-4f;
  const TensorStats sf = BothPaths(Make<float>(DType::kC64, {}, {re, im}).view, "c64 precision");
  EXPECT_EQ(sf.max, static_cast<double>(std::hypot(re, im)));
}

TEST(StatsTest, SignedIntegersIncludingExtremes) {
  const int64_t lo = std::numeric_limits<int64_t>::min();
  const int64_t hi = std::numeric_limits<int64_t>::max();
  const Owned t = Make1D<int64_t>(DType::kI64, {lo, hi, 0, -1, 5});
  const TensorStats s = BothPaths(t.view, "i64");
  EXPECT_TRUE(s.has_minmax);
  EXPECT_FALSE(s.has_mean_norm);
  EXPECT_TRUE(std::isnan(s.mean) && std::isnan(s.norm));
  EXPECT_EQ(s.max, static_cast<double>(hi));
  EXPECT_EQ(s.min, -9223372036854775808.0);
  EXPECT_EQ(s.max_abs, 9223372036854775808.0);  // |INT64_MIN| = 2^63, no overflow
  EXPECT_EQ(s.min_nonzero_abs, 1.0);
  EXPECT_EQ(s.zero_count, 1);
  EXPECT_EQ(s.nan_count, 0);

  // Long runs (vector path): only negatives, the smallest non-zero magnitude from them.
  std::vector<int64_t> negatives(100, lo);
  negatives[63] = -3;
  const TensorStats n = BothPaths(Make1D<int64_t>(DType::kI64, negatives).view, "negatives");
  EXPECT_EQ(n.max, -3.0);
  EXPECT_EQ(n.min_nonzero_abs, 3.0);
  EXPECT_EQ(n.max_abs, 9223372036854775808.0);

  std::vector<int8_t> bytes(300, 0);
  bytes[7] = -128;
  bytes[250] = 127;
  bytes[251] = 2;
  const TensorStats b = BothPaths(Make1D<int8_t>(DType::kI8, bytes).view, "i8");
  EXPECT_EQ(b.max, 127.0);
  EXPECT_EQ(b.min, -128.0);
  EXPECT_EQ(b.max_abs, 128.0);
  EXPECT_EQ(b.min_nonzero_abs, 2.0);
  EXPECT_EQ(b.zero_count, 297);

  const TensorStats i16 = BothPaths(Make1D<int16_t>(DType::kI16, {-32768, 32767, -1}).view, "i16");
  EXPECT_EQ(i16.max_abs, 32768.0);
  const TensorStats i32 = BothPaths(
      Make1D<int32_t>(DType::kI32, std::vector<int32_t>(33, std::numeric_limits<int32_t>::min()))
          .view,
      "i32 all min");
  EXPECT_EQ(i32.max, -2147483648.0);
  EXPECT_EQ(i32.min_nonzero_abs, 2147483648.0);
}

TEST(StatsTest, UnsignedIntegersIncludingMax) {
  const uint64_t top = std::numeric_limits<uint64_t>::max();
  const TensorStats s = BothPaths(Make1D<uint64_t>(DType::kU64, {top, 5, 0}).view, "u64");
  EXPECT_EQ(s.max, 18446744073709551615.0);
  EXPECT_EQ(s.min, 0.0);
  EXPECT_EQ(s.max_abs, 18446744073709551615.0);
  EXPECT_EQ(s.min_nonzero_abs, 5.0);
  EXPECT_EQ(s.zero_count, 1);
  EXPECT_FALSE(s.has_mean_norm);

  std::vector<uint64_t> big(64, top);
  const TensorStats b = BothPaths(Make1D<uint64_t>(DType::kU64, big).view, "u64 all max");
  EXPECT_EQ(b.min, 18446744073709551615.0);
  EXPECT_EQ(b.min_nonzero_abs, 18446744073709551615.0);

  std::vector<uint8_t> zeros(100, 0);
  const TensorStats z = BothPaths(Make1D<uint8_t>(DType::kU8, zeros).view, "u8 zeros");
  EXPECT_EQ(z.max_abs, 0.0);
  EXPECT_EQ(z.min_nonzero_abs, kInf);
  EXPECT_EQ(z.zero_count, 100);
  zeros[99] = 255;
  zeros[3] = 1;
  const TensorStats z2 = BothPaths(Make1D<uint8_t>(DType::kU8, zeros).view, "u8");
  EXPECT_EQ(z2.max, 255.0);
  EXPECT_EQ(z2.min_nonzero_abs, 1.0);

  const TensorStats u16 =
      BothPaths(Make1D<uint16_t>(DType::kU16, std::vector<uint16_t>(40, 65535)).view, "u16");
  EXPECT_EQ(u16.max, 65535.0);
  const TensorStats u32 = BothPaths(Make1D<uint32_t>(DType::kU32, {4000000000u, 7u}).view, "u32");
  EXPECT_EQ(u32.max, 4000000000.0);
  EXPECT_EQ(u32.min, 7.0);
}

TEST(StatsTest, ExactIntegerExtremesPastWhatADoubleHolds) {
  // INT64_MAX and INT64_MAX - 1 are the same double; the exact extremes tell them apart.
  const int64_t hi = std::numeric_limits<int64_t>::max();
  const int64_t lo = std::numeric_limits<int64_t>::min();
  const Owned t = Make1D<int64_t>(DType::kI64, {hi - 1, lo + 1, hi, 7, lo});
  EXPECT_EQ(ExactIntegerExtremes<int64_t>(t.view), std::make_pair(hi, lo));
  // Strided: every other element of [0, 2^53 + 1, 1, 2^53 + 3], so 2^53 + 3 is skipped.
  const int64_t big = (int64_t{1} << 53) + 1;
  Owned strided = Make1D<int64_t>(DType::kI64, {0, big, 1, big + 2});
  strided.view.shape = {2};
  strided.view.strides = {2};
  EXPECT_EQ(ExactIntegerExtremes<int64_t>(strided.view), std::make_pair(int64_t{1}, int64_t{0}));
  strided.view.byte_offset = sizeof(int64_t);  // now [2^53 + 1, 2^53 + 3]
  EXPECT_EQ(ExactIntegerExtremes<int64_t>(strided.view), std::make_pair(big + 2, big));
  // Strided over several of the walk's blocks: every other one of 20,000, the extremes late.
  std::vector<int64_t> many(20000, 5);
  many[19998] = hi - 1;  // taken (even position)
  many[19999] = hi;      // skipped
  many[15000] = lo + 1;  // taken
  Owned wide = Make1D<int64_t>(DType::kI64, many);
  wide.view.shape = {10000};
  wide.view.strides = {2};
  EXPECT_EQ(ExactIntegerExtremes<int64_t>(wide.view), std::make_pair(hi - 1, lo + 1));

  // Unsigned above INT64_MAX, min included (a signed cast would make them negative).
  const uint64_t top = std::numeric_limits<uint64_t>::max();
  const Owned u = Make1D<uint64_t>(DType::kU64, {top - 1, top, (uint64_t{1} << 63) + 1});
  EXPECT_EQ(ExactIntegerExtremes<uint64_t>(u.view), std::make_pair(top, (uint64_t{1} << 63) + 1));

  // Another dtype, an empty tensor, no data: none.
  EXPECT_EQ(ExactIntegerExtremes<uint64_t>(t.view), std::nullopt);
  EXPECT_EQ(ExactIntegerExtremes<int64_t>(u.view), std::nullopt);
  const Owned f = Make1D<double>(DType::kF64, {1.0});
  EXPECT_EQ(ExactIntegerExtremes<int64_t>(f.view), std::nullopt);
  const Owned empty = Make<int64_t>(DType::kI64, {0}, {});
  EXPECT_EQ(ExactIntegerExtremes<int64_t>(empty.view), std::nullopt);
  TensorView no_data = t.view;
  no_data.data = nullptr;
  EXPECT_EQ(ExactIntegerExtremes<int64_t>(no_data), std::nullopt);
}

TEST(StatsTest, HalfAndBFloat16) {
  // f16: 1.0, -2.0, +inf, smallest subnormal 2^-24, -0.0
  const Owned h = Make1D<uint16_t>(DType::kF16, {0x3C00, 0xC000, 0x7C00, 0x0001, 0x8000});
  const TensorStats sh = BothPaths(h.view, "f16");
  EXPECT_EQ(sh.max, kInf);
  EXPECT_EQ(sh.min, -2.0);
  EXPECT_EQ(sh.pos_inf_count, 1);
  EXPECT_EQ(sh.zero_count, 1);
  EXPECT_EQ(sh.min_nonzero_abs, std::ldexp(1.0, -24));
  EXPECT_EQ(sh.norm, kInf);

  // bf16: 1.0, -inf, NaN, 65280 (0x477F)
  const Owned b = Make1D<uint16_t>(DType::kBF16, {0x3F80, 0xFF80, 0x7FC0, 0x477F});
  const TensorStats sb = BothPaths(b.view, "bf16");
  EXPECT_TRUE(std::isnan(sb.max));
  EXPECT_EQ(sb.nan_count, 1);
  EXPECT_EQ(sb.neg_inf_count, 1);
  EXPECT_EQ(sb.max_abs, kInf);
  EXPECT_EQ(sb.min_nonzero_abs, 1.0);

  const Owned b2 = Make1D<uint16_t>(DType::kBF16, {0x3F80, 0x477F, 0xBF80});
  const TensorStats sb2 = BothPaths(b2.view, "bf16 finite");
  EXPECT_EQ(sb2.max, 65280.0);
  EXPECT_EQ(sb2.min, -1.0);
  EXPECT_EQ(sb2.mean, 65280.0 / 3.0);
  EXPECT_EQ(sb2.norm, std::sqrt(1.0 + 65280.0 * 65280.0 + 1.0));
}

TEST(StatsTest, Float8) {
  // e4m3fn: 1.0 (0x38), 448 (0x7E, the largest), NaN (0x7F), -0.0 (0x80)
  const TensorStats a =
      BothPaths(Make1D<uint8_t>(DType::kF8E4M3FN, {0x38, 0x7E, 0x7F, 0x80}).view, "e4m3fn");
  EXPECT_TRUE(std::isnan(a.max));
  EXPECT_EQ(a.nan_count, 1);
  EXPECT_EQ(a.max_abs, 448.0);
  EXPECT_EQ(a.zero_count, 1);
  const TensorStats a2 =
      BothPaths(Make1D<uint8_t>(DType::kF8E4M3FN, {0x38, 0x7E, 0x80}).view, "e4m3fn finite");
  EXPECT_EQ(a2.max, 448.0);
  EXPECT_EQ(a2.min, 0.0);
  EXPECT_TRUE(std::signbit(a2.min)) << "the only zero is -0.0";
  EXPECT_EQ(a2.mean, 449.0 / 3.0);
  // e5m2: +inf (0x7C), -1.0 (0xBC)
  const TensorStats b = BothPaths(Make1D<uint8_t>(DType::kF8E5M2, {0x7C, 0xBC}).view, "e5m2");
  EXPECT_EQ(b.max, kInf);
  EXPECT_EQ(b.min, -1.0);
  EXPECT_EQ(b.pos_inf_count, 1);
  // fnuz: 0x80 is the NaN.
  const TensorStats c =
      BothPaths(Make1D<uint8_t>(DType::kF8E4M3FNUZ, {0x80, 0x40}).view, "e4m3fnuz");
  EXPECT_EQ(c.nan_count, 1);
  EXPECT_EQ(c.max_abs, static_cast<double>(F8ToF32(DType::kF8E4M3FNUZ, 0x40)));
  const TensorStats d =
      BothPaths(Make1D<uint8_t>(DType::kF8E5M2FNUZ, {0x80, 0x00}).view, "e5m2fnuz");
  EXPECT_EQ(d.nan_count, 1);
  EXPECT_EQ(d.zero_count, 1);
}

TEST(StatsTest, MisalignedData) {
  std::vector<double> values(1000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(static_cast<double>(i));
  const TensorStats aligned = BothPaths(Make1D<double>(DType::kF64, values).view, "aligned");
  const TensorStats shifted =
      BothPaths(Make1D<double>(DType::kF64, values, /*misalign=*/true).view, "misaligned");
  ExpectIdentical(aligned, shifted, "alignment");
}

TEST(StatsTest, InvalidViews) {
  std::vector<float> data(4, 1.0f);
  TensorView v = TensorView::Contiguous(data.data(), DType::kF32, {2, 2});
  v.shape = {2, -2};
  Result<TensorStats> r = ComputeStats(v);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("negative size"), std::string::npos);

  v.shape = {2, 2};
  v.strides = {-2, 1};
  r = ComputeStats(v);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("negative stride"), std::string::npos);

  v.strides = {1};
  r = ComputeStats(v);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("strides"), std::string::npos);

  v.shape = {int64_t{1} << 40, int64_t{1} << 40};
  v.strides = {0, 0};
  r = ComputeStats(v);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kOutOfRange);

  v.shape = {int64_t{1} << 62, 1};
  v.strides = {1, 1};  // 2^62 f32 elements: the byte extent overflows
  r = ComputeStats(v);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kOutOfRange);
  EXPECT_NE(r.error().message().find("extent"), std::string::npos);

  TensorView null_data;
  null_data.shape = {3};
  null_data.strides = {1};
  r = ComputeStats(null_data);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
}

// ----------------------------------------------------------------------------------------------
// Random data: SIMD vs scalar on every target, threads, strides, a long-double reference.

// Random bytes for `n` elements of `dtype`. Floating dtypes get zeros of both signs and, when
// `specials`, NaN and infinities (narrow floats: random codes). Without specials the values span
// a narrow range of magnitudes, where every rounding of the sums shows (a changed summation order
// or a fused multiply-add would change the result); with specials, many magnitudes.
std::vector<std::byte> RandomBytes(DType dtype, int64_t n, bool specials, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> bytes(static_cast<size_t>(n * ItemSize(dtype)));
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  // f16 overflows past 65504 and flushes below 2^-24: keep its finite values inside its range.
  const int max_exp = !specials ? 2 : dtype == DType::kF16 ? 12 : 30;
  std::uniform_int_distribution<int> exponent(-max_exp, max_exp);
  std::uniform_int_distribution<int> pick(0, 999);
  const auto value = [&]() -> double {
    const int p = pick(rng);
    if (p < 20) return p < 10 ? 0.0 : -0.0;
    if (specials && p >= 990) {
      if (p < 994) return kNaN;
      return p < 997 ? kInf : -kInf;
    }
    return std::ldexp(unit(rng), exponent(rng));
  };
  for (int64_t i = 0; i < n; ++i) {
    std::byte* out = bytes.data() + i * ItemSize(dtype);
    switch (dtype) {
      case DType::kF64: {
        const double v = value();
        std::memcpy(out, &v, 8);
        break;
      }
      case DType::kF32:
      case DType::kC64: {
        const float v = static_cast<float>(value());
        std::memcpy(out, &v, 4);
        if (dtype == DType::kC64) {
          const float w = static_cast<float>(value());
          std::memcpy(out + 4, &w, 4);
        }
        break;
      }
      case DType::kC128: {
        const double v[2] = {value(), value()};
        std::memcpy(out, v, 16);
        break;
      }
      case DType::kF16:
      case DType::kBF16: {
        uint16_t code = static_cast<uint16_t>(rng());
        if (!specials) {
          code = dtype == DType::kF16 ? F32ToF16(static_cast<float>(value()))
                                      : F32ToBF16(static_cast<float>(value()));
        }
        std::memcpy(out, &code, 2);
        break;
      }
      case DType::kF8E4M3FN:
      case DType::kF8E5M2:
      case DType::kF8E4M3FNUZ:
      case DType::kF8E5M2FNUZ: {
        uint8_t code = static_cast<uint8_t>(rng());
        if (!specials) code = F32ToF8(dtype, static_cast<float>(std::fmod(value(), 8.0)));
        std::memcpy(out, &code, 1);
        break;
      }
      default: {
        // Integers and bool: random bits with some zeros.
        uint64_t bits = pick(rng) < 50 ? 0 : rng();
        if (dtype == DType::kBool) bits = bits & 1;
        std::memcpy(out, &bits, static_cast<size_t>(ItemSize(dtype)));
        break;
      }
    }
  }
  return bytes;
}

std::vector<DType> AllDTypes() {
  std::vector<DType> all;
  for (const DTypeTraits& t : kDTypeTraits) all.push_back(t.dtype);
  return all;
}

TEST(StatsTest, SimdMatchesScalarOnEveryTargetDTypeAndSize) {
  const std::vector<int64_t> sizes = {0,
                                      1,
                                      7,
                                      8,
                                      9,
                                      15,
                                      16,
                                      17,
                                      31,
                                      32,
                                      33,
                                      63,
                                      64,
                                      65,
                                      100,
                                      kStatsChunk - 1,
                                      kStatsChunk,
                                      kStatsChunk + 1,
                                      3 * kStatsChunk + 1234};
  for (DType dtype : AllDTypes()) {
    for (bool specials : {false, true}) {
      if (!IsFloating(dtype) && !IsComplex(dtype) && specials) continue;
      for (int64_t n : sizes) {
        const uint32_t seed = static_cast<uint32_t>(n * 131 + static_cast<int>(dtype));
        const std::vector<std::byte> bytes = RandomBytes(dtype, n, specials, seed);
        const Owned t = FromBytes(dtype, {n}, bytes.data(), bytes.size());
        const std::string what = std::string(Name(dtype)) + " n=" + std::to_string(n) +
                                 (specials ? " with specials" : "");
        const TensorStats scalar = Stats(t.view, /*scalar=*/true);
        ForEachTarget([&] { ExpectIdentical(Stats(t.view), scalar, what); });
      }
    }
  }
}

TEST(StatsTest, SpecialsInsideTheVectorPathOnly) {
  // One NaN (or Inf) among many finite values, at every position of a 64-element run, so that
  // it lands in each lane of the vector loop, and the careful pass must take over.
  ForEachTarget([&] {
    for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
      for (double special : {kNaN, kInf, -kInf}) {
        for (int pos = 0; pos < 64; ++pos) {
          std::vector<double> values(64);
          for (int i = 0; i < 64; ++i) values[static_cast<size_t>(i)] = 0.25 * (i - 20);
          values[static_cast<size_t>(pos)] = special;
          std::vector<std::byte> bytes(64 * static_cast<size_t>(ItemSize(dtype)));
          for (int i = 0; i < 64; ++i) {
            std::byte* out = bytes.data() + i * ItemSize(dtype);
            const double v = values[static_cast<size_t>(i)];
            if (dtype == DType::kF64) {
              std::memcpy(out, &v, 8);
            } else if (dtype == DType::kF32) {
              const float f = static_cast<float>(v);
              std::memcpy(out, &f, 4);
            } else {
              const uint16_t code = dtype == DType::kF16 ? F32ToF16(static_cast<float>(v))
                                                         : F32ToBF16(static_cast<float>(v));
              std::memcpy(out, &code, 2);
            }
          }
          const Owned t = FromBytes(dtype, {64}, bytes.data(), bytes.size());
          const TensorStats s = BothPaths(t.view, "special at " + std::to_string(pos));
          EXPECT_EQ(s.nan_count, std::isnan(special) ? 1 : 0);
          EXPECT_EQ(s.pos_inf_count, special == kInf ? 1 : 0);
          EXPECT_EQ(s.neg_inf_count, special == -kInf ? 1 : 0);
          EXPECT_EQ(s.zero_count, pos == 20 ? 0 : 1);
          if (std::isnan(special)) {
            EXPECT_EQ(s.max_abs, pos == 63 ? 0.25 * 42 : 0.25 * 43);
          } else {
            EXPECT_EQ(s.max_abs, kInf);
          }
        }
      }
    }
  });
}

TEST(StatsTest, EveryF16AndBF16CodeDecodesExactlyInTheVectorPath) {
  // 64 copies of a positive code and 64 of its negation go through the vector loads; max and min
  // must be the scalar decoder's values.
  ForEachTarget([&] {
    for (DType dtype : {DType::kF16, DType::kBF16}) {
      for (uint16_t code = 0; code < 0x8000; ++code) {
        std::vector<uint16_t> codes(64, code);
        codes.resize(128, static_cast<uint16_t>(code | 0x8000));
        const TensorStats s = Stats(Make1D<uint16_t>(dtype, codes).view);
        const double want = dtype == DType::kF16 ? F16ToF32(code) : BF16ToF32(code);
        if (std::isnan(want)) {
          ASSERT_EQ(s.nan_count, 128) << Name(dtype) << " code " << code;
        } else if (want == 0.0) {
          ASSERT_EQ(s.zero_count, 128) << Name(dtype) << " code " << code;
          ASSERT_FALSE(std::signbit(s.max));  // +0.0 present
        } else {
          ASSERT_EQ(s.max, want) << Name(dtype) << " code " << code;
          ASSERT_EQ(s.min, -want) << Name(dtype) << " code " << code;
          ASSERT_EQ(s.min_nonzero_abs, want) << Name(dtype) << " code " << code;
          ASSERT_EQ(s.zero_count, 0) << Name(dtype) << " code " << code;
        }
      }
    }
  });
}

TEST(StatsTest, ThreadCountDoesNotChangeResults) {
  ThreadPool one(1);
  ThreadPool two(2);
  ThreadPool seven(7);
  const int64_t n = 5 * kStatsChunk + 77;
  for (DType dtype : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16, DType::kI32, DType::kC64,
                      DType::kF8E5M2, DType::kBool}) {
    const std::vector<std::byte> bytes = RandomBytes(dtype, n, IsFloating(dtype), 42);
    const Owned t = FromBytes(dtype, {n}, bytes.data(), bytes.size());
    for (bool scalar : {false, true}) {
      const TensorStats base = Stats(t.view, scalar, &one);
      const std::string what = std::string(Name(dtype)) + (scalar ? " scalar" : " simd");
      ExpectIdentical(Stats(t.view, scalar, &two), base, what + " 2 threads");
      ExpectIdentical(Stats(t.view, scalar, &seven), base, what + " 7 threads");
      ExpectIdentical(Stats(t.view, scalar), base, what + " default pool");
    }
  }
}

// A view over `base` with `shape`, `strides` and an element offset.
TensorView ViewOf(const Owned& base, std::vector<int64_t> shape, std::vector<int64_t> strides,
                  int64_t offset_elems) {
  TensorView v = base.view;
  v.shape = std::move(shape);
  v.strides = std::move(strides);
  v.byte_offset = base.view.byte_offset + offset_elems * ItemSize(base.view.dtype);
  return v;
}

void ExpectStridedMatchesCopy(const TensorView& view, const std::string& what) {
  Result<Tensor> copy = Tensor::CopyOf(view);
  ASSERT_TRUE(copy.ok());
  ASSERT_TRUE(copy->view().is_contiguous());
  for (bool scalar : {false, true}) {
    ExpectIdentical(Stats(view, scalar), Stats(copy->view(), scalar),
                    what + (scalar ? " scalar" : " simd"));
  }
  BothPaths(view, what);
}

TEST(StatsTest, StridedViewsMatchContiguousCopies) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16, DType::kC64,
                      DType::kC128, DType::kI16, DType::kF8E4M3FN, DType::kBool}) {
    SCOPED_TRACE(std::string(Name(dtype)));
    const int64_t rows = 300;
    const int64_t cols = 500;  // 150000 elements: more than two chunks
    const std::vector<std::byte> bytes = RandomBytes(dtype, rows * cols, true, 7);
    const Owned base = FromBytes(dtype, {rows, cols}, bytes.data(), bytes.size());
    ExpectStridedMatchesCopy(ViewOf(base, {cols, rows}, {1, cols}, 0), "transposed");
    ExpectStridedMatchesCopy(ViewOf(base, {rows, 450}, {cols, 1}, 20), "column slice");
    ExpectStridedMatchesCopy(ViewOf(base, {rows / 2, 166}, {2 * cols, 3}, 1), "step slices");
    ExpectStridedMatchesCopy(ViewOf(base, {1000, 257}, {0, 1}, 11), "broadcast rows");
    ExpectStridedMatchesCopy(ViewOf(base, {257, 700}, {1, 0}, 3), "broadcast columns");
    ExpectStridedMatchesCopy(ViewOf(base, {5, 6, 10, 50}, {10, 2 * cols, cols * 12 / 10, 1}, 0),
                             "4-d permuted");
    ExpectStridedMatchesCopy(ViewOf(base, {1, rows, 1, cols}, {999, cols, 12345, 1}, 0),
                             "size-1 dims with odd strides");
  }
}

// A long-double reference computed naively from the decoded values.
struct Reference {
  long double sum = 0;
  long double sumsq = 0;
  double max = -kInf;
  double min = kInf;
};

TEST(StatsTest, AgreesWithNaiveLongDoubleReference) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16}) {
    for (int64_t n : {int64_t{1000}, 4 * kStatsChunk + 999}) {
      const std::vector<std::byte> bytes = RandomBytes(dtype, n, false, 99);
      const Owned t = FromBytes(dtype, {n}, bytes.data(), bytes.size());
      Reference ref;
      long double abs_sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        const std::byte* p = bytes.data() + i * ItemSize(dtype);
        double x = 0;
        if (dtype == DType::kF64) {
          std::memcpy(&x, p, 8);
        } else if (dtype == DType::kF32) {
          float f;
          std::memcpy(&f, p, 4);
          x = f;
        } else {
          uint16_t code;
          std::memcpy(&code, p, 2);
          x = dtype == DType::kF16 ? F16ToF32(code) : BF16ToF32(code);
        }
        ref.sum += x;
        abs_sum += std::fabs(static_cast<long double>(x));
        ref.sumsq += static_cast<long double>(x) * x;
        ref.max = std::max(ref.max, x);
        ref.min = std::min(ref.min, x);
      }
      for (bool scalar : {false, true}) {
        SCOPED_TRACE(std::string(Name(dtype)) + " n=" + std::to_string(n) +
                     (scalar ? " scalar" : " simd"));
        const TensorStats s = Stats(t.view, scalar);
        const double mean = static_cast<double>(ref.sum / n);
        const double norm = static_cast<double>(std::sqrt(ref.sumsq));
        // The error of a double sum is bounded relative to the sum of |x|.
        EXPECT_NEAR(s.mean, mean, 1e-13 * static_cast<double>(abs_sum / n));
        EXPECT_NEAR(s.norm, norm, 1e-13 * norm);
        EXPECT_EQ(s.max, ref.max);
        EXPECT_EQ(s.min, ref.min);
      }
    }
  }
}

// The documented reduction order, re-implemented here: lanes k % 8 per chunk, the lane tree,
// chunks in order. The library must match it bit for bit, not just approximately.
TEST(StatsTest, FollowsTheDocumentedReductionOrder) {
  for (int64_t n : {int64_t{31}, int64_t{1000}, 3 * kStatsChunk + 1001}) {
    std::mt19937_64 rng(static_cast<uint64_t>(n));
    std::uniform_real_distribution<double> dist(-1e3, 1e3);  // one magnitude: every rounding shows
    std::vector<double> values(static_cast<size_t>(n));
    for (double& v : values) v = dist(rng);
    double total = 0.0;
    double total_sq = 0.0;
    for (int64_t c = 0; c * kStatsChunk < n; ++c) {
      double lanes[8] = {};
      double lanes_sq[8] = {};
      for (int64_t k = 0; k < kStatsChunk && c * kStatsChunk + k < n; ++k) {
        const double x = values[static_cast<size_t>(c * kStatsChunk + k)];
        lanes[k % 8] = lanes[k % 8] + x;
        const double sq = x * x;
        lanes_sq[k % 8] = lanes_sq[k % 8] + sq;
      }
      const auto tree = [](const double* l) {
        return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
      };
      total = total + tree(lanes);
      total_sq = total_sq + tree(lanes_sq);
    }
    const Owned t = Make1D<double>(DType::kF64, values);
    ForEachTarget([&] {
      for (bool scalar : {false, true}) {
        SCOPED_TRACE("n=" + std::to_string(n) + (scalar ? " scalar" : " simd"));
        const TensorStats s = Stats(t.view, scalar);
        EXPECT_EQ(Bits(s.mean), Bits(total / static_cast<double>(n)));
        EXPECT_EQ(Bits(s.norm), Bits(std::sqrt(total_sq)));
      }
    });
  }
}

TEST(StatsTest, KernelNameAndForceScalar) {
  const std::vector<std::string> targets = detail::StatsSimdTargets();
  ::unsetenv("NUMPROBE_FORCE_SCALAR");
  const std::string name = StatsKernelName();
  EXPECT_FALSE(name.empty());
  if (!targets.empty()) {
    // The default is the best target (the first one listed).
    EXPECT_EQ(name, targets.front() == "SCALAR" ? "scalar" : targets.front());
  } else {
    EXPECT_EQ(name, "scalar");
  }
  ::setenv("NUMPROBE_FORCE_SCALAR", "1", 1);
  EXPECT_EQ(std::string(StatsKernelName()), "scalar");
  const std::vector<std::byte> bytes = RandomBytes(DType::kF32, 1000, true, 3);
  const Owned t = FromBytes(DType::kF32, {1000}, bytes.data(), bytes.size());
  const TensorStats forced = Stats(t.view);
  ::unsetenv("NUMPROBE_FORCE_SCALAR");
  ExpectIdentical(forced, Stats(t.view, /*scalar=*/true), "env forces the scalar path");
  EXPECT_FALSE(detail::ForceStatsSimdTarget("NO_SUCH_TARGET"));
}

}  // namespace
}  // namespace numprobe
