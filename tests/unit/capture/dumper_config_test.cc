// DumpConfig: msprobe's config.json keys, their validation and the keyword overrides.
#include <string>

#include <gtest/gtest.h>

#include "numprobe/dump_config.h"

namespace numprobe {
namespace {

void ExpectInvalid(const std::string& json, const std::string& phrase) {
  auto c = DumpConfig::Parse(json);
  ASSERT_FALSE(c.ok()) << json;
  EXPECT_EQ(c.error().code(), ErrorCode::kInvalidArgument) << json;
  EXPECT_NE(c.error().message().find(phrase), std::string::npos)
      << "message '" << c.error().message() << "' lacks '" << phrase << "'";
}

TEST(DumpConfigTest, ReadsTheFixtureConfigs) {
  for (const char* name :
       {"config_statistics_base.json", "config_tensor_bf16.json", "config_statistics_nan.json"}) {
    auto c = DumpConfig::Load(std::string(NUMPROBE_FIXTURES_DIR) + "/msprobe/" + name);
    ASSERT_TRUE(c.ok()) << name << ": " << c.error().ToString();
    EXPECT_EQ(c->level, DumpLevel::kMix);
    EXPECT_TRUE(c->ranks.empty());
    EXPECT_TRUE(c->steps.empty());
    EXPECT_TRUE(c->dump_forward && c->dump_backward && c->dump_input && c->dump_output);
    EXPECT_EQ(c->summary_mode, SummaryMode::kStatistics);
  }
  auto t =
      DumpConfig::Load(std::string(NUMPROBE_FIXTURES_DIR) + "/msprobe/config_tensor_base.json");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->task, DumpTask::kTensor);
  EXPECT_EQ(t->task_name(), "tensor");
  EXPECT_EQ(t->level_name(), "mix");
}

TEST(DumpConfigTest, StepAndRankListsTakeIntsStringsAndRanges) {
  auto c = DumpConfig::Parse(
      R"({"dump_path": "/tmp/x", "step": [7, "3", "4-6", 3], "rank": ["1-2", 0]})");
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_EQ(c->steps, (std::vector<int64_t>{3, 4, 5, 6, 7}));
  EXPECT_EQ(c->ranks, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_TRUE(c->StepSelected(5));
  EXPECT_FALSE(c->StepSelected(2));
  EXPECT_TRUE(c->RankSelected(2));
  EXPECT_FALSE(c->RankSelected(3));
  ExpectInvalid(R"({"dump_path": "x", "step": ["6-4"]})", "'step'");
  ExpectInvalid(R"({"dump_path": "x", "step": ["a"]})", "'step'");
  ExpectInvalid(R"({"dump_path": "x", "step": [2000000]})", "outside");
  ExpectInvalid(R"({"dump_path": "x", "step": 3})", "expected a list");
  ExpectInvalid(R"({"dump_path": "x", "rank": [-1]})", "'rank'");
}

TEST(DumpConfigTest, UnknownKeysAndBadValuesNameTheKey) {
  ExpectInvalid(R"({"dump_path": "x", "levle": "L1"})",
                "'levle': unknown key (did you mean 'level'?)");
  ExpectInvalid(R"({"dump_path": "x", "enable_dataloaders": true})",
                "(did you mean 'enable_dataloader'?)");
  ExpectInvalid(R"({"dump_path": "x", "tensor": {"diff_num": 2}})",
                "'tensor.diff_num': unknown key (did you mean 'diff_nums'?)");
  ExpectInvalid(R"({"dump_path": "x", "zzzzzz": 1})", "'zzzzzz': unknown key");
  ExpectInvalid(R"({"dump_path": "x", "statistics": {"scopes": []}})", "'statistics.scopes'");
  ExpectInvalid(R"({"dump_path": "x", "task": "free_benchmarks"})",
                "(did you mean 'free_benchmark'?)");
  ExpectInvalid(R"({"dump_path": "x", "enable_dataloader": "yes"})", "'enable_dataloader'");
  ExpectInvalid(R"({"dump_path": "x", "acc_check": {"white_list": "conv"}})",
                "'acc_check.white_list'");
  ExpectInvalid(R"({"dump_path": "x", "level": "L3"})", "'L3' is not one of L0, L1, mix, L2");
  ExpectInvalid(R"({"dump_path": "x", "async_dump": "yes"})", "'async_dump'");
  ExpectInvalid(R"({"task": "statistics"})", "'dump_path': is required");
  ExpectInvalid(R"({"dump_path": ""})", "'dump_path'");
  ExpectInvalid(R"({"dump_path": "x", "statistics": {"scope": ["a"]}})", "exactly two names");
  ExpectInvalid(R"({"dump_path": "x", "statistics": {"data_mode": ["sideways"]}})",
                "'statistics.data_mode'");
  ExpectInvalid(R"({"dump_path": "x", "statistics": {"summary_mode": "sha1"}})",
                "'statistics.summary_mode'");
  ExpectInvalid(
      R"({"dump_path": "x", "task": "overflow_check", "overflow_check": {"overflow_nums": 0}})",
      "'overflow_check.overflow_nums'");
  ExpectInvalid(R"({"dump_path": "x", "statistics": {"overflow_nums": 2}})",
                "'statistics.overflow_nums': unknown key");
  ExpectInvalid("[1, 2]", "JSON object");
  ExpectInvalid("{\"dump_path\": ", "not valid JSON");
}

// msprobe refuses these two; numprobe copies on a copy stream and writes at the step's end.
TEST(DumpConfigTest, AsyncDumpTakesATensorDumpWithoutListAndMd5) {
  for (const char* text : {R"({"dump_path": "x", "task": "tensor", "async_dump": true})",
                           R"({"dump_path": "x", "async_dump": true,
                               "statistics": {"summary_mode": "md5"}})"}) {
    auto c = DumpConfig::Parse(text);
    ASSERT_TRUE(c.ok()) << text << ": " << c.error().ToString();
    EXPECT_TRUE(c->async_dump);
  }
}

TEST(DumpConfigTest, SectionOfTheCurrentTaskApplies) {
  auto c = DumpConfig::Parse(R"({"dump_path": "p", "task": "tensor",
      "statistics": {"list": ["relu"]},
      "tensor": {"list": ["conv"], "data_mode": ["backward"], "file_format": "npy"}})");
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_EQ(c->list, std::vector<std::string>{"conv"});
  EXPECT_FALSE(c->dump_forward);
  EXPECT_TRUE(c->dump_backward);
  EXPECT_TRUE(c->dump_input && c->dump_output);  // naming only a direction keeps both sides
  EXPECT_EQ(c->file_format, TensorFileFormat::kNpy);
}

