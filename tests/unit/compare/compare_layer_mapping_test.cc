// -lm (layer mapping) as msprobe does it: the YAML reader, then msprobe's own unit test of layer
// mapping (test/msprobe_test/mindspore_ut/compare/test_layer_mapping.py) on its own dumps
// (tests/fixtures/msprobe/layer_mapping): the data mapping must be the one that test expects, and
// CompareDumps must pair the rows that way (with -am as well, as msprobe's precedence has it).
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "numprobe/compare.h"
#include "numprobe/dump.h"
#include "numprobe/dump_layout.h"

#include "compare/compare_internal.h"
#include "compare/loaded_mapping.h"
#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;
using detail::LayerDataMapping;
using detail::LayerMapping;
using detail::LoadedMapping;
using detail::LoadLayerMapping;

std::string Tensor(const std::string& dtype, double max) {
  return R"({"type": "torch.Tensor", "dtype": ")" + dtype + R"(", "shape": [2], "Max": )" +
         std::to_string(max) + R"(, "Min": 0.0, "Mean": 0.5, "Norm": 1.0})";
}

std::string Fwd(const std::string& name, const std::string& in, const std::string& out) {
  return "\"" + name + R"(": {"input_args": [)" + in + R"(], "input_kwargs": {}, "output": [)" +
         out + "]}";
}

// A dump.json text whose entries have one input and one output each.
std::string DumpText(const std::string& framework, const std::vector<std::string>& names) {
  const std::string dtype = framework == "mindspore" ? "Float32" : "torch.float32";
  std::string data;
  for (const std::string& n : names) {
    data += (data.empty() ? "" : ", ") + Fwd(n, Tensor(dtype, 1), Tensor(dtype, 2));
  }
  return R"({"task": "statistics", "level": "mix", "framework": ")" + framework +
         R"(", "data": {)" + data + "}}";
}

class LayerMappingTest : public ::testing::Test {
 protected:
  fs::path WriteFile(const std::string& name, const std::string& text) {
    fs::create_directories((root_ / name).parent_path());
    std::ofstream(root_ / name) << text;
    return root_ / name;
  }

  LayerMapping Load(const std::string& yaml) {
    auto m = LoadLayerMapping(WriteFile("lm.yaml", yaml));
    EXPECT_TRUE(m.ok()) << m.error().ToString();
    return m.ok() ? std::move(*m) : LayerMapping();
  }

  test::TempDir temp_{"numprobe_lm"};
  const fs::path root_ = temp_.path();
};

const std::string kFixture = std::string(NUMPROBE_FIXTURES_DIR) + "/msprobe/layer_mapping";

struct SideFiles {
  DumpFile dump;
  StackMap stack;
  ConstructMap construct;
};

SideFiles ReadSide(const std::string& dir) {
  SideFiles s;
  auto d = ReadDumpJson(kFixture + "/" + dir + "/dump.json");
  EXPECT_TRUE(d.ok()) << d.error().ToString();
  if (d.ok()) s.dump = std::move(*d);
  auto st = ReadStackJson(kFixture + "/" + dir + "/stack.json");
  EXPECT_TRUE(st.ok()) << st.error().ToString();
  if (st.ok()) s.stack = std::move(*st);
  auto c = ReadConstructJson(kFixture + "/" + dir + "/construct.json");
  EXPECT_TRUE(c.ok()) << c.error().ToString();
  if (c.ok()) s.construct = std::move(*c);
  return s;
}

