// Which rows a capped report embeds (ui/report_rows.h): all of a small table; of a large one, the
// must-keep rows, the window around the first divergence, the worst rows, then the first rows,
// ascending and never more than the cap.
#include "ui/report_rows.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ui/result_store.h"

namespace numprobe::ui {
namespace {

// 1000 rows, one entry each: pass with Cosine 1 except errors at rows 500 (0.7), 700 (0.5) and
// 900 (0.1) and a warning at row 300 (0.9); the first divergence is row 500's entry.
ui::Run MakeRun() {
  ResultStoreBuilder builder({"NPU Name", "Cosine", "Result"});
  for (uint32_t r = 0; r < 1000; ++r) {
    double cosine = 1.0;
    std::string level = "pass";
    if (r == 500 || r == 700 || r == 900) {
      level = "error";
      cosine = r == 500 ? 0.7 : (r == 700 ? 0.5 : 0.1);
    } else if (r == 300) {
      level = "warning";
      cosine = 0.9;
    }
    const std::string name = "op" + std::to_string(r);
    EXPECT_TRUE(
        builder
            .AddRow({Cell::Text(name + ".output.0"), Cell::Number(cosine), Cell::Text(level)}, name)
            .ok());
  }
  ui::Run run;
  run.store = builder.Finish();
  Culprit culprit;
  culprit.entry = run.store->entry(500);
  culprit.level = Verdict::kError;
  culprit.rows = {500};
  run.findings.divergence.push_back(culprit);
  return run;
}

bool Has(const std::vector<uint32_t>& rows, uint32_t r) {
  return std::binary_search(rows.begin(), rows.end(), r);
}

TEST(ReportRows, SmallTableIsEmbeddedWhole) {
  const ui::Run run = MakeRun();
  const auto rows = ReportRows(run, 1000, {});
  ASSERT_EQ(rows.size(), 1000u);
  for (uint32_t r = 0; r < 1000; ++r) EXPECT_EQ(rows[r], r);
}

TEST(ReportRows, LargeTableKeepsDivergenceWorstAndFirstRows) {
  const ui::Run run = MakeRun();
  const std::vector<uint32_t> must_keep = {42};
  const auto rows = ReportRows(run, 100, must_keep);
  ASSERT_EQ(rows.size(), 100u);
  EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end()));
  EXPECT_EQ(std::adjacent_find(rows.begin(), rows.end()), rows.end());
  EXPECT_TRUE(Has(rows, 42));
  // The window: a tenth of the cap around the divergence's row.
  for (uint32_t r = 495; r <= 505; ++r) EXPECT_TRUE(Has(rows, r)) << r;
  EXPECT_FALSE(Has(rows, 494));
  EXPECT_FALSE(Has(rows, 506));
  // The worst rows: every error and the warning.
  for (const uint32_t r : {300u, 700u, 900u}) EXPECT_TRUE(Has(rows, r)) << r;
  // The first rows fill the rest: 100 - 15 = 85 more, rows 0..85 (row 42 was in already).
  for (uint32_t r = 0; r <= 85; ++r) EXPECT_TRUE(Has(rows, r)) << r;
  EXPECT_FALSE(Has(rows, 86));
}

TEST(ReportRows, WorstRowsComeByTheMainMetricWhenTheyDoNotAllFit) {
  const ui::Run run = MakeRun();
  // Cap 20: must-keep none; window 1 each side (499..501); worst up to 12: errors by lowest
  // Cosine (900, 700; 500 is in already), then the warning.
  const auto rows = ReportRows(run, 20, {});
  ASSERT_EQ(rows.size(), 20u);
  for (const uint32_t r : {499u, 500u, 501u, 900u, 700u, 300u}) EXPECT_TRUE(Has(rows, r)) << r;
  for (uint32_t r = 0; r < 14; ++r) EXPECT_TRUE(Has(rows, r)) << r;
  EXPECT_FALSE(Has(rows, 14));
}

TEST(ReportRows, NeverMoreThanTheCap) {
  const ui::Run run = MakeRun();
  const std::vector<uint32_t> must_keep = {10, 20, 30, 40};
  const auto rows = ReportRows(run, 3, must_keep);
  EXPECT_EQ(rows, (std::vector<uint32_t>{10, 20, 30}));
}

}  // namespace
}  // namespace numprobe::ui
