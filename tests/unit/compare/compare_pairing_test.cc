// Pairing modes on small hand-written dumps: -fm, -dm, -cm (with and without a YAML), -am (the
// built-in table, Mint, a user YAML of argument positions), cross-framework dtypes, and
// numprobe's alignment of rows whose call counts drifted.
#include <filesystem>
#include <fstream>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "numprobe/compare.h"
#include "numprobe/dump_layout.h"

#include "compare/compare_internal.h"
#include "compare/loaded_mapping.h"
#include "testing/dump_builder.h"
#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;
using detail::LoadApiArgMappings;
using detail::LoadedMapping;
using detail::LoadStringMap;

std::string Tensor(const std::string& dtype, double max, const std::string& shape = "[2]") {
  return R"({"type": "torch.Tensor", "dtype": ")" + dtype + R"(", "shape": )" + shape +
         R"(, "Max": )" + std::to_string(max) +
         R"(, "Min": 0.0, "Mean": 0.5, "Norm": 1.0, "requires_grad": false})";
}

std::string Fwd(const std::string& name, const std::string& in, const std::string& out) {
  return test::ForwardEntry(name, in, out);
}

class ComparePairingTest : public ::testing::Test {
 protected:
  DumpLocation Write(const std::string& side, const std::vector<std::string>& entries,
                     const std::string& framework = "pytorch") {
    return *LocateDump(test::WriteDump(root_ / side, {.framework = framework}, entries));
  }

  fs::path WriteFile(const std::string& name, const std::string& text) {
    return temp_.Write(name, text);
  }

  // Target row name -> golden row name ("N/A" when unpaired), and the match kinds.
  std::map<std::string, std::string> Pairs(const DumpLocation& t, const DumpLocation& g,
                                           const LoadedMapping& mapping,
                                           std::map<std::string, MatchKind>* kinds = nullptr) {
    auto table = detail::CompareWithMapping(t, g, mapping, nullptr, {}, 0);
    EXPECT_TRUE(table.ok()) << table.error().ToString();
    std::map<std::string, std::string> out;
    if (!table.ok()) return out;
    for (const CompareRow& r : table->rows) {
      const std::string name(table->target->rows[r.target].name);
      out[name] = r.paired() ? table->golden->rows[static_cast<size_t>(r.golden)].name : "N/A";
      if (kinds != nullptr) (*kinds)[name] = r.match;
    }
    return out;
  }

  test::TempDir temp_{"numprobe_pair"};
  const fs::path root_ = temp_.path();
};

TEST_F(ComparePairingTest, FuzzyMatchIgnoresCallCounts) {
  const auto t = Write("t", {Fwd("Functional.relu.5.forward", Tensor("torch.float32", 1),
                                 Tensor("torch.float32", 1))});
  const auto g = Write("g", {Fwd("Functional.relu.0.forward", Tensor("torch.float32", 1),
                                 Tensor("torch.float32", 1))});
  LoadedMapping exact;
  exact.align = false;
  EXPECT_EQ(Pairs(t, g, exact)["Functional.relu.5.forward.input.0"], "N/A");
  LoadedMapping fuzzy;
  fuzzy.fuzzy = true;
  fuzzy.align = false;
  std::map<std::string, MatchKind> kinds;
  auto p = Pairs(t, g, fuzzy, &kinds);
  EXPECT_EQ(p["Functional.relu.5.forward.input.0"], "Functional.relu.0.forward.input.0");
  EXPECT_EQ(p["Functional.relu.5.forward.output.0"], "Functional.relu.0.forward.output.0");
  EXPECT_EQ(kinds["Functional.relu.5.forward.output.0"], MatchKind::kFuzzy);
}

TEST_F(ComparePairingTest, DataMappingYamlPairsNamedRowsWithoutTheDtypeCheck) {
  const auto t = Write("t", {Fwd("Functional.mine.0.forward", Tensor("torch.int64", 1),
                                 Tensor("torch.float32", 1))});
  const auto g = Write("g", {Fwd("Functional.theirs.0.forward", Tensor("torch.float32", 1),
                                 Tensor("torch.float32", 1))});
  auto map = LoadStringMap(
      WriteFile("dm.yaml",
                "Functional.mine.0.forward.input.0: Functional.theirs.0.forward.input.0\n"
                "Functional.mine.0.forward.output.0: Functional.theirs.0.forward.output.0\n"));
  ASSERT_TRUE(map.ok()) << map.error().ToString();
  LoadedMapping m;
  m.data_mapping = true;
  m.data_map = *map;
  m.align = false;
  auto p = Pairs(t, g, m);
  EXPECT_EQ(p["Functional.mine.0.forward.input.0"],
            "Functional.theirs.0.forward.input.0");  // int64 vs f32
  EXPECT_EQ(p["Functional.mine.0.forward.output.0"], "Functional.theirs.0.forward.output.0");
}

