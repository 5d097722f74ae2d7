// Highway kernels of ComputeStats, compiled once per SIMD target (foreach_target.h) and chosen at
// run time (HWY_DYNAMIC_DISPATCH). They reproduce the scalar reference exactly: each run keeps the
// 8 double sum lanes of stats_internal.h in 8 / Lanes(double) vectors, adds element k to lane
// k % 8 in element order with a separate Mul and Add (never MulAdd; the library is built with
// -ffp-contract=off), and leaves the run's last elements (fewer than a vector group) to the
// scalar update. Extremes and counts are order-independent and exact, so they are computed in
// the input's own precision: a fast pass assumes no NaN/Inf (checked afterwards through the
// sum-of-squares lanes) and a careful pass redoes the extremes of a run that has any.
#if defined(NUMPROBE_WITH_HWY)

#include <cstring>
#include <string>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/stats_hwy.cc"
#include <hwy/cache_control.h>
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "numprobe/float_convert.h"

#include "kernels/stats_internal.h"

HWY_BEFORE_NAMESPACE();
namespace numprobe::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// HWY_SCALAR (the static target with GCC < 12.3, one lane per vector) gets no kernels:
// SelectRunFn returns nullptr there and ComputeStats uses the scalar reference.
#if HWY_TARGET != HWY_SCALAR

// ---------------------------------------------------------------------------------------------
// Loads of kN consecutive elements as f32 lanes (all conversions are exact).

template <SimdInput kIn>
constexpr size_t InputBytes() {
  return kIn == SimdInput::kF32 ? 4 : 2;
}

// Scalar decode of one element, for the run's tail (same values as the vector loads).
template <SimdInput kIn>
HWY_INLINE double DecodeOne(const uint8_t* p) {
  if constexpr (kIn == SimdInput::kF32) {
    float v = 0;
    std::memcpy(&v, p, sizeof(v));
    return v;
  } else {
    uint16_t bits = 0;
    std::memcpy(&bits, p, sizeof(bits));
    if constexpr (kIn == SimdInput::kF16) {
      return F16ToF32(bits);
    } else {
      return BF16ToF32(bits);
    }
  }
}

// f16 codes (in u32 lanes) to f32, exactly: normals by rebiasing, Inf/NaN by setting the
// exponent to all ones, subnormals through an exact integer conversion times 2^-24.
template <class DF>
HWY_INLINE hn::Vec<DF> F16CodesToF32(DF df, hn::Vec<hn::RebindToUnsigned<DF>> h) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const auto sign = hn::ShiftLeft<16>(hn::And(h, hn::Set(du, 0x8000u)));
  const auto em = hn::And(h, hn::Set(du, 0x7FFFu));
  const auto exp = hn::ShiftRight<10>(em);
  const auto normal = hn::Add(hn::ShiftLeft<13>(em), hn::Set(du, (127u - 15u) << 23));
  const auto special = hn::Or(hn::ShiftLeft<13>(em), hn::Set(du, 0x7F800000u));
  const auto subnormal = hn::BitCast(
      du, hn::Mul(hn::ConvertTo(df, hn::BitCast(di, em)), hn::Set(df, 1.0f / 16777216.0f)));
  const auto magnitude =
      hn::IfThenElse(hn::Eq(exp, hn::Zero(du)), subnormal,
                     hn::IfThenElse(hn::Eq(exp, hn::Set(du, 0x1Fu)), special, normal));
  return hn::BitCast(df, hn::Or(magnitude, sign));
}

template <SimdInput kIn, class DF>
HWY_INLINE hn::Vec<DF> LoadAsF32(DF df, const uint8_t* p) {
  if constexpr (kIn == SimdInput::kF32) {
    return hn::LoadU(df, reinterpret_cast<const float*>(p));
  } else {
    const hn::RebindToUnsigned<DF> du;
    const hn::Rebind<uint16_t, DF> du16;
    const auto codes = hn::PromoteTo(du, hn::LoadU(du16, reinterpret_cast<const uint16_t*>(p)));
    if constexpr (kIn == SimdInput::kBF16) {
      return hn::BitCast(df, hn::ShiftLeft<16>(codes));
    } else {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
      // F16C's conversion is exact (subnormals, Inf and NaN included).
      (void)codes;
      const hn::Rebind<hwy::float16_t, DF> dh;
      return hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(p)));
#else
      return F16CodesToF32(df, codes);
#endif
    }
  }
}

