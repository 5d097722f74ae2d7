// A fixed-size thread pool with one primitive, ParallelFor. Work is split into chunks whose size
// never depends on the thread count, and results are combined by chunk index, so every reduction
// built on it gives bit-identical results for 1 or N threads.
#ifndef NUMPROBE_THREAD_POOL_H_
#define NUMPROBE_THREAD_POOL_H_

#include <cstdint>
#include <functional>
#include <memory>

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

  // The process-wide pool, created on first use.
  static ThreadPool& Default();
  // Replaces the default pool's size (e.g. from --threads); call before heavy work starts.
  static void SetDefaultThreads(int threads);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace numprobe

#endif  // NUMPROBE_THREAD_POOL_H_
