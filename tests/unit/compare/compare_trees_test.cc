// CompareDumpTrees, the multi-rank compare the CLI and the UI share: rank pairing and missing
// ranks, tables and reports equal to comparing each pair alone, the files it writes (and does not
// write), ranks of {} skipped through the warning callback, progress through the callback (and
// nothing printed, even on a terminal), the mapping files read from their paths, a bad
// construct.json (an error, or a warning), results independent of the thread count, and the files
// of a result written after the compare (WriteCompareTreesFiles) equal to those written during it.
#include "numprobe/compare_trees.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <unistd.h>

#include "numprobe/compare.h"
#include "numprobe/divergence.h"
#include "numprobe/dump.h"
#include "numprobe/thread_pool.h"

#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(NUMPROBE_FIXTURES_DIR) / "msprobe";
const fs::path kTensorBf16 = kFixtures / "dump_tensor_bf16" / "step0" / "proc17044";
const fs::path kTensorBase = kFixtures / "dump_tensor_base" / "step0" / "proc17038";
constexpr const char* kTs = "20260102030405";

// Copies a fixture's rank folder to `to`.
void CopyRank(const fs::path& from, const fs::path& to) {
  fs::create_directories(to.parent_path());
  fs::copy(from, to, fs::copy_options::recursive);
}

std::vector<std::vector<std::string>> Cells(const CompareTable& table) {
  std::vector<std::vector<std::string>> out;
  for (size_t i = 0; i < table.rows.size(); ++i) out.push_back(table.CsvCells(i));
  return out;
}

std::string FirstOp(const DivergenceReport& r) { return r.first ? r.first->op_name : ""; }

// A statistics dump.json of one forward API call with one input and one output.
std::string StatDump(const std::string& api, double out_max) {
  auto leaf = [](double max) {
    return R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": )" +
           std::to_string(max) + R"(, "Min": 0.0, "Mean": 0.5, "Norm": 1.0})";
  };
  return R"({"task": "statistics", "level": "L1", "data": {")" + api + R"(": {"input_args": [)" +
         leaf(1) + R"(], "input_kwargs": {}, "output": [)" + leaf(out_max) + "]}}}";
}

class CompareTreesTest : public ::testing::Test {
 protected:
  test::TempDir dir_{"numprobe_trees"};
};

TEST_F(CompareTreesTest, ComparesRankByRankAndNamesTheMissingRanks) {
  CopyRank(kTensorBf16, dir_ / "t/step0/rank0");
  CopyRank(kTensorBf16, dir_ / "t/step0/rank1");
  CopyRank(kTensorBase, dir_ / "g/step0/rank0");
  CopyRank(kTensorBase, dir_ / "g/step0/rank2");
  CompareTreesOptions options;
  options.output = dir_ / "out";
  options.timestamp = kTs;
  options.diff_analyze = true;
  auto result = CompareDumpTrees(dir_ / "t", dir_ / "g", options);
  ASSERT_TRUE(result.ok()) << result.error().ToString();

  ASSERT_EQ(result->ranks.size(), 1u);
  const RankCompare& r = result->ranks[0];
  EXPECT_EQ(r.label, "step0/rank0");
  EXPECT_EQ(r.pair.scope, "step0");
  EXPECT_EQ(r.pair.rank, "rank0");
  ASSERT_EQ(result->missing.size(), 2u);
  EXPECT_EQ(result->missing[0].Text(),
            "step0/rank1: only in the target dump (" + (dir_ / "t/step0/rank1").string() + ")");
  EXPECT_FALSE(result->missing[1].in_target);
  EXPECT_EQ(result->missing[1].label, "step0/rank2");
  EXPECT_TRUE(result->findings());

  // The same table and analysis as comparing the pair alone.
  auto alone = CompareDumps(*r.pair.target, *r.pair.golden);
  ASSERT_TRUE(alone.ok()) << alone.error().ToString();
  EXPECT_EQ(Cells(r.table), Cells(*alone));
  auto construct = ReadConstructJson(r.pair.target->construct_json);
  ASSERT_TRUE(construct.ok());
  const DivergenceReport report = FindDivergence(*alone, &*construct);
  EXPECT_EQ(FirstOp(r.report), FirstOp(report));
  EXPECT_FALSE(FirstOp(r.report).empty());  // bf16 against fp32 diverges
  EXPECT_EQ(result->earliest, 0);

  const fs::path out = dir_ / "out";
  EXPECT_EQ(r.table_file, out / "step0" / "compare_result_rank0_20260102030405.csv");
  EXPECT_EQ(r.json_file, out / "step0" / "compare_result_rank0_20260102030405.json");
  EXPECT_EQ(result->divergence_file, out / "divergence_20260102030405.json");
  EXPECT_EQ(result->diff_analyze_file, out / "diff_analyze_20260102030405.json");
  for (const fs::path& p :
       {r.table_file, r.json_file, result->divergence_file, result->diff_analyze_file}) {
    EXPECT_TRUE(fs::is_regular_file(p)) << p;
  }
  const std::string divergence = test::ReadFile(result->divergence_file);
  EXPECT_NE(divergence.find(result->missing[0].Text()), std::string::npos);
  EXPECT_NE(divergence.find(FirstOp(r.report)), std::string::npos);
}

