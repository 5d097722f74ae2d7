// First divergence: where the target run starts to disagree with the golden one. Every compared
// tensor row gets an error estimate relative to its own magnitude (tensor mode: |t - g| /
// max(|t|, |g|) in L2; statistics mode: the largest of the Max/Min/Mean differences relative to
// the tensor's range and the Norm difference relative to the larger norm; NaN/Inf on one side
// only: +inf) and a tolerance from the lower-precision dtype of the pair (kToleranceUlps unit
// roundoffs: a bf16-vs-fp32 row is judged against bf16 rounding, not fp32's). Walking the ops in
// execution order, forward before backward, an op *introduces* divergence when an output exceeds
// its tolerance and either
//   - its tensor inputs agree (each within its own tolerance) and the output's error is more than
//     kCarryFactor times the inputs' (an f32 output of bf16 inputs carries their bf16 error: that
//     is not introduced here), or
//   - the output's error is at least kGrowthFactor times the inputs' error, or
//   - the output has NaN/Inf on one side only while the inputs are finite.
// The first introducer is the answer; the other introducers are ranked by error growth. Module
// entries that only repeat an API's output (same error on the same tensor) are not listed twice.
#ifndef NUMPROBE_DIVERGENCE_H_
#define NUMPROBE_DIVERGENCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "numprobe/compare.h"
#include "numprobe/dump.h"

namespace numprobe {

inline constexpr double kToleranceUlps = 4.0;  // tolerance = 4 unit roundoffs of the pair
inline constexpr double kCarryFactor = 2.0;    // error an op may pass on from its inputs
inline constexpr double kGrowthFactor = 10.0;  // "far beyond its inputs' error"
inline constexpr int kRankedIntroducers = 5;   // how many follow the first

// Sets CompareRow::error (statistics and md5 modes; tensor mode fills it while comparing) and
// CompareRow::tolerance for every paired tensor row of `table`.
void AssessRows(CompareTable* table);

struct DivergenceOp {
  std::string op_name;  // the dump entry ("Functional.gelu.0.forward")
  uint32_t entry = 0;   // its index in the target's dump.json (execution order)
  bool backward = false;
  std::string reason;        // one line: why this op introduces divergence
  double input_error = 0;    // largest error among its tensor inputs (0 when none)
  double output_error = 0;   // largest error among its outputs
  double tolerance = 0;      // of the worst output
  double growth = 0;         // output_error / max(input_error, unit roundoff); inf for NaN
  std::string worst_output;  // row name of the worst output
  std::string dtype_pair;    // "torch.bfloat16 vs torch.float32" of the worst output
  bool non_finite = false;   // the worst output has NaN/Inf on one side only
  std::vector<std::string> module_path;  // enclosing modules, outermost first (construct.json)
  std::vector<std::string> stack;        // stack.json lines of the op
};

struct DivergenceReport {
  std::optional<DivergenceOp> first;
  std::vector<DivergenceOp> next;  // up to kRankedIntroducers more, by growth
  int64_t ops_examined = 0;
  int64_t rows_over_tolerance = 0;
  // The first op (forward before backward) with an output over its tolerance, introducer or not:
  // where a gradual drift first shows. Empty when every row is within tolerance.
  std::string first_over_tolerance;
};

// Analyses one compare table. `construct` may be null (no module paths).
DivergenceReport FindDivergence(const CompareTable& table, const ConstructMap* construct);

}  // namespace numprobe

#endif  // NUMPROBE_DIVERGENCE_H_
