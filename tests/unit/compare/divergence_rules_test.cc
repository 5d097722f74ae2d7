// The first-divergence rules of issue 12 on small hand-built dumps: a precision change is a birth
// (a narrowed input, an autocast output, a cast recorded in dump.json or in casts.json), a
// uniformly lower-precision run is not a divergence, a differing argument is named with both
// values, a differing parameter or data batch is a source, a tensor changed between the op that
// produced it and the next recorded op is named with the cast that did it, a Mean overflowing
// its dtype is not a NaN/Inf input, and there is always an answer (the fallback) when a row is
// over its tolerance. Also the helpers: the user's stack frame, argument names, producers.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "numprobe/compare.h"
#include "numprobe/divergence.h"
#include "numprobe/dump_layout.h"

#include "compare/arguments.h"
#include "compare/dataflow.h"
#include "compare/user_frame.h"
#include "testing/dump_builder.h"
#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

// A tensor leaf: dtype ("float32" -> "torch.float32") and Max/Min/Mean/Norm.
std::string T(const std::string& dtype, double max, double min, double mean, double norm,
              const std::vector<int64_t>& shape = {8}) {
  return test::TensorLeaf("torch." + dtype, shape, max, min, mean, norm);
}

// A plain argument: {"type": "float", "value": 1e-05}.
std::string Arg(const std::string& type, const std::string& value) {
  return R"({"type": ")" + type + R"(", "value": )" + value + "}";
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string Fwd(const std::string& name, const std::vector<std::string>& args,
                const std::vector<std::string>& outs,
                const std::vector<std::pair<std::string, std::string>>& kwargs = {}) {
  std::string kw;
  for (const auto& [k, v] : kwargs) kw += (kw.empty() ? "\"" : ", \"") + k + "\": " + v;
  return "\"" + name + R"(": {"input_args": [)" + Join(args) + R"(], "input_kwargs": {)" + kw +
         R"(}, "output": [)" + Join(outs) + "]}";
}

class DivergenceRulesTest : public ::testing::Test {
 protected:
  // Compares `target` against `golden` (statistics dumps) and analyses the table. `casts` is
  // written as the target's casts.json when not empty; every target entry gets a stack.
  DivergenceReport Analyze(const std::vector<std::string>& target,
                           const std::vector<std::string>& golden, const std::string& casts = "") {
    auto write = [&](const std::string& side, const std::vector<std::string>& entries) {
      test::WriteDump(root_ / side, {.task = "statistics", .level = "L1"}, entries);
      std::string stack;
      for (const std::string& e : entries) {
        const std::string name = e.substr(1, e.find('"', 1) - 1);
        stack += fmt::format(
            R"j({}"{}": ["File /usr/lib/python3/dist-packages/torch/nn/functional.py, line 1, in f, )j"
            R"j(\n return op()", "File /home/u/model.py, line 12, in forward, \n y = op(x)"])j",
            stack.empty() ? "" : ", ", name);
      }
      test::WriteFile(root_ / side / "stack.json", "{" + stack + "}");
      return *LocateDump(root_ / side);
    };
    const DumpLocation t = write("t", target);
    const DumpLocation g = write("g", golden);
    if (!casts.empty()) test::WriteFile(root_ / "t" / "casts.json", casts);
    auto table = CompareDumps(t, g);
    EXPECT_TRUE(table.ok()) << table.error().ToString();
    table_ = std::move(*table);
    return FindDivergence(table_, nullptr);
  }

  test::TempDir dir_;
  const fs::path& root_ = dir_.path();
  CompareTable table_;
};

