// casts.json, numprobe's side record of narrowing casts: what the Dumper writes (and only when it
// tracks casts), what the journal gives back after a crash, and malformed files rejected with a
// message that names the problem.
#include "numprobe/casts.h"

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/dumper.h"
#include "numprobe/float_convert.h"

#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

class CastsTest : public ::testing::Test {
 protected:
  std::unique_ptr<Dumper> Open() {
    auto config = DumpConfig::Parse(R"({"dump_path": ")" + root_.string() + R"(", "level": "L1"})");
    EXPECT_TRUE(config.ok()) << config.error().ToString();
    DumperOptions options;
    options.rank = 0;
    auto d = Dumper::Open(*config, options);
    EXPECT_TRUE(d.ok());
    return std::move(d).value();
  }

  test::TempDir dir_;
  const fs::path& root_ = dir_.path();
};

DumpValue Tensor(const void* data, DType dtype, std::vector<int64_t> shape) {
  TensorArg a;
  a.view = TensorView::Contiguous(data, dtype, std::move(shape));
  return DumpValue::Tensor(std::move(a));
}

TEST_F(CastsTest, TheDumperWritesEachNarrowingCastWithStatisticsPlaceAndStack) {
  const std::vector<float> x = {1.0F, -2.5F, 3.14159F};
  std::vector<uint16_t> y;
  for (const float v : x) y.push_back(F32ToBF16(v));
  auto d = Open();
  d->TrackCasts();
  ASSERT_TRUE(d->Start().ok());
  ASSERT_TRUE(d->RecordForward("Functional.relu.0.forward",
                               DumpValue::List({Tensor(x.data(), DType::kF32, {3})}),
                               DumpValue::Dict({}),
                               DumpValue::List({Tensor(x.data(), DType::kF32, {3})}))
                  .ok());
  ASSERT_TRUE(d->AddCast("Tensor.bfloat16.0.forward", Tensor(x.data(), DType::kF32, {3}),
                         Tensor(y.data(), DType::kBF16, {3}),
                         {"File /home/u/train.py, line 7, in f, \n y = x.bfloat16()"})
                  .ok());
  ASSERT_TRUE(d->Stop().ok());
  auto record = ReadCasts(d->rank_dir());
  ASSERT_TRUE(record.ok()) << record.error().ToString();
  ASSERT_TRUE(record->has_value());
  ASSERT_EQ((*record)->casts.size(), 1U);
  const CastNote& c = (*record)->casts[0];
  EXPECT_EQ(c.name, "Tensor.bfloat16.0.forward");
  EXPECT_EQ(c.entries_before, 1);  // after relu's entry
  EXPECT_EQ(c.input.dtype, "torch.float32");
  EXPECT_EQ(c.output.dtype, "torch.bfloat16");
  EXPECT_EQ(c.output.shape, std::vector<int64_t>{3});
  ASSERT_TRUE(c.input.stats[0].has_value());
  EXPECT_FLOAT_EQ(static_cast<float>(*c.input.stats[0]), 3.14159F);
  EXPECT_EQ(*c.output.stats[0], static_cast<double>(BF16ToF32(F32ToBF16(3.14159F))));
  EXPECT_EQ(*c.output.stats[1], -2.5);
  ASSERT_EQ(c.stack.size(), 1U);
  EXPECT_NE(c.stack[0].find("train.py, line 7"), std::string::npos);
  // dump.json is what msprobe writes: the cast is not an entry of it.
  EXPECT_EQ(test::ReadFile(d->rank_dir() / "dump.json").find("bfloat16.0"), std::string::npos);
}

TEST_F(CastsTest, NoCastsJsonUnlessTrackedAndAnEmptyOneWhenNothingNarrowed) {
  const std::vector<float> x = {1.0F};
  {
    auto d = Open();
    ASSERT_TRUE(d->Start().ok());
    ASSERT_TRUE(d->AddCast("Tensor.half.0.forward", Tensor(x.data(), DType::kF32, {1}),
                           Tensor(x.data(), DType::kF32, {1}), {})
                    .ok());
    ASSERT_TRUE(d->Stop().ok());
    EXPECT_FALSE(fs::exists(d->rank_dir() / std::string(kCastsFileName)));
    auto record = ReadCasts(d->rank_dir());
    ASSERT_TRUE(record.ok());
    EXPECT_FALSE(record->has_value());  // unknown, as for a dump msprobe wrote
    ASSERT_TRUE(d->Close().ok());
  }
  fs::remove_all(root_ / "step0");
  auto d = Open();
  d->TrackCasts();
  ASSERT_TRUE(d->Start().ok());
  ASSERT_TRUE(d->Stop().ok());
  auto record = ReadCasts(d->rank_dir());
  ASSERT_TRUE(record.ok());
  ASSERT_TRUE(record->has_value());
  EXPECT_TRUE((*record)->casts.empty());
}

