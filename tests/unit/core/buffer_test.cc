// Buffer's heap allocations: Allocate zero-fills, AllocateUninitialized leaves the bytes to the
// caller, both are 64-byte aligned with zeroed padding; CopyOf copies exactly.
#include "numprobe/buffer.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

namespace numprobe {
namespace {

bool AllZero(const std::byte* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != std::byte{0}) return false;
  }
  return true;
}

// The bytes from `size` up to the next multiple of 64: inside the allocation, never written by
// callers.
size_t Padding(size_t size) { return (64 - size % 64) % 64; }

TEST(Buffer, AllocateZeroFillsAndAligns) {
  for (const size_t size : {size_t{1}, size_t{63}, size_t{64}, size_t{100}, size_t{4096}}) {
    SCOPED_TRACE(size);
    auto buffer = Buffer::Allocate(size);
    ASSERT_TRUE(buffer.ok()) << buffer.error().ToString();
    EXPECT_EQ((*buffer)->size(), size);
    EXPECT_FALSE((*buffer)->is_mapped());
    EXPECT_EQ(reinterpret_cast<uintptr_t>((*buffer)->data()) % 64, 0U);
    EXPECT_TRUE(AllZero((*buffer)->data(), size + Padding(size)));
  }
}

TEST(Buffer, AllocateUninitializedIsWritableWithZeroedPadding) {
  for (const size_t size : {size_t{1}, size_t{63}, size_t{64}, size_t{100}, size_t{4096}}) {
    SCOPED_TRACE(size);
    auto buffer = Buffer::AllocateUninitialized(size);
    ASSERT_TRUE(buffer.ok()) << buffer.error().ToString();
    EXPECT_EQ((*buffer)->size(), size);
    EXPECT_EQ(reinterpret_cast<uintptr_t>((*buffer)->data()) % 64, 0U);
    EXPECT_TRUE(AllZero((*buffer)->data() + size, Padding(size)));
    std::memset((*buffer)->mutable_data(), 0xAB, size);
    EXPECT_EQ((*buffer)->bytes().back(), std::byte{0xAB});
  }
}

TEST(Buffer, EmptyAndImpossibleSizes) {
  for (auto allocate : {&Buffer::Allocate, &Buffer::AllocateUninitialized}) {
    auto empty = allocate(0);
    ASSERT_TRUE(empty.ok());
    EXPECT_EQ((*empty)->size(), 0U);
    EXPECT_TRUE((*empty)->bytes().empty());
    auto huge = allocate(std::numeric_limits<size_t>::max() - 8);
    ASSERT_FALSE(huge.ok());
    EXPECT_EQ(huge.error().code(), ErrorCode::kOutOfRange);
  }
}

TEST(Buffer, CopyOfCopiesEveryByte) {
  std::vector<std::byte> source(200);
  for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<std::byte>(i * 37 + 1);
  auto copy = Buffer::CopyOf(source);
  ASSERT_TRUE(copy.ok());
  ASSERT_EQ((*copy)->size(), source.size());
  EXPECT_EQ(std::memcmp((*copy)->data(), source.data(), source.size()), 0);
  EXPECT_NE((*copy)->data(), source.data());
  EXPECT_TRUE(AllZero((*copy)->data() + source.size(), Padding(source.size())));
  auto empty = Buffer::CopyOf({});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ((*empty)->size(), 0U);
}

}  // namespace
}  // namespace numprobe
