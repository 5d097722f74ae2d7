#include "core/element_load.h"

#include <vector>

namespace numprobe::detail {

const float* F16Values() {
  static const std::vector<float> kValues = [] {
    std::vector<float> t(65536);
    for (uint32_t i = 0; i < 65536; ++i) t[i] = F16ToF32(static_cast<uint16_t>(i));
    return t;
  }();
  return kValues.data();
}

}  // namespace numprobe::detail
