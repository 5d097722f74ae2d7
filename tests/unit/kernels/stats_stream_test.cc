// StatsAccumulator and ComputeTensorStats (issue 17, point 7): statistics of a storage that
// arrives in blocks (a streamed deflated member) are the same bits as ComputeStats over the
// whole tensor, for any split of the bytes, any thread count and either kernel path.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/float_convert.h"
#include "numprobe/stats.h"
#include "numprobe/thread_pool.h"

#include "kernels/stats_internal.h"

namespace numprobe {
namespace {

using detail::kStatsChunk;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

uint64_t Bits(double x) { return std::bit_cast<uint64_t>(x); }

void ExpectSameBits(const TensorStats& a, const TensorStats& b, const std::string& where) {
  SCOPED_TRACE(where);
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.has_minmax, b.has_minmax);
  EXPECT_EQ(a.has_mean_norm, b.has_mean_norm);
  EXPECT_EQ(Bits(a.max), Bits(b.max));
  EXPECT_EQ(Bits(a.min), Bits(b.min));
  EXPECT_EQ(Bits(a.mean), Bits(b.mean));
  EXPECT_EQ(Bits(a.norm), Bits(b.norm));
  EXPECT_EQ(a.nan_count, b.nan_count);
  EXPECT_EQ(a.pos_inf_count, b.pos_inf_count);
  EXPECT_EQ(a.neg_inf_count, b.neg_inf_count);
  EXPECT_EQ(a.zero_count, b.zero_count);
  EXPECT_EQ(Bits(a.max_abs), Bits(b.max_abs));
  EXPECT_EQ(Bits(a.min_nonzero_abs), Bits(b.min_nonzero_abs));
}

// `n` random elements of `dtype` (floats: a wide spread of magnitudes, with NaN, +-Inf, +-0
// sprinkled in; integers: the whole range).
std::vector<std::byte> RandomElements(DType dtype, int64_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mant(-1.0, 1.0);
  std::uniform_int_distribution<int> expo(-20, 20);
  std::uniform_int_distribution<int> special(0, 99);
  const int item = ItemSize(dtype);
  std::vector<std::byte> out(static_cast<size_t>(n * item));
  for (int64_t i = 0; i < n; ++i) {
    double v = std::ldexp(mant(rng), expo(rng));
    switch (special(rng)) {
      case 0:
        v = kNaN;
        break;
      case 1:
        v = kInf;
        break;
      case 2:
        v = -kInf;
        break;
      case 3:
        v = 0.0;
        break;
      case 4:
        v = -0.0;
        break;
      default:
        break;
    }
    std::byte* p = out.data() + i * item;
    const uint64_t r = rng();
    switch (dtype) {
      case DType::kF64:
        std::memcpy(p, &v, 8);
        break;
      case DType::kF32: {
        const auto f = static_cast<float>(v);
        std::memcpy(p, &f, 4);
        break;
      }
      case DType::kF16: {
        const uint16_t h = F32ToF16(static_cast<float>(v));
        std::memcpy(p, &h, 2);
        break;
      }
      case DType::kBF16: {
        const uint16_t h = F32ToBF16(static_cast<float>(v));
        std::memcpy(p, &h, 2);
        break;
      }
      case DType::kBool:
        p[0] = std::byte{static_cast<unsigned char>(r % 2)};
        break;
      default:
        std::memcpy(p, &r, static_cast<size_t>(item));  // integers: any bits
        break;
    }
  }
  return out;
}

std::vector<int64_t> ShapeOf(int64_t n) { return n == 1 ? std::vector<int64_t>{} : std::vector{n}; }

TensorStats Whole(DType dtype, const std::vector<int64_t>& shape,
                  const std::vector<std::byte>& bytes, const StatsOptions& options) {
  const TensorView view = TensorView::Contiguous(bytes.data(), dtype, shape);
  auto s = ComputeStats(view, options);
  EXPECT_TRUE(s.ok()) << s.error().message();
  return s.ok() ? *s : TensorStats{};
}

// Streams `bytes` in pieces of the sizes `split` yields, in turn.
TensorStats Streamed(DType dtype, const std::vector<int64_t>& shape,
                     const std::vector<std::byte>& bytes, const StatsOptions& options,
                     const std::function<size_t(size_t)>& split) {
  StatsAccumulator acc(dtype, shape, options);
  size_t pos = 0;
  for (size_t k = 0; pos < bytes.size(); ++k) {
    const size_t n = std::min(std::max<size_t>(split(k), 1), bytes.size() - pos);
    const Status st = acc.Add(std::span<const std::byte>(bytes.data() + pos, n));
    EXPECT_TRUE(st.ok()) << st.message();
    pos += n;
  }
  auto s = acc.Finish();
  EXPECT_TRUE(s.ok()) << s.error().message();
  return s.ok() ? *s : TensorStats{};
}

TEST(StatsAccumulator, SameBitsAsComputeStatsForAnySplit) {
  const DType dtypes[] = {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI32,
                          DType::kI8,  DType::kU8,  DType::kI64,  DType::kBool};
  const int64_t sizes[] = {
      1, 2, 7, 4095, kStatsChunk - 1, kStatsChunk, kStatsChunk + 1, 3 * kStatsChunk + 4097};
  ThreadPool one(1);
  ThreadPool four(4);
  uint32_t seed = 1;
  for (DType dtype : dtypes) {
    const auto item = static_cast<size_t>(ItemSize(dtype));
    const size_t chunk_bytes = static_cast<size_t>(kStatsChunk) * item;
    for (int64_t n : sizes) {
      const std::vector<std::byte> bytes = RandomElements(dtype, n, seed++);
      const std::vector<int64_t> shape = ShapeOf(n);
      for (bool scalar : {false, true}) {
        StatsOptions reference_options;
        reference_options.pool = &one;
        reference_options.force_scalar = scalar;
        const TensorStats reference = Whole(dtype, shape, bytes, reference_options);
        std::mt19937 rng(seed);
        const std::vector<std::pair<std::string, std::function<size_t(size_t)>>> splits = {
            {"whole", [&](size_t) { return bytes.size(); }},
            {"1 byte", [](size_t) { return size_t{1}; }},
            {"3 bytes", [](size_t) { return size_t{3}; }},
            {"one element", [&](size_t) { return item; }},
            {"4097 bytes", [](size_t) { return size_t{4097}; }},
            {"a chunk", [&](size_t) { return chunk_bytes; }},
            {"a chunk - 1", [&](size_t) { return chunk_bytes - 1; }},
            {"a chunk + 1", [&](size_t) { return chunk_bytes + 1; }},
            {"2.5 chunks", [&](size_t) { return chunk_bytes * 5 / 2; }},
            {"random", [&](size_t) { return size_t{1} + rng() % (3 * chunk_bytes); }},
        };
        for (const auto& [name, split] : splits) {
          // Tiny pieces over many chunks are slow and prove nothing more than over one boundary.
          const bool tiny = name == "1 byte" || name == "3 bytes" || name == "one element";
          if (tiny && n > kStatsChunk + 1) continue;
          if (name == "1 byte" && n > 4095) continue;
          for (ThreadPool* pool : {&one, &four}) {
            StatsOptions options;
            options.pool = pool;
            options.force_scalar = scalar;
            ExpectSameBits(reference, Streamed(dtype, shape, bytes, options, split),
                           std::string(Name(dtype)) + " n=" + std::to_string(n) + " split " + name +
                               (scalar ? " scalar" : " simd") + " threads " +
                               std::to_string(pool->threads()));
          }
        }
      }
    }
  }
}

TEST(StatsAccumulator, ZeroDimAndEmptyAndMultiDim) {
  const float value = -2.5F;
  StatsAccumulator zero_d(DType::kF32, {});
  ASSERT_TRUE(zero_d.Add(std::as_bytes(std::span(&value, 1))).ok());
  auto s = zero_d.Finish();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->max, -2.5);
  EXPECT_EQ(s->mean, -2.5);
  EXPECT_EQ(s->norm, -2.5);  // msprobe's 0-d rule: the value itself

