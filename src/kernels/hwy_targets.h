// For tests of the Highway kernels: the function a dispatch table gives on every SIMD target that
// is compiled and runs on this CPU. Include only under HWY_ONCE, after <hwy/highway.h>.
#ifndef NUMPROBE_KERNELS_HWY_TARGETS_H_
#define NUMPROBE_KERNELS_HWY_TARGETS_H_

#include <string>
#include <utility>
#include <vector>

#include <hwy/highway.h>

namespace numprobe::detail {

// select() calls HWY_DYNAMIC_DISPATCH of the table; the dispatch is redirected to each target in
// turn while this runs, so nothing else may use the kernels meanwhile. Targets whose select()
// gives nullptr (HWY_SCALAR) are left out.
template <typename Fn, typename Select>
std::vector<std::pair<std::string, Fn>> EveryTarget(Select select) {
  std::vector<std::pair<std::string, Fn>> out;
  for (const int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    const Fn fn = select();
    if (fn != nullptr) out.emplace_back(hwy::TargetName(target), fn);
  }
  hwy::SetSupportedTargetsForTest(0);
  return out;
}

}  // namespace numprobe::detail

#endif  // NUMPROBE_KERNELS_HWY_TARGETS_H_
