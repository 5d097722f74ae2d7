// -lm (layer mapping): the YAML reader, the pairing of dump entries by their construct.json scopes
// with the target's layer names rewritten class by class (top-level names, ModuleList prefixes,
// names spanning two levels, APIs by their order inside a mapped module, backward modules), and
// the row pairing CompareDumps does with it. Expected pairs are worked out by hand from the names.
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "numprobe/compare.h"
#include "numprobe/compare_mapping.h"
#include "numprobe/dump.h"
#include "numprobe/dump_layout.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

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

DumpFile Parse(const std::string& text) {
  auto file = ParseDumpJson(std::span<const char>(text.data(), text.size()));
  EXPECT_TRUE(file.ok()) << file.error().ToString();
  return file.ok() ? std::move(*file) : DumpFile();
}

ConstructMap Construct(const std::vector<std::pair<std::string, std::string>>& parents) {
  ConstructMap c;
  for (const auto& [node, parent] : parents) c.SetParent(node, parent);
  return c;
}

class LayerMappingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("numprobe_lm_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

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

  fs::path root_;
};

// MindSpore target against PyTorch golden: every level of the names differs somewhere.
const std::vector<std::string> kMsEntries = {
    "Cell.network.Model.forward.0",                         // 0
    "Cell.network.layers.0.DecoderLayer.forward.0",         // 1
    "Cell.network.layers.0.attention.Attention.forward.0",  // 2
    "Cell.network.layers.0.attention.wq.Dense.forward.0",   // 3
    "Functional.matmul.3.forward",                          // 4: in layers.0.attention
    "Functional.matmul.4.forward",                          // 5: in layers.0.attention
    "Cell.network.layers.1.DecoderLayer.forward.0",         // 6
    "Cell.network.layers.1.attention.Attention.forward.0",  // 7
    "Functional.matmul.5.forward",                          // 8: in layers.1.attention
    "Cell.network.head.Dense.forward.0",                    // 9: not in the YAML, no partner
    "Cell.network.layers.0.attention.wq.Dense.backward.0",  // 10
};
const std::vector<std::pair<std::string, std::string>> kMsParents = {
    {"Cell.network.Model.forward.0", ""},
    {"Cell.network.layers.0.DecoderLayer.forward.0", "Cell.network.Model.forward.0"},
    {"Cell.network.layers.0.attention.Attention.forward.0",
     "Cell.network.layers.0.DecoderLayer.forward.0"},
    {"Cell.network.layers.0.attention.wq.Dense.forward.0",
     "Cell.network.layers.0.attention.Attention.forward.0"},
    {"Functional.matmul.3.forward", "Cell.network.layers.0.attention.Attention.forward.0"},
    {"Functional.matmul.4.forward", "Cell.network.layers.0.attention.Attention.forward.0"},
    {"Cell.network.layers.1.DecoderLayer.forward.0", "Cell.network.Model.forward.0"},
    {"Cell.network.layers.1.attention.Attention.forward.0",
     "Cell.network.layers.1.DecoderLayer.forward.0"},
    {"Functional.matmul.5.forward", "Cell.network.layers.1.attention.Attention.forward.0"},
    {"Cell.network.head.Dense.forward.0", "Cell.network.Model.forward.0"},
    // Backward scopes recorded in construct.json only (their entries were not dumped).
    {"Cell.network.layers.0.attention.wq.Dense.backward.0",
     "Cell.network.layers.0.attention.Attention.backward.0"},
    {"Cell.network.layers.0.attention.Attention.backward.0",
     "Cell.network.layers.0.DecoderLayer.backward.0"},
    {"Cell.network.layers.0.DecoderLayer.backward.0", "Cell.network.Model.backward.0"},
};
const std::vector<std::string> kPtEntries = {
    "Module.model.Model.forward.0",                    // 0
    "Module.model.h.0.Block.forward.0",                // 1
    "Module.model.h.0.attn.SelfAttention.forward.0",   // 2
    "Torch.matmul.10.forward",                         // 3: in h.0.attn
    "Module.model.h.0.attn.q_proj.Linear.forward.0",   // 4
    "Torch.matmul.11.forward",                         // 5: in h.0.attn
    "Module.model.h.1.Block.forward.0",                // 6
    "Module.model.h.1.attn.SelfAttention.forward.0",   // 7
    "Torch.matmul.12.forward",                         // 8: in h.1.attn
    "Module.model.lm_head.Linear.forward.0",           // 9
    "Module.model.h.0.attn.q_proj.Linear.backward.0",  // 10
};
const std::vector<std::pair<std::string, std::string>> kPtParents = {
    {"Module.model.Model.forward.0", ""},
    {"Module.model.h.0.Block.forward.0", "Module.model.Model.forward.0"},
    {"Module.model.h.0.attn.SelfAttention.forward.0", "Module.model.h.0.Block.forward.0"},
    {"Torch.matmul.10.forward", "Module.model.h.0.attn.SelfAttention.forward.0"},
    {"Module.model.h.0.attn.q_proj.Linear.forward.0",
     "Module.model.h.0.attn.SelfAttention.forward.0"},
    {"Torch.matmul.11.forward", "Module.model.h.0.attn.SelfAttention.forward.0"},
    {"Module.model.h.1.Block.forward.0", "Module.model.Model.forward.0"},
    {"Module.model.h.1.attn.SelfAttention.forward.0", "Module.model.h.1.Block.forward.0"},
    {"Torch.matmul.12.forward", "Module.model.h.1.attn.SelfAttention.forward.0"},
    {"Module.model.lm_head.Linear.forward.0", "Module.model.Model.forward.0"},
    {"Module.model.h.0.attn.q_proj.Linear.backward.0",
     "Module.model.h.0.attn.SelfAttention.backward.0"},
    {"Module.model.h.0.attn.SelfAttention.backward.0", "Module.model.h.0.Block.backward.0"},
    {"Module.model.h.0.Block.backward.0", "Module.model.Model.backward.0"},
};
constexpr const char* kMsToPtYaml =
    "TopLayer:\n  network: model\n"
    "Model:\n  layers: h\n"  // a ModuleList: "layers.0" becomes "h.0"
    "DecoderLayer:\n  attention: attn\n"
    "Attention:\n  wq: q_proj\n";

