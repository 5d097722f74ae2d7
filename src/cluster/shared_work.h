// The pattern every distributed subcommand follows: work items shared out by bytes, each done by
// one process, failures agreed, the records gathered to process 0 by item.
#ifndef NUMPROBE_CLUSTER_SHARED_WORK_H_
#define NUMPROBE_CLUSTER_SHARED_WORK_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "numprobe/app/cluster.h"
#include "numprobe/result.h"

namespace numprobe::detail {

struct SharedWork {
  std::vector<std::string> records;         // on process 0: each item's record, by item
  std::vector<uint64_t> bytes_per_process;  // every process
};

// Items 0..n-1: `bytes(i)` is measured round-robin (process p sizes p, p+P, ...) and summed, the
// shares derived by ShareByBytes, and each process runs `work(i)` on its items in order. A failure
// anywhere is agreed: every process returns the failure of the lowest item (ScanDump's or
// CompareDumpTrees' own error, as one process meets it first). Collective.
Result<SharedWork> RunSharedWork(const ClusterSession& session, size_t n,
                                 const std::function<uint64_t(size_t)>& bytes,
                                 const std::function<Result<std::string>(size_t)>& work);

}  // namespace numprobe::detail

#endif  // NUMPROBE_CLUSTER_SHARED_WORK_H_