// Attention scores in fp32 (both runs), then softmax: the golden in fp32, the target on a bf16
// copy of the scores, then a dropout in fp32 on the (upcast) probabilities.
const std::string kX = T("float32", 1.5, -1.5, 0.1, 3.0);
const std::string kScores = T("float32", 1.3565970659255981, -1.181004, 0.0414, 5.6688);
const std::string kScoresBf16 = T("bfloat16", 1.359375, -1.1796875, 0.04150390625, 5.65625);
const std::string kProbs = T("float32", 0.27257308, 0.0195, 0.125, 1.31);
const std::string kProbsBf16 = T("bfloat16", 0.2734375, 0.01953125, 0.125, 1.3125);
const std::string kProbsUp = T("float32", 0.2734375, 0.01953125, 0.125, 1.3125);

std::vector<std::string> SoftmaxTarget() {
  return {
      Fwd("Torch.matmul.0.forward", {kX, kX}, {kScores}),
      Fwd("Functional.softmax.0.forward", {kScoresBf16}, {kProbsBf16}, {{"dim", Arg("int", "-1")}}),
      Fwd("Functional.dropout.0.forward", {kProbsUp}, {kProbsUp})};
}
std::vector<std::string> SoftmaxGolden() {
  return {Fwd("Torch.matmul.0.forward", {kX, kX}, {kScores}),
          Fwd("Functional.softmax.0.forward", {kScores}, {kProbs}, {{"dim", Arg("int", "-1")}}),
          Fwd("Functional.dropout.0.forward", {kProbs}, {kProbs})};
}

TEST_F(DivergenceRulesTest, AnInputNarrowedBeforeTheOpIsWherePrecisionIsLost) {
  auto r = Analyze(SoftmaxTarget(), SoftmaxGolden());
  ASSERT_TRUE(r.first.has_value());
  EXPECT_EQ(r.first->op_name, "Functional.softmax.0.forward");
  EXPECT_EQ(r.first->rule, kRulePrecision);
  EXPECT_FALSE(r.first->cast.has_value());
  EXPECT_NE(r.first->reason.find("computes in torch.bfloat16 where the golden run uses "
                                 "torch.float32: its input.0 was narrowed after "
                                 "Torch.matmul.0.forward.output.0 by a cast the dump does not "
                                 "record"),
            std::string::npos)
      << r.first->reason;
  // Judged against fp32's tolerance, not bf16's.
  EXPECT_DOUBLE_EQ(r.first->tolerance, 4 * std::ldexp(1.0, -24));
  EXPECT_EQ(r.first->at, "File /home/u/model.py, line 12, in forward,   y = op(x)");
}

TEST_F(DivergenceRulesTest, TheSideRecordNamesTheCastThatNarrowed) {
  const std::string casts = R"j({"numprobe_casts": 1, "casts": [
    {"name": "Tensor.half.0.forward", "entries_before": 0,
     "input": {"dtype": "torch.float32", "Max": 9.0, "Min": 1.0},
     "output": {"dtype": "torch.float16", "Max": 9.0, "Min": 1.0}},
    {"name": "Tensor.bfloat16.0.forward", "entries_before": 1,
     "input": {"dtype": "torch.float32", "Max": 1.3565970659255981, "Min": -1.181004},
     "output": {"dtype": "torch.bfloat16", "Max": 1.359375, "Min": -1.1796875,
                "Mean": 0.04150390625, "Norm": 5.65625},
     "stack": ["File /usr/lib/python3/dist-packages/torch/_tensor.py, line 3, in g, \n x",
               "File /home/u/attn.py, line 40, in forward, \n p = F.softmax(s.bfloat16(), -1)"]}]})j";
  auto r = Analyze(SoftmaxTarget(), SoftmaxGolden(), casts);
  ASSERT_TRUE(r.first.has_value());
  EXPECT_EQ(r.first->op_name, "Functional.softmax.0.forward");
  ASSERT_TRUE(r.first->cast.has_value());
  EXPECT_EQ(r.first->cast->name, "Tensor.bfloat16.0.forward");
  EXPECT_EQ(r.first->cast->from_dtype, "torch.float32");
  EXPECT_EQ(r.first->cast->to_dtype, "torch.bfloat16");
  EXPECT_EQ(r.first->cast->at,
            "File /home/u/attn.py, line 40, in forward,   p = F.softmax(s.bfloat16(), -1)");
  EXPECT_NE(r.first->reason.find("narrowed by Tensor.bfloat16.0.forward (torch.float32 -> "
                                 "torch.bfloat16 at attn.py:40)"),
            std::string::npos)
      << r.first->reason;
}

