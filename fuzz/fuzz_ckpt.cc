// Fuzz target for the MindSpore .ckpt reader. The whole reader must reject or accept every input
// without a crash, and every tensor it returns must be readable to its last byte. It is also a
// differential check: whenever the streaming walk accepts the bytes as Checkpoint records, the
// generated protobuf parser must accept them too and see the same values (abort otherwise).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "numprobe/ckpt.h"

#include "formats/ckpt_internal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using numprobe::Buffer;
  const auto bytes = std::as_bytes(std::span<const uint8_t>(data, size));
  auto buffer = Buffer::CopyOf(bytes);
  if (!buffer.ok()) return 0;
  auto file = numprobe::ReadMindSporeCkpt(std::move(buffer).value(), numprobe::ReadOptions{});
  if (file.ok()) {
    unsigned sum = 0;
    for (const numprobe::NamedTensor& t : file->tensors) {
      const std::byte* p = t.tensor.view().first();
      const int64_t n = t.tensor.numel() * numprobe::ItemSize(t.tensor.dtype());
      for (int64_t i = 0; i < n; ++i) sum += static_cast<unsigned>(p[i]);
    }
    volatile unsigned sink = sum;
    (void)sink;
  }
  auto walked = numprobe::detail::DecodeCkptValues(bytes);
  if (walked.ok()) {
    auto reference = numprobe::detail::DecodeCkptValuesReference(bytes);
    if (!reference.ok() || !numprobe::detail::SameCkptValues(*walked, *reference)) std::abort();
  }
  return 0;
}
