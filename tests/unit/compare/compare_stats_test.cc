// Statistics- and md5-mode compare on small hand-written dumps: pairing, msprobe's cell tokens and
// formats, its Result rules, and numprobe's "unmatched". Expected texts are worked out by hand from
// msprobe's rules (diff = npu - bench, rel = |diff / bench * 100| "%").
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "numprobe/compare.h"
#include "numprobe/dump_layout.h"

#include "testing/dump_builder.h"
#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

class CompareStatsTest : public ::testing::Test {
 protected:
  DumpLocation Write(const std::string& side, const std::string& data,
                     const std::string& task = "statistics") {
    return *LocateDump(test::WriteDump(
        root_ / side, {.task = task, .level = "L1", .framework = "pytorch"}, {data}));
  }

  CompareTable Compare(const std::string& target, const std::string& golden) {
    auto table = CompareDumps(Write("t", target), Write("g", golden));
    EXPECT_TRUE(table.ok()) << table.error().ToString();
    return table.ok() ? std::move(*table) : CompareTable{};
  }

  // Row cells by column name.
  static std::map<std::string, std::string> Cells(const CompareTable& t, size_t row) {
    std::map<std::string, std::string> out;
    const auto header = t.Header();
    const auto cells = t.CsvCells(row);
    for (size_t i = 0; i < header.size(); ++i) out[header[i]] = cells[i];
    return out;
  }

  test::TempDir temp_{"numprobe_cmpstats"};
  const fs::path root_ = temp_.path();
};

std::string Tensor(const std::string& dtype, const std::string& stats,
                   const std::string& shape = "[2, 2]", const std::string& rg = "false") {
  return R"({"type": "torch.Tensor", "dtype": ")" + dtype + R"(", "shape": )" + shape + ", " +
         stats + R"(, "requires_grad": )" + rg + "}";
}

std::string Stats(const std::string& max, const std::string& min, const std::string& mean,
                  const std::string& norm) {
  return R"("Max": )" + max + R"(, "Min": )" + min + R"(, "Mean": )" + mean + R"(, "Norm": )" +
         norm;
}