// Loads are asked for kPrefetchBytes ahead of the one in use. These loops carry some 25 vector
// instructions per 64 bytes of f32 (twice that per 64 bytes of bf16 or f16): out of cache, the
// reorder window then holds too few loads in flight, and the hardware prefetcher did not make up
// for it. On this project's AVX-512 VM a 64 MiB f32 tensor was read at 6.4 GB/s (25 GB/s is what
// a plain loop reads), bf16 at 2.1; in cache the same loops run at 24 and 10 GB/s. 4 KiB ahead
// was the shortest distance at full speed (1 KiB: half of it); a prefetch never faults, but the
// address stays inside the run so that no pointer is formed past its end.
constexpr size_t kPrefetchBytes = 4096;

HWY_INLINE void PrefetchAhead(const uint8_t* p, size_t offset, size_t run_bytes) {
  const size_t ahead = offset + kPrefetchBytes;
  hwy::Prefetch(p + (ahead < run_bytes ? ahead : run_bytes - 1));
}

// ---------------------------------------------------------------------------------------------
// Extremes and counts of float vectors, on the bit patterns: for non-NaN values the unsigned
// order of |x|'s bits is the order of |x|, a +0.0 is the only all-zero pattern, and |x| - 1
// wraps zeros to the largest unsigned value so that a plain Min finds the smallest non-zero |x|.

template <class DF>
struct FloatBits {
  using T = hn::TFromD<DF>;
  using DU = hn::RebindToUnsigned<DF>;
  using U = hn::TFromD<DU>;
  static constexpr U kAbsMask = static_cast<U>(~U{0} >> 1);
  static constexpr U kInfBits =
      static_cast<U>(sizeof(T) == 4 ? uint64_t{0x7F800000u} : uint64_t{0x7FF0000000000000u});
  static constexpr U kNegInfBits = static_cast<U>(kInfBits | ~kAbsMask);
  static constexpr U kAllOnes = static_cast<U>(~U{0});

  static T FromBits(U bits) {
    T value;
    std::memcpy(&value, &bits, sizeof(value));
    return value;
  }
};

// Folds the lane values of max, min, smallest |x| - 1 and smallest bit pattern into `part`.
template <class DF>
HWY_INLINE void ReduceCommon(DF df, hn::Vec<DF> max, hn::Vec<DF> min,
                             hn::Vec<hn::RebindToUnsigned<DF>> nonzero_min,
                             hn::Vec<hn::RebindToUnsigned<DF>> bits_min, StatsAcc* part) {
  using B = FloatBits<DF>;
  const typename B::DU du;
  constexpr size_t kMax = hn::MaxLanes(DF());
  HWY_ALIGN typename B::T max_lanes[kMax];
  HWY_ALIGN typename B::T min_lanes[kMax];
  HWY_ALIGN typename B::U nonzero_lanes[kMax];
  HWY_ALIGN typename B::U bits_lanes[kMax];
  hn::Store(max, df, max_lanes);
  hn::Store(min, df, min_lanes);
  hn::Store(nonzero_min, du, nonzero_lanes);
  hn::Store(bits_min, du, bits_lanes);
  typename B::U nonzero = B::kAllOnes;
  typename B::U bits = B::kAllOnes;
  for (size_t i = 0; i < hn::Lanes(df); ++i) {
    if (max_lanes[i] > part->max) part->max = max_lanes[i];
    if (min_lanes[i] < part->min) part->min = min_lanes[i];
    if (nonzero_lanes[i] < nonzero) nonzero = nonzero_lanes[i];
    if (bits_lanes[i] < bits) bits = bits_lanes[i];
  }
  if (nonzero != B::kAllOnes) part->min_nonzero_abs = B::FromBits(nonzero + 1);
  part->pos_zero_seen = bits == 0;
}

// Valid only for runs without NaN or Inf: the caller checks the sum-of-squares lanes afterwards
// (x * x of a NaN or an Inf is not finite, and a non-finite lane stays so) and otherwise redoes
// the run with CarefulExtremes. Without NaN, max_abs is the larger of |max| and |min|.
template <class DF>
struct FastExtremes {
  using B = FloatBits<DF>;
  hn::Vec<DF> max, min;
  hn::Vec<typename B::DU> nonzero_min, bits_min;
  size_t zero_count = 0;