// msprobe joins -dm rows on the mapped name, so two target rows may pair with one golden row.
TEST_F(ComparePairingTest, DataMappingMayMapTwoTargetRowsToOneGoldenRow) {
  const std::string x = Tensor("torch.float32", 1);
  const auto t =
      Write("t", {Fwd("Functional.a.0.forward", x, x), Fwd("Functional.b.0.forward", x, x)});
  const auto g = Write("g", {Fwd("Functional.c.0.forward", x, x)});
  auto map = LoadStringMap(
      WriteFile("dm.yaml",
                "Functional.a.0.forward.output.0: Functional.c.0.forward.output.0\n"
                "Functional.b.0.forward.output.0: Functional.c.0.forward.output.0\n"));
  ASSERT_TRUE(map.ok()) << map.error().ToString();
  LoadedMapping m;
  m.data_mapping = true;
  m.data_map = *map;
  m.align = false;
  std::map<std::string, MatchKind> kinds;
  auto p = Pairs(t, g, m, &kinds);
  EXPECT_EQ(p["Functional.a.0.forward.output.0"], "Functional.c.0.forward.output.0");
  EXPECT_EQ(p["Functional.b.0.forward.output.0"], "Functional.c.0.forward.output.0");
  EXPECT_EQ(kinds["Functional.b.0.forward.output.0"], MatchKind::kMapped);
  EXPECT_EQ(p["Functional.a.0.forward.input.0"], "N/A");  // not named in the file
}

TEST_F(ComparePairingTest, CellMappingRenamesCellsToModules) {
  const std::string x = Tensor("Float32", 1);
  const auto t =
      Write("t", {Fwd("Cell.fc1.Dense.forward.0", x, x), Fwd("Cell.relu.ReLU.forward.0", x, x)},
            "mindspore");
  const std::string y = Tensor("torch.float32", 1);
  const auto g = Write(
      "g", {Fwd("Module.fc1.Linear.forward.0", y, y), Fwd("Module.relu.ReLU.forward.0", y, y)});
  LoadedMapping plain;
  plain.cell_mapping = true;
  plain.align = false;
  auto p = Pairs(t, g, plain);
  EXPECT_EQ(p["Cell.relu.ReLU.forward.0.input.0"], "Module.relu.ReLU.forward.0.input.0");
  EXPECT_EQ(p["Cell.fc1.Dense.forward.0.input.0"], "N/A");
  auto map = LoadStringMap(WriteFile("cm.yaml", "fc1.Dense: fc1.Linear\n"));
  ASSERT_TRUE(map.ok()) << map.error().ToString();
  LoadedMapping with_yaml = plain;
  with_yaml.cell_map = *map;
  auto q = Pairs(t, g, with_yaml);
  // Float32 against torch.float32 compares across frameworks.
  EXPECT_EQ(q["Cell.fc1.Dense.forward.0.output.0"], "Module.fc1.Linear.forward.0.output.0");
}

TEST_F(ComparePairingTest, ApiMappingUsesTheBuiltInTableMintAndUserYaml) {
  const std::string x = Tensor("Float32", 1);
  const auto t = Write("t",
                       {Fwd("Functional.abs.0.forward", x, x), Fwd("Mint.add.0.forward", x, x),
                        Fwd("Functional.my_attention.0.forward", x + ", " + x, x)},
                       "mindspore");
  const std::string y = Tensor("torch.float32", 1);
  const auto g = Write("g", {Fwd("Torch.abs.0.forward", y, y), Fwd("Torch.add.0.forward", y, y),
                             Fwd("NPU.npu_attention.0.forward", y + ", " + y, y)});
  auto args = LoadApiArgMappings(
      WriteFile("am.yaml",
                "- ms_api: Functional.my_attention\n  pt_api: NPU.npu_attention\n"
                "  ms_args: [0, 1]\n  pt_args: [1, 0]\n  ms_outputs: [0]\n  pt_outputs: [0]\n"));
  ASSERT_TRUE(args.ok()) << args.error().ToString();
  LoadedMapping m;
  m.api_mapping = true;
  m.api_args = *args;
  m.align = false;
  auto p = Pairs(t, g, m);
  EXPECT_EQ(p["Functional.abs.0.forward.input.0"], "Torch.abs.0.forward.input.0");
  EXPECT_EQ(p["Mint.add.0.forward.output.0"], "Torch.add.0.forward.output.0");
  EXPECT_EQ(p["Functional.my_attention.0.forward.input.0"], "NPU.npu_attention.0.forward.input.1");
  EXPECT_EQ(p["Functional.my_attention.0.forward.input.1"], "NPU.npu_attention.0.forward.input.0");
  EXPECT_EQ(p["Functional.my_attention.0.forward.output.0"],
            "NPU.npu_attention.0.forward.output.0");
}

