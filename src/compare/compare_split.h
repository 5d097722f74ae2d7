// The steps of CompareWithMapping (compare_internal.h) for callers that spread one table's tensor
// pairs over several processes (src/cluster/): every process pairs the rows and locates the
// tensor files (PairDumps, LocateTensorPairs: the same jobs everywhere), each compares a share of
// the jobs (CompareTensorJobs), and the process that writes the table applies every job's outcome
// in job order (ApplyTensorOutcomes) and finishes it (FinishTable). FillTensorCells is these steps
// in one process, so the table is the same whichever process compared which pair. Not public API.
#ifndef NUMPROBE_COMPARE_COMPARE_SPLIT_H_
#define NUMPROBE_COMPARE_COMPARE_SPLIT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "numprobe/compare.h"
#include "numprobe/dump_layout.h"
#include "numprobe/progress.h"
#include "numprobe/result.h"

#include "msprobe/data_file.h"

namespace numprobe {
class ThreadPool;
}

namespace numprobe::detail {

struct LoadedMapping;

// CompareWithMapping up to the paired rows: both dump.json files read and checked, the mode
// decided, the rows paired; no cell filled, on `pool` (null: ThreadPool::Default()). Its errors
// are CompareWithMapping's.
Result<CompareTable> PairDumps(const DumpLocation& target, const DumpLocation& golden,
                               const LoadedMapping& mapping, ThreadPool* pool);

// The last steps: msprobe's result rules, then the row assessment (divergence.h), entry by entry
// over `pool` (may be null): both look only at an entry's own rows.
void FinishTable(CompareTable* table, ThreadPool* pool);

// One tensor pair to read and compare: a row of the table with a data file on both sides.
struct TensorJob {
  size_t row = 0;
  DataFileRef target_file;
  DataFileRef golden_file;
  uint64_t bytes = 0;  // both files' (the share a process is given)
};

// A job's result: the row's msprobe cells and numprobe's extras, or the warning that makes the
// row "unsupported" (an unreadable file, a pair CompareTensors refused).
struct TensorOutcome {
  bool failed = false;
  std::string warning;  // when failed
  std::array<MetricCell, 6> metrics{};
  std::optional<TensorExtras> extras;
  double rel_l2 = 0;
};

// Marks every row of a tensor-mode table "unsupported" and returns the pairs to compare, in row
// order (msprobe's locate_dump_file: "-1" or an unmatched golden leave the row unsupported; a
// refused name or link adds a table warning).
std::vector<TensorJob> LocateTensorPairs(CompareTable* table, const DumpLocation& target,
                                         const DumpLocation& golden);

// The outcomes of jobs[which[k]], in the order of `which`: small pairs in parallel over the pool,
// large ones one at a time with their chunks spread over it. Each finished pair is reported to
// `progress` (may be empty) as "tensor pairs" of which.size(). Independent of the thread count.
std::vector<TensorOutcome> CompareTensorJobs(const std::vector<TensorJob>& jobs,
                                             const std::vector<size_t>& which, ThreadPool* pool,
                                             const ProgressCallback& progress, uint64_t max_memory);

// Fills the rows of `jobs` from `outcomes` (one per job, in job order) and adds the failures'
// warnings in that order (at most 20 table warnings, then one line counting the rest).
void ApplyTensorOutcomes(CompareTable* table, const std::vector<TensorJob>& jobs,
                         const std::vector<TensorOutcome>& outcomes);

}  // namespace numprobe::detail

#endif  // NUMPROBE_COMPARE_COMPARE_SPLIT_H_
