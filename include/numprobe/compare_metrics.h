// Tensor-mode metrics of one (target, golden) pair, exactly as msprobe computes them, plus
// numprobe's own. msprobe's path is reproduced step by step: both tensors are read as numpy reads
// them (bf16 and fp8 widened to f32; f16, f32, f64, integers and bool kept), squeezed, checked
// (empty -> "unsupported", squeezed shapes differ -> "shape unmatched", NaN/Inf at different
// positions -> "N/A", matching ones zeroed), then:
//   relative error   |t - g| / |g| in result_type(t, g, float32) (f32 for f16/bf16/f32 pairs,
//                    else f64), where g == 0 adds that type's epsilon to both sides (msprobe's
//                    get_relative_err since its commit 78bf1bed of 2026-07-07)
//   Cosine           t.g / (|t| |g|) in float64: both norms <= eps -> 1.0, one -> "Nan"; rounded
//                    to 12 decimals, then to 6 above 0.9999; "unsupported" for length 1
//   EucDist          |t - g| (float64, not rounded)
//   MaxAbsErr        max |t - g|; MaxRelativeErr max relative error
//   One/Five Thousandth Err Ratio  share of relative errors below 0.001 / 0.005
// 0-d tensors (and any tensor of one element: squeeze makes it 0-d) get MaxAbsErr and
// MaxRelativeErr only, computed in their own type. Values are rounded to 12 decimals.
// Work is split into fixed chunks combined in order, so results do not depend on the thread count.
// The views are only read; nothing is retained.
#ifndef NUMPROBE_COMPARE_METRICS_H_
#define NUMPROBE_COMPARE_METRICS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "numprobe/compare.h"
#include "numprobe/tensor.h"

namespace numprobe {

class ThreadPool;

struct TensorPairMetrics {
  // Cosine, EucDist, MaxAbsErr, MaxRelativeErr, One Thousandth Err Ratio, Five Thousandths.
  std::array<MetricCell, 6> msprobe;
  std::optional<TensorExtras> extras;  // absent for empty or shape-mismatched pairs
  // numprobe's error estimate: |t - g| / max(|t|, |g|) (L2 norms) over positions finite on both
  // sides (0 when both are all zero), +inf when NaN/Inf positions differ.
  double rel_l2 = 0;
  bool compared = false;  // false when msprobe's checks stopped before any metric
};

// Metrics of `target` against `golden`. `pool` parallelises within the pair (nullptr = serial).
TensorPairMetrics CompareTensorPair(const TensorView& target, const TensorView& golden,
                                    ThreadPool* pool = nullptr);

// CompareTensorPair of two tensors that may be streamed (Tensor::is_streamed): a streamed side
// whose view is contiguous once size-1 dimensions are dropped is read in one pass, both sides
// in lockstep windows of whole chunks, reduced and merged in the order CompareTensorPair uses
// (the same bits). A streamed side that cannot be read in order (a transposed view, or a pair
// msprobe compares as one element) is loaded whole, which fails with kOutOfRange when its
// storage exceeds `max_memory` bytes. Passes' warnings (CRC mismatches) go to `warnings` (may
// be null); a damaged stream is an error.
Result<TensorPairMetrics> CompareTensors(const Tensor& target, const Tensor& golden,
                                         ThreadPool* pool, uint64_t max_memory,
                                         std::vector<std::string>* warnings = nullptr);

// The lower-precision float dtype of a pair (fewer significand bits), used for ULP distances and
// tolerances; nullopt when either side is not a float type.
std::optional<DType> LowerPrecision(DType a, DType b);

// Unit roundoff of a float dtype (2^-significand bits: bf16 2^-8, f16 2^-11, f32 2^-24, ...).
double UnitRoundoff(DType dtype);

// torch.testing's default (rtol, atol) for a dtype (integers and bool: exact).
std::pair<double, double> AllcloseTolerance(DType dtype);

}  // namespace numprobe

#endif  // NUMPROBE_COMPARE_METRICS_H_
