// The closed-loop config dialect (dump / overflow_check / compare / config_check): its keys, their
// mapping onto msprobe's, the errors for bad values, keyword overrides, and the Dumper's overflow
// check beside a dump (a checked step that is not dumped writes nothing).
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "numprobe/dump_config.h"
#include "numprobe/dumper.h"

#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

// The issue's example config.
constexpr const char* kIssueConfig = R"({
  "dump": {"dump_path": "./ms_dump", "dump_step": "0|1|5-8", "dump_mode": "tensor",
           "dump_layers": ["conv1", "fc1", "MatMul"], "dump_input_output": 1},
  "overflow_check": {"enable": true, "check_step": "all"},
  "compare": {"enable": true, "base_path": "./gpu_dump", "metrics": ["cosine", "mae", "relative"]},
  "config_check": {"enable": true, "base_config": "./gpu_config.json"}
})";

void ExpectInvalid(const std::string& json, const std::string& phrase) {
  auto c = DumpConfig::Parse(json);
  ASSERT_FALSE(c.ok()) << json;
  EXPECT_EQ(c.error().code(), ErrorCode::kInvalidArgument) << json;
  EXPECT_NE(c.error().message().find(phrase), std::string::npos)
      << "message '" << c.error().message() << "' lacks '" << phrase << "'";
}

std::string WithDump(const std::string& dump_members, const std::string& rest = "") {
  return R"({"dump": {"dump_path": "d")" + dump_members + "}" + rest + "}";
}

TEST(ClosedLoopConfigTest, ReadsTheIssueExample) {
  auto c = DumpConfig::Parse(kIssueConfig);
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_TRUE(c->closed_loop_dialect);
  EXPECT_EQ(c->dump_path, "./ms_dump");
  EXPECT_EQ(c->steps, (std::vector<int64_t>{0, 1, 5, 6, 7, 8}));
  EXPECT_EQ(c->task, DumpTask::kTensor);
  EXPECT_EQ(c->summary_mode, SummaryMode::kStatistics);
  EXPECT_EQ(c->list, (std::vector<std::string>{"conv1", "fc1", "MatMul"}));
  EXPECT_TRUE(c->dump_input);
  EXPECT_FALSE(c->dump_output);
  EXPECT_EQ(c->level, DumpLevel::kL1);
  EXPECT_TRUE(c->loop.overflow_check);
  EXPECT_TRUE(c->loop.check_steps.empty());  // "all"
  EXPECT_TRUE(c->loop.compare);
  EXPECT_EQ(c->loop.compare_base, "./gpu_dump");
  EXPECT_EQ(c->loop.metrics, (std::vector<std::string>{"cosine", "mae", "relative"}));
  EXPECT_TRUE(c->loop.config_check);
  EXPECT_EQ(c->loop.config_base, "./gpu_config.json");
  EXPECT_TRUE(c->warnings.empty());
}

TEST(ClosedLoopConfigTest, DumpModeAndInputOutputMapOntoMsprobesKeys) {
  auto md5 = DumpConfig::Parse(WithDump(R"(, "dump_mode": "md5")"));
  ASSERT_TRUE(md5.ok()) << md5.error().ToString();
  EXPECT_EQ(md5->task, DumpTask::kStatistics);
  EXPECT_EQ(md5->summary_mode, SummaryMode::kMd5);
  auto stats =
      DumpConfig::Parse(WithDump(R"(, "dump_mode": "statistics", "dump_input_output": 2)"));
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->task, DumpTask::kStatistics);
  EXPECT_FALSE(stats->dump_input);
  EXPECT_TRUE(stats->dump_output);
  auto both = DumpConfig::Parse(WithDump(R"(, "dump_input_output": 0, "level": "mix")"));
  ASSERT_TRUE(both.ok());
  EXPECT_TRUE(both->dump_input && both->dump_output);
  EXPECT_EQ(both->level, DumpLevel::kMix);
  // Defaults: statistics, every step, L1, both sides, the three metrics the dialect's users know,
  // nothing of the loop enabled.
  auto plain = DumpConfig::Parse(WithDump(""));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->task, DumpTask::kStatistics);
  EXPECT_TRUE(plain->steps.empty());
  EXPECT_FALSE(plain->loop.overflow_check || plain->loop.compare || plain->loop.config_check);
  EXPECT_EQ(plain->loop.metrics, (std::vector<std::string>{"cosine", "mae", "relative"}));
}

