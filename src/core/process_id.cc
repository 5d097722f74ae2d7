#include "core/process_id.h"

#include <atomic>

#include <pthread.h>
#include <unistd.h>

namespace numprobe::detail {
namespace {

std::atomic<pid_t> cached_pid{0};

void RefreshAfterFork() { cached_pid.store(::getpid(), std::memory_order_relaxed); }

pid_t Initialise() {
  ::pthread_atfork(nullptr, nullptr, &RefreshAfterFork);
  const pid_t pid = ::getpid();
  cached_pid.store(pid, std::memory_order_relaxed);
  return pid;
}

}  // namespace

pid_t CurrentProcessId() {
  static const bool registered = (Initialise(), true);
  (void)registered;
  return cached_pid.load(std::memory_order_relaxed);
}

}  // namespace numprobe::detail
