// Exact conversions between the 16- and 8-bit float formats and f32/f64. Decoding is exact (every
// f16, bf16 and fp8 value is an f32 value). Encoding rounds to nearest, ties to even, keeps the
// sign of zero, maps NaN to a quiet NaN, and handles subnormals; formats without Inf (e4m3fn and
// the fnuz pair) saturate nothing: out-of-range values become NaN, as torch/ml_dtypes do.
#ifndef NUMPROBE_FLOAT_CONVERT_H_
#define NUMPROBE_FLOAT_CONVERT_H_

#include <cstdint>

#include "numprobe/dtype.h"

namespace numprobe {

float F16ToF32(uint16_t bits);
uint16_t F32ToF16(float value);
float BF16ToF32(uint16_t bits);
uint16_t F32ToBF16(float value);

// fp8: `dtype` is one of kF8E4M3FN, kF8E5M2, kF8E4M3FNUZ, kF8E5M2FNUZ.
float F8ToF32(DType dtype, uint8_t bits);
uint8_t F32ToF8(DType dtype, float value);

// Rounds `value` to the nearest value representable in floating `dtype` (f64: unchanged) and
// returns it as a double; used to report statistics at a tensor's own precision.
double RoundToDType(DType dtype, double value);

// Range facts of floating `dtype`: the largest finite value, the smallest positive normal and the
// smallest positive subnormal.
struct FloatRange {
  double max_finite;
  double min_normal;
  double min_subnormal;
};
FloatRange RangeOf(DType dtype);

}  // namespace numprobe

#endif  // NUMPROBE_FLOAT_CONVERT_H_
