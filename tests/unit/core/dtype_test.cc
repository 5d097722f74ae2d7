// The dtype table against the formats' own spellings (formats.md): every entry through every
// parser, the aliases, the sizes and kinds, Dispatch, and names that must not parse.
#include "numprobe/dtype.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>

#include <gtest/gtest.h>

namespace numprobe {
namespace {

// What each format calls each dtype, written out independently of the X-macro.
struct Expected {
  DType dtype;
  std::string_view name;
  int item_size;
  DTypeKind kind;
  std::string_view torch;        // torch.<torch>
  std::string_view storage;      // torch.<storage>Storage; "" if none
  std::string_view numpy;        // descr without byte order; "" if none
  std::string_view safetensors;  // "" if none
  std::string_view mindspore;    // "" if none
};

constexpr Expected kExpected[] = {
    {DType::kF64, "f64", 8, DTypeKind::kFloat, "float64", "Double", "f8", "F64", "Float64"},
    {DType::kF32, "f32", 4, DTypeKind::kFloat, "float32", "Float", "f4", "F32", "Float32"},
    {DType::kF16, "f16", 2, DTypeKind::kFloat, "float16", "Half", "f2", "F16", "Float16"},
    {DType::kBF16, "bf16", 2, DTypeKind::kFloat, "bfloat16", "BFloat16", "", "BF16", "BFloat16"},
    {DType::kF8E4M3FN, "f8_e4m3fn", 1, DTypeKind::kFloat, "float8_e4m3fn", "", "", "F8_E4M3", ""},
    {DType::kF8E5M2, "f8_e5m2", 1, DTypeKind::kFloat, "float8_e5m2", "", "", "F8_E5M2", ""},
    {DType::kF8E4M3FNUZ, "f8_e4m3fnuz", 1, DTypeKind::kFloat, "float8_e4m3fnuz", "", "",
     "F8_E4M3FNUZ", ""},
    {DType::kF8E5M2FNUZ, "f8_e5m2fnuz", 1, DTypeKind::kFloat, "float8_e5m2fnuz", "", "",
     "F8_E5M2FNUZ", ""},
    {DType::kI64, "i64", 8, DTypeKind::kSignedInt, "int64", "Long", "i8", "I64", "Int64"},
    {DType::kI32, "i32", 4, DTypeKind::kSignedInt, "int32", "Int", "i4", "I32", "Int32"},
    {DType::kI16, "i16", 2, DTypeKind::kSignedInt, "int16", "Short", "i2", "I16", "Int16"},
    {DType::kI8, "i8", 1, DTypeKind::kSignedInt, "int8", "Char", "i1", "I8", "Int8"},
    {DType::kU64, "u64", 8, DTypeKind::kUnsignedInt, "uint64", "", "u8", "U64", "UInt64"},
    {DType::kU32, "u32", 4, DTypeKind::kUnsignedInt, "uint32", "", "u4", "U32", "UInt32"},
    {DType::kU16, "u16", 2, DTypeKind::kUnsignedInt, "uint16", "", "u2", "U16", "UInt16"},
    {DType::kU8, "u8", 1, DTypeKind::kUnsignedInt, "uint8", "Byte", "u1", "U8", "UInt8"},
    {DType::kBool, "bool", 1, DTypeKind::kBool, "bool", "Bool", "b1", "BOOL", "Bool"},
    {DType::kC64, "c64", 8, DTypeKind::kComplex, "complex64", "ComplexFloat", "c8", "C64",
     "Complex64"},
    {DType::kC128, "c128", 16, DTypeKind::kComplex, "complex128", "ComplexDouble", "c16", "",
     "Complex128"},
};

TEST(DTypeTest, EnumValuesAreStable) {
  // Append-only: these numbers may be stored, so they must never change.
  EXPECT_EQ(kDTypeCount, 19);
  EXPECT_EQ(static_cast<int>(DType::kF64), 0);
  EXPECT_EQ(static_cast<int>(DType::kBF16), 3);
  EXPECT_EQ(static_cast<int>(DType::kF8E5M2FNUZ), 7);
  EXPECT_EQ(static_cast<int>(DType::kI64), 8);
  EXPECT_EQ(static_cast<int>(DType::kU8), 15);
  EXPECT_EQ(static_cast<int>(DType::kBool), 16);
  EXPECT_EQ(static_cast<int>(DType::kC128), 18);
  for (int i = 0; i < kDTypeCount; ++i) {
    EXPECT_EQ(static_cast<int>(kDTypeTraits[i].dtype), i);
    EXPECT_EQ(kExpected[i].dtype, kDTypeTraits[i].dtype);
  }
}

TEST(DTypeTest, TraitsMatchTheFormatsSpellings) {
  for (const Expected& e : kExpected) {
    const DTypeTraits& t = Traits(e.dtype);
    SCOPED_TRACE(std::string(e.name));
    EXPECT_EQ(t.dtype, e.dtype);
    EXPECT_EQ(Name(e.dtype), e.name);
    EXPECT_EQ(ItemSize(e.dtype), e.item_size);
    EXPECT_EQ(t.bits, e.item_size * 8);
    EXPECT_EQ(t.kind, e.kind);
    EXPECT_EQ(t.torch_name, e.torch);
    EXPECT_EQ(t.torch_storage, e.storage);
    EXPECT_EQ(t.numpy_descr, e.numpy);
    EXPECT_EQ(t.safetensors_name, e.safetensors);
    EXPECT_EQ(t.mindspore_name, e.mindspore);
    EXPECT_EQ(TorchDTypeString(e.dtype), "torch." + std::string(e.torch));
  }
}

TEST(DTypeTest, EveryNameParsesBackInEveryFormat) {
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(std::string(e.name));
    EXPECT_EQ(DTypeFromName(e.name), e.dtype);
    EXPECT_EQ(DTypeFromTorchName(e.torch), e.dtype);
    EXPECT_EQ(DTypeFromTorchName("torch." + std::string(e.torch)), e.dtype);
    EXPECT_EQ(DTypeFromTorchName(TorchDTypeString(e.dtype)), e.dtype);
    if (!e.storage.empty()) {
      EXPECT_EQ(DTypeFromTorchStorage(std::string(e.storage) + "Storage"), e.dtype);
      EXPECT_EQ(DTypeFromTorchStorage("torch." + std::string(e.storage) + "Storage"), e.dtype);
    }
    if (!e.numpy.empty()) {
      EXPECT_EQ(DTypeFromNumpyCode(e.numpy), e.dtype);
    }
    if (!e.safetensors.empty()) {
      EXPECT_EQ(DTypeFromSafetensors(e.safetensors), e.dtype);
    }
    if (!e.mindspore.empty()) {
      EXPECT_EQ(DTypeFromMindSpore(e.mindspore), e.dtype);
    }
  }
}

TEST(DTypeTest, NamesAreUniqueWithinEachFormat) {
  // "" means "the format has no such type" and may repeat.
  const auto unique = [](std::set<std::string_view>& seen, std::string_view name) {
    return name.empty() || seen.insert(name).second;
  };
  std::set<std::string_view> names, torch, storage, numpy, safetensors, mindspore;
  for (const DTypeTraits& t : kDTypeTraits) {
    EXPECT_FALSE(t.name.empty());
    EXPECT_FALSE(t.torch_name.empty());
    EXPECT_TRUE(unique(names, t.name)) << t.name;
    EXPECT_TRUE(unique(torch, t.torch_name)) << t.torch_name;
    EXPECT_TRUE(unique(storage, t.torch_storage)) << t.torch_storage;
    EXPECT_TRUE(unique(numpy, t.numpy_descr)) << t.numpy_descr;
    EXPECT_TRUE(unique(safetensors, t.safetensors_name)) << t.safetensors_name;
    EXPECT_TRUE(unique(mindspore, t.mindspore_name)) << t.mindspore_name;
  }
}

TEST(DTypeTest, TorchAliases) {
  const std::pair<std::string_view, DType> aliases[] = {
      {"float", DType::kF32},  {"double", DType::kF64},   {"half", DType::kF16},
      {"long", DType::kI64},   {"int", DType::kI32},      {"short", DType::kI16},
      {"cfloat", DType::kC64}, {"cdouble", DType::kC128},
  };
  for (const auto& [alias, dtype] : aliases) {
    EXPECT_EQ(DTypeFromTorchName(alias), dtype) << alias;
    EXPECT_EQ(DTypeFromTorchName("torch." + std::string(alias)), dtype) << alias;
  }
}

TEST(DTypeTest, MindSporeOldUintSpellings) {
  EXPECT_EQ(DTypeFromMindSpore("Uint8"), DType::kU8);
  EXPECT_EQ(DTypeFromMindSpore("Uint16"), DType::kU16);
  EXPECT_EQ(DTypeFromMindSpore("Uint32"), DType::kU32);
  EXPECT_EQ(DTypeFromMindSpore("Uint64"), DType::kU64);
  EXPECT_EQ(DTypeFromMindSpore("UInt8"), DType::kU8);
}

TEST(DTypeTest, UnknownNamesGiveNullopt) {
  for (std::string_view s : {"", " ", "f32 ", "F32", "float32", "float", "f128", "u4", "x"}) {
    EXPECT_EQ(DTypeFromName(s), std::nullopt) << "name " << s;
  }
  for (std::string_view s : {"", "torch.", "torch", "torch.torch.float32", "Float", "FLOAT32",
                             "f32", "BF16", "float8_e8m0fnu", "complex32", "chalf", "uint1",
                             "qint8", "torch.Float", "torch.float32 "}) {
    EXPECT_EQ(DTypeFromTorchName(s), std::nullopt) << "torch " << s;
  }
  for (std::string_view s :
       {"", "Storage", "torch.Storage", "Float", "FloatStorag", "floatStorage", "FloatStorage ",
        "QInt8Storage", "QUInt8Storage", "UntypedStorage", "TypedStorage", "UInt16Storage",
        "torch.cuda.FloatStorage", "torch.torch.FloatStorage", "Float8_e4m3fnStorage"}) {
    EXPECT_EQ(DTypeFromTorchStorage(s), std::nullopt) << "storage " << s;
  }
  for (std::string_view s :
       {"", "<f4", "|b1", "f16", "c32", "V2", "S5", "U5", "O", "f1", "g2", "bfloat16", "?", "f"}) {
    EXPECT_EQ(DTypeFromNumpyCode(s), std::nullopt) << "numpy " << s;
  }
  for (std::string_view s :
       {"", "f32", "FP32", "F8_E8M0", "F4", "F6_E2M3", "C128", "bool", "F8_E4M3FN", "BOOL "}) {
    EXPECT_EQ(DTypeFromSafetensors(s), std::nullopt) << "safetensors " << s;
  }
  for (std::string_view s : {"", "float32", "Int4", "str", "UINT8", "Uint128", "Uint", "F32"}) {
    EXPECT_EQ(DTypeFromMindSpore(s), std::nullopt) << "mindspore " << s;
  }
}

TEST(DTypeTest, Kinds) {
  const std::set<DType> floating = {DType::kF64,        DType::kF32,       DType::kF16,
                                    DType::kBF16,       DType::kF8E4M3FN,  DType::kF8E5M2,
                                    DType::kF8E4M3FNUZ, DType::kF8E5M2FNUZ};
  const std::set<DType> float8 = {DType::kF8E4M3FN, DType::kF8E5M2, DType::kF8E4M3FNUZ,
                                  DType::kF8E5M2FNUZ};
  const std::set<DType> integer = {DType::kI64, DType::kI32, DType::kI16, DType::kI8,
                                   DType::kU64, DType::kU32, DType::kU16, DType::kU8};
  const std::set<DType> complex = {DType::kC64, DType::kC128};
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(std::string(e.name));
    EXPECT_EQ(IsFloating(e.dtype), floating.count(e.dtype) == 1);
    EXPECT_EQ(IsFloat8(e.dtype), float8.count(e.dtype) == 1);
    EXPECT_EQ(IsInteger(e.dtype), integer.count(e.dtype) == 1);
    EXPECT_EQ(IsComplex(e.dtype), complex.count(e.dtype) == 1);
  }
  EXPECT_FALSE(IsInteger(DType::kBool));
  EXPECT_FALSE(IsFloating(DType::kBool));
  static_assert(IsFloat8(DType::kF8E5M2) && !IsFloat8(DType::kU8));  // usable at compile time
}

