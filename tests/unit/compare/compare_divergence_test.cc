// First-divergence rules on small hand-written statistics dumps: dtype-aware tolerances, zero
// golden values, NaN on both sides, carried versus introduced error, error growth, forward before
// backward, and module entries not listed twice.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "numprobe/compare.h"
#include "numprobe/divergence.h"
#include "numprobe/dump_layout.h"

#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

// One tensor leaf with Max/Min/Mean/Norm all derived from a single scale factor `v`.
std::string Leaf(const std::string& dtype, double max, double min, double mean, double norm) {
  auto num = [](double x) {
    if (std::isnan(x)) return std::string("NaN");
    if (std::isinf(x)) return std::string(x > 0 ? "Infinity" : "-Infinity");
    return std::to_string(x);
  };
  return R"({"type": "torch.Tensor", "dtype": ")" + dtype + R"(", "shape": [8], "Max": )" +
         num(max) + R"(, "Min": )" + num(min) + R"(, "Mean": )" + num(mean) + R"(, "Norm": )" +
         num(norm) + R"(, "requires_grad": false})";
}

std::string Forward(const std::string& name, const std::string& in, const std::string& out) {
  return "\"" + name + R"(": {"input_args": [)" + in + R"(], "input_kwargs": {}, "output": [)" +
         out + "]}";
}

std::string Backward(const std::string& name, const std::string& in, const std::string& out) {
  return "\"" + name + R"(": {"input": [)" + in + R"(], "output": [)" + out + "]}";
}

class CompareDivergenceTest : public ::testing::Test {
 protected:
  DivergenceReport Analyze(const std::vector<std::string>& target,
                           const std::vector<std::string>& golden) {
    auto write = [&](const std::string& side, const std::vector<std::string>& entries) {
      fs::create_directories(root_ / side);
      std::string data;
      for (const std::string& e : entries) data += (data.empty() ? "" : ", ") + e;
      std::ofstream(root_ / side / "dump.json")
          << R"({"task": "statistics", "level": "L1", "data": {)" << data << "}}";
      return *LocateDump(root_ / side);
    };
    auto table = CompareDumps(write("t", target), write("g", golden));
    EXPECT_TRUE(table.ok()) << table.error().ToString();
    table_ = std::move(*table);
    return FindDivergence(table_, nullptr);
  }

  test::TempDir temp_{"numprobe_div"};
  const fs::path root_ = temp_.path();
  CompareTable table_;
};

const std::string kIn = Leaf("torch.float32", 1.0, -1.0, 0.1, 2.0);

TEST_F(CompareDivergenceTest, Bf16RoundingIsWithinToleranceButTheSameErrorInF32IsNot) {
  // 0.3% off: below 4 bf16 unit roundoffs (1.56%), far above f32's.
  const std::string golden_out = Leaf("torch.float32", 2.0, -2.0, 0.2, 4.0);
  const std::string off_bf16 = Leaf("torch.bfloat16", 2.006, -2.0, 0.2, 4.0);
  const std::string off_f32 = Leaf("torch.float32", 2.006, -2.0, 0.2, 4.0);
  auto bf16 = Analyze({Forward("Functional.a.0.forward", kIn, off_bf16)},
                      {Forward("Functional.a.0.forward", kIn, golden_out)});
  EXPECT_FALSE(bf16.first.has_value());
  EXPECT_EQ(bf16.rows_over_tolerance, 0);
  const CompareRow& row = table_.rows[1];
  EXPECT_NEAR(row.tolerance, 4 * std::ldexp(1.0, -8), 1e-15);  // bf16, the lower precision
  EXPECT_NEAR(row.error, 0.006 / 2.006, 1e-12);  // the Max difference relative to the range
  auto f32 = Analyze({Forward("Functional.a.0.forward", kIn, off_f32)},
                     {Forward("Functional.a.0.forward", kIn, golden_out)});
  ASSERT_TRUE(f32.first.has_value());
  EXPECT_EQ(f32.first->op_name, "Functional.a.0.forward");
  EXPECT_EQ(f32.first->input_error, 0.0);
}

TEST_F(CompareDivergenceTest, ZeroGoldenTensorAgainstNonZeroTargetDiverges) {
  const std::string zero = Leaf("torch.float32", 0.0, 0.0, 0.0, 0.0);
  const std::string tiny = Leaf("torch.float32", 1e-3, 0.0, 1e-4, 2e-3);
  auto r = Analyze({Forward("Functional.z.0.forward", kIn, tiny)},
                   {Forward("Functional.z.0.forward", kIn, zero)});
  ASSERT_TRUE(r.first.has_value());
  EXPECT_EQ(r.first->output_error, 1.0);  // relative to the target's own magnitude
  // All-zero on both sides agrees.
  auto same = Analyze({Forward("Functional.z.0.forward", kIn, zero)},
                      {Forward("Functional.z.0.forward", kIn, zero)});
  EXPECT_FALSE(same.first.has_value());
}

