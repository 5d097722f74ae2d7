// Exhaustive tests of float_convert.h against an independent model of each format written here
// from its definition (sign/exponent/mantissa fields, std::ldexp, and a nearest-value search for
// encoding), plus the rounding corner cases spelled out as constants.
#include "numprobe/float_convert.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace numprobe {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

enum class Kind { kIeee, kFinite, kFnuz };

// One narrow format as its definition states it.
struct Spec {
  std::string name;
  DType dtype;
  int exp_bits;
  int mant_bits;
  int bias;
  Kind kind;
  std::function<float(uint32_t)> decode;
  std::function<uint32_t(float)> encode;

  [[nodiscard]] int Bits() const { return 1 + exp_bits + mant_bits; }
  [[nodiscard]] uint32_t SignBit() const { return 1u << (exp_bits + mant_bits); }
  [[nodiscard]] uint32_t Codes() const { return 1u << Bits(); }
};

std::vector<Spec> AllSpecs() {
  auto f8 = [](DType d) {
    return std::make_pair([d](uint32_t c) { return F8ToF32(d, static_cast<uint8_t>(c)); },
                          [d](float v) { return static_cast<uint32_t>(F32ToF8(d, v)); });
  };
  auto [e4m3fn_dec, e4m3fn_enc] = f8(DType::kF8E4M3FN);
  auto [e5m2_dec, e5m2_enc] = f8(DType::kF8E5M2);
  auto [e4m3fnuz_dec, e4m3fnuz_enc] = f8(DType::kF8E4M3FNUZ);
  auto [e5m2fnuz_dec, e5m2fnuz_enc] = f8(DType::kF8E5M2FNUZ);
  return {
      {"f16", DType::kF16, 5, 10, 15, Kind::kIeee,
       [](uint32_t c) { return F16ToF32(static_cast<uint16_t>(c)); },
       [](float v) { return static_cast<uint32_t>(F32ToF16(v)); }},
      {"bf16", DType::kBF16, 8, 7, 127, Kind::kIeee,
       [](uint32_t c) { return BF16ToF32(static_cast<uint16_t>(c)); },
       [](float v) { return static_cast<uint32_t>(F32ToBF16(v)); }},
      {"e4m3fn", DType::kF8E4M3FN, 4, 3, 7, Kind::kFinite, e4m3fn_dec, e4m3fn_enc},
      {"e5m2", DType::kF8E5M2, 5, 2, 15, Kind::kIeee, e5m2_dec, e5m2_enc},
      {"e4m3fnuz", DType::kF8E4M3FNUZ, 4, 3, 8, Kind::kFnuz, e4m3fnuz_dec, e4m3fnuz_enc},
      {"e5m2fnuz", DType::kF8E5M2FNUZ, 5, 2, 16, Kind::kFnuz, e5m2fnuz_dec, e5m2fnuz_enc},
  };
}

// The value of `code` from the format definition.
double RefDecode(const Spec& s, uint32_t code) {
  const bool negative = (code & s.SignBit()) != 0;
  const uint32_t exp_field = (code >> s.mant_bits) & ((1u << s.exp_bits) - 1);
  const uint32_t mant = code & ((1u << s.mant_bits) - 1);
  const uint32_t exp_max = (1u << s.exp_bits) - 1;
  const uint32_t mant_max = (1u << s.mant_bits) - 1;
  double magnitude = 0;
  if (s.kind == Kind::kFnuz && code == s.SignBit()) return std::nan("");
  if (s.kind == Kind::kFinite && exp_field == exp_max && mant == mant_max) return std::nan("");
  if (s.kind == Kind::kIeee && exp_field == exp_max) {
    if (mant != 0) return std::nan("");
    magnitude = std::numeric_limits<double>::infinity();
  } else if (exp_field == 0) {
    magnitude = std::ldexp(static_cast<double>(mant), 1 - s.bias - s.mant_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(mant | (1u << s.mant_bits)),
                           static_cast<int>(exp_field) - s.bias - s.mant_bits);
  }
  return negative ? -magnitude : magnitude;
}

