// A first-divergence op (numprobe/divergence.h) as the Python dict both numprobe.compare's result
// and the closed loop's end-of-run paragraph read (compare_module.cc defines it).
#ifndef NUMPROBE_PYTHON_DIVERGENCE_DICT_H_
#define NUMPROBE_PYTHON_DIVERGENCE_DICT_H_

#include <pybind11/pybind11.h>

#include "numprobe/divergence.h"

namespace numprobe {

// op_name, entry, backward, rule, reason, the errors, worst_output, dtype_pair, non_finite,
// module_path, stack, at, arguments [(name, target, golden)], cast ("name (from -> to)" or None).
pybind11::dict DivergenceDict(const DivergenceOp& op);

}  // namespace numprobe

#endif  // NUMPROBE_PYTHON_DIVERGENCE_DICT_H_
