#include "ui/report_rows.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "ui/result_store.h"

namespace numprobe::ui {

namespace {

// Shares of the cap: the window around the first divergence takes up to a tenth of it (half
// before, half after), and the worst rows fill up to 60% of it; the first rows take the rest.
constexpr uint32_t kWindowShareDivisor = 10;
constexpr uint32_t kWorstSharePercent = 60;

// The column the worst rows are ranked by, and whether lower is worse: Cosine when the table has
// it (as the row detail's trend link picks it), else the first numeric column.
struct MainMetric {
  int column = -1;
  bool lower_is_worse = false;
};

MainMetric FindMainMetric(const ResultStore& s) {
  const int cosine = s.ColumnIndex("Cosine");
  if (cosine >= 0 && !s.columns()[cosine].numbers.empty()) return {cosine, true};
  for (size_t c = 0; c < s.columns().size(); ++c) {
    if (!s.columns()[c].numbers.empty()) return {static_cast<int>(c), false};
  }
  return {};
}

// The row the divergence window centres on: the first culprit's first row, else the first
// anomaly's; none when the run has neither.
std::optional<uint32_t> DivergenceRow(const Run& run) {
  const ResultStore& s = *run.store;
  const Culprit* culprit = nullptr;
  if (!run.findings.divergence.empty()) {
    culprit = &run.findings.divergence.front();
  } else if (run.findings.first_anomaly) {
    culprit = &*run.findings.first_anomaly;
  }
  if (culprit == nullptr || culprit->entry >= s.entry_names().size()) return std::nullopt;
  return s.entry_first_row(culprit->entry);
}

}  // namespace

std::vector<uint32_t> ReportRows(const Run& run, uint32_t max_rows,
                                 std::span<const uint32_t> must_keep) {
  const ResultStore& s = *run.store;
  const uint32_t n = s.row_count();
  std::vector<uint32_t> rows;
  if (n <= max_rows) {
    rows.resize(n);
    for (uint32_t r = 0; r < n; ++r) rows[r] = r;
    return rows;
  }
  std::vector<bool> kept(n, false);
  uint32_t count = 0;
  auto keep = [&](uint32_t r) {
    if (count < max_rows && r < n && !kept[r]) {
      kept[r] = true;
      ++count;
    }
  };
  for (const uint32_t r : must_keep) keep(r);

  if (const auto centre = DivergenceRow(run)) {
    const uint32_t half = max_rows / kWindowShareDivisor / 2;
    const uint32_t first = *centre > half ? *centre - half : 0;
    const uint32_t last = std::min<uint64_t>(uint64_t{*centre} + half, n - 1);
    for (uint32_t r = first; r <= last; ++r) keep(r);
  }

  const uint32_t worst_cap =
      std::max(count, static_cast<uint32_t>(uint64_t{max_rows} * kWorstSharePercent / 100));
  const MainMetric metric = FindMainMetric(s);
  for (const Verdict level : {Verdict::kError, Verdict::kWarning}) {
    if (s.LevelCount(level) == 0) continue;
    if (metric.column >= 0) {
      // Worst first: ascending for Cosine, descending otherwise; texts (N/A) come last either way.
      const auto order = s.SortOrder(metric.column, !metric.lower_is_worse);
      for (const uint32_t r : *order) {
        if (count >= worst_cap) break;
        if (s.level(r) == level) keep(r);
      }
    } else {
      for (uint32_t r = 0; r < n && count < worst_cap; ++r) {
        if (s.level(r) == level) keep(r);
      }
    }
  }

  for (uint32_t r = 0; r < n && count < max_rows; ++r) keep(r);

  rows.reserve(count);
  for (uint32_t r = 0; r < n; ++r) {
    if (kept[r]) rows.push_back(r);
  }
  return rows;
}

}  // namespace numprobe::ui
