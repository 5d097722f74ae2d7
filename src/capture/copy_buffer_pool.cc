#include "capture/copy_buffer_pool.h"

#include <map>
#include <mutex>
#include <utility>

namespace numprobe::detail {

struct CopyBufferPool::State {
  explicit State(uint64_t max) : max_idle_bytes(max) {}

  // Keeps `buffer` for a later Take of its size, or lets it go (freed) beyond the bound.
  void GiveBack(std::shared_ptr<Buffer> buffer) {
    std::lock_guard lock(mu);
    const uint64_t size = buffer->size();
    if (idle_bytes + size > max_idle_bytes) return;
    idle_bytes += size;
    idle.emplace(size, std::move(buffer));
  }

  mutable std::mutex mu;
  uint64_t max_idle_bytes;  // 0 once the pool is gone: nothing is kept
  uint64_t idle_bytes = 0;
  uint64_t reused = 0;
  std::multimap<size_t, std::shared_ptr<Buffer>> idle;
};

CopyBufferPool::CopyBufferPool(uint64_t max_idle_bytes)
    : state_(std::make_shared<State>(max_idle_bytes)) {}

CopyBufferPool::~CopyBufferPool() {
  std::multimap<size_t, std::shared_ptr<Buffer>> idle;
  {
    std::lock_guard lock(state_->mu);
    state_->max_idle_bytes = 0;
    state_->idle_bytes = 0;
    idle.swap(state_->idle);
  }
}

Result<std::shared_ptr<Buffer>> CopyBufferPool::Take(size_t size) {
  // Below a page, malloc's own bins reuse memory without faulting it in again.
  constexpr size_t kMinPooled = 4096;
  if (size < kMinPooled) return Buffer::AllocateUninitialized(size);
  std::shared_ptr<Buffer> owned;
  {
    std::lock_guard lock(state_->mu);
    const auto it = state_->idle.find(size);
    if (it != state_->idle.end()) {
      owned = std::move(it->second);
      state_->idle.erase(it);
      state_->idle_bytes -= size;
      ++state_->reused;
    }
  }
  if (owned == nullptr) {
    NUMPROBE_ASSIGN_OR_RETURN(owned, Buffer::AllocateUninitialized(size));
  }
  // The caller's reference: when it (and every copy of it) is released, the buffer goes back to
  // the pool's state instead of being freed.
  Buffer* raw = owned.get();
  return std::shared_ptr<Buffer>(
      raw, [state = state_, owned = std::move(owned)](Buffer*) mutable {
        state->GiveBack(std::move(owned));
      });
}

Result<Tensor> CopyBufferPool::Copy(const TensorView& view) {
  NUMPROBE_ASSIGN_OR_RETURN(const size_t size, ContiguousBytes(view.dtype, view.shape));
  NUMPROBE_ASSIGN_OR_RETURN(auto buffer, Take(size));
  return Tensor::CopyOf(view, std::move(buffer));
}

size_t CopyBufferPool::idle_count() const {
  std::lock_guard lock(state_->mu);
  return state_->idle.size();
}

uint64_t CopyBufferPool::idle_bytes() const {
  std::lock_guard lock(state_->mu);
  return state_->idle_bytes;
}

uint64_t CopyBufferPool::reused() const {
  std::lock_guard lock(state_->mu);
  return state_->reused;
}

}  // namespace numprobe::detail
