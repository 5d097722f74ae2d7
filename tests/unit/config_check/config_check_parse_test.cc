// config-check collection: canonical values, hyperparameters from JSON, YAML, shell scripts and
// argv, secret masking, SHA-256, the snapshot's JSON form, and CollectSnapshot itself.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "numprobe/app/config_check.h"
#include "numprobe/npy.h"

#include "config_check/config_check_internal.h"
#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

using test::TempDir;

TEST(ConfigCheckParseTest, CanonicalNumbers) {
  using detail::CanonicalNumber;
  EXPECT_EQ(CanonicalNumber("1e-3"), "0.001");
  EXPECT_EQ(CanonicalNumber("0.001"), "0.001");
  EXPECT_EQ(CanonicalNumber("1.0"), "1");
  EXPECT_EQ(CanonicalNumber("+007"), "7");
  EXPECT_EQ(CanonicalNumber("-0"), "0");
  EXPECT_EQ(CanonicalNumber("-12"), "-12");
  EXPECT_EQ(CanonicalNumber("123456789012345678901234567890"), "123456789012345678901234567890");
  EXPECT_EQ(CanonicalNumber("1e-10"), "1e-10");
  EXPECT_FALSE(CanonicalNumber("1.2.3").has_value());
  EXPECT_FALSE(CanonicalNumber("v1").has_value());
  EXPECT_FALSE(CanonicalNumber("inf").has_value());
  EXPECT_FALSE(CanonicalNumber("-").has_value());
  EXPECT_FALSE(CanonicalNumber("").has_value());
}

TEST(ConfigCheckParseTest, JsonFlattensToDottedNames) {
  auto h = ParseJsonHyperparameters(
      R"({"optimizer": {"lr": 1e-3, "betas": [0.9, 0.999], "name": "adam"},
          "epochs": 10, "amp": true, "version": "1.10", "none": null,
          "layers": [{"dim": 4.0}, "x"]})");
  ASSERT_TRUE(h.ok()) << h.error().ToString();
  EXPECT_EQ(h->at("optimizer.lr"), "0.001");
  EXPECT_EQ(h->at("optimizer.betas"), "[0.9, 0.999]");
  EXPECT_EQ(h->at("optimizer.name"), "adam");
  EXPECT_EQ(h->at("epochs"), "10");
  EXPECT_EQ(h->at("amp"), "true");
  EXPECT_EQ(h->at("version"), "1.10");  // a string stays as written
  EXPECT_EQ(h->at("none"), "null");
  EXPECT_EQ(h->at("layers"), R"([{"dim": 4}, "x"])");
  EXPECT_EQ(h->size(), 8u);
}

TEST(ConfigCheckParseTest, JsonErrors) {
  auto bad = ParseJsonHyperparameters(R"({"a": [1, 2)");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(bad.error().message().find("malformed JSON at byte"), std::string::npos);
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += R"({"a": )";
  deep += "1";
  for (int i = 0; i < 100; ++i) deep += "}";
  auto too_deep = ParseJsonHyperparameters(deep);
  ASSERT_FALSE(too_deep.ok());
  EXPECT_EQ(too_deep.error().code(), ErrorCode::kOutOfRange);
}

