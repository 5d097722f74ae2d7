// Precision headroom: whether a tensor's largest and smallest non-zero magnitudes survive the
// round trip through a narrower float format. The verdicts use the exact encoders of
// float_convert.h (round to nearest even, no double rounding), so the overflow boundary is the
// rounding midpoint above the largest finite value (65520 for fp16), not the value itself; each
// type's boundaries are found once from them (RoundingEdges).
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>

#include "numprobe/float_convert.h"

#include "scan/scan_internal.h"

namespace numprobe::detail {
namespace {

// Where rounding into a target turns a magnitude into Inf/NaN, or into zero. Rounding to nearest
// is monotone, so each edge is found once per type by bisection over RoundToDType itself (over
// the bit patterns of positive doubles, which sort as the values do), and a verdict is then two
// comparisons: rounding every row for every target was most of a large scan's headroom summary.
struct RoundingEdges {
  double first_overflowing = 0;  // the smallest magnitude that rounds to Inf or NaN
  double last_vanishing = 0;     // the largest that rounds to zero
  double min_normal = 0;
};

// The types whose verdicts go through their edges: the 16- and 8-bit floats a target may be.
constexpr std::array<DType, 6> kEdgeTypes = {DType::kF16,        DType::kBF16,
                                             DType::kF8E4M3FN,   DType::kF8E5M2,
                                             DType::kF8E4M3FNUZ, DType::kF8E5M2FNUZ};

RoundingEdges FindEdges(DType target) {
  const auto value = [](uint64_t bits) { return std::bit_cast<double>(bits); };
  RoundingEdges edges;
  // Invariant: `low` does not overflow (0 does not), `high` does (+Inf does).
  uint64_t low = 0;
  auto high = std::bit_cast<uint64_t>(std::numeric_limits<double>::infinity());
  while (high - low > 1) {
    const uint64_t mid = low + (high - low) / 2;
    (std::isfinite(RoundToDType(target, value(mid))) ? low : high) = mid;
  }
  edges.first_overflowing = value(high);
  // Invariant: `low` rounds to zero (0 does), `high` does not (the smallest subnormal is itself).
  const FloatRange range = RangeOf(target);
  low = 0;
  high = std::bit_cast<uint64_t>(range.min_subnormal);
  while (high - low > 1) {
    const uint64_t mid = low + (high - low) / 2;
    (RoundToDType(target, value(mid)) == 0.0 ? low : high) = mid;
  }
  edges.last_vanishing = value(low);
  edges.min_normal = range.min_normal;
  return edges;
}

// `target`'s edges; nullptr for a type without them (its verdicts round each value).
const RoundingEdges* EdgesOf(DType target) {
  static const std::array<RoundingEdges, kEdgeTypes.size()> kEdges = [] {
    std::array<RoundingEdges, kEdgeTypes.size()> edges;
    for (size_t i = 0; i < kEdgeTypes.size(); ++i) edges[i] = FindEdges(kEdgeTypes[i]);
    return edges;
  }();
  for (size_t i = 0; i < kEdgeTypes.size(); ++i) {
    if (kEdgeTypes[i] == target) return &kEdges[i];
  }
  return nullptr;
}

// The verdicts of a row, given whether a magnitude overflows or vanishes in the target.
template <typename Overflows, typename Vanishes>
TargetFit VerdictsWith(double max_abs, double min_nonzero_abs, double min_normal,
                       const Overflows& overflows, const Vanishes& vanishes) {
  TargetFit fit;
  fit.headroom_log2 = std::numeric_limits<double>::quiet_NaN();
  if (max_abs > 0) fit.overflow = overflows(max_abs);
  fit.min_known = !std::isnan(min_nonzero_abs);
  if (fit.min_known && std::isfinite(min_nonzero_abs) && min_nonzero_abs > 0) {
    fit.underflow = vanishes(min_nonzero_abs);
    fit.subnormal = !fit.underflow && min_nonzero_abs < min_normal;
  }
  return fit;
}

}  // namespace

TargetFit VerdictsOf(DType target, double max_abs, double min_nonzero_abs) {
  const RoundingEdges* edges = EdgesOf(target);
  if (edges == nullptr) return VerdictsByRounding(target, max_abs, min_nonzero_abs);
  return VerdictsWith(
      max_abs, min_nonzero_abs, edges->min_normal,
      [edges](double x) { return x >= edges->first_overflowing; },
      [edges](double x) { return x <= edges->last_vanishing; });
}

TargetFit VerdictsByRounding(DType target, double max_abs, double min_nonzero_abs) {
  return VerdictsWith(
      max_abs, min_nonzero_abs, RangeOf(target).min_normal,
      [target](double x) { return !std::isfinite(RoundToDType(target, x)); },
      [target](double x) { return RoundToDType(target, x) == 0.0; });
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
  // Layers in the order they first appear (execution order), per target and list.
  std::vector<std::map<std::string, size_t>> over_index(targets.size());
  std::vector<std::map<std::string, size_t>> under_index(targets.size());
  for (size_t t = 0; t < targets.size(); ++t) out[t].target = targets[t];
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
  // One pass over the rows for every target (each target's summary is its own): a large scan's
  // rows are hundreds of MB, read once instead of once per target.
  for (const HeadroomRow& row : rows) {
    if (row.nonfinite) continue;
    for (size_t t = 0; t < targets.size(); ++t) {
      HeadroomSummary& s = out[t];
      TargetFit fit = VerdictsOf(s.target, row.max_abs, row.min_nonzero_abs);
      if (fit.overflow || fit.underflow) fit.headroom_log2 = HeadroomLog2(s.target, row.max_abs);
      ++s.tensors;
      if (!fit.min_known) ++s.min_unknown;
      if (fit.overflow) {
        ++s.overflow;
        add(&s.keep_higher, &over_index[t], row, fit);
      }
      if (fit.underflow) {
        ++s.underflow;
        add(&s.underflowing, &under_index[t], row, fit);
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