  StatsAccumulator empty(DType::kF32, {0, 3});
  auto e = empty.Finish();
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->count, 0);
  EXPECT_TRUE(std::isnan(e->max));

  const std::vector<std::byte> bytes = RandomElements(DType::kF32, 6 * 70000, 99);
  const std::vector<int64_t> shape = {6, 7, 10000};
  ExpectSameBits(Whole(DType::kF32, shape, bytes, {}),
                 Streamed(DType::kF32, shape, bytes, {}, [](size_t) { return size_t{123457}; }),
                 "3-d");
}

TEST(StatsAccumulator, RefusesTooManyOrTooFewBytes) {
  const std::vector<std::byte> bytes(12);
  StatsAccumulator over(DType::kF32, {2});
  EXPECT_FALSE(over.Add(bytes).ok());
  StatsAccumulator under(DType::kF32, {4});
  ASSERT_TRUE(under.Add(std::span(bytes.data(), 8)).ok());
  auto r = under.Finish();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("8 of the 16 bytes"), std::string::npos);
  StatsAccumulator negative(DType::kF32, {-1});
  EXPECT_FALSE(negative.Finish().ok());
}

// A storage streamed from memory in reads of at most `max_read` bytes; counts its passes.
class MemoryStorage final : public StreamedStorage {
 public:
  MemoryStorage(std::vector<std::byte> bytes, size_t max_read, std::string warning = "")
      : bytes_(std::move(bytes)), max_read_(max_read), warning_(std::move(warning)) {}
  uint64_t size() const override { return bytes_.size(); }
  std::string Describe() const override { return "test storage"; }
  Result<std::unique_ptr<ByteStream>> Open() const override {
    ++passes;
    return std::unique_ptr<ByteStream>(std::make_unique<Pass>(*this));
  }
  mutable int passes = 0;
  mutable uint64_t delivered = 0;

