// The non-tensor arguments of a dumped API call (eps, p, dim, approximate, a Python-float
// multiplier, ...): their parameter names and their values as Python writes them, and the ones
// that differ between the target and the golden call.
#ifndef NUMPROBE_COMPARE_ARGUMENTS_H_
#define NUMPROBE_COMPARE_ARGUMENTS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/compare.h"
#include "numprobe/divergence.h"

namespace numprobe::detail {

// The API of a dump entry: "Functional.layer_norm.0.forward" -> "layer_norm"; "" when the name
// has another form (a module).
std::string_view ApiOfEntry(std::string_view entry);

// The parameter an input row stands for: "Functional.layer_norm.0.forward.input.4" -> "eps" (by
// the signatures of common torch APIs), ".input.dim" -> "dim" (keywords name themselves),
// ".input.1.0" -> "normalized_shape[0]"; the row's own suffix ("input.4") where the signature is
// not known. `entry` is the row's entry name.
std::string ArgumentName(std::string_view entry, std::string_view row_name);

// A non-tensor value as Python's repr writes it: 1e-05, 'tanh', True, None, -1.
std::string ArgumentRepr(const DumpFile& file, const DumpRow& row);

// The paired non-tensor input rows among table.rows[begin, end) whose values differ.
std::vector<ArgumentChange> DifferingArguments(const CompareTable& table, size_t begin, size_t end);

}  // namespace numprobe::detail

#endif  // NUMPROBE_COMPARE_ARGUMENTS_H_
