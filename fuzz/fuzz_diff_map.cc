// Fuzz target for diff's --map (numprobe/diff.h ParseNameMap): any bytes must give a name map or an
// error; never a crash (deep nesting included: issue 17), a hang or an out-of-bounds access.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "numprobe/diff.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)numprobe::ParseNameMap(text);
  return 0;
}
