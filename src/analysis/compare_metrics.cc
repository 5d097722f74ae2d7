// Tensor-pair metrics (see compare_metrics.h for the msprobe semantics reproduced here). Elements
// are decoded chunk by chunk into doubles (exact for every stored type but integers beyond 2^53,
// which numpy rounds the same way), the per-element work runs over the chunk, and per-chunk
// partial results are combined in chunk order.
#include "numprobe/compare_metrics.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "numprobe/float_convert.h"
#include "numprobe/thread_pool.h"

#include "analysis/py_format.h"

namespace numprobe {
namespace {

using Kind = MetricCell::Kind;

constexpr int64_t kChunk = 1 << 16;
constexpr double kEps = std::numeric_limits<double>::epsilon();  // msprobe's Const.FLOAT_EPSILON

// The numpy dtype msprobe ends up with after reading a tensor (bf16/fp8 are widened to f32).
enum class NpType : uint8_t { kF16, kF32, kF64, kInt, kBool };

NpType NumpyType(DType d) {
  switch (d) {
    case DType::kF16:
      return NpType::kF16;
    case DType::kF32:
    case DType::kBF16:
    case DType::kF8E4M3FN:
    case DType::kF8E5M2:
    case DType::kF8E4M3FNUZ:
    case DType::kF8E5M2FNUZ:
      return NpType::kF32;
    case DType::kF64:
    case DType::kC64:  // numpy's astype(float) keeps the real part
    case DType::kC128:
      return NpType::kF64;
    case DType::kBool:
      return NpType::kBool;
    default:
      return NpType::kInt;
  }
}

// The float type of each side in msprobe's relative error (non-floats become float64).
NpType RelSideType(NpType t) {
  return t == NpType::kF16 || t == NpType::kF32 || t == NpType::kF64 ? t : NpType::kF64;
}

NpType Promote(NpType a, NpType b) {
  if (a == NpType::kF64 || b == NpType::kF64) return NpType::kF64;
  if (a == NpType::kF32 || b == NpType::kF32) return NpType::kF32;
  return NpType::kF16;
}

float RoundF16(float x) { return F16ToF32(F32ToF16(x)); }

// x + eps in the type of one side (numpy adds a Python float in the array's own type).
double AddEps(double x, NpType t) {
  switch (t) {
    case NpType::kF64:
      return x + kEps;
    case NpType::kF32:
      return static_cast<double>(static_cast<float>(x) + static_cast<float>(kEps));
    default:
      return static_cast<double>(
          RoundF16(static_cast<float>(x) + RoundF16(static_cast<float>(kEps))));
  }
}

// msprobe's element relative error |(n' - b') / b'| in the promoted type `rt`.
double RelError(double n, double b, NpType n_type, NpType b_type, NpType rt) {
  if (b == 0) {
    n = AddEps(n, n_type);
    b = AddEps(b, b_type);
  }
  switch (rt) {
    case NpType::kF64:
      return std::fabs((n - b) / b);
    case NpType::kF32: {
      const float d = static_cast<float>(n) - static_cast<float>(b);
      return std::fabs(static_cast<double>(d / static_cast<float>(b)));
    }
    default: {
      const float d = RoundF16(static_cast<float>(n) - static_cast<float>(b));
      return std::fabs(static_cast<double>(RoundF16(d / static_cast<float>(b))));
    }
  }
}

// A threshold as numpy compares it against an array of type `rt`.
double ThresholdIn(double thr, NpType rt) {
  switch (rt) {
    case NpType::kF64:
      return thr;
    case NpType::kF32:
      return static_cast<double>(static_cast<float>(thr));
    default:
      return static_cast<double>(RoundF16(static_cast<float>(thr)));
  }
}

// A view with its size-1 dimensions dropped (numpy's squeeze), read in C order.
struct Flat {
  const std::byte* base = nullptr;
  DType dtype = DType::kF32;
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;  // elements
  int64_t numel = 1;
  bool contiguous = true;
};

Flat Squeeze(const TensorView& v) {
  Flat f;
  f.base = v.first();
  f.dtype = v.dtype;
  f.numel = v.numel();
  for (size_t d = 0; d < v.shape.size(); ++d) {
    if (v.shape[d] == 1) continue;
    f.dims.push_back(v.shape[d]);
    f.strides.push_back(v.strides[d]);
  }
  int64_t expect = 1;
  for (size_t d = f.dims.size(); d-- > 0;) {
    if (f.dims[d] != 0 && f.strides[d] != expect) f.contiguous = false;
    expect *= f.dims[d];
  }
  return f;
}

// Every f16 value as a float, so decoding is one load (256 KiB, built on first use).
const float* F16Table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t i = 0; i < 65536; ++i) t[i] = F16ToF32(static_cast<uint16_t>(i));
    return t;
  }();
  return table.data();
}

