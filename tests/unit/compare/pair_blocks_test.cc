// CompareTensorPairWithSink: the sink sees every element of the pair exactly once, in C order
// within each chunk, decoded as compare decodes it, whatever the strides and the thread count;
// and the metrics are those of CompareTensorPair.
#include "compare/pair_blocks.h"

#include <cstring>
#include <mutex>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/float_convert.h"
#include "numprobe/thread_pool.h"

#include "core/element_load.h"

namespace numprobe::detail {
namespace {

class RecordingSink final : public PairBlockSink {
 public:
  explicit RecordingSink(int64_t numel)
      : target(static_cast<size_t>(numel)),
        golden(static_cast<size_t>(numel)),
        seen(static_cast<size_t>(numel), 0),
        next_in_chunk(static_cast<size_t>(numel / kPairChunk + 1), -1) {}

  void Block(int64_t chunk, const double* t, const double* g, int64_t n,
             int64_t first_index) override {
    std::lock_guard lock(mutex_);
    EXPECT_EQ(chunk, first_index / kPairChunk);
    EXPECT_EQ((first_index + n - 1) / kPairChunk, chunk);  // a block never spans chunks
    int64_t& next = next_in_chunk[static_cast<size_t>(chunk)];
    EXPECT_EQ(first_index, next < 0 ? chunk * kPairChunk : next);  // blocks of a chunk in order
    next = first_index + n;
    for (int64_t k = 0; k < n; ++k) {
      const auto i = static_cast<size_t>(first_index + k);
      target[i] = t[k];
      golden[i] = g[k];
      ++seen[i];
    }
  }

  std::vector<double> target, golden;
  std::vector<int> seen;
  std::vector<int64_t> next_in_chunk;

 private:
  std::mutex mutex_;
};

bool SameMetrics(const TensorPairMetrics& a, const TensorPairMetrics& b) {
  for (size_t i = 0; i < a.msprobe.size(); ++i) {
    if (a.msprobe[i].kind != b.msprobe[i].kind) return false;
    if (std::memcmp(&a.msprobe[i].value, &b.msprobe[i].value, sizeof(double)) != 0) return false;
  }
  return a.compared == b.compared && a.extras.has_value() == b.extras.has_value() &&
         (!a.extras ||
          (a.extras->rmse == b.extras->rmse && a.extras->max_ulp == b.extras->max_ulp &&
           a.extras->worst_index == b.extras->worst_index)) &&
         std::memcmp(&a.rel_l2, &b.rel_l2, sizeof(double)) == 0;
}

TEST(PairBlocksTest, SinkSeesEveryElementOnceWhateverTheStridesAndThreads) {
  // target: a transposed (strided) f16 view of 700 x 300; golden: a contiguous f32 300 x 700
  // reshaped to 1 x 300 x 700 (squeezed like numpy). More than three chunks.
  constexpr int64_t kRows = 300;
  constexpr int64_t kCols = 700;
  std::mt19937 gen(3);
  std::normal_distribution<float> dist;
  std::vector<uint16_t> t_storage(kRows * kCols);
  std::vector<float> g(kRows * kCols);
  for (auto& v : t_storage) v = F32ToF16(dist(gen));
  for (auto& v : g) v = dist(gen);
  TensorView target = TensorView::Contiguous(t_storage.data(), DType::kF16, {kCols, kRows});
  target.shape = {kRows, kCols};
  target.strides = {1, kRows};
  ASSERT_FALSE(target.is_contiguous());
  const TensorView golden = TensorView::Contiguous(g.data(), DType::kF32, {1, kRows, kCols});

  const TensorPairMetrics plain = CompareTensorPair(target, golden, nullptr);
  ThreadPool pool(4);
  for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
    RecordingSink sink(kRows * kCols);
    const TensorPairMetrics with_sink = CompareTensorPairWithSink(target, golden, p, &sink);
    EXPECT_TRUE(SameMetrics(plain, with_sink));
    for (int64_t r = 0; r < kRows; ++r) {
      for (int64_t c = 0; c < kCols; ++c) {
        const auto i = static_cast<size_t>(r * kCols + c);
        ASSERT_EQ(sink.seen[i], 1) << i;
        const std::byte* t_elem = reinterpret_cast<const std::byte*>(&t_storage[c * kRows + r]);
        ASSERT_EQ(sink.target[i], (LoadElement<DType::kF16, ComplexAs::kRealPart>(t_elem)));
        ASSERT_EQ(sink.golden[i], static_cast<double>(g[i]));
      }
    }
  }
}

TEST(PairBlocksTest, ZeroDimensionalPairIsShownOnce) {
  const double t = 2.0;
  const float g = 1.5f;
  RecordingSink sink(1);
  const TensorPairMetrics m =
      CompareTensorPairWithSink(TensorView::Contiguous(&t, DType::kF64, {}),
                                TensorView::Contiguous(&g, DType::kF32, {1, 1}), nullptr, &sink);
  EXPECT_TRUE(m.compared);
  EXPECT_EQ(sink.seen, std::vector<int>{1});
  EXPECT_EQ(sink.target[0], 2.0);
  EXPECT_EQ(sink.golden[0], 1.5);
}

TEST(PairBlocksTest, PairsNotComparedElementByElementShowNothing) {
  const std::vector<float> a(6, 1.0f);
  RecordingSink sink(6);
  const TensorPairMetrics mismatch = CompareTensorPairWithSink(
      TensorView::Contiguous(a.data(), DType::kF32, {2, 3}),
      TensorView::Contiguous(a.data(), DType::kF32, {3, 2}), nullptr, &sink);
  EXPECT_FALSE(mismatch.compared);
  const TensorPairMetrics empty =
      CompareTensorPairWithSink(TensorView::Contiguous(a.data(), DType::kF32, {0}),
                                TensorView::Contiguous(a.data(), DType::kF32, {0}), nullptr, &sink);
  EXPECT_FALSE(empty.compared);
  EXPECT_EQ(sink.seen, std::vector<int>(6, 0));
}

}  // namespace
}  // namespace numprobe::detail
