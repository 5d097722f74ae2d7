// Golden: numprobe's statistics-mode compare of the msprobe fixture reproduces the CSV msprobe
// wrote for the same pair (tests/fixtures/msprobe/compare_statistics/).
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "numprobe/compare.h"
#include "numprobe/dump_layout.h"

#include "compare/compare_writer.h"
#include "golden/compare_csv.h"

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
  const fs::path out =
      fs::temp_directory_path() / ("numprobe_stats_golden_" + std::to_string(::getpid()) + ".csv");
  ASSERT_TRUE(WriteCompareCsv(*table, out).ok());
  const auto ours = testing::ReadCsv(out.string());
  fs::remove(out);
  const auto theirs = testing::ReadCsv(testing::FirstCsvIn(kFixtures / "compare_statistics"));
  ASSERT_EQ(theirs.size(), 66u);
  testing::ExpectSameCompareCsv(
      ours, theirs,
      {"Max diff", "Min diff", "Mean diff", "L2norm diff", "MaxRelativeErr", "MinRelativeErr",
       "MeanRelativeErr", "NormRelativeErr"});
}

}  // namespace
}  // namespace numprobe
