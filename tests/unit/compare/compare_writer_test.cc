// WriteCompareCsvAndJson (each row formatted once for both files, in chunks written in table order
// over a pool) writes exactly the files WriteCompareCsv and WriteCompareJson write one by one on
// the calling thread: on a table of several chunks with a partial last one, with and without a
// pool, whatever its size; and the JSON twin is one valid document with every row and its counts.
#include "compare/compare_writer.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/compare.h"
#include "numprobe/dump_layout.h"
#include "numprobe/thread_pool.h"

#include "core/csv.h"
#include "core/json.h"
#include "testing/dump_builder.h"
#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

TEST(CompareWriterTest, OnePassWritesTheFilesOfTheTwoWriters) {
  test::TempDir temp{"numprobe_cmpwriter"};
  const fs::path root = temp.path();
  // 2,600 APIs of one input and one output: 5,200 rows, over a block of 4,096. Every seventh is
  // missing on the golden side (N/A cells, "unmatched"), one name needs CSV quoting, and values
  // include NaN and Inf (text cells next to JSON numbers).
  std::vector<std::string> target;
  std::vector<std::string> golden;
  for (int i = 0; i < 2600; ++i) {
    const std::string name =
        (i == 5 ? "Functional.a,b." : "Functional.op.") + std::to_string(i) + ".forward";
    const double v = 1.0 / (i + 3);
    const double odd = i % 11 == 0 ? NAN : (i % 13 == 0 ? INFINITY : v);
    target.push_back(
        test::ForwardEntry(name, test::TensorLeaf("torch.float32", {4}, v * 3, -v, odd, v * 7),
                           test::TensorLeaf("torch.float32", {4}, v, -v * 2, v / 3, v + 1)));
    if (i % 7 == 3) continue;
    golden.push_back(test::ForwardEntry(
        name, test::TensorLeaf("torch.float32", {4}, v * 3.1, -v, v, v * 7),
        test::TensorLeaf("torch.float32", {4}, v * 0.9, -v * 2, v / 3.5, v + 1.25)));
  }
  test::WriteDump(root / "t", {}, target);
  test::WriteDump(root / "g", {}, golden);
  auto table = CompareDumps(*LocateDump(root / "t"), *LocateDump(root / "g"));
  ASSERT_TRUE(table.ok()) << table.error().ToString();
  ASSERT_EQ(table->rows.size(), 5200u);

  ASSERT_TRUE(WriteCompareCsv(*table, root / "one.csv").ok());
  ASSERT_TRUE(WriteCompareJson(*table, root / "one.json", "t/dump.json", "g/dump.json").ok());
  const std::string csv = test::ReadFile(root / "one.csv");
  const std::string json = test::ReadFile(root / "one.json");
  ASSERT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5201);
  ASSERT_NE(csv.find("\"Functional.a,b.5.forward.input.0\""), std::string::npos);
  auto doc = ParseJson(json);
  ASSERT_TRUE(doc.ok()) << doc.error().ToString();
  const JsonValue* rows = doc->Find("rows");
  ASSERT_NE(rows, nullptr);
  ASSERT_EQ(rows->array().size(), 5200u);
  EXPECT_EQ(rows->array()[5199].array()[0].string_value(), "Functional.op.2599.forward.output.0");
  const JsonValue* counts = doc->Find("counts");
  ASSERT_NE(counts, nullptr);
  int64_t counted = 0;
  for (const char* v : {"pass", "warning", "error", "unmatched"}) {
    ASSERT_NE(counts->Find(v), nullptr) << v;
    counted += counts->Find(v)->int_value();
  }
  EXPECT_EQ(counted, 5200);
  EXPECT_GT(counts->Find("unmatched")->int_value(), 0);

  ThreadPool pool(3);
  for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
    SCOPED_TRACE(p == nullptr ? "no pool" : "3 threads");
    const Status s = WriteCompareCsvAndJson(*table, root / "both.csv", root / "both.json",
                                            "t/dump.json", "g/dump.json", p);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(test::ReadFile(root / "both.csv"), csv);
    EXPECT_EQ(test::ReadFile(root / "both.json"), json);
  }
}

