// Highway kernels of the pre-check metrics, compiled once per SIMD target and chosen at run time.
// They reproduce PcAccumulateScalar exactly (precheck_kernel.h): the 16 sum lanes live in
// 16 / Lanes(double) vectors, element k adds to lane k % 16 with a separate Mul and Add (never
// MulAdd; the library is built with -ffp-contract=off), positions a sum skips add +0.0 (an
// identity: those lane sums only ever hold +0.0 or positive values), and the run's last elements
// (fewer than 16) go through the scalar update. f32 rounding is a DemoteTo/PromoteTo pair with
// the overflow to Inf and NaN handled explicitly, so that no lane depends on how a target
// converts out-of-range values; floor(log2 |b|) is read from the exponent bits, as frexp gives it.
#if defined(NUMPROBE_WITH_HWY)

#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/precheck_hwy.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/precheck_kernel.h"

HWY_BEFORE_NAMESPACE();
namespace numprobe::detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

using D = hn::ScalableTag<double>;
using V = hn::Vec<D>;
using M = hn::Mask<D>;

// v rounded to f32 (Inf from FLT_MAX plus half an ULP, NaN kept), as a double again.
HWY_INLINE V RoundF32(V v) {
  const D d;
  const hn::Rebind<float, D> df;
  const V inf = hn::Set(d, std::numeric_limits<double>::infinity());
  const V rounded = hn::PromoteTo(d, hn::DemoteTo(df, v));
  const M over = hn::Ge(hn::Abs(v), hn::Set(d, 0x1.ffffffp127));
  return hn::IfThenElse(hn::IsNaN(v), v, hn::IfThenElse(over, hn::CopySign(inf, v), rounded));
}

HWY_INLINE V Clip(V v, V limit) {
  return hn::IfThenElse(hn::IsNaN(v), v, hn::Min(hn::Max(v, hn::Neg(limit)), limit));
}

// 2^k for integral k in [-1022, 1023], from the exponent bits.
HWY_INLINE V Pow2(V k) {
  const D d;
  const hn::RebindToSigned<D> di;
  const auto biased = hn::Add(hn::ConvertTo(di, k), hn::Set(di, int64_t{1023}));
  return hn::BitCast(d, hn::ShiftLeft<52>(biased));
}

// PcUlpError for a vector of elements.
template <PcUlp kUlp>
HWY_INLINE V UlpError(const PcSetup& s, V dv, V bv) {
  const D d;
  const hn::RebindToUnsigned<D> du;
  const hn::RebindToSigned<D> di;
  const auto field = hn::And(hn::ShiftRight<52>(hn::BitCast(du, bv)), hn::Set(du, uint64_t{0x7ff}));
  const V exponent =
      hn::Sub(hn::ConvertTo(d, hn::BitCast(di, field)), hn::Set(d, 1023.0));  // normal b
  const V min_exp = hn::Set(d, static_cast<double>(s.ulp_min_exp));
  const M zero_field = hn::RebindMask(d, hn::Eq(field, hn::Zero(du)));
  // b == 0 counts as exponent 0; a subnormal b lies below every min_exp, so it takes min_exp.
  V e = hn::IfThenElse(zero_field, hn::IfThenElse(hn::Eq(bv, hn::Zero(d)), hn::Zero(d), min_exp),
                       exponent);
  e = hn::Max(e, min_exp);
  const V k = hn::Sub(hn::Set(d, static_cast<double>(s.ulp_mant)), e);
  const M b_bad = hn::Not(hn::IsFinite(bv));
  const V nan = hn::Set(d, std::numeric_limits<double>::quiet_NaN());
  V u;
  if constexpr (kUlp == PcUlp::kDouble) {
    u = hn::Abs(hn::Mul(hn::Sub(dv, bv), Pow2(k)));
  } else {
    const V inf = hn::Set(d, std::numeric_limits<double>::infinity());
    // k stays within Pow2's range; f32's 2^k is Inf from 128 and 0 below -149.
    V scale = Pow2(hn::Min(hn::Max(k, hn::Set(d, -1000.0)), hn::Set(d, 1000.0)));
    scale = hn::IfThenElse(hn::Ge(k, hn::Set(d, 128.0)), inf, scale);
    scale = hn::IfThenZeroElse(hn::Lt(k, hn::Set(d, -149.0)), scale);
    u = hn::Abs(RoundF32(hn::Mul(RoundF32(hn::Sub(dv, bv)), scale)));
  }
  return hn::IfThenElse(b_bad, nan, u);
}

