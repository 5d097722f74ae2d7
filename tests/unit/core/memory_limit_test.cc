// numprobe/memory_limit.h: the --max-memory sizes and the default limit.
#include "numprobe/memory_limit.h"

#include <gtest/gtest.h>

namespace numprobe {
namespace {

TEST(MemoryLimitTest, SizesWithBinarySuffixes) {
  EXPECT_EQ(*ParseByteSize("65536"), 65536u);
  EXPECT_EQ(*ParseByteSize("4G"), uint64_t{4} << 30);
  EXPECT_EQ(*ParseByteSize("4g"), uint64_t{4} << 30);
  EXPECT_EQ(*ParseByteSize("4GiB"), uint64_t{4} << 30);
  EXPECT_EQ(*ParseByteSize("4GB"), uint64_t{4} << 30);
  EXPECT_EQ(*ParseByteSize("512M"), uint64_t{512} << 20);
  EXPECT_EQ(*ParseByteSize("1.5K"), 1536u);
  EXPECT_EQ(*ParseByteSize("2T"), uint64_t{2} << 40);
}

TEST(MemoryLimitTest, AnythingElseIsRefused) {
  for (const char* bad : {"", "G", "lots", "0", "-1G", "1.5", "4X", "4GG", "4 G", "nan", "inf",
                          "9000000T", "0.0000001K"}) {
    const auto parsed = ParseByteSize(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument) << bad;
  }
}

TEST(MemoryLimitTest, DefaultIsHalfThePhysicalMemory) {
  const uint64_t limit = DefaultMaxMemory();
  EXPECT_GE(limit, uint64_t{1} << 30);
  EXPECT_EQ(EffectiveMaxMemory(0), limit);
  EXPECT_EQ(EffectiveMaxMemory(12345), 12345u);
}

}  // namespace
}  // namespace numprobe
