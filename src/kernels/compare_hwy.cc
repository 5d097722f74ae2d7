// Highway kernels of the tensor-pair metrics, compiled once per SIMD target (foreach_target.h)
// and chosen at run time (HWY_DYNAMIC_DISPATCH). They reproduce CmpAccumulateScalar exactly: the
// 16 sum lanes of compare_internal.h live in 16 / Lanes(double) vectors, element k adds to lane
// k % 16 in element order with a separate Mul and Add (never MulAdd; the library is built with
// -ffp-contract=off), positions a sum skips add +0.0 (an identity: a lane sum starts at +0.0 and
// so is never -0.0), and the run's last elements (fewer than 16) go through the scalar update.
// Relative errors and ULP distances use the same IEEE operations as the reference: f32 results
// are double results rounded to f32 once, which equals the f32 operation on f32 operands (double
// has more than 2 * 24 + 2 significand bits, so the double rounding is harmless).
#if defined(NUMPROBE_WITH_HWY)

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/compare_hwy.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/compare_kernel.h"

HWY_BEFORE_NAMESPACE();
namespace numprobe::detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// HWY_SCALAR (one lane per vector) gets no kernel: the scalar reference serves it.
#if HWY_TARGET != HWY_SCALAR

using D = hn::ScalableTag<double>;
using V = hn::Vec<D>;
using M = hn::Mask<D>;

// The type relative errors are computed in (CmpSetup::rel).
enum class RelMode : uint8_t { kF32, kF64 };

// v rounded to the nearest f32 (exact for values that are floats), as a double again.
HWY_INLINE V RoundF32(V v) {
  const D d;
  const hn::Rebind<float, D> df;
  return hn::PromoteTo(d, hn::DemoteTo(df, v));
}

template <RelMode kRel>
HWY_INLINE V RelError(V tz, V gz) {
  const D d;
  const M bz = hn::Eq(gz, hn::Zero(d));
  const V eps = hn::Set(d, kRel == RelMode::kF32 ? kCmpEpsF32 : kCmpEpsF64);
  V n = tz;
  V b = gz;
  if (HWY_UNLIKELY(!hn::AllFalse(d, bz))) {
    // n + eps in the error's type (a double sum of two floats rounded once to f32 is the f32
    // sum); b + eps is eps itself.
    const V n_eps = kRel == RelMode::kF32 ? RoundF32(hn::Add(tz, eps)) : hn::Add(tz, eps);
    n = hn::IfThenElse(bz, n_eps, tz);
    b = hn::IfThenElse(bz, eps, gz);
  }
  if constexpr (kRel == RelMode::kF64) {
    return hn::Abs(hn::Div(hn::Sub(n, b), b));
  } else {
    // n and b are exactly floats: the f32 difference, then an f32 division as numpy's.
    const hn::Rebind<float, D> df;
    const auto diff = hn::DemoteTo(df, hn::Sub(n, b));
    return hn::Abs(hn::PromoteTo(d, hn::Div(diff, hn::DemoteTo(df, b))));
  }
}

// Sign-magnitude position (as double) of f32 bits given in u32 lanes; +0 and -0 are both 0.
template <class DU32>
HWY_INLINE V OrdinalOfBits(DU32 du, hn::Vec<DU32> bits, uint32_t sign_bit) {
  const D d;
  const hn::RebindToSigned<DU32> di;
  const auto mag = hn::BitCast(di, hn::AndNot(hn::Set(du, sign_bit), bits));
  const auto neg = hn::Ne(hn::And(bits, hn::Set(du, sign_bit)), hn::Zero(du));
  const auto ord = hn::IfThenElse(hn::RebindMask(di, neg), hn::Neg(mag), mag);
  return hn::PromoteTo(d, ord);
}