template <PcRound kRound, PcUlp kUlp>
void PcAccumulateImpl(const PcSetup& s, const double* dp, const double* bp, const double* bcp,
                      int64_t n, int64_t first_index, PcAcc* a) {
  const D d;
  constexpr size_t kN = hn::MaxLanes(D());
  static_assert(kCmpLanes % kN == 0);
  constexpr size_t kV = kCmpLanes / kN;
  V dot[kV], dd[kV], bb[kV], srel[kV], ssq[kV], sulp[kV];
  for (size_t v = 0; v < kV; ++v) {
    dot[v] = hn::LoadU(d, a->dot + v * kN);
    dd[v] = hn::LoadU(d, a->dd + v * kN);
    bb[v] = hn::LoadU(d, a->bb + v * kN);
    srel[v] = hn::LoadU(d, a->sum_rel + v * kN);
    ssq[v] = hn::LoadU(d, a->sum_sq + v * kN);
    sulp[v] = hn::LoadU(d, a->sum_ulp + v * kN);
  }
  const V zero = hn::Zero(d);
  const V one = hn::Set(d, 1.0);
  const V eps = hn::Set(d, s.eps);
  const V small_value = hn::Set(d, s.small_value);
  const V small_atol = hn::Set(d, s.small_atol);
  const V rtol = hn::Set(d, s.rtol);
  const V clip = hn::Set(d, s.clip);
  const V scale_d = hn::Set(d, s.scale_d);
  const V scale_b = hn::Set(d, s.scale_b);
  const V ulp_thr = hn::Set(d, s.ulp_thr);
  V thr[kPcRatios];
  V below[kPcRatios];
  for (int r = 0; r < kPcRatios; ++r) {
    thr[r] = hn::Set(d, s.ratio_thr[r]);
    below[r] = zero;
  }
  // Counts (exact in double for a run), flags and extremes: order-independent, one vector each.
  V small = zero, small_err = zero, normal = zero, normal_err = zero, infnan = zero;
  V infnan_err = zero, greater = zero, less = zero, ulp_over = zero, not_equal = zero;
  V ae_nan = zero, ulp_nan = zero, d_nan = zero, b_nan = zero;
  V max_ae = zero, max_rel = zero, max_ulp = zero, max_abs_d = zero, max_abs_b = zero;
  V worst = hn::Set(d, -1.0), worst_index = hn::Set(d, -1.0);
  V index = hn::Iota(d, static_cast<double>(first_index));
  const V step_n = hn::Set(d, static_cast<double>(kN));

  const int64_t groups = n / kCmpLanes * kCmpLanes;
  for (int64_t k = 0; k < groups; k += kCmpLanes) {
    for (size_t v = 0; v < kV; ++v) {
      const size_t i = static_cast<size_t>(k) + v * kN;
      const V dv = hn::LoadU(d, dp + i);
      const V bv = hn::LoadU(d, bp + i);
      V bc = bv;
      if constexpr (kRound == PcRound::kF32) bc = RoundF32(bv);
      if constexpr (kRound == PcRound::kF16) bc = hn::LoadU(d, bcp + i);
      const M fin = hn::And(hn::IsFinite(dv), hn::IsFinite(bc));
      const V ae = hn::Abs(hn::Sub(dv, bv));
      const V ab = hn::Abs(bv);
      const V den = hn::Add(ab, eps);
      const V rel = hn::Div(ae, den);
      const M ae_is_nan = hn::IsNaN(ae);
      ae_nan = hn::Or(ae_nan, hn::IfThenElseZero(ae_is_nan, one));
      max_ae = hn::Max(max_ae, hn::IfThenZeroElse(ae_is_nan, ae));
      const M d_is_nan = hn::IsNaN(dv);
      d_nan = hn::Or(d_nan, hn::IfThenElseZero(d_is_nan, one));
      max_abs_d = hn::Max(max_abs_d, hn::IfThenZeroElse(d_is_nan, hn::Abs(dv)));
      const M b_is_nan = hn::IsNaN(bv);
      b_nan = hn::Or(b_nan, hn::IfThenElseZero(b_is_nan, one));
      max_abs_b = hn::Max(max_abs_b, hn::IfThenZeroElse(b_is_nan, ab));
      for (int r = 0; r < kPcRatios; ++r) {
        below[r] = hn::Add(below[r], hn::IfThenElseZero(hn::Lt(rel, thr[r]), one));
      }
      const V ds = hn::Mul(dv, scale_d);
      const V bs = hn::Mul(bv, scale_b);
      dot[v] = hn::Add(dot[v], hn::Mul(ds, bs));
      dd[v] = hn::Add(dd[v], hn::Mul(ds, ds));
      bb[v] = hn::Add(bb[v], hn::Mul(bs, bs));

      const M is_small = hn::And(fin, hn::Le(ab, small_value));
      const M is_normal = hn::AndNot(is_small, fin);
      small = hn::Add(small, hn::IfThenElseZero(is_small, one));
      small_err =
          hn::Add(small_err, hn::IfThenElseZero(hn::And(is_small, hn::Gt(ae, small_atol)), one));
      normal = hn::Add(normal, hn::IfThenElseZero(is_normal, one));
      const V rel_n = hn::IfThenElseZero(is_normal, rel);
      srel[v] = hn::Add(srel[v], rel_n);
      max_rel = hn::Max(max_rel, rel_n);
      ssq[v] = hn::Add(ssq[v], hn::IfThenElseZero(is_normal, hn::Mul(ae, ae)));
      normal_err =
          hn::Add(normal_err, hn::IfThenElseZero(hn::And(is_normal, hn::Gt(rel, rtol)), one));
      const V aw = hn::IfThenElse(fin, ae, hn::Set(d, -1.0));
      const M better = hn::Gt(aw, worst);
      worst = hn::IfThenElse(better, aw, worst);
      worst_index = hn::IfThenElse(better, index, worst_index);
      index = hn::Add(index, step_n);
      if (HWY_UNLIKELY(!hn::AllTrue(d, fin))) {
        const M bad = hn::Not(fin);
        infnan = hn::Add(infnan, hn::IfThenElseZero(bad, one));
        const V cb = Clip(bc, clip);
        const V cre = hn::Div(hn::Abs(hn::Sub(Clip(dv, clip), cb)), den);
        const M pass = hn::Or(hn::Le(cre, rtol), hn::And(d_is_nan, hn::IsNaN(cb)));
        infnan_err = hn::Add(infnan_err, hn::IfThenElseZero(hn::AndNot(pass, bad), one));
      }
      greater = hn::Add(greater, hn::IfThenElseZero(hn::Gt(dv, bc), one));
      less = hn::Add(less, hn::IfThenElseZero(hn::Lt(dv, bc), one));
      // Not(Eq): NaN != NaN counts, as C++'s != (a target's Ne may be the ordered compare).
      not_equal = hn::Add(not_equal, hn::IfThenZeroElse(hn::Eq(dv, bv), one));
      if constexpr (kUlp != PcUlp::kNone) {
        const V u = UlpError<kUlp>(s, dv, bv);
        const M u_nan = hn::IsNaN(u);
        ulp_nan = hn::Or(ulp_nan, hn::IfThenElseZero(u_nan, one));
        const V uz = hn::IfThenZeroElse(u_nan, u);
        max_ulp = hn::Max(max_ulp, uz);
        sulp[v] = hn::Add(sulp[v], uz);
        ulp_over = hn::Add(ulp_over, hn::IfThenElseZero(hn::Gt(u, ulp_thr), one));
      }
    }
  }

  for (size_t v = 0; v < kV; ++v) {
    hn::StoreU(dot[v], d, a->dot + v * kN);
    hn::StoreU(dd[v], d, a->dd + v * kN);
    hn::StoreU(bb[v], d, a->bb + v * kN);
    hn::StoreU(srel[v], d, a->sum_rel + v * kN);
    hn::StoreU(ssq[v], d, a->sum_sq + v * kN);
    hn::StoreU(sulp[v], d, a->sum_ulp + v * kN);
  }
  auto count = [&](V c) { return static_cast<int64_t>(hn::GetLane(hn::SumOfLanes(d, c))); };
  auto any = [&](V c) { return count(c) > 0; };
  auto top = [&](V c) { return hn::GetLane(hn::MaxOfLanes(d, c)); };
  for (int r = 0; r < kPcRatios; ++r) a->below[r] += count(below[r]);
  a->small += count(small);
  a->small_err += count(small_err);
  a->normal += count(normal);
  a->normal_err += count(normal_err);
  a->infnan += count(infnan);
  a->infnan_err += count(infnan_err);
  a->greater += count(greater);
  a->less += count(less);
  a->ulp_over += count(ulp_over);
  a->not_equal += count(not_equal);
  a->ae_nan |= any(ae_nan);
  a->ulp_nan |= any(ulp_nan);
  a->d_nan |= any(d_nan);
  a->b_nan |= any(b_nan);
  a->max_ae = std::max(a->max_ae, top(max_ae));
  a->max_rel = std::max(a->max_rel, top(max_rel));
  a->max_ulp = std::max(a->max_ulp, top(max_ulp));
  a->max_abs_d = std::max(a->max_abs_d, top(max_abs_d));
  a->max_abs_b = std::max(a->max_abs_b, top(max_abs_b));
  // The first index of the largest ae: per lane the first, then the smallest index among equals;
  // the run comes after what `a` holds, so it must be strictly larger to win.
  HWY_ALIGN double w[kN];
  HWY_ALIGN double wi[kN];
  hn::Store(worst, d, w);
  hn::Store(worst_index, d, wi);
  MergeWorstLanes(w, wi, kN, &a->worst, &a->worst_index);
  if (groups < n) {
    PcAccumulateScalar(s, dp + groups, bp + groups, bcp != nullptr ? bcp + groups : nullptr,
                       n - groups, first_index + groups, a);
  }
}

