// Fuzz target for the precheck details reader (resume and precheck-compare read CSVs written
// elsewhere): any bytes must give rows or an error; never a crash, a hang or an out-of-bounds
// access.
#include <cstddef>
#include <cstdint>
#include <span>

#include "numprobe/app/precheck.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const char> bytes(reinterpret_cast<const char*>(data), size);
  auto rows = numprobe::ParsePrecheckDetails(bytes, "fuzz.csv");
  if (!rows.ok()) return 0;
  size_t total = 0;
  for (const numprobe::PrecheckRow& r : *rows) total += r.name.size() + r.message.size();
  return total == static_cast<size_t>(-1) ? 1 : 0;
}
