// CompareTensors (issue 17, point 7): a pair whose storages are streamed (deflated members left
// compressed) is compared in lockstep windows and gives the same bits as CompareTensorPair over
// the tensors in memory; what cannot be streamed in order is loaded under the memory limit.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/compare_metrics.h"
#include "numprobe/float_convert.h"
#include "numprobe/thread_pool.h"

#include "kernels/compare_kernel.h"
#include "metrics_equality.h"

namespace numprobe {
namespace {

// A storage streamed from memory; counts its passes.
class MemoryStorage final : public StreamedStorage {
 public:
  explicit MemoryStorage(std::vector<std::byte> bytes) : bytes_(std::move(bytes)) {}
  uint64_t size() const override { return bytes_.size(); }
  std::string Describe() const override { return "memory storage"; }
  Result<std::unique_ptr<ByteStream>> Open() const override {
    ++passes;
    return std::unique_ptr<ByteStream>(std::make_unique<Pass>(bytes_));
  }
  mutable int passes = 0;

 private:
  class Pass final : public ByteStream {
   public:
    explicit Pass(const std::vector<std::byte>& bytes) : bytes_(bytes) {}
    Result<size_t> Read(std::span<std::byte> out) override {
      const size_t n = std::min(out.size(), bytes_.size() - pos_);
      std::memcpy(out.data(), bytes_.data() + pos_, n);
      pos_ += n;
      return n;
    }

   private:
    const std::vector<std::byte>& bytes_;
    size_t pos_ = 0;
  };
  std::vector<std::byte> bytes_;
};

// `n` elements of `dtype` near `base` (NaN and Inf at the positions `seed` picks).
std::vector<std::byte> Values(DType dtype, int64_t n, uint32_t seed, double noise) {
  std::mt19937_64 rng(seed);
  std::mt19937_64 specials(1234);  // the same positions on both sides
  std::uniform_real_distribution<double> u(-4.0, 4.0);
  std::uniform_real_distribution<double> e(-noise, noise);
  std::mt19937_64 base_rng(77);
  const int item = ItemSize(dtype);
  std::vector<std::byte> out(static_cast<size_t>(n * item));
  for (int64_t i = 0; i < n; ++i) {
    double v = u(base_rng) * (1.0 + e(rng));
    const uint64_t k = specials() % 5000;
    if (k == 0) v = std::numeric_limits<double>::quiet_NaN();
    if (k == 1) v = std::numeric_limits<double>::infinity();
    std::byte* p = out.data() + i * item;
    if (dtype == DType::kF32) {
      const auto f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
    } else if (dtype == DType::kBF16) {
      const uint16_t h = F32ToBF16(static_cast<float>(v));
      std::memcpy(p, &h, 2);
    } else if (dtype == DType::kF16) {
      const uint16_t h = F32ToF16(static_cast<float>(v));
      std::memcpy(p, &h, 2);
    } else {
      const auto x = static_cast<int32_t>(std::isfinite(v) ? v * 1000 : 7);
      std::memcpy(p, &x, 4);
    }
  }
  return out;
}

struct Side {
  std::vector<std::byte> bytes;
  TensorView view;  // over `bytes`
  Tensor streamed;  // the same, streamed
  std::shared_ptr<MemoryStorage> storage;
};

Side MakeSide(DType dtype, std::vector<int64_t> shape, uint32_t seed, double noise,
              int64_t offset = 0) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  Side s;
  s.bytes = Values(dtype, n + offset, seed, noise);
  s.view.dtype = dtype;
  s.view.shape = shape;
  s.view.strides = ContiguousStrides(shape);
  s.view.byte_offset = offset * ItemSize(dtype);
  s.view.data = s.bytes.data();
  s.storage = std::make_shared<MemoryStorage>(s.bytes);
  s.streamed = Tensor(std::shared_ptr<const StreamedStorage>(s.storage), s.view);
  return s;
}

TEST(CompareTensors, StreamedPairsGiveTheSameBits) {
  const int64_t window = detail::kCmpChunk * 32;
  ThreadPool pool(3);
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16, DType::kI32}) {
    for (int64_t n : {int64_t{2}, int64_t{7}, detail::kCmpChunk + 3, window, window + 1,
                      2 * window + detail::kCmpChunk + 5}) {
      const std::vector<int64_t> shape =
          n % 2 == 0 ? std::vector<int64_t>{2, 1, n / 2} : std::vector<int64_t>{n, 1};
      const Side t = MakeSide(dtype, shape, 1, 1e-3, /*offset=*/3);
      const Side g = MakeSide(dtype, shape, 2, 0.0);
      const std::string where = std::string(Name(dtype)) + " n=" + std::to_string(n);
      for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
        const TensorPairMetrics ref = CompareTensorPair(t.view, g.view, p);
        ASSERT_TRUE(ref.compared);
        auto both = CompareTensors(t.streamed, g.streamed, p, /*max_memory=*/1024);
        ASSERT_TRUE(both.ok()) << both.error().message();
        testing::ExpectSameMetrics(ref, *both, where + " both streamed");
        auto one =
            CompareTensors(t.streamed, Tensor(std::shared_ptr<const Buffer>(), g.view), p, 1024);
        ASSERT_TRUE(one.ok()) << one.error().message();
        testing::ExpectSameMetrics(ref, *one, where + " target streamed");
        auto other =
            CompareTensors(Tensor(std::shared_ptr<const Buffer>(), t.view), g.streamed, p, 1024);
        ASSERT_TRUE(other.ok()) << other.error().message();
        testing::ExpectSameMetrics(ref, *other, where + " golden streamed");
      }
    }
  }
}

