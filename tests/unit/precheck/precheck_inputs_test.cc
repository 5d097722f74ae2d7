// Statistics-mode inputs: the recorded Max and Min are hit exactly, Mean and Norm closely, the
// values are the same for the same seed and key and differ across keys, and every dtype's rules
// (integers, bools, NaN, a single element, an impossible norm) hold.
#include "numprobe/app/precheck_inputs.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/float_convert.h"

namespace numprobe {
namespace {

std::vector<double> Generate(const RecordedStatistics& s, uint64_t seed) {
  std::vector<std::byte> bytes(static_cast<size_t>(s.numel * ItemSize(s.dtype)));
  EXPECT_TRUE(GenerateFromStatistics(s, seed, bytes.data()).ok());
  std::vector<double> out(static_cast<size_t>(s.numel));
  for (size_t i = 0; i < out.size(); ++i) {
    const std::byte* p = bytes.data() + i * static_cast<size_t>(ItemSize(s.dtype));
    switch (s.dtype) {
      case DType::kF32: {
        float f;
        std::memcpy(&f, p, 4);
        out[i] = f;
        break;
      }
      case DType::kBF16:
      case DType::kF16: {
        uint16_t h;
        std::memcpy(&h, p, 2);
        out[i] = s.dtype == DType::kF16 ? F16ToF32(h) : BF16ToF32(h);
        break;
      }
      case DType::kI64: {
        int64_t v;
        std::memcpy(&v, p, 8);
        out[i] = static_cast<double>(v);
        break;
      }
      case DType::kBool:
        out[i] = static_cast<uint8_t>(*p);
        break;
      default:
        std::memcpy(&out[i], p, 8);
    }
  }
  return out;
}

struct Moments {
  double max = -std::numeric_limits<double>::infinity();
  double min = std::numeric_limits<double>::infinity();
  double mean = 0, norm = 0;
};

Moments Of(const std::vector<double>& v) {
  Moments m;
  double sum = 0;
  double sq = 0;
  for (double x : v) {
    m.max = std::max(m.max, x);
    m.min = std::min(m.min, x);
    sum += x;
    sq += x * x;
  }
  m.mean = sum / static_cast<double>(v.size());
  m.norm = std::sqrt(sq);
  return m;
}

TEST(PrecheckInputsTest, HitsMaxMinExactlyAndMeanNormClosely) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
    // A layer norm's input as msprobe recorded it in the fixture dump (rounded to the dtype).
    RecordedStatistics s{dtype,
                         1024,
                         RoundToDType(dtype, 4.1014933586120605),
                         RoundToDType(dtype, -3.153724431991577),
                         0.030943594872951508,
                         33.05564880371094};
    const Moments m =
        Of(Generate(s, PrecheckSeed(1234, "Functional.layer_norm.0.forward.input.0")));
    EXPECT_EQ(m.max, *s.max) << Name(dtype);
    EXPECT_EQ(m.min, *s.min) << Name(dtype);
    EXPECT_NEAR(m.mean, *s.mean, 2e-3) << Name(dtype);
    EXPECT_NEAR(m.norm / *s.norm, 1.0, 2e-3) << Name(dtype);
  }
}

TEST(PrecheckInputsTest, DeterministicPerSeedAndKey) {
  RecordedStatistics s{DType::kF32, 500, 1.0, -1.0, 0.0, 10.0};
  const auto a = Generate(s, PrecheckSeed(7, "Torch.matmul.0.forward.input.0"));
  const auto b = Generate(s, PrecheckSeed(7, "Torch.matmul.0.forward.input.0"));
  const auto c = Generate(s, PrecheckSeed(7, "Torch.matmul.0.forward.input.1"));
  const auto d = Generate(s, PrecheckSeed(8, "Torch.matmul.0.forward.input.0"));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
}

TEST(PrecheckInputsTest, IntegersBoolsAndSpecialValues) {
  const auto ints = Generate({DType::kI64, 200, 63.0, 0.0, std::nullopt, std::nullopt}, 1);
  const Moments mi = Of(ints);
  EXPECT_EQ(mi.max, 63);
  EXPECT_EQ(mi.min, 0);
  for (double v : ints) EXPECT_EQ(v, std::floor(v));
  // bool: Max = any, Min = all.
  EXPECT_EQ(Of(Generate({DType::kBool, 50, 0.0, 0.0, {}, {}}, 1)).max, 0);
  EXPECT_EQ(Of(Generate({DType::kBool, 50, 1.0, 1.0, {}, {}}, 1)).min, 1);
  const Moments mixed = Of(Generate({DType::kBool, 50, 1.0, 0.0, {}, {}}, 1));
  EXPECT_EQ(mixed.max, 1);
  EXPECT_EQ(mixed.min, 0);
  // NaN statistics: all NaN.
  for (double v : Generate({DType::kF32, 10, std::nan(""), std::nan(""), {}, {}}, 1)) {
    EXPECT_TRUE(std::isnan(v));
  }
  // One element holds the value; Inf bounds are placed at the ends.
  EXPECT_EQ(Generate({DType::kF32, 1, 2.5, 2.5, 2.5, 2.5}, 1)[0], 2.5);
  const auto inf = Generate({DType::kF32, 10, std::numeric_limits<double>::infinity(), -1.0,
                             std::nan(""), std::numeric_limits<double>::infinity()},
                            1);
  EXPECT_EQ(inf.back(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(inf.front(), -1.0);
  // A norm the range cannot reach: the values stay inside [Min, Max].
  const Moments m = Of(Generate({DType::kF32, 100, 1.0, -1.0, 0.0, 1000.0}, 1));
  EXPECT_LE(m.max, 1.0);
  EXPECT_GE(m.min, -1.0);
  // No Max/Min recorded: refused.
  std::vector<std::byte> buf(40);
  EXPECT_EQ(GenerateFromStatistics({DType::kF32, 10, {}, {}, {}, {}}, 1, buf.data()).code(),
            ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace numprobe