TEST_F(LayerMappingTest, PairsModulesAndTheApisInsideThemAcrossFrameworks) {
  const DumpFile t = Parse(DumpText("mindspore", kMsEntries));
  const DumpFile g = Parse(DumpText("pytorch", kPtEntries));
  const LayerMapping layers = Load(kMsToPtYaml);
  const std::vector<int64_t> partner =
      PairEntriesByLayers(t, Construct(kMsParents), g, Construct(kPtParents), layers);
  // Functional.matmul (MindSpore) is Torch.matmul (PyTorch); the k-th matmul inside a module
  // pairs with the k-th there, whatever the global call numbers (3, 4 against 10, 11). The
  // golden's matmul 10 runs before q_proj and the target's after wq: order only counts among
  // calls of the same API in the same scope.
  const std::vector<int64_t> expected = {0, 1, 2, 4, 3, 5, 6, 7, 8, -1, 10};
  EXPECT_EQ(partner, expected);
}

TEST_F(LayerMappingTest, WithoutRenamesOnlyEqualPathsPair) {
  const DumpFile t = Parse(DumpText("mindspore", kMsEntries));
  const DumpFile g = Parse(DumpText("pytorch", kPtEntries));
  // Every target path starts with "network", every golden one with "model": nothing pairs.
  const std::vector<int64_t> none =
      PairEntriesByLayers(t, Construct(kMsParents), g, Construct(kPtParents), LayerMapping());
  EXPECT_EQ(none, std::vector<int64_t>(kMsEntries.size(), -1));
  // Renaming only the top level pairs Model; head is lm_head on the golden side and everything
  // under layers is under h there.
  const LayerMapping top = Load("TopLayer:\n  network: model\n");
  const std::vector<int64_t> partner =
      PairEntriesByLayers(t, Construct(kMsParents), g, Construct(kPtParents), top);
  const std::vector<int64_t> expected = {0, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
  EXPECT_EQ(partner, expected);
}

TEST_F(LayerMappingTest, PrefixNamesTheTopLevelWhenThereIsNoTopLayer) {
  // msprobe's compare documentation keys the outermost names by the root class ("Cell").
  const DumpFile t = Parse(DumpText("mindspore", {"Cell.network.Model.forward.0"}));
  const DumpFile g = Parse(DumpText("pytorch", {"Module.model.Model.forward.0"}));
  const LayerMapping layers = Load("Cell:\n  network: model\n");
  EXPECT_EQ(PairEntriesByLayers(t, ConstructMap(), g, ConstructMap(), layers),
            std::vector<int64_t>{0});
}

TEST_F(LayerMappingTest, NamesSpanningLevelsAndTheLongestNameWins) {
  // msprobe's layer mapping example: the target has an extra language_model level.
  const std::vector<std::string> t_names = {
      "Module.module.GPTModel.forward.0",                                                  // 0
      "Module.module.language_model.TransformerLanguageModel.forward.0",                   // 1
      "Module.module.language_model.embedding.Embedding.forward.0",                        // 2
      "Module.module.language_model.encoder.layers.0.ParallelTransformerLayer.forward.0",  // 3
      "Module.module.language_model.encoder.layers.0.mlp.dense_h_to_4h.ColumnParallelLinear."
      "forward.0",  // 4
  };
  const std::string tlm = "Module.module.language_model.TransformerLanguageModel.forward.0";
  const std::string enc = "Module.module.language_model.encoder.ParallelTransformer.forward.0";
  const std::string mlp = "Module.module.language_model.encoder.layers.0.mlp.ParallelMLP.forward.0";
  const ConstructMap tc = Construct({{t_names[1], "Module.module.GPTModel.forward.0"},
                                     {t_names[2], tlm},
                                     {enc, tlm},
                                     {t_names[3], enc},
                                     {mlp, t_names[3]},
                                     {t_names[4], mlp}});
  const std::vector<std::string> g_names = {
      "Module.module.GPTModel.forward.0",                                  // 0
      "Module.module.embedding.LanguageModelEmbedding.forward.0",          // 1
      "Module.module.decoder.layers.0.TransformerLayer.forward.0",         // 2
      "Module.module.decoder.layers.0.mlp.linear_fc1.TELinear.forward.0",  // 3
  };
  const std::string block = "Module.module.decoder.TransformerBlock.forward.0";
  const std::string g_mlp = "Module.module.decoder.layers.0.mlp.MLP.forward.0";
  const ConstructMap gc = Construct({{g_names[1], g_names[0]},
                                     {block, g_names[0]},
                                     {g_names[2], block},
                                     {g_mlp, g_names[2]},
                                     {g_names[3], g_mlp}});
  const LayerMapping layers = Load(
      "GPTModel:\n"
      "  language_model: lm\n"  // shorter than the two below: used only where they do not fit
      "  language_model.embedding: embedding\n"
      "  language_model.encoder: decoder\n"
      "ParallelMLP:\n"
      "  dense_h_to_4h: linear_fc1\n");
  const DumpFile t = Parse(DumpText("pytorch", t_names));
  const DumpFile g = Parse(DumpText("pytorch", g_names));
  // TransformerLanguageModel becomes module.lm, which the golden lacks.
  const std::vector<int64_t> expected = {0, -1, 1, 2, 3};
  EXPECT_EQ(PairEntriesByLayers(t, tc, g, gc, layers), expected);
}

TEST_F(LayerMappingTest, ReadsTheYaml) {
  const LayerMapping m = Load(
      "Attention:\n  wq: q_proj\n  a.b: c\n"
      "Empty:\n"
      "Drop:\n  extra: ''\n");
  ASSERT_EQ(m.classes.size(), 3u);
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

TEST_F(LayerMappingTest, CompareDumpsPairsRowsOfMappedEntriesBySuffix) {
  // Tensor.add has the same name on both sides but not the same scope: -lm leaves it to the
  // exact-name pass.
  const std::vector<std::string> t_names = {"Cell.net.attention.wq.Dense.forward.0",
                                            "Functional.matmul.0.forward", "Tensor.add.0.forward"};
  const std::vector<std::string> g_names = {"Module.model.attn.q_proj.Linear.forward.0",
                                            "Torch.matmul.0.forward", "Tensor.add.0.forward"};
  WriteFile("t/dump.json", DumpText("mindspore", t_names));
  WriteFile("t/construct.json",
            R"({"Cell.net.attention.wq.Dense.forward.0": "Cell.net.attention.Attention.forward.0",
                "Cell.net.attention.Attention.forward.0": null,
                "Functional.matmul.0.forward": "Cell.net.attention.Attention.forward.0",
                "Tensor.add.0.forward": null})");
  WriteFile("g/dump.json", DumpText("pytorch", g_names));
  WriteFile("g/construct.json",
            R"({"Module.model.attn.q_proj.Linear.forward.0": "Module.model.attn.SelfAttn.forward.0",
                "Module.model.attn.SelfAttn.forward.0": null,
                "Torch.matmul.0.forward": "Module.model.attn.SelfAttn.forward.0",
                "Tensor.add.0.forward": "Module.model.attn.SelfAttn.forward.0"})");
  const DumpLocation t = *LocateDump(root_ / "t");
  const DumpLocation g = *LocateDump(root_ / "g");
  CompareOptions options;
  options.mapping.layer_mapping = true;
  options.mapping.align = false;
  auto pairs = [&]() {
    std::map<std::string, std::pair<std::string, MatchKind>> got;
    auto table = CompareDumps(t, g, options);
    EXPECT_TRUE(table.ok()) << table.error().ToString();
    if (!table.ok()) return got;
    for (const CompareRow& r : table->rows) {
      got[table->target->rows[r.target].name] = {
          r.paired() ? table->golden->rows[static_cast<size_t>(r.golden)].name : "N/A", r.match};
    }
    return got;
  };
  // "attention" sits between the outermost name and the Attention module's own names, so it
  // belongs to the top level: renaming only net and wq leaves model.attention.q_proj.
  options.mapping.layer_map = Load("TopLayer:\n  net: model\nAttention:\n  wq: q_proj\n");
  auto got = pairs();
  EXPECT_EQ(got["Cell.net.attention.wq.Dense.forward.0.input.0"].first, "N/A");
  EXPECT_EQ(got["Functional.matmul.0.forward.input.0"].first, "N/A");
  options.mapping.layer_map = Load(
      "TopLayer:\n  net.attention: model.attn\n"  // spans up to the Attention level
      "Attention:\n  wq: q_proj\n");
  got = pairs();
  using Pair = std::pair<std::string, MatchKind>;
  EXPECT_EQ(got["Cell.net.attention.wq.Dense.forward.0.input.0"],
            Pair("Module.model.attn.q_proj.Linear.forward.0.input.0", MatchKind::kMapped));
  EXPECT_EQ(got["Cell.net.attention.wq.Dense.forward.0.output.0"],
            Pair("Module.model.attn.q_proj.Linear.forward.0.output.0", MatchKind::kMapped));
  EXPECT_EQ(got["Functional.matmul.0.forward.output.0"],
            Pair("Torch.matmul.0.forward.output.0", MatchKind::kMapped));
  EXPECT_EQ(got["Tensor.add.0.forward.input.0"],
            Pair("Tensor.add.0.forward.input.0", MatchKind::kExact));
}