TEST(ClosedLoopConfigTest, StepsTakeBarsRangesAllAndMsprobeLists) {
  auto all = DumpConfig::Parse(WithDump(
      R"(, "dump_step": "all")", R"(, "overflow_check": {"enable": true, "check_step": "2|4-5"})"));
  ASSERT_TRUE(all.ok()) << all.error().ToString();
  EXPECT_TRUE(all->steps.empty());
  EXPECT_EQ(all->loop.check_steps, (std::vector<int64_t>{2, 4, 5}));
  auto list = DumpConfig::Parse(WithDump(R"(, "dump_step": [3, "0-1"])"));
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->steps, (std::vector<int64_t>{0, 1, 3}));
  auto one = DumpConfig::Parse(WithDump(R"(, "dump_step": 4)"));
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->steps, (std::vector<int64_t>{4}));
  ExpectInvalid(WithDump(R"(, "dump_step": "0|x")"), "config key 'dump.dump_step': 'x'");
  ExpectInvalid(WithDump(R"(, "dump_step": "8-5")"), "start after its end");
  ExpectInvalid(WithDump(R"(, "dump_step": "0||1")"), "'dump.dump_step'");
  ExpectInvalid(WithDump(R"(, "dump_step": true)"), "expected \"all\"");
  ExpectInvalid(WithDump("", R"(, "overflow_check": {"enable": true, "check_step": "-1"})"),
                "'overflow_check.check_step'");
}

TEST(ClosedLoopConfigTest, BadValuesAndUnknownKeysNameTheKey) {
  ExpectInvalid(WithDump(R"(, "dump_mode": "tensors")"),
                "config key 'dump.dump_mode': 'tensors' is not one of tensor, statistics, md5");
  ExpectInvalid(WithDump(R"(, "dump_input_output": 3)"),
                "'dump.dump_input_output': must be 0 (both), 1 (inputs) or 2 (outputs)");
  ExpectInvalid(WithDump(R"(, "dump_input_output": "1")"), "expected an integer");
  ExpectInvalid(WithDump(R"(, "dump_layers": "conv1")"), "'dump.dump_layers': expected a list");
  ExpectInvalid(WithDump(R"(, "dump_layers": [""])"), "contains an empty name");
  ExpectInvalid(WithDump(R"(, "dump_stpe": "0")"),
                "'dump.dump_stpe': unknown key (did you mean 'dump_step'?)");
  ExpectInvalid(WithDump("", R"(, "compare": {"enable": true, "base": "g"})"),
                "'compare.base': unknown key");
  ExpectInvalid(WithDump("", R"(, "compare": {"enable": "yes", "base_path": "g"})"),
                "'compare.enable': expected true or false");
  ExpectInvalid(WithDump("", R"(, "compare": {"enable": true})"),
                "'compare.base_path': is required when compare.enable is true");
  ExpectInvalid(
      WithDump("", R"(, "compare": {"enable": true, "base_path": "g", "metrics": ["cosin"]})"),
      "'compare.metrics': 'cosin' is not a metric (did you mean 'cosine'?)");
  ExpectInvalid(WithDump("", R"(, "config_check": {"enable": true})"),
                "'config_check.base_config': is required");
  ExpectInvalid(WithDump("", R"(, "overflow_check": {"enable": 1})"),
                "'overflow_check.enable': expected true or false");
  // An msprobe key among the dialect's sections: the dialect is named in the error.
  ExpectInvalid(WithDump("", R"(, "task": "tensor")"), "closed-loop config");
  ExpectInvalid(WithDump("", R"(, "task": "tensor")"), "'task': unknown key");
  ExpectInvalid(R"({"compare": {"enable": false}})", "config key 'dump': is required");
  ExpectInvalid(R"({"dump": {"dump_mode": "tensor"}})", "'dump.dump_path': is required");
}

