// The dtype table: every element type numprobe knows, listed once. The enum, the traits table,
// the name parsers of each file format and Dispatch() are all generated from
// NUMPROBE_FOR_EACH_DTYPE. The enum is append-only (values are stable across versions).
#ifndef NUMPROBE_DTYPE_H_
#define NUMPROBE_DTYPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace numprobe {

enum class DTypeKind : uint8_t { kFloat, kSignedInt, kUnsignedInt, kBool, kComplex };

// X(Enum, name, bits, kind, torch name, torch legacy storage, numpy descr (no byte order),
//   safetensors name, MindSpore name). Empty strings mean the format has no such type.
// NOTE: always add types at the end to keep the enum values stable.
#define NUMPROBE_FOR_EACH_DTYPE(X)                                                       \
  X(kF64, "f64", 64, kFloat, "float64", "Double", "f8", "F64", "Float64")                \
  X(kF32, "f32", 32, kFloat, "float32", "Float", "f4", "F32", "Float32")                 \
  X(kF16, "f16", 16, kFloat, "float16", "Half", "f2", "F16", "Float16")                  \
  X(kBF16, "bf16", 16, kFloat, "bfloat16", "BFloat16", "", "BF16", "BFloat16")           \
  X(kF8E4M3FN, "f8_e4m3fn", 8, kFloat, "float8_e4m3fn", "", "", "F8_E4M3", "")           \
  X(kF8E5M2, "f8_e5m2", 8, kFloat, "float8_e5m2", "", "", "F8_E5M2", "")                 \
  X(kF8E4M3FNUZ, "f8_e4m3fnuz", 8, kFloat, "float8_e4m3fnuz", "", "", "F8_E4M3FNUZ", "") \
  X(kF8E5M2FNUZ, "f8_e5m2fnuz", 8, kFloat, "float8_e5m2fnuz", "", "", "F8_E5M2FNUZ", "") \
  X(kI64, "i64", 64, kSignedInt, "int64", "Long", "i8", "I64", "Int64")                  \
  X(kI32, "i32", 32, kSignedInt, "int32", "Int", "i4", "I32", "Int32")                   \
  X(kI16, "i16", 16, kSignedInt, "int16", "Short", "i2", "I16", "Int16")                 \
  X(kI8, "i8", 8, kSignedInt, "int8", "Char", "i1", "I8", "Int8")                        \
  X(kU64, "u64", 64, kUnsignedInt, "uint64", "", "u8", "U64", "UInt64")                  \
  X(kU32, "u32", 32, kUnsignedInt, "uint32", "", "u4", "U32", "UInt32")                  \
  X(kU16, "u16", 16, kUnsignedInt, "uint16", "", "u2", "U16", "UInt16")                  \
  X(kU8, "u8", 8, kUnsignedInt, "uint8", "Byte", "u1", "U8", "UInt8")                    \
  X(kBool, "bool", 8, kBool, "bool", "Bool", "b1", "BOOL", "Bool")                       \
  X(kC64, "c64", 64, kComplex, "complex64", "ComplexFloat", "c8", "C64", "Complex64")    \
  X(kC128, "c128", 128, kComplex, "complex128", "ComplexDouble", "c16", "", "Complex128")

enum class DType : uint8_t {
#define NUMPROBE_DTYPE_ENUM_(e, ...) e,
  NUMPROBE_FOR_EACH_DTYPE(NUMPROBE_DTYPE_ENUM_)
#undef NUMPROBE_DTYPE_ENUM_
};

inline constexpr int kDTypeCount = 0
#define NUMPROBE_DTYPE_COUNT_(...) +1  // NOLINT(bugprone-macro-parentheses): X-macro term
    NUMPROBE_FOR_EACH_DTYPE(NUMPROBE_DTYPE_COUNT_)
#undef NUMPROBE_DTYPE_COUNT_
    ;

struct DTypeTraits {
  DType dtype;
  std::string_view name;  // numprobe's own short name: "bf16"
  int bits;               // element size in bits
  DTypeKind kind;
  std::string_view torch_name;        // "bfloat16" (printed as "torch.bfloat16")
  std::string_view torch_storage;     // "BFloat16" of torch.BFloat16Storage; "" if none
  std::string_view numpy_descr;       // "f4" without byte order; "" if numpy has none
  std::string_view safetensors_name;  // "BF16"
  std::string_view mindspore_name;    // "BFloat16"
};

