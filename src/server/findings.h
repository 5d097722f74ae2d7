// What the overview leads with for one run: the op where the divergence was born and the first
// op whose output went non-finite. Both are read off the compare table itself (the Result column
// and the target's statistics), following DESIGN.md's rules: an op introduces the divergence
// when its inputs agree with the golden run and an output does not (forward before backward,
// APIs before the modules that wrap them); an op is the first anomaly when its inputs are finite
// and an output is not.
#ifndef NUMPROBE_SERVER_FINDINGS_H_
#define NUMPROBE_SERVER_FINDINGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/result_store.h"

namespace numprobe::ui {

struct Culprit {
  uint32_t entry = 0;
  Level level = Level::kNone;
  std::vector<uint32_t> rows;  // the entry's offending rows
  std::string why;             // "inputs pass; output.0 error"
};

struct Findings {
  std::vector<Culprit> divergence;   // the first introducer, then up to four more
  bool divergence_fallback = false;  // no op with agreeing inputs: the first failing op instead
  std::optional<Culprit> first_anomaly;
};

// Analyzes a run's rows. Stores without a Result column have no divergence.
Findings AnalyzeFindings(const ResultStore& store);

// Whether a statistic cell says NaN or +-Inf ("nan", "inf", " -inf", "Nan", ...).
bool IsNonFiniteText(std::string_view text);

}  // namespace numprobe::ui

#endif  // NUMPROBE_SERVER_FINDINGS_H_