TEST(CompareTensors, WhatCannotBeStreamedIsLoadedUnderTheLimit) {
  // A transposed golden: loaded whole, refused over the limit with the storage's size named.
  Side t = MakeSide(DType::kF32, {300, 200}, 1, 1e-3);
  Side g = MakeSide(DType::kF32, {300, 200}, 2, 0.0);
  g.view.shape = {300, 200};
  g.view.strides = {1, 300};
  t.view.strides = {1, 300};
  g.streamed = Tensor(std::shared_ptr<const StreamedStorage>(g.storage), g.view);
  t.streamed = Tensor(std::shared_ptr<const StreamedStorage>(t.storage), t.view);
  auto refused = CompareTensors(t.streamed, g.streamed, nullptr, 100000);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kOutOfRange);
  EXPECT_NE(refused.error().message().find("memory storage inflates to 240000 bytes, over the "
                                           "memory limit of 100000"),
            std::string::npos)
      << refused.error().message();
  auto loaded = CompareTensors(t.streamed, g.streamed, nullptr, 240000);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  testing::ExpectSameMetrics(CompareTensorPair(t.view, g.view), *loaded, "transposed");

  // Shapes that differ: nothing is read.
  const Side a = MakeSide(DType::kF32, {10}, 1, 0.0);
  const Side b = MakeSide(DType::kF32, {11}, 1, 0.0);
  auto unmatched = CompareTensors(a.streamed, b.streamed, nullptr, 0);
  ASSERT_TRUE(unmatched.ok());
  EXPECT_FALSE(unmatched->compared);
  EXPECT_EQ(unmatched->msprobe[0].kind, MetricCell::Kind::kShapeUnmatched);
  EXPECT_EQ(a.storage->passes + b.storage->passes, 0);

  // One element after squeezing (msprobe's scalar path): loaded, it is tiny.
  const Side x = MakeSide(DType::kF32, {1, 1}, 1, 1e-3);
  const Side y = MakeSide(DType::kF32, {1, 1}, 2, 0.0);
  auto scalar = CompareTensors(x.streamed, y.streamed, nullptr, 64);
  ASSERT_TRUE(scalar.ok()) << scalar.error().message();
  testing::ExpectSameMetrics(CompareTensorPair(x.view, y.view), *scalar, "one element");
}

}  // namespace
}  // namespace numprobe
