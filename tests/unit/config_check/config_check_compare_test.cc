// config-check comparison: levels per category, Ascend/CUDA env pairs, hyperparameter aliases,
// datasets equal by statistics, and the report files.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "numprobe/config_check.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

Snapshot Base() {
  Snapshot s;
  s.of(CheckCategory::kEnv) = {{"NCCL_ALGO", "Ring"}, {"HOME", "/root"}, {"HOSTNAME", "a"}};
  s.of(CheckCategory::kPip) = {
      {"python", "3.11.2"}, {"numpy", "1.24.2"}, {"torch", "1.13.1"}, {"requests", "2.28.1"}};
  s.of(CheckCategory::kRandom) = {{"seed", "1234"}, {"PYTHONHASHSEED", "0"}};
  s.of(CheckCategory::kHyperparameters) = {{"optimizer.lr", "0.001"}, {"epochs", "3"}};
  s.of(CheckCategory::kDataset) = {{"train.bin", "sha256:aa size:3"}};
  s.of(CheckCategory::kWeights) = {{"w.pt", "sha256:bb size:9"},
                                   {"w.pt:weight", "f32 [2] max=1 min=0"}};
  return s;
}

std::vector<const CheckItem*> Findings(const CheckReport& r) {
  std::vector<const CheckItem*> out;
  for (const auto& i : r.items) {
    if (i.level != Verdict::kPass) out.push_back(&i);
  }
  return out;
}

TEST(ConfigCheckCompareTest, IdenticalSnapshotsPass) {
  const CheckReport r = CompareSnapshots(Base(), Base());
  EXPECT_FALSE(r.differs());
  EXPECT_EQ(r.items.size(), 14u);
  for (int c = 0; c < kCheckCategoryCount; ++c) {
    EXPECT_EQ(r.Summary(static_cast<CheckCategory>(c)), Verdict::kPass);
  }
}

TEST(ConfigCheckCompareTest, ExactlyTheSeedTheLibraryAndTheVariable) {
  Snapshot b = Base();
  b.of(CheckCategory::kRandom)["seed"] = "42";
  b.of(CheckCategory::kPip)["numpy"] = "1.24.3";
  b.of(CheckCategory::kEnv)["NCCL_ALGO"] = "Tree";
  b.of(CheckCategory::kEnv)["HOSTNAME"] = "b";  // session-specific: not a finding
  const CheckReport r = CompareSnapshots(Base(), b);
  const auto f = Findings(r);
  ASSERT_EQ(f.size(), 3u);
  // In kCheckCategoryOrder: seeds before environment before packages.
  EXPECT_EQ(f[0]->category, CheckCategory::kRandom);
  EXPECT_EQ(f[0]->name, "seed");
  EXPECT_EQ(f[1]->category, CheckCategory::kEnv);
  EXPECT_EQ(f[1]->name, "NCCL_ALGO");
  EXPECT_EQ(*f[1]->a, "Ring");
  EXPECT_EQ(*f[1]->b, "Tree");
  EXPECT_EQ(f[2]->category, CheckCategory::kPip);
  EXPECT_EQ(f[2]->name, "numpy");
  for (const CheckItem* i : f) EXPECT_EQ(i->level, Verdict::kError);
  EXPECT_EQ(r.Summary(CheckCategory::kHyperparameters), Verdict::kPass);
  EXPECT_TRUE(r.differs());
}