TEST_F(CompareDivergenceTest, NanOnBothSidesIsNotADivergenceNanOnOneSideIs) {
  const std::string nan = Leaf("torch.float32", NAN, NAN, NAN, NAN);
  const std::string finite = Leaf("torch.float32", 1.0, -1.0, 0.0, 1.0);
  auto both = Analyze({Forward("Functional.n.0.forward", kIn, nan)},
                      {Forward("Functional.n.0.forward", kIn, nan)});
  EXPECT_FALSE(both.first.has_value());
  auto one = Analyze({Forward("Functional.n.0.forward", kIn, nan)},
                     {Forward("Functional.n.0.forward", kIn, finite)});
  ASSERT_TRUE(one.first.has_value());
  EXPECT_TRUE(one.first->non_finite);
  EXPECT_TRUE(std::isinf(one.first->growth));
}

TEST_F(CompareDivergenceTest, CarriedErrorIsNotIntroducedGrowthIs) {
  // Op a's input is off by 1e-3 (the data differ); b passes it on; c multiplies it by ~30.
  const std::string x_t = Leaf("torch.float32", 1.001, -1.0, 0.1, 2.0);
  const std::string y_t = Leaf("torch.float32", 2.002, -2.0, 0.2, 4.0);
  const std::string y_g = Leaf("torch.float32", 2.0, -2.0, 0.2, 4.0);
  const std::string z_t = Leaf("torch.float32", 2.06, -2.0, 0.2, 4.0);
  auto r = Analyze(
      {Forward("Functional.a.0.forward", x_t, y_t), Forward("Functional.b.0.forward", y_t, y_t),
       Forward("Functional.c.0.forward", y_t, z_t)},
      {Forward("Functional.a.0.forward", kIn, y_g), Forward("Functional.b.0.forward", y_g, y_g),
       Forward("Functional.c.0.forward", y_g, y_g)});
  ASSERT_TRUE(r.first.has_value());
  EXPECT_EQ(r.first->op_name, "Functional.c.0.forward");
  EXPECT_NEAR(r.first->growth, (0.06 / 2.06) / (0.002 / 2.002), 1e-9);
  EXPECT_EQ(r.first_over_tolerance, "Functional.a.0.forward");
}

TEST_F(CompareDivergenceTest, ForwardOpsComeBeforeBackwardOpsWhateverTheDumpOrder) {
  const std::string g = Leaf("torch.float32", 2.0, -2.0, 0.2, 4.0);
  const std::string t = Leaf("torch.float32", 2.5, -2.0, 0.2, 4.0);
  const std::string gb = Leaf("torch.float32", 3.0, -2.0, 0.2, 4.0);
  const std::string tb = Leaf("torch.float32", 3.9, -2.0, 0.2, 4.0);
  auto r = Analyze(
      {Backward("Functional.b.0.backward", kIn, tb), Forward("Tensor.add_.0.forward", kIn, t)},
      {Backward("Functional.b.0.backward", kIn, gb), Forward("Tensor.add_.0.forward", kIn, g)});
  ASSERT_TRUE(r.first.has_value());
  EXPECT_EQ(r.first->op_name, "Tensor.add_.0.forward");
  ASSERT_EQ(r.next.size(), 1u);
  EXPECT_TRUE(r.next[0].backward);
}

TEST_F(CompareDivergenceTest, AModuleRepeatingItsApisOutputIsNotListedTwice) {
  const std::string g = Leaf("torch.float32", 2.0, -2.0, 0.2, 4.0);
  const std::string t = Leaf("torch.float32", 2.5, -2.0, 0.2, 4.0);
  auto r =
      Analyze({Forward("Functional.f.0.forward", kIn, t), Forward("Module.m.M.forward.0", kIn, t)},
              {Forward("Functional.f.0.forward", kIn, g), Forward("Module.m.M.forward.0", kIn, g)});
  ASSERT_TRUE(r.first.has_value());
  EXPECT_EQ(r.first->op_name, "Functional.f.0.forward");
  EXPECT_TRUE(r.next.empty());
}

TEST_F(CompareDivergenceTest, IntegerTensorsMustMatchExactly) {
  const std::string g = Leaf("torch.int64", 8, 6, 7, 12);
  const std::string t = Leaf("torch.int64", 8, 5, 7, 12);
  auto r = Analyze({Forward("Functional.argmax.0.forward", kIn, t)},
                   {Forward("Functional.argmax.0.forward", kIn, g)});
  ASSERT_TRUE(r.first.has_value());
  EXPECT_EQ(r.first->tolerance, 0.0);
}

TEST_F(CompareDivergenceTest, Md5ModeNamesTheFirstOpWhoseOutputChecksumChanges) {
  auto leaf = [](const std::string& md5) {
    return R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [8], "requires_grad": false, "md5": ")" +
           md5 + R"("})";
  };
  auto r = Analyze({Forward("Functional.a.0.forward", leaf("00000001"), leaf("00000002")),
                    Forward("Functional.b.0.forward", leaf("00000002"), leaf("0000000f")),
                    Forward("Functional.c.0.forward", leaf("0000000f"), leaf("0000001f"))},
                   {Forward("Functional.a.0.forward", leaf("00000001"), leaf("00000002")),
                    Forward("Functional.b.0.forward", leaf("00000002"), leaf("00000003")),
                    Forward("Functional.c.0.forward", leaf("00000003"), leaf("00000004"))});
  EXPECT_EQ(table_.mode, CompareMode::kMd5);
  ASSERT_TRUE(r.first.has_value());
  EXPECT_EQ(r.first->op_name, "Functional.b.0.forward");
  EXPECT_TRUE(r.next.empty());  // c only passes the difference on
}

}  // namespace
}  // namespace numprobe
