// Metrics of one device output against its float64 benchmark (precheck.h). Elements are decoded
// block by block into doubles and accumulated by the pre-check kernel (kernels/
// precheck_kernel.h: Highway, or its scalar reference, the same bits) in the compare kernel's
// fixed chunks, so the result does not depend on the thread count; chunk results are merged in
// chunk order. Non-float outputs are compared element for element (binary consistency).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "numprobe/float_convert.h"
#include "numprobe/app/precheck.h"
#include "numprobe/thread_pool.h"

#include "kernels/precheck_kernel.h"

namespace numprobe {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Elements [start, start + n) of contiguous storage of `dtype` as doubles (complex: real part).
void Decode(DType dtype, const std::byte* base, int64_t start, int64_t n, double* out) {
  const std::byte* p = base + start * ItemSize(dtype);
  if (detail::CmpDecode(dtype, p, n, out)) return;
  Dispatch(dtype, [&]<DType D>() {
    using T = typename StorageType<D>::type;
    for (int64_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, p + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
      if constexpr (D == DType::kF16) {
        out[i] = F16ToF32(v);
      } else if constexpr (D == DType::kBF16) {
        out[i] = BF16ToF32(v);
      } else if constexpr (IsFloat8(D)) {
        out[i] = F8ToF32(D, v);
      } else if constexpr (D == DType::kBool) {
        out[i] = v != 0 ? 1.0 : 0.0;
      } else if constexpr (D == DType::kC64 || D == DType::kC128) {
        out[i] = static_cast<double>(v.re);
      } else {
        out[i] = static_cast<double>(v);
      }
    }
  });
}

double DecodeOne(const TensorView& v, int64_t index) {
  double out = 0;
  Decode(v.dtype, v.first(), index, 1, &out);
  return out;
}

struct Partial {
  detail::PcAcc acc;  // lane sums already combined into lane 0
  Partial() { detail::ResetPcAcc(&acc); }

