# Warnings on an INTERFACE target, linked PRIVATE by numprobe's own targets only.
add_library(numprobe_warnings INTERFACE)
target_compile_options(numprobe_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wno-missing-field-initializers
  $<$<BOOL:${NUMPROBE_WERROR}>:-Werror>)
# Kernels must sum in the order the scalar reference does: no contraction into FMA.
add_library(numprobe_strict_fp INTERFACE)
target_compile_options(numprobe_strict_fp INTERFACE -ffp-contract=off)
