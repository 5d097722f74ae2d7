// The pre-check result files: msprobe's CSV layout (byte-order mark, CRLF, quoting of the
// multi-line messages, "{:.14f}" numbers, " " for empty cells), reading them back, resuming an
// interrupted run from its result CSV, the JSON twin; and precheck-compare (msprobe's
// api_precision_compare) on details CSVs, including msprobe's own file layout.
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/app/precheck.h"
#include "numprobe/app/precheck_compare.h"

#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

using test::ReadFile;

PrecheckApiResult OneApi(const std::string& api, PrecheckStatus status, double cosine) {
  PrecheckApiResult a;
  a.api = api;
  PrecheckRow r = MessageRow(api + ".forward.output.0", status,
                             "Dump data, first line.\nRelative error is greater, second line.\n");
  r.bench_dtype = "torch.float64";
  r.device_dtype = "torch.float32";
  r.shape = "(2, 3)";
  r.columns[kPcCosine] = cosine;
  r.columns[kPcMaxAbsErr] = 0.25;
  r.standard = "benchmark";
  r.reason = "a, with a comma";
  r.worst_index = 4;
  r.worst_device = 1.5;
  r.worst_bench = 1.25;
  r.device = "cpu";
  a.forward_rows.push_back(r);
  Aggregate(&a);
  return a;
}

TEST(PrecheckFilesTest, WritesMsprobesLayoutAndReadsItBack) {
  const test::TempDir tmp("numprobe_precheck_layout");
  const fs::path& dir = tmp.path();
  auto w = PrecheckWriter::Create(dir, "20250102030405");
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  ASSERT_TRUE(w->Append(OneApi("Functional.relu.0", PrecheckStatus::kPass, 1.0)).ok());
  ASSERT_TRUE(w->Append(OneApi("Torch.matmul.0", PrecheckStatus::kError, 0.5)).ok());
  const std::string details = ReadFile(w->files().details_csv);
  ASSERT_EQ(details.rfind("\xEF\xBB\xBF"
                          "API Name,Bench Dtype,DEVICE Dtype,Shape,余弦相似度,",
                          0),
            0u);
  // A quoted message holding its newlines, CRLF line ends, msprobe's number and blank forms.
  EXPECT_NE(details.find(",\"Dump data, first line.\nRelative error is greater, second line.\n\","),
            std::string::npos);
  EXPECT_NE(details.find(",1.00000000000000,0.25000000000000, , , ,"), std::string::npos);
  EXPECT_NE(details.find("\r\n"), std::string::npos);
  const std::string result = ReadFile(w->files().result_csv);
  EXPECT_NE(result.find("API name,Forward Test Success,Backward Test Success,Message"),
            std::string::npos);
  EXPECT_NE(result.find("Torch.matmul.0,error, ,,error\r\n"), std::string::npos);

  const auto rows = ReadPrecheckDetails(w->files().details_csv);
  ASSERT_TRUE(rows.ok()) << rows.error().ToString();
  ASSERT_EQ(rows->size(), 2u);
  const PrecheckRow& r = (*rows)[1];
  EXPECT_EQ(r.name, "Torch.matmul.0.forward.output.0");
  EXPECT_EQ(r.shape, "(2, 3)");
  EXPECT_EQ(*r.columns[kPcCosine], 0.5);
  EXPECT_FALSE(r.columns[kPcDual1000].has_value());
  EXPECT_EQ(r.status, PrecheckStatus::kError);
  EXPECT_EQ(r.message, "Dump data, first line.\nRelative error is greater, second line.\n");
  EXPECT_EQ(r.reason, "a, with a comma");
  EXPECT_EQ(r.worst_index, 4);
  EXPECT_EQ(*r.worst_bench, 1.25);
  ASSERT_TRUE(w->Finish({"dump.json", "statistics", 1234, "cpu", {}}).ok());
  const std::string twin = ReadFile(w->files().json);
  EXPECT_NE(twin.find("\"numprobe_precheck\":1"), std::string::npos);
  EXPECT_NE(twin.find("\"summary\":{\"apis\":2,\"pass\":1,\"warning\":0,\"error\":1,\"skip\":0}"),
            std::string::npos);
}

