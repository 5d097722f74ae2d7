// How much to reserve for a table filled from a file read in order (a dump's rows and entries,
// scan's headroom rows), estimated from a sample of its start: reserving once instead of growing
// keeps the old and the new array from being held together and copied at each growth, which was
// a tenth of compare's time and the largest allocation of a large scan.
#ifndef NUMPROBE_CORE_SAMPLE_RESERVE_H_
#define NUMPROBE_CORE_SAMPLE_RESERVE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "numprobe/memory_limit.h"

namespace numprobe::detail {

// Entries are sampled this many at a time before the estimate is made.
inline constexpr size_t kReserveSample = 1024;

// The items to reserve when `items` came from the first `offset` bytes of a `file_bytes` file:
// the same density over the whole file with a margin (1.125), capped at what the file could hold
// (no item takes fewer than 24 bytes of JSON: {"type": "int", "value": 1}) and at what the memory
// limit allows for items of `item_bytes`, so that a dense sample followed by padding cannot make
// it exceed either. 0 when the sample says nothing (offset 0, or not before the file's end).
inline size_t ReserveFromSample(size_t items, uint64_t offset, uint64_t file_bytes,
                                size_t item_bytes) {
  if (offset == 0 || file_bytes <= offset) return 0;
  const double scale = 1.125 * static_cast<double>(file_bytes) / static_cast<double>(offset);
  const auto most =
      static_cast<double>(std::min<uint64_t>(file_bytes / 24, DefaultMaxMemory() / item_bytes));
  return static_cast<size_t>(std::min(most, scale * static_cast<double>(items)));
}

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_SAMPLE_RESERVE_H_
