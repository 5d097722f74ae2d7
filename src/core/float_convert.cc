// Scalar, bit-exact conversions for the narrow float formats. No library offers all of them
// without a compiler extension (_Float16, __bf16) or a C++ dependency on torch/ml_dtypes, and
// the exact rounding rules (which NaN code, what happens on overflow, fnuz's zero) differ per
// format, so they are written here from the format definitions and tested exhaustively.
//
// Encoding goes through one generic routine that works on a double: every f32 is a double, so a
// single rounding from the double's 53-bit significand is exact for f32 inputs and avoids double
// rounding in RoundToDType (double -> float -> f16 would round twice).
#include "numprobe/float_convert.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace numprobe {
namespace {

// How a format spends its top exponent code and its sign bit.
enum class Special : uint8_t {
  kIeee,    // exponent all ones = Inf (mantissa 0) or NaN (f16, bf16, e5m2)
  kFinite,  // no Inf; S.1111.111 is NaN, everything else finite (e4m3fn)
  kFnuz,    // no Inf, no -0; the single code 0x80 is NaN (e4m3fnuz, e5m2fnuz)
};

struct Format {
  int exp_bits;
  int mant_bits;
  int bias;
  Special special;
  uint32_t nan_magnitude;  // the NaN code written by the encoder, without the sign bit