template <DType D>
double LoadOne(const std::byte* p) {
  using T = typename StorageType<D>::type;
  T v;
  std::memcpy(&v, p, sizeof(T));
  if constexpr (D == DType::kF16) {
    return F16Table()[v];
  } else if constexpr (D == DType::kBF16) {
    return std::bit_cast<float>(static_cast<uint32_t>(v) << 16);  // bf16 is f32's top half
  } else if constexpr (D == DType::kF8E4M3FN || D == DType::kF8E5M2 || D == DType::kF8E4M3FNUZ ||
                       D == DType::kF8E5M2FNUZ) {
    return F8ToF32(D, v);
  } else if constexpr (D == DType::kBool) {
    return v != 0 ? 1.0 : 0.0;
  } else if constexpr (D == DType::kC64 || D == DType::kC128) {
    return static_cast<double>(v.re);
  } else {
    return static_cast<double>(v);
  }
}

// Decodes logical elements [start, start + count) of `f` into out.
void Load(const Flat& f, int64_t start, int64_t count, double* out) {
  Dispatch(f.dtype, [&]<DType D>() {
    const int64_t item = ItemSize(D);
    if (f.contiguous) {
      const std::byte* p = f.base + start * item;
      for (int64_t i = 0; i < count; ++i) out[i] = LoadOne<D>(p + i * item);
      return;
    }
    const size_t nd = f.dims.size();
    std::vector<int64_t> idx(nd, 0);
    int64_t rest = start;
    int64_t offset = 0;
    for (size_t d = nd; d-- > 0;) {
      idx[d] = rest % f.dims[d];
      rest /= f.dims[d];
      offset += idx[d] * f.strides[d];
    }
    for (int64_t i = 0; i < count; ++i) {
      out[i] = LoadOne<D>(f.base + offset * item);
      for (size_t d = nd; d-- > 0;) {
        ++idx[d];
        offset += f.strides[d];
        if (idx[d] < f.dims[d]) break;
        offset -= idx[d] * f.strides[d];
        idx[d] = 0;
      }
    }
  });
}

// Significand bits (with the implicit one) of a float dtype.
int SignificandBits(DType d) {
  switch (d) {
    case DType::kF64:
      return 53;
    case DType::kF32:
      return 24;
    case DType::kF16:
      return 11;
    case DType::kBF16:
      return 8;
    case DType::kF8E4M3FN:
    case DType::kF8E4M3FNUZ:
      return 4;
    case DType::kF8E5M2:
    case DType::kF8E5M2FNUZ:
      return 3;
    default:
      return 0;
  }
}

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
  if (from == DType::kF64 || from == DType::kC128 || !IsFloating(from)) {
    return RoundToDType(low, v);  // one correct rounding from double
  }
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

struct Partial {
  // msprobe (NaN/Inf positions zeroed)
  bool mask_mismatch = false;
  double dot = 0, tt = 0, gg = 0, dd = 0;
  double max_abs = 0;
  bool abs_nan = false;
  double max_rel = 0;
  bool rel_nan = false;
  int64_t below_1 = 0, below_5 = 0;
  // numprobe (positions finite on both sides)
  int64_t finite = 0;
  double sum_abs = 0, sum_sq = 0, sum_g2 = 0, sum_t2 = 0, sum_rel = 0;
  int64_t rel_count = 0;
  double max_ulp = 0, sum_ulp = 0;
  int64_t ulp_count = 0;
  int64_t close = 0;
  int64_t nan_mm = 0, pinf_mm = 0, ninf_mm = 0;
  double worst = -1;
  int64_t worst_index = -1;