// Rows pair by name in order while both dumps list the same names; after the first difference
// (the golden run has an extra op, and lists relu.1 before add.0), by name wherever they are.
TEST_F(ComparePairingTest, PairsByNameAfterTheRowsStopAgreeing) {
  const std::string a = Tensor("torch.float32", 1);
  const auto t =
      Write("t", {Fwd("Functional.linear.0.forward", a, a), Fwd("Functional.relu.0.forward", a, a),
                  Fwd("Functional.add.0.forward", a, a), Fwd("Functional.relu.1.forward", a, a),
                  Fwd("Functional.mul.0.forward", a, a), Fwd("Functional.tanh.0.forward", a, a)});
  const auto g =
      Write("g", {Fwd("Functional.linear.0.forward", a, a), Fwd("Functional.relu.0.forward", a, a),
                  Fwd("Functional.sub.0.forward", a, a), Fwd("Functional.relu.1.forward", a, a),
                  Fwd("Functional.add.0.forward", a, a), Fwd("Functional.mul.0.forward", a, a)});
  LoadedMapping none;
  none.align = false;
  const auto p = Pairs(t, g, none);
  ASSERT_EQ(p.size(), 12U);
  for (const std::string op : {"linear.0", "relu.0", "add.0", "relu.1", "mul.0"}) {
    for (const std::string row : {".forward.input.0", ".forward.output.0"}) {
      EXPECT_EQ(p.at("Functional." + op + row), "Functional." + op + row);
    }
  }
  EXPECT_EQ(p.at("Functional.tanh.0.forward.input.0"), "N/A");
  EXPECT_EQ(p.at("Functional.tanh.0.forward.output.0"), "N/A");
}

TEST_F(ComparePairingTest, AlignmentOnlyTakesRowsLeftUnpairedByName) {
  // The target ran one extra relu before the rest, so every later relu's call count is one higher.
  const std::string a = Tensor("torch.float32", 1);
  const std::string b = Tensor("torch.float32", 2, "[4]");
  const auto t =
      Write("t", {Fwd("Functional.linear.0.forward", a, a), Fwd("Functional.relu.0.forward", b, b),
                  Fwd("Functional.relu.1.forward", a, a), Fwd("Functional.relu.2.forward", b, b),
                  Fwd("Functional.linear.1.forward", a, a)});
  const auto g = Write(
      "g", {Fwd("Functional.linear.0.forward", a, a), Fwd("Functional.relu.0.forward", a, a),
            Fwd("Functional.relu.1.forward", b, b), Fwd("Functional.linear.1.forward", a, a)});
  LoadedMapping none;
  none.align = false;
  auto p0 = Pairs(t, g, none);
  EXPECT_EQ(p0["Functional.relu.1.forward.input.0"],
            "Functional.relu.1.forward.input.0");  // wrong shape pairing by name
  LoadedMapping aligned;
  std::map<std::string, MatchKind> kinds;
  auto p = Pairs(t, g, aligned, &kinds);
  // Names still pair first; the alignment only takes rows left unpaired.
  EXPECT_EQ(p["Functional.relu.0.forward.input.0"], "Functional.relu.0.forward.input.0");
  EXPECT_EQ(p["Functional.relu.2.forward.input.0"], "N/A");  // nothing left of its shape and kind
  EXPECT_EQ(p["Functional.linear.1.forward.output.0"], "Functional.linear.1.forward.output.0");
  EXPECT_EQ(kinds["Functional.linear.1.forward.output.0"], MatchKind::kExact);
}

