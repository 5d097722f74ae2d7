// Writing a large ordered output (a table of millions of rows) over the thread pool: chunks of a
// fixed size are formatted in parallel, and each chunk's text is written after the chunk before
// it, so formatting one chunk overlaps writing another, memory stays a few chunks whatever the
// output, and the bytes do not depend on the thread count.
#ifndef NUMPROBE_CORE_ORDERED_CHUNKS_H_
#define NUMPROBE_CORE_ORDERED_CHUNKS_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "numprobe/status.h"
#include "numprobe/thread_pool.h"

namespace numprobe::detail {

// Lets the calls of a ParallelFor pass a point in index order. ParallelFor claims indices in
// increasing order, so the index waited for is always running or done: no deadlock.
class ChunkTurns {
 public:
  void WaitFor(int64_t chunk) {
    std::unique_lock<std::mutex> lock(mu_);
    turn_cv_.wait(lock, [&] { return next_ == chunk; });
  }
  void Pass() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++next_;
    }
    turn_cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable turn_cv_;
  int64_t next_ = 0;
};

// For each chunk in [0, chunks): format(chunk, &text) over `pool` (may be null: in turn on the
// caller), then write(text) in chunk order. Returns the first write error; the chunks after it
// are formatted but not written.
template <typename Text, typename Format, typename Write>
Status WriteChunksInOrder(ThreadPool* pool, int64_t chunks, const Format& format,
                          const Write& write) {
  ChunkTurns turns;
  Status failed;
  auto run = [&](int64_t chunk) {
    Text text{};
    format(chunk, &text);
    turns.WaitFor(chunk);
    if (failed.ok()) failed = write(text);
    turns.Pass();
  };
  if (pool != nullptr) {
    pool->ParallelFor(chunks, run);
  } else {
    for (int64_t chunk = 0; chunk < chunks; ++chunk) run(chunk);
  }
  return failed;
}

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_ORDERED_CHUNKS_H_