TEST_F(LayerMappingTest, LayerPairsSkipTheDtypeCheckAsDataMappingDoes) {
  WriteFile("t/dump.json",
            R"({"task": "statistics", "framework": "mindspore", "data": {)" +
                Fwd("Cell.net.Dense.forward.0", Tensor("Int64", 1), Tensor("Float32", 1)) + "}}");
  WriteFile("t/construct.json", R"({"Cell.net.Dense.forward.0": null})");
  WriteFile("g/dump.json", R"({"task": "statistics", "framework": "pytorch", "data": {)" +
                               Fwd("Module.model.Linear.forward.0", Tensor("torch.float32", 1),
                                   Tensor("torch.float32", 1)) +
                               "}}");
  WriteFile("g/construct.json", R"({"Module.model.Linear.forward.0": null})");
  CompareOptions options;
  options.mapping.layer_mapping = true;
  options.mapping.align = false;
  options.mapping.layer_map = Load("TopLayer:\n  net: model\n");
  auto table = CompareDumps(*LocateDump(root_ / "t"), *LocateDump(root_ / "g"), options);
  ASSERT_TRUE(table.ok()) << table.error().ToString();
  ASSERT_EQ(table->rows.size(), 2u);
  // Int64 against torch.float32: compared all the same, like a -dm pair.
  EXPECT_EQ(table->rows[0].match, MatchKind::kMapped);
  EXPECT_TRUE(table->rows[0].paired());
  EXPECT_EQ(table->rows[1].match, MatchKind::kMapped);
}