std::string Api(const std::string& name, const std::string& inputs, const std::string& outputs) {
  return "\"" + name + R"(": {"input_args": [)" + inputs + R"(], "input_kwargs": {}, "output": [)" +
         outputs + "]}";
}

TEST_F(CompareStatsTest, DiffsAndRelativeErrorsUseMsprobesFormats) {
  const std::string in = Tensor("torch.float32", Stats("1.0", "-1.0", "0.0", "2.0"));
  const auto t = Compare(
      Api("Functional.f.0.forward", in, Tensor("torch.float32", Stats("1.5", "0.5", "3", "2.0"))),
      Api("Functional.f.0.forward", in,
          Tensor("torch.float32", Stats("1.25", "0.0", "3.0", "2.0"))));
  ASSERT_EQ(t.rows.size(), 2u);
  auto c = Cells(t, 1);
  EXPECT_EQ(c["Max diff"], "0.25");
  EXPECT_EQ(c["MaxRelativeErr"], "20.0%");
  EXPECT_EQ(c["Min diff"], "0.5");
  EXPECT_EQ(c["MinRelativeErr"], "inf");  // bench 0
  EXPECT_EQ(c["Mean diff"], "0.0");       // 3 and 3.0 differ as text, not as numbers
  EXPECT_EQ(c["MeanRelativeErr"], "0.0%");
  EXPECT_EQ(c["L2norm diff"], "0");  // equal text
  EXPECT_EQ(c["NormRelativeErr"], "0");
  EXPECT_EQ(c["NPU mean"], "3");
  EXPECT_EQ(c["Bench mean"], "3.0");
  EXPECT_EQ(c["Result"], "pass");
  EXPECT_EQ(c["Err_message"], "[]");
  auto c0 = Cells(t, 0);
  EXPECT_EQ(c0["Max diff"], "0");
  EXPECT_EQ(c0["Requires_grad Consistent"], "True");
}

TEST_F(CompareStatsTest, NonFiniteAndNonNumericValuesGiveMsprobesTokens) {
  const auto t =
      Compare(Api("Functional.f.0.forward",
                  Tensor("torch.float32", Stats("Infinity", "-Infinity", "NaN", "1.0")) + ", " +
                      Tensor("torch.float32", Stats("1.0", "2.0", "null", "1.0")),
                  R"({"type": "str", "value": "npu:0"})"),
              Api("Functional.f.0.forward",
                  Tensor("torch.float32", Stats("3.0", "1.0", "1.0", "Infinity")) + ", " +
                      Tensor("torch.float32", Stats("Infinity", "-Infinity", "0.5", "null")),
                  R"({"type": "str", "value": "cpu"})"));
  ASSERT_EQ(t.rows.size(), 3u);
  auto a = Cells(t, 0);
  EXPECT_EQ(a["Max diff"], "inf");      // inf vs number
  EXPECT_EQ(a["Min diff"], "-inf");     // -inf vs number
  EXPECT_EQ(a["Mean diff"], "Nan");     // NaN vs number
  EXPECT_EQ(a["L2norm diff"], "-inf");  // number vs inf
  EXPECT_EQ(a["NPU max"], " inf");      // pandas writes a float inf with a leading space
  EXPECT_EQ(a["NPU min"], " -inf");
  EXPECT_EQ(a["NPU mean"], "Nan");
  EXPECT_EQ(a["Result"], "error");
  EXPECT_EQ(a["Err_message"],
            R"(["error: There is nan/inf/-inf in the maximum or minimum value of NPU."])");
  auto b = Cells(t, 1);
  EXPECT_EQ(b["Max diff"], "-inf");   // number vs inf
  EXPECT_EQ(b["Min diff"], "inf");    // number vs -inf
  EXPECT_EQ(b["Mean diff"], "Diff");  // None vs number
  EXPECT_EQ(b["NPU mean"], "None");
  EXPECT_EQ(b["L2norm diff"], "Diff");
  EXPECT_EQ(b["Result"], "pass");  // NaN/inf only on the bench side is not flagged
  auto dev = Cells(t, 2);
  EXPECT_EQ(dev["Max diff"], "N/A");  // two device strings
  EXPECT_EQ(dev["NPU Dtype"], "<class 'str'>");
}

TEST_F(CompareStatsTest, UnmatchedRowsAreNeverPass) {
  const std::string x = Tensor("torch.float32", Stats("1.0", "0.0", "0.5", "1.0"));
  const auto t = Compare(
      Api("Functional.f.0.forward", x, x) + ", " + Api("Functional.only_target.0.forward", x, x),
      Api("Functional.f.0.forward", x, x));
  ASSERT_EQ(t.rows.size(), 4u);
  auto c = Cells(t, 2);
  EXPECT_EQ(c["NPU Name"], "Functional.only_target.0.forward.input.0");
  EXPECT_EQ(c["Bench Name"], "N/A");
  EXPECT_EQ(c["Bench Dtype"], "N/A");
  EXPECT_EQ(c["Max diff"], "N/A");
  EXPECT_EQ(c["MaxRelativeErr"], "N/A");
  EXPECT_EQ(c["Bench max"], "N/A");
  EXPECT_EQ(c["Requires_grad Consistent"], "False");
  EXPECT_EQ(c["Result"], "unmatched");
  EXPECT_EQ(c["Err_message"], R"(["unmatched: No bench data matched."])");
  EXPECT_EQ(t.rows[2].match, MatchKind::kNone);
}

TEST_F(CompareStatsTest, IncomparableDtypesBlankTheBenchSide) {
  const auto t = Compare(
      Api("Functional.f.0.forward", Tensor("torch.bfloat16", Stats("1.0", "0.0", "0.5", "1.0")),
          Tensor("torch.int64", Stats("1", "0", "0.5", "1.0"))),
      Api("Functional.f.0.forward", Tensor("torch.float32", Stats("1.0", "0.0", "0.5", "1.0")),
          Tensor("torch.float32", Stats("1.0", "0.0", "0.5", "1.0"))));
  ASSERT_EQ(t.rows.size(), 2u);
  auto in = Cells(t, 0);  // bf16 vs fp32: comparable, but msprobe flags the dtype difference
  EXPECT_EQ(in["Bench Dtype"], "torch.float32");
  EXPECT_EQ(in["Result"], "error");
  EXPECT_EQ(in["Err_message"], R"(["error: The dtype of NPU and Bench are inconsistent."])");
  auto out = Cells(t, 1);  // int64 vs fp32: msprobe blanks the bench side
  EXPECT_EQ(t.rows[1].match, MatchKind::kDtypeMismatch);
  EXPECT_EQ(out["Bench Name"], "N/A");
  EXPECT_EQ(out["Bench Dtype"], "N/A");
  EXPECT_EQ(out["Result"], "unmatched");
}

TEST_F(CompareStatsTest, BackwardCallNumbersAreRenumberedBeforePairing) {
  // With recompute, the target's second backward of relu is numbered 2; msprobe renumbers each
  // backward call by its order among the same API's backward calls.
  const std::string g1 = Tensor("torch.float32", Stats("1.0", "0.0", "0.5", "1.0"));
  const std::string g2 = Tensor("torch.float32", Stats("2.0", "0.0", "0.5", "1.0"));
  const std::string bwd = R"(": {"input": [)";
  const auto t = Compare("\"Functional.relu.0.backward" + bwd + g1 + R"(], "output": []}, )" +
                             "\"Functional.relu.2.backward" + bwd + g2 + R"(], "output": []})",
                         "\"Functional.relu.0.backward" + bwd + g1 + R"(], "output": []}, )" +
                             "\"Functional.relu.1.backward" + bwd + g2 + R"(], "output": []})");
  ASSERT_EQ(t.rows.size(), 2u);
  auto c = Cells(t, 1);
  EXPECT_EQ(c["NPU Name"], "Functional.relu.2.backward.input.0");
  EXPECT_EQ(c["Bench Name"], "Functional.relu.1.backward.input.0");
  EXPECT_EQ(c["Max diff"], "0");
}

TEST_F(CompareStatsTest, NormRelativeErrorRulesMarkOutputs) {
  const std::string in = Tensor("torch.float32", Stats("1.0", "0.0", "0.5", "1.0"));
  // Inputs equal ("0" cells are skipped: max input NormRelativeErr is 0), output norm 60% off.
  const auto t = Compare(Api("Functional.f.0.forward", in,
                             Tensor("torch.float32", Stats("1.0", "0.0", "0.5", "1.6"))) +
                             ", " +
                             Api("Functional.g.0.forward", in,
                                 Tensor("torch.float32", Stats("1.0", "0.0", "0.5", "1.2"))),
                         Api("Functional.f.0.forward", in,
                             Tensor("torch.float32", Stats("1.0", "0.0", "0.5", "1.0"))) +
                             ", " +
                             Api("Functional.g.0.forward", in,
                                 Tensor("torch.float32", Stats("1.0", "0.0", "0.5", "1.0"))));
  ASSERT_EQ(t.rows.size(), 4u);
  auto f = Cells(t, 1);
  EXPECT_EQ(f["NormRelativeErr"], "60.00000000000001%");
  EXPECT_EQ(f["Result"], "error");
  EXPECT_EQ(f["Err_message"],
            R"(["error: The NormRelativeErr of output is greater than 0.5.", )"
            R"("warning: The norm relative error of output is 10 times that of input."])");
  auto g = Cells(t, 3);  // 20% > 10% with equal inputs: a warning only
  EXPECT_EQ(g["Result"], "warning");
  EXPECT_EQ(g["Err_message"],
            R"(["warning: The norm relative error of output is 10 times that of input."])");
}

TEST_F(CompareStatsTest, ScalarShapeAndRequiresGradRules) {
  const auto t =
      Compare(Api("Functional.f.0.forward",
                  R"({"type": "int", "value": 1}, )" +
                      Tensor("torch.float32", Stats("1.0", "0.0", "0.5", "1.0"), "[2, 2]", "true"),
                  Tensor("torch.float32", Stats("1.0", "0.0", "0.5", "1.0"), "[4]")),
              Api("Functional.f.0.forward",
                  R"({"type": "int", "value": 2}, )" +
                      Tensor("torch.float32", Stats("1.0", "0.0", "0.5", "1.0"), "[2, 2]", "false"),
                  Tensor("torch.float32", Stats("1.0", "0.0", "0.5", "1.0"), "[2, 2]")));
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(Cells(t, 0)["Err_message"],
            R"(["error: The scalar parameters of NPU and Bench are inconsistent."])");
  auto rg = Cells(t, 1);
  EXPECT_EQ(rg["Requires_grad Consistent"], "False");
  EXPECT_EQ(rg["Err_message"], R"(["error: The Required_Grad of NPU and Bench are inconsistent"])");
  EXPECT_EQ(Cells(t, 2)["Err_message"],
            R"(["error: The shape of NPU and Bench are inconsistent."])");
}

TEST_F(CompareStatsTest, IgnoredApisSkipTheRules) {
  // Tensor.to is on msprobe's list of APIs no rule applies to.
  const auto t =
      Compare(Api("Tensor.to.0.forward", Tensor("torch.float32", Stats("1.0", "0.0", "0.5", "1.0")),
                  Tensor("torch.float16", Stats("Infinity", "0.0", "0.5", "1.0"))),
              Api("Tensor.to.0.forward", Tensor("torch.float32", Stats("1.0", "0.0", "0.5", "1.0")),
                  Tensor("torch.float32", Stats("1.0", "0.0", "0.5", "1.0"))));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(Cells(t, 1)["Result"], "pass");
}

TEST_F(CompareStatsTest, Md5ModeComparesChecksums) {
  auto tensor = [](const std::string& md5) {
    return R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "requires_grad": false, "md5": ")" +
           md5 + R"("})";
  };
  const auto t = Compare(Api("Functional.f.0.forward", tensor("aaaa0000"), tensor("bbbb0000")) +
                             ", " + Api("Functional.h.0.forward", tensor("cccc0000"), ""),
                         Api("Functional.f.0.forward", tensor("aaaa0000"), tensor("bbbb1111")));
  EXPECT_EQ(t.mode, CompareMode::kMd5);
  const auto header = t.Header();
  EXPECT_EQ(header[8], "NPU MD5");
  EXPECT_EQ(header[9], "BENCH MD5");
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(Cells(t, 0)["Result"], "pass");
  auto out = Cells(t, 1);
  EXPECT_EQ(out["NPU MD5"], "bbbb0000");
  EXPECT_EQ(out["BENCH MD5"], "bbbb1111");
  EXPECT_EQ(out["Result"], "error");
  EXPECT_EQ(out["Err_message"],
            R"(["error: The CRC-32 value of NPU differs from that of the bench."])");
  auto un = Cells(t, 2);
  EXPECT_EQ(un["BENCH MD5"], "N/A");
  EXPECT_EQ(un["Result"], "unmatched");
  EXPECT_EQ(
      un["Err_message"],
      R"(["unmatched: No bench data matched.", "warning: The parameter of NPU does not match the bench."])");
}

TEST_F(CompareStatsTest, DifferentTasksAreRefused) {
  auto table = CompareDumps(Write("t", "", "statistics"), Write("g", "", "tensor"));
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(table.error().message().find("task"), std::string::npos);
}

}  // namespace
}  // namespace numprobe
