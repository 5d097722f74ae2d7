#include "numprobe/divergence.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "numprobe/compare_metrics.h"
#include "numprobe/dtype.h"

#include "compare/compare_internal.h"
#include "msprobe/entry_name.h"

namespace numprobe {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::optional<DType> ParseDtype(const std::string& text) {
  if (auto d = DTypeFromTorchName(text)) return d;
  return DTypeFromMindSpore(text);
}

// A statistic as a number, or nullopt when there is none (None, text).
std::optional<double> StatNumber(const DumpFile& file, const PyValue& v) {
  switch (v.kind()) {
    case PyValue::Kind::kInt:
    case PyValue::Kind::kFloat:
      return v.as_float();
    case PyValue::Kind::kBool:
      return v.as_bool() ? 1.0 : 0.0;
    case PyValue::Kind::kBigInt:
      return std::strtod(file.Text(v.text_id()).c_str(), nullptr);
    case PyValue::Kind::kStr: {
      const std::string& t = file.Text(v.text_id());
      if (t == "True") return 1.0;
      if (t == "False") return 0.0;
      return std::nullopt;
    }
    case PyValue::Kind::kNone:
      break;
  }
  return std::nullopt;
}

// Statistics-mode estimate: differences of Max/Min/Mean relative to the tensor's range, of Norm
// relative to the larger norm; NaN/Inf present on one side only (or differing) is +inf.
double StatsError(const DumpFile& tf, const DumpRow& t, const DumpFile& gf, const DumpRow& g) {
  std::optional<double> tv[4];
  std::optional<double> gv[4];
  for (int k = 0; k < 4; ++k) {
    tv[k] = StatNumber(tf, t.stats[k]);
    gv[k] = StatNumber(gf, g.stats[k]);
  }
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
    any = true;
    const bool a_fin = std::isfinite(a);
    const bool b_fin = std::isfinite(b);
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

void AssessRows(CompareTable* table) {
  for (CompareRow& row : table->rows) {
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
    row.tolerance = low.has_value() ? kToleranceUlps * UnitRoundoff(*low) : 0.0;
    if (table->mode == CompareMode::kStatistics) {
      row.error = StatsError(*table->target, t, *table->golden, g);
    }
    if (std::isnan(row.error)) row.tolerance = std::nan("");
  }
}

namespace {

bool Judged(const CompareRow& r) { return !std::isnan(r.error) && !std::isnan(r.tolerance); }
bool Exceeds(const CompareRow& r) { return Judged(r) && r.error > r.tolerance; }

std::string Percent(double v) {
  if (std::isinf(v)) return "inf";
  return fmt::format("{:.3g}%", v * 100);
}

struct Candidate {
  DivergenceOp op;
  const CompareRow* worst = nullptr;
};

}  // namespace

DivergenceReport FindDivergence(const CompareTable& table, const ConstructMap* construct) {
  DivergenceReport report;
  std::vector<Candidate> forward;
  std::vector<Candidate> backward;
  std::string first_over_backward;
  const DumpFile& tf = *table.target;
  const DumpFile& gf = *table.golden;
  for (const CompareRow& r : table.rows)
    report.rows_over_tolerance += static_cast<int64_t>(Exceeds(r));

  size_t begin = 0;
  while (begin < table.rows.size()) {
    const uint32_t entry = tf.rows[table.rows[begin].target].entry;
    size_t end = begin + 1;
    while (end < table.rows.size() && tf.rows[table.rows[end].target].entry == entry) ++end;
    const std::string& name = tf.entries[entry].name;
    const auto [last, second] = detail::LastTwoParts(name);
    const bool is_grad = last == "parameters_grad" || second == "parameters_grad";
    const bool is_fwd = last == "forward" || second == "forward";
    const bool is_bwd = last == "backward" || second == "backward";
    if (is_grad || (!is_fwd && !is_bwd)) {
      begin = end;
      continue;  // parameter gradients repeat backward outputs; other entries are not ops
    }
    ++report.ops_examined;
    double in_err = 0;
    bool inputs_agree = true;
    bool inputs_finite = true;
    const CompareRow* worst = nullptr;
    for (size_t i = begin; i < end; ++i) {
      const CompareRow& r = table.rows[i];
      if (!Judged(r)) continue;
      const RowState state = tf.rows[r.target].state;
      if (state == RowState::kOutput) {
        if (Exceeds(r) && (worst == nullptr || r.error > worst->error)) worst = &r;
      } else {
        in_err = std::max(in_err, r.error);
        inputs_agree &= !Exceeds(r);
        inputs_finite &= std::isfinite(r.error);
      }
    }
    begin = end;
    if (worst == nullptr) continue;
    if (is_bwd && !is_fwd) {
      if (first_over_backward.empty()) first_over_backward = name;
    } else if (report.first_over_tolerance.empty()) {
      report.first_over_tolerance = name;
    }
    const DumpRow& wt = tf.rows[worst->target];
    const DumpRow& wg = gf.rows[static_cast<size_t>(worst->golden)];
    const double floor = std::max(worst->tolerance / kToleranceUlps, 1e-300);
    double growth = 0;
    if (std::isinf(worst->error)) {
      growth = inputs_finite ? kInf : 1.0;
    } else {
      growth = worst->error / std::max(in_err, floor);
    }
    const bool non_finite = std::isinf(worst->error);
    const bool carried = worst->error <= kCarryFactor * in_err;
    const bool introduces = (non_finite && inputs_finite) || (inputs_agree && !carried) ||
                            (!non_finite && growth >= kGrowthFactor);
    if (!introduces) continue;

    Candidate c;
    c.worst = worst;
    DivergenceOp& op = c.op;
    op.op_name = name;
    op.entry = entry;
    op.backward = is_bwd && !is_fwd;
    op.input_error = in_err;
    op.output_error = worst->error;
    op.tolerance = worst->tolerance;
    op.growth = growth;
    op.worst_output = wt.name;
    op.dtype_pair = tf.Text(wt.dtype) + " vs " + gf.Text(wg.dtype);
    op.non_finite = non_finite;
    if (non_finite) {
      op.reason = inputs_finite ? fmt::format(
                                      "{} has NaN/Inf on one side only while the inputs "
                                      "are finite (input error {})",
                                      wt.name, Percent(in_err))
                                : fmt::format("{} has NaN/Inf on one side only", wt.name);
    } else if (inputs_agree) {
      op.reason = fmt::format(
          "inputs agree (largest error {}, tolerance {}) but {} differs by {} ({:.1f}x the "
          "tolerance of {})",
          Percent(in_err), Percent(worst->tolerance), wt.name, Percent(worst->error),
          worst->tolerance > 0 ? worst->error / worst->tolerance : kInf, op.dtype_pair);
    } else {
      op.reason = fmt::format("error grows {:.1f}x: inputs {}, {} {}", growth, Percent(in_err),
                              wt.name, Percent(worst->error));
    }
    if (construct != nullptr) op.module_path = construct->ModulePath(name);
    if (table.stack != nullptr) {
      if (const auto* lines = table.stack->Find(name)) op.stack = *lines;
    }
    (op.backward ? backward : forward).push_back(std::move(c));
  }

  if (report.first_over_tolerance.empty()) report.first_over_tolerance = first_over_backward;
  std::vector<Candidate> all = std::move(forward);
  all.insert(all.end(), std::make_move_iterator(backward.begin()),
             std::make_move_iterator(backward.end()));
  if (all.empty()) return report;
  report.first = all[0].op;
  // The rest by growth (stable: execution order breaks ties), skipping repeats of a tensor
  // already listed (a module's output is the same tensor as its last API's output).
  std::vector<size_t> order;
  for (size_t i = 1; i < all.size(); ++i) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return all[a].op.growth > all[b].op.growth; });
  std::vector<const CompareRow*> listed = {all[0].worst};
  // The same tensor: equal shape, dtype and statistics on both sides.
  auto same_stats = [](const DumpRow& a, const DumpRow& b) {
    for (int k = 0; k < 4; ++k) {
      const PyValue& x = a.stats[k];
      const PyValue& y = b.stats[k];
      if (x.kind() != y.kind() || x.as_int() != y.as_int() || x.text_id() != y.text_id())
        return false;
    }
    return a.shape == b.shape && a.dtype == b.dtype;
  };
  auto same_tensor = [&](const CompareRow* a, const CompareRow* b) {
    return a->error == b->error && same_stats(tf.rows[a->target], tf.rows[b->target]) &&
           same_stats(gf.rows[static_cast<size_t>(a->golden)],
                      gf.rows[static_cast<size_t>(b->golden)]);
  };
  for (const size_t i : order) {
    if (report.next.size() >= static_cast<size_t>(kRankedIntroducers)) break;
    const bool repeat = std::any_of(listed.begin(), listed.end(), [&](const CompareRow* r) {
      return same_tensor(r, all[i].worst);
    });
    if (repeat) continue;
    listed.push_back(all[i].worst);
    report.next.push_back(all[i].op);
  }
  return report;
}

}  // namespace numprobe