// ULP distance of finite pairs (other lanes are ignored by the caller); NaN where none.
template <CmpUlp kUlp>
HWY_INLINE V UlpDistance(V t, V g) {
  const D d;
  if constexpr (kUlp == CmpUlp::kF64) {
    const hn::RebindToUnsigned<D> du;
    const hn::RebindToSigned<D> di;
    const auto tb = hn::BitCast(du, t);
    const auto gb = hn::BitCast(du, g);
    const auto abs_mask = hn::Set(du, ~(uint64_t{1} << 63));
    const auto tm = hn::And(tb, abs_mask);
    const auto gm = hn::And(gb, abs_mask);
    const auto opposite =
        hn::RebindMask(du, hn::Lt(hn::BitCast(di, hn::Xor(tb, gb)), hn::Zero(di)));
    const auto t_larger = hn::RebindMask(du, hn::Gt(hn::BitCast(di, tm), hn::BitCast(di, gm)));
    const auto same = hn::IfThenElse(t_larger, hn::Sub(tm, gm), hn::Sub(gm, tm));
    const auto dist = hn::IfThenElse(opposite, hn::Add(tm, gm), same);
    // dist as double with one rounding: both 32-bit halves convert exactly.
    const auto hi = hn::ConvertTo(d, hn::BitCast(di, hn::ShiftRight<32>(dist)));
    const auto lo = hn::ConvertTo(d, hn::BitCast(di, hn::And(dist, hn::Set(du, 0xFFFFFFFFull))));
    return hn::Add(hn::Mul(hi, hn::Set(d, 4294967296.0)), lo);
  } else {
    const hn::Rebind<float, D> df;
    const hn::RebindToUnsigned<decltype(df)> du;
    const auto tf = hn::DemoteTo(df, t);
    const auto gf = hn::DemoteTo(df, g);
    // Positions whose magnitude reaches the exponent's all-ones pattern are Inf (or NaN).
    V ot, og, limit;
    if constexpr (kUlp == CmpUlp::kF32) {
      ot = OrdinalOfBits(du, hn::BitCast(du, tf), 0x80000000u);
      og = OrdinalOfBits(du, hn::BitCast(du, gf), 0x80000000u);
      limit = hn::Set(d, 2139095040.0);  // 0x7f800000
    } else {  // kBF16, both sides exactly floats: round to nearest even on the bits
      auto to_bf16 = [&](hn::Vec<decltype(df)> f) {
        const auto bits = hn::BitCast(du, f);
        const auto odd = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u));
        return hn::ShiftRight<16>(hn::Add(hn::Add(bits, hn::Set(du, 0x7fffu)), odd));
      };
      ot = OrdinalOfBits(du, to_bf16(tf), 0x8000u);
      og = OrdinalOfBits(du, to_bf16(gf), 0x8000u);
      limit = hn::Set(d, 32640.0);  // 0x7f80
    }
    const M out = hn::Or(hn::Ge(hn::Abs(ot), limit), hn::Ge(hn::Abs(og), limit));
    return hn::IfThenElse(out, hn::Set(d, std::numeric_limits<double>::quiet_NaN()),
                          hn::Abs(hn::Sub(ot, og)));
  }
}