TEST(DumpConfigTest, OverrideSwitchesTaskSectionAndValidates) {
  auto c = DumpConfig::Parse(R"({"dump_path": "p", "statistics": {"list": ["relu"]},
      "overflow_check": {"overflow_nums": 3}})");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->list, std::vector<std::string>{"relu"});
  ASSERT_TRUE(c->Override("task", "\"overflow_check\"").ok());
  EXPECT_EQ(c->task, DumpTask::kOverflowCheck);
  EXPECT_EQ(c->overflow_nums, 3);
  EXPECT_TRUE(c->list.empty());
  ASSERT_TRUE(c->Override("step", "[\"1-2\"]").ok());
  EXPECT_EQ(c->steps, (std::vector<int64_t>{1, 2}));
  Status bad = c->Override("level", "\"L9\"");
  EXPECT_EQ(bad.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("'level'"), std::string::npos);
  EXPECT_EQ(c->level, DumpLevel::kL1);  // unchanged after a failed override
}

// One config per documented msprobe version and task (tests/fixtures/msprobe/configs/README.md)
// and msprobe v26's shipped config: each loads; what numprobe does not honour is a warning that
// names the key.
TEST(DumpConfigTest, EveryDocumentedVersionAndTaskLoads) {
  struct Expect {
    const char* file;
    DumpTask task;
    std::vector<const char*> warned;  // keys whose warning must be there
  };
  const std::vector<Expect> cases = {
      {"msprobe_v26_config.json", DumpTask::kStatistics, {}},
      {"msprobe_8x_statistics.json",
       DumpTask::kStatistics,
       {"'enable_dataloader'", "'acl_config'"}},
      {"msprobe_8x_tensor.json",
       DumpTask::kTensor,
       {"'tensor.backward_input'", "'tensor.online_run_ut'", "'tensor.port'"}},
      {"msprobe_8x_overflow_check.json", DumpTask::kOverflowCheck, {"'overflow_check.check_mode'"}},
      {"msprobe_8x_run_ut.json", DumpTask::kStatistics, {"'task'", "'run_ut.white_list'"}},
      {"msprobe_8x_free_benchmark.json",
       DumpTask::kStatistics,
       {"'task'", "'free_benchmark.pert_mode'"}},
      {"msprobe_8x_grad_probe.json", DumpTask::kStatistics, {"'task'", "'grad_probe.bounds'"}},
      {"msprobe_v26_statistics.json",
       DumpTask::kStatistics,
       {"'dump_enable'", "'statistics.slice'", "'statistics.device'"}},
      {"msprobe_v26_tensor.json", DumpTask::kTensor, {"'dump_enable'", "'tensor.slice'"}},
      {"msprobe_v26_acc_check.json", DumpTask::kStatistics, {"'task'", "'acc_check.white_list'"}},
      {"msprobe_v26_nan_check.json", DumpTask::kOverflowCheck, {"'task'"}},
      {"msprobe_v26_structure.json", DumpTask::kStatistics, {"'task'"}},
      {"msprobe_v26_exception_dump.json", DumpTask::kStatistics, {"'task'"}},
      {"msprobe_v26_overflow_check.json",
       DumpTask::kOverflowCheck,
       {"'overflow_check.check_mode'"}},
  };
  for (const Expect& e : cases) {
    auto c = DumpConfig::Load(std::string(NUMPROBE_FIXTURES_DIR) + "/msprobe/configs/" + e.file);
    ASSERT_TRUE(c.ok()) << e.file << ": " << c.error().ToString();
    EXPECT_EQ(c->task, e.task) << e.file;
    for (const char* key : e.warned) {
      bool found = false;
      for (const std::string& w : c->warnings) found = found || w.find(key) != std::string::npos;
      EXPECT_TRUE(found) << e.file << ": no warning for " << key;
    }
    for (const std::string& w : c->warnings) {
      EXPECT_EQ(w.find('\n'), std::string::npos) << "one line each: " << w;
      EXPECT_NE(w.find("numprobe"), std::string::npos) << "says what numprobe does: " << w;
    }
    if (e.warned.empty()) {
      EXPECT_TRUE(c->warnings.empty()) << e.file << ": " << c->warnings[0];
    }
  }
  // The honoured keys of those versions keep their meaning.
  auto v8 = DumpConfig::Load(std::string(NUMPROBE_FIXTURES_DIR) +
                             "/msprobe/configs/msprobe_8x_statistics.json");
  ASSERT_TRUE(v8.ok());
  EXPECT_EQ(v8->seed, 1234);
  EXPECT_EQ(v8->steps, (std::vector<int64_t>{0, 1, 2}));
  auto nan = DumpConfig::Load(std::string(NUMPROBE_FIXTURES_DIR) +
                              "/msprobe/configs/msprobe_v26_nan_check.json");
  ASSERT_TRUE(nan.ok());
  EXPECT_EQ(nan->overflow_nums, -1);
  EXPECT_EQ(nan->requested_task, "nan_check");
  EXPECT_EQ(nan->task_name(), "overflow_check");
  // bench_path and diff_nums are honoured (an incremental dump: docs/capture.md).
  auto tensor = DumpConfig::Load(std::string(NUMPROBE_FIXTURES_DIR) +
                                 "/msprobe/configs/msprobe_v26_tensor.json");
  ASSERT_TRUE(tensor.ok());
  EXPECT_EQ(tensor->bench_path, "./bench_dump_path");
  EXPECT_EQ(tensor->diff_nums, 5);
  EXPECT_FALSE(tensor->stop_at_first);
}