TEST_F(DivergenceRulesTest, ACastThatDumpJsonHoldsIsNamedItself) {
  std::vector<std::string> target = SoftmaxTarget();
  target.insert(target.begin() + 1, Fwd("Tensor.bfloat16.0.forward", {kScores}, {kScoresBf16}));
  auto r = Analyze(target, SoftmaxGolden());
  ASSERT_TRUE(r.first.has_value());
  EXPECT_EQ(r.first->op_name, "Tensor.bfloat16.0.forward");
  EXPECT_EQ(r.first->entry, 1U);
  EXPECT_EQ(r.first->rule, kRulePrecision);
  ASSERT_TRUE(r.first->cast.has_value());
  EXPECT_EQ(r.first->cast->from_dtype, "torch.float32");
}

TEST_F(DivergenceRulesTest, AnOpOutputtingALowerPrecisionThanItsInputsIsAnAutocastBirth) {
  const std::string out = T("float32", 0.63908755, -0.5, 0.01, 2.0);
  const std::string out_bf16 = T("bfloat16", 0.63671875, -0.5, 0.01, 2.0);
  const std::string up = T("float32", 0.63671875, -0.5, 0.01, 2.0);
  const std::string loss = T("float32", 2.47584414, 2.47584414, 2.47584414, 2.47584414, {});
  const std::string loss_t = T("float32", 2.47583866, 2.47583866, 2.47583866, 2.47583866, {});
  auto r = Analyze({Fwd("Functional.linear.0.forward", {kX, kX}, {out_bf16}),
                    Fwd("Functional.cross_entropy.0.forward", {up}, {loss_t})},
                   {Fwd("Functional.linear.0.forward", {kX, kX}, {out}),
                    Fwd("Functional.cross_entropy.0.forward", {out}, {loss})});
  ASSERT_TRUE(r.first.has_value());
  EXPECT_EQ(r.first->op_name, "Functional.linear.0.forward");
  EXPECT_EQ(r.first->rule, kRulePrecision);
  EXPECT_NE(r.first->reason.find("although its inputs are at the golden's precision"),
            std::string::npos)
      << r.first->reason;
}

TEST_F(DivergenceRulesTest, AUniformlyLowerPrecisionRunIsJudgedAtThatPrecision) {
  // bf16 inputs and an fp32 output computed from them: the output carries bf16 rounding, which
  // the op's working precision (bf16) allows. Nothing is over tolerance, so nothing diverges.
  const std::string in_g = T("float32", 1.0039, -1.0, 0.1, 2.0);
  const std::string in_t = T("bfloat16", 1.0, -1.0, 0.1, 2.0);
  auto r = Analyze(
      {Fwd("Functional.linear.0.forward", {in_t, in_t}, {T("float32", 2.004, -2.0, 0.2, 4.0)})},
      {Fwd("Functional.linear.0.forward", {in_g, in_g}, {T("float32", 2.0, -2.0, 0.2, 4.0)})});
  EXPECT_FALSE(r.first.has_value());
  EXPECT_EQ(r.rows_over_tolerance, 0);
  EXPECT_DOUBLE_EQ(table_.rows.back().tolerance, 4 * std::ldexp(1.0, -8));
}

