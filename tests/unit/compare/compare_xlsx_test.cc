// msprobe's xlsx highlighting rules on small hand-written statistics dumps.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "numprobe/compare.h"
#include "numprobe/dump_layout.h"

#include "compare/compare_writer.h"
#include "testing/dump_builder.h"
#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

std::string Leaf(double max, double min, const std::string& rg = "false") {
  return R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": )" +
         std::to_string(max) + R"(, "Min": )" + std::to_string(min) +
         R"(, "Mean": 0.5, "Norm": 1.0, "requires_grad": )" + rg + "}";
}

std::string Api(const std::string& name, const std::string& in, const std::string& out) {
  return test::ForwardEntry(name, in, out);
}

class CompareXlsxTest : public ::testing::Test {
 protected:
  CompareTable Compare(const std::string& target, const std::string& golden) {
    for (const auto& [side, data] : {std::pair{"t", target}, std::pair{"g", golden}}) {
      test::WriteDump(root_ / side, {}, {data});
    }
    auto table = CompareDumps(*LocateDump(root_ / "t"), *LocateDump(root_ / "g"));
    EXPECT_TRUE(table.ok()) << table.error().ToString();
    return std::move(*table);
  }

  test::TempDir temp_{"numprobe_xlsx"};
  const fs::path root_ = temp_.path();
};

TEST_F(CompareXlsxTest, RedAndYellowFollowMsprobesRules) {
  const auto t = Compare(
      // a: output max 60% off with equal inputs -> red (MaxRelativeErr > 0.5).
      Api("Functional.a.0.forward", Leaf(1.0, 0.0), Leaf(1.6, 0.0)) + ", " +
          // b: output max 20% off while the input's is 0.5% -> yellow.
          Api("Functional.b.0.forward", Leaf(1.005, 0.0), Leaf(1.2, 0.0)) + ", " +
          // c: requires_grad differs on the input -> yellow on that row only.
          Api("Functional.c.0.forward", Leaf(1.0, 0.0, "true"), Leaf(1.0, 0.0)) + ", " +
          // d: Inf in the NPU's max -> red; e: all equal -> none.
          Api("Functional.d.0.forward", Leaf(1.0, 0.0),
              R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": Infinity, "Min": 0.0, "Mean": 0.5, "Norm": 1.0, "requires_grad": false})") +
          ", " + Api("Functional.e.0.forward", Leaf(1.0, 0.0), Leaf(1.0, 0.0)),
      Api("Functional.a.0.forward", Leaf(1.0, 0.0), Leaf(1.0, 0.0)) + ", " +
          Api("Functional.b.0.forward", Leaf(1.0, 0.0), Leaf(1.0, 0.0)) + ", " +
          Api("Functional.c.0.forward", Leaf(1.0, 0.0), Leaf(1.0, 0.0)) + ", " +
          Api("Functional.d.0.forward", Leaf(1.0, 0.0), Leaf(1.0, 0.0)) + ", " +
          Api("Functional.e.0.forward", Leaf(1.0, 0.0), Leaf(1.0, 0.0)));
  const std::vector<RowColor> c = MsprobeHighlights(t);
  ASSERT_EQ(c.size(), 10u);
  const std::vector<RowColor> expected = {RowColor::kNone,   RowColor::kRed,     // a
                                          RowColor::kNone,   RowColor::kYellow,  // b
                                          RowColor::kYellow, RowColor::kNone,    // c
                                          RowColor::kNone,   RowColor::kRed,     // d
                                          RowColor::kNone,   RowColor::kNone};   // e
  EXPECT_EQ(c, expected);

  // The workbook is written (and named) where asked.
  const fs::path out = root_ / "r.xlsx";
  const Status s = WriteCompareXlsx(t, out);
#ifdef NUMPROBE_WITH_XLSX
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_GT(fs::file_size(out), 1000u);
#else
  EXPECT_EQ(s.code(), ErrorCode::kUnsupported);
#endif
}

}  // namespace
}  // namespace numprobe