// msprobe's test_generate_data_mapping_by_layer_mapping_then_pass, verbatim.
const std::map<std::string, std::string> kMsprobeDataMapping = {
    {"Tensor.__add__.0.forward.input.0", "N/A"},
    {"Tensor.__add__.0.forward.input.1", "N/A"},
    {"Tensor.__add__.0.forward.output.0", "N/A"},
    {"Tensor.__bool__.1.forward.input.0", "N/A"},
    {"Tensor.__bool__.1.forward.output.0", "N/A"},
    {"Tensor.__add__.1.forward.input.0", "Tensor.__add__.0.forward.input.0"},
    {"Tensor.__add__.1.forward.input.1", "Tensor.__add__.0.forward.input.1"},
    {"Tensor.__add__.1.forward.output.0", "Tensor.__add__.0.forward.output.0"},
    {"Mint.logical_or.0.forward.input.0", "Tensor.__or__.0.forward.input.0"},
    {"Mint.logical_or.0.forward.input.1", "Tensor.__or__.0.forward.input.1"},
    {"Mint.logical_or.0.forward.output.0", "Tensor.__or__.0.forward.output.0"},
    {"Distributed.all_reduce.0.forward.input.0", "Distributed.all_reduce.0.forward.input.0"},
    {"Distributed.all_reduce.0.forward.input.group",
     "Distributed.all_reduce.0.forward.input.group"},
    {"Distributed.all_reduce.0.forward.output.0", "Distributed.all_reduce.0.forward.output.0"},
    {"Distributed.all_reduce.0.forward.output.1", "Distributed.all_reduce.0.forward.output.1"},
    {"Cell.network_with_loss.module.language_model.embedding.word_embeddings."
     "VocabParallelEmbedding.forward.0.input.0",
     "Module.module.module.language_model.embedding.word_embeddings.VocabParallelEmbedding.forward."
     "0.input.0"},
    {"Cell.network_with_loss.module.language_model.embedding.word_embeddings."
     "VocabParallelEmbedding.forward.0.output.0",
     "Module.module.module.language_model.embedding.word_embeddings.VocabParallelEmbedding.forward."
     "0.output.0"},
    {"Primitive.norm.RmsNorm.0.forward.input.0", "NPU.npu_rms_norm.0.forward.input.0"},
    {"Primitive.norm.RmsNorm.0.forward.input.1", "NPU.npu_rms_norm.0.forward.input.1"},
    {"Primitive.norm.RmsNorm.0.forward.output.0", "NPU.npu_rms_norm.0.forward.output.0"},
    {"Primitive.norm.RmsNorm.0.forward.output.1", "NPU.npu_rms_norm.0.forward.output.1"},
    {"Cell.network_with_loss.module.language_model.encoder.layers.0.ParallelTransformerLayer."
     "forward.0.input.0",
     "Module.module.module.language_model.encoder.layers.0.ParallelTransformerLayer.forward.0."
     "input.0"},
    {"Cell.network_with_loss.module.language_model.encoder.layers.0.ParallelTransformerLayer."
     "forward.0.output.0",
     "Module.module.module.language_model.encoder.layers.0.ParallelTransformerLayer.forward.0."
     "output.0"},
    {"Cell.network_with_loss.module.language_model.encoder.layers.0.input_norm.FusedRMSNorm."
     "backward.0.input.0",
     "N/A"},
    {"Cell.network_with_loss.module.language_model.encoder.layers.0.input_norm.FusedRMSNorm."
     "backward.0.output.0",
     "N/A"},
    {"Cell.network_with_loss.module.language_model.encoder.layers.0.attention.ParallelAttention."
     "forward.0.output.0",
     "Module.module.module.language_model.encoder.layers.0.self_attention.ParallelAttention."
     "forward.0.output.0"},
    {"Cell.network_with_loss.module.language_model.encoder.layers.0.attention.ParallelAttention."
     "forward.0.output.1",
     "Module.module.module.language_model.encoder.layers.0.self_attention.ParallelAttention."
     "forward.0.output.1"},
    {"Mint.cos.0.forward.input.0", "Torch.cos.0.forward.input.0"},
    {"Mint.cos.0.forward.output.0", "Torch.cos.0.forward.output.0"},
    {"Functional.flash_attention_score.0.forward.input.0",
     "NPU.npu_fusion_attention.0.forward.input.0"},
    {"Functional.flash_attention_score.0.forward.input.1",
     "NPU.npu_fusion_attention.0.forward.input.1"},
    {"Functional.flash_attention_score.0.forward.input.2",
     "NPU.npu_fusion_attention.0.forward.input.2"},
    {"Functional.flash_attention_score.0.forward.input.3",
     "NPU.npu_fusion_attention.0.forward.input.3"},
    {"Functional.flash_attention_score.0.forward.input.attn_mask", "N/A"},
    {"Functional.flash_attention_score.0.forward.input.scalar_value", "N/A"},
    {"Functional.flash_attention_score.0.forward.input.pre_tokens", "N/A"},
    {"Functional.flash_attention_score.0.forward.input.next_tokens", "N/A"},
    {"Functional.flash_attention_score.0.forward.input.input_layout", "N/A"},
    {"Functional.flash_attention_score.0.forward.output.0",
     "NPU.npu_fusion_attention.0.forward.output.0"},
    {"Functional.flash_attention_score.0.backward.input.0",
     "NPU.npu_fusion_attention.0.backward.input.0"},
    {"Functional.flash_attention_score.0.backward.output.0",
     "NPU.npu_fusion_attention.0.backward.output.0"},
    {"Functional.flash_attention_score.0.backward.output.1",
     "NPU.npu_fusion_attention.0.backward.output.1"},
    {"Functional.flash_attention_score.0.backward.output.2",
     "NPU.npu_fusion_attention.0.backward.output.2"},
    {"Functional.flash_attention_score.0.backward.output.3",
     "NPU.npu_fusion_attention.0.backward.output.3"},
};

