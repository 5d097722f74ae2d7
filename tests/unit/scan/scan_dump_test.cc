// ScanDump end to end on dumps written here and on msprobe's own NaN dump: the first anomaly
// across ranks, exact statistics from tensor files, raw entry extraction, the output files and
// the errors.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/npy.h"
#include "numprobe/scan.h"

#include "scan/scan_internal.h"
#include "testing/dump_builder.h"
#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

class ScanDumpTest : public ::testing::Test {
 protected:
  void Write(const fs::path& rel, const std::string& text) { temp_.Write(rel, text); }
  // dump.json with `data` (its entries, joined) as its data object.
  void WriteDump(const fs::path& rank_dir, const std::string& data,
                 const std::string& task = "statistics") {
    test::WriteDump(root_ / rank_dir, {.task = task, .level = "L1", .framework = "pytorch"},
                    {data});
  }

  test::TempDir temp_{"numprobe_scan_dump"};
  const fs::path root_ = temp_.path();
};

std::string Tensor(const std::string& max, const std::string& min,
                   const std::string& dtype = "torch.float32") {
  return R"({"type": "torch.Tensor", "dtype": ")" + dtype + R"(", "shape": [2, 2], "Max": )" + max +
         R"(, "Min": )" + min + R"(, "Mean": 0.5, "Norm": 1.0, "requires_grad": false})";
}

std::string Op(const std::string& name, const std::string& in, const std::string& out,
               const std::string& kwargs = "{}") {
  return "\"" + name + R"(": {"input_args": [)" + in + R"(], "input_kwargs": )" + kwargs +
         R"(, "output": [)" + out + "]}";
}

const std::string kGroup = R"({"group": {"type": "torch.ProcessGroup", "group_ranks": [0, 1]}})";

TEST_F(ScanDumpTest, MsprobeNanFixtureNamesTheMultiply) {
  auto report = ScanDump(NUMPROBE_FIXTURES_DIR "/msprobe/dump_statistics_nan");
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  ASSERT_NE(report->first_anomaly(), nullptr);
  const AnomalyNode& first = *report->first_anomaly();
  EXPECT_EQ(first.op_name, "Tensor.__mul__.0.forward");
  EXPECT_EQ(first.kind, AnomalyKind::kCompute);
  EXPECT_EQ(first.step, 0);
  EXPECT_EQ(first.rank_folder, "proc18393");
  EXPECT_EQ(report->anomalies.size(), 1u);
  ASSERT_FALSE(first.stack.empty());
  EXPECT_NE(first.stack[0].find("models.py, line 58"), std::string::npos);
  ASSERT_FALSE(first.outputs.empty());
  EXPECT_TRUE(first.outputs[0].nonfinite);
  EXPECT_TRUE(std::isinf(first.outputs[0].max));
  // Every parameter gradient of the NaN run holds NaN (15 tensors).
  EXPECT_EQ(report->hits.size(), 15u);
  for (const auto& h : report->hits) EXPECT_EQ(h.watchpoint, Watchpoint::kGradientExploding);
  EXPECT_EQ(report->task, "statistics");
  EXPECT_TRUE(report->findings());
}

TEST_F(ScanDumpTest, BirthOnRankOneBeatsTheAllReduceThatCarriesItToRankZero) {
  const std::string ok = Tensor("1.0", "-1.0");
  const std::string nan = Tensor("NaN", "NaN");
  // Rank 0's all_reduce comes first in its file and outputs NaN; its own input was finite.
  WriteDump("step0/rank0", Op("Distributed.all_reduce.0.forward", ok, nan, kGroup) + "," +
                               Op("Torch.add.0.forward", nan, nan));
  WriteDump("step0/rank1",
            Op("Torch.mul.0.forward", ok, ok) + "," + Op("Torch.mul.1.forward", ok, ok) + "," +
                Op("Torch.rsqrt.0.forward", Tensor("1.0", "0.0"), Tensor("Infinity", "1.0")) + "," +
                Op("Distributed.all_reduce.0.forward", Tensor("Infinity", "1.0"), nan, kGroup));
  auto report = ScanDump(root_);
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  ASSERT_EQ(report->anomalies.size(), 1u);
  EXPECT_EQ(report->anomalies[0].op_name, "Torch.rsqrt.0.forward");
  EXPECT_EQ(report->anomalies[0].rank, 1);
  EXPECT_EQ(report->anomalies[0].time, -0.5);
  EXPECT_EQ(report->ranks, 2);
}

