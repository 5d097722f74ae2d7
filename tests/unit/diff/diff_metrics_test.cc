// Figures of one diff pair, worked out by hand: allclose with NaN/Inf handling, cosine rules, mean
// and max |a - b|, compatible shapes, dtype mixes; the thread count changes nothing; and
// DiffSources' statuses, counts and exit rule.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/diff.h"
#include "numprobe/float_convert.h"
#include "numprobe/thread_pool.h"

namespace numprobe {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TensorView F64(const std::vector<double>& v, std::vector<int64_t> shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
  return TensorView::Contiguous(v.data(), DType::kF64, std::move(shape));
}

TEST(DiffMetricsTest, HandWorkedFigures) {
  const std::vector<double> a = {1.0, 2.0, 3.0, 4.0};
  const std::vector<double> b = {1.0, 2.5, 3.0, 4.0001};
  auto m = DiffTensorValues(F64(a), F64(b), 1e-4, 1e-4);
  ASSERT_TRUE(m.has_value()) << m.error().message();
  EXPECT_EQ(m->numel, 4);
  EXPECT_EQ(m->close, 3);  // |4 - 4.0001| = 1e-4 <= 1e-4 + 1e-4 * 4.0001
  EXPECT_FALSE(m->allclose);
  EXPECT_DOUBLE_EQ(m->allclose_ratio, 0.75);
  EXPECT_DOUBLE_EQ(m->max_abs, 0.5);
  EXPECT_EQ(m->worst_index, 1);
  EXPECT_NEAR(m->mean_abs, (0.5 + 1e-4) / 4, 1e-15);
  const double dot = 1 + 5 + 9 + 4 * 4.0001;
  const double cos = dot / (std::sqrt(30.0) * std::sqrt(1 + 6.25 + 9 + 4.0001 * 4.0001));
  EXPECT_NEAR(m->cosine, cos, 1e-15);
  EXPECT_NEAR(m->max_rel, 0.2, 1e-12);  // |2 - 2.5| / 2.5
  EXPECT_NEAR(m->rmse, std::sqrt((0.25 + 1e-8) / 4), 1e-12);
  EXPECT_EQ(m->ulp_dtype, "f64");
  EXPECT_GT(m->max_ulp, 0);
}

TEST(DiffMetricsTest, NanAndInfAreCountedNotSummed) {
  const std::vector<double> a = {kNaN, kNaN, kInf, kInf, -kInf, 1.0, 2.0};
  const std::vector<double> b = {kNaN, 0.0, kInf, -kInf, 5.0, 1.0, 2.5};
  auto m = DiffTensorValues(F64(a), F64(b), 1e-4, 1e-4);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->close, 3);  // NaN/NaN, inf/inf, 1/1
  EXPECT_EQ(m->nan_mismatch, 1);
  EXPECT_EQ(m->inf_mismatch, 2);  // inf vs -inf, -inf vs 5
  EXPECT_DOUBLE_EQ(m->max_abs, 0.5);
  EXPECT_DOUBLE_EQ(m->mean_abs, 0.25);  // over the two finite positions
  EXPECT_EQ(m->worst_index, 6);
  EXPECT_TRUE(std::isnan(m->max_rel));  // msprobe: NaN/Inf positions differ -> no figure
}

TEST(DiffMetricsTest, CosineOfZeroVectors) {
  const std::vector<double> zero = {0.0, 0.0};
  const std::vector<double> one = {1.0, 0.0};
  auto both = DiffTensorValues(F64(zero), F64(zero), 0, 0);
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->cosine, 1.0);
  EXPECT_TRUE(both->allclose);
  EXPECT_EQ(both->worst_index, -1);
  auto single = DiffTensorValues(F64(zero), F64(one), 0, 0);
  ASSERT_TRUE(single.has_value());
  EXPECT_TRUE(std::isnan(single->cosine));
}

TEST(DiffMetricsTest, UnitDimsAreIgnoredAndOtherShapesRefused) {
  std::vector<float> w(2 * 3 * 4);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i) * 0.5f;
  const TensorView ms = TensorView::Contiguous(w.data(), DType::kF32, {2, 3, 1, 4});
  const TensorView pt = TensorView::Contiguous(w.data(), DType::kF32, {2, 3, 4});
  auto m = DiffTensorValues(ms, pt, 0, 0);
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(m->allclose);
  EXPECT_EQ(m->max_ulp, 0);
  const TensorView other = TensorView::Contiguous(w.data(), DType::kF32, {6, 4});
  auto bad = DiffTensorValues(other, pt, 0, 0);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
}

TEST(DiffMetricsTest, HalfAgainstFloatUsesTheLowerPrecisionForUlp) {
  const std::vector<float> f = {1.0f, 0.1f, -2.0f};
  std::vector<uint16_t> h;
  for (float x : f) h.push_back(F32ToF16(x));
  h[2] = F32ToF16(-2.00390625f);  // -2 - 2^-8: f16 steps are 2^-9 in [2, 4)
  auto m = DiffTensorValues(TensorView::Contiguous(h.data(), DType::kF16, {3}),
                            TensorView::Contiguous(f.data(), DType::kF32, {3}), 0, 1e-3);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->ulp_dtype, "f16");
  EXPECT_EQ(m->max_ulp, 2);  // two f16 steps of 2^-9
  EXPECT_EQ(m->close, 2);    // 0.1 rounds to f16 within 1e-3; the last one is 3.9e-3 off
}

