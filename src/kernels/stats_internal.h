// Internals of the statistics kernel shared by the scalar reference (stats.cc), the Highway
// kernels (stats_hwy.cc) and the tests: the partial-result record, the per-element update that
// defines the arithmetic, and the fixed reduction order. Not part of the public API.
//
// Reduction order (the determinism contract): the C-order element sequence is cut into chunks
// of kStatsChunk elements. Inside a chunk, element k adds to sum lane k % 8 and to sum-of-squares
// lane k % 8 (x * x, then add; never fused). The 8 lanes are combined by CombineLanes, and the
// chunk totals are added in chunk order. Every path performs exactly these double operations, so
// results do not depend on the thread count or the instruction set. Extremes and counts are
// order-independent and merged with exact comparisons.
#ifndef NUMPROBE_KERNELS_STATS_INTERNAL_H_
#define NUMPROBE_KERNELS_STATS_INTERNAL_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "numprobe/dtype.h"

namespace numprobe::detail {

inline constexpr int64_t kStatsChunk = int64_t{1} << 16;  // elements; never depends on threads
inline constexpr int kStatsLanes = 8;
// Kernels are called on runs of at most kStatsChunk elements that start at a chunk offset that is
// a multiple of kStatsLanes, so element i of a run goes to lane i % kStatsLanes.
static_assert(kStatsChunk % kStatsLanes == 0);

// Partial statistics of a run of elements. For floating and complex inputs the values are the
// elements (complex: |x|); integer and bool kernels fill only the extremes and zero_count.
struct StatsAcc {
  double sum[kStatsLanes];
  double sumsq[kStatsLanes];
  int64_t nan_count;
  int64_t pos_inf_count;
  int64_t neg_inf_count;
  int64_t zero_count;
  bool pos_zero_seen;      // a +0.0 element was seen (decides the sign of a zero max/min)
  double max;              // over non-NaN elements; -Inf when there are none
  double min;              // over non-NaN elements; +Inf when there are none
  double max_abs;          // over non-NaN elements; 0 when there are none
  double min_nonzero_abs;  // over non-NaN non-zero elements; +Inf when there are none
};

inline void ResetAcc(StatsAcc* a) {
  for (int j = 0; j < kStatsLanes; ++j) {
    a->sum[j] = 0.0;
    a->sumsq[j] = 0.0;
  }
  a->nan_count = a->pos_inf_count = a->neg_inf_count = a->zero_count = 0;
  a->pos_zero_seen = false;
  a->max = -std::numeric_limits<double>::infinity();
  a->min = std::numeric_limits<double>::infinity();
  a->max_abs = 0.0;
  a->min_nonzero_abs = std::numeric_limits<double>::infinity();
}

// The fixed tree over the 8 lanes: ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)).
inline double CombineLanes(const double* l) {
  const double s0 = l[0] + l[4];
  const double s1 = l[1] + l[5];
  const double s2 = l[2] + l[6];
  const double s3 = l[3] + l[7];
  return (s0 + s2) + (s1 + s3);
}

// The extremes and counts of one floating element (no sums).
inline void UpdateFloatExtremes(StatsAcc* a, double x) {
  if (std::isnan(x)) {
    ++a->nan_count;
    return;
  }
  if (x > a->max) a->max = x;
  if (x < a->min) a->min = x;
  const double ax = std::fabs(x);
  if (ax > a->max_abs) a->max_abs = ax;
  if (ax == 0.0) {
    ++a->zero_count;
    if (!std::signbit(x)) a->pos_zero_seen = true;
  } else {
    if (ax < a->min_nonzero_abs) a->min_nonzero_abs = ax;
    if (ax == std::numeric_limits<double>::infinity()) {
      if (x > 0) {
        ++a->pos_inf_count;
      } else {
        ++a->neg_inf_count;
      }
    }
  }
}

// One floating element at lane `lane`: the reference arithmetic every path reproduces.
inline void UpdateFloat(StatsAcc* a, double x, int lane) {
  a->sum[lane] = a->sum[lane] + x;
  const double sq = x * x;
  a->sumsq[lane] = a->sumsq[lane] + sq;
  UpdateFloatExtremes(a, x);
}

// Folds extremes and counts of `from` into `into` (sums are combined separately, in order).
inline void MergeExtremes(StatsAcc* into, const StatsAcc& from) {
  into->nan_count += from.nan_count;
  into->pos_inf_count += from.pos_inf_count;
  into->neg_inf_count += from.neg_inf_count;
  into->zero_count += from.zero_count;
  into->pos_zero_seen = into->pos_zero_seen || from.pos_zero_seen;
  if (from.max > into->max) into->max = from.max;
  if (from.min < into->min) into->min = from.min;
  if (from.max_abs > into->max_abs) into->max_abs = from.max_abs;
  if (from.min_nonzero_abs < into->min_nonzero_abs) into->min_nonzero_abs = from.min_nonzero_abs;
}

// |x| of an integer as an unsigned value (exact for the most negative value).
template <typename T>
constexpr std::make_unsigned_t<T> Magnitude(T x) {
  using U = std::make_unsigned_t<T>;
  if constexpr (std::is_signed_v<T>) {
    return x < 0 ? static_cast<U>(U{0} - static_cast<U>(x)) : static_cast<U>(x);
  } else {
    return x;
  }
}

// Extremes of a run of integers in their own type (exact), folded into a StatsAcc as doubles.
// Conversion to double is monotonic, so the max of the converted values is the converted max.
template <typename T>
struct IntExtremes {
  T max = std::numeric_limits<T>::lowest();
  T min = std::numeric_limits<T>::max();
  T min_pos = std::numeric_limits<T>::max();  // valid when has_pos
  T max_neg = 0;                              // valid when has_neg
  bool has_pos = false;
  bool has_neg = false;
  int64_t zero_count = 0;
  int64_t count = 0;