TEST_F(ScanDumpTest, AllReduceWithFiniteInputsEverywhereIsTheBirth) {
  const std::string big = Tensor("60000.0", "-1.0", "torch.float16");
  const std::string inf = Tensor("Infinity", "-1.0", "torch.float16");
  for (const char* rank : {"step0/rank0", "step0/rank1"}) {
    WriteDump(rank, Op("Distributed.all_reduce.0.forward", big, inf, kGroup));
  }
  auto report = ScanDump(root_);
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  ASSERT_EQ(report->anomalies.size(), 2u);
  EXPECT_EQ(report->anomalies[0].kind, AnomalyKind::kCommunication);
  EXPECT_EQ(report->anomalies[0].rank, 0);
  EXPECT_EQ(report->anomalies[1].rank, 1);
}

TEST_F(ScanDumpTest, InheritedInputsComeAfterRealBirths) {
  // An -inf mask tensor from outside the dump feeds the first op; a real birth follows.
  WriteDump("step0/rank0",
            Op("Tensor.__add__.0.forward", Tensor("1.0", "-Infinity") + "," + Tensor("1", "0"),
               Tensor("1.0", "-Infinity")) +
                "," + Op("Torch.log.0.forward", Tensor("1.0", "0.0"), Tensor("0.0", "-Infinity")));
  auto report = ScanDump(root_);
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  ASSERT_EQ(report->anomalies.size(), 2u);
  EXPECT_EQ(report->anomalies[0].op_name, "Torch.log.0.forward");
  EXPECT_EQ(report->anomalies[1].kind, AnomalyKind::kInheritedInput);
}

TEST_F(ScanDumpTest, TensorFilesGiveExactStatistics) {
  // Statistics are null in dump.json (as msprobe writes for fp8); the file holds one NaN.
  const std::vector<float> values = {1.0f, std::numeric_limits<float>::quiet_NaN(), 2.0f, 0.0f};
  const auto view = TensorView::Contiguous(values.data(), DType::kF32, {4});
  const std::vector<float> inputs = {0.5f, 0.25f, 1.0f, 3.0f};
  const auto in_view = TensorView::Contiguous(inputs.data(), DType::kF32, {4});
  fs::create_directories(root_ / "rank0/dump_tensor_data");
  ASSERT_TRUE(WriteNpy(root_ / "rank0/dump_tensor_data/Torch.f.0.forward.output.0.npy", view).ok());
  ASSERT_TRUE(
      WriteNpy(root_ / "rank0/dump_tensor_data/Torch.f.0.forward.input.0.npy", in_view).ok());
  const std::string leaf_out = R"({"type": "torch.Tensor", "dtype": "torch.float32",
      "shape": [4], "Max": null, "Min": null, "data_name": "Torch.f.0.forward.output.0.npy"})";
  const std::string leaf_in = R"({"type": "torch.Tensor", "dtype": "torch.float32",
      "shape": [4], "Max": null, "Min": null, "data_name": "Torch.f.0.forward.input.0.npy"})";
  const std::string hostile = R"({"type": "torch.Tensor", "dtype": "torch.float32",
      "shape": [4], "Max": 1.0, "Min": 0.0, "data_name": "../../etc/passwd"})";
  WriteDump("rank0", Op("Torch.f.0.forward", leaf_in + "," + hostile, leaf_out), "tensor");
  auto report = ScanDump(root_);
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  EXPECT_EQ(report->tensor_files_read, 2);
  ASSERT_EQ(report->anomalies.size(), 1u);
  const AnomalyNode& n = report->anomalies[0];
  EXPECT_EQ(n.op_name, "Torch.f.0.forward");
  ASSERT_EQ(n.outputs.size(), 1u);
  EXPECT_TRUE(n.outputs[0].exact);
  EXPECT_EQ(n.outputs[0].nan_count, 1);
  EXPECT_EQ(n.outputs[0].zero_count, 1);
  EXPECT_EQ(n.inputs[0].max_abs, 3.0);
  EXPECT_EQ(n.inputs[0].min_nonzero_abs, 0.25);
  EXPECT_FALSE(n.inputs[1].exact);  // the path-traversal data_name was not followed
  ASSERT_FALSE(report->warnings.empty());
  EXPECT_NE(report->warnings[0].find("not a plain file name"), std::string::npos);
  // Headroom of the input from its file: 0.25 is the smallest non-zero |x|.
  bool seen = false;
  for (const auto& row : report->headroom) {
    if (row.tensor != "Torch.f.0.forward.input.0") continue;
    seen = true;
    EXPECT_TRUE(row.exact);
    EXPECT_EQ(row.min_nonzero_abs, 0.25);
  }
  EXPECT_TRUE(seen);
}

