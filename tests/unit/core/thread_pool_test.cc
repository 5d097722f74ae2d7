#include "numprobe/thread_pool.h"

#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace numprobe {
namespace {

TEST(ThreadPoolTest, ReportsItsSize) {
  EXPECT_EQ(ThreadPool(1).threads(), 1);
  EXPECT_EQ(ThreadPool(3).threads(), 3);
  EXPECT_GE(ThreadPool(0).threads(), 1);
}

TEST(ThreadPoolTest, CallsEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3, 7}) {
    ThreadPool pool(threads);
    for (int64_t count : {0, 1, 2, 5, 64, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
      pool.ParallelFor(count, [&](int64_t i) { hits[static_cast<size_t>(i)].fetch_add(1); });
      for (int64_t i = 0; i < count; ++i) {
        EXPECT_EQ(hits[static_cast<size_t>(i)].load(), 1)
            << "threads " << threads << " count " << count << " index " << i;
      }
    }
  }
}

TEST(ThreadPoolTest, NegativeCountDoesNothing) {
  ThreadPool pool(2);
  int calls = 0;
  pool.ParallelFor(-5, [&](int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ThreadPoolTest, UsesSeveralThreadsAndTheCaller) {
  ThreadPool pool(4);
  std::mutex mu;
  std::set<std::thread::id> ids;
  std::atomic<int> arrived{0};
  // Each of the first 4 indices waits until 4 calls are in flight at once, which only happens
  // if 4 distinct threads (the caller and 3 workers) run them concurrently.
  pool.ParallelFor(4, [&](int64_t) {
    {
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
    }
    arrived.fetch_add(1);
    while (arrived.load() < 4) std::this_thread::yield();
  });
  EXPECT_EQ(ids.size(), 4u);
  EXPECT_EQ(ids.count(std::this_thread::get_id()), 1u);
}

TEST(ThreadPoolTest, NestedCallsRunSeriallyOnTheCallingThread) {
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  std::atomic<int> wrong_thread{0};
  pool.ParallelFor(6, [&](int64_t i) {
    const std::thread::id outer = std::this_thread::get_id();
    pool.ParallelFor(10, [&](int64_t j) {
      if (std::this_thread::get_id() != outer) wrong_thread.fetch_add(1);
      total.fetch_add(i * 10 + j);
    });
  });
  EXPECT_EQ(wrong_thread.load(), 0);
  int64_t expected = 0;
  for (int64_t i = 0; i < 6; ++i) {
    for (int64_t j = 0; j < 10; ++j) expected += i * 10 + j;
  }
  EXPECT_EQ(total.load(), expected);
}

TEST(ThreadPoolTest, ConcurrentCallersFromOutsideAreSerializedSafely) {
  ThreadPool pool(3);
  std::atomic<int64_t> sum{0};
  std::vector<std::thread> callers;
  callers.reserve(4);
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int rep = 0; rep < 50; ++rep) {
        pool.ParallelFor(100, [&](int64_t i) { sum.fetch_add(i); });
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(sum.load(), 4 * 50 * (99 * 100 / 2));
}

TEST(ThreadPoolTest, ManyShortJobsReuseTheWorkers) {
  ThreadPool pool(2);
  int64_t total = 0;
  std::mutex mu;
  for (int rep = 0; rep < 2000; ++rep) {
    pool.ParallelFor(3, [&](int64_t i) {
      std::lock_guard<std::mutex> lock(mu);
      total += i + 1;
    });
  }
  EXPECT_EQ(total, 2000 * 6);
}

// A call returns once its own calls have returned, without waiting for a worker that wakes late;
// such a worker finds no index left and must not call the (by then destroyed) function. Counted
// once every worker has been joined, so a late worker's call would show (and ASan would see it
// touch a dead frame).
TEST(ThreadPoolTest, LateWorkersCallNothingOfAReturnedJob) {
  std::atomic<int64_t> calls{0};
  constexpr int kReps = 5000;
  {
    ThreadPool pool(3);
    for (int rep = 0; rep < kReps; ++rep) {
      std::vector<int> hits(2, 0);
      pool.ParallelFor(2, [&hits, &calls](int64_t i) {
        ++hits[static_cast<size_t>(i)];
        calls.fetch_add(1);
      });
      ASSERT_EQ(hits, std::vector<int>({1, 1})) << "rep " << rep;
    }
  }
  EXPECT_EQ(calls.load(), 2 * kReps);
}

TEST(ThreadPoolTest, DefaultFollowsEnvironmentAndSetDefaultThreads) {
  // The default pool is created on first use from NUMPROBE_THREADS.
  ::setenv("NUMPROBE_THREADS", "3", 1);
  ThreadPool::SetDefaultThreads(0);
  EXPECT_EQ(ThreadPool::Default().threads(), 3);
  ::unsetenv("NUMPROBE_THREADS");

  ThreadPool::SetDefaultThreads(5);
  EXPECT_EQ(ThreadPool::Default().threads(), 5);
  ThreadPool::SetDefaultThreads(1);
  EXPECT_EQ(ThreadPool::Default().threads(), 1);
  std::atomic<int> calls{0};
  ThreadPool::Default().ParallelFor(10, [&](int64_t) { calls.fetch_add(1); });
  EXPECT_EQ(calls.load(), 10);
}

TEST(ThreadPoolTest, InvalidEnvironmentFallsBackToHardware) {
  const unsigned hw = std::thread::hardware_concurrency();
  const int expected = hw == 0 ? 1 : static_cast<int>(hw);
  for (const char* bad : {"0", "-2", "abc", "4x", ""}) {
    ::setenv("NUMPROBE_THREADS", bad, 1);
    EXPECT_EQ(ThreadPool(0).threads(), expected) << "NUMPROBE_THREADS='" << bad << "'";
  }
  ::setenv("NUMPROBE_THREADS", "2", 1);
  EXPECT_EQ(ThreadPool(0).threads(), 2);
  ::unsetenv("NUMPROBE_THREADS");
}

// fork() copies only the calling thread: a child's pool has no workers, so it runs the job on the
// caller (before, it waited forever for workers that do not exist), and exits without joining.
TEST(ThreadPoolTest, AForkedChildRunsJobsOnItsOwnThread) {
  ThreadPool pool(4);
  auto destroyed_in_child = std::make_unique<ThreadPool>(3);
  std::atomic<int64_t> sum{0};
  pool.ParallelFor(64, [&](int64_t i) { sum += i; });
  destroyed_in_child->ParallelFor(64, [&](int64_t i) { sum += i; });
  ASSERT_EQ(sum.load(), 64 * 63);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::alarm(20);  // a hang fails the test (SIGALRM) instead of stalling the suite
    std::atomic<int64_t> child_sum{0};
    pool.ParallelFor(64, [&](int64_t i) { child_sum += i; });
    ThreadPool::Default().ParallelFor(8, [&](int64_t i) { child_sum += i; });
    destroyed_in_child.reset();  // no join of the parent's threads
    ::_exit(child_sum.load() == 64 * 63 / 2 + 28 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child was killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace numprobe
