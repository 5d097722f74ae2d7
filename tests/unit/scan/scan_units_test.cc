// ScanDump's parts (scan_units.h): assembling the RankScans of every unit, each encoded and
// decoded as it travels between MPI processes, gives ScanDump's report and files byte for byte;
// the codec is exact (NaN, Inf, -0.0) and refuses bytes it did not write.
#include "scan/scan_units.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/scan.h"

#include "testing/dump_builder.h"
#include "testing/temp_dir.h"

namespace numprobe::detail {
namespace {

namespace fs = std::filesystem;

std::string Tensor(const std::string& max, const std::string& min) {
  return R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 2], "Max": )" + max +
         R"(, "Min": )" + min + R"(, "Mean": 0.5, "Norm": 1.0, "requires_grad": false})";
}

std::string Op(const std::string& name, const std::string& in, const std::string& out,
               const std::string& kwargs = "{}") {
  return "\"" + name + R"(": {"input_args": [)" + in + R"(], "input_kwargs": )" + kwargs +
         R"(, "output": [)" + out + "]}";
}

std::string Param(const std::string& module, const std::string& max) {
  return "\"Module." + module + R"(.Linear.forward.0": {"input_args": [)" + Tensor("1.0", "-1.0") +
         R"(], "input_kwargs": {}, "output": [)" + Tensor("2.0", "-2.0") +
         R"(], "parameters": {"weight": )" + Tensor(max, "-0.5") + "}}";
}

const std::string kGroup = R"({"group": {"type": "torch.ProcessGroup", "group_ranks": [0, 1, 2]}})";

std::map<std::string, std::string> FilesOf(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    out[e.path().filename().string()] = text.str();
  }
  return out;
}

class ScanUnitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string ok = Tensor("1.0", "-1.0");
    const std::string nan = Tensor("NaN", "NaN");
    const std::string huge = Tensor("1e6", "-1e6");
    for (int step = 0; step < 2; ++step) {
      for (int rank = 0; rank < 3; ++rank) {
        std::string data = Param("fc", step == 0 ? "0.5" : "0.9") + "," +
                           Op("Functional.relu.0.forward", ok, rank == 1 ? huge : ok) + ",";
        // Rank 2 makes NaN in step 1 before the all_reduce that carries it to everyone; the
        // activation range warning (needs tensor files) fires once, on the first rank.
        data += Op("Tensor.__mul__.0.forward", ok, step == 1 && rank == 2 ? nan : ok) + ",";
        data += Op("Distributed.all_reduce.0.forward", step == 1 && rank == 2 ? nan : ok,
                   step == 1 ? nan : ok, kGroup);
        test::WriteDump(root_ / Named("step", step) / Named("rank", rank),
                        {.task = "statistics", .level = "L1", .framework = "pytorch"}, {data});
      }
    }
    options_.thresholds.act_range = std::make_pair(0.0, 1.0);
    options_.thresholds.act_range_pct_lt = 50.0;
  }
  static std::string Named(const char* what, int n) { return what + std::to_string(n); }

  test::TempDir temp_{"numprobe_scan_units"};
  const fs::path root_ = temp_.path() / "dump";
  ScanOptions options_;
};

TEST_F(ScanUnitsTest, PlanListsEveryUnitInScanOrder) {
  auto plan = PlanScan(root_, options_);
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  ASSERT_EQ(plan->units.size(), 6u);
  EXPECT_EQ(plan->step_end, (std::vector<size_t>{3, 6}));
  EXPECT_EQ(plan->StepBegin(4), 3u);
  EXPECT_EQ(plan->units[4].scope, "step1");
  EXPECT_EQ(plan->units[4].rank, "rank1");
  EXPECT_EQ(PlanScan(temp_.path() / "nothing", options_).error().code(), ErrorCode::kNotFound);
}

TEST_F(ScanUnitsTest, AssembledFromDecodedUnitsEqualsScanDump) {
  auto direct = ScanDump(root_, options_);
  ASSERT_TRUE(direct.ok()) << direct.error().ToString();
  ASSERT_NE(direct->first_anomaly(), nullptr);
  EXPECT_EQ(direct->first_anomaly()->op_name, "Tensor.__mul__.0.forward");
  EXPECT_EQ(direct->first_anomaly()->rank_folder, "rank2");
  EXPECT_FALSE(direct->hits.empty());
  EXPECT_FALSE(direct->warnings.empty());

  auto plan = PlanScan(root_, options_);
  ASSERT_TRUE(plan.ok());
  ScanAssembler assembler(*plan, options_);
  size_t begin = 0;
  // Units scanned in reverse (as other processes would, in any order), assembled in plan order.
  std::vector<std::string> encoded(plan->units.size());
  for (size_t u = plan->units.size(); u-- > 0;) {
    auto rank = ScanUnit(*plan, u, options_);
    ASSERT_TRUE(rank.ok()) << rank.error().ToString();
    encoded[u] = EncodeRankScan(*rank);
  }
  for (const size_t end : plan->step_end) {
    std::vector<RankScan> step;
    for (size_t u = begin; u < end; ++u) {
      auto rank = DecodeRankScan(encoded[u]);
      ASSERT_TRUE(rank.ok()) << rank.error().ToString();
      EXPECT_EQ(EncodeRankScan(*rank), encoded[u]);  // exact both ways
      step.push_back(std::move(*rank));
    }
    assembler.AddStep(std::move(step));
    begin = end;
  }
  const ScanReport assembled = assembler.Finish();
  EXPECT_EQ(assembled.warnings, direct->warnings);
  ASSERT_TRUE(WriteScanReport(*direct, temp_.path() / "direct", "20261202000000").ok());
  ASSERT_TRUE(WriteScanReport(assembled, temp_.path() / "assembled", "20261202000000").ok());
  const auto a = FilesOf(temp_.path() / "direct");
  const auto b = FilesOf(temp_.path() / "assembled");
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, text] : a) EXPECT_EQ(b.at(name), text) << name;
}

