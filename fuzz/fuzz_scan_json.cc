// Fuzz target for scan_{ts}.json read back (numprobe/scan.h ParseScanJson, what report and serve
// load): any bytes must give a document whose root is an object, or an error; never a crash (deep
// nesting included: issue 17), a hang or an out-of-bounds access.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "numprobe/scan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto doc = numprobe::ParseScanJson(text);
  if (doc.ok() && !doc->is_object()) std::abort();
  return 0;
}
