// TensorView (non-owning) and Tensor (owning). A view is a data pointer, a dtype, a shape, strides
// in elements and a byte offset, with elements in the host's (little-endian) byte order. A Tensor
// is a view plus a shared Buffer that keeps its bytes alive (a memory map or a heap copy).
#ifndef NUMPROBE_TENSOR_H_
#define NUMPROBE_TENSOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "numprobe/buffer.h"
#include "numprobe/dtype.h"
#include "numprobe/result.h"
#include "numprobe/streamed_storage.h"

namespace numprobe {

struct TensorView {
  const std::byte* data = nullptr;  // base of the storage
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;    // empty = 0-d (one element)
  std::vector<int64_t> strides;  // in elements, one per dim; never negative
  int64_t byte_offset = 0;       // of element [0, 0, ...] from `data`

  // A C-contiguous view of `shape` starting at `data`.
  static TensorView Contiguous(const void* data, DType dtype, std::vector<int64_t> shape);

  // Number of elements (1 for 0-d). Views are validated on construction by readers, so this
  // cannot overflow for a valid view.
  int64_t numel() const;
  int ndim() const { return static_cast<int>(shape.size()); }
  bool is_contiguous() const;  // C order, no gaps
  // Address of element [0, ...].
  const std::byte* first() const { return data + byte_offset; }
  // Bytes spanned from first() to the end of the last element (0 for an empty tensor).
  int64_t span_bytes() const;
};

// C-order strides of `shape`, in elements.
std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& shape);

// The bytes of a contiguous `dtype` tensor of `shape`, with checked arithmetic:
// kInvalidArgument for a negative dimension, kOutOfRange when the size overflows.
Result<size_t> ContiguousBytes(DType dtype, const std::vector<int64_t>& shape);

// Validates that `shape`, `strides` and `byte_offset` of a `dtype` view address only bytes inside
// a storage of `storage_bytes`, with checked arithmetic. kOutOfRange / kCorrupt otherwise.
Status ValidateView(DType dtype, const std::vector<int64_t>& shape,
                    const std::vector<int64_t>& strides, int64_t byte_offset,
                    uint64_t storage_bytes);

class Tensor {
 public:
  Tensor() = default;
  // A view into `storage`; the caller has validated it (ValidateView).
  Tensor(std::shared_ptr<const Buffer> storage, TensorView view)
      : storage_(std::move(storage)), view_(std::move(view)) {}
  // A view into a storage that is not in memory (view.data is nullptr; byte_offset and strides
  // address the streamed bytes). Made by readers only when ReadOptions::stream_deflated_over
  // asks for it; the caller has validated the view against streamed->size().
  Tensor(std::shared_ptr<const StreamedStorage> streamed, TensorView view)
      : streamed_(std::move(streamed)), view_(std::move(view)) {
    view_.data = nullptr;
  }

  // A zero-filled contiguous tensor.
  static Result<Tensor> Zeros(DType dtype, std::vector<int64_t> shape);
  // A contiguous copy of `view` (any strides).
  static Result<Tensor> CopyOf(const TensorView& view);
  // The same copy into `into`, a heap buffer of exactly the view's size in bytes, every byte of
  // which is written (a buffer reused from a pool: capture/copy_buffer_pool.h);
  // kInvalidArgument when its size differs.
  static Result<Tensor> CopyOf(const TensorView& view, std::shared_ptr<Buffer> into);

  const TensorView& view() const { return view_; }
  DType dtype() const { return view_.dtype; }
  const std::vector<int64_t>& shape() const { return view_.shape; }
  int64_t numel() const { return view_.numel(); }
  const std::shared_ptr<const Buffer>& storage() const { return storage_; }
  // Non-null for a tensor whose storage is streamed (then view().data is nullptr).
  const std::shared_ptr<const StreamedStorage>& streamed() const { return streamed_; }
  bool is_streamed() const { return streamed_ != nullptr; }
  // This tensor with its storage in memory: itself when it is not streamed, else the storage
  // loaded whole when it fits in `max_bytes` (kOutOfRange naming it, its size and the limit
  // otherwise). `warning` (may be null) receives the load's warning (a CRC mismatch).
  Result<Tensor> InMemory(uint64_t max_bytes, std::string* warning = nullptr) const;
  // Writable first element of a heap tensor made by Zeros/CopyOf (nullptr for a mapped one).
  std::byte* mutable_data();

 private:
  std::shared_ptr<const Buffer> storage_;
  std::shared_ptr<const StreamedStorage> streamed_;
  TensorView view_;
};

}  // namespace numprobe

#endif  // NUMPROBE_TENSOR_H_
