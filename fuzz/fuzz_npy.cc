// Fuzz target for the .npy reader: any bytes must give a tensor whose view stays inside its
// storage, or an error; never a crash, a hang or an out-of-bounds access.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "numprobe/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto buffer = numprobe::Buffer::Allocate(size);
  if (!buffer) return 0;
  if (size > 0) std::memcpy((*buffer)->mutable_data(), data, size);
  numprobe::ReadOptions options;
  options.max_header_bytes = 1 << 20;
  auto file = numprobe::ReadNpy(*buffer, options);
  if (!file) return 0;
  // Touch every element through the view so that a view reaching outside its storage shows up.
  for (const auto& t : file->tensors) (void)numprobe::Tensor::CopyOf(t.tensor.view());
  return 0;
}