  [[nodiscard]] constexpr uint32_t SignBit() const { return 1u << (exp_bits + mant_bits); }
  [[nodiscard]] constexpr uint32_t ExpAllOnes() const { return (1u << exp_bits) - 1; }
  [[nodiscard]] constexpr uint32_t MantMask() const { return (1u << mant_bits) - 1; }
  [[nodiscard]] constexpr uint32_t InfMagnitude() const { return ExpAllOnes() << mant_bits; }
  // The largest finite magnitude code.
  [[nodiscard]] constexpr uint32_t MaxMagnitude() const {
    switch (special) {
      case Special::kIeee:
        return InfMagnitude() - 1;
      case Special::kFinite:
        return SignBit() - 2;
      case Special::kFnuz:
        return SignBit() - 1;
    }
    return 0;
  }
};

// Quiet NaNs: f16 0x7E00 and bf16 0x7FC0 (torch's), e5m2 0x7F and e4m3fn 0x7F (c10's Float8_*).
constexpr Format kF16Format{5, 10, 15, Special::kIeee, 0x7E00};
constexpr Format kBF16Format{8, 7, 127, Special::kIeee, 0x7FC0};
constexpr Format kE4M3FNFormat{4, 3, 7, Special::kFinite, 0x7F};
constexpr Format kE5M2Format{5, 2, 15, Special::kIeee, 0x7F};
constexpr Format kE4M3FNUZFormat{4, 3, 8, Special::kFnuz, 0x80};
constexpr Format kE5M2FNUZFormat{5, 2, 16, Special::kFnuz, 0x80};

constexpr uint32_t kF32QuietNaN = 0x7FC00000u;

// x / 2^shift rounded to nearest, ties to even. x < 2^63, shift in [0, 63].
constexpr uint64_t RoundShiftRightEven(uint64_t x, int shift) {
  if (shift == 0) return x;
  const uint64_t q = x >> shift;
  const uint64_t rem = x & ((uint64_t{1} << shift) - 1);
  const uint64_t half = uint64_t{1} << (shift - 1);
  return (rem > half || (rem == half && (q & 1) != 0)) ? q + 1 : q;
}

// Encodes `value` into `f` with one round-to-nearest-even step.
constexpr uint32_t Encode(const Format& f, double value) {
  constexpr uint64_t kSign64 = uint64_t{1} << 63;
  constexpr uint64_t kInf64 = 0x7FF0000000000000u;
  constexpr uint64_t kFrac64 = (uint64_t{1} << 52) - 1;
  const auto bits = std::bit_cast<uint64_t>(value);
  const uint64_t abs_bits = bits & ~kSign64;
  const uint32_t sign = (bits & kSign64) != 0 ? f.SignBit() : 0;
  const bool fnuz = f.special == Special::kFnuz;

  if (abs_bits > kInf64) return fnuz ? f.nan_magnitude : sign | f.nan_magnitude;
  if (abs_bits == kInf64) {
    if (f.special == Special::kIeee) return sign | f.InfMagnitude();
    return fnuz ? f.nan_magnitude : sign | f.nan_magnitude;
  }

  // value = significand * 2^(exponent - 52).
  const int biased64 = static_cast<int>(abs_bits >> 52);
  uint64_t significand = abs_bits & kFrac64;
  int exponent = -1022;
  if (biased64 != 0) {
    significand |= uint64_t{1} << 52;
    exponent = biased64 - 1023;
  }
  const int emin = 1 - f.bias;  // exponent of the smallest normal
  uint64_t magnitude = 0;
  if (significand == 0) {
    magnitude = 0;
  } else if (exponent >= emin) {
    // Exponent field and fraction side by side, so a carry out of the fraction bumps the
    // exponent (and the largest finite value rounds up into the Inf/NaN codes). The field is at
    // most 1023 + 127 < 2^11, so the sum fits 64 bits.
    const auto field = static_cast<uint64_t>(static_cast<int64_t>(exponent) + f.bias);
    magnitude = RoundShiftRightEven((field << 52) | (significand & kFrac64), 52 - f.mant_bits);
  } else {
    // Below the normal range: count in units of the smallest subnormal, 2^(emin - mant_bits).
    // A result of 1 << mant_bits is the smallest normal, which is the right code too.
    const int shift = 52 - f.mant_bits + (emin - exponent);
    magnitude = shift > 60 ? 0 : RoundShiftRightEven(significand, shift);
  }

  switch (f.special) {
    case Special::kIeee:
      if (magnitude >= f.InfMagnitude()) return sign | f.InfMagnitude();
      break;
    case Special::kFinite:
      if (magnitude > f.MaxMagnitude()) return sign | f.nan_magnitude;
      break;
    case Special::kFnuz:
      if (magnitude > f.MaxMagnitude()) return f.nan_magnitude;
      if (magnitude == 0) return 0;  // no negative zero: 0x80 is NaN
      break;
  }
  return sign | static_cast<uint32_t>(magnitude);
}

// f32 bits of the value of `code` in `f`, for formats whose every value is a normal f32 (all but
// bf16). IEEE NaN payloads are widened bit for bit (as numpy does for f16); the NaNs of the
// fp8-only formats decode to the canonical quiet NaN.
constexpr uint32_t DecodeToF32Bits(const Format& f, uint32_t code) {
  const uint32_t sign = (code & f.SignBit()) != 0 ? 0x80000000u : 0;
  const uint32_t exp_field = (code >> f.mant_bits) & f.ExpAllOnes();
  uint32_t mant = code & f.MantMask();
  const int shift = 23 - f.mant_bits;
  switch (f.special) {
    case Special::kIeee:
      if (exp_field == f.ExpAllOnes()) {
        if (f.mant_bits >= 10 || mant == 0) return sign | 0x7F800000u | (mant << shift);
        return sign | kF32QuietNaN | (mant << shift);
      }
      break;
    case Special::kFinite:
      if (exp_field == f.ExpAllOnes() && mant == f.MantMask()) return sign | kF32QuietNaN;
      break;
    case Special::kFnuz:
      if (code == f.SignBit()) return kF32QuietNaN;
      break;
  }
  int exponent = static_cast<int>(exp_field) - f.bias;
  if (exp_field == 0) {
    if (mant == 0) return sign;
    // Subnormal: normalise so the leading one lands on the hidden bit.
    const int lead = static_cast<int>(std::bit_width(mant)) - 1;  // position of the leading one
    exponent = 1 - f.bias - (f.mant_bits - lead);
    mant = (mant << (f.mant_bits - lead)) & f.MantMask();
  }
  return sign | (static_cast<uint32_t>(exponent + 127) << 23) | (mant << shift);
}

constexpr std::array<uint32_t, 256> MakeF8Table(const Format& f) {
  std::array<uint32_t, 256> table{};
  for (uint32_t code = 0; code < 256; ++code) table[code] = DecodeToF32Bits(f, code);
  return table;
}

constexpr std::array<uint32_t, 256> kE4M3FNTable = MakeF8Table(kE4M3FNFormat);
constexpr std::array<uint32_t, 256> kE5M2Table = MakeF8Table(kE5M2Format);
constexpr std::array<uint32_t, 256> kE4M3FNUZTable = MakeF8Table(kE4M3FNUZFormat);
constexpr std::array<uint32_t, 256> kE5M2FNUZTable = MakeF8Table(kE5M2FNUZFormat);

// Spot checks of the tables against the format definitions, at compile time.
static_assert(kE4M3FNTable[0x7E] == 0x43E00000u);    // 448
static_assert(kE5M2Table[0x7B] == 0x47600000u);      // 57344
static_assert(kE4M3FNUZTable[0x7F] == 0x43700000u);  // 240
static_assert(kE5M2FNUZTable[0x01] == 0x37000000u);  // 2^-17
static_assert(Encode(kE4M3FNFormat, 464.0) == 0x7E && Encode(kE4M3FNFormat, 464.5) == 0x7F);

const Format* FormatOf(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return &kF16Format;
    case DType::kBF16:
      return &kBF16Format;
    case DType::kF8E4M3FN:
      return &kE4M3FNFormat;
    case DType::kF8E5M2:
      return &kE5M2Format;
    case DType::kF8E4M3FNUZ:
      return &kE4M3FNUZFormat;
    case DType::kF8E5M2FNUZ:
      return &kE5M2FNUZFormat;
    default:
      return nullptr;
  }
}