// Headroom rows view texts the report holds: a copy of the report keeps them after the scan's
// own report is gone (ASan reads freed memory otherwise).
TEST_F(ScanDumpTest, HeadroomTextsLiveAsLongAsACopyOfTheReport) {
  WriteDump("step0/rank1", Op("Functional.linear.0.forward",
                              Tensor("2.0", "-1.0", "torch.bfloat16"), Tensor("7e4", "-3.0")));
  std::optional<ScanReport> copy;
  {
    auto report = ScanDump(root_);
    ASSERT_TRUE(report.ok()) << report.error().ToString();
    copy = *report;
  }
  ASSERT_EQ(copy->headroom.size(), 2u);
  const HeadroomRow& in = copy->headroom[0];
  ASSERT_EQ(copy->headroom_units.size(), 1u);
  EXPECT_EQ(in.unit, 0u);
  EXPECT_EQ(copy->headroom_units[0].scope, "step0");
  EXPECT_EQ(copy->headroom_units[0].rank_folder, "rank1");
  EXPECT_EQ(in.tensor, "Functional.linear.0.forward.input.0");
  EXPECT_EQ(in.op_name, "Functional.linear.0.forward");
  EXPECT_EQ(in.layer, "Functional.linear");
  EXPECT_EQ(in.dtype, "torch.bfloat16");
  const HeadroomRow& out = copy->headroom[1];
  EXPECT_EQ(out.tensor, "Functional.linear.0.forward.output.0");
  EXPECT_EQ(out.op_name.data(), in.op_name.data());  // an entry's op stored once
  EXPECT_EQ(out.dtype, "torch.float32");
  EXPECT_TRUE(FitOf(out, DType::kF16).overflow);  // 7e4 > fp16's 65504
}

// A row's step and rank are its unit's: each (step, rank folder) with rows is one unit, in scan
// order, and its rows name it.
TEST_F(ScanDumpTest, HeadroomRowsNameTheStepAndRankTheyWereDumpedIn) {
  WriteDump("step0/rank0",
            Op("Functional.linear.0.forward", Tensor("2.0", "-1.0"), Tensor("2.5", "-1.0")));
  WriteDump("step0/rank1",
            Op("Functional.linear.0.forward", Tensor("3.0", "-1.0"), Tensor("3.5", "-1.0")));
  WriteDump("step1/rank0",
            Op("Functional.relu.0.forward", Tensor("4.0", "-1.0"), Tensor("5.0", "-1.0")));
  auto report = ScanDump(root_);
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  ASSERT_EQ(report->headroom_units.size(), 3u);
  ASSERT_EQ(report->headroom.size(), 6u);
  const std::vector<std::tuple<std::string, int64_t, std::string, int64_t>> want = {
      {"step0", 0, "rank0", 0}, {"step0", 0, "rank1", 1}, {"step1", 1, "rank0", 0}};
  for (size_t u = 0; u < want.size(); ++u) {
    const HeadroomUnit& unit = report->headroom_units[u];
    EXPECT_EQ(std::tie(unit.scope, unit.step, unit.rank_folder, unit.rank), want[u]) << u;
  }
  const std::vector<uint32_t> units = {0, 0, 1, 1, 2, 2};
  const std::vector<double> max_abs = {2, 2.5, 3, 3.5, 4, 5};  // input, output of each op
  for (size_t i = 0; i < units.size(); ++i) {
    EXPECT_EQ(report->headroom[i].unit, units[i]) << i;
    EXPECT_EQ(report->headroom[i].max_abs, max_abs[i]) << i;
  }
}

