// What the npz reader needs of the .npy reader beyond its public API.
#ifndef NUMPROBE_FORMATS_NPY_INTERNAL_H_
#define NUMPROBE_FORMATS_NPY_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "numprobe/npy.h"

namespace numprobe::detail {

// Parses the header of a .npy of `total` bytes from `head`, its first bytes (the whole header
// at least): the checks of ParseNpyHeader, the data's presence judged against `total`. A
// descr-derived warning (assumed dtype) goes to `descr_warning`.
Result<NpyHeader> ParseNpyHeaderPrefix(std::span<const std::byte> head, uint64_t total,
                                       const NpyReadOptions& options, std::string* descr_warning);

}  // namespace numprobe::detail

#endif  // NUMPROBE_FORMATS_NPY_INTERNAL_H_