TEST(DiffMetricsTest, FiguresDoNotDependOnThreadCount) {
  std::mt19937 gen(11);
  std::normal_distribution<float> dist;
  std::vector<float> a(300'001);
  std::vector<float> b(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = dist(gen);
    b[i] = a[i] + 1e-3f * dist(gen);
  }
  const TensorView va = TensorView::Contiguous(a.data(), DType::kF32, {300'001});
  const TensorView vb = TensorView::Contiguous(b.data(), DType::kF32, {300'001});
  auto serial = DiffTensorValues(va, vb, 1e-4, 1e-4, nullptr);
  ThreadPool pool(4);
  auto parallel = DiffTensorValues(va, vb, 1e-4, 1e-4, &pool);
  ASSERT_TRUE(serial.has_value());
  ASSERT_TRUE(parallel.has_value());
  EXPECT_EQ(serial->close, parallel->close);
  EXPECT_EQ(serial->cosine, parallel->cosine);  // bit-identical, not just close
  EXPECT_EQ(serial->mean_abs, parallel->mean_abs);
  EXPECT_EQ(serial->max_abs, parallel->max_abs);
  EXPECT_EQ(serial->worst_index, parallel->worst_index);
  EXPECT_EQ(serial->max_rel, parallel->max_rel);
  EXPECT_EQ(serial->rmse, parallel->rmse);
  EXPECT_EQ(serial->max_ulp, parallel->max_ulp);
  EXPECT_LT(serial->close, serial->numel);
}

TEST(DiffMetricsTest, StridedViewsGiveTheFiguresOfTheirContiguousCopies) {
  // a is read through a transposed view; the figures (and the worst index, in C order of the
  // view) are those of the same values laid out contiguously, serial or parallel.
  constexpr int64_t kRows = 300;
  constexpr int64_t kCols = 500;
  std::mt19937 gen(5);
  std::normal_distribution<double> dist;
  std::vector<double> storage(kRows * kCols);  // a's values, stored column-major
  std::vector<double> a(storage.size());
  std::vector<double> b(storage.size());
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t c = 0; c < kCols; ++c) {
      const double v = dist(gen);
      storage[static_cast<size_t>(c * kRows + r)] = v;
      a[static_cast<size_t>(r * kCols + c)] = v;
      b[static_cast<size_t>(r * kCols + c)] = v + 1e-3 * dist(gen);
    }
  }
  b[12345] = kNaN;
  TensorView strided = TensorView::Contiguous(storage.data(), DType::kF64, {kCols, kRows});
  strided.shape = {kRows, kCols};
  strided.strides = {1, kRows};
  ASSERT_FALSE(strided.is_contiguous());
  auto want = DiffTensorValues(F64(a, {kRows, kCols}), F64(b, {kRows, kCols}), 1e-4, 1e-4);
  ThreadPool pool(3);
  for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
    auto got = DiffTensorValues(strided, F64(b, {kRows, kCols}), 1e-4, 1e-4, p);
    ASSERT_TRUE(want.has_value());
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->close, want->close);
    EXPECT_EQ(got->nan_mismatch, 1);
    EXPECT_EQ(got->nan_mismatch, want->nan_mismatch);
    EXPECT_EQ(got->cosine, want->cosine);
    EXPECT_EQ(got->mean_abs, want->mean_abs);
    EXPECT_EQ(got->max_abs, want->max_abs);
    EXPECT_EQ(got->worst_index, want->worst_index);
    EXPECT_TRUE(std::isnan(got->max_rel));  // NaN at one position only: msprobe's "N/A"
    EXPECT_TRUE(std::isnan(want->max_rel));
    EXPECT_EQ(got->rmse, want->rmse);
    EXPECT_EQ(got->max_ulp, want->max_ulp);
  }
}

NamedTensor Owned(std::string name, std::vector<float> values, std::vector<int64_t> shape) {
  auto t = Tensor::Zeros(DType::kF32, std::move(shape));
  std::memcpy(t->mutable_data(), values.data(), values.size() * sizeof(float));
  return {std::move(name), std::move(*t), ""};
}

TEST(DiffMetricsTest, SourcesStatusesAndCleanRule) {
  DiffSource a;
  a.tensors.push_back(Owned("same", {1, 2}, {2}));
  a.tensors.push_back(Owned("off", {1, 2}, {2}));
  a.tensors.push_back(Owned("shape", {1, 2}, {2}));
  a.tensors.push_back(Owned("bn.num_batches_tracked", {0}, {}));
  DiffSource b;
  b.tensors.push_back(Owned("same", {1, 2}, {2}));
  b.tensors.push_back(Owned("off", {1, 2.5}, {2}));
  b.tensors.push_back(Owned("shape", {1, 2, 3}, {3}));
  DiffOptions options;
  ThreadPool pool(3);
  options.pool = &pool;
  auto r = DiffSources(a, b, options);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->rows.size(), 3u);
  EXPECT_EQ(DiffStatusText(r->rows[0]), "equal");
  EXPECT_EQ(DiffStatusText(r->rows[1]), "differs");
  EXPECT_EQ(DiffStatusText(r->rows[2]), "shape mismatch");
  EXPECT_EQ(r->CountFailingUnpaired(), 0);  // num_batches_tracked does not count
  EXPECT_FALSE(r->clean());

  DiffSource only_same;
  only_same.tensors.push_back(Owned("same", {1, 2}, {2}));
  auto clean = DiffSources(only_same, a, options);
  ASSERT_TRUE(clean.has_value());
  EXPECT_EQ(clean->CountFailingUnpaired(), 2);  // "off" and "shape" only in B
  EXPECT_FALSE(clean->clean());

  options.rtol = -1;
  auto bad = DiffSources(a, b, options);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace numprobe
