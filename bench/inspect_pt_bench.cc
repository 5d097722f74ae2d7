// What `numprobe inspect` does to a 1 GiB .pt state_dict (ReadTensorFile, then ComputeStats of
// every tensor) against reading the same file's bytes once with read(2), warm cache. Target:
// inspect_time / read_time <= 1.5. The file (48 f32 and 32 bf16 tensors of 4 Mi elements,
// random finite values) is written once by numprobe's WriteTorch under $NUMPROBE_BENCH_DIR and
// reused by later runs.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "numprobe/float_convert.h"
#include "numprobe/stats.h"
#include "numprobe/tensor_file.h"
#include "numprobe/thread_pool.h"
#include "numprobe/torch_pt.h"

#include "bench_util.h"

namespace numprobe::bench {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kRows = 4096;
constexpr int64_t kCols = 1024;
constexpr int kF32Tensors = 48;   // 48 x 16 MiB = 768 MiB
constexpr int kBF16Tensors = 32;  // 32 x 8 MiB = 256 MiB

fs::path BenchDir() {
  const char* env = std::getenv("NUMPROBE_BENCH_DIR");
  return env != nullptr ? fs::path(env) : fs::temp_directory_path() / "numprobe-bench";
}

// The state_dict, written unless a previous run left it. Returns false on failure.
bool MakeFile(const fs::path& path) {
  std::error_code ec;
  if (fs::exists(path, ec)) {
    auto file = ReadTensorFile(path);
    if (file && file->tensors.size() == kF32Tensors + kBF16Tensors) return true;
  }
  fs::create_directories(path.parent_path(), ec);
  uint64_t state = 0x9E3779B97F4A7C15u;
  auto next = [&] {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1Du;
  };
  std::vector<Tensor> tensors;
  std::vector<NamedView> views;
  for (int i = 0; i < kF32Tensors + kBF16Tensors; ++i) {
    const DType dtype = i < kF32Tensors ? DType::kF32 : DType::kBF16;
    auto t = Tensor::Zeros(dtype, {kRows, kCols});
    if (!t) return false;
    std::byte* d = t->mutable_data();
    for (int64_t k = 0; k < kRows * kCols; ++k) {
      const float v = static_cast<float>(static_cast<int64_t>(next() >> 40) - (int64_t{1} << 23)) *
                      (1.0f / 8388608.0f);
      if (dtype == DType::kF32) {
        std::memcpy(d + k * 4, &v, 4);
      } else {
        const uint16_t b = F32ToBF16(v);
        std::memcpy(d + k * 2, &b, 2);
      }
    }
    views.push_back(
        {fmt::format("layers.{}.{}", i / 2, i % 2 == 0 ? "weight" : "bias"), t->view()});
    tensors.push_back(std::move(*t));
  }
  const Status s = WriteTorch(path, views);
  if (!s.ok()) std::fprintf(stderr, "cannot write %s: %s\n", path.c_str(), s.ToString().c_str());
  return s.ok();
}

void Run() {
  const fs::path path = BenchDir() / "inspect_pt_1g.pt";
  if (!MakeFile(path)) {
    std::fprintf(stderr, "inspect_pt_bench: could not prepare %s\n", path.c_str());
    std::exit(1);
  }
  const int reps = Reps(5);
  const size_t bytes = ReadAllBytes(path);  // warms the page cache
  const double read_s = MedianSeconds(reps, [&] { ReadAllBytes(path); });
  double sink = 0;
  size_t tensors = 0;
  bool failed = false;
  const double inspect_s = MedianSeconds(reps, [&] {
    auto file = ReadTensorFile(path);
    if (!file) {
      failed = true;
      return;
    }
    tensors = file->tensors.size();
    for (const NamedTensor& t : file->tensors) {
      auto stats = ComputeStats(t.tensor.view());
      if (stats) sink += stats->mean;
    }
  });
  if (failed) {
    std::fprintf(stderr, "inspect_pt_bench: ReadTensorFile failed\n");
    std::exit(1);
  }
  const double gib = static_cast<double>(bytes) / (1 << 30);
  Report("inspect 1 GiB .pt vs read", inspect_s / read_s, 1.5, /*higher_is_better=*/false,
         fmt::format("inspect {:.1f} ms ({} tensors, stats kernel {}, {} threads); read {:.1f} ms "
                     "= {:.2f} GiB/s; file {:.2f} GiB; {} reps",
                     inspect_s * 1e3, tensors, StatsKernelName(), ThreadPool::Default().threads(),
                     read_s * 1e3, gib / read_s, gib, reps));
  if (sink == 12345.0) std::printf("%f\n", sink);  // keep the results alive
}

}  // namespace
}  // namespace numprobe::bench

int main() {
  numprobe::bench::Run();
  return 0;
}
