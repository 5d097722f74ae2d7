// ComputeStats against numpy: tests/golden/gen_stats.py writes arrays with special values and
// numpy's own statistics of them; both kernel paths must agree to 1e-12 relative (counts exact).
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/dtype.h"
#include "numprobe/stats.h"
#include "numprobe/tensor.h"

namespace numprobe {
namespace {

std::string GoldenDir() {
  const char* env = std::getenv("NUMPROBE_GOLDEN_DIR");
  return std::string(env != nullptr ? env : NUMPROBE_GOLDEN_DIR) + "/stats/";
}

struct Case {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  double max, min, mean, norm;
  int64_t nan_count, pos_inf_count, neg_inf_count, zero_count;
  double max_abs, min_nonzero_abs;
  bool has_mean_norm;
};

std::vector<std::string> Split(const std::string& line, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(line);
  while (std::getline(in, part, sep)) parts.push_back(part);
  return parts;
}

// strtod reads "nan", "inf", "-inf", reprs and exact integers (rounded to the nearest double,
// as ComputeStats reports integer extremes).
double ParseDouble(const std::string& s) { return std::strtod(s.c_str(), nullptr); }

std::vector<Case> LoadManifest() {
  std::ifstream in(GoldenDir() + "manifest.tsv");
  EXPECT_TRUE(in.good()) << "missing " << GoldenDir() << "manifest.tsv (run golden.generate)";
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> f = Split(line, '\t');
    EXPECT_EQ(f.size(), 14u) << line;
    if (f.size() != 14) continue;
    Case c;
    c.name = f[0];
    c.dtype = f[1];
    for (const std::string& d : Split(f[2], ',')) c.shape.push_back(std::stoll(d));
    c.max = ParseDouble(f[3]);
    c.min = ParseDouble(f[4]);
    c.mean = ParseDouble(f[5]);
    c.norm = ParseDouble(f[6]);
    c.nan_count = std::stoll(f[7]);
    c.pos_inf_count = std::stoll(f[8]);
    c.neg_inf_count = std::stoll(f[9]);
    c.zero_count = std::stoll(f[10]);
    c.max_abs = ParseDouble(f[11]);
    c.min_nonzero_abs = ParseDouble(f[12]);
    c.has_mean_norm = f[13] == "1";
    cases.push_back(std::move(c));
  }
  return cases;
}

void ExpectClose(double got, double want, const char* what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << ": got " << got << ", numpy nan";
  } else if (std::isinf(want) || want == 0.0) {
    EXPECT_EQ(got, want) << what;
  } else {
    EXPECT_LE(std::fabs(got - want), 1e-12 * std::fabs(want))
        << what << ": got " << got << ", numpy " << want;
  }
}

TEST(StatsGoldenTest, MatchesNumpy) {
  const std::vector<Case> cases = LoadManifest();
  ASSERT_GE(cases.size(), 15u);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::optional<DType> dtype = DTypeFromName(c.dtype);
    ASSERT_TRUE(dtype.has_value()) << c.dtype;
    std::ifstream file(GoldenDir() + c.name + ".bin", std::ios::binary);
    ASSERT_TRUE(file.good());
    const std::vector<char> bytes((std::istreambuf_iterator<char>(file)),
                                  std::istreambuf_iterator<char>());
    int64_t numel = 1;
    for (int64_t d : c.shape) numel *= d;
    ASSERT_EQ(static_cast<int64_t>(bytes.size()), numel * ItemSize(*dtype));
    const TensorView view = TensorView::Contiguous(bytes.data(), *dtype, c.shape);
    for (bool scalar : {false, true}) {
      SCOPED_TRACE(scalar ? "scalar" : StatsKernelName());
      StatsOptions options;
      options.force_scalar = scalar;
      const Result<TensorStats> r = ComputeStats(view, options);
      ASSERT_TRUE(r.ok()) << r.error().ToString();
      const TensorStats& s = *r;
      EXPECT_EQ(s.count, numel);
      EXPECT_TRUE(s.has_minmax);
      EXPECT_EQ(s.has_mean_norm, c.has_mean_norm);
      ExpectClose(s.max, c.max, "max");
      ExpectClose(s.min, c.min, "min");
      if (c.has_mean_norm) {
        ExpectClose(s.mean, c.mean, "mean");
        ExpectClose(s.norm, c.norm, "norm");
      }
      EXPECT_EQ(s.nan_count, c.nan_count);
      EXPECT_EQ(s.pos_inf_count, c.pos_inf_count);
      EXPECT_EQ(s.neg_inf_count, c.neg_inf_count);
      EXPECT_EQ(s.zero_count, c.zero_count);
      ExpectClose(s.max_abs, c.max_abs, "max_abs");
      ExpectClose(s.min_nonzero_abs, c.min_nonzero_abs, "min_nonzero_abs");
    }
  }
}

}  // namespace
}  // namespace numprobe
