// Benchmark of `numprobe inspect`: reading a tensor file (ReadTensorFile) plus ComputeStats of
// every tensor, against reading the same file's bytes once with read(2) (ReadAllBytes), both with
// the file in the page cache. The ratio is what inspect costs over the bare I/O.
//
// Each format has a function that writes its ~1 GiB test file under NUMPROBE_BENCH_DIR (default
// /tmp) and returns it; BenchInspect() measures any such file. The .pt benchmark lives in its own
// file and reuses the same pattern.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "numprobe/safetensors.h"
#include "numprobe/stats.h"
#include "numprobe/tensor_file.h"

#include "bench_util.h"

namespace numprobe::bench {
namespace {

namespace fs = std::filesystem;

// A benchmark file that deletes itself.
class BenchFile {
 public:
  explicit BenchFile(fs::path path) : path_(std::move(path)) {}
  BenchFile(const BenchFile&) = delete;
  BenchFile& operator=(const BenchFile&) = delete;
  ~BenchFile() {
    std::error_code ec;
    fs::remove(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

fs::path BenchDir() {
  const char* env = std::getenv("NUMPROBE_BENCH_DIR");
  return env != nullptr && *env != '\0' ? fs::path(env) : fs::path("/tmp");
}

// splitmix64: fast deterministic random bits (generating 1 GiB with <random> takes longer than
// the benchmark itself).
class Bits {
 public:
  explicit Bits(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [-4, 4).
  float NextFloat() { return static_cast<float>(Next() >> 40) * (8.0f / 16777216.0f) - 4.0f; }

 private:
  uint64_t state_;
};

struct OwnedTensor {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<std::byte> bytes;
};

OwnedTensor RandomTensor(std::string name, DType dtype, std::vector<int64_t> shape, Bits& bits) {
  int64_t numel = 1;
  for (const int64_t d : shape) numel *= d;
  OwnedTensor t{std::move(name), dtype, std::move(shape), {}};
  t.bytes.resize(static_cast<size_t>(numel * ItemSize(dtype)));
  for (int64_t i = 0; i < numel; ++i) {
    const float v = bits.NextFloat();
    if (dtype == DType::kF32) {
      std::memcpy(t.bytes.data() + i * 4, &v, 4);
    } else {  // kBF16: the high half of the float (truncation is fine for random data)
      uint32_t u = 0;
      std::memcpy(&u, &v, 4);
      const auto h = static_cast<uint16_t>(u >> 16);
      std::memcpy(t.bytes.data() + i * 2, &h, 2);
    }
  }
  return t;
}

// About 1 GiB: three 256 MiB f32 and two 128 MiB bf16 tensors (what dominates a checkpoint),
// plus 400 small ones (biases, norms) that exercise the per-tensor overhead.
std::unique_ptr<BenchFile> WriteSafetensorsFile() {
  auto file = std::make_unique<BenchFile>(
      BenchDir() / fmt::format("numprobe_inspect_bench_{}.safetensors", ::getpid()));
  Bits bits(42);
  std::vector<OwnedTensor> tensors;
  for (int i = 0; i < 3; ++i) {
    tensors.push_back(
        RandomTensor(fmt::format("layers.{}.mlp.weight", i), DType::kF32, {8192, 8192}, bits));
  }
  for (int i = 0; i < 2; ++i) {
    tensors.push_back(
        RandomTensor(fmt::format("layers.{}.attn.weight", i), DType::kBF16, {8192, 8192}, bits));
  }
  for (int i = 0; i < 400; ++i) {
    const bool f32 = i % 2 == 0;
    tensors.push_back(RandomTensor(fmt::format("layers.{}.norm.{}", i / 4, i % 4),
                                   f32 ? DType::kF32 : DType::kBF16, {1024 + i}, bits));
  }
  std::vector<NamedView> views;
  for (const OwnedTensor& t : tensors) {
    views.push_back({t.name, TensorView::Contiguous(t.bytes.data(), t.dtype, t.shape)});
  }
  const Status status = WriteSafetensors(file->path(), views, {{"format", "pt"}});
  if (!status.ok()) {
    std::fprintf(stderr, "cannot write %s: %s\n", file->path().c_str(), status.ToString().c_str());
    return nullptr;
  }
  return file;
}

// Measures inspect (ReadTensorFile + ComputeStats of every tensor) against ReadAllBytes on `file`
// and reports the ratio. Returns false if the file cannot be inspected.
bool BenchInspect(const std::string& label, const fs::path& file) {
  const size_t file_bytes = ReadAllBytes(file);  // also warms the page cache
  ReadAllBytes(file);
  size_t tensors = 0;
  int64_t elements = 0;
  bool ok = true;
  const auto inspect = [&] {
    auto read = ReadTensorFile(file);
    if (!read) {
      std::fprintf(stderr, "%s\n", read.error().ToString().c_str());
      ok = false;
      return;
    }
    tensors = read->tensors.size();
    elements = 0;
    for (const NamedTensor& t : read->tensors) {
      auto stats = ComputeStats(t.tensor.view());
      if (!stats) {
        std::fprintf(stderr, "%s: %s\n", t.name.c_str(), stats.error().ToString().c_str());
        ok = false;
        return;
      }
      elements += stats->count;
    }
  };
  const int reps = Reps(5);
  const double inspect_s = MedianSeconds(reps, inspect);
  if (!ok) return false;
  const double read_s = MedianSeconds(reps, [&] { ReadAllBytes(file); });
  const double gib = static_cast<double>(file_bytes) / (1u << 30);
  Report(label, inspect_s / read_s, 1.5, false,
         fmt::format("inspect {:.3f} s ({:.2f} GiB/s), read {:.3f} s ({:.2f} GiB/s), {:.2f} GiB, "
                     "{} tensors, {} elements, stats kernel {}, {} reps, peak RSS {:.0f} MiB",
                     inspect_s, gib / inspect_s, read_s, gib / read_s, gib, tensors, elements,
                     StatsKernelName(), reps, PeakRssMiB()));
  return true;
}

}  // namespace
}  // namespace numprobe::bench

int main() {
  using numprobe::bench::BenchInspect;
  int status = 0;
  {
    auto file = numprobe::bench::WriteSafetensorsFile();
    if (file == nullptr || !BenchInspect("inspect 1 GiB safetensors vs read", file->path())) {
      status = 1;
    }
  }  // the file is deleted here
  return status;
}