// The writer encodes a dtype, a shape and an Err_message cell once and copies the bytes to the
// rows that repeat them: every line must still be the row's own cells (CsvCells, which reuses
// nothing), with texts whose ids collide across the two dumps and lists that change row by row.
TEST(CompareWriterTest, RepeatedCellsKeepEachRowsOwnText) {
  test::TempDir temp{"numprobe_cmpwriter"};
  const fs::path root = temp.path();
  const char* dtypes[] = {"torch.float16", "torch.float32", "torch.bfloat16"};
  std::vector<std::string> target;
  std::vector<std::string> golden;
  for (int i = 0; i < 3000; ++i) {
    const std::string name = "Functional.op." + std::to_string(i) + ".forward";
    const std::vector<int64_t> shape = {i % 5 + 1, i % 3 + 2};
    const double v = 1.0 + i % 17;
    // Target dtypes cycle by 3, golden ones by 2: rows with and without a dtype message, in runs
    // and alone, and the same text under different ids on each side.
    target.push_back(test::ForwardEntry(
        name, test::TensorLeaf(dtypes[i % 3], shape, v, -v, v / 2, v * 3),
        test::TensorLeaf(dtypes[(i / 7) % 3], {i % 4 + 1}, v, -v, v / 3, v * 2)));
    golden.push_back(test::ForwardEntry(
        name, test::TensorLeaf(dtypes[i % 2], shape, v, -v, v / 2, v * 3),
        test::TensorLeaf(dtypes[(i / 5) % 2], {i % 4 + 1}, v * 1.5, -v, v / 3, v * 2)));
  }
  test::WriteDump(root / "t", {}, target);
  test::WriteDump(root / "g", {}, golden);
  auto table = CompareDumps(*LocateDump(root / "t"), *LocateDump(root / "g"));
  ASSERT_TRUE(table.ok()) << table.error().ToString();
  ASSERT_EQ(table->rows.size(), 6000u);
  ThreadPool pool(2);
  ASSERT_TRUE(
      WriteCompareCsvAndJson(*table, root / "r.csv", root / "r.json", "t", "g", &pool).ok());

  std::string expected;
  detail::AppendCsvLine(table->Header(), &expected);
  std::vector<std::string> cells;
  size_t with_messages = 0;
  for (size_t i = 0; i < table->rows.size(); ++i) {
    table->CsvCells(i, &cells);
    detail::AppendCsvLine(cells, &expected);
    with_messages += table->rows[i].messages.empty() ? 0 : 1;
  }
  EXPECT_GT(with_messages, 1000u);
  EXPECT_LT(with_messages, 5000u);
  EXPECT_EQ(test::ReadFile(root / "r.csv"), expected);

  auto doc = ParseJson(test::ReadFile(root / "r.json"));
  ASSERT_TRUE(doc.ok()) << doc.error().ToString();
  const auto& rows = doc->Find("rows")->array();
  ASSERT_EQ(rows.size(), table->rows.size());
  const std::vector<std::string> header = table->Header();
  const auto column = [&](std::string_view title) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), title) - header.begin());
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    table->CsvCells(i, &cells);
    for (const char* title :
         {"NPU Dtype", "Bench Dtype", "NPU Tensor Shape", "Bench Tensor Shape", "Err_message"}) {
      const size_t c = column(title);
      ASSERT_LT(c, header.size()) << title;
      ASSERT_EQ(rows[i].array()[c].string_value(), cells[c]) << "row " << i << " " << title;
    }
  }
}

TEST(CompareWriterTest, OnePassReportsAnUnwritableFolder) {
  test::TempDir temp{"numprobe_cmpwriter"};
  const fs::path root = temp.path();
  test::WriteDump(root / "t", {},
                  {test::ForwardEntry("Functional.op.0.forward",
                                      test::TensorLeaf("torch.float32", {4}, 1, 0, 0.5, 1),
                                      test::TensorLeaf("torch.float32", {4}, 1, 0, 0.5, 1))});
  auto table = CompareDumps(*LocateDump(root / "t"), *LocateDump(root / "t"));
  ASSERT_TRUE(table.ok()) << table.error().ToString();
  const fs::path missing = root / "no" / "such" / "folder";
  EXPECT_EQ(
      WriteCompareCsvAndJson(*table, missing / "r.csv", root / "r.json", "t", "g", nullptr).code(),
      ErrorCode::kIoError);
  EXPECT_EQ(
      WriteCompareCsvAndJson(*table, root / "r.csv", missing / "r.json", "t", "g", nullptr).code(),
      ErrorCode::kIoError);
  EXPECT_FALSE(fs::exists(root / "r.csv"));  // nothing put in place when the twin fails
}

}  // namespace
}  // namespace numprobe
