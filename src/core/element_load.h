// One element of a tensor as a double, for every dtype: the loader the layers share (compare's
// and diff's metrics, the statistics kernels' scalar reference, scan's watchpoints, the UI's
// tensor detail). Every stored value widens exactly (f16, bf16 and fp8 through f32; integers
// beyond 2^53 round as numpy's astype(float64) does); bool is 1 or 0.
//
// A complex element has no single double, and the callers want different ones, so each names
// its ComplexAs:
// - kRealPart: numpy's astype(float64), which drops the imaginary part. msprobe's compare reads
//   tensors that way, so compare's metrics do.
// - kMagnitude: |z| = hypot(re, im) with both parts widened to double (scan's weight-update
//   watchpoints, the UI's tensor detail).
// - kMagnitudeInOwnType: |z| computed in the element's own precision (hypotf for complex64), as
//   torch.abs and numpy.abs do; the statistics follow them.
#ifndef NUMPROBE_CORE_ELEMENT_LOAD_H_
#define NUMPROBE_CORE_ELEMENT_LOAD_H_

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "numprobe/dtype.h"
#include "numprobe/float_convert.h"

namespace numprobe::detail {

enum class ComplexAs : uint8_t { kRealPart, kMagnitude, kMagnitudeInOwnType };

// The bytes at `p` as a T (no alignment needed).
template <typename T>
T LoadRaw(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

// Every f16 value as a float (256 KiB, built on first use), so that decoding one is one load.
const float* F16Values();

// The 256 values of fp8 format D, decoded once.
template <DType D>
const float* F8Values() {
  static_assert(IsFloat8(D));
  static const std::array<float, 256> kValues = [] {
    std::array<float, 256> t{};
    for (int i = 0; i < 256; ++i) t[static_cast<size_t>(i)] = F8ToF32(D, static_cast<uint8_t>(i));
    return t;
  }();
  return kValues.data();
}

template <DType D, ComplexAs C>
double LoadElement(const std::byte* p) {
  using T = typename StorageType<D>::type;
  if constexpr (D == DType::kF16) {
    return F16Values()[LoadRaw<uint16_t>(p)];
  } else if constexpr (D == DType::kBF16) {
    // BF16ToF32, inline: bf16 is the top half of an f32.
    return std::bit_cast<float>(static_cast<uint32_t>(LoadRaw<uint16_t>(p)) << 16);
  } else if constexpr (IsFloat8(D)) {
    return F8Values<D>()[LoadRaw<uint8_t>(p)];
  } else if constexpr (D == DType::kBool) {
    return LoadRaw<uint8_t>(p) != 0 ? 1.0 : 0.0;
  } else if constexpr (IsComplex(D)) {
    const T v = LoadRaw<T>(p);
    if constexpr (C == ComplexAs::kRealPart) {
      return static_cast<double>(v.re);
    } else if constexpr (C == ComplexAs::kMagnitude) {
      return std::hypot(static_cast<double>(v.re), static_cast<double>(v.im));
    } else {
      return std::hypot(v.re, v.im);  // the float overload for complex64: hypotf
    }
  } else {
    return static_cast<double>(LoadRaw<T>(p));
  }
}

using ElementLoader = double (*)(const std::byte*);

// LoadElement<D, C> for a dtype known at run time, chosen once for a loop.
template <ComplexAs C>
ElementLoader ElementLoaderFor(DType dtype) {
  return Dispatch(dtype, []<DType D>() -> ElementLoader { return &LoadElement<D, C>; });
}

// One element of a dtype known at run time (a switch per call).
template <ComplexAs C>
double LoadElement(DType dtype, const std::byte* p) {
  return Dispatch(dtype, [&]<DType D>() { return LoadElement<D, C>(p); });
}

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_ELEMENT_LOAD_H_
