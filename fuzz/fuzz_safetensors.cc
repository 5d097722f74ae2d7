// Fuzz target for the safetensors reader. Any input must give a TensorFile or an error: never a
// crash, a read outside the input, undefined behaviour or a leak. The input is parsed in place
// (no copy into a padded Buffer) so that AddressSanitizer sees a read even one byte past its end.
// Every tensor that comes back is read end to end, and its invariants are checked: a view into
// the input lies inside it and is aligned; every non-empty view is contiguous, and its span
// matches its shape.
#include <cstddef>
#include <cstdint>
#include <span>

#include "numprobe/tensor_file.h"

#include "formats/safetensors_internal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using numprobe::NamedTensor;
  using numprobe::TensorView;
  const std::span<const std::byte> input(reinterpret_cast<const std::byte*>(data), size);
  auto file = numprobe::detail::ParseSafetensors(input, nullptr, numprobe::ReadOptions{});
  if (!file) {
    if (file.error().message().empty()) __builtin_trap();  // every error says what is wrong
    return 0;
  }
  const auto begin = reinterpret_cast<uintptr_t>(input.data());
  const uintptr_t end = begin + input.size();
  unsigned checksum = 0;
  for (const NamedTensor& t : file->tensors) {
    const TensorView& v = t.tensor.view();
    const int64_t bytes = v.numel() * numprobe::ItemSize(v.dtype);
    // (TensorView::is_contiguous() says false for some empty shapes such as [2, 0].)
    if (bytes > 0 && !v.is_contiguous()) __builtin_trap();
    if (v.span_bytes() != bytes) __builtin_trap();
    const std::byte* first = v.first();
    const auto address = reinterpret_cast<uintptr_t>(first);
    if (t.tensor.storage() == nullptr) {
      // A view of the input (copies own a heap Buffer): inside it, naturally aligned.
      if (address < begin || address > end || static_cast<uintptr_t>(bytes) > end - address) {
        __builtin_trap();
      }
      if (address % static_cast<uintptr_t>(numprobe::ItemSize(v.dtype)) != 0) __builtin_trap();
    }
    for (int64_t i = 0; i < bytes; ++i) checksum += static_cast<unsigned>(first[i]);
  }
  // Keep the reads from being optimised away.
  volatile unsigned sink = checksum;
  static_cast<void>(sink);
  return 0;
}