template <RelMode kRel, CmpUlp kUlp>
void Accumulate(const CmpSetup& s, const double* tp, const double* gp, const double* ulp, int64_t n,
                int64_t first_index, CmpAcc* a) {
  const D d;
  constexpr size_t kN = hn::MaxLanes(D());
  static_assert(kCmpLanes % kN == 0);
  constexpr size_t kV = kCmpLanes / kN;
  V dot[kV], tt[kV], gg[kV], dd[kV], sabs[kV], ssq[kV], sg2[kV], st2[kV], srel[kV], sulp[kV];
  for (size_t v = 0; v < kV; ++v) {
    dot[v] = hn::LoadU(d, a->dot + v * kN);
    tt[v] = hn::LoadU(d, a->tt + v * kN);
    gg[v] = hn::LoadU(d, a->gg + v * kN);
    dd[v] = hn::LoadU(d, a->dd + v * kN);
    sabs[v] = hn::LoadU(d, a->sum_abs + v * kN);
    ssq[v] = hn::LoadU(d, a->sum_sq + v * kN);
    sg2[v] = hn::LoadU(d, a->sum_g2 + v * kN);
    st2[v] = hn::LoadU(d, a->sum_t2 + v * kN);
    srel[v] = hn::LoadU(d, a->sum_rel + v * kN);
    sulp[v] = hn::LoadU(d, a->sum_ulp + v * kN);
  }
  const V zero = hn::Zero(d);
  const V one = hn::Set(d, 1.0);
  const V inf = hn::Set(d, std::numeric_limits<double>::infinity());
  const V ninf = hn::Neg(inf);
  const V thr1 = hn::Set(d, s.thr1);
  const V thr5 = hn::Set(d, s.thr5);
  const V atol = hn::Set(d, s.atol);
  const V rtol = hn::Set(d, s.rtol);
  // Counts (exact in double for a run) and extremes: order-independent, one vector each.
  V finite = zero, rel_count = zero, ulp_count = zero, close = zero;
  V nan_mm = zero, pinf_mm = zero, ninf_mm = zero, below1 = zero, below5 = zero;
  V mask_mm = zero, rel_nan = zero;
  V max_abs = zero, max_rel = zero, max_ulp = zero;
  V worst = hn::Set(d, -1.0), worst_index = hn::Set(d, -1.0);
  V index = hn::Iota(d, static_cast<double>(first_index));
  const V step_n = hn::Set(d, static_cast<double>(kN));

  // While a chunk has only finite pairs, numprobe's sums of t^2, g^2 and (t - g)^2 are msprobe's
  // tt, gg and dd lane for lane, so only those are accumulated (the fast step); the first NaN or
  // Inf copies them over and every later vector takes the full step.
  bool all_finite = a->all_finite;
  auto step = [&](auto finite_tag, size_t v, size_t i, V t, V g, M both) HWY_ATTR {
    constexpr bool kFinite = decltype(finite_tag)::value;
    const V tz = kFinite ? t : hn::IfThenElseZero(hn::IsFinite(t), t);
    const V gz = kFinite ? g : hn::IfThenElseZero(hn::IsFinite(g), g);
    const V dz = hn::Sub(tz, gz);
    const V az = hn::Abs(dz);
    const V d2 = hn::Mul(dz, dz);
    const V t2 = hn::Mul(tz, tz);
    const V g2 = hn::Mul(gz, gz);
    dot[v] = hn::Add(dot[v], hn::Mul(tz, gz));
    tt[v] = hn::Add(tt[v], t2);
    gg[v] = hn::Add(gg[v], g2);
    dd[v] = hn::Add(dd[v], d2);
    max_abs = hn::Max(max_abs, az);

    const V r = RelError<kRel>(tz, gz);
    const M r_nan = hn::IsNaN(r);
    rel_nan = hn::Or(rel_nan, hn::IfThenElseZero(r_nan, one));
    max_rel = hn::Max(max_rel, hn::IfThenZeroElse(r_nan, r));
    below1 = hn::Add(below1, hn::IfThenElseZero(hn::Lt(r, thr1), one));
    below5 = hn::Add(below5, hn::IfThenElseZero(hn::Lt(r, thr5), one));

    if constexpr (kFinite) {
      finite = hn::Add(finite, one);
      sabs[v] = hn::Add(sabs[v], az);
    } else {
      finite = hn::Add(finite, hn::IfThenElseZero(both, one));
      sabs[v] = hn::Add(sabs[v], hn::IfThenElseZero(both, az));
      ssq[v] = hn::Add(ssq[v], hn::IfThenElseZero(both, d2));
      sg2[v] = hn::Add(sg2[v], hn::IfThenElseZero(both, g2));
      st2[v] = hn::Add(st2[v], hn::IfThenElseZero(both, t2));
    }
    const M has_rel = hn::And(both, hn::Ne(gz, zero));
    srel[v] = hn::Add(srel[v], hn::IfThenElseZero(has_rel, hn::Div(az, hn::Abs(gz))));
    rel_count = hn::Add(rel_count, hn::IfThenElseZero(has_rel, one));
    const V aw = kFinite ? az : hn::IfThenElse(both, az, hn::Set(d, -1.0));
    const M better = hn::Gt(aw, worst);
    worst = hn::IfThenElse(better, aw, worst);
    worst_index = hn::IfThenElse(better, index, worst_index);
    index = hn::Add(index, step_n);

    const M close_fin = hn::And(both, hn::Le(az, hn::Add(atol, hn::Mul(rtol, hn::Abs(gz)))));
    close = hn::Add(close, hn::IfThenElseZero(close_fin, one));
    if (!kFinite && !hn::AllTrue(d, both)) {  // NaN or Inf: counted on their own
      const M t_nan = hn::IsNaN(t);
      const M g_nan = hn::IsNaN(g);
      const M t_inf = hn::IsInf(t);
      const M g_inf = hn::IsInf(g);
      const M close_nf = hn::Or(hn::And(t_nan, g_nan), hn::And(t_inf, hn::Eq(t, g)));
      close = hn::Add(close, hn::IfThenElseZero(close_nf, one));
      const M nan_x = hn::Xor(t_nan, g_nan);
      const M inf_x = hn::Xor(t_inf, g_inf);
      nan_mm = hn::Add(nan_mm, hn::IfThenElseZero(nan_x, one));
      pinf_mm = hn::Add(pinf_mm, hn::IfThenElseZero(hn::Xor(hn::Eq(t, inf), hn::Eq(g, inf)), one));
      ninf_mm =
          hn::Add(ninf_mm, hn::IfThenElseZero(hn::Xor(hn::Eq(t, ninf), hn::Eq(g, ninf)), one));
      mask_mm = hn::Or(mask_mm, hn::IfThenElseZero(hn::Or(nan_x, inf_x), one));
    }

    if constexpr (kUlp != CmpUlp::kNone) {
      V u;
      if constexpr (kUlp == CmpUlp::kOther) {
        u = hn::LoadU(d, ulp + i);
      } else {
        u = UlpDistance<kUlp>(t, g);
      }
      const M has = hn::AndNot(hn::IsNaN(u), both);
      const V uz = hn::IfThenElseZero(has, u);
      max_ulp = hn::Max(max_ulp, uz);
      sulp[v] = hn::Add(sulp[v], uz);
      ulp_count = hn::Add(ulp_count, hn::IfThenElseZero(has, one));
    }
  };

  const int64_t groups = n / kCmpLanes * kCmpLanes;
  for (int64_t k = 0; k < groups; k += kCmpLanes) {
    for (size_t v = 0; v < kV; ++v) {
      const size_t i = static_cast<size_t>(k) + v * kN;
      const V t = hn::LoadU(d, tp + i);
      const V g = hn::LoadU(d, gp + i);
      const M both = hn::And(hn::IsFinite(t), hn::IsFinite(g));
      if (HWY_LIKELY(all_finite)) {
        if (HWY_LIKELY(hn::AllTrue(d, both))) {
          step(std::true_type(), v, i, t, g, both);
          continue;
        }
        for (size_t w = 0; w < kV; ++w) {
          st2[w] = tt[w];
          sg2[w] = gg[w];
          ssq[w] = dd[w];
        }
        all_finite = false;
      }
      step(std::false_type(), v, i, t, g, both);
    }
  }
  if (all_finite) {  // the numprobe sums are still msprobe's
    for (size_t v = 0; v < kV; ++v) {
      st2[v] = tt[v];
      sg2[v] = gg[v];
      ssq[v] = dd[v];
    }
  }
  a->all_finite = all_finite;

  for (size_t v = 0; v < kV; ++v) {
    hn::StoreU(dot[v], d, a->dot + v * kN);
    hn::StoreU(tt[v], d, a->tt + v * kN);
    hn::StoreU(gg[v], d, a->gg + v * kN);
    hn::StoreU(dd[v], d, a->dd + v * kN);
    hn::StoreU(sabs[v], d, a->sum_abs + v * kN);
    hn::StoreU(ssq[v], d, a->sum_sq + v * kN);
    hn::StoreU(sg2[v], d, a->sum_g2 + v * kN);
    hn::StoreU(st2[v], d, a->sum_t2 + v * kN);
    hn::StoreU(srel[v], d, a->sum_rel + v * kN);
    hn::StoreU(sulp[v], d, a->sum_ulp + v * kN);
  }
  auto count = [&](V c) { return static_cast<int64_t>(hn::GetLane(hn::SumOfLanes(d, c))); };
  a->finite += count(finite);
  a->rel_count += count(rel_count);
  a->ulp_count += count(ulp_count);
  a->close += count(close);
  a->nan_mm += count(nan_mm);
  a->pinf_mm += count(pinf_mm);
  a->ninf_mm += count(ninf_mm);
  a->below_1 += count(below1);
  a->below_5 += count(below5);
  a->mask_mismatch |= count(mask_mm) > 0;
  a->rel_nan |= count(rel_nan) > 0;
  a->max_abs = std::max(a->max_abs, hn::GetLane(hn::MaxOfLanes(d, max_abs)));
  a->max_rel = std::max(a->max_rel, hn::GetLane(hn::MaxOfLanes(d, max_rel)));
  a->max_ulp = std::max(a->max_ulp, hn::GetLane(hn::MaxOfLanes(d, max_ulp)));
  // The first index of the largest |t - g|: per lane the first, then across lanes the smallest
  // index among equals; the run comes after what `a` holds, so it must be strictly larger.
  HWY_ALIGN double w[kN];
  HWY_ALIGN double wi[kN];
  hn::Store(worst, d, w);
  hn::Store(worst_index, d, wi);
  MergeWorstLanes(w, wi, kN, &a->worst, &a->worst_index);
  if (groups < n) {
    CmpAccumulateScalar(s, tp + groups, gp + groups, ulp != nullptr ? ulp + groups : nullptr,
                        n - groups, first_index + groups, a);
  }
}