TEST(PrecheckFilesTest, ResumeContinuesTheSameFiles) {
  const test::TempDir tmp("numprobe_precheck_resume");
  const fs::path& dir = tmp.path();
  fs::path result_csv;
  {
    auto w = PrecheckWriter::Create(dir, "20250102030405");
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->Append(OneApi("Functional.relu.0", PrecheckStatus::kPass, 1.0)).ok());
    result_csv = w->files().result_csv;
  }  // interrupted: no Finish
  auto w = PrecheckWriter::Resume(result_csv);
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  EXPECT_EQ(w->done().count("Functional.relu.0"), 1u);
  EXPECT_EQ(w->files().details_csv, dir / "accuracy_checking_details_20250102030405.csv");
  ASSERT_EQ(w->apis().size(), 1u);
  EXPECT_EQ(w->apis()[0].verdict, PrecheckStatus::kPass);
  EXPECT_EQ(w->apis()[0].forward_rows.size(), 1u);
  ASSERT_TRUE(w->Append(OneApi("Torch.matmul.0", PrecheckStatus::kError, 0.5)).ok());
  ASSERT_TRUE(w->Finish({"dump.json", "statistics", 1234, "cpu", {}}).ok());
  const auto results = ReadPrecheckResults(result_csv);
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 2u);
  EXPECT_EQ((*results)[1].forward, PrecheckStatus::kError);
  // One header only: the resumed run appended.
  const std::string text = ReadFile(result_csv);
  EXPECT_EQ(text.find("API name"), text.rfind("API name"));
  // A renamed result CSV cannot be resumed (msprobe's rule).
  const fs::path renamed = dir / "results.csv";
  fs::copy_file(result_csv, renamed);
  EXPECT_EQ(PrecheckWriter::Resume(renamed).error().code(), ErrorCode::kInvalidArgument);
}

TEST(PrecheckFilesTest, MalformedFilesAreReported) {
  const test::TempDir tmp("numprobe_precheck_bad");
  const fs::path& dir = tmp.path();
  const fs::path csv = dir / "accuracy_checking_details_20250102030405.csv";
  test::WriteFile(csv, "a,b\n\"unterminated\n");
  EXPECT_FALSE(ReadPrecheckDetails(csv).ok());
  // A details file cut inside a quoted message (an interrupted copy) is an error, not a row.
  test::WriteFile(csv, "API Name,Status,Message\nFunctional.relu.0.forward.output.0,pass,\"cut\n");
  const auto cut = ReadPrecheckDetails(csv);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(cut.error().message().find("not closed"), std::string::npos) << cut.error().message();
  test::WriteFile(csv, "x,y\n1,2\n");
  const auto r = ReadPrecheckDetails(csv);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt);
  test::WriteFile(csv, "API Name,Status\nFunctional.relu.0.forward.output.0,maybe\n");
  EXPECT_EQ(ReadPrecheckDetails(csv).error().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(ReadPrecheckDetails(dir / "missing.csv").error().code(), ErrorCode::kNotFound);
}

// The worst element's index is read back as an index or not at all: a value no int64 holds (a
// hostile or hand-edited file) was converted regardless, which is undefined behaviour.
TEST(PrecheckFilesTest, AWorstIndexThatIsNoIndexIsLeftUnknown) {
  const test::TempDir tmp("numprobe_precheck_worst_index");
  const fs::path csv = tmp.path() / "accuracy_checking_details_20250102030405.csv";
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"12", 12},
      {"12.0", 12},
      {"0", 0},
      {"9.2e18", int64_t{9200000000000000000}},
      {"-3", -1},
      {"1.5", -1},
      {"nan", -1},
      {"inf", -1},
      {"8.88889e+41", -1},
      {"9223372036854775808", -1},
      {"x", -1}};
  std::string text = "API Name,Status,Worst Index\n";
  for (const auto& c : cases) text += "Functional.relu.0.forward.output.0,pass," + c.first + "\n";
  test::WriteFile(csv, text);
  const auto rows = ReadPrecheckDetails(csv);
  ASSERT_TRUE(rows.ok()) << rows.error().ToString();
  ASSERT_EQ(rows->size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ((*rows)[i].worst_index, cases[i].second) << cases[i].first;
  }
}

