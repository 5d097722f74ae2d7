// Fuzz target for divergence_{ts}.json read back (compare/divergence_file.h ParseDivergenceJson, what
// report and serve show): any bytes must give ranks or an error; never a crash (deep nesting
// included: issue 17), a hang or an out-of-bounds access. Every rank read has its scope and rank,
// and every op its name (the reader skips the others).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "compare/divergence_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto file = numprobe::ParseDivergenceJson(text);
  if (file.ok()) {
    for (const numprobe::DivergenceFileRank& rank : file->ranks) {
      if (rank.report.first && rank.report.first->op_name.empty()) std::abort();
      for (const numprobe::DivergenceOp& op : rank.report.next) {
        if (op.op_name.empty()) std::abort();
      }
    }
  }
  return 0;
}