TEST_F(ScanDumpTest, Md5ModeComparesWeightsByChecksum) {
  auto module = [](const std::string& md5_w, const std::string& md5_b) {
    return R"("Module.fc.Linear.forward.0": {"input_args": [], "input_kwargs": {}, "output": [],
        "parameters": {"weight": {"type": "torch.Tensor", "dtype": "torch.float32",
        "shape": [2, 2], "requires_grad": true, "md5": ")" +
           md5_w + R"("}, "bias": {"type": "torch.Tensor", "dtype": "torch.float32",
        "shape": [2], "requires_grad": true, "md5": ")" +
           md5_b + R"("}}})";
  };
  WriteDump("step0/rank0", module("0a0a0a0a", "1b1b1b1b"), "statistics");
  WriteDump("step1/rank0", module("0a0a0a0a", "2c2c2c2c"), "statistics");
  auto report = ScanDump(root_);
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  EXPECT_TRUE(report->md5_mode);
  ASSERT_EQ(report->hits.size(), 1u);  // the weight kept its checksum, the bias did not
  EXPECT_EQ(report->hits[0].watchpoint, Watchpoint::kWeightNotChanged);
  EXPECT_EQ(report->hits[0].tensor, "Module.fc.Linear.weight");
  EXPECT_EQ(report->hits[0].step, 1);
  EXPECT_TRUE(report->hits[0].exact);
  EXPECT_TRUE(report->headroom.empty());  // no statistics, no headroom
}

TEST_F(ScanDumpTest, WritesJsonCsvAndMsprobesAnomalyFile) {
  WriteDump("step0/rank0", Op("Torch.exp.0.forward", Tensor("100.0", "1.5"),
                              Tensor("Infinity", "4.4816890703380645")));
  auto report = ScanDump(root_);
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  auto files = WriteScanReport(*report, root_ / "out", "20250101000000");
  ASSERT_TRUE(files.ok()) << files.error().ToString();
  for (const fs::path& p : {files->json, files->anomalies_csv, files->watchpoints_csv,
                            files->headroom_csv, files->anomaly_analyze}) {
    EXPECT_TRUE(fs::is_regular_file(p)) << p;
  }
  EXPECT_EQ(files->anomaly_analyze.filename(), "anomaly_analyze_20250101000000.json");
  std::stringstream text;
  text << std::ifstream(files->anomaly_analyze).rdbuf();
  // The entry's data is copied as written: the digits and the bare Infinity token.
  EXPECT_NE(text.str().find(R"("Min":4.4816890703380645)"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find(R"("Max":Infinity)"), std::string::npos);
  EXPECT_NE(text.str().find(R"("rank_0")"), std::string::npos);
  std::stringstream csv;
  csv << std::ifstream(files->anomalies_csv).rdbuf();
  EXPECT_EQ(csv.str().rfind("Order,Kind,Step,Rank,Rank Folder,Op Name", 0), 0u);
  EXPECT_NE(csv.str().find("Torch.exp.0.forward"), std::string::npos);
}

// A report assembled by hand, whose row names a unit the report does not hold, is written with
// that row's step and rank unknown (not read out of bounds).
TEST_F(ScanDumpTest, ARowWhoseUnitIsMissingIsWrittenWithoutStepOrRank) {
  ScanReport report;
  HeadroomRow row;
  row.unit = 5;
  row.tensor = "Functional.relu.0.forward.output.0";
  row.op_name = "Functional.relu.0.forward";
  row.layer = "Functional.relu";
  row.dtype = "torch.float32";
  row.max_abs = 7e4;
  row.min_nonzero_abs = 1.0;
  report.headroom.push_back(row);
  EXPECT_EQ(report.UnitOf(row).step, -1);
  EXPECT_EQ(report.UnitOf(row).rank_folder, "");
  auto files = WriteScanReport(report, root_ / "out", "1");
  ASSERT_TRUE(files.ok()) << files.error().ToString();
  std::stringstream csv;
  csv << std::ifstream(files->headroom_csv).rdbuf();
  EXPECT_NE(csv.str().find("\n-1,0,,Functional.relu.0.forward,"), std::string::npos) << csv.str();
}

TEST_F(ScanDumpTest, CleanDumpWritesNoAnomalyFile) {
  WriteDump("rank0", Op("Torch.exp.0.forward", Tensor("1.0", "0.0"), Tensor("2.72", "1.0")));
  auto report = ScanDump(root_);
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  EXPECT_FALSE(report->findings());
  auto files = WriteScanReport(*report, root_ / "out", "1");
  ASSERT_TRUE(files.ok());
  EXPECT_TRUE(files->anomaly_analyze.empty());
}

// Enough rows that scan reserves its headroom rows from the first entries' density (past 1,024
// entries, 9 MB of rows): every row is there, in order, with its own figures.
TEST_F(ScanDumpTest, ALargeRankHasEveryHeadroomRow) {
  constexpr int kOps = 13000;  // 39,000 float tensors: 9 MB of headroom rows
  std::string data;
  for (int i = 0; i < kOps; ++i) {
    if (i > 0) data += ", ";
    const std::string max = std::to_string(i + 1);
    data += Op("Functional.op" + std::to_string(i) + ".0.forward",
               Tensor(max, "0.5") + ", " + Tensor("2.0", "-2.0", "torch.float16"),
               Tensor(max, "-" + max));
  }
  WriteDump("rank0", data);
  auto r = ScanDump(root_);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->headroom.size(), 3U * kOps);
  for (const size_t i : {size_t{0}, size_t{1}, size_t{kOps / 2}, size_t{kOps - 1}}) {
    const HeadroomRow& out = r->headroom[3 * i + 2];
    const std::string op = "Functional.op" + std::to_string(i) + ".0.forward";
    EXPECT_EQ(out.tensor, op + ".output.0");
    EXPECT_EQ(out.op_name, op);
    EXPECT_EQ(out.max_abs, static_cast<double>(i + 1));
    EXPECT_FALSE(FitOf(out, DType::kF16).overflow) << i;                  // fp16: up to 65504
    EXPECT_EQ(FitOf(out, DType::kF8E4M3FN).overflow, i + 1 > 1000) << i;  // fp8 e4m3: up to 448
    EXPECT_EQ(r->headroom[3 * i + 1].dtype, "torch.float16");
  }
}