TEST(RankScanCodec, ExactAndStrict) {
  RankScan r;
  r.scope = "step1";
  r.step = 1;
  r.rank_folder = "rank7";
  r.rank = 7;
  r.warnings = {"w1"};
  r.range_warning_at = 1;
  AnomalyNode node;
  node.op_name = "Functional.gelu.3.forward";
  node.time = -0.5;
  ScanTensor t;
  t.max = std::numeric_limits<double>::quiet_NaN();
  t.min = -std::numeric_limits<double>::infinity();
  t.mean = -0.0;
  t.nonfinite = true;
  node.outputs.push_back(t);
  r.births.push_back(node);
  r.birth_segment.push_back(2);
  CommNode comm;
  comm.op_name = "Distributed.all_reduce.0.forward";
  comm.peer = 3;
  comm.group = {0, 7};
  r.comm_nodes.push_back(comm);
  r.comm_anomalies.emplace_back(0, node);
  r.params["Module.fc.Linear.weight"] =
      ParamSnapshot{"Module.fc.Linear.forward.0", t, "abc", false};
  r.param_order.emplace_back("Module.fc.Linear.weight");

  const std::string bytes = EncodeRankScan(r);
  auto back = DecodeRankScan(bytes);
  ASSERT_TRUE(back.ok()) << back.error().ToString();
  EXPECT_EQ(EncodeRankScan(*back), bytes);
  EXPECT_TRUE(std::isnan(back->births[0].outputs[0].max));
  EXPECT_TRUE(std::signbit(back->births[0].outputs[0].mean));
  EXPECT_EQ(back->comm_nodes[0].peer, 3);
  EXPECT_EQ(back->params.at("Module.fc.Linear.weight").md5, "abc");
  EXPECT_FALSE(back->params.at("Module.fc.Linear.weight").trainable);

  // Every truncation, and trailing bytes, are refused.
  for (size_t n = 0; n < bytes.size(); n += 7) {
    EXPECT_FALSE(DecodeRankScan(std::string_view(bytes).substr(0, n)).ok()) << n;
  }
  EXPECT_FALSE(DecodeRankScan(bytes + "x").ok());
  // A count far beyond the bytes left is refused before anything is allocated.
  std::string huge = bytes;
  huge.replace(8, 8, std::string(8, '\xff'));  // the scope's length
  EXPECT_EQ(DecodeRankScan(huge).error().code(), ErrorCode::kCorrupt);
}

// A row's fit to a target is derived from its magnitudes, the same as scan's own FitOf, and a
// decoded row (no fits on the wire) gives the same fits as the row that was encoded.
TEST(RankScanCodec, DecodedHeadroomRowsGiveTheSameFits) {
  RankScan r;
  for (const auto& [max_abs, min_nz] : {std::pair{7e4, 1.0}, std::pair{1.0, 1e-9},
                                        std::pair{300.0, std::nan("")}, std::pair{0.0, 0.0}}) {
    HeadroomRow row;
    row.max_abs = max_abs;
    row.min_nonzero_abs = min_nz;
    r.headroom.push_back(row);
  }
  auto decoded = DecodeRankScan(EncodeRankScan(r));
  ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
  ASSERT_EQ(decoded->headroom.size(), r.headroom.size());
  for (size_t i = 0; i < r.headroom.size(); ++i) {
    for (DType target : kDefaultHeadroomTargets) {
      const TargetFit want = FitOf(target, r.headroom[i].max_abs, r.headroom[i].min_nonzero_abs);
      const TargetFit got = FitOf(decoded->headroom[i], target);
      EXPECT_EQ(got.overflow, want.overflow) << i;
      EXPECT_EQ(got.underflow, want.underflow) << i;
      EXPECT_EQ(got.subnormal, want.subnormal) << i;
      EXPECT_EQ(got.min_known, want.min_known) << i;
      EXPECT_EQ(std::isnan(got.headroom_log2), std::isnan(want.headroom_log2)) << i;
      if (!std::isnan(want.headroom_log2)) {
        EXPECT_EQ(got.headroom_log2, want.headroom_log2) << i;
      }
    }
  }
  EXPECT_TRUE(FitOf(decoded->headroom[0], DType::kF16).overflow);                   // 7e4 > 65504
  EXPECT_TRUE(FitOf(decoded->headroom[1], DType::kF16).underflow);                  // 1e-9 < 2^-25
  EXPECT_FALSE(FitOf(decoded->headroom[2], DType::kF16).min_known);                 // NaN: unknown
  EXPECT_TRUE(std::isnan(FitOf(decoded->headroom[3], DType::kF16).headroom_log2));  // all zero
}

// An encoding of an earlier version (headroom rows with fits, or with their unit) is refused, not
// misread.
TEST(RankScanCodec, RefusesThePreviousVersions) {
  std::string bytes = EncodeRankScan(RankScan{});
  ASSERT_TRUE(DecodeRankScan(bytes).ok());
  ASSERT_EQ(bytes[7], '3');
  for (const char earlier : {'1', '2'}) {
    bytes[7] = earlier;
    EXPECT_EQ(DecodeRankScan(bytes).error().code(), ErrorCode::kCorrupt) << earlier;
  }
}

}  // namespace
}  // namespace numprobe::detail