  void Merge(const Partial& o) {
    mask_mismatch |= o.mask_mismatch;
    dot += o.dot;
    tt += o.tt;
    gg += o.gg;
    dd += o.dd;
    max_abs = std::max(max_abs, o.max_abs);
    abs_nan |= o.abs_nan;
    max_rel = std::max(max_rel, o.max_rel);
    rel_nan |= o.rel_nan;
    below_1 += o.below_1;
    below_5 += o.below_5;
    finite += o.finite;
    sum_abs += o.sum_abs;
    sum_sq += o.sum_sq;
    sum_g2 += o.sum_g2;
    sum_t2 += o.sum_t2;
    sum_rel += o.sum_rel;
    rel_count += o.rel_count;
    max_ulp = std::max(max_ulp, o.max_ulp);
    sum_ulp += o.sum_ulp;
    ulp_count += o.ulp_count;
    close += o.close;
    nan_mm += o.nan_mm;
    pinf_mm += o.pinf_mm;
    ninf_mm += o.ninf_mm;
    if (o.worst > worst) {  // a later chunk wins only when strictly worse: the first index stays
      worst = o.worst;
      worst_index = o.worst_index;
    }
  }
};

struct PairSetup {
  Flat t, g;
  NpType t_np, g_np;
  NpType t_rel, g_rel, rel;
  double thr1, thr5;
  std::optional<DType> low;
  double rtol, atol;
};