TEST_F(DivergenceRulesTest, ADifferingArgumentIsNamedWithBothValues) {
  const std::string y = T("float32", 2.0, -2.0, 0.0, 4.0);
  const std::string y_t = T("float32", 1.9, -1.9, 0.0, 3.8);
  auto layer_norm = [&](const std::string& eps, const std::string& out) {
    return Fwd("Functional.layer_norm.0.forward",
               {kX, "[" + Arg("int", "8") + "]", kX, kX, Arg("float", eps)}, {out});
  };
  auto r = Analyze({Fwd("Torch.relu.0.forward", {kX}, {kX}), layer_norm("0.01", y_t)},
                   {Fwd("Torch.relu.0.forward", {kX}, {kX}), layer_norm("1e-05", y)});
  ASSERT_TRUE(r.first.has_value());
  EXPECT_EQ(r.first->op_name, "Functional.layer_norm.0.forward");
  EXPECT_EQ(r.first->rule, kRuleArgument);
  ASSERT_EQ(r.first->arguments.size(), 1U);
  EXPECT_EQ(r.first->arguments[0].name, "eps");
  EXPECT_EQ(r.first->arguments[0].target, "0.01");
  EXPECT_EQ(r.first->arguments[0].golden, "1e-05");
  EXPECT_EQ(r.first->reason.rfind("argument eps: 0.01 vs 1e-05", 0), 0U) << r.first->reason;

  auto gelu = Analyze(
      {Fwd("Functional.gelu.0.forward", {kX}, {y_t}, {{"approximate", Arg("str", "\"tanh\"")}})},
      {Fwd("Functional.gelu.0.forward", {kX}, {y}, {{"approximate", Arg("str", "\"none\"")}})});
  ASSERT_TRUE(gelu.first.has_value());
  EXPECT_NE(gelu.first->reason.find("argument approximate: 'tanh' vs 'none'"), std::string::npos)
      << gelu.first->reason;
  // Equal arguments are not a cause: the rule is then "inputs agree".
  auto same = Analyze({Fwd("Tensor.__mul__.0.forward", {kX, Arg("float", "0.5")}, {y_t})},
                      {Fwd("Tensor.__mul__.0.forward", {kX, Arg("float", "0.5")}, {y})});
  ASSERT_TRUE(same.first.has_value());
  EXPECT_EQ(same.first->rule, kRuleInputsAgree);
  EXPECT_TRUE(same.first->arguments.empty());
}

TEST_F(DivergenceRulesTest, AParameterNoOpProducedIsASource) {
  const std::string h = T("float32", 3.0, -3.0, 0.2, 9.0);
  const std::string w = T("float32", 0.5, -0.5, 0.0, 4.0, {32, 16});
  const std::string w_t = T("float32", 0.9, -0.8, 0.01, 6.0, {32, 16});
  auto r = Analyze({Fwd("Functional.relu.0.forward", {kX}, {h}),
                    Fwd("Functional.linear.1.forward", {h, w_t}, {T("float32", 7, -7, 0, 20)})},
                   {Fwd("Functional.relu.0.forward", {kX}, {h}),
                    Fwd("Functional.linear.1.forward", {h, w}, {T("float32", 5, -5, 0, 15)})});
  ASSERT_TRUE(r.first.has_value());
  EXPECT_EQ(r.first->op_name, "Functional.linear.1.forward");
  EXPECT_EQ(r.first->rule, kRuleSource);
  EXPECT_EQ(r.first->worst_output, "Functional.linear.1.forward.input.1");
  EXPECT_EQ(r.first->reason.rfind("the weight (input.1, torch.float32 [32, 16]) differs before "
                                  "any op touched it",
                                  0),
            0U)
      << r.first->reason;
}

TEST_F(DivergenceRulesTest, DataTokensThatDifferAreASourceAndMustMatchExactly) {
  const std::string tok = T("int64", 30, 1, 12, 60, {2, 8});
  const std::string tok_t = T("int64", 31, 1, 13, 61, {2, 8});
  auto r =
      Analyze({Fwd("Functional.embedding.0.forward", {tok_t, kX}, {T("float32", 3, -3, 0.1, 9)})},
              {Fwd("Functional.embedding.0.forward", {tok, kX}, {T("float32", 3, -3, 0.2, 9)})});
  ASSERT_TRUE(r.first.has_value());
  EXPECT_EQ(r.first->rule, kRuleSource);
  EXPECT_NE(r.first->reason.find("the input (input.0, torch.int64 [2, 8]) differs before any op "
                                 "touched it"),
            std::string::npos)
      << r.first->reason;
  EXPECT_NE(r.first->reason.find("an exact match is required"), std::string::npos);
}