 private:
  class Pass final : public ByteStream {
   public:
    explicit Pass(const MemoryStorage& s) : s_(s) {}
    Result<size_t> Read(std::span<std::byte> out) override {
      const size_t n = std::min({out.size(), s_.bytes_.size() - pos_, s_.max_read_});
      std::memcpy(out.data(), s_.bytes_.data() + pos_, n);
      pos_ += n;
      s_.delivered += n;
      if (n < out.size() && pos_ < s_.bytes_.size()) {
        // Short reads only at the end, as ByteStream promises: finish the request.
        NUMPROBE_ASSIGN_OR_RETURN(const size_t more, Read(out.subspan(n)));
        return n + more;
      }
      return n;
    }
    std::string warning() const override {
      return pos_ == s_.bytes_.size() ? s_.warning_ : std::string();
    }

   private:
    const MemoryStorage& s_;
    size_t pos_ = 0;
  };
  std::vector<std::byte> bytes_;
  size_t max_read_;
  std::string warning_;
};

TEST(ComputeTensorStats, StreamsAContiguousViewWithAnOffset) {
  const DType dtypes[] = {DType::kF32, DType::kBF16, DType::kF16, DType::kI32};
  for (DType dtype : dtypes) {
    const int item = ItemSize(dtype);
    const int64_t n = 5 * kStatsChunk + 11;
    const int64_t offset = 3;  // elements before the view, as a torch storage_offset
    std::vector<std::byte> storage = RandomElements(dtype, n + offset + 5, 7);
    auto memory = std::make_shared<MemoryStorage>(storage, 100003, "CRC-32 mismatch in test");
    TensorView view;
    view.dtype = dtype;
    view.shape = {n};
    view.strides = {1};
    view.byte_offset = offset * item;
    const Tensor streamed(std::shared_ptr<const StreamedStorage>(memory), view);
    ASSERT_TRUE(streamed.is_streamed());
    std::vector<std::string> warnings;
    auto s = ComputeTensorStats(streamed, {}, /*max_memory=*/1024, &warnings);
    ASSERT_TRUE(s.ok()) << s.error().message();
    EXPECT_EQ(memory->passes, 1);
    EXPECT_EQ(memory->delivered, storage.size());  // read to the end: the end is verified
    ASSERT_EQ(warnings.size(), 1U);
    EXPECT_EQ(warnings[0], "CRC-32 mismatch in test");
    TensorView whole = view;
    whole.data = storage.data();
    ExpectSameBits(*ComputeStats(whole), *s, std::string(Name(dtype)));
  }
}

TEST(ComputeTensorStats, AStridedStreamedViewIsLoadedUnderTheLimit) {
  std::vector<std::byte> storage = RandomElements(DType::kF32, 6000, 3);
  auto memory = std::make_shared<MemoryStorage>(storage, 4096);
  TensorView view;
  view.dtype = DType::kF32;
  view.shape = {100, 60};
  view.strides = {1, 100};  // transposed
  const Tensor streamed(std::shared_ptr<const StreamedStorage>(memory), view);
  auto refused = ComputeTensorStats(streamed, {}, /*max_memory=*/1000);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kOutOfRange);
  const std::string& m = refused.error().message();
  EXPECT_NE(m.find("test storage"), std::string::npos) << m;
  EXPECT_NE(m.find("24000 bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("1000"), std::string::npos) << m;
  EXPECT_NE(m.find("--max-memory"), std::string::npos) << m;
  EXPECT_EQ(memory->passes, 0);  // refused before anything was read or allocated

  auto loaded = ComputeTensorStats(streamed, {}, /*max_memory=*/24000);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  TensorView whole = view;
  whole.data = storage.data();
  ExpectSameBits(*ComputeStats(whole), *loaded, "transposed");
}

TEST(ComputeTensorStats, AShortStorageIsAnError) {
  std::vector<std::byte> storage = RandomElements(DType::kF32, 10, 3);
  auto memory = std::make_shared<MemoryStorage>(storage, 4096);
  TensorView view;
  view.dtype = DType::kF32;
  view.shape = {11};
  view.strides = {1};
  const Tensor streamed(std::shared_ptr<const StreamedStorage>(memory), view);
  auto r = ComputeTensorStats(streamed, {}, 1 << 20);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("test storage"), std::string::npos);
}

}  // namespace
}  // namespace numprobe
