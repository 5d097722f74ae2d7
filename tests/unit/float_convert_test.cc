#include "numprobe/float_convert.h"

#include <bit>
#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

namespace numprobe {
namespace {

TEST(FloatConvertTest, Fp8RoundTrip) {
  for (DType d : {DType::kF8E4M3FN, DType::kF8E5M2, DType::kF8E4M3FNUZ, DType::kF8E5M2FNUZ}) {
    for (int code = 0; code < 256; ++code) {
      const float v = F8ToF32(d, static_cast<uint8_t>(code));
      if (std::isnan(v)) continue;
      EXPECT_EQ(F32ToF8(d, v), code) << Name(d) << " " << code;
    }
  }
  EXPECT_EQ(F8ToF32(DType::kF8E4M3FN, 0x7E), 448.0f);
}

TEST(FloatConvertTest, F16RoundTrip) {
  for (uint32_t code = 0; code < 65536; ++code) {
    const float v = F16ToF32(static_cast<uint16_t>(code));
    if (std::isnan(v)) continue;
    EXPECT_EQ(F32ToF16(v), code);
    EXPECT_EQ(F32ToBF16(BF16ToF32(static_cast<uint16_t>(code))), code);
  }
}

}  // namespace
}  // namespace numprobe
