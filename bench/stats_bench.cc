// ComputeStats throughput against memcpy of the same 256 MiB buffer (read + write of the bytes,
// the physical reference), for f32, bf16 and f16 filled with random finite values. The target is
// memcpy_time / stats_time >= 0.5 with the default pool; the 1-thread figure is printed too.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <time.h>

#include "numprobe/float_convert.h"
#include "numprobe/stats.h"
#include "numprobe/tensor.h"
#include "numprobe/thread_pool.h"

#include "bench_util.h"

namespace numprobe::bench {
namespace {

constexpr size_t kBytes = size_t{256} << 20;

// xorshift64*: fast enough to fill 256 MiB quickly; the values only need to look random.
struct Rng {
  uint64_t state = 0x9E3779B97F4A7C15u;
  uint64_t Next() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1Du;
  }
  // Uniform in [-1, 1) times 2^e with e in [-8, 7]: finite in f32, bf16 and f16.
  float Value() {
    const uint64_t r = Next();
    const float unit = static_cast<float>(static_cast<int64_t>(r >> 11) - (int64_t{1} << 52)) *
                       (1.0f / 4503599627370496.0f);
    return std::ldexp(unit, static_cast<int>(r & 15) - 8);
  }
};

// CPU time of the calling thread: unlike wall time, not inflated when other processes share the
// cores, so it shows what the kernel costs on an idle machine.
double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

void Fill(DType dtype, std::vector<std::byte>& buf) {
  Rng rng;
  const size_t n = buf.size() / static_cast<size_t>(ItemSize(dtype));
  for (size_t i = 0; i < n; ++i) {
    const float v = rng.Value();
    if (dtype == DType::kF32) {
      std::memcpy(buf.data() + i * 4, &v, 4);
    } else {
      const uint16_t code = dtype == DType::kF16 ? F32ToF16(v) : F32ToBF16(v);
      std::memcpy(buf.data() + i * 2, &code, 2);
    }
  }
}

void Run() {
  const int reps = Reps(7);
  std::vector<std::byte> src(kBytes);
  std::vector<std::byte> dst(kBytes);
  std::memset(dst.data(), 1, dst.size());  // fault the pages in before timing
  ThreadPool one(1);
  ThreadPool& pool = ThreadPool::Default();
  std::printf("stats kernel %s, default pool %d threads, %d reps, buffers %zu MiB\n",
              StatsKernelName(), pool.threads(), reps, kBytes >> 20);

  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
    Fill(dtype, src);
    const int64_t n = static_cast<int64_t>(kBytes) / ItemSize(dtype);
    const TensorView view = TensorView::Contiguous(src.data(), dtype, {n});
    double sink = 0;
    const double copy_s = MedianSeconds(reps, [&] { std::memcpy(dst.data(), src.data(), kBytes); });
    StatsOptions options;
    options.pool = &pool;
    const double stats_s = MedianSeconds(reps, [&] { sink += ComputeStats(view, options)->mean; });
    options.pool = &one;
    const double stats1_s = MedianSeconds(reps, [&] { sink += ComputeStats(view, options)->mean; });
    const double cpu0 = ThreadCpuSeconds();
    sink += ComputeStats(view, options)->mean;
    const double stats1_cpu_s = ThreadCpuSeconds() - cpu0;
    const double gb = static_cast<double>(kBytes) / 1e9;
    const std::string name = fmt::format("stats {} vs memcpy", Name(dtype));
    Report(
        name, copy_s / stats_s, 0.5, /*higher_is_better=*/true,
        fmt::format("stats {:.1f} ms = {:.2f} GB/s on {} threads; memcpy {:.1f} ms = {:.2f} GB/s",
                    stats_s * 1e3, gb / stats_s, pool.threads(), copy_s * 1e3, gb / copy_s));
    std::printf(
        "  %s 1 thread: %.1f ms = %.2f GB/s (ratio vs memcpy %.3f; its CPU time %.1f ms = %.2f "
        "GB/s); %d threads: %.1f ms = %.2f GB/s; speedup %.2fx\n",
        std::string(Name(dtype)).c_str(), stats1_s * 1e3, gb / stats1_s, copy_s / stats1_s,
        stats1_cpu_s * 1e3, gb / stats1_cpu_s, pool.threads(), stats_s * 1e3, gb / stats_s,
        stats1_s / stats_s);
    if (sink == 12345.0) std::printf("%f\n", sink);  // keep the results alive
  }
}

}  // namespace
}  // namespace numprobe::bench

int main() {
  numprobe::bench::Run();
  return 0;
}