// The bf16 encoding of a finite float, rounded to nearest even.
inline uint32_t Bf16Bits(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  return (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
}

// How ULP distances are taken, chosen once per pair.
enum class UlpKind : uint8_t { kNone, kF64, kF32, kBF16, kOther };

// Monotonic position of a finite value in the lower-precision dtype (+0 and -0 are both 0), or
// nullopt when it rounds out of that dtype's range.
template <UlpKind U>
inline std::optional<int64_t> UlpOrdinal(const PairSetup& s, DType from, double v) {
  if constexpr (U == UlpKind::kF64) {
    const uint64_t bits = std::bit_cast<uint64_t>(v);
    const auto mag = static_cast<int64_t>(bits & ~(uint64_t{1} << 63));
    return (bits >> 63) != 0 ? -mag : mag;
  } else if constexpr (U == UlpKind::kF32) {
    const float f = static_cast<float>(v);  // one rounding from double, exact from narrower
    if (!std::isfinite(f)) return std::nullopt;
    const uint32_t bits = std::bit_cast<uint32_t>(f);
    const auto mag = static_cast<int64_t>(bits & 0x7fffffffu);
    return (bits >> 31) != 0 ? -mag : mag;
  } else if constexpr (U == UlpKind::kBF16) {
    uint32_t b = 0;
    if (from == DType::kF64 || from == DType::kC128 || !IsFloating(from)) {
      const double r = RoundToDType(DType::kBF16, v);
      if (!std::isfinite(r)) return std::nullopt;
      b = std::bit_cast<uint32_t>(static_cast<float>(r)) >> 16;
    } else {
      b = Bf16Bits(static_cast<float>(v));
      if ((b & 0x7f80u) == 0x7f80u) return std::nullopt;  // rounded to Inf
    }
    const auto mag = static_cast<int64_t>(b & 0x7fffu);
    return (b & 0x8000u) != 0 ? -mag : mag;
  } else {
    const double r = RoundTo(*s.low, from, v);
    if (!std::isfinite(r)) return std::nullopt;
    return Ordinal(*s.low, r);
  }
}

template <NpType kRel, UlpKind kUlp>
void ChunkLoop(const PairSetup& s, int64_t start, int64_t count, const double* tv, const double* gv,
               Partial* p) {
  for (int64_t i = 0; i < count; ++i) {
    const double t = tv[i];
    const double g = gv[i];
    const bool t_fin = std::isfinite(t);
    const bool g_fin = std::isfinite(g);
    if (t_fin && g_fin) [[likely]] {
      const double diff = t - g;
      const double a = std::fabs(diff);
      ++p->finite;
      p->sum_abs += a;
      p->sum_sq += diff * diff;
      p->sum_g2 += g * g;
      p->sum_t2 += t * t;
      if (g != 0) {
        p->sum_rel += a / std::fabs(g);
        ++p->rel_count;
      }
      if (a > p->worst) {
        p->worst = a;
        p->worst_index = start + i;
      }
      p->close += a <= s.atol + s.rtol * std::fabs(g);
      if constexpr (kUlp != UlpKind::kNone) {
        const auto ot = UlpOrdinal<kUlp>(s, s.t.dtype, t);
        const auto og = UlpOrdinal<kUlp>(s, s.g.dtype, g);
        if (ot.has_value() && og.has_value()) {
          const double ulp = std::fabs(static_cast<double>(*ot - *og));
          p->max_ulp = std::max(p->max_ulp, ulp);
          p->sum_ulp += ulp;
          ++p->ulp_count;
        }
      }
      // msprobe's metrics on the same values.
      p->dot += t * g;
      p->tt += t * t;
      p->gg += g * g;
      p->dd += diff * diff;
      if (std::isnan(a)) {
        p->abs_nan = true;
      } else {
        p->max_abs = std::max(p->max_abs, a);
      }
    } else {
      const bool t_nan = std::isnan(t);
      const bool g_nan = std::isnan(g);
      const bool t_inf = !t_fin && !t_nan;
      const bool g_inf = !g_fin && !g_nan;
      p->nan_mm += t_nan != g_nan;
      p->pinf_mm += (t_inf && t > 0) != (g_inf && g > 0);
      p->ninf_mm += (t_inf && t < 0) != (g_inf && g < 0);
      p->close += (t_nan && g_nan) || (t_inf && g_inf && (t > 0) == (g > 0));
      // msprobe: NaN/Inf must sit at the same positions (Inf of either sign); they count as 0.
      if (t_nan != g_nan || t_inf != g_inf) p->mask_mismatch = true;
      const double tz = t_fin ? t : 0.0;
      const double gz = g_fin ? g : 0.0;
      p->dot += tz * gz;
      p->tt += tz * tz;
      p->gg += gz * gz;
      const double d = tz - gz;
      p->dd += d * d;
      p->max_abs = std::max(p->max_abs, std::fabs(d));
    }
    const double tz = t_fin ? t : 0.0;
    const double gz = g_fin ? g : 0.0;
    const double r = RelError(tz, gz, s.t_rel, s.g_rel, kRel);
    if (std::isnan(r)) {
      p->rel_nan = true;
    } else {
      p->max_rel = std::max(p->max_rel, r);
    }
    p->below_1 += r < s.thr1;
    p->below_5 += r < s.thr5;
  }
}

template <NpType kRel>
void ChunkLoopFor(const PairSetup& s, int64_t start, int64_t count, const double* tv,
                  const double* gv, Partial* p) {
  if (!s.low.has_value()) return ChunkLoop<kRel, UlpKind::kNone>(s, start, count, tv, gv, p);
  switch (*s.low) {
    case DType::kF64:
      return ChunkLoop<kRel, UlpKind::kF64>(s, start, count, tv, gv, p);
    case DType::kF32:
      return ChunkLoop<kRel, UlpKind::kF32>(s, start, count, tv, gv, p);
    case DType::kBF16:
      return ChunkLoop<kRel, UlpKind::kBF16>(s, start, count, tv, gv, p);
    default:
      return ChunkLoop<kRel, UlpKind::kOther>(s, start, count, tv, gv, p);
  }
}

void ChunkWork(const PairSetup& s, int64_t start, int64_t count, double* tv, double* gv,
               Partial* p) {
  Load(s.t, start, count, tv);
  Load(s.g, start, count, gv);
  switch (s.rel) {
    case NpType::kF64:
      return ChunkLoopFor<NpType::kF64>(s, start, count, tv, gv, p);
    case NpType::kF32:
      return ChunkLoopFor<NpType::kF32>(s, start, count, tv, gv, p);
    default:
      return ChunkLoopFor<NpType::kF16>(s, start, count, tv, gv, p);
  }
}

MetricCell Value12(double v) {
  if (std::isnan(v)) return MetricCell::Of(Kind::kNan);
  return MetricCell::Of(Kind::kValue, detail::PyFormatValue12(v));
}

TensorExtras MakeExtras(const Partial& p, const PairSetup& s, int64_t numel) {
  TensorExtras e;
  const double n = static_cast<double>(p.finite);
  e.mean_abs_err = p.finite > 0 ? p.sum_abs / n : 0;
  e.rmse = p.finite > 0 ? std::sqrt(p.sum_sq / n) : 0;
  e.mean_rel_err = p.rel_count > 0 ? p.sum_rel / static_cast<double>(p.rel_count) : 0;
  if (p.sum_sq == 0) {
    e.sqnr_db = std::numeric_limits<double>::infinity();
  } else if (p.sum_g2 == 0) {
    e.sqnr_db = -std::numeric_limits<double>::infinity();
  } else {
    e.sqnr_db = 10 * std::log10(p.sum_g2 / p.sum_sq);
  }
  if (s.low.has_value()) {
    e.ulp_dtype = std::string(Name(*s.low));
    e.max_ulp = p.max_ulp;
    e.mean_ulp = p.ulp_count > 0 ? p.sum_ulp / static_cast<double>(p.ulp_count) : 0;
  } else {
    e.max_ulp = e.mean_ulp = std::nan("");
  }
  e.allclose_ratio = numel > 0 ? static_cast<double>(p.close) / static_cast<double>(numel) : 0;
  e.nan_mismatch = p.nan_mm;
  e.pos_inf_mismatch = p.pinf_mm;
  e.neg_inf_mismatch = p.ninf_mm;
  e.worst_index = p.worst_index;
  return e;
}

double RelL2(const Partial& p) {
  if (p.nan_mm > 0 || p.pinf_mm > 0 || p.ninf_mm > 0)
    return std::numeric_limits<double>::infinity();
  if (p.sum_sq == 0) return 0;
  if (p.sum_g2 == 0) return std::numeric_limits<double>::infinity();
  return std::sqrt(p.sum_sq) / std::sqrt(p.sum_g2);
}

}  // namespace

