#include "numprobe/tensor.h"

#include <cstring>
#include <string>

#include "core/checked.h"

namespace numprobe {

TensorView TensorView::Contiguous(const void* data, DType dtype, std::vector<int64_t> shape) {
  TensorView v;
  v.data = static_cast<const std::byte*>(data);
  v.dtype = dtype;
  v.strides = ContiguousStrides(shape);
  v.shape = std::move(shape);
  return v;
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool TensorView::is_contiguous() const {
  if (numel() == 0) return true;  // nothing to address: any strides describe it
  int64_t expected = 1;
  for (int i = ndim() - 1; i >= 0; --i) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

int64_t TensorView::span_bytes() const {
  int64_t last = 0;
  for (int i = 0; i < ndim(); ++i) {
    if (shape[i] == 0) return 0;
    last += (shape[i] - 1) * strides[i];
  }
  return (last + 1) * ItemSize(dtype);
}

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
  return strides;
}

Status ValidateView(DType dtype, const std::vector<int64_t>& shape,
                    const std::vector<int64_t>& strides, int64_t byte_offset,
                    uint64_t storage_bytes) {
  if (shape.size() != strides.size()) {
    return Status::Corrupt("shape has " + std::to_string(shape.size()) + " dims but strides " +
                           std::to_string(strides.size()));
  }
  if (byte_offset < 0) return Status::Corrupt("negative storage offset");
  bool empty = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) return Status::Corrupt("negative dimension " + std::to_string(shape[i]));
    if (strides[i] < 0) return Status::Corrupt("negative stride " + std::to_string(strides[i]));
    if (shape[i] == 0) empty = true;
  }
  if (!CheckedNumel(shape)) return Status::OutOfRange("shape product overflows 64 bits");
  if (empty) return Status::Ok();  // addresses nothing, whatever the strides say
  int64_t last = 0;                // element index of the last element relative to the first
  for (size_t i = 0; i < shape.size(); ++i) {
    auto term = CheckedMul<int64_t>(shape[i] - 1, strides[i]);
    if (!term) return Status::OutOfRange("stride * size overflows 64 bits");
    auto sum = CheckedAdd<int64_t>(last, *term);
    if (!sum) return Status::OutOfRange("view extent overflows 64 bits");
    last = *sum;
  }
  auto end_elems = CheckedAdd<int64_t>(last, 1);
  auto end_bytes = end_elems ? CheckedMul<int64_t>(*end_elems, ItemSize(dtype)) : std::nullopt;
  auto total = end_bytes ? CheckedAdd<int64_t>(*end_bytes, byte_offset) : std::nullopt;
  if (!total) return Status::OutOfRange("view extent overflows 64 bits");
  if (static_cast<uint64_t>(*total) > storage_bytes) {
    return Status::OutOfRange("view needs " + std::to_string(*total) + " bytes but storage has " +
                              std::to_string(storage_bytes));
  }
  return Status::Ok();
}

Result<size_t> ContiguousBytes(DType dtype, const std::vector<int64_t>& shape) {
  for (int64_t d : shape) {
    if (d < 0) return Status::InvalidArgument("negative dimension " + std::to_string(d));
  }
  auto numel = CheckedNumel(shape);
  if (!numel) return Status::OutOfRange("shape product overflows 64 bits");
  auto bytes = CheckedMul<int64_t>(*numel, ItemSize(dtype));
  if (!bytes) return Status::OutOfRange("tensor size overflows 64 bits");
  return static_cast<size_t>(*bytes);
}

Result<Tensor> Tensor::Zeros(DType dtype, std::vector<int64_t> shape) {
  NUMPROBE_ASSIGN_OR_RETURN(const size_t size, ContiguousBytes(dtype, shape));
  NUMPROBE_ASSIGN_OR_RETURN(auto buffer, Buffer::Allocate(size));
  TensorView view = TensorView::Contiguous(buffer->data(), dtype, std::move(shape));
  return Tensor(std::move(buffer), std::move(view));
}

Result<Tensor> Tensor::CopyOf(const TensorView& src) {
  NUMPROBE_ASSIGN_OR_RETURN(const size_t size, ContiguousBytes(src.dtype, src.shape));
  // Every element is copied below, so the buffer is not zero-filled first.
  NUMPROBE_ASSIGN_OR_RETURN(auto buffer, Buffer::AllocateUninitialized(size));
  return CopyOf(src, std::move(buffer));
}

Result<Tensor> Tensor::CopyOf(const TensorView& src, std::shared_ptr<Buffer> into) {
  NUMPROBE_ASSIGN_OR_RETURN(const size_t size, ContiguousBytes(src.dtype, src.shape));
  if (into == nullptr || into->size() != size) {
    return Status::InvalidArgument("copy of a " + std::to_string(size) + "-byte tensor into a " +
                                   std::to_string(into == nullptr ? 0 : into->size()) +
                                   "-byte buffer");
  }
  std::byte* dst = into->mutable_data();
  TensorView view = TensorView::Contiguous(dst, src.dtype, src.shape);
  Tensor out(std::move(into), std::move(view));
  const int64_t n = src.numel();
  if (n == 0) return out;
  const int item = ItemSize(src.dtype);
  if (src.is_contiguous()) {
    std::memcpy(dst, src.first(), static_cast<size_t>(n * item));
    return out;
  }
  // Odometer walk over the source's strides.
  const int nd = src.ndim();
  std::vector<int64_t> index(nd, 0);
  int64_t offset = 0;
  for (int64_t k = 0; k < n; ++k) {
    std::memcpy(dst + k * item, src.first() + offset * item, static_cast<size_t>(item));
    for (int d = nd - 1; d >= 0; --d) {
      if (++index[d] < src.shape[d]) {
        offset += src.strides[d];
        break;
      }
      offset -= (src.shape[d] - 1) * src.strides[d];
      index[d] = 0;
    }
  }
  return out;
}

Result<Tensor> Tensor::InMemory(uint64_t max_bytes, std::string* warning) const {
  if (!streamed_) return *this;
  NUMPROBE_ASSIGN_OR_RETURN(std::shared_ptr<const Buffer> bytes,
                            streamed_->Load(max_bytes, warning));
  TensorView view = view_;
  view.data = bytes->data();
  return Tensor(std::move(bytes), std::move(view));
}

std::byte* Tensor::mutable_data() {
  if (!storage_ || storage_->is_mapped()) return nullptr;
  // Heap tensors made here own their buffer exclusively; casting away const is how they are
  // filled by readers that decode into them.
  return const_cast<std::byte*>(view_.first());  // NOLINT(cppcoreguidelines-pro-type-const-cast)
}

}  // namespace numprobe
