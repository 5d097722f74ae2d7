// Helpers for numprobe's benchmarks. Every figure is reported as a ratio against a physical
// reference (memcpy of the same buffer, reading the same bytes) measured in the same run, as the
// median of several repetitions, because these machines are shared and noisy.
#ifndef NUMPROBE_BENCH_BENCH_UTIL_H_
#define NUMPROBE_BENCH_BENCH_UTIL_H_

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace numprobe::bench {

// Median wall time in seconds of `reps` calls of fn (after one warm-up call).
inline double MedianSeconds(int reps, const std::function<void()>& fn) {
  fn();
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Reads every byte of `path` once with read(2) into a reused 4 MiB buffer (the reference for
// "time to read the bytes"); returns the bytes read.
inline size_t ReadAllBytes(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return 0;
  static std::vector<char> buf(4 << 20);
  size_t total = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n <= 0) break;
    total += static_cast<size_t>(n);
  }
  ::close(fd);
  return total;
}

// Peak resident set size of this process in MiB.
inline double PeakRssMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

// One result line: "BENCH name: ratio R (target <= T) | details". `higher_is_better` flips the
// target's comparison.
inline void Report(const std::string& name, double ratio, double target, bool higher_is_better,
                   const std::string& details) {
  const bool met = higher_is_better ? ratio >= target : ratio <= target;
  std::printf("BENCH %-44s ratio %7.3f (target %s %.2f: %s) | %s\n", name.c_str(), ratio,
              higher_is_better ? ">=" : "<=", target, met ? "met" : "MISSED", details.c_str());
  std::fflush(stdout);
}

// Repetitions: NUMPROBE_BENCH_REPS or `fallback`.
inline int Reps(int fallback) {
  const char* env = std::getenv("NUMPROBE_BENCH_REPS");
  return env != nullptr ? std::max(1, std::atoi(env)) : fallback;
}

}  // namespace numprobe::bench

#endif  // NUMPROBE_BENCH_BENCH_UTIL_H_