template <typename T, typename U>
constexpr bool kSame = std::is_same_v<T, U>;

TEST(DTypeTest, DispatchCallsTheMatchingStorageType) {
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(std::string(e.name));
    int calls = 0;
    const DType seen = Dispatch(e.dtype, [&]<DType D>() {
      ++calls;
      using T = typename StorageType<D>::type;
      // The storage type holds exactly one element.
      EXPECT_EQ(static_cast<int>(sizeof(T)), ItemSize(D));
      return D;
    });
    EXPECT_EQ(seen, e.dtype);
    EXPECT_EQ(calls, 1);
  }
  const auto type_name = [](DType dtype) {
    return Dispatch(dtype, []<DType D>() -> std::string_view {
      using T = typename StorageType<D>::type;
      if constexpr (kSame<T, double>) return "double";
      if constexpr (kSame<T, float>) return "float";
      if constexpr (kSame<T, uint16_t>) return "uint16_t";
      if constexpr (kSame<T, uint8_t>) return "uint8_t";
      if constexpr (kSame<T, int64_t>) return "int64_t";
      if constexpr (kSame<T, int32_t>) return "int32_t";
      if constexpr (kSame<T, int16_t>) return "int16_t";
      if constexpr (kSame<T, int8_t>) return "int8_t";
      if constexpr (kSame<T, uint64_t>) return "uint64_t";
      if constexpr (kSame<T, uint32_t>) return "uint32_t";
      return "other";
    });
  };
  EXPECT_EQ(type_name(DType::kF64), "double");
  EXPECT_EQ(type_name(DType::kF32), "float");
  EXPECT_EQ(type_name(DType::kF16), "uint16_t");
  EXPECT_EQ(type_name(DType::kBF16), "uint16_t");
  EXPECT_EQ(type_name(DType::kF8E4M3FN), "uint8_t");
  EXPECT_EQ(type_name(DType::kF8E5M2FNUZ), "uint8_t");
  EXPECT_EQ(type_name(DType::kI64), "int64_t");
  EXPECT_EQ(type_name(DType::kI32), "int32_t");
  EXPECT_EQ(type_name(DType::kI16), "int16_t");
  EXPECT_EQ(type_name(DType::kI8), "int8_t");
  EXPECT_EQ(type_name(DType::kU64), "uint64_t");
  EXPECT_EQ(type_name(DType::kU32), "uint32_t");
  EXPECT_EQ(type_name(DType::kU16), "uint16_t");
  EXPECT_EQ(type_name(DType::kU8), "uint8_t");
  EXPECT_EQ(type_name(DType::kBool), "uint8_t");
  EXPECT_EQ(type_name(DType::kC64), "other");
  EXPECT_EQ(type_name(DType::kC128), "other");
  // Complex storage is a (re, im) pair of the component type.
  using C64 = StorageType<DType::kC64>::type;
  using C128 = StorageType<DType::kC128>::type;
  static_assert(kSame<decltype(C64::re), float> && kSame<decltype(C64::im), float>);
  static_assert(kSame<decltype(C128::re), double> && sizeof(C128) == 16);
}

TEST(DTypeTest, DispatchForwardsReferences) {
  int target = 0;
  int& ref = Dispatch(DType::kI32, [&]<DType D>() -> int& { return target; });
  ref = 42;
  EXPECT_EQ(target, 42);
}

}  // namespace
}  // namespace numprobe