TEST_F(LayerMappingTest, GivesMsprobesDataMappingOnItsOwnTestData) {
  const SideFiles t = ReadSide("mindspore_data");
  const SideFiles g = ReadSide("pytorch_data");
  auto layers = LoadLayerMapping(kFixture + "/layer_mapping.yaml");
  ASSERT_TRUE(layers.ok()) << layers.error().ToString();
  const auto mapping =
      LayerDataMapping(t.dump, &t.stack, t.construct, g.dump, &g.stack, g.construct, *layers);
  std::map<std::string, std::string> got(mapping.begin(), mapping.end());
  EXPECT_EQ(got.size(), mapping.size()) << "a target row named twice";
  for (const auto& [npu, bench] : kMsprobeDataMapping) {
    const auto it = got.find(npu);
    ASSERT_NE(it, got.end()) << "no mapping for " << npu;
    EXPECT_EQ(it->second, bench) << npu;
  }
  EXPECT_EQ(got.size(), kMsprobeDataMapping.size());
  // Without stack.json (or construct.json) on a side msprobe builds no mapping at all.
  EXPECT_TRUE(LayerDataMapping(t.dump, nullptr, t.construct, g.dump, &g.stack, g.construct, *layers)
                  .empty());
  EXPECT_TRUE(
      LayerDataMapping(t.dump, &t.stack, ConstructMap(), g.dump, &g.stack, g.construct, *layers)
          .empty());
}

TEST_F(LayerMappingTest, CompareDumpsPairsTheRowsAsMsprobeDoes) {
  auto layers = LoadLayerMapping(kFixture + "/layer_mapping.yaml");
  ASSERT_TRUE(layers.ok());
  LoadedMapping mapping;
  mapping.layer_mapping = true;
  mapping.layer_map = *layers;
  const auto t = LocateDump(kFixture + "/mindspore_data");
  const auto g = LocateDump(kFixture + "/pytorch_data");
  ASSERT_TRUE(t.has_value() && g.has_value());
  auto table = detail::CompareWithMapping(*t, *g, mapping, nullptr, {}, 0);
  ASSERT_TRUE(table.ok()) << table.error().ToString();
  size_t paired = 0;
  for (const CompareRow& r : table->rows) {
    const std::string name(table->target->rows[r.target].name);
    const auto want = kMsprobeDataMapping.find(name);
    ASSERT_NE(want, kMsprobeDataMapping.end()) << name;
    if (want->second == "N/A") {
      EXPECT_FALSE(r.paired()) << name << " is unpaired in msprobe (no alignment under -lm)";
      EXPECT_EQ(r.result, Verdict::kUnmatched) << name;
      continue;
    }
    ASSERT_TRUE(r.paired()) << name;
    EXPECT_EQ(r.match, MatchKind::kMapped) << name;
    EXPECT_EQ(table->golden->rows[static_cast<size_t>(r.golden)].name, want->second);
    ++paired;
  }
  EXPECT_EQ(paired, 32u);  // every row msprobe's mapping does not send to N/A

  // -am with -lm: msprobe keys the target rows by the API mapping (its precedence) and joins as a
  // data mapping, so Mint.logical_or (Torch.logical_or) no longer finds Tensor.__or__.
  mapping.api_mapping = true;
  auto am = detail::CompareWithMapping(*t, *g, mapping, nullptr, {}, 0);
  ASSERT_TRUE(am.ok()) << am.error().ToString();
  for (const CompareRow& r : am->rows) {
    const std::string name(am->target->rows[r.target].name);
    if (name.rfind("Mint.logical_or.0.forward", 0) == 0) {
      EXPECT_FALSE(r.paired()) << name;
    }
    if (name.rfind("Mint.cos.0.forward", 0) == 0) {  // Mint -> Torch
      ASSERT_TRUE(r.paired()) << name;
      EXPECT_EQ(
          am->golden->rows[static_cast<size_t>(r.golden)].name.rfind("Torch.cos.0.forward", 0), 0u);
    }
  }
}

