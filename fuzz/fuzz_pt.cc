// Fuzz target: ReadTorch on raw bytes (zip or legacy stream), strict and inert. Every tensor
// returned is then touched at up to 4096 of its elements through its strides, so that a view the
// reader let through outside its storage would be caught by AddressSanitizer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "numprobe/buffer.h"
#include "numprobe/torch_pt.h"

namespace {

// Results are stored here so that the compiler cannot drop the reads.
volatile size_t g_sink = 0;

size_t Touch(const numprobe::TensorView& v) {
  const int64_t n = v.numel();
  if (n == 0) return 0;
  const int item = numprobe::ItemSize(v.dtype);
  const int nd = v.ndim();
  std::vector<int64_t> index(static_cast<size_t>(nd), 0);
  size_t sink = 0;
  const int64_t limit = std::min<int64_t>(n, 4096);
  for (int64_t k = 0; k < limit; ++k) {
    int64_t offset = 0;
    for (int d = 0; d < nd; ++d) offset += index[d] * v.strides[d];
    unsigned char first = 0;
    unsigned char last = 0;
    std::memcpy(&first, v.first() + offset * item, 1);
    std::memcpy(&last, v.first() + offset * item + item - 1, 1);
    sink += first + last;
    for (int d = nd - 1; d >= 0; --d) {
      if (++index[d] < v.shape[d]) break;
      index[d] = 0;
    }
  }
  // The far corner too.
  int64_t far = 0;
  for (int d = 0; d < nd; ++d) far += (v.shape[d] - 1) * v.strides[d];
  unsigned char c = 0;
  std::memcpy(&c, v.first() + far * item + item - 1, 1);
  return sink + c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto buffer = numprobe::Buffer::CopyOf(std::as_bytes(std::span(data, size)));
  if (!buffer.ok()) return 0;
  const std::shared_ptr<const numprobe::Buffer> file = *buffer;
  for (bool inert : {false, true}) {
    numprobe::ReadOptions options;
    options.inert_pickle = inert;
    options.max_inflated_bytes = 64 << 20;
    auto r = numprobe::ReadTorch(file, options);
    if (!r.ok()) {
      if (r.error().message().find('\n') != std::string::npos) __builtin_trap();
      continue;
    }
    size_t sink = 0;
    for (const auto& t : r->tensors) sink += Touch(t.tensor.view());
    g_sink = sink;
  }
  return 0;
}
