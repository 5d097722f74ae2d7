// A fixed-size thread pool with one primitive, ParallelFor. Work is split into chunks whose size
// never depends on the thread count, and results are combined by chunk index, so every reduction
// built on it gives bit-identical results for 1 or N threads.
#ifndef NUMPROBE_THREAD_POOL_H_
#define NUMPROBE_THREAD_POOL_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace numprobe {

class ThreadPool {
 public:
  // `threads` workers including the caller; 0 = the default (NUMPROBE_THREADS, else the number of
  // hardware threads).
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const;

  // Calls fn(i) for every i in [0, count), spread over the workers; the caller takes part.
  // Returns when all calls have returned. fn must not throw. Nested calls from inside fn run
  // serially on the calling thread.
  void ParallelFor(int64_t count, const std::function<void(int64_t)>& fn);

  // True while the calling thread runs a ParallelFor body (of any pool): work it starts on more
  // threads would compete with the pool's.
  static bool InParallelFor();

  // The process-wide pool, created on first use.
  static ThreadPool& Default();
  // Replaces the default pool's size (e.g. from --threads); call before heavy work starts.
  static void SetDefaultThreads(int threads);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The deterministic reduction built on ParallelFor: [0, count) in chunks of `chunk` elements,
// work(start, length) -> Partial per chunk, merged in chunk order with Partial::Merge, so the
// result does not depend on the thread count. `pool` may be null (run on the caller).
template <typename Partial, typename Work>
Partial ChunkedReduce(ThreadPool* pool, int64_t count, int64_t chunk, const Work& work) {
  const int64_t chunks = (count + chunk - 1) / chunk;
  std::vector<Partial> partials(static_cast<size_t>(chunks));
  auto run = [&](int64_t c) {
    const int64_t start = c * chunk;
    partials[static_cast<size_t>(c)] = work(start, std::min(chunk, count - start));
  };
  if (pool != nullptr && chunks > 1) {
    pool->ParallelFor(chunks, run);
  } else {
    for (int64_t c = 0; c < chunks; ++c) run(c);
  }
  Partial total;
  for (const Partial& part : partials) total.Merge(part);
  return total;
}

}  // namespace numprobe

#endif  // NUMPROBE_THREAD_POOL_H_