  void Merge(const Partial& o) {
    detail::PcAcc& a = acc;
    const detail::PcAcc& b = o.acc;
    a.dot[0] += b.dot[0];
    a.dd[0] += b.dd[0];
    a.bb[0] += b.bb[0];
    a.sum_rel[0] += b.sum_rel[0];
    a.sum_sq[0] += b.sum_sq[0];
    a.sum_ulp[0] += b.sum_ulp[0];
    for (int r = 0; r < detail::kPcRatios; ++r) a.below[r] += b.below[r];
    a.small += b.small;
    a.small_err += b.small_err;
    a.normal += b.normal;
    a.normal_err += b.normal_err;
    a.infnan += b.infnan;
    a.infnan_err += b.infnan_err;
    a.greater += b.greater;
    a.less += b.less;
    a.ulp_over += b.ulp_over;
    a.not_equal += b.not_equal;
    a.ae_nan |= b.ae_nan;
    a.ulp_nan |= b.ulp_nan;
    a.d_nan |= b.d_nan;
    a.b_nan |= b.b_nan;
    a.max_ae = std::max(a.max_ae, b.max_ae);
    a.max_rel = std::max(a.max_rel, b.max_rel);
    a.max_ulp = std::max(a.max_ulp, b.max_ulp);
    a.max_abs_d = std::max(a.max_abs_d, b.max_abs_d);
    a.max_abs_b = std::max(a.max_abs_b, b.max_abs_b);
    if (b.worst > a.worst) {  // a later chunk wins only when strictly worse: the first index stays
      a.worst = b.worst;
      a.worst_index = b.worst_index;
    }
  }
};

// A chunk's lane sums folded into lane 0 in the fixed tree order.
void FoldLanes(detail::PcAcc* a) {
  for (double* sum : {a->dot, a->dd, a->bb, a->sum_rel, a->sum_sq, a->sum_ulp}) {
    const double total = detail::CombineCmpLanes(sum);
    std::fill(sum, sum + detail::kCmpLanes, 0.0);
    sum[0] = total;
  }
}

detail::PcSetup SetupFor(DType device) {
  detail::PcSetup s;
  const auto t = ThresholdsFor(device);
  if (t.has_value()) {
    s.round = device == DType::kF16 ? detail::PcRound::kF16 : detail::PcRound::kF32;
    s.eps = t->eps;
    s.small_value = t->small_value;
    s.small_atol = t->small_atol;
    s.rtol = t->rtol;
    s.clip = t->clip;
    s.ulp = !t->ulp                 ? detail::PcUlp::kNone
            : device == DType::kF32 ? detail::PcUlp::kDouble
                                    : detail::PcUlp::kFloat;
    s.ulp_min_exp = t->ulp_min_exp;
    s.ulp_mant = t->ulp_mant;
    s.ulp_thr = t->ulp_thr;
  } else {
    // Outside msprobe's standards (f64, fp8): only the cosine, error and dual metrics count.
    s.round = device == DType::kF64 ? detail::PcRound::kF64 : detail::PcRound::kF32;
    s.eps = device == DType::kF64 ? 0x1p-52 : 0x1p-23;
    s.clip = device == DType::kF64 ? std::numeric_limits<double>::max()
                                   : static_cast<double>(std::numeric_limits<float>::max());
  }
  return s;
}

detail::PcAcc Accumulate(const detail::PcSetup& s, const TensorView& device,
                         const TensorView& bench, int64_t n, ThreadPool* pool) {
  const detail::PcAccumulateFn fn = detail::PcAccumulate();
  const bool bench_direct = bench.dtype == DType::kF64;
  auto work = [&](int64_t start, int64_t count) {
    constexpr auto kBlock = static_cast<size_t>(detail::kCmpBlock);
    thread_local std::vector<double> scratch(3 * kBlock);
    double* dv = scratch.data();
    double* bv = dv + kBlock;
    double* bc = bv + kBlock;
    Partial p;
    for (int64_t b = 0; b < count; b += detail::kCmpBlock) {
      const int64_t m = std::min(detail::kCmpBlock, count - b);
      Decode(device.dtype, device.first(), start + b, m, dv);
      const double* bp = bv;
      if (bench_direct) {
        bp = reinterpret_cast<const double*>(bench.first()) + start + b;
      } else {
        Decode(bench.dtype, bench.first(), start + b, m, bv);
      }
      if (s.round == detail::PcRound::kF16) {
        for (int64_t k = 0; k < m; ++k) bc[k] = detail::PcRoundF16(bp[k]);
      }
      fn(s, dv, bp, s.round == detail::PcRound::kF16 ? bc : nullptr, m, start + b, &p.acc);
    }
    FoldLanes(&p.acc);
    return p;
  };
  return ChunkedReduce<Partial>(pool, n, detail::kCmpChunk, work).acc;
}

// A power of two that brings a magnitude near 1 when its square would leave double's range.
double ScaleFor(double max_abs) {
  if (!std::isfinite(max_abs) || max_abs == 0) return 1;
  if (max_abs < 0x1p-400 || max_abs > 0x1p400) {
    int e = 0;
    std::frexp(max_abs, &e);
    return std::ldexp(1.0, -e);
  }
  return 1;
}

Result<PrecheckMetrics> BinaryPair(const TensorView& device, const TensorView& bench, int64_t n) {
  PrecheckMetrics m;
  m.count = n;
  int64_t differ = 0;
  if (device.dtype == bench.dtype) {
    const int64_t item = ItemSize(device.dtype);
    const std::byte* a = device.first();
    const std::byte* b = bench.first();
    for (int64_t i = 0; i < n; ++i) {
      if (device.dtype == DType::kBool) {
        differ += (a[i] != std::byte{0}) != (b[i] != std::byte{0}) ? 1 : 0;
      } else {
        differ += std::memcmp(a + i * item, b + i * item, static_cast<size_t>(item)) != 0 ? 1 : 0;
      }
    }
  } else {
    constexpr int64_t kBlock = detail::kCmpBlock;
    std::vector<double> dv(kBlock);
    std::vector<double> bv(kBlock);
    for (int64_t s = 0; s < n; s += kBlock) {
      const int64_t c = std::min(kBlock, n - s);
      Decode(device.dtype, device.first(), s, c, dv.data());
      Decode(bench.dtype, bench.first(), s, c, bv.data());
      for (int64_t k = 0; k < c; ++k) differ += dv[k] != bv[k] ? 1 : 0;
    }
  }
  m.error_rate = n > 0 ? static_cast<double>(differ) / static_cast<double>(n) : 0;
  m.cosine = m.max_abs_err = m.error_balance = m.rmse = m.small_value_err_ratio = kNaN;
  m.max_rel_err = m.mean_rel_err = m.inf_nan_err_ratio = m.rel_err_ratio = kNaN;
  m.abs_err_ratio = m.max_ulp_err = m.mean_ulp_err = m.ulp_err_proportion = kNaN;
  for (double& r : m.dual) r = kNaN;
  return m;
}

}  // namespace

