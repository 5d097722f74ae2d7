// The verdict on one compared item, shared by compare (the Result column of a row), diff (a tensor
// pair), config-check (a snapshot item) and the UI. Each feature keeps its own detail beside the
// verdict: compare's Err_message entries, diff's reason a pair was not compared, config-check's
// note.
#ifndef NUMPROBE_VERDICT_H_
#define NUMPROBE_VERDICT_H_

#include <cstdint>

#include "numprobe/enum_names.h"

namespace numprobe {

// The numbers are stable: report.html stores verdicts as them.
enum class Verdict : uint8_t {
  kPass = 0,       // agrees within its tolerance
  kUnmatched = 1,  // has no counterpart on the golden side
  kWarning = 2,
  kError = 3,
  kNone = 4,  // no verdict: not judged (a table without a Result column, a pair not compared)
};

inline constexpr EnumNameEntry<Verdict> kVerdictNames[] = {{Verdict::kPass, "pass"},
                                                           {Verdict::kUnmatched, "unmatched"},
                                                           {Verdict::kWarning, "warning"},
                                                           {Verdict::kError, "error"},
                                                           {Verdict::kNone, "none"}};
constexpr const auto& EnumNameTable(Verdict /*unused*/) { return kVerdictNames; }

// The order of severity, mildest first.
inline constexpr Verdict kVerdictsBySeverity[] = {
    Verdict::kNone, Verdict::kPass, Verdict::kUnmatched, Verdict::kWarning, Verdict::kError};

// The position of `verdict` in kVerdictsBySeverity.
constexpr int Severity(Verdict verdict) {
  int rank = 0;
  for (const Verdict v : kVerdictsBySeverity) {
    if (v == verdict) return rank;
    ++rank;
  }
  return 0;
}

// The more severe of two verdicts (`a` when they are equally severe).
constexpr Verdict Worse(Verdict a, Verdict b) { return Severity(b) > Severity(a) ? b : a; }

}  // namespace numprobe

#endif  // NUMPROBE_VERDICT_H_
