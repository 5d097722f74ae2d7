// Internals of the pre-check metric kernel (numprobe precheck): one pass over a device output d
// and its float64 benchmark b that accumulates everything msprobe's acc_check standards need
// (cosine, max absolute error, dual-100/1000/10000 ratios, RMSE, error balance, small-value
// error ratio, relative-error max/mean, the absolute-threshold ratios, ULP error statistics,
// binary consistency) plus the worst element. Shared by the scalar reference
// (precheck_kernel.cc), the Highway kernels (precheck_hwy.cc), src/precheck and the tests.
//
// Per element, with bc = b rounded to the compare dtype (msprobe's bench.astype(device dtype);
// bf16 outputs are compared in f32 as msprobe widens them):
//   both finite  isfinite(d) && isfinite(bc); otherwise the position is an inf/nan position
//   ae           |d - b|;   rel = ae / (|b| + eps)
//   small value  both finite and |b| <= small_value; normal value: both finite and not small
//   ULP error    |(d - b) * 2^(mant - max(floor(log2|b|), min_exp))|, floor(log2 0) taken as 0;
//                in double for f32 outputs, rounded to f32 (as msprobe's f32 arithmetic) for
//                f16/bf16 ones, where 2^k is f32's (Inf from k = 128, 0 below k = -149).
// Every quantity is defined in double with IEEE operations and no fused multiply-add.
//
// Reduction order (the determinism contract), as the compare kernel's (compare_internal.h): a
// pair's elements are cut into chunks of kCmpChunk; inside a chunk element k adds to lane
// k % kCmpLanes of every floating sum; lanes are combined by CombineCmpLanes and chunk totals
// added in chunk order. Counts and extremes are exact and order-independent; the worst index is
// the first index of the largest ae over both-finite positions.
#ifndef NUMPROBE_KERNELS_PRECHECK_KERNEL_H_
#define NUMPROBE_KERNELS_PRECHECK_KERNEL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/compare_kernel.h"

namespace numprobe::detail {

// How ULP errors are taken: not at all, in double (f32 outputs), or rounded to f32 (f16, bf16).
enum class PcUlp : uint8_t { kNone, kDouble, kFloat };

// The compare dtype bc is rounded to: f64 (b itself), f32, or f16 (precomputed by the caller:
// b rounded to f32, then to f16, as msprobe's f32 benchmark cast to float16).
enum class PcRound : uint8_t { kF64, kF32, kF16 };

inline constexpr int kPcRatios = 3;  // dual-100, dual-1000, dual-10000

struct PcSetup {
  PcRound round = PcRound::kF64;
  double eps = 0;          // added to |b| in relative errors
  double small_value = 0;  // |b| <= small_value: a small value
  double small_atol = 0;   // a small value's absolute error above this is an error
  double rtol = 0;         // a normal value's relative error above this is an error
  double clip = 0;         // largest finite value of the compare dtype (inf/nan positions)
  double ratio_thr[kPcRatios] = {0.01, 0.001, 0.0001};
  PcUlp ulp = PcUlp::kNone;
  int ulp_min_exp = -126;  // msprobe's min_eb
  int ulp_mant = 23;       // msprobe's exponent_num (explicit significand bits)
  double ulp_thr = 32;     // ULP errors above this count as exceeding
  // Powers of two the cosine sums scale d and b by (1 unless the values would over- or
  // underflow the squares).
  double scale_d = 1;
  double scale_b = 1;
};

// Partial results of a run of elements. Sums are per lane.
struct PcAcc {
  double dot[kCmpLanes];               // (d * scale_d) * (b * scale_b) over all positions
  double dd[kCmpLanes];                // (d * scale_d)^2
  double bb[kCmpLanes];                // (b * scale_b)^2
  double sum_rel[kCmpLanes];           // rel over normal values
  double sum_sq[kCmpLanes];            // ae^2 over normal values
  double sum_ulp[kCmpLanes];           // ULP errors that are not NaN
  int64_t below[kPcRatios];            // rel < ratio_thr[k] (NaN counts as not below)
  int64_t small = 0, small_err = 0;    // small values; those with ae > small_atol
  int64_t normal = 0, normal_err = 0;  // normal values; those with rel > rtol
  int64_t infnan = 0, infnan_err = 0;  // inf/nan positions; those failing the clipped check
  int64_t greater = 0, less = 0;       // d > bc, d < bc
  int64_t ulp_over = 0;                // ULP error > ulp_thr
  int64_t not_equal = 0;               // d != b (NaN != NaN)
  bool ae_nan = false, ulp_nan = false, d_nan = false, b_nan = false;
  double max_ae = 0;     // over positions where ae is not NaN
  double max_rel = 0;    // over normal values
  double max_ulp = 0;    // over ULP errors that are not NaN
  double max_abs_d = 0;  // |d| over non-NaN d
  double max_abs_b = 0;
  double worst = -1;  // largest ae over both-finite positions, -1 when none
  int64_t worst_index = -1;
};

void ResetPcAcc(PcAcc* a);

// Sets every lane sum that is NaN to the one quiet NaN. IEEE 754 leaves which NaN an operation
// returns to the implementation (x86 returns its first operand's, and a compiler may commute the
// operands of a sum), so without this the sign of a NaN sum would depend on the code generated;
// each accumulate function ends with it, so every path gives the same bits.
void CanonicalizeNanSums(PcAcc* a);

// bc of one element for PcRound::kF16 (b rounded to f32, then to f16), as a double.
double PcRoundF16(double b);

// The ULP error of one element (NaN where msprobe's formula gives NaN). Only for ulp != kNone.
double PcUlpError(const PcSetup& s, double d, double b);

// Accumulates elements [0, n) of d and b into `acc`; element k goes to lane k % kCmpLanes and has
// index first_index + k. `bc` holds b rounded to the compare dtype when s.round is kF16 (else
// nullptr: the kernel rounds itself).
using PcAccumulateFn = void (*)(const PcSetup& s, const double* d, const double* b,
                                const double* bc, int64_t n, int64_t first_index, PcAcc* acc);

void PcAccumulateScalar(const PcSetup& s, const double* d, const double* b, const double* bc,
                        int64_t n, int64_t first_index, PcAcc* acc);

// The Highway kernel for the best target of this CPU, or nullptr (no Highway, or its one-lane
// HWY_SCALAR target). NUMPROBE_FORCE_SCALAR=1 makes PcAccumulate return the reference.
PcAccumulateFn HwyPcAccumulateFn();
// For tests: the kernel of every compiled target this CPU runs, by target name.
std::vector<std::pair<std::string, PcAccumulateFn>> HwyPcAccumulateFnsPerTarget();
PcAccumulateFn PcAccumulate(bool force_scalar = false);

}  // namespace numprobe::detail

#endif  // NUMPROBE_KERNELS_PRECHECK_KERNEL_H_
