#include "numprobe/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
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

// One ParallelFor call. Workers hold it by shared_ptr: one that wakes after the call has returned
// (its indices all taken and done) claims an index past `count` and never calls `fn`, so the
// caller waits for the calls to return, not for every worker to wake and leave. A worker woken
// for a two-chunk job would otherwise cost the caller a wake-up latency on every such job.
struct Job {
  const std::function<void(int64_t)>* fn = nullptr;
  int64_t count = 0;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};  // calls of fn that have returned
};

// Claims indices of `job` until none are left; true when this thread finished its last call.
bool RunIndices(Job& job) {
  const bool was_inside = tls_in_parallel_for;
  tls_in_parallel_for = true;
  bool finished_last = false;
  for (int64_t i = job.next.fetch_add(1, std::memory_order_relaxed); i < job.count;
       i = job.next.fetch_add(1, std::memory_order_relaxed)) {
    (*job.fn)(i);
    finished_last = job.done.fetch_add(1, std::memory_order_acq_rel) + 1 == job.count;
  }
  tls_in_parallel_for = was_inside;
  return finished_last;
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
  std::condition_variable done_cv;  // the caller waits for its job's calls to return
  uint64_t generation = 0;
  bool stop = false;
  std::shared_ptr<Job> job;  // the latest job (its calls may all be done)

  void WorkerLoop() {
    uint64_t seen = 0;
    for (;;) {
      std::shared_ptr<Job> current;
      {
        std::unique_lock<std::mutex> lock(mu);
        work_cv.wait(lock, [&] { return stop || generation != seen; });
        if (stop) return;
        seen = generation;
        current = job;
      }
      if (RunIndices(*current)) {
        std::lock_guard<std::mutex> lock(mu);  // the caller waits on done_cv under mu
        done_cv.notify_all();
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
  auto job = std::make_shared<Job>();
  job->fn = &fn;
  job->count = count;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->job = job;
    ++impl_->generation;
  }
  impl_->work_cv.notify_all();
  if (RunIndices(*job)) return;
  // fn is the caller's: every call of it must have returned before this does.
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->done_cv.wait(lock, [&] { return job->done.load(std::memory_order_acquire) == count; });
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