  explicit FastExtremes(DF df) {
    const typename B::DU du;
    max = hn::Set(df, -std::numeric_limits<typename B::T>::infinity());
    min = hn::Set(df, std::numeric_limits<typename B::T>::infinity());
    nonzero_min = bits_min = hn::Set(du, B::kAllOnes);
  }

  HWY_INLINE void Update(hn::Vec<DF> v) {
    const typename B::DU du;
    const auto bits = hn::BitCast(du, v);
    const auto abs = hn::And(bits, hn::Set(du, B::kAbsMask));
    max = hn::Max(max, v);
    min = hn::Min(min, v);
    nonzero_min = hn::Min(nonzero_min, hn::Sub(abs, hn::Set(du, typename B::U{1})));
    bits_min = hn::Min(bits_min, bits);
    zero_count += hn::CountTrue(du, hn::Eq(abs, hn::Zero(du)));
  }

  void MergeInto(StatsAcc* acc) const {
    const DF df;
    StatsAcc part;
    ResetAcc(&part);
    ReduceCommon(df, max, min, nonzero_min, bits_min, &part);
    part.max_abs = std::fmax(std::fabs(part.max), std::fabs(part.min));
    part.zero_count = static_cast<int64_t>(zero_count);
    MergeExtremes(acc, part);
  }
};

template <class DF>
struct CarefulExtremes {
  using B = FloatBits<DF>;
  hn::Vec<DF> max, min;
  hn::Vec<typename B::DU> abs_max, nonzero_min, bits_min;
  size_t zero_count = 0;
  size_t nan_count = 0;
  size_t pos_inf_count = 0;
  size_t neg_inf_count = 0;

  explicit CarefulExtremes(DF df) {
    const typename B::DU du;
    max = hn::Set(df, -std::numeric_limits<typename B::T>::infinity());
    min = hn::Set(df, std::numeric_limits<typename B::T>::infinity());
    abs_max = hn::Zero(du);
    nonzero_min = bits_min = hn::Set(du, B::kAllOnes);
  }

  HWY_INLINE void Update(hn::Vec<DF> v) {
    const DF df;
    const typename B::DU du;
    const auto bits = hn::BitCast(du, v);
    const auto abs = hn::And(bits, hn::Set(du, B::kAbsMask));
    const auto nan = hn::IsNaN(v);
    const auto nan_u = hn::RebindMask(du, nan);
    constexpr auto kInf = std::numeric_limits<typename B::T>::infinity();
    max = hn::Max(max, hn::IfThenElse(nan, hn::Set(df, -kInf), v));
    min = hn::Min(min, hn::IfThenElse(nan, hn::Set(df, kInf), v));
    const auto abs_ok = hn::IfThenZeroElse(nan_u, abs);  // a NaN counts as zero, then wraps out
    abs_max = hn::Max(abs_max, abs_ok);
    nonzero_min = hn::Min(nonzero_min, hn::Sub(abs_ok, hn::Set(du, typename B::U{1})));
    bits_min = hn::Min(bits_min, bits);
    zero_count += hn::CountTrue(du, hn::Eq(abs, hn::Zero(du)));
    nan_count += hn::CountTrue(du, nan_u);
    pos_inf_count += hn::CountTrue(du, hn::Eq(bits, hn::Set(du, B::kInfBits)));
    neg_inf_count += hn::CountTrue(du, hn::Eq(bits, hn::Set(du, B::kNegInfBits)));
  }

  void MergeInto(StatsAcc* acc) const {
    const DF df;
    const typename B::DU du;
    StatsAcc part;
    ResetAcc(&part);
    ReduceCommon(df, max, min, nonzero_min, bits_min, &part);
    HWY_ALIGN typename B::U abs_lanes[hn::MaxLanes(DF())];
    hn::Store(abs_max, du, abs_lanes);
    typename B::U abs = 0;
    for (size_t i = 0; i < hn::Lanes(du); ++i) abs = abs_lanes[i] > abs ? abs_lanes[i] : abs;
    part.max_abs = B::FromBits(abs);
    part.zero_count = static_cast<int64_t>(zero_count);
    part.nan_count = static_cast<int64_t>(nan_count);
    part.pos_inf_count = static_cast<int64_t>(pos_inf_count);
    part.neg_inf_count = static_cast<int64_t>(neg_inf_count);
    MergeExtremes(acc, part);
  }
};

