// Pairing of dump trees: ranks by number, steps by number, proc folders, graph/pynative.
#include "numprobe/dump_layout.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "testing/dump_builder.h"
#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

class DumpLayoutTest : public ::testing::Test {
 protected:
  void MakeDump(const fs::path& dir, bool with_stack = false) {
    test::WriteDump(dir, {}, {});
    if (with_stack) test::WriteFile(dir / "stack.json", "{}");
  }

  test::TempDir temp_{"numprobe_layout"};
  const fs::path root_ = temp_.path();
};

TEST_F(DumpLayoutTest, RanksPairByNumberAndOneSidedRanksAreReported) {
  for (int r : {0, 1, 10}) MakeDump(root_ / "t" / ("rank" + std::to_string(r)));
  for (int r : {0, 1, 2}) MakeDump(root_ / "g" / ("rank" + std::to_string(r)));
  auto pairs = DiscoverDumpPairs(root_ / "t", root_ / "g");
  ASSERT_TRUE(pairs.ok()) << pairs.error().ToString();
  ASSERT_EQ(pairs->size(), 4u);
  EXPECT_EQ((*pairs)[0].rank, "rank0");
  EXPECT_TRUE((*pairs)[0].complete());
  EXPECT_EQ((*pairs)[0].golden->dir, root_ / "g" / "rank0");
  EXPECT_EQ((*pairs)[1].rank, "rank1");
  EXPECT_TRUE((*pairs)[1].complete());
  EXPECT_EQ((*pairs)[2].rank, "rank2");
  EXPECT_FALSE((*pairs)[2].target.has_value());
  EXPECT_TRUE((*pairs)[2].golden.has_value());
  EXPECT_EQ((*pairs)[3].rank, "rank10");  // by number: rank10 is not rank2's partner
  EXPECT_TRUE((*pairs)[3].target.has_value());
  EXPECT_FALSE((*pairs)[3].golden.has_value());
}

TEST_F(DumpLayoutTest, ProcFoldersPairInPidOrder) {
  MakeDump(root_ / "t" / "proc17032", true);
  MakeDump(root_ / "g" / "proc17026");
  auto pairs = DiscoverDumpPairs(root_ / "t", root_ / "g");
  ASSERT_TRUE(pairs.ok()) << pairs.error().ToString();
  ASSERT_EQ(pairs->size(), 1u);
  EXPECT_EQ((*pairs)[0].rank, "proc17032");
  EXPECT_EQ((*pairs)[0].golden_rank, "proc17026");
  EXPECT_EQ((*pairs)[0].target->stack_json, root_ / "t" / "proc17032" / "stack.json");
  EXPECT_TRUE((*pairs)[0].golden->stack_json.empty());
}

TEST_F(DumpLayoutTest, StepsPairByNumberUnderADumpRoot) {
  for (int s : {0, 2, 11}) MakeDump(root_ / "t" / ("step" + std::to_string(s)) / "rank0");
  for (int s : {0, 11}) MakeDump(root_ / "g" / ("step" + std::to_string(s)) / "rank0");
  auto pairs = DiscoverDumpPairs(root_ / "t", root_ / "g");
  ASSERT_TRUE(pairs.ok()) << pairs.error().ToString();
  ASSERT_EQ(pairs->size(), 3u);
  EXPECT_EQ((*pairs)[0].scope, "step0");
  EXPECT_TRUE((*pairs)[0].complete());
  EXPECT_EQ((*pairs)[1].scope, "step2");
  EXPECT_FALSE((*pairs)[1].complete());
  EXPECT_EQ((*pairs)[2].scope, "step11");
  EXPECT_TRUE((*pairs)[2].complete());
}

TEST_F(DumpLayoutTest, GraphAndPynativeAreComparedSeparately) {
  MakeDump(root_ / "t" / "graph" / "step0" / "rank0");
  MakeDump(root_ / "t" / "pynative" / "step0" / "rank0");
  MakeDump(root_ / "g" / "graph" / "step0" / "rank0");
  MakeDump(root_ / "g" / "pynative" / "step0" / "rank0");
  auto pairs = DiscoverDumpPairs(root_ / "t", root_ / "g");
  ASSERT_TRUE(pairs.ok()) << pairs.error().ToString();
  ASSERT_EQ(pairs->size(), 2u);
  EXPECT_EQ((*pairs)[0].scope, "graph/step0");
  EXPECT_EQ((*pairs)[1].scope, "pynative/step0");
}

TEST_F(DumpLayoutTest, FilePairAndMistakes) {
  MakeDump(root_ / "t");
  MakeDump(root_ / "g");
  auto files = DiscoverDumpPairs(root_ / "t" / "dump.json", root_ / "g" / "dump.json");
  ASSERT_TRUE(files.ok()) << files.error().ToString();
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ((*files)[0].rank, "");
  EXPECT_TRUE((*files)[0].complete());

  auto mixed = DiscoverDumpPairs(root_ / "t" / "dump.json", root_ / "g");
  ASSERT_FALSE(mixed.ok());
  EXPECT_EQ(mixed.error().code(), ErrorCode::kInvalidArgument);

  auto missing = DiscoverDumpPairs(root_ / "nope", root_ / "g");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);

  fs::create_directories(root_ / "empty");
  auto empty = DiscoverDumpPairs(root_ / "empty", root_ / "g");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(empty.error().message().find("no dump.json"), std::string::npos);

  MakeDump(root_ / "s" / "rank0");
  auto different = DiscoverDumpPairs(root_ / "s", root_ / "g");
  ASSERT_FALSE(different.ok());
  EXPECT_EQ(different.error().code(), ErrorCode::kInvalidArgument);
}

TEST(DumpLayoutFixtureTest, FindsTheMsprobeFixtureProcFolders) {
  const fs::path fixtures = fs::path(NUMPROBE_FIXTURES_DIR) / "msprobe";
  auto pairs = DiscoverDumpPairs(fixtures / "dump_statistics_bf16" / "step0",
                                 fixtures / "dump_statistics_base" / "step0");
  ASSERT_TRUE(pairs.ok()) << pairs.error().ToString();
  ASSERT_EQ(pairs->size(), 1u);
  EXPECT_EQ((*pairs)[0].rank, "proc17032");
  EXPECT_FALSE((*pairs)[0].target->stack_json.empty());
  EXPECT_FALSE((*pairs)[0].target->construct_json.empty());
}

}  // namespace
}  // namespace numprobe
