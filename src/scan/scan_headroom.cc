// Precision headroom: whether a tensor's largest and smallest non-zero magnitudes survive the
// round trip through a narrower float format. The verdicts use the exact encoders of
// float_convert.h (round to nearest even, no double rounding), so the overflow boundary is the
// rounding midpoint above the largest finite value (65520 for fp16), not the value itself.
#include <cmath>
#include <limits>
#include <map>

#include "numprobe/float_convert.h"

#include "scan/scan_internal.h"

namespace numprobe::detail {

TargetFit VerdictsOf(DType target, double max_abs, double min_nonzero_abs) {
  TargetFit fit;
  fit.headroom_log2 = std::numeric_limits<double>::quiet_NaN();
  if (max_abs > 0) fit.overflow = !std::isfinite(RoundToDType(target, max_abs));
  fit.min_known = !std::isnan(min_nonzero_abs);
  if (fit.min_known && std::isfinite(min_nonzero_abs) && min_nonzero_abs > 0) {
    fit.underflow = RoundToDType(target, min_nonzero_abs) == 0.0;
    fit.subnormal = !fit.underflow && min_nonzero_abs < RangeOf(target).min_normal;
  }
  return fit;
}

double HeadroomLog2(DType target, double max_abs) {
  if (!(max_abs > 0)) return std::numeric_limits<double>::quiet_NaN();
  return std::log2(RangeOf(target).max_finite / max_abs);
}

TargetFit FitOf(DType target, double max_abs, double min_nonzero_abs) {
  TargetFit fit = VerdictsOf(target, max_abs, min_nonzero_abs);
  fit.headroom_log2 = HeadroomLog2(target, max_abs);
  return fit;
}

std::vector<HeadroomSummary> SummarizeHeadroom(const std::vector<HeadroomRow>& rows,
                                               const std::vector<DType>& targets) {
  std::vector<HeadroomSummary> out(targets.size());
  for (size_t t = 0; t < targets.size(); ++t) {
    HeadroomSummary& s = out[t];
    s.target = targets[t];
    // Layers in the order they first appear (execution order).
    std::map<std::string, size_t> over_index;
    std::map<std::string, size_t> under_index;
    auto add = [](std::vector<LayerHeadroom>* layers, std::map<std::string, size_t>* index,
                  const HeadroomRow& row, const TargetFit& fit) {
      auto [it, inserted] = index->try_emplace(std::string(row.layer), layers->size());
      if (inserted) {
        LayerHeadroom layer;
        layer.layer = std::string(row.layer);
        layer.worst_headroom_log2 = fit.headroom_log2;
        layer.worst_tensor = std::string(row.tensor);
        layers->push_back(std::move(layer));
      }
      LayerHeadroom& layer = (*layers)[it->second];
      ++layer.tensors;
      layer.max_abs = std::max(layer.max_abs, row.max_abs);
      if (fit.headroom_log2 < layer.worst_headroom_log2) {
        layer.worst_headroom_log2 = fit.headroom_log2;
        layer.worst_tensor = std::string(row.tensor);
      }
    };
    for (const HeadroomRow& row : rows) {
      if (row.nonfinite) continue;
      TargetFit fit = VerdictsOf(s.target, row.max_abs, row.min_nonzero_abs);
      if (fit.overflow || fit.underflow) fit.headroom_log2 = HeadroomLog2(s.target, row.max_abs);
      ++s.tensors;
      if (!fit.min_known) ++s.min_unknown;
      if (fit.overflow) {
        ++s.overflow;
        add(&s.keep_higher, &over_index, row, fit);
      }
      if (fit.underflow) {
        ++s.underflow;
        add(&s.underflowing, &under_index, row, fit);
      }
      if (fit.subnormal) ++s.subnormal;
    }
  }
  return out;
}

}  // namespace numprobe::detail

namespace numprobe {

TargetFit FitOf(const HeadroomRow& row, DType target) {
  return detail::FitOf(target, row.max_abs, row.min_nonzero_abs);
}

}  // namespace numprobe