inline bool AllFinite(const double* lanes) {
  bool finite = true;
  for (int j = 0; j < kStatsLanes; ++j) finite = finite && std::isfinite(lanes[j]);
  return finite;
}

// ---------------------------------------------------------------------------------------------
// Float runs.

// f32, f16 and bf16 runs: values in f32 lanes, sums in f64 lanes.
template <SimdInput kIn>
void RunF32(const void* data, int64_t n, StatsAcc* acc) {
  const hn::ScalableTag<float> df;
  const hn::Half<decltype(df)> dh;
  const hn::Repartition<double, decltype(df)> dd;
  constexpr size_t kN = hn::MaxLanes(df);
  constexpr size_t kND = hn::MaxLanes(dd);
  static_assert(kStatsLanes % kND == 0, "a vector of doubles must divide the 8 sum lanes");
  constexpr size_t kAcc = kStatsLanes / kND;  // sum vectors: vector s holds lanes s*kND..
  constexpr size_t kGroup = kN >= kStatsLanes ? kN : kStatsLanes;
  constexpr size_t kVecs = kGroup / kN;
  constexpr size_t kBytes = InputBytes<kIn>();
  const auto* p = static_cast<const uint8_t*>(data);
  const auto count = static_cast<size_t>(n);
  const size_t main = count - count % kGroup;

  if (main > 0) {
    const bool finite_before = AllFinite(acc->sumsq);
    hn::Vec<decltype(dd)> sum[kAcc];
    hn::Vec<decltype(dd)> sumsq[kAcc];
    for (size_t s = 0; s < kAcc; ++s) {
      sum[s] = hn::LoadU(dd, acc->sum + s * kND);
      sumsq[s] = hn::LoadU(dd, acc->sumsq + s * kND);
    }
    FastExtremes<decltype(df)> fast(df);
    for (size_t i = 0; i < main; i += kGroup) {
      PrefetchAhead(p, i * kBytes, main * kBytes);
      for (size_t j = 0; j < kVecs; ++j) {
        const auto v = LoadAsF32<kIn>(df, p + (i + j * kN) * kBytes);
        fast.Update(v);
        // The lower half holds elements j*kN .. j*kN+kND-1, i.e. lanes of sum vector
        // (2j) % kAcc; the upper half those of vector (2j+1) % kAcc.
        const auto lo = hn::PromoteTo(dd, hn::LowerHalf(dh, v));
        const auto hi = hn::PromoteTo(dd, hn::UpperHalf(dh, v));
        const size_t s_lo = (2 * j) % kAcc;
        const size_t s_hi = (2 * j + 1) % kAcc;
        sum[s_lo] = hn::Add(sum[s_lo], lo);
        sumsq[s_lo] = hn::Add(sumsq[s_lo], hn::Mul(lo, lo));
        sum[s_hi] = hn::Add(sum[s_hi], hi);
        sumsq[s_hi] = hn::Add(sumsq[s_hi], hn::Mul(hi, hi));
      }
    }
    for (size_t s = 0; s < kAcc; ++s) {
      hn::StoreU(sum[s], dd, acc->sum + s * kND);
      hn::StoreU(sumsq[s], dd, acc->sumsq + s * kND);
    }
    if (finite_before && AllFinite(acc->sumsq)) {
      fast.MergeInto(acc);
    } else {
      CarefulExtremes<decltype(df)> careful(df);
      for (size_t i = 0; i < main; i += kN) {
        PrefetchAhead(p, i * kBytes, main * kBytes);
        careful.Update(LoadAsF32<kIn>(df, p + i * kBytes));
      }
      careful.MergeInto(acc);
    }
  }
  for (size_t i = main; i < count; ++i) {
    UpdateFloat(acc, DecodeOne<kIn>(p + i * kBytes), static_cast<int>(i % kStatsLanes));
  }
}