Result<PrecheckMetrics> PrecheckTensorPair(const TensorView& device, const TensorView& bench,
                                           ThreadPool* pool) {
  if (!device.is_contiguous() || !bench.is_contiguous()) {
    return Status::InvalidArgument("precheck metrics need C-contiguous tensors");
  }
  const int64_t n = device.numel();
  if (bench.numel() != n) {
    return Status::InvalidArgument("precheck metrics: device and benchmark sizes differ");
  }
  if (!IsFloating(device.dtype) || !IsFloating(bench.dtype)) return BinaryPair(device, bench, n);

  detail::PcSetup s = SetupFor(device.dtype);
  detail::PcAcc a = Accumulate(s, device, bench, n, pool);
  // Cosine sums of magnitudes whose squares leave double's range are taken again, scaled by
  // powers of two (exact), as msprobe divides both sides by their largest magnitude.
  const double sd = a.d_nan ? 1 : ScaleFor(a.max_abs_d);
  const double sb = a.b_nan ? 1 : ScaleFor(a.max_abs_b);
  if (sd != 1 || sb != 1) {
    s.scale_d = sd;
    s.scale_b = sb;
    a = Accumulate(s, device, bench, n, pool);
  }

  PrecheckMetrics m;
  m.count = n;
  const auto nd = static_cast<double>(n);
  auto share = [](int64_t part, int64_t whole) {
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  };
  m.max_abs_d = a.d_nan ? kNaN : a.max_abs_d;
  m.max_abs_b = a.b_nan ? kNaN : a.max_abs_b;
  // msprobe's cosine_sim: a single element or an all-zero side has none; NaN/Inf make it NaN.
  constexpr double kEps = std::numeric_limits<double>::epsilon();
  const bool nonfinite = a.d_nan || a.b_nan || std::isinf(a.max_abs_d) || std::isinf(a.max_abs_b);
  if (n == 1 || (!nonfinite && (a.max_abs_d <= kEps || a.max_abs_b <= kEps))) {
    m.cosine_defined = false;
    m.cosine = kNaN;
  } else if (nonfinite) {
    m.cosine = kNaN;
  } else {
    const double c = a.dot[0] / (std::sqrt(a.dd[0]) * std::sqrt(a.bb[0]));
    m.cosine = std::isnan(c) ? c : std::clamp(c, -1.0, 1.0);
  }
  m.max_abs_err = a.ae_nan ? kNaN : a.max_ae;
  for (int r = 0; r < detail::kPcRatios; ++r) m.dual[r] = n > 0 ? share(a.below[r], n) : 1.0;
  m.error_rate = share(a.not_equal, n);
  const auto t = ThresholdsFor(device.dtype);
  if (t.has_value()) {
    m.error_balance = share(std::llabs(a.greater - a.less), n);
    // msprobe's get_rmse: the mean over all positions of the squared errors of normal values,
    // corrected for the masked ones.
    const auto masked = static_cast<double>(n - a.normal);
    const double mse = n > 0 ? a.sum_sq[0] / nd * (nd / (nd - masked + 0.0001) + 0.0001) : 0;
    m.rmse = std::sqrt(mse);
    m.small_value_err_ratio = share(a.small_err, a.small);
    m.max_rel_err = a.max_rel;
    m.mean_rel_err = a.normal > 0 ? a.sum_rel[0] / static_cast<double>(a.normal) : 0;
    m.inf_nan_err_ratio = share(a.infnan_err, a.infnan);
    m.rel_err_ratio = share(a.normal_err, a.normal);
    m.abs_err_ratio = share(a.small_err, a.small);
    m.max_ulp_err = a.ulp_nan ? kNaN : a.max_ulp;
    m.mean_ulp_err = a.ulp_nan ? kNaN : (n > 0 ? a.sum_ulp[0] / nd : 0);
    m.ulp_err_proportion = share(a.ulp_over, n);
  } else {
    m.error_balance = m.rmse = m.small_value_err_ratio = m.max_rel_err = m.mean_rel_err = kNaN;
    m.inf_nan_err_ratio = m.rel_err_ratio = m.abs_err_ratio = kNaN;
    m.max_ulp_err = m.mean_ulp_err = m.ulp_err_proportion = kNaN;
  }
  m.worst_index = a.worst_index;
  if (a.worst_index >= 0) {
    m.worst_device = DecodeOne(device, a.worst_index);
    m.worst_bench = DecodeOne(bench, a.worst_index);
  }
  return m;
}

}  // namespace numprobe