inline constexpr DTypeTraits kDTypeTraits[kDTypeCount] = {
#define NUMPROBE_DTYPE_TRAITS_(e, name, bits, kind, torch, storage, npy, st, ms) \
  {DType::e, name, bits, DTypeKind::kind, torch, storage, npy, st, ms},
    NUMPROBE_FOR_EACH_DTYPE(NUMPROBE_DTYPE_TRAITS_)
#undef NUMPROBE_DTYPE_TRAITS_
};

constexpr const DTypeTraits& Traits(DType dtype) { return kDTypeTraits[static_cast<int>(dtype)]; }
constexpr int ItemSize(DType dtype) { return Traits(dtype).bits / 8; }
constexpr std::string_view Name(DType dtype) { return Traits(dtype).name; }
constexpr bool IsFloating(DType dtype) { return Traits(dtype).kind == DTypeKind::kFloat; }
constexpr bool IsComplex(DType dtype) { return Traits(dtype).kind == DTypeKind::kComplex; }
constexpr bool IsInteger(DType dtype) {
  return Traits(dtype).kind == DTypeKind::kSignedInt ||
         Traits(dtype).kind == DTypeKind::kUnsignedInt;
}
// The 8-bit float formats (no native C++ type; converted through float_convert.h).
constexpr bool IsFloat8(DType dtype) { return IsFloating(dtype) && Traits(dtype).bits == 8; }

// Parsers: each returns nullopt for a name the format does not define.
std::optional<DType> DTypeFromName(std::string_view name);          // "bf16"
std::optional<DType> DTypeFromTorchName(std::string_view name);     // "bfloat16", "torch.bfloat16"
std::optional<DType> DTypeFromTorchStorage(std::string_view name);  // "BFloat16Storage"
std::optional<DType> DTypeFromSafetensors(std::string_view name);   // "BF16"
// MindSpore's tensor_type, including the old spellings "Uint8".."Uint64".
std::optional<DType> DTypeFromMindSpore(std::string_view name);
// numpy descr kind+size without byte order ("f4", "b1", "c16").
std::optional<DType> DTypeFromNumpyCode(std::string_view code);

// "torch.float32", as msprobe writes dtypes in dump.json.
std::string TorchDTypeString(DType dtype);

// Storage type for each dtype (std::byte-sized placeholders for types with no C++ type).
template <DType D>
struct StorageType;
template <>
struct StorageType<DType::kF64> {
  using type = double;
};
template <>
struct StorageType<DType::kF32> {
  using type = float;
};
template <>
struct StorageType<DType::kF16> {
  using type = uint16_t;
};
template <>
struct StorageType<DType::kBF16> {
  using type = uint16_t;
};
template <>
struct StorageType<DType::kF8E4M3FN> {
  using type = uint8_t;
};
template <>
struct StorageType<DType::kF8E5M2> {
  using type = uint8_t;
};
template <>
struct StorageType<DType::kF8E4M3FNUZ> {
  using type = uint8_t;
};
template <>
struct StorageType<DType::kF8E5M2FNUZ> {
  using type = uint8_t;
};
template <>
struct StorageType<DType::kI64> {
  using type = int64_t;
};
template <>
struct StorageType<DType::kI32> {
  using type = int32_t;
};
template <>
struct StorageType<DType::kI16> {
  using type = int16_t;
};
template <>
struct StorageType<DType::kI8> {
  using type = int8_t;
};
template <>
struct StorageType<DType::kU64> {
  using type = uint64_t;
};
template <>
struct StorageType<DType::kU32> {
  using type = uint32_t;
};
template <>
struct StorageType<DType::kU16> {
  using type = uint16_t;
};
template <>
struct StorageType<DType::kU8> {
  using type = uint8_t;
};
template <>
struct StorageType<DType::kBool> {
  using type = uint8_t;
};
template <>
struct StorageType<DType::kC64> {
  struct type {
    float re, im;
  };
};
template <>
struct StorageType<DType::kC128> {
  struct type {
    double re, im;
  };
};

// Calls fn.template operator()<D>() with the compile-time DType matching `dtype`: the only
// switch over dtypes a kernel needs. Usage: Dispatch(dt, [&]<DType D>() { ... });
template <typename Fn>
decltype(auto) Dispatch(DType dtype, Fn&& fn) {
  switch (dtype) {
#define NUMPROBE_DTYPE_CASE_(e, ...) \
  case DType::e:                     \
    return fn.template operator()<DType::e>();
    NUMPROBE_FOR_EACH_DTYPE(NUMPROBE_DTYPE_CASE_)
#undef NUMPROBE_DTYPE_CASE_
  }
  return fn.template operator()<DType::kU8>();  // unreachable for valid enum values
}

}  // namespace numprobe

#endif  // NUMPROBE_DTYPE_H_