template <RelMode kRel>
CmpAccumulateFn SelectForRel(CmpUlp ulp) {
  switch (ulp) {
    case CmpUlp::kNone:
      return &Accumulate<kRel, CmpUlp::kNone>;
    case CmpUlp::kF64:
      return &Accumulate<kRel, CmpUlp::kF64>;
    case CmpUlp::kF32:
      return &Accumulate<kRel, CmpUlp::kF32>;
    case CmpUlp::kBF16:
      return &Accumulate<kRel, CmpUlp::kBF16>;
    default:
      return &Accumulate<kRel, CmpUlp::kOther>;
  }
}

// Dispatches on the setup; the precomputed-ULP kernel (kOther) serves every setup whose ULP
// distances are not computed in vectors.
void Dispatch(const CmpSetup& s, const double* t, const double* g, const double* ulp, int64_t n,
              int64_t first_index, CmpAcc* a) {
  const CmpUlp u = CmpUlpIsSimd(s) ? s.ulp : CmpUlp::kOther;
  const CmpAccumulateFn fn =
      s.rel == CmpFloat::kF32 ? SelectForRel<RelMode::kF32>(u) : SelectForRel<RelMode::kF64>(u);
  fn(s, t, g, ulp, n, first_index, a);
}

CmpAccumulateFn SelectAccumulate() { return &Dispatch; }