TEST_F(CompareTreesTest, WritesNothingWithoutAnOutputFolder) {
  CopyRank(kTensorBf16, dir_ / "t/rank0");
  CopyRank(kTensorBase, dir_ / "g/rank0");
  auto result = CompareDumpTrees(dir_ / "t/rank0", dir_ / "g/rank0");
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  ASSERT_EQ(result->ranks.size(), 1u);
  EXPECT_EQ(result->ranks[0].label, "rank0");
  EXPECT_TRUE(result->ranks[0].table_file.empty());
  EXPECT_TRUE(result->divergence_file.empty());
  EXPECT_EQ(dir_.EntryCount(), 2u);  // t and g only

  CompareTreesOptions no_timestamp;
  no_timestamp.output = dir_ / "out";
  auto refused = CompareDumpTrees(dir_ / "t/rank0", dir_ / "g/rank0", no_timestamp);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

TEST_F(CompareTreesTest, WritesTheSameFilesAfterTheCompare) {
  CopyRank(kTensorBf16, dir_ / "t/step0/rank0");
  CopyRank(kTensorBase, dir_ / "g/step0/rank0");
  CompareTreesOptions options;
  options.output = dir_ / "during";
  options.timestamp = kTs;
  options.diff_analyze = true;
  auto during = CompareDumpTrees(dir_ / "t", dir_ / "g", options);
  ASSERT_TRUE(during.ok()) << during.error().ToString();

  auto later = CompareDumpTrees(dir_ / "t", dir_ / "g");
  ASSERT_TRUE(later.ok()) << later.error().ToString();
  options.output = dir_ / "after";
  ASSERT_TRUE(WriteCompareTreesFiles(options, &*later).ok());
  ASSERT_EQ(later->ranks.size(), 1u);
  const fs::path tables[][2] = {{during->ranks[0].table_file, later->ranks[0].table_file},
                                {during->ranks[0].json_file, later->ranks[0].json_file},
                                {during->divergence_file, later->divergence_file},
                                {during->diff_analyze_file, later->diff_analyze_file}};
  for (const auto& [a, b] : tables) {
    EXPECT_EQ(fs::relative(a, dir_ / "during"), fs::relative(b, dir_ / "after"));
    EXPECT_EQ(test::ReadFile(a), test::ReadFile(b)) << b;
  }

  CompareTreesOptions no_timestamp;
  no_timestamp.output = dir_ / "refused";
  const Status refused = WriteCompareTreesFiles(no_timestamp, &*later);
  EXPECT_EQ(refused.code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(dir_ / "refused"));
}

TEST_F(CompareTreesTest, ResultsDoNotDependOnTheThreadCount) {
  for (const char* rank : {"rank0", "rank1", "rank2"}) {
    CopyRank(kTensorBf16, dir_ / "t/step0" / rank);
    CopyRank(kTensorBase, dir_ / "g/step0" / rank);
  }
  // One thread: ranks one at a time; eight: each rank's rows over the pool (3 ranks < 8 threads).
  ThreadPool one(1);
  ThreadPool eight(8);
  CompareTreesOptions a;
  a.compare.pool = &one;
  CompareTreesOptions b;
  b.compare.pool = &eight;
  auto ra = CompareDumpTrees(dir_ / "t", dir_ / "g", a);
  auto rb = CompareDumpTrees(dir_ / "t", dir_ / "g", b);
  ASSERT_TRUE(ra.ok() && rb.ok());
  ASSERT_EQ(ra->ranks.size(), 3u);
  ASSERT_EQ(rb->ranks.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(ra->ranks[k].label, rb->ranks[k].label);
    EXPECT_EQ(Cells(ra->ranks[k].table), Cells(rb->ranks[k].table));
    EXPECT_EQ(FirstOp(ra->ranks[k].report), FirstOp(rb->ranks[k].report));
  }
  EXPECT_EQ(ra->earliest, rb->earliest);
  EXPECT_EQ(ra->earliest, 0);  // equal ranks: the first in rank order
}

TEST_F(CompareTreesTest, ReportsProgressPerTensorPairAndDoesNotPrint) {
  CopyRank(kTensorBf16, dir_ / "t/rank0");
  CopyRank(kTensorBase, dir_ / "g/rank0");
  std::mutex mu;
  std::vector<uint64_t> done;
  uint64_t total = 0;
  bool other_what = false;
  CompareTreesOptions options;
  options.compare.progress = [&](uint64_t d, uint64_t t, std::string_view what) {
    const std::lock_guard<std::mutex> lock(mu);
    done.push_back(d);
    total = t;
    other_what = other_what || what != "tensor pairs";
  };
  // stderr is a terminal while the library runs: it draws no bar there (the CLI does).
  int terminal = -1;
  int device = -1;
  ASSERT_EQ(::openpty(&terminal, &device, nullptr, nullptr, nullptr), 0);
  const int saved = ::dup(2);
  ::dup2(device, 2);
  auto result = CompareDumpTrees(dir_ / "t/rank0", dir_ / "g/rank0", options);
  ::dup2(saved, 2);
  ::close(saved);
  ::close(device);
  ::fcntl(terminal, F_SETFL, O_NONBLOCK);
  char printed[256];
  EXPECT_LE(::read(terminal, printed, sizeof(printed)), 0);
  ::close(terminal);
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_FALSE(other_what);
  EXPECT_GT(total, 1u);
  // Once per pair, each count once, the last one the total.
  ASSERT_EQ(done.size(), total);
  std::sort(done.begin(), done.end());
  for (uint64_t k = 0; k < total; ++k) EXPECT_EQ(done[k], k + 1);
}

TEST_F(CompareTreesTest, SkipsRanksThatRecordedNothing) {
  dir_.Write("t/step0/rank0/dump.json", StatDump("Functional.relu.0.forward", 2));
  dir_.Write("g/step0/rank0/dump.json", StatDump("Functional.relu.0.forward", 2));
  dir_.Write("t/step0/rank1/dump.json", StatDump("Functional.relu.0.forward", 2));
  dir_.Write("g/step0/rank1/dump.json", "{}");
  std::vector<std::string> warnings;
  CompareTreesOptions options;
  options.warning = [&](std::string_view w) { warnings.emplace_back(w); };
  auto result = CompareDumpTrees(dir_ / "t", dir_ / "g", options);
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  ASSERT_EQ(result->ranks.size(), 1u);
  EXPECT_EQ(result->ranks[0].label, "step0/rank0");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "step0/rank1: " + (dir_ / "g/step0/rank1/dump.json").string() +
                             " is {} (the rank recorded nothing); skipped");
  EXPECT_FALSE(result->findings());

  dir_.Write("t/step0/rank0/dump.json", "{}");
  warnings.clear();
  auto nothing = CompareDumpTrees(dir_ / "t", dir_ / "g", options);
  ASSERT_FALSE(nothing.ok());
  EXPECT_EQ(nothing.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(nothing.error().message(), "nothing to compare: every dump.json is {}");
  EXPECT_EQ(warnings.size(), 2u);
}

TEST_F(CompareTreesTest, ReadsTheMappingFilesItIsGiven) {
  dir_.Write("t/dump.json", StatDump("Functional.mine.0.forward", 2));
  dir_.Write("g/dump.json", StatDump("Functional.theirs.0.forward", 2));
  const fs::path dm = dir_.Write(
      "dm.yaml", "Functional.mine.0.forward.output.0: Functional.theirs.0.forward.output.0\n");
  CompareOptions options;
  options.mapping.align = false;
  options.mapping.data_mapping_file = dm;
  auto table = CompareDumps(*LocateDump(dir_ / "t"), *LocateDump(dir_ / "g"), options);
  ASSERT_TRUE(table.ok()) << table.error().ToString();
  size_t mapped = 0;
  for (const CompareRow& r : table->rows) mapped += r.match == MatchKind::kMapped ? 1 : 0;
  EXPECT_EQ(mapped, 1u);

  // A mapping file that is not there fails the compare, before anything is compared.
  CompareTreesOptions trees;
  trees.compare.mapping.layer_mapping_file = dir_ / "none.yaml";
  auto missing = CompareDumpTrees(dir_ / "t", dir_ / "g", trees);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message().find("none.yaml"), std::string::npos);
  options.mapping.data_mapping_file = dir_.Write("bad.yaml", "- a\n- b\n");
  auto bad = CompareDumps(*LocateDump(dir_ / "t"), *LocateDump(dir_ / "g"), options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
}

TEST_F(CompareTreesTest, AMalformedConstructJsonIsAnError) {
  CopyRank(kTensorBf16, dir_ / "t/rank0");
  CopyRank(kTensorBase, dir_ / "g/rank0");
  dir_.Write("t/rank0/construct.json", "{\"Module.a\": ");
  auto result = CompareDumpTrees(dir_ / "t/rank0", dir_ / "g/rank0");
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message().find("construct.json"), std::string::npos);

  // serve and report: a warning, and the rank analysed without module paths.
  std::vector<std::string> warnings;
  CompareTreesOptions options;
  options.warning = [&](std::string_view w) { warnings.emplace_back(w); };
  options.construct_errors_warn = true;
  auto warned = CompareDumpTrees(dir_ / "t/rank0", dir_ / "g/rank0", options);
  ASSERT_TRUE(warned.ok()) << warned.error().ToString();
  ASSERT_EQ(warned->ranks.size(), 1u);
  EXPECT_FALSE(warned->ranks[0].has_construct);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], result.error().message());
}

}  // namespace
}  // namespace numprobe
