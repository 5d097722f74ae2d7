// First divergence: the op where the target run's error is born. Every compared tensor row gets
// an error estimate relative to its own magnitude (tensor mode: |t - g| / max(|t|, |g|) in L2;
// statistics mode: the largest of the Max/Min/Mean differences relative to the tensor's range
// and the Norm difference relative to the larger norm; NaN/Inf on one side only: +inf; a Mean or
// Norm that overflowed its dtype while Max and Min are finite is not a difference) and a
// tolerance of kToleranceUlps unit roundoffs of the op's working precision: the lowest precision
// among the op's tensors on both sides (a bf16-vs-fp32 row is judged against bf16 rounding, and so
// is an fp32 output computed from bf16 inputs). Rows over their tolerance are the symptoms; when
// there are none there is no divergence. Otherwise the ops are walked in execution order, forward
// before backward, and an op is where an error is born when
//   - non_finite: an output has NaN/Inf on one side only while its inputs are finite;
//   - precision: the target computes it in a lower precision than the golden (a tensor narrowed
//     relative to the golden's dtype that no earlier recorded op narrowed: its input was cast
//     down just before it, or it outputs a lower precision than its inputs, as in an autocast
//     region) and its error exceeds the golden dtype's tolerance, while some symptom is judged
//     at a precision above the narrowed one or every symptom is rounding-sized (within
//     kGrowthFactor times its tolerance); a lower-precision run with no symptom is not a
//     divergence, and one with a bug far beyond its own rounding is judged by the rules below.
//     The cast that narrowed the input is named from casts.json
//     (casts.h) when the capture recorded it, or from dump.json when it holds the cast;
//   - inputs_agree / argument: its tensor inputs agree and an output does not, more than
//     kCarryFactor times the inputs' error; the non-tensor arguments that differ (eps, p, dim,
//     a Python-float multiplier) are named with both values;
//   - source: it is the first op with anything over tolerance and an input that differs was
//     produced by no recorded op (a parameter, a data batch; dataflow.h infers producers from
//     statistics);
//   - transit: an input differs although the recorded op that produced it agrees: something the
//     dump does not record changed it in between (a cast round trip; casts.json names the cast);
//   - identical_inputs: it is the only API call of the run whose tensor inputs and arguments are
//     identical in both runs while an output differs at all, even within tolerance: in a
//     deterministic pair of runs the differences after it come from it (with several such calls,
//     as on two devices, the rule does not apply);
//   - growth (weak): the output's error is at least kGrowthFactor times the inputs' error.
// The first such op (growth only when nothing else fits) is the answer; a source is superseded by
// a later forward op that multiplies the largest error seen so far by kGrowthFactor (noise in the
// data is not the bug). When no rule fits while rows are over tolerance, `first` is the first op
// with a row over its tolerance (rule "fallback"), so there is always an answer when something
// differs. The other births follow, ranked by error growth. Module entries that only repeat an
// API's output (same error on the same tensor) are not listed twice.
#ifndef NUMPROBE_DIVERGENCE_H_
#define NUMPROBE_DIVERGENCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/compare.h"
#include "numprobe/dump.h"

namespace numprobe {

inline constexpr double kToleranceUlps = 4.0;  // tolerance = 4 unit roundoffs of the pair
inline constexpr double kCarryFactor = 2.0;    // error an op may pass on from its inputs
inline constexpr double kGrowthFactor = 10.0;  // "far beyond its inputs' error"
inline constexpr int kRankedIntroducers = 5;   // how many follow the first

// The rules of the comment above, as the JSON and the CLI name them.
inline constexpr std::string_view kRuleNonFinite = "non_finite";
inline constexpr std::string_view kRulePrecision = "precision";
inline constexpr std::string_view kRuleInputsAgree = "inputs_agree";
inline constexpr std::string_view kRuleArgument = "argument";
inline constexpr std::string_view kRuleSource = "source";
inline constexpr std::string_view kRuleTransit = "transit";
inline constexpr std::string_view kRuleIdenticalInputs = "identical_inputs";
inline constexpr std::string_view kRuleGrowth = "growth";
inline constexpr std::string_view kRuleFallback = "fallback";

// Sets CompareRow::error (statistics and md5 modes; tensor mode fills it while comparing) and
// CompareRow::tolerance for every paired tensor row of `table`.
void AssessRows(CompareTable* table);

// A non-tensor argument whose value differs: "eps", "0.01" (target), "1e-05" (golden).
struct ArgumentChange {
  std::string name;
  std::string target;
  std::string golden;
};

// The narrowing cast that lost the precision: its entry name (as msprobe names the call), the
// dtypes, and the user's frame where it ran (empty when unknown).
struct CastCause {
  std::string name;
  std::string from_dtype;
  std::string to_dtype;
  std::string at;
};

struct DivergenceOp {
  std::string op_name;  // the dump entry ("Functional.gelu.0.forward")
  uint32_t entry = 0;   // its index in the target's dump.json (execution order)
  bool backward = false;
  std::string rule;          // kRule*: which rule named it
  std::string reason;        // one sentence: why the error is born here
  double input_error = 0;    // largest error among its tensor inputs (0 when none)
  double output_error = 0;   // largest error among its outputs
  double tolerance = 0;      // of the worst output
  double growth = 0;         // output_error / max(input_error, unit roundoff); inf for NaN
  std::string worst_output;  // row name of the worst output
  std::string dtype_pair;    // "torch.bfloat16 vs torch.float32" of the worst output
  bool non_finite = false;   // the worst output has NaN/Inf on one side only
  std::vector<std::string> module_path;  // enclosing modules, outermost first (construct.json)
  std::vector<std::string> stack;        // stack.json lines of the op
  std::string at;  // the user's frame of `stack` (innermost outside libraries)
  std::vector<ArgumentChange> arguments;  // rule "argument"
  std::optional<CastCause> cast;          // rules "precision", "transit", "non_finite"
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
