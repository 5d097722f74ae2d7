// The capture's copy buffers: a released copy's buffer serves the next copy of its size, within
// the idle bound, and buffers may outlive the pool.
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "capture/copy_buffer_pool.h"

namespace numprobe::detail {
namespace {

std::vector<float> Iota(size_t n, float from) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), from);
  return v;
}

TEST(CopyBufferPoolTest, AReleasedCopysBufferServesTheNextCopyOfItsSize) {
  CopyBufferPool pool(uint64_t{1} << 20);
  const std::vector<float> a = Iota(4096, 0), b = Iota(4096, 1e6F);
  const std::byte* first_storage = nullptr;
  {
    auto copy = pool.Copy(TensorView::Contiguous(a.data(), DType::kF32, {64, 64}));
    ASSERT_TRUE(copy.ok()) << copy.error().ToString();
    first_storage = copy->view().first();
    EXPECT_EQ(std::memcmp(first_storage, a.data(), a.size() * sizeof(float)), 0);
    EXPECT_EQ(pool.idle_count(), 0U);
  }
  EXPECT_EQ(pool.idle_count(), 1U);
  EXPECT_EQ(pool.idle_bytes(), a.size() * sizeof(float));
  // The same size again: the same memory, holding the new tensor's bytes.
  auto again = pool.Copy(TensorView::Contiguous(b.data(), DType::kF32, {4096}));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->view().first(), first_storage);
  EXPECT_EQ(again->shape(), std::vector<int64_t>{4096});
  EXPECT_EQ(std::memcmp(again->view().first(), b.data(), b.size() * sizeof(float)), 0);
  EXPECT_EQ(pool.reused(), 1U);
  EXPECT_EQ(pool.idle_count(), 0U);
  // Another size is a new buffer.
  auto other = pool.Copy(TensorView::Contiguous(b.data(), DType::kF32, {2048}));
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->view().first(), first_storage);
  EXPECT_EQ(pool.reused(), 1U);
}

TEST(CopyBufferPoolTest, AStridedViewIsCopiedInCOrder) {
  CopyBufferPool pool(uint64_t{1} << 20);
  const std::vector<float> a = Iota(size_t{64} * 64, 0);
  TensorView transposed = TensorView::Contiguous(a.data(), DType::kF32, {64, 64});
  transposed.strides = {1, 64};
  auto copy = pool.Copy(transposed);
  ASSERT_TRUE(copy.ok());
  ASSERT_TRUE(copy->view().is_contiguous());
  const auto* out = reinterpret_cast<const float*>(copy->view().first());
  EXPECT_EQ(out[1], 64.0F);   // [0][1] of the transpose is a[1][0]
  EXPECT_EQ(out[64], 1.0F);   // [1][0] is a[0][1]
}

TEST(CopyBufferPoolTest, IdleBuffersStayWithinTheBoundAndSmallOnesAreNotKept) {
  const std::vector<float> a = Iota(4096, 0);  // 16 KiB
  CopyBufferPool pool(uint64_t{3} * 16384);
  std::vector<Tensor> held;
  for (int i = 0; i < 5; ++i) {
    auto copy = pool.Copy(TensorView::Contiguous(a.data(), DType::kF32, {4096}));
    ASSERT_TRUE(copy.ok());
    held.push_back(*std::move(copy));
  }
  held.clear();
  EXPECT_EQ(pool.idle_count(), 3U);
  EXPECT_EQ(pool.idle_bytes(), 3U * 16384);
  {
    auto tiny = pool.Copy(TensorView::Contiguous(a.data(), DType::kF32, {16}));  // 64 bytes
    ASSERT_TRUE(tiny.ok());
  }
  EXPECT_EQ(pool.idle_count(), 3U);
  CopyBufferPool none(0);
  { ASSERT_TRUE(none.Copy(TensorView::Contiguous(a.data(), DType::kF32, {4096})).ok()); }
  EXPECT_EQ(none.idle_count(), 0U);
}

TEST(CopyBufferPoolTest, ACopyMayOutliveThePool) {
  const std::vector<float> a = Iota(4096, 0);
  Tensor kept;
  {
    CopyBufferPool pool(uint64_t{1} << 20);
    auto copy = pool.Copy(TensorView::Contiguous(a.data(), DType::kF32, {4096}));
    ASSERT_TRUE(copy.ok());
    kept = *std::move(copy);
  }
  EXPECT_EQ(std::memcmp(kept.view().first(), a.data(), a.size() * sizeof(float)), 0);
  kept = Tensor();  // released after the pool: freed, not kept (ASan checks the rest)
}

TEST(CopyBufferPoolTest, CopyIntoABufferOfAnotherSizeIsRefused) {
  const std::vector<float> a = Iota(16, 0);
  auto buffer = Buffer::AllocateUninitialized(32);
  ASSERT_TRUE(buffer.ok());
  auto copy = Tensor::CopyOf(TensorView::Contiguous(a.data(), DType::kF32, {16}), *buffer);
  ASSERT_FALSE(copy.ok());
  EXPECT_EQ(copy.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(Tensor::CopyOf(TensorView::Contiguous(a.data(), DType::kF32, {16}), nullptr).ok());
}

}  // namespace
}  // namespace numprobe::detail