TEST_F(LayerMappingTest, CompareDumpsNeedsConstructJsonOnBothSides) {
  WriteFile("t/dump.json", DumpText("mindspore", {"Cell.net.Dense.forward.0"}));
  WriteFile("t/construct.json", "{}");
  WriteFile("g/dump.json", DumpText("pytorch", {"Module.model.Linear.forward.0"}));
  CompareOptions options;
  options.mapping.layer_mapping = true;
  auto table = CompareDumps(*LocateDump(root_ / "t"), *LocateDump(root_ / "g"), options);
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(table.error().message().find(
                "-lm/--layer_mapping needs the construct.json beside dump.json, and there is none"),
            std::string::npos);
  EXPECT_NE(table.error().message().find((root_ / "g").string()), std::string::npos);
  // An empty construct.json is read, with a warning: only top-level names can pair.
  WriteFile("g/construct.json", "{}");
  options.mapping.layer_map = Load("TopLayer:\n  net: model\n");
  table = CompareDumps(*LocateDump(root_ / "t"), *LocateDump(root_ / "g"), options);
  ASSERT_TRUE(table.ok()) << table.error().ToString();
  ASSERT_EQ(table->warnings.size(), 2u);
  EXPECT_NE(table->warnings[0].find("construct.json is empty"), std::string::npos);
  ASSERT_FALSE(table->rows.empty());
  ASSERT_GE(table->rows[0].golden, 0);
  EXPECT_EQ(table->golden->rows[static_cast<size_t>(table->rows[0].golden)].name,
            "Module.model.Linear.forward.0.input.0");
}

}  // namespace
}  // namespace numprobe
