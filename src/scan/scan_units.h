// ScanDump (numprobe/scan.h) in its parts, so that its units of work can be shared out (the
// cluster layer runs them on MPI processes, docs/cluster.md) and the result still equals one
// process's:
//   PlanScan        the (step, rank) units of a dump, in scan order (every process; no reading);
//   ScanUnit        one unit's dump.json (and tensor files) reduced to a RankScan: everything the
//                   cross-rank analysis needs later, and nothing of the DumpFile;
//   Encode/Decode   a RankScan as bytes, to move it between processes (exact: doubles as bits);
//   ScanAssembler   the cross-rank analysis over the RankScans of each step in order: the
//                   communication order, the times and births of anomalies, the weight checks
//                   across steps and the summaries. ScanDump is PlanScan, ScanUnit on every unit
//                   and the assembler, so a distributed run takes the same path.
#ifndef NUMPROBE_SCAN_SCAN_UNITS_H_
#define NUMPROBE_SCAN_SCAN_UNITS_H_

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "numprobe/dump_layout.h"
#include "numprobe/result.h"
#include "numprobe/scan.h"

#include "core/text_arena.h"
#include "scan/scan_internal.h"

namespace numprobe::detail {

struct ScanPlan {
  std::string dump;              // the path scanned, as given
  std::vector<DumpPair> units;   // (step, rank) units with a dump.json, in scan order
  std::vector<size_t> step_end;  // one past the last unit of each step (scope), in order
  // The first unit of the step holding `unit`, i.e. its position in the step is unit - begin.
  size_t StepBegin(size_t unit) const;
};

// Validates `options` and lists the units of the dump at `path` (ScanDump's errors for a path
// that holds no dump).
Result<ScanPlan> PlanScan(const std::filesystem::path& path, const ScanOptions& options);

// A parameter as dumped on one rank at one step (for the weight checks across steps).
struct ParamSnapshot {
  std::string op_name;
  ScanTensor tensor;
  std::optional<std::string> md5;
  bool trainable = true;
};

// One scanned (step, rank) unit.
struct RankScan {
  std::string scope;
  std::string prefix;  // scope without its step part: groups the steps of one rank
  int64_t step = -1;
  std::string rank_folder;
  int64_t rank = 0;
  // Of its dump.json.
  std::string task, framework, level;
  bool checksums_only = false;  // md5 checksums without any statistics
  int64_t entries = 0, tensors = 0, tensor_files_read = 0, files_missing = 0;
  std::vector<std::string> warnings;  // in the order one process emits them
  // Where among `warnings` the once-per-run warning that activation range percentages need
  // tensor files goes, if this rank raised it (-1: not raised).
  int64_t range_warning_at = -1;
  std::vector<WatchpointHit> hits;
  std::vector<HeadroomRow> headroom;
  std::shared_ptr<TextArena> texts = std::make_shared<TextArena>();  // headroom's texts
  // The dump.json's own texts (DumpFile::stored_texts), where the headroom rows' tensor and op
  // names point: kept rather than copied. Null in a RankScan decoded from bytes.
  std::shared_ptr<const TextArena> file_texts;
  std::vector<AnomalyNode> births;   // kCompute / kInheritedInput, time not set yet
  std::vector<int> birth_segment;    // communication ops before each birth on this rank
  std::vector<CommNode> comm_nodes;  // this rank's, in execution order (not levelled yet)
  // Anomalous communication ops: (index into comm_nodes, the node), in execution order.
  std::vector<std::pair<int, AnomalyNode>> comm_anomalies;
  std::unordered_map<std::string, ParamSnapshot> params;
  std::vector<std::string> param_order;  // the keys of params, first seen first
};

// Scans unit `unit` of `plan`. The errors ScanDump returns for that rank.
Result<RankScan> ScanUnit(const ScanPlan& plan, size_t unit, const ScanOptions& options);

// The bytes of a RankScan and back. Decode: kCorrupt for bytes Encode did not write.
std::string EncodeRankScan(const RankScan& rank);
Result<RankScan> DecodeRankScan(std::string_view bytes);

// The cross-rank analysis: AddStep with each step's units in plan order, then Finish.
class ScanAssembler {
 public:
  ScanAssembler(const ScanPlan& plan, const ScanOptions& options);
  // `ranks`: the units of one step, in plan order.
  void AddStep(std::vector<RankScan> ranks);
  ScanReport Finish();

 private:
  void CheckWeights();

  const ScanOptions& options_;
  ScanReport report_;
  std::vector<RankScan> done_ranks_;  // their parameters, for the weight checks across steps
  std::set<int64_t> ranks_seen_;      // rank numbers over all steps
  bool scanned_a_file_ = false;
  bool warned_range_needs_files_ = false;
  int64_t files_missing_ = 0;
};

}  // namespace numprobe::detail

#endif  // NUMPROBE_SCAN_SCAN_UNITS_H_