std::vector<std::string> HeadroomTensors(const ScanReport& r) {
  std::vector<std::string> out;
  for (const HeadroomRow& row : r.headroom) out.emplace_back(row.tensor);
  return out;
}

std::vector<std::pair<Watchpoint, std::string>> HitsOf(const ScanReport& r) {
  std::vector<std::pair<Watchpoint, std::string>> out;
  for (const WatchpointHit& h : r.hits) out.emplace_back(h.watchpoint, h.tensor);
  return out;
}

// Modules come before the first API in a mix dump (a module's record is written when its
// forward ends): their inputs and outputs repeat the APIs' tensors and get no headroom row and
// no watchpoint, as if the APIs had been known from the start. A dump of modules alone keeps them.
TEST_F(ScanDumpTest, ModuleRowsRepeatTheirApisOnlyInADumpThatHoldsApis) {
  const std::string modules =
      R"("Module.fc.Linear.forward.0": {"input_args": [)" + Tensor("20000.0", "0.5") +
      R"(], "input_kwargs": {}, "output": [)" + Tensor("3.0", "1.0") +
      R"(], "parameters": {"weight": )" + Tensor("30000.0", "-1.0") + "}}, " +
      Op("Module.act.ReLU.forward.0", Tensor("3.0", "1.0"), Tensor("1.0", "1.0"));
  WriteDump("l0/rank0", modules);
  WriteDump("mix/rank0",
            modules + ", " + Op("Torch.add.0.forward", Tensor("2.0", "1.0"), Tensor("4.0", "1.0")));
  auto l0 = ScanDump(root_ / "l0");
  ASSERT_TRUE(l0.ok()) << l0.error().ToString();
  EXPECT_EQ(
      HeadroomTensors(*l0),
      (std::vector<std::string>{
          "Module.fc.Linear.forward.0.input.0", "Module.fc.Linear.forward.0.parameters.weight",
          "Module.fc.Linear.forward.0.output.0", "Module.act.ReLU.forward.0.input.0",
          "Module.act.ReLU.forward.0.output.0"}));
  using W = Watchpoint;
  const std::vector<std::pair<W, std::string>> l0_hits = {
      {W::kTensorTooLarge, "Module.fc.Linear.forward.0.input.0"},
      {W::kTensorTooLarge, "Module.fc.Linear.forward.0.parameters.weight"},
      {W::kActivationRange, "Module.act.ReLU.forward.0.output.0"}};
  EXPECT_EQ(HitsOf(*l0), l0_hits);

  auto mix = ScanDump(root_ / "mix");
  ASSERT_TRUE(mix.ok()) << mix.error().ToString();
  EXPECT_EQ(
      HeadroomTensors(*mix),
      (std::vector<std::string>{"Module.fc.Linear.forward.0.parameters.weight",
                                "Torch.add.0.forward.input.0", "Torch.add.0.forward.output.0"}));
  const std::vector<std::pair<W, std::string>> mix_hits = {
      {W::kTensorTooLarge, "Module.fc.Linear.forward.0.parameters.weight"}};
  EXPECT_EQ(HitsOf(*mix), mix_hits);
  EXPECT_EQ(mix->tensors, 7);  // every tensor row is counted, repeats included
}

