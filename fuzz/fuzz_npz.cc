// Fuzz target for the .npz reader (zip container + .npy members): errors are fine, crashes,
// hangs, unbounded allocations and out-of-bounds accesses are not.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "numprobe/npz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto buffer = numprobe::Buffer::Allocate(size);
  if (!buffer) return 0;
  if (size > 0) std::memcpy((*buffer)->mutable_data(), data, size);
  numprobe::ReadOptions options;
  options.max_header_bytes = 1 << 20;
  options.max_inflated_bytes = 64 << 20;  // keeps a fuzzing process small; bombs stop here
  auto file = numprobe::ReadNpz(*buffer, options);
  if (!file) return 0;
  for (const auto& t : file->tensors) (void)numprobe::Tensor::CopyOf(t.tensor.view());
  return 0;
}