TEST_F(CastsTest, ACastIsTwoTensors) {
  const std::vector<float> x = {1.0F};
  auto d = Open();
  d->TrackCasts();
  ASSERT_TRUE(d->Start().ok());
  const Status s =
      d->AddCast("Tensor.to.0.forward", Tensor(x.data(), DType::kF32, {1}), DumpValue::Int(3), {});
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("Tensor.to.0.forward"), std::string::npos);
}

TEST_F(CastsTest, ARunKilledBeforeStopKeepsItsCastsInTheJournal) {
  const std::vector<float> x = {1.0F, 2.0F};
  const std::vector<uint16_t> h = {F32ToF16(1.0F), F32ToF16(2.0F)};
  auto d = Open();
  d->TrackCasts();
  ASSERT_TRUE(d->Start().ok());
  ASSERT_TRUE(d->AddCast("Tensor.half.0.forward", Tensor(x.data(), DType::kF32, {2}),
                         Tensor(h.data(), DType::kF16, {2}), {})
                  .ok());
  // No Stop(): casts.json still holds the empty list written when the step opened, and the
  // journal has the cast.
  auto record = ReadCasts(d->rank_dir());
  ASSERT_TRUE(record.ok()) << record.error().ToString();
  ASSERT_TRUE(record->has_value());
  ASSERT_EQ((*record)->casts.size(), 1U);
  EXPECT_EQ((*record)->casts[0].output.dtype, "torch.float16");
}

TEST(CastsParseTest, MalformedFilesAreRejectedWithWhatIsWrong) {
  struct Case {
    const char* text;
    const char* phrase;
  };
  const Case cases[] = {
      {"[]", "not a JSON object"},
      {R"({"casts": []})", "no \"numprobe_casts\" version"},
      {R"({"numprobe_casts": 2, "casts": []})", "unknown \"numprobe_casts\" version 2"},
      {R"({"numprobe_casts": 1})", "no \"casts\" list"},
      {R"({"numprobe_casts": 1, "casts": [{"name": "a", "entries_before": -1}]})",
       "cast 0: no entries_before"},
      {R"({"numprobe_casts": 1, "casts": [{"name": "a", "entries_before": 0, "input": {}}]})",
       "cast 0: input has no dtype"},
      {R"({"numprobe_casts": 1, "casts": [{"name": "a", "entries_before": 0,
          "input": {"dtype": "torch.float32", "shape": [1.5]}}]})",
       "shape holds a non-integer"},
      {R"({"numprobe_casts": 1, "casts": [{"name": "a", "entries_before": 0,
          "input": {"dtype": "torch.float32"}, "output": {"dtype": "torch.float16"},
          "stack": [3]}]})",
       "a stack frame is not text"},
      {R"({"numprobe_casts": 1, "casts": [)", "offset"},
  };
  for (const Case& c : cases) {
    auto r = ParseCastsJson(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt) << c.text;
    EXPECT_NE(r.error().message().find(c.phrase), std::string::npos) << r.error().message();
  }
  auto ok = ParseCastsJson(R"({"numprobe_casts": 1, "casts": [{"name": "Tensor.to.0.forward",
      "entries_before": 4, "input": {"dtype": "torch.float32", "Max": 2, "Min": null},
      "output": {"dtype": "torch.float16", "Max": 2.0}}]})");
  ASSERT_TRUE(ok.ok()) << ok.error().ToString();
  ASSERT_EQ(ok->casts.size(), 1U);
  EXPECT_EQ(*ok->casts[0].input.stats[0], 2.0);
  EXPECT_FALSE(ok->casts[0].input.stats[1].has_value());
  EXPECT_TRUE(ok->casts[0].stack.empty());
}

}  // namespace
}  // namespace numprobe