TEST(ConfigCheckParseTest, YamlScalarsFollowPyYaml) {
  auto h = ParseYamlHyperparameters(R"(
train:
  lr: 1.0e-3
  batch_size: 32
  name: "0.5"
  amp: yes
  off_flag: Off
  empty:
schedule: [1, two, 3.50]
)");
  ASSERT_TRUE(h.ok()) << h.error().ToString();
  EXPECT_EQ(h->at("train.lr"), "0.001");
  EXPECT_EQ(h->at("train.batch_size"), "32");
  EXPECT_EQ(h->at("train.name"), "0.5");  // quoted: the string, not canonicalised further
  EXPECT_EQ(h->at("train.amp"), "true");
  EXPECT_EQ(h->at("train.off_flag"), "false");
  EXPECT_EQ(h->at("train.empty"), "null");
  EXPECT_EQ(h->at("schedule"), R"([1, "two", 3.5])");
  auto bad = ParseYamlHyperparameters("a: [1, 2\nb: 3\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(bad.error().message().find("malformed YAML at line"), std::string::npos);
}

TEST(ConfigCheckParseTest, YamlAliasesExpandWithinABudget) {
  // Aliases as configs use them: a shared block, flattened under each name.
  auto shared = ParseYamlHyperparameters("base: &b {lr: 0.1, sizes: [1, 2]}\nrun: *b\n");
  ASSERT_TRUE(shared.ok()) << shared.error().ToString();
  EXPECT_EQ(shared->at("run.lr"), "0.1");
  EXPECT_EQ(shared->at("run.sizes"), "[1, 2]");
  EXPECT_EQ(shared->at("base.lr"), "0.1");

  // Nine lines of nine aliases each name 9^9 values: refused, not expanded (this ran for ever,
  // its memory growing, before the budget).
  std::string laughs = "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int level = 1; level < 9; ++level) {
    laughs += fmt::format("l{}: &l{} [", level, level);
    for (int k = 0; k < 9; ++k) laughs += fmt::format("{}*l{}", k > 0 ? ", " : "", level - 1);
    laughs += "]\n";
  }
  auto bomb = ParseYamlHyperparameters(laughs);
  ASSERT_FALSE(bomb.ok());
  EXPECT_EQ(bomb.error().code(), ErrorCode::kOutOfRange);
  EXPECT_NE(bomb.error().message().find("YAML aliases"), std::string::npos)
      << bomb.error().message();

  // Few values, each a long text named many times: the text is counted too.
  std::string wide = "t: &t " + std::string(1 << 20, 'x') + "\nm: &m [";
  for (int k = 0; k < 100; ++k) wide += fmt::format("{}*t", k > 0 ? ", " : "");
  wide += "]\nall: [";
  for (int k = 0; k < 100; ++k) wide += fmt::format("{}*m", k > 0 ? ", " : "");
  wide += "]\n";
  auto long_text = ParseYamlHyperparameters(wide);  // 10,000 values, 10 GB of text
  ASSERT_FALSE(long_text.ok());
  EXPECT_EQ(long_text.error().code(), ErrorCode::kOutOfRange);
  EXPECT_NE(long_text.error().message().find("bytes of values"), std::string::npos)
      << long_text.error().message();
}

TEST(ConfigCheckParseTest, ArgvFlagsAndOverrides) {
  const auto h = ArgvHyperparameters({"python", "train.py", "--lr", "1e-3", "--batch-size=64", "-e",
                                      "3", "--amp", "--shift", "-1", "--fp16", "model.depth=12",
                                      "+trainer.max_epochs=5", "data.bin"});
  EXPECT_EQ(h.at("lr"), "0.001");
  EXPECT_EQ(h.at("batch_size"), "64");
  EXPECT_EQ(h.at("e"), "3");
  EXPECT_EQ(h.at("amp"), "true");
  EXPECT_EQ(h.at("shift"), "-1");  // a negative number is a value, not a flag
  EXPECT_EQ(h.at("fp16"), "true");
  EXPECT_EQ(h.at("model.depth"), "12");
  EXPECT_EQ(h.at("trainer.max_epochs"), "5");
  EXPECT_EQ(h.size(), 8u);
}

