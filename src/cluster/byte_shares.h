// Which MPI process takes which work item, balanced by bytes.
#ifndef NUMPROBE_CLUSTER_BYTE_SHARES_H_
#define NUMPROBE_CLUSTER_BYTE_SHARES_H_

#include <cstdint>
#include <vector>

namespace numprobe::detail {

// The process (0..processes-1) of each item: largest first, each to the process with the fewest
// bytes so far (ties: the lower process; equal sizes: the earlier item first), so that the
// heaviest process holds at most the lightest's bytes plus one item. Deterministic: every
// process computes the same shares from the same sizes.
std::vector<int> ShareByBytes(const std::vector<uint64_t>& bytes, int processes);

}  // namespace numprobe::detail

#endif  // NUMPROBE_CLUSTER_BYTE_SHARES_H_