// An entry written twice: Python's json keeps its first position and its last value, and scan
// reads it so (the streamed read starts again from the whole file).
TEST_F(ScanDumpTest, ARepeatedEntryIsScannedWithItsLastValueInItsFirstPosition) {
  WriteDump("rank0",
            Op("Torch.log.0.forward", Tensor("1.0", "0.5"), Tensor("0.0", "-0.7")) + ", " +
                Op("Torch.add.0.forward", Tensor("2.0", "1.0"), Tensor("4.0", "1.0")) + ", " +
                Op("Torch.log.0.forward", Tensor("1.0", "0.0"), Tensor("0.0", "-Infinity")));
  auto r = ScanDump(root_);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->anomalies.size(), 1U);
  EXPECT_EQ(r->anomalies[0].op_name, "Torch.log.0.forward");
  EXPECT_EQ(r->anomalies[0].entry_index, 0U);
  ASSERT_EQ(r->anomalies[0].outputs.size(), 1U);
  EXPECT_TRUE(r->anomalies[0].outputs[0].nonfinite);
  EXPECT_EQ(
      HeadroomTensors(*r),
      (std::vector<std::string>{"Torch.log.0.forward.input.0", "Torch.log.0.forward.output.0",
                                "Torch.add.0.forward.input.0", "Torch.add.0.forward.output.0"}));
  EXPECT_TRUE(r->headroom[1].nonfinite);
  EXPECT_EQ(r->tensors, 4);
}

TEST_F(ScanDumpTest, Errors) {
  EXPECT_EQ(ScanDump(root_ / "nope").error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(ScanDump(root_).error().code(), ErrorCode::kNotFound);  // empty folder
  Write("rank0/dump.json", R"({"task": "statistics", "data": {"Torch.a.0.forward": [)");
  const Status s = ScanDump(root_).error();
  EXPECT_EQ(s.code(), ErrorCode::kCorrupt);
  EXPECT_NE(s.message().find("dump.json"), std::string::npos);
  ScanOptions bad;
  bad.targets = {DType::kF32};
  EXPECT_EQ(ScanDump(root_, bad).error().code(), ErrorCode::kInvalidArgument);
  ScanOptions twice;
  twice.targets = {DType::kF16, DType::kBF16, DType::kF16};
  const Status named_twice = ScanDump(root_, twice).error();
  EXPECT_EQ(named_twice.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(named_twice.message().find("fp16 is named twice"), std::string::npos)
      << named_twice.message();
  ScanOptions negative;
  negative.thresholds.grad_norm_max = -1;
  EXPECT_EQ(ScanDump(root_, negative).error().code(), ErrorCode::kInvalidArgument);
}

TEST(ScanEntriesTest, ExtractsChosenEntriesVerbatim) {
  const std::string json = R"({"task": "x", "data": {
      "A": {"v": [1.10, NaN, -Infinity, {"k": "s"}], "n": 12345678901234567890},
      "B": {"v": 2},
      "A": {"v": [3.0e-5]}}, "other": {"A": 1}})";
  auto out = detail::ExtractEntries(std::span<const char>(json.data(), json.size()), {"A"});
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ(out->at("A"), R"({"v":[3.0e-5]})");  // the repeated entry: the last one wins
  auto first =
      detail::ExtractEntries(std::span<const char>(json.data(), json.find("\"B\"")), {"A"});
  EXPECT_FALSE(first.ok());  // truncated JSON
  auto members = detail::ExtractMembers(
      R"({"input_args": [1.10, NaN], "output": [-Infinity], "x": 1})", {"input_args", "output"});
  ASSERT_TRUE(members.ok());
  EXPECT_EQ(members->at("input_args"), "[1.10,NaN]");
  EXPECT_EQ(members->at("output"), "[-Infinity]");
  EXPECT_EQ(members->count("x"), 0u);
}