TEST_F(DivergenceRulesTest, ATensorChangedBetweenItsProducerAndTheNextOpIsATransit) {
  // proj's output agrees; the residual add receives it after an unrecorded fp16 round trip.
  const std::string p = T("float32", 0.6964806914, -0.71, 0.01, 2.9);
  const std::string p_t = T("float32", 0.6962890625, -0.7099609375, 0.01, 2.9);
  const std::string sum = T("float32", 3.5, -3.2, 0.1, 9.0);
  const std::string sum_t = T("float32", 3.4998, -3.2, 0.1, 9.0);
  const std::vector<std::string> target = {Fwd("Functional.linear.1.forward", {kX, kX}, {p}),
                                           Fwd("Tensor.__add__.1.forward", {kX, p_t}, {sum_t})};
  const std::vector<std::string> golden = {Fwd("Functional.linear.1.forward", {kX, kX}, {p}),
                                           Fwd("Tensor.__add__.1.forward", {kX, p}, {sum})};
  auto r = Analyze(target, golden);
  ASSERT_TRUE(r.first.has_value());
  EXPECT_EQ(r.first->op_name, "Tensor.__add__.1.forward");
  EXPECT_EQ(r.first->rule, kRuleTransit);
  EXPECT_NE(r.first->reason.find("input.1 differs from Functional.linear.1.forward.output.0, "
                                 "which produced it and agrees: changed in between by an op the "
                                 "dump does not record"),
            std::string::npos)
      << r.first->reason;
  EXPECT_NE(r.first->reason.find("the size of torch.float16 rounding"), std::string::npos);
  const std::string casts = R"({"numprobe_casts": 1, "casts": [
    {"name": "Tensor.to.0.forward", "entries_before": 1,
     "input": {"dtype": "torch.float32", "Max": 0.6964806914, "Min": -0.71},
     "output": {"dtype": "torch.float16", "Max": 0.6962890625, "Min": -0.7099609375,
                "Mean": 0.01, "Norm": 2.9}}]})";
  auto named = Analyze(target, golden, casts);
  ASSERT_TRUE(named.first.has_value());
  EXPECT_EQ(named.first->rule, kRuleTransit);
  ASSERT_TRUE(named.first->cast.has_value());
  EXPECT_EQ(named.first->cast->name, "Tensor.to.0.forward");
  EXPECT_NE(named.first->reason.find("changed in between by Tensor.to.0.forward (torch.float32 "
                                     "-> torch.float16)"),
            std::string::npos)
      << named.first->reason;
}

TEST_F(DivergenceRulesTest, AMeanOverflowingFp16IsNotANonFiniteInput) {
  // x.half(): finite values whose fp16 mean overflows; x^2 overflows for real.
  const std::string x_g = T("float32", 896.51, -719.2, 51.7, 37440.1);
  const std::string x_t = T("float16", 896.5, -719.0, INFINITY, 37440.0);
  auto r = Analyze({Fwd("Tensor.pow.0.forward", {x_t, Arg("int", "2")},
                        {T("float16", INFINITY, 0.0001, INFINITY, INFINITY)})},
                   {Fwd("Tensor.pow.0.forward", {x_g, Arg("int", "2")},
                        {T("float32", 803746.3, 0.0001, 40000, 1e7)})});
  ASSERT_TRUE(r.first.has_value());
  EXPECT_EQ(r.first->rule, kRuleNonFinite);
  EXPECT_TRUE(r.first->non_finite);
  EXPECT_LT(r.first->input_error, 1e-3);  // the input's Mean is not compared
  EXPECT_EQ(r.first->reason.rfind("output.0 has Inf only in the target run while its inputs are "
                                  "finite; it computes in torch.float16 where the golden run uses "
                                  "torch.float32",
                                  0),
            0U)
      << r.first->reason;
}

