// core/element_load: one element of every dtype as a double, and the three complex policies.
#include "core/element_load.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

namespace numprobe::detail {
namespace {

template <typename T>
std::vector<std::byte> BytesOf(T value) {
  std::vector<std::byte> out(sizeof(T));
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}

// The template, the run-time switch and the loader pointer give the same bits.
template <DType D, ComplexAs C>
double LoadEveryWay(const std::vector<std::byte>& bytes) {
  const double a = LoadElement<D, C>(bytes.data());
  const double b = LoadElement<C>(D, bytes.data());
  const double c = ElementLoaderFor<C>(D)(bytes.data());
  EXPECT_EQ(std::memcmp(&a, &b, sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(&a, &c, sizeof(double)), 0);
  return a;
}

template <DType D>
double Load(const std::vector<std::byte>& bytes) {
  return LoadEveryWay<D, ComplexAs::kRealPart>(bytes);
}

TEST(ElementLoadTest, FloatsWidenExactly) {
  EXPECT_EQ(Load<DType::kF64>(BytesOf(0.1)), 0.1);
  EXPECT_EQ(Load<DType::kF32>(BytesOf(0.1f)), static_cast<double>(0.1f));
  EXPECT_EQ(Load<DType::kF16>(BytesOf<uint16_t>(0x3C00)), 1.0);
  EXPECT_EQ(Load<DType::kF16>(BytesOf<uint16_t>(0x0001)), std::ldexp(1.0, -24));  // subnormal
  EXPECT_EQ(Load<DType::kF16>(BytesOf<uint16_t>(0xFC00)), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(Load<DType::kF16>(BytesOf<uint16_t>(0x7E00))));
  EXPECT_EQ(Load<DType::kBF16>(BytesOf<uint16_t>(0x3F80)), 1.0);
  EXPECT_EQ(Load<DType::kBF16>(BytesOf<uint16_t>(0xC020)), -2.5);
}

TEST(ElementLoadTest, EveryF16AndFp8CodeMatchesFloatConvert) {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const double got = Load<DType::kF16>(BytesOf(static_cast<uint16_t>(bits)));
    const auto want = static_cast<double>(F16ToF32(static_cast<uint16_t>(bits)));
    ASSERT_EQ(std::memcmp(&got, &want, sizeof(double)), 0) << bits;
    const double bf = Load<DType::kBF16>(BytesOf(static_cast<uint16_t>(bits)));
    const auto bf_want = static_cast<double>(BF16ToF32(static_cast<uint16_t>(bits)));
    ASSERT_EQ(std::memcmp(&bf, &bf_want, sizeof(double)), 0) << bits;
  }
  for (uint32_t bits = 0; bits < 256; ++bits) {
    const auto code = static_cast<uint8_t>(bits);
    const auto check = [&](DType d, double got) {
      const auto want = static_cast<double>(F8ToF32(d, code));
      EXPECT_EQ(std::memcmp(&got, &want, sizeof(double)), 0) << Name(d) << " " << bits;
    };
    check(DType::kF8E4M3FN, Load<DType::kF8E4M3FN>(BytesOf(code)));
    check(DType::kF8E5M2, Load<DType::kF8E5M2>(BytesOf(code)));
    check(DType::kF8E4M3FNUZ, Load<DType::kF8E4M3FNUZ>(BytesOf(code)));
    check(DType::kF8E5M2FNUZ, Load<DType::kF8E5M2FNUZ>(BytesOf(code)));
  }
}

TEST(ElementLoadTest, IntegersAndBool) {
  EXPECT_EQ(Load<DType::kI8>(BytesOf<int8_t>(-128)), -128.0);
  EXPECT_EQ(Load<DType::kU8>(BytesOf<uint8_t>(255)), 255.0);
  EXPECT_EQ(Load<DType::kI16>(BytesOf<int16_t>(-32768)), -32768.0);
  EXPECT_EQ(Load<DType::kU16>(BytesOf<uint16_t>(65535)), 65535.0);
  EXPECT_EQ(Load<DType::kI32>(BytesOf<int32_t>(-7)), -7.0);
  EXPECT_EQ(Load<DType::kU32>(BytesOf<uint32_t>(4294967295u)), 4294967295.0);
  // Beyond 2^53 integers round to nearest, as numpy's astype(float64): 2^63 - 1 -> 2^63.
  EXPECT_EQ(Load<DType::kI64>(BytesOf<int64_t>(std::numeric_limits<int64_t>::max())),
            std::ldexp(1.0, 63));
  EXPECT_EQ(Load<DType::kU64>(BytesOf<uint64_t>(std::numeric_limits<uint64_t>::max())),
            std::ldexp(1.0, 64));
  EXPECT_EQ(Load<DType::kBool>(BytesOf<uint8_t>(0)), 0.0);
  EXPECT_EQ(Load<DType::kBool>(BytesOf<uint8_t>(1)), 1.0);
  EXPECT_EQ(Load<DType::kBool>(BytesOf<uint8_t>(2)), 1.0);  // any non-zero byte is True
}

TEST(ElementLoadTest, ComplexPoliciesAreDistinct) {
  using C64 = StorageType<DType::kC64>::type;
  using C128 = StorageType<DType::kC128>::type;
  const auto c64 = BytesOf(C64{3.0f, -4.0f});
  EXPECT_EQ((LoadEveryWay<DType::kC64, ComplexAs::kRealPart>(c64)), 3.0);
  EXPECT_EQ((LoadEveryWay<DType::kC64, ComplexAs::kMagnitude>(c64)), 5.0);
  EXPECT_EQ((LoadEveryWay<DType::kC64, ComplexAs::kMagnitudeInOwnType>(c64)), 5.0);
  const auto c128 = BytesOf(C128{-1.5, 2.0});
  EXPECT_EQ((LoadEveryWay<DType::kC128, ComplexAs::kRealPart>(c128)), -1.5);
  EXPECT_EQ((LoadEveryWay<DType::kC128, ComplexAs::kMagnitude>(c128)), 2.5);
  EXPECT_EQ((LoadEveryWay<DType::kC128, ComplexAs::kMagnitudeInOwnType>(c128)), 2.5);
  // |1 + 1i| = sqrt(2): in float (hypotf) it rounds to float first, unlike the double hypot.
  const auto unit = BytesOf(C64{1.0f, 1.0f});
  const double in_double = LoadEveryWay<DType::kC64, ComplexAs::kMagnitude>(unit);
  const double in_float = LoadEveryWay<DType::kC64, ComplexAs::kMagnitudeInOwnType>(unit);
  EXPECT_EQ(in_double, std::sqrt(2.0));
  EXPECT_EQ(in_float, static_cast<double>(std::sqrt(2.0f)));
  EXPECT_NE(in_double, in_float);
}

TEST(ElementLoadTest, UnalignedBytesAreRead) {
  std::vector<std::byte> buffer(16);
  const double v = -0.25;
  std::memcpy(buffer.data() + 3, &v, sizeof(v));
  EXPECT_EQ((LoadElement<DType::kF64, ComplexAs::kRealPart>(buffer.data() + 3)), -0.25);
}

}  // namespace
}  // namespace numprobe::detail