TEST(ConfigCheckParseTest, ShellScriptsAndFormats) {
  TempDir dir;
  const auto sh = dir.Write("train.sh", R"(#!/bin/bash
# comment --ignored 1
export CUDA_VISIBLE_DEVICES=0,1
torchrun --nproc_per_node 8 pretrain.py \
    --micro-batch-size 2 \
    --lr "3e-4" --name 'my run' # trailing --nope 2
)");
  auto h = ReadHyperparameters(sh);
  ASSERT_TRUE(h.ok()) << h.error().ToString();
  EXPECT_EQ(h->at("nproc_per_node"), "8");
  EXPECT_EQ(h->at("micro_batch_size"), "2");
  EXPECT_EQ(h->at("lr"), "0.0003");
  EXPECT_EQ(h->at("name"), "my run");
  EXPECT_EQ(h->at("CUDA_VISIBLE_DEVICES"), "0,1");
  EXPECT_EQ(h->count("ignored"), 0u);
  EXPECT_EQ(h->count("nope"), 0u);
  const auto txt = dir.Write("notes.txt", "lr: 1");
  EXPECT_EQ(ReadHyperparameters(txt).error().code(), ErrorCode::kUnsupported);
  EXPECT_EQ(ReadHyperparameters(dir.path() / "missing.json").error().code(), ErrorCode::kNotFound);
  const auto bad = dir.Write("bad.json", "{");
  const Status s = ReadHyperparameters(bad).error();
  EXPECT_EQ(s.code(), ErrorCode::kCorrupt);
  EXPECT_NE(s.message().find("bad.json"), std::string::npos);
}

TEST(ConfigCheckParseTest, SecretsAreMaskedByHashPrefix) {
  EXPECT_TRUE(IsSecretName("HF_TOKEN"));
  EXPECT_TRUE(IsSecretName("aws_secret_access_key"));
  EXPECT_TRUE(IsSecretName("WANDB_API_KEY"));
  EXPECT_TRUE(IsSecretName("db_password"));
  EXPECT_TRUE(IsSecretName("GITHUB_AUTH"));
  EXPECT_FALSE(IsSecretName("NCCL_ALGO"));
  EXPECT_FALSE(IsSecretName("PWD"));
  // SHA-256("abc") = ba7816bf...
  EXPECT_EQ(MaskValue("abc"), "<masked sha256:ba7816bf>");
  EXPECT_NE(MaskValue("abd"), MaskValue("abc"));
  EXPECT_EQ(MaskUrlPasswords("https://user:abc@host.example/path?q=1"),
            "https://user:<masked sha256:ba7816bf>@host.example/path?q=1");
  EXPECT_EQ(MaskUrlPasswords("http://host:8080/x"), "http://host:8080/x");
  EXPECT_EQ(MaskUrlPasswords("a=redis://:abc@h:1 b=ftp://u:abc@h"),
            "a=redis://:<masked sha256:ba7816bf>@h:1 b=ftp://u:<masked sha256:ba7816bf>@h");
  EXPECT_EQ(MaskUrlPasswords("plain text"), "plain text");
}