// An f32 rounding of a double that is defined for every input (a plain cast of a double beyond
// the float range is undefined behaviour in C++): IEEE overflow to Inf at FLT_MAX + half an ulp.
float RoundToF32(double value) {
  constexpr double kFloatMax = std::numeric_limits<float>::max();
  constexpr double kOverflow = kFloatMax + 0x1p103;  // FLT_MAX + half its ulp (2^104)
  if (std::isnan(value)) return static_cast<float>(value);
  const double magnitude = std::fabs(value);
  if (magnitude >= kOverflow)
    return std::copysign(std::numeric_limits<float>::infinity(),
                         static_cast<float>(value > 0 ? 1 : -1));
  if (magnitude > kFloatMax)
    return std::copysign(std::numeric_limits<float>::max(), static_cast<float>(value > 0 ? 1 : -1));
  return static_cast<float>(value);
}

}  // namespace

float F16ToF32(uint16_t bits) { return std::bit_cast<float>(DecodeToF32Bits(kF16Format, bits)); }

uint16_t F32ToF16(float value) { return static_cast<uint16_t>(Encode(kF16Format, value)); }

float BF16ToF32(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

uint16_t F32ToBF16(float value) {
  // bf16 is the top half of an f32, so rounding is adding just under half of the dropped part
  // (plus the kept LSB for ties to even); a carry runs into the exponent and up to Inf.
  const auto bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) {
    return static_cast<uint16_t>(((bits >> 16) & 0x8000u) | kBF16Format.nan_magnitude);
  }
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

float F8ToF32(DType dtype, uint8_t bits) {
  switch (dtype) {
    case DType::kF8E4M3FN:
      return std::bit_cast<float>(kE4M3FNTable[bits]);
    case DType::kF8E5M2:
      return std::bit_cast<float>(kE5M2Table[bits]);
    case DType::kF8E4M3FNUZ:
      return std::bit_cast<float>(kE4M3FNUZTable[bits]);
    case DType::kF8E5M2FNUZ:
      return std::bit_cast<float>(kE5M2FNUZTable[bits]);
    default:
      return std::numeric_limits<float>::quiet_NaN();  // not an fp8 dtype
  }
}

uint8_t F32ToF8(DType dtype, float value) {
  const Format* f = FormatOf(dtype);
  if (f == nullptr || f->exp_bits + f->mant_bits != 7) return 0;  // not an fp8 dtype
  return static_cast<uint8_t>(Encode(*f, value));
}

double RoundToDType(DType dtype, double value) {
  switch (dtype) {
    case DType::kF32:
      return RoundToF32(value);
    case DType::kF16:
      return F16ToF32(static_cast<uint16_t>(Encode(kF16Format, value)));
    case DType::kBF16:
      return BF16ToF32(static_cast<uint16_t>(Encode(kBF16Format, value)));
    case DType::kF8E4M3FN:
    case DType::kF8E5M2:
    case DType::kF8E4M3FNUZ:
    case DType::kF8E5M2FNUZ:
      return F8ToF32(dtype, static_cast<uint8_t>(Encode(*FormatOf(dtype), value)));
    default:
      return value;  // f64, integers, bool, complex: unchanged
  }
}

namespace {

FloatRange ComputeRangeOf(DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return {std::numeric_limits<double>::max(), std::numeric_limits<double>::min(),
              std::numeric_limits<double>::denorm_min()};
    case DType::kF32:
      return {std::numeric_limits<float>::max(), std::numeric_limits<float>::min(),
              std::numeric_limits<float>::denorm_min()};
    default:
      break;
  }
  const Format* f = FormatOf(dtype);
  if (f == nullptr) return {0.0, 0.0, 0.0};  // not a floating dtype
  const int emin = 1 - f->bias;
  const uint32_t max_magnitude = f->MaxMagnitude();
  const double max_finite = dtype == DType::kBF16
                                ? BF16ToF32(static_cast<uint16_t>(max_magnitude))
                                : std::bit_cast<float>(DecodeToF32Bits(*f, max_magnitude));
  return {max_finite, std::ldexp(1.0, emin), std::ldexp(1.0, emin - f->mant_bits)};
}

}  // namespace

FloatRange RangeOf(DType dtype) {
  // Decoded once per dtype: scan's headroom asks for every tensor and every target dtype.
  static const std::array<FloatRange, kDTypeCount> kRanges = [] {
    std::array<FloatRange, kDTypeCount> ranges{};
    for (int d = 0; d < kDTypeCount; ++d) ranges[d] = ComputeRangeOf(static_cast<DType>(d));
    return ranges;
  }();
  const auto index = static_cast<size_t>(dtype);
  return index < kRanges.size() ? kRanges[index] : FloatRange{0.0, 0.0, 0.0};
}

}  // namespace numprobe
