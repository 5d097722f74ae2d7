// Pairing of diff sides: exact names, the PyTorch <-> MindSpore rules (with the shape check that
// keeps them from pairing the wrong tensor), the user map in both directions, and the LCS shape
// alignment; and the name map parser.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/diff.h"

namespace numprobe {
namespace {

TensorKey Key(std::string name, std::vector<int64_t> shape, DType dtype = DType::kF32) {
  return {std::move(name), std::move(shape), dtype};
}

struct Found {
  std::string a, b;
  PairRule rule;
  bool operator==(const Found&) const = default;
};

std::vector<Found> Pairs(const std::vector<TensorKey>& a, const std::vector<TensorKey>& b,
                         const Pairing& p) {
  std::vector<Found> out;
  for (const TensorPairIndex& x : p.pairs) out.push_back({a[x.a].name, b[x.b].name, x.rule});
  return out;
}

TEST(DiffPairingTest, CanonicalNames) {
  EXPECT_EQ(CanonicalParamName("features.1.gamma"), "features.1.weight");
  EXPECT_EQ(CanonicalParamName("bn.beta"), "bn.bias");
  EXPECT_EQ(CanonicalParamName("bn.moving_mean"), "bn.running_mean");
  EXPECT_EQ(CanonicalParamName("bn.moving_variance"), "bn.running_var");
  EXPECT_EQ(CanonicalParamName("tok.embedding_table"), "tok.weight");
  EXPECT_EQ(CanonicalParamName("act.a"), "act.weight");
  EXPECT_EQ(CanonicalParamName("block.bn3.bn2d.gamma"), "block.bn3.weight");  // BatchNorm3d
  EXPECT_EQ(CanonicalParamName("gamma"), "weight");
  EXPECT_EQ(CanonicalParamName("fc.weight"), "fc.weight");
  EXPECT_EQ(CanonicalParamName("data.alpha"), "data.alpha");  // only whole components
  EXPECT_TRUE(IsFrameworkOnlyName("bn.num_batches_tracked"));
  EXPECT_FALSE(IsFrameworkOnlyName("bn.my_num_batches_tracked"));
}

TEST(DiffPairingTest, ExactThenFrameworkRulesWithShapeCheck) {
  const std::vector<TensorKey> a = {Key("conv1d.weight", {8, 4, 3}),
                                    Key("bn.weight", {4}),
                                    Key("bn.running_var", {4}),
                                    Key("emb.weight", {10, 16}),
                                    Key("act.weight", {1}),
                                    Key("fc.weight", {5, 16}),
                                    Key("bn.num_batches_tracked", {}, DType::kI64)};
  const std::vector<TensorKey> b = {
      Key("conv1d.weight", {8, 4, 1, 3}),
      Key("bn.gamma", {4}),
      Key("bn.moving_variance", {4}),
      Key("emb.embedding_table", {10, 16}),
      Key("act.a", {1}),
      Key("fc.gamma", {16}),  // canonical "fc.weight" but another shape: must not pair
      Key("fc.weight", {5, 16})};
  const Pairing p = PairTensors(a, b);
  const std::vector<Found> want = {
      {"conv1d.weight", "conv1d.weight", PairRule::kExact},
      {"bn.weight", "bn.gamma", PairRule::kFramework},
      {"bn.running_var", "bn.moving_variance", PairRule::kFramework},
      {"emb.weight", "emb.embedding_table", PairRule::kFramework},
      {"act.weight", "act.a", PairRule::kFramework},
      {"fc.weight", "fc.weight", PairRule::kExact},
  };
  EXPECT_EQ(Pairs(a, b, p), want);
  ASSERT_EQ(p.only_a.size(), 1u);
  EXPECT_EQ(a[p.only_a[0]].name, "bn.num_batches_tracked");
  ASSERT_EQ(p.only_b.size(), 1u);
  EXPECT_EQ(b[p.only_b[0]].name, "fc.gamma");
  EXPECT_TRUE(p.warnings.empty());
}

TEST(DiffPairingTest, UserMapBothDirectionsAndUnknownEntriesWarn) {
  const std::vector<TensorKey> a = {Key("x", {2}), Key("y", {3}), Key("z", {4})};
  const std::vector<TensorKey> b = {Key("x", {2}), Key("why", {3}), Key("zed", {4})};
  NameMap map;
  map.names = {{"y", "why"}, {"zed", "z"}, {"x", "x"}, {"nope", "none"}};
  PairingOptions options;
  options.map = &map;
  const Pairing p = PairTensors(a, b, options);
  const std::vector<Found> want = {{"x", "x", PairRule::kExact},
                                   {"y", "why", PairRule::kUserMap},
                                   {"z", "zed", PairRule::kUserMap}};
  EXPECT_EQ(Pairs(a, b, p), want);
  EXPECT_TRUE(p.only_a.empty());
  EXPECT_TRUE(p.only_b.empty());
  ASSERT_EQ(p.warnings.size(), 1u);  // "x"->"x" was paired already: only "nope" is reported
  EXPECT_NE(p.warnings[0].find("1 name map entry matched no tensor pair"), std::string::npos);
  EXPECT_NE(p.warnings[0].find("'nope' -> 'none'"), std::string::npos);
}

TEST(DiffPairingTest, ShapeAlignmentIsAnLcsInFileOrder) {
  // B has an extra [7] in the middle and misses A's last [3, 3]; dtypes take part in the key.
  const std::vector<TensorKey> a = {Key("g0", {16, 4}), Key("g1", {16}), Key("g2", {8, 16}),
                                    Key("g3", {8}, DType::kF16), Key("g4", {3, 3})};
  const std::vector<TensorKey> b = {Key("0", {16, 4}), Key("1", {16}), Key("2", {7}),
                                    Key("3", {1, 8, 16}),  // size-1 dims do not matter
                                    Key("4", {8}, DType::kF32)};
  const Pairing p = PairTensors(a, b);  // auto: no name matched, so shapes are aligned
  const std::vector<Found> want = {{"g0", "0", PairRule::kShapeAligned},
                                   {"g1", "1", PairRule::kShapeAligned},
                                   {"g2", "3", PairRule::kShapeAligned}};
  EXPECT_EQ(Pairs(a, b, p), want);
  EXPECT_EQ(p.only_a, (std::vector<size_t>{3, 4}));
  EXPECT_EQ(p.only_b, (std::vector<size_t>{2, 4}));

  PairingOptions never;
  never.align = AlignMode::kNever;
  EXPECT_TRUE(PairTensors(a, b, never).pairs.empty());

  PairingOptions tiny;
  tiny.max_align_cells = 10;
  const Pairing skipped = PairTensors(a, b, tiny);
  EXPECT_TRUE(skipped.pairs.empty());
  ASSERT_EQ(skipped.warnings.size(), 1u);
  EXPECT_NE(skipped.warnings[0].find("shape alignment skipped: 5 x 5"), std::string::npos);
}

TEST(DiffPairingTest, AutoAlignmentStaysOffWhenNamesMatched) {
  const std::vector<TensorKey> a = {Key("w", {2}), Key("renamed", {3})};
  const std::vector<TensorKey> b = {Key("w", {2}), Key("other", {3})};
  const Pairing auto_p = PairTensors(a, b);
  EXPECT_EQ(auto_p.pairs.size(), 1u);
  EXPECT_EQ(auto_p.only_a, (std::vector<size_t>{1}));
  EXPECT_EQ(auto_p.only_b, (std::vector<size_t>{1}));
  PairingOptions always;
  always.align = AlignMode::kAlways;
  const Pairing p = PairTensors(a, b, always);
  const std::vector<Found> want = {{"w", "w", PairRule::kExact},
                                   {"renamed", "other", PairRule::kShapeAligned}};
  EXPECT_EQ(Pairs(a, b, p), want);
}

TEST(DiffPairingTest, ParsesBothMapForms) {
  auto plain = ParseNameMap(R"({"a.weight": "a.gamma", "b": "c"})");
  ASSERT_TRUE(plain.has_value()) << plain.error().message();
  EXPECT_EQ(plain->names.size(), 2u);
  EXPECT_EQ(plain->names[0].first, "a.weight");
  EXPECT_EQ(plain->names[0].second, "a.gamma");
  EXPECT_EQ(plain->value_transforms, 0u);

  auto ts =
      ParseNameMap(R"([{"c.weight": "c.weight"}, {"c.weight": "mod.expand_dims", "d": "f"}])");
  ASSERT_TRUE(ts.has_value()) << ts.error().message();
  EXPECT_EQ(ts->names.size(), 1u);
  EXPECT_EQ(ts->value_transforms, 2u);

  auto broken = ParseNameMap(R"({"a": )");
  ASSERT_FALSE(broken.has_value());
  EXPECT_EQ(broken.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(broken.error().message().find("malformed JSON at byte"), std::string::npos);

  auto number = ParseNameMap(R"({"a": 3})");
  ASSERT_FALSE(number.has_value());
  EXPECT_EQ(number.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(number.error().message().find("map entry 'a': the value is not a string"),
            std::string::npos);

  auto scalar = ParseNameMap("[1, 2]");
  ASSERT_FALSE(scalar.has_value());
  EXPECT_EQ(scalar.error().code(), ErrorCode::kCorrupt);
}

}  // namespace
}  // namespace numprobe