std::optional<DType> LowerPrecision(DType a, DType b) {
  if (!IsFloating(a) || !IsFloating(b)) return std::nullopt;
  return SignificandBits(a) <= SignificandBits(b) ? a : b;
}

double UnitRoundoff(DType dtype) {
  const int bits = SignificandBits(dtype);
  return bits > 0 ? std::ldexp(1.0, -bits) : 0.0;
}

std::pair<double, double> AllcloseTolerance(DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return {1e-7, 1e-7};
    case DType::kF32:
      return {1.3e-6, 1e-5};
    case DType::kF16:
      return {1e-3, 1e-5};
    case DType::kBF16:
      return {1.6e-2, 1e-5};
    case DType::kF8E4M3FN:
    case DType::kF8E4M3FNUZ:
      return {0.125, 1e-5};
    case DType::kF8E5M2:
    case DType::kF8E5M2FNUZ:
      return {0.25, 1e-5};
    default:
      return {0.0, 0.0};
  }
}

TensorPairMetrics CompareTensorPair(const TensorView& target, const TensorView& golden,
                                    ThreadPool* pool) {
  TensorPairMetrics out;
  auto all = [&](Kind kind) { out.msprobe.fill(MetricCell::Of(kind)); };
  PairSetup s;
  s.t = Squeeze(target);
  s.g = Squeeze(golden);
  if (s.t.numel == 0) {  // msprobe: "This is empty data, can not compare."
    all(Kind::kUnsupported);
    return out;
  }
  if (s.t.dims != s.g.dims) {
    all(Kind::kShapeUnmatched);
    return out;
  }
  s.t_np = NumpyType(target.dtype);
  s.g_np = NumpyType(golden.dtype);
  s.t_rel = RelSideType(s.t_np);
  s.g_rel = RelSideType(s.g_np);
  s.rel = Promote(s.t_rel, s.g_rel);
  s.thr1 = ThresholdIn(0.001, s.rel);
  s.thr5 = ThresholdIn(0.005, s.rel);
  s.low = LowerPrecision(target.dtype, golden.dtype);
  std::tie(s.rtol, s.atol) =
      s.low.has_value() ? AllcloseTolerance(*s.low) : std::pair<double, double>{0.0, 0.0};
  const int64_t numel = s.t.numel;
  out.compared = true;

  if (s.t.dims.empty()) {
    // 0-d (msprobe's scalar path stops its checks here: no NaN/Inf zeroing): MaxAbsErr in the
    // pair's own type, MaxRelativeErr; the rest are "unsupported".
    double t = 0;
    double g = 0;
    Load(s.t, 0, 1, &t);
    Load(s.g, 0, 1, &g);
    const bool t_int = s.t_np == NpType::kInt || s.t_np == NpType::kBool;
    const bool g_int = s.g_np == NpType::kInt || s.g_np == NpType::kBool;
    double diff = 0;
    if (t_int || g_int) {
      diff = t - g;  // numpy promotes int with float to float64 (and bool 0-d was made float)
    } else {
      switch (Promote(s.t_np, s.g_np)) {
        case NpType::kF64:
          diff = t - g;
          break;
        case NpType::kF32:
          diff = static_cast<double>(static_cast<float>(t) - static_cast<float>(g));
          break;
        default:
          diff = static_cast<double>(RoundF16(static_cast<float>(t) - static_cast<float>(g)));
      }
    }
    all(Kind::kUnsupported);
    out.msprobe[2] = Value12(std::fabs(diff));
    out.msprobe[3] = Value12(RelError(t, g, s.t_rel, s.g_rel, s.rel));
    Partial p;
    double tv = 0;
    double gv = 0;
    ChunkWork(s, 0, 1, &tv, &gv, &p);
    out.extras = MakeExtras(p, s, 1);
    out.rel_l2 = RelL2(p);
    return out;
  }

  const int64_t chunks = (numel + kChunk - 1) / kChunk;
  std::vector<Partial> partials(static_cast<size_t>(chunks));
  auto run = [&](int64_t c) {
    const int64_t start = c * kChunk;
    const int64_t count = std::min(kChunk, numel - start);
    // Decoded elements of one chunk, per thread, reused from pair to pair.
    thread_local std::vector<double> tv;
    thread_local std::vector<double> gv;
    tv.resize(static_cast<size_t>(kChunk));
    gv.resize(static_cast<size_t>(kChunk));
    ChunkWork(s, start, count, tv.data(), gv.data(), &partials[static_cast<size_t>(c)]);
  };
  if (pool != nullptr && chunks > 1) {
    pool->ParallelFor(chunks, run);
  } else {
    for (int64_t c = 0; c < chunks; ++c) run(c);
  }
  Partial p;
  for (const Partial& part : partials) p.Merge(part);

  out.extras = MakeExtras(p, s, numel);
  out.rel_l2 = RelL2(p);
  if (p.mask_mismatch) {  // "The position of inf or nan in NPU and bench Tensor do not match."
    all(Kind::kNA);
    return out;
  }
  // Cosine.
  if (numel == 1) {
    out.msprobe[0] = MetricCell::Of(Kind::kUnsupported);
  } else {
    const double a_norm = std::sqrt(p.tt);
    const double b_norm = std::sqrt(p.gg);
    if (a_norm <= kEps && b_norm <= kEps) {
      out.msprobe[0] = MetricCell::Of(Kind::kValue, 1.0);
    } else if (a_norm <= kEps || b_norm <= kEps) {
      out.msprobe[0] = MetricCell::Of(Kind::kNan);
    } else {
      const double cos = p.dot / (a_norm * b_norm);
      if (std::isnan(cos)) {
        out.msprobe[0] = MetricCell::Of(Kind::kNan);
      } else {
        double v = detail::PyFormatValue12(cos);
        if (v > 0.9999) v = detail::PyRound(v, 6);
        out.msprobe[0] = MetricCell::Of(Kind::kValue, v);
      }
    }
  }
  out.msprobe[1] = MetricCell::Of(Kind::kValue, std::sqrt(p.dd));
  out.msprobe[2] = p.abs_nan ? MetricCell::Of(Kind::kNan) : Value12(p.max_abs);
  out.msprobe[3] = p.rel_nan ? MetricCell::Of(Kind::kNan) : Value12(p.max_rel);
  const double n = static_cast<double>(numel);
  out.msprobe[4] = Value12(static_cast<double>(p.below_1) / n);
  out.msprobe[5] = Value12(static_cast<double>(p.below_5) / n);
  return out;
}

}  // namespace numprobe
