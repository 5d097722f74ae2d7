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
  ExpectInvalid(R"({"dump_path": "x", "levle": "L1"})", "'levle': unknown key");
  ExpectInvalid(R"({"dump_path": "x", "statistics": {"scopes": []}})", "'statistics.scopes'");
  ExpectInvalid(R"({"dump_path": "x", "task": "free_benchmark"})", "'task'");
  ExpectInvalid(R"({"dump_path": "x", "level": "L3"})", "'L3' is not one of L0, L1, mix, L2");
  ExpectInvalid(R"({"dump_path": "x", "async_dump": "yes"})", "'async_dump'");
  ExpectInvalid(R"({"task": "statistics"})", "'dump_path': is required");
  ExpectInvalid(R"({"dump_path": ""})", "'dump_path'");
  ExpectInvalid(R"({"dump_path": "x", "statistics": {"scope": ["a"]}})", "exactly two names");
  ExpectInvalid(R"({"dump_path": "x", "statistics": {"data_mode": ["sideways"]}})",
                "'statistics.data_mode'");
  ExpectInvalid(R"({"dump_path": "x", "statistics": {"summary_mode": "xor"}})",
                "'statistics.summary_mode'");
  ExpectInvalid(
      R"({"dump_path": "x", "task": "overflow_check", "overflow_check": {"overflow_nums": 0}})",
      "'overflow_check.overflow_nums'");
  ExpectInvalid(R"({"dump_path": "x", "statistics": {"overflow_nums": 2}})",
                "'statistics.overflow_nums': unknown key");
  ExpectInvalid(R"({"dump_path": "x", "task": "tensor", "async_dump": true})", "needs tensor.list");
  ExpectInvalid(R"({"dump_path": "x", "async_dump": true, "statistics": {"summary_mode": "md5"}})",
                "md5");
  ExpectInvalid("[1, 2]", "JSON object");
  ExpectInvalid("{\"dump_path\": ", "not valid JSON");
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

TEST(DumpConfigTest, MissingFileIsNotFound) {
  auto c = DumpConfig::Load("/nonexistent/config.json");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace numprobe