// Contiguous f32 / bf16 / f64 elements to doubles (all exact).
bool Decode(DType dtype, const std::byte* src, int64_t n, double* out) {
  const D d;
  const hn::Rebind<float, D> df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t k = 0;
  switch (dtype) {
    case DType::kF32:
      for (; k + lanes <= n; k += lanes) {
        const auto f = hn::LoadU(df, reinterpret_cast<const float*>(src) + k);
        hn::StoreU(hn::PromoteTo(d, f), d, out + k);
      }
      for (; k < n; ++k) {
        float f;
        std::memcpy(&f, src + k * 4, sizeof(f));
        out[k] = f;
      }
      return true;
    case DType::kBF16: {
      const hn::Rebind<uint16_t, D> d16;
      const hn::Rebind<uint32_t, D> d32;
      for (; k + lanes <= n; k += lanes) {
        const auto h = hn::LoadU(d16, reinterpret_cast<const uint16_t*>(src) + k);
        const auto f = hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(d32, h)));
        hn::StoreU(hn::PromoteTo(d, f), d, out + k);
      }
      for (; k < n; ++k) {
        uint16_t h;
        std::memcpy(&h, src + k * 2, sizeof(h));
        const uint32_t bits = uint32_t{h} << 16;
        float f;
        std::memcpy(&f, &bits, sizeof(f));
        out[k] = f;
      }
      return true;
    }
    case DType::kF64:
      std::memcpy(out, src, static_cast<size_t>(n) * sizeof(double));
      return true;
    default:
      return false;
  }
}

#else

CmpAccumulateFn SelectAccumulate() { return nullptr; }
bool Decode(DType, const std::byte*, int64_t, double*) { return false; }

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace numprobe::detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "kernels/hwy_targets.h"

namespace numprobe::detail {

HWY_EXPORT(SelectAccumulate);

HWY_EXPORT(Decode);

CmpAccumulateFn HwyCmpAccumulateFn() { return HWY_DYNAMIC_DISPATCH(SelectAccumulate)(); }

bool CmpDecode(DType dtype, const std::byte* src, int64_t n, double* out) {
  return HWY_DYNAMIC_DISPATCH(Decode)(dtype, src, n, out);
}

std::vector<std::pair<std::string, CmpAccumulateFn>> HwyCmpAccumulateFnsPerTarget() {
  return EveryTarget<CmpAccumulateFn>([] { return HWY_DYNAMIC_DISPATCH(SelectAccumulate)(); });
}

}  // namespace numprobe::detail
#endif  // HWY_ONCE

#endif  // NUMPROBE_WITH_HWY
