// Inputs of a statistics-mode pre-check: a tensor generated from what dump.json recorded of it
// (dtype, shape, Max, Min, Mean, Norm). The recorded Max and Min are hit exactly (the first and
// the last element, as msprobe places them); Mean and Norm are matched as closely as the range
// allows: the other elements are standardized noise, shifted and scaled to the mean and second
// moment that remain, clipped to [Min, Max] and rescaled until no new element is clipped.
// Integers are uniform in [Min, Max]; bools follow Max = any, Min = all. The generator uses only
// IEEE arithmetic on a counter-based random stream (no libm), so a (seed, key) gives the same
// bits on every machine.
#ifndef NUMPROBE_APP_PRECHECK_INPUTS_H_
#define NUMPROBE_APP_PRECHECK_INPUTS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "numprobe/dtype.h"
#include "numprobe/status.h"

namespace numprobe {

struct RecordedStatistics {
  DType dtype = DType::kF32;
  int64_t numel = 0;
  std::optional<double> max, min, mean, norm;  // as dump.json holds them (NaN/Inf allowed)
};

// The seed of one generated tensor: `seed` mixed with `key` (the tensor's row name), so that
// every tensor of every API has its own stream whatever order or process generates it.
uint64_t PrecheckSeed(uint64_t seed, std::string_view key);

// Writes stats.numel elements of stats.dtype (C order) at `out`. kInvalidArgument when Max or Min
// is missing for a tensor with elements, or for a dtype without values (complex is filled with
// real values).
Status GenerateFromStatistics(const RecordedStatistics& stats, uint64_t seed, std::byte* out);

}  // namespace numprobe

#endif  // NUMPROBE_APP_PRECHECK_INPUTS_H_