TEST(ConfigCheckParseTest, Sha256OfFile) {
  TempDir dir;
  const auto f = dir.Write("abc.bin", "abc");
  EXPECT_EQ(Sha256OfFile(f).value(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const auto empty = dir.Write("empty.bin", "");
  EXPECT_EQ(Sha256OfFile(empty).value(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256OfFile(dir.path() / "nope").error().code(), ErrorCode::kIoError);
}

CollectOptions Quiet() {
  CollectOptions o;
  o.python.clear();
  o.environment = std::vector<std::string>{};
  return o;
}

TEST(ConfigCheckParseTest, CollectSortsEnvironmentIntoCategories) {
  CollectOptions o = Quiet();
  o.environment = std::vector<std::string>{"NCCL_ALGO=Ring",
                                           "PYTHONHASHSEED=0",
                                           "CUBLAS_WORKSPACE_CONFIG=:4096:8",
                                           "HF_TOKEN=abc",
                                           "PROXY=http://me:abc@proxy:3128",
                                           "EMPTY=",
                                           "=junk",
                                           "NOEQUALS"};
  o.command = {"python", "train.py", "--seed", "7", "--lr", "0.1", "--api-key", "abc"};
  o.set = {"random.torch.are_deterministic_algorithms_enabled=True"};
  auto s = CollectSnapshot(o);
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  const auto& env = s->of(CheckCategory::kEnv);
  const auto& random = s->of(CheckCategory::kRandom);
  EXPECT_EQ(env.at("NCCL_ALGO"), "Ring");
  EXPECT_EQ(env.at("HF_TOKEN"), "<masked sha256:ba7816bf>");
  EXPECT_EQ(env.at("PROXY"), "http://me:<masked sha256:ba7816bf>@proxy:3128");
  EXPECT_EQ(env.at("EMPTY"), "");
  EXPECT_EQ(env.size(), 4u);
  EXPECT_EQ(random.at("PYTHONHASHSEED"), "0");
  EXPECT_EQ(random.at("CUBLAS_WORKSPACE_CONFIG"), ":4096:8");
  EXPECT_EQ(random.at("seed"), "7");
  EXPECT_EQ(random.at("torch.are_deterministic_algorithms_enabled"), "True");
  const auto& hyper = s->of(CheckCategory::kHyperparameters);
  EXPECT_EQ(hyper.at("lr"), "0.1");
  EXPECT_EQ(hyper.at("api_key"), "<masked sha256:ba7816bf>");
  EXPECT_EQ(s->command.back(), "<masked sha256:ba7816bf>");
  EXPECT_EQ(s->command.size(), 8u);
  EXPECT_TRUE(s->of(CheckCategory::kPip).empty());  // no Python asked
}

TEST(ConfigCheckParseTest, CommandLineOverridesConfigFiles) {
  TempDir dir;
  CollectOptions o = Quiet();
  o.configs = {dir.Write("a.yaml", "lr: 0.5\nepochs: 3\nseed: 1\n"),
               dir.Write("b.json", R"({"epochs": 4})")};
  o.command = {"train.py", "--lr", "0.25"};
  auto s = CollectSnapshot(o);
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  EXPECT_EQ(s->of(CheckCategory::kHyperparameters).at("lr"), "0.25");
  EXPECT_EQ(s->of(CheckCategory::kHyperparameters).at("epochs"), "4");
  EXPECT_EQ(s->of(CheckCategory::kRandom).at("seed"), "1");
}

TEST(ConfigCheckParseTest, FingerprintsFilesAndFolders) {
  TempDir dir;
  dir.Write("data/a.txt", "abc");
  dir.Write("data/sub/b.txt", "");
  const std::vector<float> w = {1.0f, -2.0f, 0.5f, 0.0f};
  ASSERT_TRUE(
      WriteNpy(dir.path() / "w.npy", TensorView::Contiguous(w.data(), DType::kF32, {2, 2})).ok());
  CollectOptions o = Quiet();
  o.data = {dir.path() / "data"};
  o.weights = {dir.path() / "w.npy"};
  auto s = CollectSnapshot(o);
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  // Items are named by role (the option and its position), not by file name.
  const auto& data = s->of(CheckCategory::kDataset);
  EXPECT_EQ(data.at("data1/a.txt"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad size:3");
  EXPECT_EQ(data.at("data1/sub/b.txt"),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 size:0");
  const auto& weights = s->of(CheckCategory::kWeights);
  ASSERT_EQ(weights.size(), 2u);
  EXPECT_EQ(weights.at("weights1:(array)"),
            "f32 [2, 2] max=1 min=-2 mean=-0.125 norm=2.29128784747792");
  EXPECT_EQ(weights.count("weights1"), 1u);

  // The same tensor under another file name, and a label: the items keep their names.
  std::filesystem::copy_file(dir.path() / "w.npy", dir.path() / "w_B.npy");
  o.weights = {dir.path() / "w_B.npy", "init=" + (dir.path() / "w.npy").string()};
  auto labelled = CollectSnapshot(o);
  ASSERT_TRUE(labelled.ok()) << labelled.error().ToString();
  const auto& w2 = labelled->of(CheckCategory::kWeights);
  EXPECT_EQ(w2.at("weights1:(array)"), weights.at("weights1:(array)"));
  EXPECT_EQ(w2.at("weights1"), weights.at("weights1"));
  EXPECT_EQ(w2.at("init:(array)"), weights.at("weights1:(array)"));
  EXPECT_EQ(w2.size(), 4u);
  o.data = {dir.path() / "nothing"};
  EXPECT_EQ(CollectSnapshot(o).error().code(), ErrorCode::kNotFound);
}

TEST(ConfigCheckParseTest, BadSetAndUnrunnablePython) {
  CollectOptions o = Quiet();
  o.set = {"nocategory=1"};
  EXPECT_EQ(CollectSnapshot(o).error().code(), ErrorCode::kInvalidArgument);
  o.set = {"colours.x=1"};
  EXPECT_EQ(CollectSnapshot(o).error().code(), ErrorCode::kInvalidArgument);
  o.set.clear();
  o.python = "/nonexistent/python3";
  auto s = CollectSnapshot(o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->of(CheckCategory::kPip).at("python"), "not available");
  ASSERT_EQ(s->warnings.size(), 1u);
  EXPECT_NE(s->warnings[0].find("cannot run"), std::string::npos);
}

TEST(ConfigCheckParseTest, ProbeFailuresAndTimeoutsAreReported) {
  auto failed = detail::RunAndCapture({"/bin/sh", "-c", "echo oops >&2; exit 3"}, 10, 1024);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().message().find("status 3: oops"), std::string::npos);
  auto slow = detail::RunAndCapture({"/bin/sh", "-c", "sleep 30"}, 1, 1024);
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.error().code(), ErrorCode::kOutOfRange);
  auto big = detail::RunAndCapture({"/bin/sh", "-c", "yes | head -c 100000"}, 10, 1000);
  EXPECT_EQ(big.error().code(), ErrorCode::kOutOfRange);
  auto ok = detail::RunAndCapture({"/bin/sh", "-c", "printf hello"}, 10, 1024);
  EXPECT_EQ(ok.value(), "hello");
}

TEST(ConfigCheckParseTest, SnapshotJsonRoundTrip) {
  Snapshot s;
  s.created = "2025-01-01T00:00:00Z";
  s.host = "h";
  s.command = {"python", "t.py"};
  s.of(CheckCategory::kEnv)["A"] = "1";
  s.of(CheckCategory::kPip)["numpy"] = "1.24.2";
  s.of(CheckCategory::kRandom)["seed"] = "\"quoted\"\n";
  s.warnings = {"w"};
  auto back = ParseSnapshot(SnapshotToJson(s));
  ASSERT_TRUE(back.ok()) << back.error().ToString();
  EXPECT_EQ(back->created, s.created);
  EXPECT_EQ(back->command, s.command);
  for (int c = 0; c < kCheckCategoryCount; ++c) EXPECT_EQ(back->items[c], s.items[c]);
  EXPECT_EQ(back->warnings, s.warnings);
  // Hand-edited values of other JSON types still read as text.
  auto edited = ParseSnapshot(R"({"numprobe_config_snapshot": 1, "random": {"seed": 42,
      "flag": true}})");
  ASSERT_TRUE(edited.ok());
  EXPECT_EQ(edited->of(CheckCategory::kRandom).at("seed"), "42");
  EXPECT_EQ(edited->of(CheckCategory::kRandom).at("flag"), "True");
  EXPECT_EQ(ParseSnapshot(R"({"env": {}})").error().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(ParseSnapshot(R"({"numprobe_config_snapshot": 2})").error().code(),
            ErrorCode::kUnsupported);
  EXPECT_EQ(ParseSnapshot(R"({"numprobe_config_snapshot": 1, "env": []})").error().code(),
            ErrorCode::kCorrupt);
  EXPECT_EQ(ParseSnapshot("[").error().code(), ErrorCode::kCorrupt);
}

}  // namespace
}  // namespace numprobe