bool SameValue(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

// The non-negative finite values in code order (increasing), with their codes.
struct Ladder {
  std::vector<double> values;
  std::vector<uint32_t> codes;
};

Ladder PositiveLadder(const Spec& s) {
  Ladder l;
  for (uint32_t code = 0; code < s.SignBit(); ++code) {
    const double v = RefDecode(s, code);
    if (std::isfinite(v)) {
      l.values.push_back(v);
      l.codes.push_back(code);
    }
  }
  return l;
}

// Expected encoding of a non-NaN `x` by nearest-value search with ties to the even code.
uint32_t RefEncode(const Spec& s, const Ladder& l, double x) {
  const uint32_t nan_code = s.kind == Kind::kFnuz ? s.SignBit() : (s.SignBit() - 1);
  const uint32_t sign = std::signbit(x) ? s.SignBit() : 0;
  const double a = std::fabs(x);
  const double max = l.values.back();
  const double virtual_next = max + (max - l.values[l.values.size() - 2]);
  const double overflow_tie = (max + virtual_next) / 2;
  const bool max_is_odd = (l.codes.back() & 1) != 0;
  if (a > overflow_tie || (a == overflow_tie && max_is_odd)) {
    if (s.kind == Kind::kIeee) return sign | ((s.SignBit() - 1) & ~((1u << s.mant_bits) - 1));
    return s.kind == Kind::kFnuz ? nan_code : sign | nan_code;
  }
  size_t hi =
      static_cast<size_t>(std::lower_bound(l.values.begin(), l.values.end(), a) - l.values.begin());
  uint32_t magnitude = 0;
  if (hi == l.values.size()) {
    magnitude = l.codes.back();  // between max and the overflow tie
  } else if (l.values[hi] == a || hi == 0) {
    magnitude = l.codes[hi];
  } else {
    const double below = a - l.values[hi - 1];
    const double above = l.values[hi] - a;
    if (below < above) {
      magnitude = l.codes[hi - 1];
    } else if (above < below) {
      magnitude = l.codes[hi];
    } else {
      magnitude = (l.codes[hi] & 1) == 0 ? l.codes[hi] : l.codes[hi - 1];
    }
  }
  if (s.kind == Kind::kFnuz && magnitude == 0) return 0;
  return sign | magnitude;
}

float NextUp(float v) { return std::nextafter(v, kInf); }
float NextDown(float v) { return std::nextafter(v, -kInf); }

TEST(FloatConvertTest, DecodeMatchesFormatDefinitionForEveryCode) {
  for (const Spec& s : AllSpecs()) {
    for (uint32_t code = 0; code < s.Codes(); ++code) {
      const double want = RefDecode(s, code);
      const float got = s.decode(code);
      ASSERT_TRUE(SameValue(got, want))
          << s.name << " code " << code << ": " << got << " vs " << want;
      if (std::isnan(want) && s.kind != Kind::kFnuz) {
        EXPECT_EQ(std::signbit(got), (code & s.SignBit()) != 0) << s.name << " code " << code;
      }
    }
  }
}

TEST(FloatConvertTest, EncodeOfDecodeIsIdentityForEveryNonNaNCode) {
  for (const Spec& s : AllSpecs()) {
    for (uint32_t code = 0; code < s.Codes(); ++code) {
      const float v = s.decode(code);
      if (std::isnan(v)) {
        EXPECT_TRUE(std::isnan(s.decode(s.encode(v)))) << s.name << " NaN code " << code;
        continue;
      }
      ASSERT_EQ(s.encode(v), code) << s.name << " value " << v;
    }
  }
}

// Every midpoint between consecutive values (both signs, subnormal and normal), the float just
// above and just below it, against the nearest-value search and against the even-code rule.
TEST(FloatConvertTest, MidpointsRoundToEvenAndNeighboursRoundToNearest) {
  for (const Spec& s : AllSpecs()) {
    const Ladder l = PositiveLadder(s);
    for (size_t i = 0; i + 1 < l.values.size(); ++i) {
      const auto mid = static_cast<float>((l.values[i] + l.values[i + 1]) / 2);
      ASSERT_EQ(static_cast<double>(mid), (l.values[i] + l.values[i + 1]) / 2) << "not exact";
      const uint32_t lo = l.codes[i];
      const uint32_t hi = l.codes[i + 1];
      const uint32_t even = (lo & 1) == 0 ? lo : hi;
      ASSERT_EQ(s.encode(mid), even) << s.name << " midpoint " << mid;
      ASSERT_EQ(s.encode(NextUp(mid)), hi) << s.name << " above midpoint " << mid;
      ASSERT_EQ(s.encode(NextDown(mid)), lo) << s.name << " below midpoint " << mid;
      const uint32_t neg_even = (s.kind == Kind::kFnuz && even == 0) ? 0 : even | s.SignBit();
      ASSERT_EQ(s.encode(-mid), neg_even) << s.name << " midpoint " << -mid;
      ASSERT_EQ(s.encode(-NextUp(mid)), hi | s.SignBit()) << s.name << " below " << -mid;
      for (float x : {mid, NextUp(mid), NextDown(mid), -mid}) {
        ASSERT_EQ(s.encode(x), RefEncode(s, l, x)) << s.name << " " << x;
      }
    }
  }
}

TEST(FloatConvertTest, RandomFloatsMatchNearestValueSearch) {
  std::mt19937 rng(12345);
  for (const Spec& s : AllSpecs()) {
    const Ladder l = PositiveLadder(s);
    const double max = l.values.back();
    for (int i = 0; i < 200000; ++i) {
      // Half uniform bit patterns, half concentrated on the format's range.
      float x = 0;
      if (i % 2 == 0) {
        x = std::bit_cast<float>(static_cast<uint32_t>(rng()));
      } else {
        std::uniform_real_distribution<double> log_mag(std::log2(l.values[1]) - 3,
                                                       std::log2(max) + 2);
        x = static_cast<float>(std::exp2(log_mag(rng)) * ((rng() & 1) != 0 ? -1 : 1));
      }
      if (std::isnan(x)) continue;
      ASSERT_EQ(s.encode(x), RefEncode(s, l, x)) << s.name << " " << x;
    }
  }
}

struct OverflowCase {
  DType dtype;
  float max_finite;
  float tie;           // halfway between max_finite and the next (missing) value
  uint32_t max_code;   // positive code of max_finite
  uint32_t overflow;   // positive code written past the threshold (Inf or NaN)
  bool tie_overflows;  // max_finite's mantissa is odd, so the tie goes up
};

TEST(FloatConvertTest, OverflowThresholds) {
  const OverflowCase cases[] = {
      {DType::kF16, 65504.0f, 65520.0f, 0x7BFF, 0x7C00, true},
      {DType::kBF16, 3.3895313892515355e38f, 0x1.ffp127f, 0x7F7F, 0x7F80, true},
      {DType::kF8E4M3FN, 448.0f, 464.0f, 0x7E, 0x7F, false},  // 448 = 1.110b: even, stays
      {DType::kF8E5M2, 57344.0f, 61440.0f, 0x7B, 0x7C, true},
      {DType::kF8E4M3FNUZ, 240.0f, 248.0f, 0x7F, 0x80, true},
      {DType::kF8E5M2FNUZ, 57344.0f, 61440.0f, 0x7F, 0x80, true},
  };
  for (const Spec& s : AllSpecs()) {
    const OverflowCase* c = nullptr;
    for (const OverflowCase& candidate : cases) {
      if (candidate.dtype == s.dtype) c = &candidate;
    }
    ASSERT_NE(c, nullptr);
    const bool fnuz = s.kind == Kind::kFnuz;
    const uint32_t neg_overflow = fnuz ? c->overflow : c->overflow | s.SignBit();
    EXPECT_EQ(s.decode(c->max_code), c->max_finite) << s.name;
    EXPECT_EQ(s.encode(c->max_finite), c->max_code) << s.name;
    EXPECT_EQ(s.encode(NextDown(c->tie)), c->max_code) << s.name;
    EXPECT_EQ(s.encode(c->tie), c->tie_overflows ? c->overflow : c->max_code) << s.name;
    EXPECT_EQ(s.encode(-c->tie), c->tie_overflows ? neg_overflow : c->max_code | s.SignBit())
        << s.name;
    EXPECT_EQ(s.encode(NextUp(c->tie)), c->overflow) << s.name;
    EXPECT_EQ(s.encode(-NextUp(c->tie)), neg_overflow) << s.name;
    EXPECT_EQ(s.encode(std::numeric_limits<float>::max()), c->overflow) << s.name;
    EXPECT_EQ(s.encode(kInf), c->overflow) << s.name;
    EXPECT_EQ(s.encode(-kInf), neg_overflow) << s.name;
    if (s.kind == Kind::kIeee) {
      EXPECT_EQ(s.decode(c->overflow), kInf) << s.name;
    } else {
      EXPECT_TRUE(std::isnan(s.decode(c->overflow))) << s.name;
    }
  }
}

TEST(FloatConvertTest, SubnormalBoundaries) {
  for (const Spec& s : AllSpecs()) {
    const uint32_t neg_zero = s.kind == Kind::kFnuz ? 0 : s.SignBit();
    const auto min_sub = static_cast<float>(std::ldexp(1.0, 1 - s.bias - s.mant_bits));
    const auto min_normal = static_cast<float>(std::ldexp(1.0, 1 - s.bias));
    EXPECT_EQ(s.decode(1), min_sub) << s.name;
    EXPECT_EQ(s.decode(1u << s.mant_bits), min_normal) << s.name;
    EXPECT_EQ(s.decode((1u << s.mant_bits) - 1), min_normal - min_sub) << s.name;
    EXPECT_EQ(s.encode(min_sub / 2), 0u) << s.name;  // tie between 0 and 1: 0 is even
    EXPECT_EQ(s.encode(-min_sub / 2), neg_zero) << s.name;
    EXPECT_EQ(s.encode(NextUp(min_sub / 2)), 1u) << s.name;
    EXPECT_EQ(s.encode(-NextUp(min_sub / 2)), 1u | s.SignBit()) << s.name;
    EXPECT_EQ(s.encode(min_sub * 1.5f), 2u) << s.name;  // tie between 1 and 2
    EXPECT_EQ(s.encode(min_sub / 4), 0u) << s.name;
    EXPECT_EQ(s.encode(std::numeric_limits<float>::denorm_min()), 0u) << s.name;
    EXPECT_EQ(s.encode(-std::numeric_limits<float>::denorm_min()), neg_zero) << s.name;
    // Just under the smallest normal rounds up to it from the largest subnormal's side.
    EXPECT_EQ(s.encode(NextDown(min_normal)), 1u << s.mant_bits) << s.name;
    EXPECT_EQ(s.encode(min_normal - min_sub / 2), 1u << s.mant_bits) << s.name;  // odd -> even
  }
}

TEST(FloatConvertTest, ZerosInfinitiesAndNaNs) {
  for (const Spec& s : AllSpecs()) {
    const bool fnuz = s.kind == Kind::kFnuz;
    EXPECT_EQ(s.encode(0.0f), 0u) << s.name;
    EXPECT_EQ(s.encode(-0.0f), fnuz ? 0u : s.SignBit()) << s.name;
    EXPECT_EQ(s.decode(0), 0.0f);
    EXPECT_FALSE(std::signbit(s.decode(0))) << s.name;
    if (!fnuz) {
      EXPECT_TRUE(std::signbit(s.decode(s.SignBit())) && s.decode(s.SignBit()) == 0.0f) << s.name;
    }
    for (uint32_t nan_bits :
         {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu, 0xFFBFFFFFu}) {
      const uint32_t code = s.encode(std::bit_cast<float>(nan_bits));
      EXPECT_TRUE(std::isnan(s.decode(code))) << s.name << " " << std::hex << nan_bits;
      if (!fnuz) {
        EXPECT_EQ((code & s.SignBit()) != 0, (nan_bits >> 31) != 0) << s.name;
      }
    }
  }
  // The exact quiet NaN codes: torch's for f16/bf16, c10 Float8_*'s for the fp8 formats.
  EXPECT_EQ(F32ToF16(kNaN), 0x7E00);
  EXPECT_EQ(F32ToF16(-kNaN), 0xFE00);
  EXPECT_EQ(F32ToF16(std::bit_cast<float>(0x7F800001u)), 0x7E00);  // signalling -> quiet
  EXPECT_EQ(F32ToBF16(kNaN), 0x7FC0);
  EXPECT_EQ(F32ToBF16(-kNaN), 0xFFC0);
  EXPECT_EQ(F32ToBF16(std::bit_cast<float>(0x7F800001u)), 0x7FC0);  // would truncate to Inf
  EXPECT_EQ(F32ToF8(DType::kF8E4M3FN, kNaN), 0x7F);
  EXPECT_EQ(F32ToF8(DType::kF8E4M3FN, -kNaN), 0xFF);
  EXPECT_EQ(F32ToF8(DType::kF8E5M2, kNaN), 0x7F);
  EXPECT_EQ(F32ToF8(DType::kF8E5M2, -kNaN), 0xFF);
  EXPECT_EQ(F32ToF8(DType::kF8E4M3FNUZ, -kNaN), 0x80);
  EXPECT_EQ(F32ToF8(DType::kF8E5M2FNUZ, kNaN), 0x80);
  EXPECT_EQ(F32ToF16(kInf), 0x7C00);
  EXPECT_EQ(F32ToF16(-kInf), 0xFC00);
  EXPECT_EQ(F32ToBF16(-kInf), 0xFF80);
  EXPECT_EQ(F32ToF8(DType::kF8E5M2, -kInf), 0xFC);
  EXPECT_EQ(F32ToF8(DType::kF8E4M3FN, kInf), 0x7F);
  EXPECT_EQ(F32ToF8(DType::kF8E4M3FN, -kInf), 0xFF);
  EXPECT_EQ(F32ToF8(DType::kF8E5M2FNUZ, -kInf), 0x80);
  // NaN payloads widen bit for bit from f16 and bf16 (as numpy and torch do).
  EXPECT_EQ(std::bit_cast<uint32_t>(F16ToF32(0x7C01)), 0x7F802000u);
  EXPECT_EQ(std::bit_cast<uint32_t>(F16ToF32(0xFE00)), 0xFFC00000u);
  EXPECT_EQ(std::bit_cast<uint32_t>(BF16ToF32(0xFF81)), 0xFF810000u);
}

TEST(FloatConvertTest, Fp8KnownValues) {
  // From the OCP FP8 spec and the fnuz papers.
  EXPECT_EQ(F8ToF32(DType::kF8E4M3FN, 0x38), 1.0f);
  EXPECT_EQ(F8ToF32(DType::kF8E4M3FN, 0x01), 0x1p-9f);
  EXPECT_EQ(F8ToF32(DType::kF8E4M3FN, 0xFE), -448.0f);
  EXPECT_EQ(F8ToF32(DType::kF8E5M2, 0x3C), 1.0f);
  EXPECT_EQ(F8ToF32(DType::kF8E5M2, 0x01), 0x1p-16f);
  EXPECT_EQ(F8ToF32(DType::kF8E5M2, 0x7C), kInf);
  EXPECT_EQ(F8ToF32(DType::kF8E5M2, 0xFC), -kInf);
  EXPECT_EQ(F8ToF32(DType::kF8E4M3FNUZ, 0x40), 1.0f);
  EXPECT_EQ(F8ToF32(DType::kF8E4M3FNUZ, 0x01), 0x1p-10f);
  EXPECT_EQ(F8ToF32(DType::kF8E4M3FNUZ, 0xFF), -240.0f);
  EXPECT_EQ(F8ToF32(DType::kF8E5M2FNUZ, 0x40), 1.0f);
  EXPECT_EQ(F8ToF32(DType::kF8E5M2FNUZ, 0x01), 0x1p-17f);
  EXPECT_EQ(F8ToF32(DType::kF8E5M2FNUZ, 0xFF), -57344.0f);
  EXPECT_TRUE(std::isnan(F8ToF32(DType::kF8E4M3FNUZ, 0x80)));
  EXPECT_TRUE(std::isnan(F8ToF32(DType::kF8E5M2FNUZ, 0x80)));
  EXPECT_EQ(F32ToF8(DType::kF8E4M3FN, 1.0625f), 0x38);  // 1 + 1/16: tie, 1.000b is even
  EXPECT_EQ(F32ToF8(DType::kF8E4M3FN, 1.1875f), 0x3A);  // 1 + 3/16: tie, 1.010b is even
  EXPECT_EQ(F32ToF8(DType::kF8E5M2, 1.125f), 0x3C);
  EXPECT_EQ(F32ToF8(DType::kF8E5M2, 1.375f), 0x3E);
  EXPECT_EQ(F32ToF8(DType::kF8E4M3FNUZ, -1e-20f), 0x00);  // underflow: no -0 in fnuz
}

TEST(FloatConvertTest, NonFp8DTypeIsRejectedQuietly) {
  EXPECT_TRUE(std::isnan(F8ToF32(DType::kF16, 0x38)));
  EXPECT_EQ(F32ToF8(DType::kF32, 1.0f), 0);
  EXPECT_EQ(F32ToF8(DType::kBF16, 1.0f), 0);
}

// The fast bf16 path agrees with the generic rounding RoundToDType uses.
TEST(FloatConvertTest, BF16FastPathAgreesWithRoundToDType) {
  std::mt19937 rng(777);
  for (int i = 0; i < 1000000; ++i) {
    const auto x = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (std::isnan(x)) continue;
    ASSERT_TRUE(SameValue(BF16ToF32(F32ToBF16(x)), RoundToDType(DType::kBF16, x))) << x;
  }
}

TEST(FloatConvertTest, RoundToDTypeRoundsOnceFromDouble) {
  // Each value is a midpoint plus 2^-40: a double -> float cast would drop the 2^-40 and then
  // tie to even (down); rounding once from the double goes up.
  EXPECT_EQ(RoundToDType(DType::kF16, 1 + 0x1p-11 + 0x1p-40), 1 + 0x1p-10);
  EXPECT_EQ(RoundToDType(DType::kF16, 1 + 0x1p-11), 1.0);
  EXPECT_EQ(RoundToDType(DType::kBF16, 1 + 0x1p-8 + 0x1p-40), 1 + 0x1p-7);
  EXPECT_EQ(RoundToDType(DType::kBF16, 1 + 0x1p-8), 1.0);
  EXPECT_EQ(RoundToDType(DType::kBF16, 1 + 0x3p-8), 1 + 0x1p-6);  // tie to even, upward
  EXPECT_EQ(RoundToDType(DType::kF8E4M3FN, 1 + 0x1p-4 + 0x1p-40), 1.125);
  EXPECT_EQ(RoundToDType(DType::kF8E4M3FN, 464.0), 448.0);
  EXPECT_TRUE(std::isnan(RoundToDType(DType::kF8E4M3FN, 464.0 + 0x1p-40)));
  EXPECT_EQ(RoundToDType(DType::kF8E5M2, 1 + 0x1p-3 + 0x1p-40), 1.25);
  EXPECT_EQ(RoundToDType(DType::kF8E5M2, 1e6), std::numeric_limits<double>::infinity());
  EXPECT_EQ(RoundToDType(DType::kF8E4M3FNUZ, 0.1), 0.1015625);
  EXPECT_EQ(RoundToDType(DType::kF8E5M2FNUZ, 0.1), 0.09375);
  EXPECT_EQ(RoundToDType(DType::kF16, 65519.99), 65504.0);
  EXPECT_EQ(RoundToDType(DType::kF16, -65520.0), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(RoundToDType(DType::kF16, 1e300), std::numeric_limits<double>::infinity());
  EXPECT_EQ(RoundToDType(DType::kF16, 1e-300), 0.0);
  EXPECT_TRUE(std::signbit(RoundToDType(DType::kF16, -1e-300)));
  EXPECT_FALSE(std::signbit(RoundToDType(DType::kF8E5M2FNUZ, -1e-300)));
  EXPECT_EQ(RoundToDType(DType::kF16, 0.1), 0.0999755859375);
  EXPECT_TRUE(std::isnan(RoundToDType(DType::kBF16, std::nan(""))));
}

TEST(FloatConvertTest, RoundToDTypeF32AndUnchangedTypes) {
  const double float_max = std::numeric_limits<float>::max();
  EXPECT_EQ(RoundToDType(DType::kF32, 1 + 0x1p-24), 1.0);  // tie to even
  EXPECT_EQ(RoundToDType(DType::kF32, 1 + 0x1p-24 + 0x1p-52), 1 + 0x1p-23);
  EXPECT_EQ(RoundToDType(DType::kF32, 0.1), static_cast<double>(0.1f));
  EXPECT_EQ(RoundToDType(DType::kF32, float_max + 0x1p102), float_max);
  EXPECT_EQ(RoundToDType(DType::kF32, float_max + 0x1p103),
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(RoundToDType(DType::kF32, -1e300), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(RoundToDType(DType::kF32, 1e-300), 0.0);
  EXPECT_EQ(RoundToDType(DType::kF32, 0x1p-149), 0x1p-149);
  EXPECT_EQ(RoundToDType(DType::kF32, 0x1p-150), 0.0);  // tie with denorm_min: 0 is even
  EXPECT_EQ(RoundToDType(DType::kF32, 0x3p-150), 0x1p-148);
  EXPECT_TRUE(std::isnan(RoundToDType(DType::kF32, std::nan(""))));
  EXPECT_TRUE(std::signbit(RoundToDType(DType::kF32, -0.0)));
  for (DType d : {DType::kF64, DType::kI64, DType::kI32, DType::kU8, DType::kBool, DType::kC64,
                  DType::kC128}) {
    EXPECT_EQ(RoundToDType(d, 0.1), 0.1) << Name(d);
    EXPECT_EQ(RoundToDType(d, 1e300), 1e300) << Name(d);
    EXPECT_EQ(RoundToDType(d, 2.5), 2.5) << Name(d);
  }
}

TEST(FloatConvertTest, RoundToDTypeIsIdentityOnRepresentableValues) {
  for (const Spec& s : AllSpecs()) {
    for (uint32_t code = 0; code < s.Codes(); ++code) {
      const double v = s.decode(code);
      if (std::isnan(v)) continue;
      ASSERT_TRUE(SameValue(RoundToDType(s.dtype, v), v)) << s.name << " " << v;
    }
  }
}

TEST(FloatConvertTest, RangeOfKnownConstants) {
  struct Want {
    DType dtype;
    double max_finite;
    double min_normal;
    double min_subnormal;
  };
  const Want wants[] = {
      {DType::kF64, 1.7976931348623157e308, 0x1p-1022, 0x1p-1074},
      {DType::kF32, 3.4028234663852886e38, 0x1p-126, 0x1p-149},
      {DType::kF16, 65504.0, 0x1p-14, 0x1p-24},
      {DType::kBF16, 3.3895313892515355e38, 0x1p-126, 0x1p-133},
      {DType::kF8E4M3FN, 448.0, 0x1p-6, 0x1p-9},
      {DType::kF8E5M2, 57344.0, 0x1p-14, 0x1p-16},
      {DType::kF8E4M3FNUZ, 240.0, 0x1p-7, 0x1p-10},
      {DType::kF8E5M2FNUZ, 57344.0, 0x1p-15, 0x1p-17},
  };
  for (const Want& w : wants) {
    const FloatRange r = RangeOf(w.dtype);
    EXPECT_EQ(r.max_finite, w.max_finite) << Name(w.dtype);
    EXPECT_EQ(r.min_normal, w.min_normal) << Name(w.dtype);
    EXPECT_EQ(r.min_subnormal, w.min_subnormal) << Name(w.dtype);
    // Consistent with the rounding: the facts are representable, and half the smallest
    // subnormal is a tie that rounds to zero.
    EXPECT_EQ(RoundToDType(w.dtype, r.max_finite), r.max_finite) << Name(w.dtype);
    EXPECT_EQ(RoundToDType(w.dtype, r.min_subnormal), r.min_subnormal) << Name(w.dtype);
    if (w.dtype != DType::kF64) {
      EXPECT_EQ(RoundToDType(w.dtype, r.min_subnormal / 2), 0.0) << Name(w.dtype);
    }
  }
  for (DType d : {DType::kI32, DType::kU8, DType::kBool, DType::kC64}) {
    const FloatRange r = RangeOf(d);
    EXPECT_EQ(r.max_finite, 0.0) << Name(d);
    EXPECT_EQ(r.min_normal, 0.0) << Name(d);
    EXPECT_EQ(r.min_subnormal, 0.0) << Name(d);
  }
}

}  // namespace
}  // namespace numprobe
