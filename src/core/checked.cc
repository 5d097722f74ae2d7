#include "core/checked.h"

namespace numprobe {

std::optional<int64_t> CheckedNumel(std::span<const int64_t> dims) {
  int64_t numel = 1;
  bool zero = false;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (d == 0) zero = true;
    // Keep checking for overflow even after a zero dim: a file that declares (0, 2^40, 2^40)
    // is still lying about something and the product of the rest must fit.
    if (d != 0) {
      auto next = CheckedMul<int64_t>(numel, d);
      if (!next) return std::nullopt;
      numel = *next;
    }
  }
  return zero ? 0 : numel;
}

}  // namespace numprobe
