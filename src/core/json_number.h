// Numbers in numprobe's own JSON outputs (divergence, scan): non-finite values become the strings
// "NaN", "Infinity" and "-Infinity", so that the files stay standard JSON that any parser reads
// (msprobe's dump.json uses bare tokens instead; that is for its files only).
#ifndef NUMPROBE_CORE_JSON_NUMBER_H_
#define NUMPROBE_CORE_JSON_NUMBER_H_

#include <cmath>

namespace numprobe::detail {

template <typename Writer>
void WriteJsonNumber(Writer& w, double v) {
  if (std::isnan(v)) {
    w.String("NaN");
  } else if (std::isinf(v)) {
    w.String(v > 0 ? "Infinity" : "-Infinity");
  } else {
    w.Double(v);
  }
}

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_JSON_NUMBER_H_