TEST(ClosedLoopConfigTest, EveryNumprobeMetricIsAccepted) {
  auto c = DumpConfig::Parse(WithDump(
      "", R"(, "compare": {"enable": true, "base_path": "g", "metrics": ["euclidean", "rmse",
          "sqnr", "max_ulp", "allclose_ratio", "max_diff", "norm_relative_err", "rel_error"]})"));
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_EQ(c->loop.metrics.size(), 8u);
}

TEST(ClosedLoopConfigTest, MsprobesOverflowSectionStaysMsprobes) {
  // msprobe's overflow_check section (overflow_nums) is not the dialect's.
  auto c = DumpConfig::Parse(
      R"({"task": "overflow_check", "dump_path": "d", "overflow_check": {"overflow_nums": 2}})");
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_FALSE(c->closed_loop_dialect);
  EXPECT_EQ(c->overflow_nums, 2);
}

TEST(ClosedLoopConfigTest, OverridesKeepTheLoop) {
  auto c = DumpConfig::Parse(kIssueConfig);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c->Override("dump_path", R"("/tmp/elsewhere")").ok());
  ASSERT_TRUE(c->Override("level", R"("mix")").ok());
  EXPECT_EQ(c->dump_path, "/tmp/elsewhere");
  EXPECT_EQ(c->level, DumpLevel::kMix);
  EXPECT_EQ(c->task, DumpTask::kTensor);
  EXPECT_EQ(c->list, (std::vector<std::string>{"conv1", "fc1", "MatMul"}));
  EXPECT_EQ(c->steps, (std::vector<int64_t>{0, 1, 5, 6, 7, 8}));
  EXPECT_FALSE(c->dump_output);
  EXPECT_TRUE(c->closed_loop_dialect);
  EXPECT_TRUE(c->loop.compare);
  EXPECT_EQ(c->loop.compare_base, "./gpu_dump");
}

TEST(ClosedLoopConfigTest, TensorFileKeysAreReadAndSurviveOverrides) {
  auto c = DumpConfig::Parse(
      WithDump(R"(, "dump_mode": "tensor", "dump_layout": "packed", "tensor_durability": "file")"));
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_EQ(c->dump_layout, DumpLayout::kPacked);
  EXPECT_EQ(c->tensor_durability, TensorDurability::kFile);
  // PrecisionDebugger's keyword overrides re-read the config: the two keys stay.
  ASSERT_TRUE(c->Override("level", R"("mix")").ok());
  EXPECT_EQ(c->level, DumpLevel::kMix);
  EXPECT_EQ(c->dump_layout, DumpLayout::kPacked);
  EXPECT_EQ(c->tensor_durability, TensorDurability::kFile);
  // Defaults when absent.
  auto plain = DumpConfig::Parse(WithDump(R"(, "dump_mode": "tensor")"));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->dump_layout, DumpLayout::kFiles);
  EXPECT_EQ(plain->tensor_durability, TensorDurability::kStep);
  ExpectInvalid(WithDump(R"(, "dump_layout": "zip")"), "'dump.dump_layout'");
  ExpectInvalid(WithDump(R"(, "tensor_durability": "always")"), "'dump.tensor_durability'");
}

DumpValue F32(const std::vector<float>& v) {
  TensorArg a;
  a.view = TensorView::Contiguous(v.data(), DType::kF32, {static_cast<int64_t>(v.size())});
  return DumpValue::Tensor(std::move(a));
}

