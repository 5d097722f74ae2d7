// The scalar reference of the tensor-pair metric kernel (compare_internal.h): the per-element
// definitions, the lane accumulation every vector kernel reproduces bit for bit, and the choice
// between the reference and the Highway kernel.
#include "kernels/compare_kernel.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "numprobe/float_convert.h"

namespace numprobe::detail {
namespace {

// Monotonic integer position of a value of `low` (already representable): +0 and -0 are both 0.
int64_t Ordinal(DType low, double v) {
  uint64_t bits = 0;
  uint64_t sign = 0;
  switch (low) {
    case DType::kF64:
      bits = std::bit_cast<uint64_t>(v);
      sign = uint64_t{1} << 63;
      break;
    case DType::kF32:
      bits = std::bit_cast<uint32_t>(static_cast<float>(v));
      sign = 1u << 31;
      break;
    case DType::kF16:
      bits = F32ToF16(static_cast<float>(v));
      sign = 1u << 15;
      break;
    case DType::kBF16:
      bits = F32ToBF16(static_cast<float>(v));
      sign = 1u << 15;
      break;
    default:
      bits = F32ToF8(low, static_cast<float>(v));
      sign = 1u << 7;
      break;
  }
  const auto magnitude = static_cast<int64_t>(bits & (sign - 1));
  return (bits & sign) != 0 ? -magnitude : magnitude;
}

// `v` (a value of dtype `from`) rounded to `low`, once.
double RoundTo(DType low, DType from, double v) {
  if (low == DType::kF64) return v;
  if (!CmpFloatSourced(from)) return RoundToDType(low, v);  // one correct rounding from double
  switch (low) {  // v is exactly a float here: round from it directly
    case DType::kF32:
      return static_cast<double>(static_cast<float>(v));
    case DType::kF16:
      return F16ToF32(F32ToF16(static_cast<float>(v)));
    case DType::kBF16:
      return BF16ToF32(F32ToBF16(static_cast<float>(v)));
    default:
      return F8ToF32(low, F32ToF8(low, static_cast<float>(v)));
  }
}

// The bf16 encoding of a finite float, rounded to nearest even.
uint32_t Bf16Bits(float f) {
  const auto bits = std::bit_cast<uint32_t>(f);
  return (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
}

// Monotonic position of a finite value in the lower-precision dtype, or nullopt when it rounds
// out of that dtype's range (f64 is handled by CmpUlpDistance directly).
std::optional<int64_t> UlpOrdinal(const CmpSetup& s, DType from, double v) {
  switch (s.ulp) {
    case CmpUlp::kF32: {
      const auto f = static_cast<float>(v);  // one rounding from double, exact from narrower
      if (!std::isfinite(f)) return std::nullopt;
      const auto bits = std::bit_cast<uint32_t>(f);
      const auto mag = static_cast<int64_t>(bits & 0x7fffffffu);
      return (bits >> 31) != 0 ? -mag : mag;
    }
    case CmpUlp::kBF16: {
      uint32_t b = 0;
      if (!CmpFloatSourced(from)) {
        const double r = RoundToDType(DType::kBF16, v);
        if (!std::isfinite(r)) return std::nullopt;
        b = std::bit_cast<uint32_t>(static_cast<float>(r)) >> 16;
      } else {
        b = Bf16Bits(static_cast<float>(v));
        if ((b & 0x7f80u) == 0x7f80u) return std::nullopt;  // rounded to Inf
      }
      const auto mag = static_cast<int64_t>(b & 0x7fffu);
      return (b & 0x8000u) != 0 ? -mag : mag;
    }
    default: {
      const double r = RoundTo(s.low, from, v);
      if (!std::isfinite(r)) return std::nullopt;
      return Ordinal(s.low, r);
    }
  }
}

}  // namespace

void ResetCmpAcc(CmpAcc* a) {
  for (int j = 0; j < kCmpLanes; ++j) {
    a->dot[j] = a->tt[j] = a->gg[j] = a->dd[j] = 0.0;
    a->sum_abs[j] = a->sum_sq[j] = a->sum_g2[j] = a->sum_t2[j] = a->sum_rel[j] = 0.0;
    a->sum_ulp[j] = 0.0;
  }
  a->finite = a->rel_count = a->ulp_count = a->close = 0;
  a->nan_mm = a->pinf_mm = a->ninf_mm = a->below_1 = a->below_5 = 0;
  a->mask_mismatch = a->rel_nan = false;
  a->all_finite = true;
  a->max_abs = a->max_rel = a->max_ulp = 0.0;
  a->worst = -1.0;
  a->worst_index = -1;
}

double CombineCmpLanes(const double* l) {
  const double even = ((l[0] + l[8]) + (l[4] + l[12])) + ((l[2] + l[10]) + (l[6] + l[14]));
  const double odd = ((l[1] + l[9]) + (l[5] + l[13])) + ((l[3] + l[11]) + (l[7] + l[15]));
  return even + odd;
}

double CmpRelError(const CmpSetup& s, double tz, double gz) {
  if (s.rel == CmpFloat::kF64) {
    const double b = gz == 0 ? gz + kCmpEpsF64 : gz;
    const double n = gz == 0 ? tz + kCmpEpsF64 : tz;
    return std::fabs((n - b) / b);
  }
  // Both sides are exactly floats when the type is f32 (f16, bf16, fp8 and f32 all widen exactly).
  const auto eps = static_cast<float>(kCmpEpsF32);
  float n = static_cast<float>(tz);
  float b = static_cast<float>(gz);
  if (b == 0) {
    n += eps;
    b += eps;
  }
  return std::fabs(static_cast<double>((n - b) / b));
}

double CmpUlpDistance(const CmpSetup& s, double t, double g) {
  if (s.ulp == CmpUlp::kF64) {
    // Sign-magnitude positions; their distance can exceed int64, so it is taken unsigned.
    const auto tb = std::bit_cast<uint64_t>(t);
    const auto gb = std::bit_cast<uint64_t>(g);
    const uint64_t tm = tb & ~(uint64_t{1} << 63);
    const uint64_t gm = gb & ~(uint64_t{1} << 63);
    const uint64_t dist = (tb >> 63) != (gb >> 63) ? tm + gm : (tm > gm ? tm - gm : gm - tm);
    return static_cast<double>(dist);
  }
  const auto ot = UlpOrdinal(s, s.t_dtype, t);
  const auto og = UlpOrdinal(s, s.g_dtype, g);
  if (!ot.has_value() || !og.has_value()) return std::nan("");
  return std::fabs(static_cast<double>(*ot - *og));
}

void CmpAccumulateScalar(const CmpSetup& s, const double* tv, const double* gv, const double* ulp,
                         int64_t n, int64_t first_index, CmpAcc* a) {
  for (int64_t k = 0; k < n; ++k) {
    const int j = static_cast<int>(k % kCmpLanes);
    const double t = tv[k];
    const double g = gv[k];
    const bool t_fin = std::isfinite(t);
    const bool g_fin = std::isfinite(g);
    const double tz = t_fin ? t : 0.0;
    const double gz = g_fin ? g : 0.0;
    const double dz = tz - gz;
    const double az = std::fabs(dz);
    // msprobe: NaN/Inf must sit at the same positions (Inf of either sign); they count as 0.
    a->dot[j] += tz * gz;
    a->tt[j] += tz * tz;
    a->gg[j] += gz * gz;
    a->dd[j] += dz * dz;
    a->max_abs = std::max(a->max_abs, az);
    const double r = CmpRelError(s, tz, gz);
    if (std::isnan(r)) {
      a->rel_nan = true;
    } else {
      a->max_rel = std::max(a->max_rel, r);
    }
    a->below_1 += r < s.thr1 ? 1 : 0;
    a->below_5 += r < s.thr5 ? 1 : 0;
    if (t_fin && g_fin) {
      ++a->finite;
      a->sum_abs[j] += az;
      a->sum_sq[j] += dz * dz;
      a->sum_g2[j] += gz * gz;
      a->sum_t2[j] += tz * tz;
      if (g != 0) {
        a->sum_rel[j] += az / std::fabs(g);
        ++a->rel_count;
      }
      if (az > a->worst) {
        a->worst = az;
        a->worst_index = first_index + k;
      }
      a->close += az <= s.atol + s.rtol * std::fabs(g) ? 1 : 0;
      if (s.ulp != CmpUlp::kNone) {
        const double u = ulp != nullptr ? ulp[k] : CmpUlpDistance(s, t, g);
        if (!std::isnan(u)) {
          a->max_ulp = std::max(a->max_ulp, u);
          a->sum_ulp[j] += u;
          ++a->ulp_count;
        }
      }
    } else {
      a->all_finite = false;
      const bool t_nan = std::isnan(t);
      const bool g_nan = std::isnan(g);
      const bool t_inf = !t_fin && !t_nan;
      const bool g_inf = !g_fin && !g_nan;
      a->nan_mm += t_nan != g_nan ? 1 : 0;
      a->pinf_mm += (t_inf && t > 0) != (g_inf && g > 0) ? 1 : 0;
      a->ninf_mm += (t_inf && t < 0) != (g_inf && g < 0) ? 1 : 0;
      a->close += (t_nan && g_nan) || (t_inf && g_inf && (t > 0) == (g > 0)) ? 1 : 0;
      if (t_nan != g_nan || t_inf != g_inf) a->mask_mismatch = true;
    }
  }
}

CmpAccumulateFn CmpAccumulate(bool force_scalar) {
  if (force_scalar) return &CmpAccumulateScalar;
  const char* env = std::getenv("NUMPROBE_FORCE_SCALAR");
  if (env != nullptr && std::strcmp(env, "1") == 0) return &CmpAccumulateScalar;
  const CmpAccumulateFn fn = HwyCmpAccumulateFn();
  return fn != nullptr ? fn : &CmpAccumulateScalar;
}

#if !defined(NUMPROBE_WITH_HWY)
CmpAccumulateFn HwyCmpAccumulateFn() { return nullptr; }
bool CmpDecode(DType, const std::byte*, int64_t, double*) { return false; }
std::vector<std::pair<std::string, CmpAccumulateFn>> HwyCmpAccumulateFnsPerTarget() { return {}; }
#endif

}  // namespace numprobe::detail
