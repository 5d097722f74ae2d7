// Finiteness of a MindSpore graph dump and its first anomaly (mindspore_dump.h), in the parts of
// graph_units.h: ScanGraphDump runs them in order, the cluster layer spreads the units.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "numprobe/app/mindspore_dump.h"

#include "mindspore/graph_internal.h"
#include "mindspore/graph_units.h"

namespace numprobe {
namespace mindspore_detail {

Result<GraphScanPlan> PlanGraphScan(const std::filesystem::path& root) {
  NUMPROBE_ASSIGN_OR_RETURN(std::vector<GraphDumpFolder> folders, FindGraphDumpFolders(root));
  GraphScanPlan plan;
  plan.folders = static_cast<int64_t>(folders.size());
  std::map<std::pair<int64_t, int64_t>, std::vector<std::filesystem::path>> by_step;
  for (const auto& f : folders) by_step[{f.rank, f.step}].push_back(f.dir);
  for (auto& [key, dirs] : by_step) {
    plan.units.push_back(GraphUnit{key.first, key.second, std::move(dirs), {}});
  }
  return plan;
}

Result<GraphUnitScan> ScanGraphUnit(const GraphUnit& unit, ThreadPool* pool) {
  NUMPROBE_ASSIGN_OR_RETURN(GraphDumpData data, ReadGraphDump(unit.target));
  GraphUnitScan out;
  out.mode = data.mode;
  out.tensors = static_cast<int64_t>(data.tensors.size());
  // Kernel executions in timestamp order, each with whether its inputs / outputs are finite.
  struct Kernel {
    int64_t timestamp = 0;
    std::string op;
    bool inputs_finite = true;
    std::string bad_output;  // compare key of the first non-finite output
  };
  std::map<std::tuple<int64_t, std::string, std::string>, Kernel> kernels;
  for (const GraphTensor& t : data.tensors) {
    bool finite = true;
    if (data.mode == GraphDumpMode::kStatistic) {
      const bool bad_minmax = t.has_minmax && (!std::isfinite(t.max) || !std::isfinite(t.min));
      const auto positive = [](const std::optional<int64_t>& c) { return c.value_or(0) > 0; };
      finite = !bad_minmax && !positive(t.nan_count) && !positive(t.pos_inf_count) &&
               !positive(t.neg_inf_count);
    } else {
      auto loaded = LoadNpy(t.file, pool);
      if (!loaded) return loaded.error();
      const TensorStats& s = loaded->stats;
      finite = s.nan_count == 0 && s.pos_inf_count == 0 && s.neg_inf_count == 0;
    }
    GraphScanFinding where{unit.rank, unit.step, t.op_type + "." + t.op_name, t.compare_key,
                           t.timestamp};
    if (!finite) out.nonfinite.push_back(where);
    Kernel& k = kernels[{t.timestamp, t.op_name, t.task_id}];
    k.timestamp = t.timestamp;
    k.op = where.op;
    if (t.io.rfind("input", 0) == 0) {
      k.inputs_finite = k.inputs_finite && finite;
    } else if (!finite && k.bad_output.empty()) {
      k.bad_output = t.compare_key;
    }
  }
  out.kernels = static_cast<int64_t>(kernels.size());
  for (const auto& [kk, k] : kernels) {
    if (!k.inputs_finite || k.bad_output.empty()) continue;
    out.first = GraphScanFinding{unit.rank, unit.step, k.op, k.bad_output, k.timestamp};
    break;  // the first of this (rank, step)
  }
  return out;
}

void GraphScanAssembler::Add(GraphUnitScan unit) {
  if (!mode_set_) report_.mode = unit.mode;
  mode_set_ = true;
  report_.tensors += unit.tensors;
  report_.kernels += unit.kernels;
  report_.nonfinite.insert(report_.nonfinite.end(), std::make_move_iterator(unit.nonfinite.begin()),
                           std::make_move_iterator(unit.nonfinite.end()));
  if (!unit.first) return;
  // Across ranks: the earliest step, then time, then rank.
  const auto order = [](const GraphScanFinding& f) {
    return std::tie(f.step, f.timestamp, f.rank);
  };
  if (!report_.first_anomaly.has_value() || order(*unit.first) < order(*report_.first_anomaly)) {
    report_.first_anomaly = std::move(unit.first);
  }
}

}  // namespace mindspore_detail

Result<GraphScanReport> ScanGraphDump(const std::filesystem::path& root, ThreadPool* pool) {
  NUMPROBE_ASSIGN_OR_RETURN(const mindspore_detail::GraphScanPlan plan,
                            mindspore_detail::PlanGraphScan(root));
  mindspore_detail::GraphScanAssembler assembler(plan.folders);
  for (const mindspore_detail::GraphUnit& unit : plan.units) {
    NUMPROBE_ASSIGN_OR_RETURN(mindspore_detail::GraphUnitScan scanned,
                              mindspore_detail::ScanGraphUnit(unit, pool));
    assembler.Add(std::move(scanned));
  }
  return assembler.Finish();
}

}  // namespace numprobe
