// f16/bf16 conversions against real numpy (f16) and torch (bf16): every decode and a few million
// encodes must be bit-identical. Data written by gen_float16.py (ctest fixture golden.generate).
// Float-to-text against CPython's repr (float64) and numpy's str (float32), from gen_repr.py.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/float_convert.h"

#include "core/py_format.h"

namespace numprobe {
namespace {

std::string GoldenPath(const std::string& file, const std::string& folder = "float16") {
  const char* env = std::getenv("NUMPROBE_GOLDEN_DIR");
  const std::string dir = env != nullptr && *env != '\0' ? env : NUMPROBE_GOLDEN_DIR;
  return dir + "/" + folder + "/" + file;
}

// Reads a little-endian array of T (the host is little-endian, as numprobe requires).
template <typename T>
std::vector<T> ReadArray(const std::string& file, const std::string& folder = "float16") {
  const std::string path = GoldenPath(file, folder);
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  EXPECT_TRUE(in.good()) << "cannot open " << path << " (run ctest -R golden)";
  if (!in.good()) return {};
  const auto size = static_cast<size_t>(in.tellg());
  EXPECT_EQ(size % sizeof(T), 0u) << file;
  std::vector<T> out(size / sizeof(T));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(out.data()),
          static_cast<std::streamsize>(out.size() * sizeof(T)));
  EXPECT_TRUE(in.good()) << "short read of " << file;
  return out;
}

bool IsNaN32(uint32_t bits) { return (bits & 0x7FFFFFFFu) > 0x7F800000u; }
bool IsNaN16(uint16_t bits) { return (bits & 0x7FFFu) > 0x7C00u; }
bool IsNaNBF16(uint16_t bits) { return (bits & 0x7FFFu) > 0x7F80u; }

// Every 16-bit code decoded by `decode` must be bit-identical to the reference's f32, NaN
// payloads included.
void CheckDecode(const char* name, const char* reference_name, const char* file,
                 float (*decode)(uint16_t)) {
  const auto expected = ReadArray<uint32_t>(file);
  ASSERT_EQ(expected.size(), 65536u) << file;
  int mismatches = 0;
  for (uint32_t code = 0; code < 65536; ++code) {
    const auto got = std::bit_cast<uint32_t>(decode(static_cast<uint16_t>(code)));
    if (got != expected[code] && ++mismatches <= 10) {
      ADD_FAILURE() << name << " code 0x" << std::hex << code << ": got 0x" << got << ", "
                    << reference_name << " 0x" << expected[code];
    }
  }
  EXPECT_EQ(mismatches, 0) << name;
}

TEST(FloatConvertGoldenTest, F16DecodeMatchesNumpyForEveryCode) {
  CheckDecode("f16", "numpy", "f16_decode.bin", F16ToF32);
}

TEST(FloatConvertGoldenTest, BF16DecodeMatchesTorchForEveryCode) {
  CheckDecode("bf16", "torch", "bf16_decode.bin", BF16ToF32);
}

// For a NaN input numpy keeps (a truncation of) the payload and torch's vectorised path writes
// 0xFFFF whatever the sign; numprobe writes the canonical quiet NaN with the input's sign. So for
// NaN inputs: both sides must be NaN, and numprobe's sign must be the input's.
template <typename Encode, typename IsNaNOut>
void CheckEncode(const char* name, const char* reference_name, const std::vector<uint32_t>& inputs,
                 const std::vector<uint16_t>& expected, Encode encode, IsNaNOut is_nan_out,
                 bool reference_keeps_nan_sign) {
  ASSERT_EQ(inputs.size(), expected.size()) << name;
  ASSERT_GT(inputs.size(), 1000000u) << name;
  int mismatches = 0;
  int64_t nan_inputs = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const uint32_t in = inputs[i];
    const uint16_t got = encode(std::bit_cast<float>(in));
    bool ok = got == expected[i];
    if (IsNaN32(in)) {
      ++nan_inputs;
      const bool sign_in = (in >> 31) != 0;
      ok = is_nan_out(got) && is_nan_out(expected[i]) && ((got >> 15) != 0) == sign_in &&
           (!reference_keeps_nan_sign || ((expected[i] >> 15) != 0) == sign_in);
    }
    if (!ok && ++mismatches <= 10) {
      ADD_FAILURE() << name << " of f32 0x" << std::hex << in << ": got 0x" << got << ", "
                    << reference_name << " 0x" << expected[i];
    }
  }
  EXPECT_EQ(mismatches, 0) << name;
  EXPECT_GT(nan_inputs, 1000) << name;  // the generator's NaN set is present
}

