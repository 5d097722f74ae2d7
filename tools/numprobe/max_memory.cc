// --max-memory SIZE: the one parser of the option, shared by inspect, scan, compare and diff.
#include <string>

#include <fmt/format.h>

#include "numprobe/memory_limit.h"

#include "cli.h"

namespace numprobe::cli {

const char* const kMaxMemoryHelp =
    "Most memory one tensor file's decompressed storages may take where they are needed whole, "
    "e.g. 4G (default: half the physical memory); a file over it is refused before anything is "
    "allocated (statistics and compare metrics of large deflated storages are streamed instead)";

Result<uint64_t> MaxMemoryBytes(const std::string& text) {
  if (text.empty()) return uint64_t{0};
  auto bytes = ParseByteSize(text);
  if (!bytes) return bytes.error().WithContext("--max-memory");
  return *bytes;
}

}  // namespace numprobe::cli
