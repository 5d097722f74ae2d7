// Golden: tensor-pair metrics on the edge cases of tests/golden/gen_compare.py (zero golden
// values, f16 arithmetic, NaN/Inf positions, 0-d and length-1 tensors, empty, shape mismatch,
// squeeze, integer/bool/f64 pairs, strided views, threshold boundaries, several chunks), against
// the values numpy gives following msprobe's steps; and the same results for any thread count.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "numprobe/compare_metrics.h"
#include "numprobe/tensor_file.h"
#include "numprobe/thread_pool.h"

namespace numprobe {
namespace {

std::string GoldenDir() {
  const char* env = std::getenv("NUMPROBE_GOLDEN_DIR");
  return std::string(env != nullptr ? env : NUMPROBE_GOLDEN_DIR) + "/compare/";
}

rapidjson::Document LoadExpected() {
  std::ifstream in(GoldenDir() + "expected.json");
  std::stringstream ss;
  ss << in.rdbuf();
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseNanAndInfFlag>(ss.str().c_str());
  return doc;
}

Tensor Read(const std::string& name) {
  auto file = ReadTensorFile(GoldenDir() + name);
  EXPECT_TRUE(file.ok()) << file.error().ToString();
  if (!file.ok() || file->tensors.size() != 1) return {};
  return file->tensors[0].tensor;
}

double Num(const std::string& text) { return std::strtod(text.c_str(), nullptr); }

void ExpectClose(double got, double want, double rel, const std::string& what) {
  if (std::isinf(want) || std::isnan(want)) {
    EXPECT_TRUE(got == want || (std::isnan(got) && std::isnan(want))) << what << ": " << got;
    return;
  }
  EXPECT_LE(std::fabs(got - want), rel * std::max(std::fabs(want), 1e-300))
      << what << ": " << got << " vs " << want;
}

TEST(CompareMetricsGoldenTest, MatchesMsprobesStepsComputedWithNumpy) {
  const rapidjson::Document doc = LoadExpected();
  ASSERT_TRUE(doc.IsObject()) << "missing " << GoldenDir() << "expected.json";
  const auto& cases = doc["cases"];
  int checked = 0;
  for (auto it = cases.MemberBegin(); it != cases.MemberEnd(); ++it) {
    const std::string name = it->name.GetString();
    const auto& c = it->value;
    const Tensor t = Read(c["target"].GetString());
    const Tensor g = Read(c["golden"].GetString());
    const TensorPairMetrics m = CompareTensorPair(t.view(), g.view());
    const auto& want = c["msprobe"];
    ASSERT_EQ(want.Size(), 6u);
    for (int k = 0; k < 6; ++k) {
      const std::string expected = want[k].GetString();
      const std::string got = m.msprobe[k].Text();
      const bool number = m.msprobe[k].is_number();
      if (!number || k >= 2) {
        // Tokens, and the order-independent metrics (max, ratios), are exact.
        EXPECT_EQ(got, expected) << name << " column " << k;
      } else if (k == 0) {
        ExpectClose(Num(got), Num(expected), 2e-12, name + " Cosine");
      } else {
        ExpectClose(Num(got), Num(expected), 1e-12, name + " EucDist");
      }
    }
    const auto& ex = c["extras"];
    ASSERT_EQ(ex.IsNull(), !m.extras.has_value()) << name;
    if (!ex.IsNull()) {
      const TensorExtras& e = *m.extras;
      EXPECT_EQ(e.nan_mismatch, ex["nan_mismatch"].GetInt64()) << name;
      EXPECT_EQ(e.pos_inf_mismatch, ex["pos_inf_mismatch"].GetInt64()) << name;
      EXPECT_EQ(e.neg_inf_mismatch, ex["neg_inf_mismatch"].GetInt64()) << name;
      EXPECT_EQ(e.worst_index, ex["worst_index"].GetInt64()) << name;
      ExpectClose(e.mean_abs_err, ex["mean_abs_err"].GetDouble(), 1e-9, name + " mean_abs_err");
      ExpectClose(e.rmse, ex["rmse"].GetDouble(), 1e-9, name + " rmse");
      ExpectClose(e.mean_rel_err, ex["mean_rel_err"].GetDouble(), 1e-9, name + " mean_rel_err");
      ExpectClose(e.sqnr_db, ex["sqnr_db"].GetDouble(), 1e-9, name + " sqnr_db");
      ExpectClose(e.allclose_ratio, ex["allclose_ratio"].GetDouble(), 1e-15, name + " allclose");
      EXPECT_EQ(e.ulp_dtype, ex["ulp_dtype"].GetString()) << name;
      if (ex.HasMember("max_ulp")) {
        EXPECT_EQ(e.max_ulp, ex["max_ulp"].GetDouble()) << name;
        ExpectClose(e.mean_ulp, ex["mean_ulp"].GetDouble(), 1e-12, name + " mean_ulp");
      }
    }
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

TEST(CompareMetricsGoldenTest, ResultsDoNotDependOnTheThreadCount) {
  const Tensor t = Read("large_chunked_t.pt");
  const Tensor g = Read("large_chunked_g.pt");
  const TensorPairMetrics serial = CompareTensorPair(t.view(), g.view(), nullptr);
  for (int threads : {2, 3, 8}) {
    ThreadPool pool(threads);
    const TensorPairMetrics m = CompareTensorPair(t.view(), g.view(), &pool);
    for (int k = 0; k < 6; ++k) {
      EXPECT_EQ(m.msprobe[k].Text(), serial.msprobe[k].Text()) << threads << " threads, col " << k;
      EXPECT_EQ(m.msprobe[k].value, serial.msprobe[k].value);
    }
    ASSERT_TRUE(m.extras.has_value());
    EXPECT_EQ(m.extras->mean_abs_err, serial.extras->mean_abs_err);
    EXPECT_EQ(m.extras->sqnr_db, serial.extras->sqnr_db);
    EXPECT_EQ(m.extras->mean_ulp, serial.extras->mean_ulp);
    EXPECT_EQ(m.extras->worst_index, serial.extras->worst_index);
    EXPECT_EQ(m.rel_l2, serial.rel_l2);
  }
}

}  // namespace
}  // namespace numprobe