TEST_F(LayerMappingTest, ReadsTheYaml) {
  const LayerMapping m = Load(
      "Attention:\n  wq: q_proj\n  a.b: c\n"
      "Empty:\n"
      "Drop:\n  extra: ''\n"
      "Call:\n  x: y(arg)\n");
  ASSERT_EQ(m.classes.size(), 4u);
  EXPECT_EQ(m.classes.at("Call")[0].to, (std::vector<std::string>{"y"}));  // "(...)" dropped
  const auto& att = m.classes.at("Attention");
  ASSERT_EQ(att.size(), 2u);
  EXPECT_EQ(att[0].from, (std::vector<std::string>{"a", "b"}));  // longest first
  EXPECT_EQ(att[0].to, (std::vector<std::string>{"c"}));
  EXPECT_EQ(att[1].from, (std::vector<std::string>{"wq"}));
  EXPECT_TRUE(m.classes.at("Empty").empty());
  EXPECT_TRUE(m.classes.at("Drop")[0].to.empty());
  auto empty = LoadLayerMapping(WriteFile("empty.yaml", ""));
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->classes.empty());
}

TEST_F(LayerMappingTest, BadYamlIsReported) {
  auto missing = LoadLayerMapping(root_ / "none.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  auto broken = LoadLayerMapping(WriteFile("broken.yaml", "A:\n  b: [1, 2\n"));
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(broken.error().message().find("broken.yaml: line"), std::string::npos);
  auto list = LoadLayerMapping(WriteFile("list.yaml", "- a\n- b\n"));
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.error().message().find("expected a mapping of layer classes"), std::string::npos);
  // A data_mapping-style file: the class maps to a name, not to renames.
  auto flat = LoadLayerMapping(WriteFile("flat.yaml", "Attention: q_proj\n"));
  ASSERT_FALSE(flat.ok());
  EXPECT_EQ(flat.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(flat.error().message().find("flat.yaml: line 1: layer class Attention must map"),
            std::string::npos);
  auto dots = LoadLayerMapping(WriteFile("dots.yaml", "A:\n  x..y: z\n"));
  ASSERT_FALSE(dots.ok());
  EXPECT_NE(dots.error().message().find("dots.yaml: line 2: layer name 'x..y' has an empty part"),
            std::string::npos);
  auto nested = LoadLayerMapping(WriteFile("nested.yaml", "A:\n  x: {y: z}\n"));
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.error().code(), ErrorCode::kInvalidArgument);
}

TEST_F(LayerMappingTest, CompareDumpsNeedsConstructJsonOnBothSides) {
  WriteFile("t/dump.json", DumpText("mindspore", {"Cell.net.Dense.forward.0"}));
  WriteFile("t/construct.json", "{}");
  WriteFile("g/dump.json", DumpText("pytorch", {"Module.model.Linear.forward.0"}));
  LoadedMapping mapping;
  mapping.layer_mapping = true;
  auto table = detail::CompareWithMapping(*LocateDump(root_ / "t"), *LocateDump(root_ / "g"),
                                          mapping, nullptr, {}, 0);
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(table.error().message().find(
                "-lm/--layer_mapping needs the construct.json beside dump.json, and there is none"),
            std::string::npos);
  EXPECT_NE(table.error().message().find((root_ / "g").string()), std::string::npos);
  // An empty construct.json (and no stack.json): msprobe builds no layer mapping; a warning says
  // so and the names pair as without -lm.
  WriteFile("g/construct.json", "{}");
  mapping.layer_map = Load("TopLayer:\n  net: model\n");
  table = detail::CompareWithMapping(*LocateDump(root_ / "t"), *LocateDump(root_ / "g"), mapping,
                                     nullptr, {}, 0);
  ASSERT_TRUE(table.ok()) << table.error().ToString();
  bool warned = false;
  for (const std::string& w : table->warnings) {
    warned = warned || w.find("no layer mapping applies") != std::string::npos;
  }
  EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace numprobe
