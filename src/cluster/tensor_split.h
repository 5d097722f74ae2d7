// Within a large rank, its tensor pairs shared out by bytes (issue 18): when one rank pair holds
// more than its fair share of a compare's bytes, the tensor pairs of its table are spread over the
// processes with the other ranks, each process reads and compares its pairs, and the outcomes are
// gathered to process 0, which applies them in row order and writes the rank's files.
#ifndef NUMPROBE_CLUSTER_TENSOR_SPLIT_H_
#define NUMPROBE_CLUSTER_TENSOR_SPLIT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/status.h"

#include "compare/compare_split.h"

namespace numprobe::detail {

// The rank pairs whose tensor pairs are shared out: those with tensor files whose bytes exceed
// the fair share, bytes[i] > total / processes (none with one process).
std::vector<bool> SplitRanks(const std::vector<uint64_t>& bytes,
                             const std::vector<uint64_t>& tensor_bytes, int processes);

struct WorkShares {
  std::vector<int> rank_owner;              // per rank: its comparer; a split rank's is process 0
  std::vector<std::vector<int>> job_owner;  // per split rank: the process of each tensor pair
  std::vector<uint64_t> bytes_per_process;
};

// The items are the whole ranks (rank_bytes) and the tensor pairs of the split ones (job_bytes,
// by rank; empty for the others), shared out together by ShareByBytes in rank, then pair order.
// Every process also reads a split rank's dump files (common_bytes, by rank), counted for each.
WorkShares ShareWork(const std::vector<uint64_t>& rank_bytes, const std::vector<bool>& split,
                     const std::vector<std::vector<uint64_t>>& job_bytes,
                     const std::vector<uint64_t>& common_bytes, int processes);

// A tensor pair's outcome as bytes (doubles as their bits) and back; kInternal when the bytes
// are not one whole outcome.
std::string EncodeTensorOutcome(const TensorOutcome& outcome);
Status DecodeTensorOutcome(std::string_view bytes, TensorOutcome* outcome);

}  // namespace numprobe::detail

#endif  // NUMPROBE_CLUSTER_TENSOR_SPLIT_H_
