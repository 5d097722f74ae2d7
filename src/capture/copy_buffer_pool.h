// CopyBufferPool: the heap buffers of the capture's tensor copies, reused from step to step.
//
// A tensor dump copies each tensor it writes (the training thread goes on and may change it in
// place) and the background writer frees the copy once its file is written. A step's copies are
// megabytes to gigabytes, above glibc's mmap threshold or at the top of its heap, so freeing
// them gave some of their pages back to the kernel and the next step's copies faulted them in
// again (about 1.4 us a page on this project's VM; the bench's tensor dumps took 2-5 thousand
// faults fewer a run of 8 steps with this pool). A training step records the same shapes every
// step, so a buffer freed by the writer is kept here, under its exact size, for the next copy of
// that size.
//
// The idle buffers are bounded (max_idle_bytes): a buffer given back beyond the bound is freed.
// Buffers handed out keep the pool's state alive, so they may outlive the pool; once the pool is
// gone they are freed as any buffer. Thread-safe: the training thread takes, the writer's thread
// gives back (by releasing the last reference).
#ifndef NUMPROBE_CAPTURE_COPY_BUFFER_POOL_H_
#define NUMPROBE_CAPTURE_COPY_BUFFER_POOL_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "numprobe/buffer.h"
#include "numprobe/result.h"
#include "numprobe/tensor.h"

namespace numprobe::detail {

class CopyBufferPool {
 public:
  explicit CopyBufferPool(uint64_t max_idle_bytes);
  ~CopyBufferPool();  // frees the idle buffers; those handed out are freed when released
  CopyBufferPool(const CopyBufferPool&) = delete;
  CopyBufferPool& operator=(const CopyBufferPool&) = delete;

  // A buffer of exactly `size` bytes: an idle one of that size, or a new one (uninitialized: the
  // caller writes every byte). It returns to the pool when its last reference is released;
  // buffers under a page are plain ones (malloc reuses those without faults).
  Result<std::shared_ptr<Buffer>> Take(size_t size);
  // A contiguous copy of `view` in a buffer from Take (Tensor::CopyOf).
  Result<Tensor> Copy(const TensorView& view);

  // What the pool holds now (tests): idle buffers and their bytes, and how many Take calls
  // reused one.
  size_t idle_count() const;
  uint64_t idle_bytes() const;
  uint64_t reused() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace numprobe::detail

#endif  // NUMPROBE_CAPTURE_COPY_BUFFER_POOL_H_