void RunF64(const void* data, int64_t n, StatsAcc* acc) {
  const hn::ScalableTag<double> dd;
  constexpr size_t kND = hn::MaxLanes(dd);
  static_assert(kStatsLanes % kND == 0, "a vector of doubles must divide the 8 sum lanes");
  constexpr size_t kAcc = kStatsLanes / kND;
  constexpr size_t kGroup = kND >= kStatsLanes ? kND : kStatsLanes;
  constexpr size_t kVecs = kGroup / kND;
  const auto* p = static_cast<const uint8_t*>(data);
  const auto count = static_cast<size_t>(n);
  const size_t main = count - count % kGroup;

  if (main > 0) {
    const bool finite_before = AllFinite(acc->sumsq);
    hn::Vec<decltype(dd)> sum[kAcc];
    hn::Vec<decltype(dd)> sumsq[kAcc];
    for (size_t s = 0; s < kAcc; ++s) {
      sum[s] = hn::LoadU(dd, acc->sum + s * kND);
      sumsq[s] = hn::LoadU(dd, acc->sumsq + s * kND);
    }
    FastExtremes<decltype(dd)> fast(dd);
    for (size_t i = 0; i < main; i += kGroup) {
      PrefetchAhead(p, i * 8, main * 8);
      for (size_t j = 0; j < kVecs; ++j) {
        const auto v = hn::LoadU(dd, reinterpret_cast<const double*>(p + (i + j * kND) * 8));
        fast.Update(v);
        const size_t s = j % kAcc;
        sum[s] = hn::Add(sum[s], v);
        sumsq[s] = hn::Add(sumsq[s], hn::Mul(v, v));
      }
    }
    for (size_t s = 0; s < kAcc; ++s) {
      hn::StoreU(sum[s], dd, acc->sum + s * kND);
      hn::StoreU(sumsq[s], dd, acc->sumsq + s * kND);
    }
    // A finite f64 whose square overflows also takes the careful pass: slower, still exact.
    if (finite_before && AllFinite(acc->sumsq)) {
      fast.MergeInto(acc);
    } else {
      CarefulExtremes<decltype(dd)> careful(dd);
      for (size_t i = 0; i < main; i += kND) {
        PrefetchAhead(p, i * 8, main * 8);
        careful.Update(hn::LoadU(dd, reinterpret_cast<const double*>(p + i * 8)));
      }
      careful.MergeInto(acc);
    }
  }
  for (size_t i = main; i < count; ++i) {
    double x = 0;
    std::memcpy(&x, p + i * 8, sizeof(x));
    UpdateFloat(acc, x, static_cast<int>(i % kStatsLanes));
  }
}

// ---------------------------------------------------------------------------------------------
// Integer runs (bool goes through u8): extremes in the element type, folded via IntExtremes.

template <typename T>
void RunInt(const void* data, int64_t n, StatsAcc* acc) {
  const hn::ScalableTag<T> d;
  constexpr size_t kN = hn::MaxLanes(d);
  constexpr T kLowest = std::numeric_limits<T>::lowest();
  constexpr T kHighest = std::numeric_limits<T>::max();
  const auto* p = static_cast<const uint8_t*>(data);
  const auto count = static_cast<size_t>(n);
  const size_t main = count - count % kN;
  IntExtremes<T> ext;
  if (main > 0) {
    auto vmax = hn::Set(d, kLowest);
    auto vmin = hn::Set(d, kHighest);
    // Signed: smallest positive and largest negative (sentinels where there are none).
    // Unsigned: smallest x - 1, where zeros wrap to the largest value.
    auto pos_min = hn::Set(d, kHighest);
    auto neg_max = hn::Set(d, kLowest);
    size_t zeros = 0;
    for (size_t i = 0; i < main; i += kN) {
      PrefetchAhead(p, i * sizeof(T), main * sizeof(T));
      const auto v = hn::LoadU(d, reinterpret_cast<const T*>(p + i * sizeof(T)));
      vmax = hn::Max(vmax, v);
      vmin = hn::Min(vmin, v);
      zeros += hn::CountTrue(d, hn::Eq(v, hn::Zero(d)));
      if constexpr (std::is_signed_v<T>) {
        pos_min = hn::Min(pos_min, hn::IfThenElse(hn::Gt(v, hn::Zero(d)), v, hn::Set(d, kHighest)));
        neg_max = hn::Max(neg_max, hn::IfThenElse(hn::Lt(v, hn::Zero(d)), v, hn::Set(d, kLowest)));
      } else {
        pos_min = hn::Min(pos_min, hn::Sub(v, hn::Set(d, T{1})));
      }
    }
    HWY_ALIGN T max_lanes[kN];
    HWY_ALIGN T min_lanes[kN];
    HWY_ALIGN T pos_lanes[kN];
    HWY_ALIGN T neg_lanes[kN];
    hn::Store(vmax, d, max_lanes);
    hn::Store(vmin, d, min_lanes);
    hn::Store(pos_min, d, pos_lanes);
    hn::Store(neg_max, d, neg_lanes);
    T pos = kHighest;
    T neg = kLowest;
    for (size_t i = 0; i < hn::Lanes(d); ++i) {
      if (max_lanes[i] > ext.max) ext.max = max_lanes[i];
      if (min_lanes[i] < ext.min) ext.min = min_lanes[i];
      if (pos_lanes[i] < pos) pos = pos_lanes[i];
      if (neg_lanes[i] > neg) neg = neg_lanes[i];
    }
    ext.count = static_cast<int64_t>(main);
    ext.zero_count = static_cast<int64_t>(zeros);
    if constexpr (std::is_signed_v<T>) {
      ext.has_pos = ext.max > 0;
      ext.min_pos = pos;
      ext.has_neg = ext.min < 0;
      ext.max_neg = ext.has_neg ? neg : T{0};
    } else {
      ext.has_pos = pos != kHighest;
      ext.min_pos = static_cast<T>(pos + 1);
    }
  }
  for (size_t i = main; i < count; ++i) {
    T x;
    std::memcpy(&x, p + i * sizeof(T), sizeof(x));
    ext.Update(x);
  }
  ext.MergeInto(acc);
}

