// The memory a command may spend on one tensor file's decompressed storages (--max-memory). A
// compressed member (.pt storage, .npz array) declares its inflated size up front; one that
// would exceed the limit is refused before anything is allocated (kOutOfRange), instead of
// inflating a 4 MB file into gigabytes. Statistics and compare metrics do not need the storage
// whole: inspect, scan and compare stream large deflated members (ReadOptions::
// stream_deflated_over), and the limit applies to what still needs a whole copy.
#ifndef NUMPROBE_MEMORY_LIMIT_H_
#define NUMPROBE_MEMORY_LIMIT_H_

#include <cstdint>
#include <string_view>

#include "numprobe/result.h"

namespace numprobe {

// The default limit: half of the machine's physical memory (at least 1 GiB; 16 GiB when the
// system does not say).
uint64_t DefaultMaxMemory();

// `requested` when it is not 0, DefaultMaxMemory() otherwise.
uint64_t EffectiveMaxMemory(uint64_t requested);

// "4G", "512M", "1.5G", "4GiB", "65536": a byte count with an optional binary suffix K, M, G, T
// (KiB... and KB... mean the same, powers of 1024). kInvalidArgument for anything else, for 0 and
// for sizes over 2^63.
Result<uint64_t> ParseByteSize(std::string_view text);

}  // namespace numprobe

#endif  // NUMPROBE_MEMORY_LIMIT_H_
