// Fuzz target for the zip container alone: Open() then Read() and CRC-check every entry.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "formats/zip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto buffer = numprobe::Buffer::Allocate(size);
  if (!buffer) return 0;
  if (size > 0) std::memcpy((*buffer)->mutable_data(), data, size);
  numprobe::ZipLimits limits;
  limits.max_inflated_bytes = 64 << 20;
  auto archive = numprobe::ZipArchive::Open(*buffer, limits);
  if (!archive) return 0;
  for (const auto& entry : archive->entries()) {
    auto bytes = archive->Read(entry);
    if (bytes) (void)numprobe::ZipArchive::CrcMatches(entry, bytes->bytes);
  }
  return 0;
}
