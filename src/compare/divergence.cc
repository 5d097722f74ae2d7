#include "numprobe/divergence.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "numprobe/compare_metrics.h"
#include "numprobe/dtype.h"

#include "compare/birth_rules.h"
#include "compare/dataflow.h"

namespace numprobe {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::optional<DType> ParseDtype(const std::string& text) { return detail::DtypeOfName(text); }

// Statistics-mode estimate: differences of Max/Min/Mean relative to the tensor's range, of Norm
// relative to the larger norm; NaN/Inf present on one side only (or differing) is +inf.
double StatsError(const DumpFile& tf, const DumpRow& t, const DumpFile& gf, const DumpRow& g) {
  const detail::RowStats tv = detail::StatsOfRow(tf, t);
  const detail::RowStats gv = detail::StatsOfRow(gf, g);
  // A side whose Max and Min are finite holds no NaN/Inf: a non-finite Mean or Norm there is the
  // statistic overflowing the tensor's dtype (torch reduces fp16 in fp16), not a value.
  const bool t_values_finite =
      detail::IsFiniteStat(tv[kStatMax]) && detail::IsFiniteStat(tv[kStatMin]);
  const bool g_values_finite =
      detail::IsFiniteStat(gv[kStatMax]) && detail::IsFiniteStat(gv[kStatMin]);
  double scale = 0;
  bool any = false;
  for (int k : {kStatMax, kStatMin}) {
    for (const auto& v : {tv[k], gv[k]}) {
      if (v.has_value() && std::isfinite(*v)) scale = std::max(scale, std::fabs(*v));
    }
  }
  double error = 0;
  for (int k = 0; k < 4; ++k) {
    if (!tv[k].has_value() || !gv[k].has_value()) continue;
    const double a = *tv[k];
    const double b = *gv[k];
    const bool a_fin = std::isfinite(a);
    const bool b_fin = std::isfinite(b);
    if ((k == kStatMean || k == kStatNorm) &&
        ((!a_fin && t_values_finite) || (!b_fin && g_values_finite))) {
      continue;
    }
    any = true;
    if (!a_fin || !b_fin) {
      const bool same = (std::isnan(a) && std::isnan(b)) || a == b;
      if (!same) return kInf;
      continue;  // the same NaN/Inf on both sides: nothing to compare here
    }
    const double d = std::fabs(a - b);
    double denom = k == kStatNorm ? std::max(std::fabs(a), std::fabs(b)) : scale;
    if (d == 0) continue;
    // clang-tidy 14 reports this double-to-double choice as narrowing (a false positive).
    error =
        std::max(error, denom > 0 ? d / denom : kInf);  // NOLINT(bugprone-narrowing-conversions)
  }
  return any ? error : std::nan("");
}

}  // namespace

namespace detail {

void AssessEntryRows(CompareTable* table, size_t begin, size_t end) {
  // Judged at the op's working precision: an fp32 output computed from bf16 inputs carries
  // bf16 rounding.
  const double working = detail::WorkingUnitRoundoff(*table, begin, end);
  for (size_t i = begin; i < end; ++i) {
    CompareRow& row = table->rows[i];
    if (!row.paired()) continue;
    const DumpRow& t = table->target->rows[row.target];
    const DumpRow& g = table->golden->rows[static_cast<size_t>(row.golden)];
    if (!t.is_tensor || !g.is_tensor) continue;
    if (table->mode == CompareMode::kMd5) {
      row.error = t.md5 == g.md5 ? 0 : kInf;
      row.tolerance = 0;
      continue;
    }
    const auto td = ParseDtype(table->target->Text(t.dtype));
    const auto gd = ParseDtype(table->golden->Text(g.dtype));
    if (!td.has_value() || !gd.has_value()) continue;
    const auto low = LowerPrecision(*td, *gd);
    row.tolerance = low.has_value() ? kToleranceUlps * std::max(UnitRoundoff(*low), working) : 0.0;
    // Tensor mode: a row without a tensor file on a side (an incremental dump writes files
    // only where the run left its bench_path: docs/capture.md) is judged on its statistics.
    const bool no_files = t.data_name.empty() || g.data_name.empty();
    if (table->mode == CompareMode::kStatistics ||
        (table->mode == CompareMode::kTensor && no_files && std::isnan(row.error))) {
      row.error = StatsError(*table->target, t, *table->golden, g);
    }
    if (std::isnan(row.error)) row.tolerance = std::nan("");
  }
}

}  // namespace detail

void AssessRows(CompareTable* table) {
  for (size_t begin = 0; begin < table->rows.size();) {
    const size_t end = detail::EntryEnd(*table, begin);
    detail::AssessEntryRows(table, begin, end);
    begin = end;
  }
}

DivergenceReport FindDivergence(const CompareTable& table, const ConstructMap* construct) {
  return detail::FindBirths(table, construct);
}

}  // namespace numprobe