TEST_F(DivergenceRulesTest, WhenNoRuleFitsTheFirstOpOverToleranceIsTheFallback) {
  // The producer of c's input exists in each run under a different API name (unpaired), so
  // nothing tells where c's input changed, and c only carries the difference.
  const std::string y = T("float32", 2.0, -2.0, 0.2, 4.0);
  const std::string y_t = T("float32", 2.1, -2.0, 0.2, 4.0);
  const std::string z = T("float32", 4.0, -4.0, 0.4, 8.0);
  const std::string z_t = T("float32", 4.2, -4.0, 0.4, 8.0);
  auto r = Analyze(
      {Fwd("Functional.p.0.forward", {kX}, {y_t}), Fwd("Functional.c.0.forward", {y_t}, {z_t})},
      {Fwd("Functional.q.0.forward", {kX}, {y}), Fwd("Functional.c.0.forward", {y}, {z})});
  EXPECT_GT(r.rows_over_tolerance, 0);
  ASSERT_TRUE(r.first.has_value());
  EXPECT_EQ(r.first->op_name, "Functional.c.0.forward");
  EXPECT_EQ(r.first->rule, kRuleFallback);
  EXPECT_EQ(r.first->reason.rfind("no op fits the rules", 0), 0U) << r.first->reason;
  EXPECT_NE(r.first->reason.find("fallback: the first op with a row over its tolerance"),
            std::string::npos);
}

TEST_F(DivergenceRulesTest, ADifferenceOutsideAnyOpStillGetsAnAnswer) {
  // Only a parameter gradient differs (its backward op is not in the dump).
  auto grad = [](const std::string& leaf) {
    return R"("Module.fc.Linear.parameters_grad.0": {"weight": [)" + leaf + "]}";
  };
  auto r = Analyze(
      {Fwd("Functional.relu.0.forward", {kX}, {kX}), grad(T("float32", 0.2, -0.2, 0.0, 1.0))},
      {Fwd("Functional.relu.0.forward", {kX}, {kX}), grad(T("float32", 0.3, -0.2, 0.0, 1.0))});
  EXPECT_EQ(r.rows_over_tolerance, 1);
  ASSERT_TRUE(r.first.has_value());
  EXPECT_EQ(r.first->op_name, "Module.fc.Linear.parameters_grad.0");
  EXPECT_EQ(r.first->rule, kRuleFallback);
  EXPECT_TRUE(r.first->backward);
}

TEST(UserFrameTest, TheInnermostFrameOutsideLibrariesIsTheUsersLine) {
  const std::vector<std::string> stack = {
      "File /usr/lib/python3/dist-packages/torch/nn/modules/normalization.py, line 190, in "
      "forward, \n return F.layer_norm(",
      "File /home/u/.venv/lib/python3.11/site-packages/numprobe/pytorch/_runtime.py, line 9, in "
      "hook, \n x",
      "File /src/numprobe/python/numprobe/pytorch/_runtime.py, line 9, in hook, \n x",
      "File /usr/lib/python3.11/contextlib.py, line 79, in inner, \n return func()",
      "File /home/u/train.py, line 66, in main, \n y = model(x)",
      "File /home/u/launch.py, line 3, in <module>, \n main()"};
  EXPECT_EQ(detail::UserFrame(stack), "File /home/u/train.py, line 66, in main,   y = model(x)");
  EXPECT_TRUE(detail::IsLibraryFrame(stack[0]));
  EXPECT_FALSE(detail::IsLibraryFrame(stack[4]));
  EXPECT_TRUE(detail::IsLibraryFrame("File C:\\py\\Lib\\site-packages\\torch\\x.py, line 1, in f"));
  // All library code: the innermost frame. Nothing: nothing.
  EXPECT_EQ(detail::UserFrame({stack[0]}).rfind("File /usr/lib/python3/dist-packages/torch", 0),
            0U);
  EXPECT_EQ(detail::UserFrame({}), "");
  EXPECT_EQ(detail::ShortFrame(stack[4]), "train.py:66");
  EXPECT_EQ(detail::ShortFrame("no frame here"), "no frame here");
}

