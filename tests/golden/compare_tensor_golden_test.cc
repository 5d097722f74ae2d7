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
#include "testing/compare_csv.h"
#include "testing/temp_dir.h"

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
  const test::TempDir temp("numprobe_tensor_golden");
  const fs::path out = temp / "compare_result.csv";
  ASSERT_TRUE(WriteCompareCsv(*table, out).ok());
  const auto ours = test::ReadCsv(out.string());
  const auto theirs = test::ReadCsv(test::FirstCsvIn(kFixtures / "compare_tensor"));
  ASSERT_EQ(theirs.size(), 66u);
  test::ExpectSameCompareCsv(ours, theirs,
                             {"Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr",
                              "One Thousandth Err Ratio", "Five Thousandths Err Ratio"});
}

INSTANTIATE_TEST_SUITE_P(Threads, CompareTensorGoldenTest, ::testing::Values(1, 4));

}  // namespace
}  // namespace numprobe
