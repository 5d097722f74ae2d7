// ASCII case rules: only A-Z change; UTF-8 bytes (negative chars) and punctuation pass as they are.
#include "core/ascii_case.h"

#include <gtest/gtest.h>

namespace numprobe::detail {
namespace {

TEST(AsciiCaseTest, LowersOnlyAsciiLetters) {
  static_assert(AsciiLower('Q') == 'q' && AsciiLower('q') == 'q' && AsciiLower('@') == '@');
  static_assert(AsciiLower('[') == '[' && AsciiLower('Z') == 'z' && AsciiLower('A') == 'a');
  EXPECT_EQ(AsciiLowered("Torch.BFloat16 \xC3\x89t\xC3\xA9"), "torch.bfloat16 \xC3\x89t\xC3\xA9");
  EXPECT_EQ(AsciiLowered(""), "");
}

TEST(AsciiCaseTest, ComparesAgainstALowerCaseWord) {
  EXPECT_TRUE(EqualsLowered("NaN", "nan"));
  EXPECT_TRUE(EqualsLowered("", ""));
  EXPECT_FALSE(EqualsLowered("NaNs", "nan"));
  EXPECT_FALSE(EqualsLowered("nan", "NaN"));  // the second word is already lower case
  EXPECT_TRUE(StartsWithLowered("Float16", "float"));
  EXPECT_TRUE(StartsWithLowered("float", "float"));
  EXPECT_FALSE(StartsWithLowered("flo", "float"));
  EXPECT_FALSE(StartsWithLowered("bfloat16", "float"));
}

}  // namespace
}  // namespace numprobe::detail
