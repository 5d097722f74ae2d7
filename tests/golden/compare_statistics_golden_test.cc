// Golden: numprobe's statistics-mode compare of the msprobe fixture reproduces the CSV msprobe
// wrote for the same pair (tests/fixtures/msprobe/compare_statistics/).
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "numprobe/compare.h"
#include "numprobe/dump_layout.h"

#include "compare/compare_writer.h"
#include "testing/compare_csv.h"
#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(NUMPROBE_FIXTURES_DIR) / "msprobe";

TEST(CompareStatisticsGoldenTest, ReproducesMsprobesTable) {
  auto pairs = DiscoverDumpPairs(kFixtures / "dump_statistics_bf16" / "step0",
                                 kFixtures / "dump_statistics_base" / "step0");
  ASSERT_TRUE(pairs.ok()) << pairs.error().ToString();
  ASSERT_EQ(pairs->size(), 1u);
  auto table = CompareDumps(*(*pairs)[0].target, *(*pairs)[0].golden);
  ASSERT_TRUE(table.ok()) << table.error().ToString();
  EXPECT_EQ(table->mode, CompareMode::kStatistics);
  const test::TempDir temp("numprobe_stats_golden");
  const fs::path out = temp / "compare_result.csv";
  ASSERT_TRUE(WriteCompareCsv(*table, out).ok());
  const auto ours = test::ReadCsv(out.string());
  const auto theirs = test::ReadCsv(test::FirstCsvIn(kFixtures / "compare_statistics"));
  ASSERT_EQ(theirs.size(), 66u);
  test::ExpectSameCompareCsv(ours, theirs,
                             {"Max diff", "Min diff", "Mean diff", "L2norm diff", "MaxRelativeErr",
                              "MinRelativeErr", "MeanRelativeErr", "NormRelativeErr"});
}

}  // namespace
}  // namespace numprobe
