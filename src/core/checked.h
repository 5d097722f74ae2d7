// Overflow-checked integer arithmetic for sizes, offsets and counts read from files. Every size
// that comes from input goes through these before it is used to allocate or to address memory.
#ifndef NUMPROBE_CORE_CHECKED_H_
#define NUMPROBE_CORE_CHECKED_H_

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>

namespace numprobe {

// a + b, or nullopt on overflow.
template <typename T>
constexpr std::optional<T> CheckedAdd(T a, T b) {
  T out{};
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// a * b, or nullopt on overflow.
template <typename T>
constexpr std::optional<T> CheckedMul(T a, T b) {
  T out{};
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// a - b, or nullopt on overflow (for unsigned: when b > a).
template <typename T>
constexpr std::optional<T> CheckedSub(T a, T b) {
  T out{};
  if (__builtin_sub_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// The product of `dims` (1 for none); nullopt if any dim is negative or the product overflows
// int64.
std::optional<int64_t> CheckedNumel(std::span<const int64_t> dims);

// `v` as an int64 when it is a whole number that int64 holds; nullopt for NaN, an infinity, a
// fraction or a value out of range (where static_cast<int64_t> is undefined behaviour).
inline std::optional<int64_t> WholeInt64(double v) {
  if (!(v >= -0x1p63 && v < 0x1p63) || std::trunc(v) != v) return std::nullopt;
  return static_cast<int64_t>(v);
}

// True when [offset, offset + length) lies inside [0, size).
constexpr bool RangeInside(uint64_t offset, uint64_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

}  // namespace numprobe

#endif  // NUMPROBE_CORE_CHECKED_H_