#endif  // HWY_TARGET != HWY_SCALAR

StatsRunFn SelectRunFn(SimdInput input) {
#if HWY_TARGET == HWY_SCALAR
  (void)input;
  return nullptr;
#else
  switch (input) {
    case SimdInput::kF64:
      return &RunF64;
    case SimdInput::kF32:
      return &RunF32<SimdInput::kF32>;
    case SimdInput::kF16:
      return &RunF32<SimdInput::kF16>;
    case SimdInput::kBF16:
      return &RunF32<SimdInput::kBF16>;
    case SimdInput::kI64:
      return &RunInt<int64_t>;
    case SimdInput::kI32:
      return &RunInt<int32_t>;
    case SimdInput::kI16:
      return &RunInt<int16_t>;
    case SimdInput::kI8:
      return &RunInt<int8_t>;
    case SimdInput::kU64:
      return &RunInt<uint64_t>;
    case SimdInput::kU32:
      return &RunInt<uint32_t>;
    case SimdInput::kU16:
      return &RunInt<uint16_t>;
    case SimdInput::kU8:
    case SimdInput::kCount:
      break;
  }
  return &RunInt<uint8_t>;
#endif
}

int64_t TargetBit() { return HWY_TARGET; }

}  // namespace numprobe::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace numprobe::detail {

HWY_EXPORT(SelectRunFn);
HWY_EXPORT(TargetBit);

StatsRunFn HwyStatsRunFn(SimdInput input) { return HWY_DYNAMIC_DISPATCH(SelectRunFn)(input); }

const char* HwyStatsTargetName() {
  const int64_t target = HWY_DYNAMIC_DISPATCH(TargetBit)();
  return target == HWY_SCALAR ? "scalar" : hwy::TargetName(target);
}

namespace {

// The targets compiled in and supported by this CPU, before any test restriction.
const std::vector<int64_t>& AllTargets() {
  static const std::vector<int64_t> kTargets = [] {
    hwy::SetSupportedTargetsForTest(0);
    return hwy::SupportedAndGeneratedTargets();
  }();
  return kTargets;
}

}  // namespace

std::vector<std::string> StatsSimdTargets() {
  std::vector<std::string> names;
  for (int64_t target : AllTargets()) names.emplace_back(hwy::TargetName(target));
  return names;
}

bool ForceStatsSimdTarget(std::string_view name) {
  const std::vector<int64_t>& all = AllTargets();
  if (name.empty()) {
    hwy::SetSupportedTargetsForTest(0);
    return true;
  }
  for (int64_t target : all) {
    if (name == hwy::TargetName(target)) {
      hwy::SetSupportedTargetsForTest(target);
      return true;
    }
  }
  return false;
}

}  // namespace numprobe::detail
#endif  // HWY_ONCE

#endif  // NUMPROBE_WITH_HWY
