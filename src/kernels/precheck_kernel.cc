// The scalar reference of the pre-check metric kernel (precheck_kernel.h): the per-element
// definitions, the lane accumulation the Highway kernels reproduce bit for bit, and the choice
// between the reference and the Highway kernel.
#include "kernels/precheck_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "numprobe/float_convert.h"

namespace numprobe::detail {
namespace {

// The smallest magnitude that rounds to f32 Inf (FLT_MAX plus half an ULP: the tie goes to the
// even neighbour, Inf). Explicit, because a C++ float conversion out of range is undefined.
constexpr double kF32Overflow = 0x1.ffffffp127;

double RoundF32(double v) {
  if (std::isnan(v)) return v;
  if (std::fabs(v) >= kF32Overflow)
    return std::copysign(std::numeric_limits<double>::infinity(), v);
  return static_cast<double>(static_cast<float>(v));
}

double Clip(double v, double limit) { return std::isnan(v) ? v : std::clamp(v, -limit, limit); }

}  // namespace

void ResetPcAcc(PcAcc* a) { *a = PcAcc{}; }

double PcRoundF16(double b) {
  if (std::isnan(b)) return b;
  return static_cast<double>(F16ToF32(F32ToF16(static_cast<float>(RoundF32(b)))));
}

double PcUlpError(const PcSetup& s, double d, double b) {
  if (!std::isfinite(b)) return std::numeric_limits<double>::quiet_NaN();  // log2 of Inf / NaN
  int e = 0;
  if (b != 0) {
    int exponent = 0;
    std::frexp(b, &exponent);  // |b| = m * 2^exponent, m in [0.5, 1): exact floor(log2 |b|) + 1
    e = exponent - 1;
  }
  e = std::max(e, s.ulp_min_exp);
  const int k = s.ulp_mant - e;
  if (s.ulp == PcUlp::kDouble) return std::fabs((d - b) * std::ldexp(1.0, k));
  // f32 arithmetic: the difference rounded to f32, times f32's 2^k, rounded to f32.
  double scale = std::ldexp(1.0, k);
  if (k >= 128) scale = std::numeric_limits<double>::infinity();
  if (k < -149) scale = 0;
  return std::fabs(RoundF32(RoundF32(d - b) * scale));
}

void CanonicalizeNanSums(PcAcc* a) {
  for (double* lanes : {a->dot, a->dd, a->bb, a->sum_rel, a->sum_sq, a->sum_ulp}) {
    for (int j = 0; j < kCmpLanes; ++j) {
      if (std::isnan(lanes[j])) lanes[j] = std::numeric_limits<double>::quiet_NaN();
    }
  }
}

void PcAccumulateScalar(const PcSetup& s, const double* dv, const double* bv, const double* bcv,
                        int64_t n, int64_t first_index, PcAcc* a) {
  for (int64_t k = 0; k < n; ++k) {
    const int j = static_cast<int>(k % kCmpLanes);
    const double d = dv[k];
    const double b = bv[k];
    double bc = b;
    if (s.round == PcRound::kF32) bc = RoundF32(b);
    if (s.round == PcRound::kF16) bc = bcv[k];
    const bool fin = std::isfinite(d) && std::isfinite(bc);
    const double ae = std::fabs(d - b);
    const double ab = std::fabs(b);
    const double den = ab + s.eps;
    const double rel = ae / den;
    if (std::isnan(ae)) {
      a->ae_nan = true;
    } else {
      a->max_ae = std::max(a->max_ae, ae);
    }
    if (std::isnan(d)) {
      a->d_nan = true;
    } else {
      a->max_abs_d = std::max(a->max_abs_d, std::fabs(d));
    }
    if (std::isnan(b)) {
      a->b_nan = true;
    } else {
      a->max_abs_b = std::max(a->max_abs_b, ab);
    }
    for (int r = 0; r < kPcRatios; ++r) a->below[r] += rel < s.ratio_thr[r] ? 1 : 0;
    const double ds = d * s.scale_d;
    const double bs = b * s.scale_b;
    a->dot[j] += ds * bs;
    a->dd[j] += ds * ds;
    a->bb[j] += bs * bs;
    if (fin) {
      if (ab <= s.small_value) {
        ++a->small;
        a->small_err += ae > s.small_atol ? 1 : 0;
      } else {
        ++a->normal;
        a->sum_rel[j] += rel;
        a->max_rel = std::max(a->max_rel, rel);
        a->sum_sq[j] += ae * ae;
        a->normal_err += rel > s.rtol ? 1 : 0;
      }
      if (ae > a->worst) {
        a->worst = ae;
        a->worst_index = first_index + k;
      }
    } else {
      // msprobe's inf/nan check: both sides clipped to the compare dtype's range must agree
      // within rtol of |b| + eps, or both be NaN.
      ++a->infnan;
      const double cb = Clip(bc, s.clip);
      const double cre = std::fabs(Clip(d, s.clip) - cb) / den;
      const bool pass = cre <= s.rtol || (std::isnan(d) && std::isnan(cb));
      a->infnan_err += pass ? 0 : 1;
    }
    a->greater += d > bc ? 1 : 0;
    a->less += d < bc ? 1 : 0;
    a->not_equal += d != b ? 1 : 0;
    if (s.ulp != PcUlp::kNone) {
      const double u = PcUlpError(s, d, b);
      if (std::isnan(u)) {
        a->ulp_nan = true;
      } else {
        a->max_ulp = std::max(a->max_ulp, u);
        a->sum_ulp[j] += u;
      }
      a->ulp_over += u > s.ulp_thr ? 1 : 0;
    }
  }
  CanonicalizeNanSums(a);
}

PcAccumulateFn PcAccumulate(bool force_scalar) {
  if (force_scalar) return &PcAccumulateScalar;
  const char* env = std::getenv("NUMPROBE_FORCE_SCALAR");
  if (env != nullptr && std::strcmp(env, "1") == 0) return &PcAccumulateScalar;
  const PcAccumulateFn fn = HwyPcAccumulateFn();
  return fn != nullptr ? fn : &PcAccumulateScalar;
}

#if !defined(NUMPROBE_WITH_HWY)
PcAccumulateFn HwyPcAccumulateFn() { return nullptr; }
std::vector<std::pair<std::string, PcAccumulateFn>> HwyPcAccumulateFnsPerTarget() { return {}; }
#endif

}  // namespace numprobe::detail
