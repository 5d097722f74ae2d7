// PlanPrecision (app/precheck_plan.h) in its parts, so that its reading can be shared out (the
// cluster layer runs the scan and the per-rank op facts on MPI processes, docs/cluster.md) and the
// report still equals one process's: CheckPlanTarget, the scan (ScanDump with PlanScanOptions),
// PlanInputsOf, PlanPair for every pair in order, FinishPlan.
#ifndef NUMPROBE_PRECHECK_PRECHECK_PLAN_PARTS_H_
#define NUMPROBE_PRECHECK_PRECHECK_PLAN_PARTS_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/app/precheck_plan.h"
#include "numprobe/dump_layout.h"
#include "numprobe/result.h"
#include "numprobe/scan.h"

namespace numprobe::detail {

// kInvalidArgument unless `target` is a planned dtype (fp16, bf16, fp8).
Status CheckPlanTarget(DType target);
// What the plan scans with: headroom in `target` alone, no watchpoints.
ScanOptions PlanScanOptions(DType target);

struct PlanInputs {
  PlanReport report;            // target, dump, settings and settings_known filled
  std::vector<DumpPair> pairs;  // the rank folders whose forward APIs are looked at, in order
};
// The pairs of the dump and the settings (`settings`, else kPlanSettingsFile beside the first
// dump.json when present).
Result<PlanInputs> PlanInputsOf(const std::filesystem::path& path, DType target,
                                const PlanSettings* settings);

// One rank folder's forward API calls: how many were looked at, and their findings in dump order.
struct PlanPairFacts {
  int64_t ops = 0;
  std::vector<PlanFinding> findings;
};
Result<PlanPairFacts> PlanPair(const DumpLocation& location, DType target,
                               const PlanSettings& settings);
// PlanPairFacts as bytes and back (exact); Decode: kCorrupt for bytes Encode did not write.
std::string EncodePlanPairFacts(const PlanPairFacts& facts);
Result<PlanPairFacts> DecodePlanPairFacts(std::string_view bytes);

// The report: the scan's warnings and range findings, then each pair's (in the order of
// inputs.pairs), the optimizer's, errors first.
PlanReport FinishPlan(PlanInputs inputs, const ScanReport& scan,
                      const std::vector<PlanPairFacts>& pairs);

}  // namespace numprobe::detail

#endif  // NUMPROBE_PRECHECK_PRECHECK_PLAN_PARTS_H_
