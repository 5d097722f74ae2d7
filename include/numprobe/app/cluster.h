// numprobe on a cluster: `mpirun -n N numprobe compare ...` (or srun) spreads the rank pairs of a
// multi-rank compare over N MPI processes, balanced by bytes (the tensor pairs of a rank larger
// than its fair share are shared out instead of the rank); each process reads only its share
// and writes its ranks' result files, and process 0 gathers the per-rank facts, finds the
// cross-rank first divergence once and writes the cross-rank files. `mpirun -n N numprobe scan`
// (and `precheck --plan`, which scans) spreads the (step, rank) units the same way, and
// process 0 orders the communication ops, finds the first anomaly across ranks and writes the
// files. Every output file is byte-identical to a single-process run. Built only with
// NUMPROBE_WITH_MPI (docs/cluster.md).
#ifndef NUMPROBE_APP_CLUSTER_H_
#define NUMPROBE_APP_CLUSTER_H_

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "numprobe/app/mindspore_dump.h"
#include "numprobe/app/precheck_plan.h"
#include "numprobe/compare.h"
#include "numprobe/compare_trees.h"
#include "numprobe/divergence.h"
#include "numprobe/result.h"
#include "numprobe/scan.h"
#include "numprobe/status.h"
#include "numprobe/verdict.h"

namespace numprobe {

// True when this process was started by an MPI launcher (mpirun, mpiexec, srun with PMI/PMIx), as
// its environment says; read before MPI is initialised, so that a plain run never initialises it.
bool LaunchedUnderMpi();

// The processes of this MPI job: MPI is initialised by Start and finalised by the destructor.
class ClusterSession {
 public:
  static Result<std::unique_ptr<ClusterSession>> Start();
  ~ClusterSession();
  ClusterSession(const ClusterSession&) = delete;
  ClusterSession& operator=(const ClusterSession&) = delete;

  int process() const { return process_; }
  int processes() const { return processes_; }
  bool leader() const { return process_ == 0; }

  // Process 0's `text`, in every process.
  std::string Broadcast(const std::string& text) const;
  // Every process learns whether any failed: OK when none did, else the failure with the lowest
  // `key` (then the lowest process), in every process. Collective: all processes must call it.
  Status Agree(const Status& local, int64_t key) const;
  // Every process's `text`, in process order, on process 0; empty elsewhere. Any size (sent in
  // pieces under MPI's 2 GiB message limit).
  Result<std::vector<std::string>> GatherToLeader(const std::string& text) const;
  // Returns when every process has called it; waits asleep (1 ms polls), not spinning, so that
  // processes done with their share leave the cores to process 0's serial part. Collective.
  void IdleUntilAll() const;
  // Element-wise sums across processes (every process passes a vector of the same length).
  std::vector<uint64_t> SumAcross(const std::vector<uint64_t>& values) const;

