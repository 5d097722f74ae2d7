// Golden: numprobe's tensor-mode compare of the msprobe fixture (.pt files) reproduces the CSV
// msprobe wrote for the same pair (tests/fixtures/msprobe/compare_tensor/), with any thread count.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "numprobe/compare.h"
#include "numprobe/dump_layout.h"
#include "numprobe/thread_pool.h"

#include "compare/compare_writer.h"
#include "golden/compare_csv.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(NUMPROBE_FIXTURES_DIR) / "msprobe";

class CompareTensorGoldenTest : public ::testing::TestWithParam<int> {};

TEST_P(CompareTensorGoldenTest, ReproducesMsprobesTable) {
  auto pairs = DiscoverDumpPairs(kFixtures / "dump_tensor_bf16" / "step0",
                                 kFixtures / "dump_tensor_base" / "step0");
  ASSERT_TRUE(pairs.ok()) << pairs.error().ToString();
  ASSERT_EQ(pairs->size(), 1u);
  ThreadPool pool(GetParam());
  CompareOptions options;
  options.pool = &pool;
  auto table = CompareDumps(*(*pairs)[0].target, *(*pairs)[0].golden, options);
  ASSERT_TRUE(table.ok()) << table.error().ToString();
  EXPECT_EQ(table->mode, CompareMode::kTensor);
  EXPECT_TRUE(table->warnings.empty()) << table->warnings[0];
  const fs::path out =
      fs::temp_directory_path() / ("numprobe_tensor_golden_" + std::to_string(::getpid()) + "_" +
                                   std::to_string(GetParam()) + ".csv");
  ASSERT_TRUE(WriteCompareCsv(*table, out).ok());
  const auto ours = testing::ReadCsv(out.string());
  fs::remove(out);
  const auto theirs = testing::ReadCsv(testing::FirstCsvIn(kFixtures / "compare_tensor"));
  ASSERT_EQ(theirs.size(), 66u);
  testing::ExpectSameCompareCsv(ours, theirs,
                                {"Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr",
                                 "One Thousandth Err Ratio", "Five Thousandths Err Ratio"});
}

INSTANTIATE_TEST_SUITE_P(Threads, CompareTensorGoldenTest, ::testing::Values(1, 4));

}  // namespace
}  // namespace numprobe