TEST(ConfigCheckCompareTest, ItemsAreOrderedByKindActionableFirst) {
  // A run whose learning rate changed and whose weights all differ: the learning rate comes
  // first, the weights last, whatever the names.
  Snapshot b = Base();
  b.of(CheckCategory::kHyperparameters)["optimizer.lr"] = "0.002";
  for (int i = 0; i < 29; ++i) b.of(CheckCategory::kWeights)["a" + std::to_string(i)] = "x";
  b.of(CheckCategory::kEnv)["A_NEW"] = "1";
  b.of(CheckCategory::kDataset)["train.bin"] = "sha256:cc size:3";
  b.of(CheckCategory::kPip)["aaa"] = "1.0";
  b.of(CheckCategory::kRandom)["seed"] = "1";
  const CheckReport r = CompareSnapshots(b, Base());
  const auto f = Findings(r);
  ASSERT_EQ(f.size(), 34u);
  EXPECT_EQ(f[0]->category, CheckCategory::kHyperparameters);
  EXPECT_EQ(f[0]->name, "optimizer.lr");
  EXPECT_EQ(*f[0]->a, "0.002");
  EXPECT_EQ(*f[0]->b, "0.001");
  EXPECT_EQ(f[1]->category, CheckCategory::kRandom);
  EXPECT_EQ(f[2]->category, CheckCategory::kEnv);
  EXPECT_EQ(f[3]->category, CheckCategory::kPip);
  EXPECT_EQ(f[4]->category, CheckCategory::kDataset);
  for (size_t i = 5; i < f.size(); ++i) EXPECT_EQ(f[i]->category, CheckCategory::kWeights);
  // Every item, passes included, follows the same order.
  for (size_t i = 1; i < r.items.size(); ++i) {
    EXPECT_LE(CheckCategoryRank(r.items[i - 1].category), CheckCategoryRank(r.items[i].category));
  }
  EXPECT_EQ(CheckCategoryRank(CheckCategory::kHyperparameters), 0);
  EXPECT_EQ(CheckCategoryRank(CheckCategory::kWeights), kCheckCategoryCount - 1);
}

TEST(ConfigCheckCompareTest, LevelsFollowWhatChangesNumerics) {
  Snapshot b = Base();
  b.of(CheckCategory::kEnv)["HOME"] = "/home/x";          // unknown: warning
  b.of(CheckCategory::kEnv)["OMP_NUM_THREADS"] = "8";     // numerics, one-sided: error
  b.of(CheckCategory::kPip)["requests"] = "2.31.0";       // not a key library: warning
  b.of(CheckCategory::kPip).erase("torch");               // key library missing: error
  b.of(CheckCategory::kHyperparameters)["warmup"] = "5";  // only in B: warning
  const CheckReport r = CompareSnapshots(Base(), b);
  std::map<std::string, Verdict> level;
  for (const CheckItem* i : Findings(r)) level[i->name] = i->level;
  EXPECT_EQ(level.at("HOME"), Verdict::kWarning);
  EXPECT_EQ(level.at("OMP_NUM_THREADS"), Verdict::kError);
  EXPECT_EQ(level.at("requests"), Verdict::kWarning);
  EXPECT_EQ(level.at("torch"), Verdict::kError);
  EXPECT_EQ(level.at("warmup"), Verdict::kWarning);
  EXPECT_EQ(level.size(), 5u);
}

TEST(ConfigCheckCompareTest, AscendAndCudaNamesPairWithDefaults) {
  Snapshot npu = Base();
  npu.of(CheckCategory::kEnv).erase("NCCL_ALGO");
  npu.of(CheckCategory::kEnv)["HCCL_ALGO"] = "Ring";
  npu.of(CheckCategory::kEnv)["ASCEND_HOME_PATH"] = "/usr/local/Ascend";
  npu.of(CheckCategory::kRandom)["HCCL_DETERMINISTIC"] = "True";
  const CheckReport r = CompareSnapshots(npu, Base());
  const CheckItem* algo = nullptr;
  const CheckItem* det = nullptr;
  for (const auto& i : r.items) {
    if (i.name == "HCCL_ALGO") algo = &i;
    if (i.name == "HCCL_DETERMINISTIC") det = &i;
  }
  ASSERT_NE(algo, nullptr);
  EXPECT_EQ(algo->name_b, "NCCL_ALGO");
  EXPECT_EQ(algo->level, Verdict::kPass);
  ASSERT_NE(det, nullptr);
  EXPECT_EQ(det->name_b, "NCCL_DETERMINISTIC");
  EXPECT_EQ(*det->b, "False");  // unset on the CUDA side: its default
  EXPECT_EQ(det->level, Verdict::kError);
  for (const auto& i : r.items) EXPECT_NE(i.name, "NCCL_ALGO");  // compared once, as a pair
}