TEST(DumpConfigTest, IncrementalKeysAreValidatedNamingTheKey) {
  auto ok = DumpConfig::Parse(
      R"({"dump_path": "p", "task": "statistics", "statistics": {"bench_path": "g",
          "diff_nums": -1, "stop_at_first": true}})");
  ASSERT_TRUE(ok.ok()) << ok.error().ToString();
  EXPECT_EQ(ok->bench_path, "g");
  EXPECT_EQ(ok->diff_nums, -1);
  EXPECT_TRUE(ok->stop_at_first);
  EXPECT_TRUE(ok->warnings.empty());
  const std::pair<const char*, const char*> bad[] = {
      {R"({"dump_path": "p", "task": "tensor", "tensor": {"bench_path": ""}})",
       "'tensor.bench_path'"},
      {R"({"dump_path": "p", "task": "tensor", "tensor": {"diff_nums": 0}})", "'tensor.diff_nums'"},
      {R"({"dump_path": "p", "task": "tensor", "tensor": {"stop_at_first": 1}})",
       "'tensor.stop_at_first'"},
      {R"({"dump_path": "p", "task": "statistics", "async_dump": true,
           "statistics": {"bench_path": "g"}})",
       "'bench_path'"},
  };
  for (const auto& [text, key] : bad) {
    auto c = DumpConfig::Parse(text);
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_NE(c.error().message().find(key), std::string::npos) << c.error().message();
  }
  // The closed-loop dialect's dump section takes the same keys.
  auto loop = DumpConfig::Parse(
      R"({"dump": {"dump_path": "p", "dump_mode": "tensor", "bench_path": "g", "diff_nums": 3}})");
  ASSERT_TRUE(loop.ok()) << loop.error().ToString();
  EXPECT_EQ(loop->bench_path, "g");
  EXPECT_EQ(loop->diff_nums, 3);
}