TEST(FloatConvertGoldenTest, F16EncodeMatchesNumpy) {
  CheckEncode("f16", "numpy", ReadArray<uint32_t>("encode_input.bin"),
              ReadArray<uint16_t>("encode_f16.bin"), F32ToF16, IsNaN16, true);
}

TEST(FloatConvertGoldenTest, BF16EncodeMatchesTorch) {
  CheckEncode("bf16", "torch", ReadArray<uint32_t>("encode_input.bin"),
              ReadArray<uint16_t>("encode_bf16.bin"), F32ToBF16, IsNaNBF16, false);
}

// RoundToDType follows the same rounding from a double; f32 inputs are doubles exactly.
TEST(FloatConvertGoldenTest, RoundToDTypeMatchesReferenceEncodes) {
  const auto inputs = ReadArray<uint32_t>("encode_input.bin");
  const auto f16 = ReadArray<uint16_t>("encode_f16.bin");
  const auto bf16 = ReadArray<uint16_t>("encode_bf16.bin");
  ASSERT_EQ(inputs.size(), f16.size());
  ASSERT_EQ(inputs.size(), bf16.size());
  int mismatches = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (IsNaN32(inputs[i])) continue;
    const double in = std::bit_cast<float>(inputs[i]);
    const double want16 = F16ToF32(f16[i]);
    const double want_bf16 = BF16ToF32(bf16[i]);
    const double got16 = RoundToDType(DType::kF16, in);
    const double got_bf16 = RoundToDType(DType::kBF16, in);
    // Compare bits so that -0.0 and 0.0 differ.
    if ((std::bit_cast<uint64_t>(got16) != std::bit_cast<uint64_t>(want16) ||
         std::bit_cast<uint64_t>(got_bf16) != std::bit_cast<uint64_t>(want_bf16)) &&
        ++mismatches <= 10) {
      ADD_FAILURE() << "RoundToDType of f32 0x" << std::hex << inputs[i] << ": f16 " << got16
                    << " vs " << want16 << ", bf16 " << got_bf16 << " vs " << want_bf16;
    }
  }
  EXPECT_EQ(mismatches, 0);
}

// Each value's text must be the reference's, line for line.
template <typename T, typename Format>
void CheckTexts(const char* bin, const char* txt, const Format& format) {
  const std::vector<T> values = ReadArray<T>(bin, "repr");
  std::ifstream texts(GoldenPath(txt, "repr"));
  ASSERT_TRUE(texts.good()) << txt;
  ASSERT_GT(values.size(), 100000u) << bin;
  int mismatches = 0;
  std::string expected;
  for (const T value : values) {
    ASSERT_TRUE(std::getline(texts, expected)) << txt << " has fewer lines than " << bin;
    const std::string got = format(value);
    if (got != expected && ++mismatches <= 10) {
      ADD_FAILURE() << bin << ": got " << got << ", expected " << expected;
    }
  }
  EXPECT_EQ(mismatches, 0) << bin;
}

TEST(FloatTextGoldenTest, ReprOfFloat64MatchesCPython) {
  CheckTexts<double>("f64.bin", "f64.txt", [](double v) { return detail::PyFloatRepr(v); });
}

TEST(FloatTextGoldenTest, StrOfFloat32MatchesNumpy) {
  CheckTexts<uint32_t>("f32.bin", "f32.txt", [](uint32_t bits) {
    return detail::PyFloat32Repr(std::bit_cast<float>(bits));
  });
}

}  // namespace
}  // namespace numprobe