 private:
  ClusterSession(int process, int processes) : process_(process), processes_(processes) {}
  int process_ = 0;
  int processes_ = 1;
};

// One compared rank as process 0 knows it once the facts are gathered.
struct ClusterRank {
  std::string label;  // as RankCompare::label
  CompareMode mode = CompareMode::kStatistics;
  int64_t rows = 0;
  std::map<Verdict, int64_t> verdicts;  // rows per Result
  std::vector<std::string> warnings;    // the table's
  std::filesystem::path table_file;     // empty when not written
  DivergenceReport report;
  int process = 0;  // the MPI process that compared it (0 for a rank whose tensor pairs were split)
};

struct ClusterCompareResult {
  std::vector<ClusterRank> ranks;    // in scope, then rank order (as CompareTreesResult)
  std::vector<MissingRank> missing;  // in the same order
  int earliest = -1;                 // as CompareTreesResult::earliest
  std::filesystem::path divergence_file;
  std::filesystem::path diff_analyze_file;
  std::vector<uint64_t> bytes_per_process;  // the bytes of dump files each process was given
  bool findings() const { return earliest >= 0 || !missing.empty(); }
};

// CompareDumpTrees (compare_trees.h) spread over the processes of `session`: the same errors and
// the same files. On process 0 the whole result; on the others only bytes_per_process. Errors are
// agreed (ClusterSession::Agree): every process returns the same one, the first in rank order.
// options.warning and options.compare.progress are best set on process 0 only.
Result<ClusterCompareResult> ClusterCompareDumpTrees(const ClusterSession& session,
                                                     const std::filesystem::path& target,
                                                     const std::filesystem::path& golden,
                                                     const CompareTreesOptions& options);

struct ClusterScanResult {
  ScanReport report;                        // on process 0; empty on the others
  std::vector<uint64_t> bytes_per_process;  // the bytes of dump files each process was given
};

// ScanDump (scan.h) spread over the processes of `session`: the (step, rank) units shared out by
// bytes, each scanned by one process, the per-rank facts gathered to process 0, which evaluates
// the cross-rank analysis once (the communication order, the first anomaly, the weight checks
// across steps, the headroom summary). On process 0 the report equals ScanDump's, member for
// member; its errors are ScanDump's, agreed (the first in scan order), in every process.
Result<ClusterScanResult> ClusterScanDump(const ClusterSession& session,
                                          const std::filesystem::path& path,
                                          const ScanOptions& options);

struct ClusterPlanResult {
  PlanReport report;                        // on process 0; empty on the others
  std::vector<uint64_t> bytes_per_process;  // the scan's and the op facts' bytes per process
};

// PlanPrecision (app/precheck_plan.h) spread over the processes of `session`: its scan as
// ClusterScanDump, then each rank folder's forward API facts on the process its bytes fall to,
// gathered to process 0, which writes nothing and returns the report (equal to PlanPrecision's).
Result<ClusterPlanResult> ClusterPlanPrecision(const ClusterSession& session,
                                               const std::filesystem::path& path, DType target,
                                               const PlanSettings* settings);

// One (rank, step) table of a MindSpore graph compare, as process 0 knows it once gathered.
struct ClusterGraphTable {
  int64_t rank = -1;
  int64_t step = -1;
  GraphDumpMode mode = GraphDumpMode::kNpy;
  int64_t rows = 0;
  int64_t not_reached = 0;
  int64_t with_message = 0;
  std::vector<std::string> warnings;
  std::filesystem::path file;  // as written by its process
};

struct ClusterGraphCompareResult {
  std::vector<ClusterGraphTable> tables;    // on process 0, in (rank, step) order
  std::vector<std::string> missing;         // as CompareGraphDumps' `missing`
  std::vector<uint64_t> bytes_per_process;  // the bytes of dump files each process was given
};

// CompareGraphDumps (app/mindspore_dump.h) spread over the processes of `session`, with the
// tables written: the (rank, step) units shared out by bytes, every unit compared before anything
// is written (errors agreed: the first in (rank, step) order, CompareGraphDumps' own), then each
// process writes its tables into `output` as GraphCompareFileName(table, timestamp, xlsx) names
// them (the same bytes as one process writes), and process 0 gathers their summaries.
Result<ClusterGraphCompareResult> ClusterCompareGraphDumps(const ClusterSession& session,
                                                           const std::filesystem::path& target,
                                                           const std::filesystem::path& golden,
                                                           const std::filesystem::path& output,
                                                           const std::string& timestamp, bool xlsx);

struct ClusterGraphScanResult {
  GraphScanReport report;                   // on process 0, equal to ScanGraphDump's
  std::vector<uint64_t> bytes_per_process;  // the bytes of dump files each process was given
};

// ScanGraphDump spread over the processes of `session`: each (rank, step) scanned by one process,
// process 0 assembles the report (the first anomaly across ranks). Errors agreed as above.
Result<ClusterGraphScanResult> ClusterScanGraphDump(const ClusterSession& session,
                                                    const std::filesystem::path& root);

}  // namespace numprobe

#endif  // NUMPROBE_APP_CLUSTER_H_
