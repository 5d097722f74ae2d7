// What the overview leads with for one run: the op where the divergence was born and the first
// op whose output went non-finite. The divergence comes from numprobe compare's own analysis
// (divergence.h) when the run has it; otherwise it is read off the compare table (the Result
// column), following DESIGN.md's rule: an op introduces the divergence when its inputs agree with
// the golden run and an output does not (forward before backward, APIs before the modules that
// wrap them). The first anomaly is read off the target's statistics: the first op whose inputs
// are finite and an output is not.
#ifndef NUMPROBE_UI_FINDINGS_H_
#define NUMPROBE_UI_FINDINGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "numprobe/divergence.h"

#include "ui/result_store.h"

namespace numprobe::ui {

struct Culprit {
  uint32_t entry = 0;
  Verdict level = Verdict::kNone;
  std::vector<uint32_t> rows;            // the entry's offending rows, the worst first
  std::string why;                       // "inputs pass; output.0 error", or the analysis' reason
  std::optional<DivergenceOp> analysis;  // set when numprobe compare's analysis named this op
};

struct Findings {
  std::vector<Culprit> divergence;  // the first introducer, then up to five more
  // Where `divergence` comes from: "analysis" (numprobe compare's first-divergence analysis) or
  // "result" (read off the Result column, for results without the analysis).
  std::string divergence_source = "result";
  bool divergence_fallback = false;  // "result": no op with agreeing inputs, the first failing op
  std::string first_over_tolerance;  // "analysis": the first op over tolerance, introducer or not
  std::optional<Culprit> first_anomaly;
};

// Analyzes a run's rows. Stores without a Result column have no divergence.
Findings AnalyzeFindings(const ResultStore& store);

// Replaces the divergence of `findings` by numprobe compare's analysis (computed on the fly, or
// read from divergence_{ts}.json): its first introducer (absent when no op introduces divergence)
// and the next ones. Ops the store does not hold are skipped.
void ApplyAnalysis(const ResultStore& store, const DivergenceReport& report, Findings* findings);

// Whether a statistic cell says NaN or +-Inf ("nan", "inf", " -inf", "Nan", ...).
bool IsNonFiniteText(std::string_view text);

}  // namespace numprobe::ui

#endif  // NUMPROBE_UI_FINDINGS_H_
