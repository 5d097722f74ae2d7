// ClusterScanDump and ClusterPlanPrecision (app/cluster.h): ScanDump's parts (scan/scan_units.h)
// and PlanPrecision's (precheck/precheck_plan_parts.h) spread over MPI processes.
//   1. every process plans (lists the rank folders; no reading, no communication);
//   2. the units are shared out by bytes and each process scans its own (shared_work.h);
//      failures are agreed (the first in scan order wins, as in one process);
//   3. each process sends its units' RankScans (encoded exactly) to process 0;
//   4. process 0 runs the cross-rank analysis over every step in order, as one process does.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "numprobe/app/cluster.h"

#include "cluster/dump_bytes.h"
#include "cluster/shared_work.h"
#include "precheck/precheck_plan_parts.h"
#include "scan/scan_units.h"

namespace numprobe {

Result<ClusterScanResult> ClusterScanDump(const ClusterSession& session,
                                          const std::filesystem::path& path,
                                          const ScanOptions& options) {
  auto planned = detail::PlanScan(path, options);
  NUMPROBE_RETURN_IF_ERROR(session.Agree(planned.ok() ? Status::Ok() : planned.error(), 0));
  const detail::ScanPlan& plan = *planned;
  NUMPROBE_ASSIGN_OR_RETURN(detail::SharedWork shared,
                            detail::RunSharedWork(
                                session, plan.units.size(),
                                [&](size_t i) {
                                  return detail::DumpBytes(*plan.units[i].target,
                                                           options.read_tensor_files);
                                },
                                [&](size_t i) -> Result<std::string> {
                                  NUMPROBE_ASSIGN_OR_RETURN(const detail::RankScan rank,
                                                            detail::ScanUnit(plan, i, options));
                                  return detail::EncodeRankScan(rank);
                                }));
  ClusterScanResult result;
  result.bytes_per_process = std::move(shared.bytes_per_process);

  // Process 0: the cross-rank analysis, step by step in scan order.
  Status leader_status;
  if (session.leader()) {
    detail::ScanAssembler assembler(plan, options);
    size_t begin = 0;
    for (const size_t end : plan.step_end) {
      std::vector<detail::RankScan> step;
      for (size_t u = begin; u < end && leader_status.ok(); ++u) {
        auto rank = detail::DecodeRankScan(shared.records[u]);
        std::string().swap(shared.records[u]);
        if (!rank) {
          leader_status = rank.error();
          break;
        }
        step.push_back(std::move(*rank));
      }
      if (!leader_status.ok()) break;
      assembler.AddStep(std::move(step));
      begin = end;
    }
    if (leader_status.ok()) result.report = assembler.Finish();
  }
  session.IdleUntilAll();
  NUMPROBE_RETURN_IF_ERROR(session.Agree(leader_status, 0));
  return result;
}

Result<ClusterPlanResult> ClusterPlanPrecision(const ClusterSession& session,
                                               const std::filesystem::path& path, DType target,
                                               const PlanSettings* settings) {
  NUMPROBE_RETURN_IF_ERROR(session.Agree(detail::CheckPlanTarget(target), 0));
  NUMPROBE_ASSIGN_OR_RETURN(ClusterScanResult scan,
                            ClusterScanDump(session, path, detail::PlanScanOptions(target)));
  auto planned = detail::PlanInputsOf(path, target, settings);
  NUMPROBE_RETURN_IF_ERROR(session.Agree(planned.ok() ? Status::Ok() : planned.error(), 0));
  detail::PlanInputs& inputs = *planned;
  NUMPROBE_ASSIGN_OR_RETURN(
      detail::SharedWork shared,
      detail::RunSharedWork(
          session, inputs.pairs.size(),
          [&](size_t i) { return detail::DumpBytes(*inputs.pairs[i].target, false); },
          [&](size_t i) -> Result<std::string> {
            NUMPROBE_ASSIGN_OR_RETURN(
                const detail::PlanPairFacts facts,
                detail::PlanPair(*inputs.pairs[i].target, target, inputs.report.settings));
            return detail::EncodePlanPairFacts(facts);
          }));
  ClusterPlanResult result;
  result.bytes_per_process = std::move(scan.bytes_per_process);
  for (size_t p = 0; p < result.bytes_per_process.size(); ++p) {
    result.bytes_per_process[p] += shared.bytes_per_process[p];
  }
  Status leader_status;
  if (session.leader()) {
    std::vector<detail::PlanPairFacts> pairs;
    pairs.reserve(shared.records.size());
    for (std::string& record : shared.records) {
      auto facts = detail::DecodePlanPairFacts(record);
      std::string().swap(record);
      if (!facts) {
        leader_status = facts.error();
        break;
      }
      pairs.push_back(std::move(*facts));
    }
    if (leader_status.ok()) {
      result.report = detail::FinishPlan(std::move(inputs), scan.report, pairs);
    }
  }
  session.IdleUntilAll();
  NUMPROBE_RETURN_IF_ERROR(session.Agree(leader_status, 0));
  return result;
}

}  // namespace numprobe