TEST(ArgumentNameTest, PositionalArgumentsAreNamedByTheApisSignature) {
  using detail::ArgumentName;
  EXPECT_EQ(
      ArgumentName("Functional.layer_norm.0.forward", "Functional.layer_norm.0.forward.input.4"),
      "eps");
  EXPECT_EQ(
      ArgumentName("Functional.layer_norm.0.forward", "Functional.layer_norm.0.forward.input.1.0"),
      "normalized_shape[0]");
  EXPECT_EQ(ArgumentName("Functional.softmax.0.forward", "Functional.softmax.0.forward.input.dim"),
            "dim");
  EXPECT_EQ(ArgumentName("Tensor.add_.1.forward", "Tensor.add_.1.forward.input.1"), "other");
  EXPECT_EQ(ArgumentName("Tensor.__rsub__.0.forward", "Tensor.__rsub__.0.forward.input.1"),
            "other");
  EXPECT_EQ(ArgumentName("Tensor.__imul__.0.forward", "Tensor.__imul__.0.forward.input.1"),
            "other");
  EXPECT_EQ(ArgumentName("Functional.dropout.0.forward", "Functional.dropout.0.forward.input.2"),
            "training");
  EXPECT_EQ(ArgumentName("Functional.foo.0.forward", "Functional.foo.0.forward.input.2"),
            "input.2");
  EXPECT_EQ(detail::ApiOfEntry("Torch.linalg.norm.0.forward"), "linalg.norm");
  EXPECT_EQ(detail::ApiOfEntry("Module.fc1.Linear.forward.0"), "");
  EXPECT_EQ(detail::ApiOfEntry("Functional.x.forward"), "");
}

TEST(DataflowTest, TheProducerIsTheLatestEarlierOutputWithTheSameValues) {
  auto file = ParseDumpJson(std::string(R"({"task": "statistics", "data": {)") +
                            Fwd("A.a.0.forward", {kX}, {kScores}) + ", " +
                            Fwd("A.b.0.forward", {kScores}, {kScores}) + ", " +
                            Fwd("A.c.0.forward", {kScores, kProbsUp}, {kProbsBf16}) + ", " +
                            Fwd("A.d.0.forward", {kProbsUp}, {kX}) + "}}");
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  detail::ProducerIndex index(*file);
  // rows: a.in a.out b.in b.out c.in0 c.in1 c.out d.in d.out
  EXPECT_EQ(index.Producer(0), -1);  // a's input: a source
  EXPECT_EQ(index.Producer(2), 1);   // b's input: a's output
  EXPECT_EQ(index.Producer(4), 3);   // c's first input: b's output, the latest
  EXPECT_EQ(index.Producer(5), -1);  // c's output comes after c's input
  EXPECT_EQ(index.Producer(7), 6);   // d's fp32 input: c's bf16 output, widened
  EXPECT_FALSE(detail::SameValues({1.0, 0.0, 0.5, 2.0}, {1.0, 0.0, 0.5, 2.001}, true));
  EXPECT_TRUE(detail::SameValues({1.0, 0.0, 0.5, 2.0}, {1.0, 0.0, 0.5, 2.001}, false));
  EXPECT_FALSE(detail::SameValues({1.0, 0.0, 0.5, 2.0}, {1.0, 0.0, 0.5, 2.1}, false));
  EXPECT_FALSE(detail::SameValues({1.0, 0.0, 0.5, 2.0}, {1.001, 0.0, 0.5, 2.0}, false));
}

}  // namespace
}  // namespace numprobe