TEST(ConfigCheckCompareTest, HyperparameterAliasesMatch) {
  Snapshot b = Base();
  auto& h = b.of(CheckCategory::kHyperparameters);
  h.erase("optimizer.lr");
  h["optimizer.learning_rate"] = "0.001";
  h.erase("epochs");
  h["num_epochs"] = "4";
  const CheckReport r = CompareSnapshots(Base(), b);
  const auto f = Findings(r);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->name, "epochs");
  EXPECT_EQ(f[0]->name_b, "num_epochs");
  EXPECT_EQ(f[0]->level, Verdict::kError);
  bool lr_matched = false;
  for (const auto& i : r.items) {
    if (i.name == "optimizer.lr" && i.name_b == "optimizer.learning_rate") {
      lr_matched = i.level == Verdict::kPass;
    }
  }
  EXPECT_TRUE(lr_matched);
}

TEST(ConfigCheckCompareTest, WeightsEqualByStatisticsAreAWarning) {
  Snapshot b = Base();
  b.of(CheckCategory::kWeights)["w.pt"] = "sha256:cc size:9";  // re-saved, same values
  CheckReport r = CompareSnapshots(Base(), b);
  auto f = Findings(r);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->level, Verdict::kWarning);
  EXPECT_EQ(f[0]->note, "bytes differ, tensor statistics equal");
  b.of(CheckCategory::kWeights)["w.pt:weight"] = "f32 [2] max=2 min=0";
  r = CompareSnapshots(Base(), b);
  f = Findings(r);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0]->level, Verdict::kError);
  EXPECT_EQ(f[1]->level, Verdict::kError);
  b = Base();
  b.of(CheckCategory::kDataset).clear();
  r = CompareSnapshots(Base(), b);
  f = Findings(r);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->note, "only in A");
  EXPECT_EQ(f[0]->level, Verdict::kError);
}

TEST(ConfigCheckCompareTest, MaskedSecretsCompareByHash) {
  Snapshot a = Base();
  Snapshot b = Base();
  a.of(CheckCategory::kEnv)["HF_TOKEN"] = MaskValue("one");
  b.of(CheckCategory::kEnv)["HF_TOKEN"] = MaskValue("two");
  const CheckReport r = CompareSnapshots(a, b);
  const auto f = Findings(r);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]->note, "secret: compared by hash");
}

std::string Slurp(const fs::path& p) {
  std::stringstream s;
  s << std::ifstream(p, std::ios::binary).rdbuf();
  return s.str();
}

TEST(ConfigCheckCompareTest, WritesCsvJsonAndXlsx) {
  Snapshot b = Base();
  b.of(CheckCategory::kRandom)["seed"] = "42";
  b.of(CheckCategory::kEnv)["NEW, \"quoted\""] = "x";
  const CheckReport r = CompareSnapshots(Base(), b, "a.json", "b.json");
  const fs::path dir = fs::path(::testing::TempDir()) / "config_check_writers";
  fs::remove_all(dir);
  fs::create_directories(dir);
  ASSERT_TRUE(WriteCheckCsv(r, dir / "r.csv").ok());
  ASSERT_TRUE(WriteCheckJson(r, dir / "r.json").ok());
  ASSERT_TRUE(WriteCheckXlsx(r, dir / "r.xlsx").ok());
  const std::string csv = Slurp(dir / "r.csv");
  EXPECT_EQ(csv.rfind("Category,Name,Name B,Value A,Value B,Level,Note\n", 0), 0u);
  EXPECT_NE(csv.find("random,seed,,1234,42,error,\n"), std::string::npos);
  EXPECT_NE(csv.find("env,\"NEW, \"\"quoted\"\"\",,(absent),x,warning,only in B"),
            std::string::npos);
  const std::string json = Slurp(dir / "r.json");
  EXPECT_NE(json.find("\"numprobe_config_check\": 1"), std::string::npos);
  EXPECT_NE(json.find("\"random\": \"error\""), std::string::npos);
  EXPECT_NE(json.find("\"a\": null"), std::string::npos);
  const std::string xlsx = Slurp(dir / "r.xlsx");
  EXPECT_EQ(xlsx.rfind("PK\x03\x04", 0), 0u);                           // a zip container
  EXPECT_NE(xlsx.find("xl/worksheets/sheet7.xml"), std::string::npos);  // summary + 6 sheets
  EXPECT_FALSE(fs::exists(dir / "r.xlsx.tmp.xlsx"));
  EXPECT_EQ(WriteCheckCsv(r, dir / "missing" / "r.csv").code(), ErrorCode::kIoError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace numprobe