TEST(DumpConfigTest, XorAndBinAreReadAsNumprobesNearestWithAWarning) {
  auto c = DumpConfig::Parse(
      R"({"dump_path": "p", "task": "tensor", "tensor": {"summary_mode": "xor",
          "file_format": "bin"}})");
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_EQ(c->summary_mode, SummaryMode::kMd5);
  EXPECT_EQ(c->file_format, TensorFileFormat::kNpy);
  ASSERT_EQ(c->warnings.size(), 2u);
  EXPECT_NE(c->warnings[0].find("'tensor.summary_mode': xor"), std::string::npos);
  // Keys of a section that is not in force are validated, not warned about.
  auto quiet = DumpConfig::Parse(
      R"({"dump_path": "p", "acc_check": {"white_list": [], "error_data_path": "./"}})");
  ASSERT_TRUE(quiet.ok());
  EXPECT_TRUE(quiet->warnings.empty());
}

TEST(DumpConfigTest, MindSporeDumpConfigHasTheSameMeaning) {
  auto c = DumpConfig::Load(std::string(NUMPROBE_FIXTURES_DIR) +
                            "/msprobe/configs/mindspore_dump_config.json");
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_EQ(c->dump_path, "/tmp/ms_dump");
  EXPECT_EQ(c->steps, (std::vector<int64_t>{0, 5, 6, 7, 8}));
  EXPECT_EQ(c->task, DumpTask::kStatistics);  // saved_data "statistic"
  EXPECT_EQ(c->precision, StatsPrecision::kHigh);
  EXPECT_TRUE(c->dump_input && c->dump_output);
  bool net_name = false;
  for (const std::string& w : c->warnings) {
    net_name = net_name || w.find("'common_dump_settings.net_name'") != std::string::npos;
  }
  EXPECT_TRUE(net_name);
  auto o = DumpConfig::Load(std::string(NUMPROBE_FIXTURES_DIR) +
                            "/msprobe/configs/mindspore_dump_config_overflow.json");
  ASSERT_TRUE(o.ok()) << o.error().ToString();
  EXPECT_EQ(o->task, DumpTask::kOverflowCheck);  // op_debug_mode 3
  EXPECT_EQ(o->overflow_nums, -1);               // overflow_number 0 = unlimited
  EXPECT_TRUE(o->steps.empty());                 // "all"
  EXPECT_EQ(o->list, (std::vector<std::string>{"Default/Conv-op12", "relu"}));
  // input_output 2 = outputs only; the PrecisionDebugger overrides still work on it.
  auto out = DumpConfig::Parse(
      R"({"common_dump_settings": {"path": "/p", "iteration": "3", "input_output": 2,
          "saved_data": "tensor"}})");
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_FALSE(out->dump_input);
  EXPECT_TRUE(out->dump_output);
  EXPECT_EQ(out->task, DumpTask::kTensor);
  ASSERT_TRUE(out->Override("level", "\"mix\"").ok());
  EXPECT_EQ(out->level, DumpLevel::kMix);
  EXPECT_FALSE(out->dump_input);
  EXPECT_EQ(out->steps, (std::vector<int64_t>{3}));
  ExpectInvalid(R"({"common_dump_settings": {"path": "/p", "iteration": "3|x"}})",
                "'common_dump_settings.iteration'");
  ExpectInvalid(R"({"common_dump_settings": {"path": "/p", "kernel": []}})",
                "(did you mean 'kernels'?)");
  ExpectInvalid(R"({"common_dump_settings": {"path": "/p", "input_output": 5}})",
                "'common_dump_settings.input_output'");
}

TEST(DumpConfigTest, MissingFileIsNotFound) {
  auto c = DumpConfig::Load("/nonexistent/config.json");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace numprobe