  void Update(T x) {
    ++count;
    if (x > max) max = x;
    if (x < min) min = x;
    if (x == 0) {
      ++zero_count;
    } else if (x > 0) {
      if (!has_pos || x < min_pos) min_pos = x;
      has_pos = true;
    } else if constexpr (std::is_signed_v<T>) {
      if (!has_neg || x > max_neg) max_neg = x;
      has_neg = true;
    }
  }

  void MergeInto(StatsAcc* a) const {
    if (count == 0) return;
    a->zero_count += zero_count;
    a->max = std::fmax(a->max, static_cast<double>(max));
    a->min = std::fmin(a->min, static_cast<double>(min));
    const auto big = Magnitude(max) > Magnitude(min) ? Magnitude(max) : Magnitude(min);
    a->max_abs = std::fmax(a->max_abs, static_cast<double>(big));
    if (has_pos) a->min_nonzero_abs = std::fmin(a->min_nonzero_abs, static_cast<double>(min_pos));
    if (has_neg) {
      a->min_nonzero_abs = std::fmin(a->min_nonzero_abs, static_cast<double>(Magnitude(max_neg)));
    }
  }
};

// A contiguous run kernel: n elements of one input type starting at `data` (any alignment),
// updating `acc`. n <= kStatsChunk; element i goes to lane i % kStatsLanes.
using StatsRunFn = void (*)(const void* data, int64_t n, StatsAcc* acc);

// The element types the SIMD kernels read directly. fp8 and complex inputs are decoded into f32
// (c128: f64) runs first; bool runs through the u8 kernel.
enum class SimdInput : uint8_t {
  kF64,
  kF32,
  kF16,
  kBF16,
  kI64,
  kI32,
  kI16,
  kI8,
  kU64,
  kU32,
  kU16,
  kU8,
  kCount
};

#if defined(NUMPROBE_WITH_HWY)
// The run kernel of the best enabled Highway target for `input`; nullptr when that target is
// HWY_SCALAR (then the scalar reference is used).
StatsRunFn HwyStatsRunFn(SimdInput input);
// Name of the Highway target HwyStatsRunFn picks now ("AVX3", "AVX2", ...; "scalar" for
// HWY_SCALAR).
const char* HwyStatsTargetName();
#endif

// For tests: the names of the SIMD targets compiled in and supported by this CPU (empty without
// Highway), and a switch that restricts dispatch to one of them ("" restores the default).
// Returns false for an unknown name. Not thread-safe; call between ComputeStats calls.
std::vector<std::string> StatsSimdTargets();
bool ForceStatsSimdTarget(std::string_view name);

}  // namespace numprobe::detail

#endif  // NUMPROBE_KERNELS_STATS_INTERNAL_H_
