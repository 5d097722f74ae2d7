// Internals of the tensor-pair metric kernel shared by the scalar reference (compare_kernel.cc),
// the Highway kernels (compare_hwy.cc), compare_metrics.cc and the tests: the pair's setup, the
// accumulator, the per-element definitions and the fixed reduction order. Not part of the API.
//
// Reduction order (the determinism contract): a pair's C-order elements are cut into chunks of
// kCmpChunk elements. Inside a chunk, element k adds to lane k % kCmpLanes of every floating sum
// (products are rounded, then added; never fused). The lanes are combined by CombineCmpLanes and
// the chunk totals are added in chunk order. Counts and extremes are exact and order-independent;
// the worst index is the first index of the largest |t - g|. Every path performs exactly these
// double operations, so results do not depend on the thread count or the instruction set.
#ifndef NUMPROBE_KERNELS_COMPARE_KERNEL_H_
#define NUMPROBE_KERNELS_COMPARE_KERNEL_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "numprobe/dtype.h"

namespace numprobe::detail {

inline constexpr int64_t kCmpChunk = int64_t{1} << 16;  // elements; never depends on threads
inline constexpr int kCmpLanes = 16;
// Elements are decoded and accumulated in blocks of this many (both sides fit in L1 as doubles).
inline constexpr int64_t kCmpBlock = 1024;
static_assert(kCmpChunk % kCmpBlock == 0 && kCmpBlock % kCmpLanes == 0);

// msprobe's Const.FLOAT_EPSILON (float64's), the bound under which cosine treats a norm as zero.
inline constexpr double kCmpEps = std::numeric_limits<double>::epsilon();

// The numpy float type a relative error is computed in: msprobe's get_relative_err (since its
// commit 78bf1bed, 2026-07-07) promotes both sides to result_type(n, b, float32), so at least f32.
// Where the golden value is 0, that type's epsilon (f32 2^-23, f64 2^-52) is added to both sides.
enum class CmpFloat : uint8_t { kF32, kF64 };
inline constexpr double kCmpEpsF32 = 0x1p-23;  // np.finfo(np.float32).eps
inline constexpr double kCmpEpsF64 = 0x1p-52;  // np.finfo(np.float64).eps

// How ULP distances are taken, chosen once per pair: not at all (a side is not a float type), on
// the bits of f64 / f32 / bf16, or through the generic rounding of float_convert.h.
enum class CmpUlp : uint8_t { kNone, kF64, kF32, kBF16, kOther };

struct CmpSetup {
  DType t_dtype = DType::kF32;  // stored dtypes of target and golden
  DType g_dtype = DType::kF32;
  CmpFloat rel = CmpFloat::kF64;  // the promoted type the relative error is computed in
  double thr1 = 0.001;            // 0.001 and 0.005 as numpy compares them in type `rel`
  double thr5 = 0.005;
  double rtol = 0;  // allclose tolerance of the lower-precision dtype
  double atol = 0;
  CmpUlp ulp = CmpUlp::kNone;
  DType low = DType::kF64;  // the lower-precision dtype when ulp != kNone
};

// A side whose values are exactly floats (bf16/f16/f32 and fp8 widen exactly to f32).
inline bool CmpFloatSourced(DType d) { return IsFloating(d) && d != DType::kF64; }

// The vector kernels compute ULP distances themselves for these setups (else the caller passes
// them precomputed with CmpUlpDistance).
inline bool CmpUlpIsSimd(const CmpSetup& s) {
  switch (s.ulp) {
    case CmpUlp::kNone:
    case CmpUlp::kF64:
    case CmpUlp::kF32:
      return true;
    case CmpUlp::kBF16:
      return CmpFloatSourced(s.t_dtype) && CmpFloatSourced(s.g_dtype);
    default:
      return false;
  }
}

// Partial results of a run of elements. Sums are per lane (see the reduction order above).
struct CmpAcc {
  // msprobe's sums, over all positions with NaN/Inf replaced by 0 (tz, gz).
  double dot[kCmpLanes];  // tz * gz
  double tt[kCmpLanes];   // tz * tz
  double gg[kCmpLanes];   // gz * gz
  double dd[kCmpLanes];   // (tz - gz)^2
  // numprobe's sums, over positions finite on both sides.
  double sum_abs[kCmpLanes];  // |t - g|
  double sum_sq[kCmpLanes];   // (t - g)^2
  double sum_g2[kCmpLanes];   // g * g
  double sum_t2[kCmpLanes];   // t * t
  double sum_rel[kCmpLanes];  // |t - g| / |g| where g != 0
  double sum_ulp[kCmpLanes];  // ULP distance where both round into the lower dtype
  int64_t finite;             // positions finite on both sides
  int64_t rel_count;
  int64_t ulp_count;
  int64_t close;  // allclose with the lower dtype's tolerance (NaN=NaN, same-sign Inf)
  int64_t nan_mm, pinf_mm, ninf_mm;
  int64_t below_1, below_5;  // msprobe relative errors below thr1 / thr5
  bool mask_mismatch;        // NaN or Inf at different positions (msprobe's "N/A")
  bool rel_nan;              // a relative error was NaN
  bool all_finite;           // no NaN/Inf so far (lets the vector kernel skip three sums)
  double max_abs;            // msprobe: max |tz - gz|
  double max_rel;            // msprobe: max relative error (NaNs excluded)
  double max_ulp;
  double worst;         // largest |t - g| over finite pairs, -1 when none
  int64_t worst_index;  // its first index, -1 when none
};

void ResetCmpAcc(CmpAcc* a);

// Folds a vector kernel's per-lane worst values `w` and their indices `wi` (lanes of one run)
// into *worst / *worst_index: the largest value, the smallest index among equals, and, since the
// run comes after what they hold, only when strictly larger.
inline void MergeWorstLanes(const double* w, const double* wi, size_t lanes, double* worst,
                            int64_t* worst_index) {
  double best = -1.0;
  double best_index = -1.0;
  for (size_t l = 0; l < lanes; ++l) {
    if (w[l] > best || (w[l] == best && wi[l] < best_index)) {
      best = w[l];
      best_index = wi[l];
    }
  }
  if (best > *worst) {
    *worst = best;
    *worst_index = static_cast<int64_t>(best_index);
  }
}

// The fixed tree over the 16 lanes: ((l0+l8)+(l4+l12)) + ((l2+l10)+(l6+l14)), then the same over
// the odd lanes, odd total added to even total last.
double CombineCmpLanes(const double* l);

// msprobe's relative error of one position (NaN/Inf already replaced by 0): |(n' - b') / b'| in
// type s.rel, where b == 0 makes n' = n + eps and b' = b + eps with that type's eps.
double CmpRelError(const CmpSetup& s, double tz, double gz);

// The ULP distance of a pair finite on both sides in s.low (+0 and -0 are the same position), or
// NaN when a value rounds out of that dtype's range. Only for s.ulp != kNone.
double CmpUlpDistance(const CmpSetup& s, double t, double g);

// Accumulates elements [0, n) of decoded (double) values t and g into `acc`; element k goes to
// lane k % kCmpLanes (callers start runs at a lane-aligned offset of the chunk) and has index
// first_index + k. `ulp` holds the per-element ULP distances (NaN: none) when the setup is not
// CmpUlpIsSimd, else nullptr; the scalar reference accepts nullptr and computes them itself.
using CmpAccumulateFn = void (*)(const CmpSetup& s, const double* t, const double* g,
                                 const double* ulp, int64_t n, int64_t first_index, CmpAcc* acc);

void CmpAccumulateScalar(const CmpSetup& s, const double* t, const double* g, const double* ulp,
                         int64_t n, int64_t first_index, CmpAcc* acc);

// The Highway kernel for the best target of this CPU, or nullptr (no Highway, or only its
// one-lane HWY_SCALAR target). NUMPROBE_FORCE_SCALAR=1 makes CmpAccumulate return the reference.
CmpAccumulateFn HwyCmpAccumulateFn();
// For tests: the kernel of every compiled target this CPU runs, by target name (the dispatch is
// redirected while this runs, so nothing else may compare meanwhile).
std::vector<std::pair<std::string, CmpAccumulateFn>> HwyCmpAccumulateFnsPerTarget();
CmpAccumulateFn CmpAccumulate(bool force_scalar = false);

// Decodes n contiguous f32 / bf16 / f64 elements at `src` into doubles (exactly) with vector
// loads; false (nothing written) for other dtypes or without a Highway kernel.
bool CmpDecode(DType dtype, const std::byte* src, int64_t n, double* out);

}  // namespace numprobe::detail

#endif  // NUMPROBE_KERNELS_COMPARE_KERNEL_H_
