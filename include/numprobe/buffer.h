// Buffer: immutable bytes kept alive by shared ownership. Either a read-only memory map of a
// file or a heap allocation (64-byte aligned). Tensors point into Buffers without copying, so a
// Buffer lives as long as any tensor that views it.
#ifndef NUMPROBE_BUFFER_H_
#define NUMPROBE_BUFFER_H_

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>

#include "numprobe/result.h"

namespace numprobe {

class Buffer {
 public:
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // Maps `path` read-only. An empty file gives an empty buffer. kNotFound / kIoError on failure.
  static Result<std::shared_ptr<const Buffer>> MapFile(const std::filesystem::path& path);
  // A zero-filled, 64-byte aligned heap buffer of `size` bytes; kOutOfRange if it cannot be had.
  static Result<std::shared_ptr<Buffer>> Allocate(size_t size);
  // As Allocate, but the `size` bytes are left uninitialized (the alignment padding after them is
  // still zeroed): for readers that overwrite every byte right away, saving a pass over memory.
  // The caller must write every byte before the buffer is read or shared; where a partial write
  // is possible (an error half-way that still exposes the buffer), use Allocate.
  static Result<std::shared_ptr<Buffer>> AllocateUninitialized(size_t size);
  // A heap copy of `bytes`.
  static Result<std::shared_ptr<Buffer>> CopyOf(std::span<const std::byte> bytes);

  const std::byte* data() const { return data_; }
  std::byte* mutable_data() { return data_; }  // heap buffers only; a map is read-only
  size_t size() const { return size_; }
  std::span<const std::byte> bytes() const { return {data_, size_}; }
  bool is_mapped() const { return mapped_; }

 private:
  Buffer(std::byte* data, size_t size, bool mapped) : data_(data), size_(size), mapped_(mapped) {}

  std::byte* data_;
  size_t size_;
  bool mapped_;
};

}  // namespace numprobe

#endif  // NUMPROBE_BUFFER_H_