template <PcRound kRound>
PcAccumulateFn SelectForRound(PcUlp ulp) {
  switch (ulp) {
    case PcUlp::kNone:
      return &PcAccumulateImpl<kRound, PcUlp::kNone>;
    case PcUlp::kDouble:
      return &PcAccumulateImpl<kRound, PcUlp::kDouble>;
    default:
      return &PcAccumulateImpl<kRound, PcUlp::kFloat>;
  }
}

void PcDispatch(const PcSetup& s, const double* dp, const double* bp, const double* bcp, int64_t n,
                int64_t first_index, PcAcc* a) {
  PcAccumulateFn fn = nullptr;
  switch (s.round) {
    case PcRound::kF64:
      fn = SelectForRound<PcRound::kF64>(s.ulp);
      break;
    case PcRound::kF32:
      fn = SelectForRound<PcRound::kF32>(s.ulp);
      break;
    default:
      fn = SelectForRound<PcRound::kF16>(s.ulp);
      break;
  }
  fn(s, dp, bp, bcp, n, first_index, a);
  CanonicalizeNanSums(a);
}

PcAccumulateFn SelectPcAccumulate() { return &PcDispatch; }

#else

PcAccumulateFn SelectPcAccumulate() { return nullptr; }

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace numprobe::detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "kernels/hwy_targets.h"

namespace numprobe::detail {

HWY_EXPORT(SelectPcAccumulate);

PcAccumulateFn HwyPcAccumulateFn() { return HWY_DYNAMIC_DISPATCH(SelectPcAccumulate)(); }

std::vector<std::pair<std::string, PcAccumulateFn>> HwyPcAccumulateFnsPerTarget() {
  return EveryTarget<PcAccumulateFn>([] { return HWY_DYNAMIC_DISPATCH(SelectPcAccumulate)(); });
}

}  // namespace numprobe::detail
#endif  // HWY_ONCE

#endif  // NUMPROBE_WITH_HWY