TEST(ClosedLoopDumperTest, ReportsTheFirstNanAtACheckedStepThatIsNotDumped) {
  test::TempDir temp("numprobe_closed_loop");
  auto config = DumpConfig::Parse(
      R"({"dump": {"dump_path": ")" + temp.path().string() +
      R"(", "dump_step": "0"}, "overflow_check": {"enable": true, "check_step": "all"}})");
  ASSERT_TRUE(config.ok()) << config.error().ToString();
  DumperOptions options;
  options.rank = 0;
  auto d = Dumper::Open(*config, options);
  ASSERT_TRUE(d.ok());
  Dumper& dumper = **d;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Step 0 is dumped and finite: no report, every op kept.
  ASSERT_TRUE(dumper.Start().ok());
  std::vector<float> ones = {1, 1};
  ASSERT_TRUE(dumper
                  .RecordForward("Torch.add.0.forward", DumpValue::List({F32(ones)}),
                                 DumpValue::Dict({}), DumpValue::List({F32({2, 2})}))
                  .ok());
  EXPECT_FALSE(dumper.TakeOverflowReport().has_value());
  ASSERT_TRUE(dumper.Step().ok());
  // Step 1 is checked, not dumped: the NaN is reported with its step; no folder is written.
  ASSERT_TRUE(dumper.Start().ok());
  EXPECT_TRUE(dumper.active());
  ASSERT_TRUE(dumper
                  .RecordForward("Torch.add.0.forward", DumpValue::List({F32(ones)}),
                                 DumpValue::Dict({}), DumpValue::List({F32({2, 2})}))
                  .ok());
  ASSERT_TRUE(dumper
                  .RecordForward("Torch.log.0.forward", DumpValue::List({F32({-1, 1})}),
                                 DumpValue::Dict({}), DumpValue::List({F32({nan, 0})}))
                  .ok());
  auto report = dumper.TakeOverflowReport();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->name, "Torch.log.0.forward");
  EXPECT_EQ(report->step, 1);
  EXPECT_NE(report->report.find("(step 1, rank0)"), std::string::npos) << report->report;
  EXPECT_NE(report->report.find("Max=NaN"), std::string::npos) << report->report;
  ASSERT_TRUE(dumper.Step().ok());
  ASSERT_TRUE(dumper.Close().ok());
  EXPECT_TRUE(fs::exists(temp.path() / "step0" / "rank0" / "dump.json"));
  EXPECT_FALSE(fs::exists(temp.path() / "step1"));
}

TEST(ClosedLoopDumperTest, KeepsDumpingAfterTheFirstNan) {
  test::TempDir temp("numprobe_closed_loop");
  auto config = DumpConfig::Parse(R"({"dump": {"dump_path": ")" + temp.path().string() +
                                  R"("}, "overflow_check": {"enable": true}})");
  ASSERT_TRUE(config.ok()) << config.error().ToString();
  DumperOptions options;
  options.rank = 0;
  auto d = Dumper::Open(*config, options);
  ASSERT_TRUE(d.ok());
  Dumper& dumper = **d;
  const float inf = std::numeric_limits<float>::infinity();
  ASSERT_TRUE(dumper.Start().ok());
  for (const char* name : {"Torch.exp.0.forward", "Torch.exp.1.forward"}) {
    ASSERT_TRUE(dumper
                    .RecordForward(name, DumpValue::List({F32({100, 1})}), DumpValue::Dict({}),
                                   DumpValue::List({F32({inf, 2})}))
                    .ok());
  }
  auto report = dumper.TakeOverflowReport();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->name, "Torch.exp.0.forward");
  EXPECT_FALSE(dumper.TakeOverflowReport().has_value());  // the first one only
  EXPECT_TRUE(dumper.active());
  EXPECT_EQ(dumper.entry_count(), 2);
}

}  // namespace
}  // namespace numprobe
