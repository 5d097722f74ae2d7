// Tensor-pair metrics (see compare_metrics.h for the msprobe semantics reproduced here). Elements
// are decoded block by block into doubles (exact for every stored type but integers beyond 2^53,
// which numpy rounds the same way) and accumulated by the element kernel of
// kernels/compare_internal.h (Highway, or its scalar reference: the same bits), whose fixed lane
// order makes each chunk's result independent of threads and SIMD target; chunk results are
// combined in chunk order.
#include "numprobe/compare_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "numprobe/float_convert.h"
#include "numprobe/thread_pool.h"

#include "compare/pair_blocks.h"
#include "core/element_load.h"
#include "core/py_format.h"
#include "kernels/compare_kernel.h"

namespace numprobe {
namespace {

using Kind = MetricCell::Kind;

constexpr int64_t kChunk = detail::kCmpChunk;
constexpr double kEps = detail::kCmpEps;  // msprobe's Const.FLOAT_EPSILON

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

// The type msprobe's relative error is computed in: each side as a float (non-floats become
// float64), promoted with float32 (np.result_type(n, b, np.float32)), so f32 or f64.
detail::CmpFloat RelType(NpType t, NpType g) {
  const auto wide = [](NpType x) { return x != NpType::kF16 && x != NpType::kF32; };
  return wide(t) || wide(g) ? detail::CmpFloat::kF64 : detail::CmpFloat::kF32;
}

NpType Promote(NpType a, NpType b) {
  if (a == NpType::kF64 || b == NpType::kF64) return NpType::kF64;
  if (a == NpType::kF32 || b == NpType::kF32) return NpType::kF32;
  return NpType::kF16;
}

float RoundF16(float x) { return F16ToF32(F32ToF16(x)); }

// A threshold as numpy compares it against an array of type `rt` (a Python float is cast to it).
double ThresholdIn(double thr, detail::CmpFloat rt) {
  return rt == detail::CmpFloat::kF64 ? thr : static_cast<double>(static_cast<float>(thr));
}

// A view with its size-1 dimensions dropped (numpy's squeeze), read in C order.
struct Flat {
  const std::byte* base = nullptr;  // element `origin` (a streamed window's first element)
  int64_t origin = 0;
  DType dtype = DType::kF32;
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;  // elements
  int64_t numel = 1;
  bool contiguous = true;
};

Flat Squeeze(const TensorView& v) {
  Flat f;
  f.base = v.data != nullptr ? v.first() : nullptr;  // a streamed view has no data yet
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

// An element as msprobe reads it: numpy's astype(float64), so complex keeps its real part.
template <DType D>
double LoadOne(const std::byte* p) {
  return detail::LoadElement<D, detail::ComplexAs::kRealPart>(p);
}

// Decodes logical elements [start, start + count) of `f` into out.
void Load(const Flat& f, int64_t start, int64_t count, double* out) {
  if (f.contiguous &&
      detail::CmpDecode(f.dtype, f.base + (start - f.origin) * ItemSize(f.dtype), count, out)) {
    return;
  }
  Dispatch(f.dtype, [&]<DType D>() {
    const int64_t item = ItemSize(D);
    if (f.contiguous) {
      const std::byte* p = f.base + (start - f.origin) * item;
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

struct Partial {
  // msprobe (NaN/Inf positions zeroed)
  bool mask_mismatch = false;
  double dot = 0, tt = 0, gg = 0, dd = 0;
  double max_abs = 0;
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
  detail::CmpSetup k;                     // what the element kernel needs
  detail::PairBlockSink* sink = nullptr;  // shown every decoded block
};

detail::CmpUlp UlpKindOf(std::optional<DType> low) {
  if (!low.has_value()) return detail::CmpUlp::kNone;
  switch (*low) {
    case DType::kF64:
      return detail::CmpUlp::kF64;
    case DType::kF32:
      return detail::CmpUlp::kF32;
    case DType::kBF16:
      return detail::CmpUlp::kBF16;
    default:
      return detail::CmpUlp::kOther;
  }
}

// A chunk's lane sums combined in the fixed order, with its counts and extremes.
Partial FromAcc(const detail::CmpAcc& a) {
  using detail::CombineCmpLanes;
  Partial p;
  p.mask_mismatch = a.mask_mismatch;
  p.dot = CombineCmpLanes(a.dot);
  p.tt = CombineCmpLanes(a.tt);
  p.gg = CombineCmpLanes(a.gg);
  p.dd = CombineCmpLanes(a.dd);
  p.max_abs = a.max_abs;
  p.max_rel = a.max_rel;
  p.rel_nan = a.rel_nan;
  p.below_1 = a.below_1;
  p.below_5 = a.below_5;
  p.finite = a.finite;
  p.sum_abs = CombineCmpLanes(a.sum_abs);
  p.sum_sq = CombineCmpLanes(a.sum_sq);
  p.sum_g2 = CombineCmpLanes(a.sum_g2);
  p.sum_t2 = CombineCmpLanes(a.sum_t2);
  p.sum_rel = CombineCmpLanes(a.sum_rel);
  p.rel_count = a.rel_count;
  p.max_ulp = a.max_ulp;
  p.sum_ulp = CombineCmpLanes(a.sum_ulp);
  p.ulp_count = a.ulp_count;
  p.close = a.close;
  p.nan_mm = a.nan_mm;
  p.pinf_mm = a.pinf_mm;
  p.ninf_mm = a.ninf_mm;
  p.worst = a.worst;
  p.worst_index = a.worst_index;
  return p;
}

// Elements [start, start + count) of one chunk (start is a multiple of kCmpChunk), decoded and
// accumulated block by block so that both sides stay in L1; nothing is copied whole.
Partial ChunkWork(const PairSetup& s, detail::CmpAccumulateFn fn, int64_t start, int64_t count) {
  constexpr auto kBlock = static_cast<size_t>(detail::kCmpBlock);
  // Per-thread scratch, reused from chunk to chunk.
  thread_local std::vector<double> scratch(3 * kBlock);
  double* tv = scratch.data();
  double* gv = tv + kBlock;
  double* ulp = gv + kBlock;
  const bool pre_ulp = s.k.ulp != detail::CmpUlp::kNone && !detail::CmpUlpIsSimd(s.k);
  detail::CmpAcc acc;
  detail::ResetCmpAcc(&acc);
  for (int64_t b = 0; b < count; b += detail::kCmpBlock) {
    const int64_t n = std::min(detail::kCmpBlock, count - b);
    Load(s.t, start + b, n, tv);
    Load(s.g, start + b, n, gv);
    if (s.sink != nullptr) s.sink->Block(start / kChunk, tv, gv, n, start + b);
    for (int64_t k = 0; pre_ulp && k < n; ++k) {
      ulp[k] = std::isfinite(tv[k]) && std::isfinite(gv[k])
                   ? detail::CmpUlpDistance(s.k, tv[k], gv[k])
                   : std::nan("");
    }
    fn(s.k, tv, gv, pre_ulp ? ulp : nullptr, n, start + b, &acc);
  }
  return FromAcc(acc);
}

MetricCell Value12(double v) {
  if (std::isnan(v)) return MetricCell::Of(Kind::kNan);
  return MetricCell::Of(Kind::kValue, detail::PyFormatValue12(v));
}

TensorExtras MakeExtras(const Partial& p, const PairSetup& s, int64_t numel) {
  TensorExtras e;
  const auto n = static_cast<double>(p.finite);
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
  if (s.k.ulp != detail::CmpUlp::kNone) {
    e.ulp_dtype = std::string(Name(s.k.low));
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
  return detail::CompareTensorPairWithSink(target, golden, pool, nullptr);
}

namespace {

// The pair's setup; false (with `out` filled) when msprobe's checks stop before any metric.
bool Setup(const TensorView& target, const TensorView& golden, detail::PairBlockSink* sink,
           PairSetup* setup, TensorPairMetrics* out) {
  auto all = [&](Kind kind) { out->msprobe.fill(MetricCell::Of(kind)); };
  PairSetup& s = *setup;
  s.sink = sink;
  s.t = Squeeze(target);
  s.g = Squeeze(golden);
  if (s.t.numel == 0) {  // msprobe: "This is empty data, can not compare."
    all(Kind::kUnsupported);
    return false;
  }
  if (s.t.dims != s.g.dims) {
    all(Kind::kShapeUnmatched);
    return false;
  }
  s.t_np = NumpyType(target.dtype);
  s.g_np = NumpyType(golden.dtype);
  const detail::CmpFloat rel = RelType(s.t_np, s.g_np);
  s.k.t_dtype = target.dtype;
  s.k.g_dtype = golden.dtype;
  s.k.rel = rel;
  s.k.thr1 = ThresholdIn(0.001, rel);
  s.k.thr5 = ThresholdIn(0.005, rel);
  const std::optional<DType> low = LowerPrecision(target.dtype, golden.dtype);
  s.k.ulp = UlpKindOf(low);
  if (low.has_value()) {
    s.k.low = *low;
    std::tie(s.k.rtol, s.k.atol) = AllcloseTolerance(*low);
  }
  out->compared = true;
  return true;
}

// The metrics of a pair of one element after squeezing (msprobe's scalar path).
TensorPairMetrics ScalarPair(const PairSetup& s) {
  TensorPairMetrics out;
  out.compared = true;
  auto all = [&](Kind kind) { out.msprobe.fill(MetricCell::Of(kind)); };
  const detail::CmpAccumulateFn fn = detail::CmpAccumulate();
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
  out.msprobe[3] = Value12(detail::CmpRelError(s.k, t, g));
  const Partial p = ChunkWork(s, fn, 0, 1);
  out.extras = MakeExtras(p, s, 1);
  out.rel_l2 = RelL2(p);
  return out;
}

// The metrics from the pair's reduced partial `p`.
TensorPairMetrics Finish(const PairSetup& s, const Partial& p) {
  TensorPairMetrics out;
  out.compared = true;
  auto all = [&](Kind kind) { out.msprobe.fill(MetricCell::Of(kind)); };
  const int64_t numel = s.t.numel;
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
  out.msprobe[2] = Value12(p.max_abs);  // |tz - gz| of finite values is never NaN
  out.msprobe[3] = p.rel_nan ? MetricCell::Of(Kind::kNan) : Value12(p.max_rel);
  const auto n = static_cast<double>(numel);
  out.msprobe[4] = Value12(static_cast<double>(p.below_1) / n);
  out.msprobe[5] = Value12(static_cast<double>(p.below_5) / n);
  return out;
}

}  // namespace

TensorPairMetrics detail::CompareTensorPairWithSink(const TensorView& target,
                                                    const TensorView& golden, ThreadPool* pool,
                                                    PairBlockSink* sink) {
  TensorPairMetrics out;
  PairSetup s;
  if (!Setup(target, golden, sink, &s, &out)) return out;
  if (s.t.dims.empty()) return ScalarPair(s);
  const detail::CmpAccumulateFn fn = detail::CmpAccumulate();
  const Partial p = ChunkedReduce<Partial>(
      pool, s.t.numel, kChunk,
      [&](int64_t start, int64_t length) { return ChunkWork(s, fn, start, length); });
  return Finish(s, p);
}

Result<TensorPairMetrics> CompareTensors(const Tensor& target, const Tensor& golden,
                                         ThreadPool* pool, uint64_t max_memory,
                                         std::vector<std::string>* warnings) {
  if (!target.is_streamed() && !golden.is_streamed()) {
    return CompareTensorPair(target.view(), golden.view(), pool);
  }
  // A streamed side is read in order when its squeezed view is contiguous; otherwise (and for
  // a pair msprobe compares as one element) it is loaded whole under `max_memory`.
  TensorPairMetrics early;
  PairSetup probe;
  const bool compared = Setup(target.view(), golden.view(), nullptr, &probe, &early);
  const auto in_order = [&](const Tensor& t, const Flat& f) {
    return t.is_streamed() && compared && !probe.t.dims.empty() && f.contiguous;
  };
  const bool stream_t = in_order(target, probe.t);
  const bool stream_g = in_order(golden, probe.g);
  Tensor t = target;
  Tensor g = golden;
  for (auto [side, streamed] : {std::pair{&t, stream_t}, std::pair{&g, stream_g}}) {
    if (!side->is_streamed() || streamed || !compared) continue;
    std::string warning;
    NUMPROBE_ASSIGN_OR_RETURN(*side, side->InMemory(max_memory, &warning));
    if (!warning.empty() && warnings != nullptr) warnings->push_back(warning);
  }
  if (!compared) return early;
  if (!stream_t && !stream_g) return CompareTensorPair(t.view(), g.view(), pool);

  // Both sides in lockstep, a window of whole chunks at a time: the chunks are reduced as
  // ChunkedReduce reduces them and merged in the same order, so the result is the same bits.
  PairSetup s;
  TensorPairMetrics unused;
  Setup(t.view(), g.view(), nullptr, &s, &unused);
  const detail::CmpAccumulateFn fn = detail::CmpAccumulate();
  constexpr int64_t kChunksPerWindow = 32;
  const int64_t numel = s.t.numel;
  struct Side {
    Flat* flat;
    const Tensor* tensor;
    bool streamed;
    std::unique_ptr<ByteStream> pass;
    std::vector<std::byte> window;
  };
  Side sides[2] = {{&s.t, &t, stream_t, nullptr, {}}, {&s.g, &g, stream_g, nullptr, {}}};
  for (Side& side : sides) {
    if (!side.streamed) continue;
    const TensorView& v = side.tensor->view();
    const int item = ItemSize(v.dtype);
    NUMPROBE_ASSIGN_OR_RETURN(side.pass, side.tensor->streamed()->Open());
    NUMPROBE_RETURN_IF_ERROR(side.pass->Skip(static_cast<uint64_t>(v.byte_offset)));
    side.window.resize(static_cast<size_t>(std::min(numel, kChunk * kChunksPerWindow) * item));
  }
  Partial total;
  const int64_t chunks = (numel + kChunk - 1) / kChunk;
  std::vector<Partial> partials(static_cast<size_t>(std::min(chunks, kChunksPerWindow)));
  for (int64_t first = 0; first < chunks; first += kChunksPerWindow) {
    const int64_t begin = first * kChunk;
    const int64_t count = std::min(numel - begin, kChunk * kChunksPerWindow);
    for (Side& side : sides) {
      if (!side.streamed) continue;
      const auto bytes = static_cast<size_t>(count * ItemSize(side.flat->dtype));
      NUMPROBE_ASSIGN_OR_RETURN(const size_t got,
                                side.pass->Read(std::span(side.window.data(), bytes)));
      if (got != bytes) {
        return Status::Corrupt(side.tensor->streamed()->Describe() +
                               " ends before the tensor's last element");
      }
      side.flat->base = side.window.data();
      side.flat->origin = begin;
    }
    const int64_t batch = (count + kChunk - 1) / kChunk;
    auto run = [&](int64_t c) {
      const int64_t start = begin + c * kChunk;
      partials[static_cast<size_t>(c)] = ChunkWork(s, fn, start, std::min(kChunk, numel - start));
    };
    if (pool != nullptr && batch > 1) {
      pool->ParallelFor(batch, run);
    } else {
      for (int64_t c = 0; c < batch; ++c) run(c);
    }
    for (int64_t c = 0; c < batch; ++c) total.Merge(partials[static_cast<size_t>(c)]);
  }
  for (Side& side : sides) {
    if (!side.streamed) continue;
    NUMPROBE_RETURN_IF_ERROR(side.pass->Drain());
    if (warnings != nullptr && !side.pass->warning().empty()) {
      warnings->push_back(side.pass->warning());
    }
  }
  return Finish(s, total);
}

}  // namespace numprobe
