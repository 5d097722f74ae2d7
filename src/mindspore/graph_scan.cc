// Finiteness of a MindSpore graph dump and its first anomaly (mindspore_dump.h).
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "numprobe/app/mindspore_dump.h"

#include "mindspore/graph_internal.h"

namespace numprobe {

Result<GraphScanReport> ScanGraphDump(const std::filesystem::path& root, ThreadPool* pool) {
  NUMPROBE_ASSIGN_OR_RETURN(std::vector<GraphDumpFolder> folders, FindGraphDumpFolders(root));
  GraphScanReport report;
  report.folders = static_cast<int64_t>(folders.size());
  std::map<std::pair<int64_t, int64_t>, std::vector<std::filesystem::path>> by_step;
  for (const auto& f : folders) by_step[{f.rank, f.step}].push_back(f.dir);
  bool mode_set = false;
  for (const auto& [key, dirs] : by_step) {
    NUMPROBE_ASSIGN_OR_RETURN(GraphDumpData data, ReadGraphDump(dirs));
    if (!mode_set) report.mode = data.mode;
    mode_set = true;
    report.tensors += static_cast<int64_t>(data.tensors.size());
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
        auto loaded = mindspore_detail::LoadNpy(t.file, pool);
        if (!loaded) return loaded.error();
        const TensorStats& s = loaded->stats;
        finite = s.nan_count == 0 && s.pos_inf_count == 0 && s.neg_inf_count == 0;
      }
      GraphScanFinding where{key.first, key.second, t.op_type + "." + t.op_name, t.compare_key,
                             t.timestamp};
      if (!finite) report.nonfinite.push_back(where);
      Kernel& k = kernels[{t.timestamp, t.op_name, t.task_id}];
      k.timestamp = t.timestamp;
      k.op = where.op;
      if (t.io.rfind("input", 0) == 0) {
        k.inputs_finite = k.inputs_finite && finite;
      } else if (!finite && k.bad_output.empty()) {
        k.bad_output = t.compare_key;
      }
    }
    report.kernels += static_cast<int64_t>(kernels.size());
    for (const auto& [kk, k] : kernels) {
      if (!k.inputs_finite || k.bad_output.empty()) continue;
      const GraphScanFinding found{key.first, key.second, k.op, k.bad_output, k.timestamp};
      const auto order = [](const GraphScanFinding& f) {
        return std::tie(f.step, f.timestamp, f.rank);
      };
      if (!report.first_anomaly.has_value() || order(found) < order(*report.first_anomaly)) {
        report.first_anomaly = found;
      }
      break;  // the first of this (rank, step)
    }
  }
  return report;
}

}  // namespace numprobe
