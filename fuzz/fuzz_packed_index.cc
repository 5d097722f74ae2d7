// Fuzz target for the packed layout's index reader (msprobe/packed_tensors.h). The input is an
// index's text, read against a 256-byte packed.data: any input must give an index or an error,
// never a crash or a read outside the data; every entry that comes back lies inside the data
// (or is marked truncated) and its tensor, read through PackedTensor, matches its shape.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "numprobe/buffer.h"

#include "msprobe/packed_tensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kDataBytes = 256;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = numprobe::detail::ParsePackedIndex(text, kDataBytes, "packed.index");
  if (!parsed) {
    if (parsed.error().message().empty()) __builtin_trap();  // every error says what is wrong
    return 0;
  }
  auto buffer = numprobe::Buffer::Allocate(kDataBytes);
  if (!buffer) __builtin_trap();
  auto index = std::make_shared<numprobe::detail::PackedIndex>(std::move(*parsed));
  index->data = *buffer;
  const std::shared_ptr<const numprobe::detail::PackedIndex> shared = index;
  unsigned checksum = 0;
  for (size_t i = 0; i < shared->entries.size(); ++i) {
    const numprobe::detail::PackedEntry& e = shared->entries[i];
    if (e.end < e.begin || (!e.truncated && e.end > kDataBytes)) __builtin_trap();
    if (shared->by_name.count(e.name) == 0) __builtin_trap();
    auto tensor = numprobe::detail::PackedTensor(shared, i);
    if (!tensor) {
      if (!e.truncated) __builtin_trap();  // only a cut tensor is refused
      continue;
    }
    const numprobe::TensorView& v = tensor->view();
    const int64_t bytes = v.numel() * numprobe::ItemSize(v.dtype);
    if (static_cast<uint64_t>(bytes) != e.end - e.begin) __builtin_trap();
    for (int64_t k = 0; k < bytes; ++k) checksum += static_cast<unsigned>(v.first()[k]);
  }
  volatile unsigned sink = checksum;
  static_cast<void>(sink);
  return 0;
}