TEST(ScanNamesTest, EntryRules) {
  using namespace detail;
  EXPECT_TRUE(IsModuleEntry("Module.fc1.Linear.forward.0"));
  EXPECT_TRUE(IsModuleEntry("Cell.dense.Dense.forward.0"));
  EXPECT_FALSE(IsModuleEntry("Functional.linear.0.forward"));
  EXPECT_TRUE(IsParametersGradEntry("Module.fc1.Linear.parameters_grad.0"));
  EXPECT_TRUE(IsParametersGradEntry("Module.fc1.Linear.parameters_grad"));
  EXPECT_TRUE(IsCommunicationEntry("Distributed.all_reduce.0.forward"));
  EXPECT_TRUE(IsCommunicationEntry("Distributed.isend.3.forward"));
  EXPECT_FALSE(IsCommunicationEntry("Distributed.barrier.0.forward"));
  EXPECT_FALSE(IsCommunicationEntry("Torch.all_reduce.0.forward"));
  EXPECT_TRUE(IsIgnoredEntry("Torch.empty.0.forward"));
  EXPECT_TRUE(IsIgnoredEntry("Tensor.new_empty.2.forward"));
  EXPECT_FALSE(IsIgnoredEntry("Torch.empty_like_thing.0.forward"));
  EXPECT_TRUE(IsBackwardEntry("Functional.relu.0.backward"));
  EXPECT_EQ(ModuleOfEntry("Module.layers.0.attn.Attention.forward.3"),
            "Module.layers.0.attn.Attention");
  EXPECT_EQ(ModuleOfEntry("Module.fc1.Linear.parameters_grad.0"), "Module.fc1.Linear");
  EXPECT_EQ(
      ParameterKey("Module.fc1.Linear.forward.0", "Module.fc1.Linear.forward.0.parameters.weight"),
      "Module.fc1.Linear.weight");
  EXPECT_EQ(LayerOf("Torch.exp.0.forward", {"Module.head.Head.forward.0"}), "Module.head.Head");
  EXPECT_EQ(LayerOf("Tensor.__mul__.3.forward", {}), "Tensor.__mul__");
  EXPECT_TRUE(IsActivationOp("Functional.gelu.0.forward"));
  EXPECT_TRUE(IsActivationOp("Module.act.GELU.forward.0"));
  EXPECT_FALSE(IsActivationOp("Functional.linear.0.forward"));
  EXPECT_TRUE(IsFloatDTypeText("torch.bfloat16"));
  EXPECT_TRUE(IsFloatDTypeText("Float16"));
  EXPECT_FALSE(IsFloatDTypeText("torch.int64"));
  EXPECT_TRUE(IsFloatDTypeText("mindspore.Float32"));
  EXPECT_TRUE(IsFloatDTypeText("TORCH.Half"));
  EXPECT_TRUE(IsFloatDTypeText("double"));
  EXPECT_FALSE(IsFloatDTypeText("halfway"));
  EXPECT_FALSE(IsFloatDTypeText("torch."));
  EXPECT_FALSE(IsFloatDTypeText(""));
  EXPECT_FALSE(IsFloatDTypeText("<class 'float'>"));
  EXPECT_EQ(ApiName("Functional.relu.0.forward"), "relu");
  EXPECT_EQ(ApiName("Tensor.__mul__"), "__mul__");
  EXPECT_EQ(ApiName("Torch."), "");
  EXPECT_EQ(ApiName("Torch"), "");
  EXPECT_TRUE(IsActivationOp("Functional.ReLU.0.forward"));
  EXPECT_FALSE(IsActivationOp("Functional.relu_x.0.forward"));
  EXPECT_FALSE(IsActivationOp("Functional"));
  EXPECT_FALSE(IsParametersGradEntry("Module.parameters_gradient.Linear.forward.0"));
  EXPECT_TRUE(IsParametersGradEntry("parameters_grad"));
  EXPECT_FALSE(IsBackwardEntry("Functional.backward_hook.0.forward"));
  EXPECT_TRUE(IsBackwardEntry("Module.fc.Linear.backward"));
  EXPECT_EQ(NumelOfShapeText("[2, 3, 4]"), 24);
  EXPECT_EQ(NumelOfShapeText("[]"), 1);
  EXPECT_FALSE(NumelOfShapeText("[4294967296, 4294967296, 4294967296]").has_value());
  EXPECT_FALSE(NumelOfShapeText("None").has_value());
}

}  // namespace
}  // namespace numprobe