// A details CSV as msprobe's acc_check writes it (its header, its cells).
std::string MsprobeDetails(const std::vector<std::string>& lines) {
  std::string out =
      "\xEF\xBB\xBF"
      "API Name,Bench Dtype,DEVICE Dtype,Shape,余弦相似度,最大绝对误差,双百指标,"
      "双千指标,双万指标,二进制一致错误率,误差均衡性,均方根误差,小值域错误占比,相对误差最大值,"
      "相对误差平均值,inf/nan错误率,相对误差错误率,绝对误差错误率,ULP误差最大值,ULP误差平均值,"
      "ULP误差大于阈值占比,Status,Message\r\n";
  for (const std::string& l : lines) out += l + "\r\n";
  return out;
}

TEST(PrecheckCompareTest, JudgesByStandardAsMsprobeDocuments) {
  const test::TempDir tmp("numprobe_precheck_compare");
  const fs::path& dir = tmp.path();
  // Columns after the shape: cos, maxabs, d100, d1000, d10000, error rate, eb, rmse, small,
  // max rel, mean rel, inf/nan, rel ratio, abs ratio, max ulp, mean ulp, ulp share.
  // Each row is one CSV line written in pieces (adjacent literals), not a missing comma.
  // NOLINTBEGIN(bugprone-suspicious-missing-comma)
  const std::string npu = MsprobeDetails({
      // benchmark (softmax, level 0): RMSE ratio 3 > 2 -> error; others within limits.
      "Functional.softmax.0.forward.output.0,torch.float64,torch.float32,\"(4, 8)\",1, , , , , "
      ",0.1,"
      "0.003,0.0,0.001,0.0001, , , , , , ,pass,",
      // ULP (matmul, f32): mean 100 >= 64, share 0.2 >= 0.05, ratio 0.2/0.1 = 2 >= 1 -> error.
      "Torch.matmul.0.forward.output.0,torch.float64,torch.float32,\"(4, 4)\",1, , , , , , , , , , "
      ", , "
      ", ,300,100,0.2,pass,",
      // binary (int64 output): error rate 0 -> pass.
      "Tensor.add.0.forward.output.0,torch.int64,torch.int64,(),0, , , , ,0, , , , , , , , , , , ,"
      "pass,",
      // dual-1000 (conv2d): 6.2e-06 -> error (msprobe's api_precision_compare figure).
      "Functional.conv2d.0.forward.output.0,torch.float64,torch.float32,\"(32, 64)\",0.739174, , ,"
      "0.0000062, , , , , , , , , , , , , ,error,",
      // float64 outputs are skipped.
      "Torch.sum.0.forward.output.0,torch.float64,torch.float64,(),1, , , , , , , , , , , , , , , "
      ", "
      ",pass,",
  });
  const std::string gpu = MsprobeDetails({
      "Functional.softmax.0.forward.output.0,torch.float64,torch.float32,\"(4, 8)\",1, , , , , "
      ",0.1,"
      "0.001,0.0,0.001,0.0001, , , , , , ,pass,",
      "Torch.matmul.0.forward.output.0,torch.float64,torch.float32,\"(4, 4)\",1, , , , , , , , , , "
      ", , "
      ", ,300,100,0.1,pass,",
      "Tensor.add.0.forward.output.0,torch.int64,torch.int64,(),0, , , , ,0, , , , , , , , , , , ,"
      "pass,",
      "Functional.conv2d.0.forward.output.0,torch.float64,torch.float32,\"(32, 64)\",0.9, , ,"
      "0.5, , , , , , , , , , , , , ,error,",
      "Torch.sum.0.forward.output.0,torch.float64,torch.float64,(),1, , , , , , , , , , , , , , , "
      ", "
      ",pass,",
  });
  // NOLINTEND(bugprone-suspicious-missing-comma)
  tmp.Write("npu.csv", npu);
  tmp.Write("gpu.csv", gpu);
  auto report = ComparePrecheckDetails(dir / "npu.csv", dir / "gpu.csv");
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  ASSERT_EQ(report->rows.size(), 5u);
  const auto& softmax = report->rows[0];
  EXPECT_EQ(softmax.result, PrecheckStatus::kError);
  EXPECT_EQ(softmax.cells[3], "3.00000000000000");  // RMSE ratio
  EXPECT_EQ(softmax.cells[4], "error");
  EXPECT_EQ(softmax.cells[26], "标杆比对法");
  EXPECT_NE(softmax.cells[27].find("ERROR: 均方根误差比值超过阈值"), std::string::npos);
  EXPECT_EQ(report->rows[1].result, PrecheckStatus::kError);
  EXPECT_EQ(report->rows[1].cells[21], "2.00000000000000");
  EXPECT_EQ(report->rows[2].result, PrecheckStatus::kPass);
  EXPECT_EQ(report->rows[2].cells[26], "二进制一致法");
  EXPECT_EQ(report->rows[3].result, PrecheckStatus::kError);
  EXPECT_EQ(report->rows[3].cells[24], "error");
  EXPECT_EQ(report->rows[4].result, PrecheckStatus::kSkip);
  ASSERT_EQ(report->apis.size(), 5u);
  EXPECT_EQ(report->apis[0].api, "Functional.softmax.0");
  EXPECT_EQ(report->apis[0].forward, PrecheckStatus::kError);
  EXPECT_EQ(report->apis[0].backward, PrecheckStatus::kNone);
  EXPECT_EQ(report->apis[2].forward, PrecheckStatus::kPass);
  EXPECT_EQ(report->apis[4].forward, PrecheckStatus::kSkip);
  EXPECT_EQ(report->apis[4].message, "This data type does not support benchmark compare.");
  EXPECT_TRUE(report->failed());

  // At monitoring level 2 (layer_norm) an RMSE ratio of 1.3 fails; at level 0 it passes.
  const std::string row =
      ".0.forward.output.0,torch.float64,torch.float16,\"(8,)\",1, , , , , ,0.1,0.0013,0.0,0.001,"
      "0.0001, , , , , , ,pass,";
  const std::string ref_row =
      ".0.forward.output.0,torch.float64,torch.float16,\"(8,)\",1, , , , , ,0.1,0.001,0.0,0.001,"
      "0.0001, , , , , , ,pass,";
  tmp.Write("npu2.csv", MsprobeDetails({"Functional.layer_norm" + row, "Functional.gelu" + row}));
  tmp.Write("gpu2.csv",
            MsprobeDetails({"Functional.layer_norm" + ref_row, "Functional.gelu" + ref_row}));
  auto levels = ComparePrecheckDetails(dir / "npu2.csv", dir / "gpu2.csv");
  ASSERT_TRUE(levels.ok());
  EXPECT_EQ(levels->rows[0].result, PrecheckStatus::kError);
  EXPECT_EQ(levels->rows[1].result, PrecheckStatus::kPass);

  auto files = WritePrecheckCompare(*report, dir / "out", "20250102030405");
  ASSERT_TRUE(files.ok());
  const std::string details = ReadFile(files->details_csv);
  EXPECT_EQ(details.rfind("\xEF\xBB\xBF"
                          "API Name,小值域错误比值,小值域判定结果,",
                          0),
            0u);
  EXPECT_NE(ReadFile(files->result_csv).find("Functional.softmax.0,error, ,"), std::string::npos);
}

TEST(PrecheckCompareTest, ReferenceWithDuplicateRowsIsRejected) {
  const test::TempDir tmp("numprobe_precheck_dup");
  const fs::path& dir = tmp.path();
  const std::string line =
      "Torch.matmul.0.forward.output.0,torch.float64,torch.float32,\"(4, 4)\",1, , , , , , , , , , "
      ", , "
      ", ,3,1,0.0,pass,";
  tmp.Write("npu.csv", MsprobeDetails({line}));
  tmp.Write("gpu.csv", MsprobeDetails({line, line}));
  auto report = ComparePrecheckDetails(dir / "npu.csv", dir / "gpu.csv");
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code(), ErrorCode::kCorrupt);
}

}  // namespace
}  // namespace numprobe
