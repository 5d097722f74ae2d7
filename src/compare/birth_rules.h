// The rules engine behind FindDivergence (include/numprobe/divergence.h): walks the compared ops
// and names the one where the target run's error is born, with the rule that named it and one
// sentence saying why.
#ifndef NUMPROBE_COMPARE_BIRTH_RULES_H_
#define NUMPROBE_COMPARE_BIRTH_RULES_H_

#include <cstddef>
#include <optional>
#include <string>

#include "numprobe/compare.h"
#include "numprobe/divergence.h"
#include "numprobe/dtype.h"

namespace numprobe::detail {

// A dtype as dump.json spells it, PyTorch's ("torch.bfloat16") or MindSpore's ("BFloat16").
std::optional<DType> DtypeOfName(const std::string& text);

// The end of the rows of table.rows that belong to the same target entry as rows[begin].
size_t EntryEnd(const CompareTable& table, size_t begin);

// AssessRows (include/numprobe/divergence.h) for one entry's rows, table rows [begin, end): they
// look at no other entry's rows.
void AssessEntryRows(CompareTable* table, size_t begin, size_t end);

// The unit roundoff of an op's working precision: the largest among the float tensors of its
// paired rows [begin, end), on both sides (0 when it has none).
double WorkingUnitRoundoff(const CompareTable& table, size_t begin, size_t end);

DivergenceReport FindBirths(const CompareTable& table, const ConstructMap* construct);

}  // namespace numprobe::detail

#endif  // NUMPROBE_COMPARE_BIRTH_RULES_H_
