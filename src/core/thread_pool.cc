#include "numprobe/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include <sys/types.h>

#include "core/process_id.h"

namespace numprobe {
namespace {

// Upper bound on the pool size, whatever NUMPROBE_THREADS or --threads say.
constexpr int kMaxThreads = 1024;

// True while this thread runs a ParallelFor body (of any pool): nested calls run serially, which
// cannot deadlock and keeps the work of the outer call spread over the workers.
thread_local bool tls_in_parallel_for = false;

int DefaultThreadCount() {
  if (const char* env = std::getenv("NUMPROBE_THREADS"); env != nullptr) {
    int value = 0;
    const char* end = env + std::strlen(env);
    const auto [ptr, ec] = std::from_chars(env, end, value);
    if (ec == std::errc() && ptr == end && value > 0) return std::min(value, kMaxThreads);
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(std::min<unsigned>(hw, kMaxThreads));
}

// Claims indices of one job until none are left.
void RunIndices(std::atomic<int64_t>& next, int64_t count, const std::function<void(int64_t)>& fn) {
  const bool was_inside = tls_in_parallel_for;
  tls_in_parallel_for = true;
  for (int64_t i = next.fetch_add(1, std::memory_order_relaxed); i < count;
       i = next.fetch_add(1, std::memory_order_relaxed)) {
    fn(i);
  }
  tls_in_parallel_for = was_inside;
}

}  // namespace

struct ThreadPool::Impl {
  int threads = 1;
  std::vector<std::thread> workers;
  // A forked child has none of the workers (fork copies the calling thread only): there the pool
  // runs every job on the caller, without touching locks a worker may have held at the fork.
  const pid_t owner_pid = detail::CurrentProcessId();

  // One job at a time; callers from different threads queue on submit_mu.
  std::mutex submit_mu;

  std::mutex mu;
  std::condition_variable work_cv;  // workers wait for a new generation
  std::condition_variable done_cv;  // the caller waits for busy_workers == 0
  uint64_t generation = 0;
  bool stop = false;
  int busy_workers = 0;
  const std::function<void(int64_t)>* fn = nullptr;
  int64_t count = 0;
  std::atomic<int64_t> next{0};

  void WorkerLoop() {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(int64_t)>* job = nullptr;
      int64_t job_count = 0;
      {
        std::unique_lock<std::mutex> lock(mu);
        work_cv.wait(lock, [&] { return stop || generation != seen; });
        if (stop) return;
        seen = generation;
        job = fn;
        job_count = count;
      }
      RunIndices(next, job_count, *job);
      {
        std::lock_guard<std::mutex> lock(mu);
        if (--busy_workers == 0) done_cv.notify_one();
      }
    }
  }
};

ThreadPool::ThreadPool(int threads) : impl_(std::make_unique<Impl>()) {
  impl_->threads = threads > 0 ? std::min(threads, kMaxThreads) : DefaultThreadCount();
  impl_->workers.reserve(static_cast<size_t>(impl_->threads - 1));
  for (int i = 1; i < impl_->threads; ++i) {
    impl_->workers.emplace_back([impl = impl_.get()] { impl->WorkerLoop(); });
  }
}

ThreadPool::~ThreadPool() {
  if (detail::CurrentProcessId() != impl_->owner_pid) {
    // A forked child (a static pool at its exit): the workers are the parent's threads, not its
    // own, so there is nothing to join, and the condition variables they wait on in the parent
    // cannot be destroyed here (that waits for the waiters): the pool is forgotten whole.
    (void)impl_.release();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->work_cv.notify_all();
  for (std::thread& t : impl_->workers) t.join();
}

int ThreadPool::threads() const { return impl_->threads; }

bool ThreadPool::InParallelFor() { return tls_in_parallel_for; }

void ThreadPool::ParallelFor(int64_t count, const std::function<void(int64_t)>& fn) {
  if (count <= 0) return;
  if (count == 1 || impl_->workers.empty() || tls_in_parallel_for ||
      detail::CurrentProcessId() != impl_->owner_pid) {
    const bool was_inside = tls_in_parallel_for;
    tls_in_parallel_for = true;
    for (int64_t i = 0; i < count; ++i) fn(i);
    tls_in_parallel_for = was_inside;
    return;
  }
  std::lock_guard<std::mutex> submit(impl_->submit_mu);
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->fn = &fn;
    impl_->count = count;
    impl_->next.store(0, std::memory_order_relaxed);
    impl_->busy_workers = static_cast<int>(impl_->workers.size());
    ++impl_->generation;
  }
  impl_->work_cv.notify_all();
  RunIndices(impl_->next, count, fn);
  // Every worker must have left this job before fn (owned by the caller) goes out of scope.
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->done_cv.wait(lock, [&] { return impl_->busy_workers == 0; });
  impl_->fn = nullptr;
}

namespace {

std::mutex default_pool_mu;
std::unique_ptr<ThreadPool>& DefaultPoolSlot() {
  static std::unique_ptr<ThreadPool> pool;
  return pool;
}

}  // namespace

ThreadPool& ThreadPool::Default() {
  std::lock_guard<std::mutex> lock(default_pool_mu);
  std::unique_ptr<ThreadPool>& pool = DefaultPoolSlot();
  if (!pool) pool = std::make_unique<ThreadPool>(0);
  return *pool;
}

void ThreadPool::SetDefaultThreads(int threads) {
  std::lock_guard<std::mutex> lock(default_pool_mu);
  std::unique_ptr<ThreadPool>& pool = DefaultPoolSlot();
  const int wanted = threads > 0 ? std::min(threads, kMaxThreads) : DefaultThreadCount();
  if (pool && pool->threads() == wanted) return;
  pool = std::make_unique<ThreadPool>(wanted);
}

}  // namespace numprobe
