// CompareGraphDumps and ScanGraphDump in parts, one (rank, step) at a time, so that the units can
// be spread over MPI processes (the cluster layer) while one process runs the very same parts in
// order: plan (list the folders; no reading), one unit (read, compare or scan), assemble.
#ifndef NUMPROBE_MINDSPORE_GRAPH_UNITS_H_
#define NUMPROBE_MINDSPORE_GRAPH_UNITS_H_

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "numprobe/app/mindspore_dump.h"

namespace numprobe::mindspore_detail {

// One (rank, step) of a graph dump: the folders that hold it, on one side or on both.
struct GraphUnit {
  int64_t rank = -1;
  int64_t step = -1;
  std::vector<std::filesystem::path> target;  // the scanned tree's folders for a scan
  std::vector<std::filesystem::path> golden;  // empty for a scan
};

struct GraphComparePlan {
  std::vector<GraphUnit> units;      // (rank, step) on both sides, in (rank, step) order
  std::vector<std::string> missing;  // target-only units, then golden-only, as CompareGraphDumps
};
Result<GraphComparePlan> PlanGraphCompare(const std::filesystem::path& target,
                                          const std::filesystem::path& golden);
// The table of one unit; errors as CompareGraphDumps (side-prefixed).
Result<GraphCompareTable> CompareGraphUnit(const GraphUnit& unit, ThreadPool* pool);

struct GraphScanPlan {
  std::vector<GraphUnit> units;  // in (rank, step) order
  int64_t folders = 0;
};
Result<GraphScanPlan> PlanGraphScan(const std::filesystem::path& root);

// What one unit contributes to GraphScanReport.
struct GraphUnitScan {
  GraphDumpMode mode = GraphDumpMode::kNpy;
  int64_t tensors = 0;
  int64_t kernels = 0;
  std::vector<GraphScanFinding> nonfinite;  // in tensor order
  std::optional<GraphScanFinding> first;    // this unit's first anomaly
};
Result<GraphUnitScan> ScanGraphUnit(const GraphUnit& unit, ThreadPool* pool);

// Folds the units' scans, in plan order, into the report (the first unit sets the mode).
class GraphScanAssembler {
 public:
  explicit GraphScanAssembler(int64_t folders) { report_.folders = folders; }
  void Add(GraphUnitScan unit);
  GraphScanReport Finish() { return std::move(report_); }

 private:
  GraphScanReport report_;
  bool mode_set_ = false;
};

}  // namespace numprobe::mindspore_detail

#endif  // NUMPROBE_MINDSPORE_GRAPH_UNITS_H_