TEST_F(ComparePairingTest, AlignmentRecoversRowsBetweenAnchors) {
  const std::string a = Tensor("torch.float32", 1);
  const std::string b = Tensor("torch.float32", 2, "[4]");
  // Golden numbers its gelu calls from 3 (an earlier step used 0..2); target from 0.
  const auto t = Write(
      "t", {Fwd("Functional.linear.0.forward", a, a), Fwd("Functional.gelu.0.forward", b, b),
            Fwd("Functional.gelu.1.forward", a, a), Fwd("Functional.linear.1.forward", a, a)});
  const auto g = Write(
      "g", {Fwd("Functional.linear.0.forward", a, a), Fwd("Functional.gelu.3.forward", b, b),
            Fwd("Functional.gelu.4.forward", a, a), Fwd("Functional.linear.1.forward", a, a)});
  std::map<std::string, MatchKind> kinds;
  auto p = Pairs(t, g, LoadedMapping{}, &kinds);
  EXPECT_EQ(p["Functional.gelu.0.forward.input.0"], "Functional.gelu.3.forward.input.0");
  EXPECT_EQ(p["Functional.gelu.1.forward.output.0"], "Functional.gelu.4.forward.output.0");
  EXPECT_EQ(kinds["Functional.gelu.1.forward.output.0"], MatchKind::kAligned);
  LoadedMapping off;
  off.align = false;
  EXPECT_EQ(Pairs(t, g, off)["Functional.gelu.0.forward.input.0"], "N/A");
}

// Compare keys: a row whose key is its own name is referred to (no copy of the name); a
// renumbered backward call holds a key of its own; an entry msprobe cannot name has no key.
TEST(CompareKeysTest, KeysReferToRowNamesUnlessRenumbered) {
  const std::string json =
      std::string(R"({"task": "statistics", "data": {)") +
      R"("Functional.relu.0.forward": {"input_args": [)" + Tensor("torch.float32", 1) +
      R"(], "output": [)" + Tensor("torch.float32", 2) + "]}, " +
      R"("Functional.relu.0.backward": {"input": [)" + Tensor("torch.float32", 3) + "]}, " +
      R"("Functional.relu.7.backward": {"input": [)" + Tensor("torch.float32", 4) + "]}, " +
      R"("nameless": {"input_args": [)" + Tensor("torch.float32", 5) + "]}}}";
  auto file = ParseDumpJson(std::span<const char>(json.data(), json.size()));
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  ASSERT_EQ(file->rows.size(), 5U);
  detail::RowKeys keys = detail::CompareKeys(*file, true, false);
  ASSERT_EQ(keys.size(), 5U);
  for (size_t r = 0; r < 4; ++r) ASSERT_TRUE(keys.has(r)) << r;
  EXPECT_FALSE(keys.has(4));
  // Forward rows and a backward call already numbered by its order: the row's own name.
  EXPECT_EQ(keys[0], "Functional.relu.0.forward.input.0");
  EXPECT_EQ(keys[0].data(), file->rows[0].name.data());
  EXPECT_EQ(keys[1], "Functional.relu.0.forward.output.0");
  EXPECT_EQ(keys[1].data(), file->rows[1].name.data());
  EXPECT_EQ(keys[2], "Functional.relu.0.backward.input.0");
  EXPECT_EQ(keys[2].data(), file->rows[2].name.data());
  // The second backward call of relu is renumbered 1: a key of its own.
  EXPECT_EQ(keys[3], "Functional.relu.1.backward.input.0");
  EXPECT_EQ(file->rows[3].name, "Functional.relu.7.backward.input.0");
  // Without renumbering (-fm), every parsed row's key is its name.
  const detail::RowKeys plain = detail::CompareKeys(*file, false, false);
  EXPECT_EQ(plain[3].data(), file->rows[3].name.data());
  EXPECT_FALSE(plain.has(4));
  // Setting a key again replaces it; setting a row's own name refers to the name again.
  keys.Set(3, "mapped");
  EXPECT_EQ(keys[3], "mapped");
  keys.Set(2, "other");
  EXPECT_EQ(keys[2], "other");
  EXPECT_EQ(keys[3], "mapped");
  keys.Set(3, std::string(file->rows[3].name));
  EXPECT_EQ(keys[3].data(), file->rows[3].name.data());
  EXPECT_EQ(keys[2], "other");
}

TEST_F(ComparePairingTest, BadMappingFilesAreReported) {
  auto missing = LoadStringMap(root_ / "none.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  auto list = LoadStringMap(WriteFile("list.yaml", "- a\n- b\n"));
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.error().code(), ErrorCode::kInvalidArgument);
  auto broken = LoadStringMap(WriteFile("broken.yaml", "a: [1, 2\n"));
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.error().message().find("broken.yaml: line"), std::string::npos);
  auto nested = LoadStringMap(WriteFile("nested.yaml", "a: {b: c}\n"));
  ASSERT_FALSE(nested.ok());
  auto api = LoadApiArgMappings(WriteFile("api.yaml", "- pt_api: x\n"));
  ASSERT_FALSE(api.ok());
  EXPECT_NE(api.error().message().find("ms_api and pt_api are required"), std::string::npos);
}

}  // namespace
}  // namespace numprobe
