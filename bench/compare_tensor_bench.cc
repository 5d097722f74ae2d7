// Benchmark of tensor-mode `numprobe compare`: a generated pair of msprobe tensor dumps (about
// 2 GiB together: thousands of small tensors and a few large ones, half of the target's small
// tensors in bf16 as an autocast run would have them) compared with CompareDumps, against reading
// both dumps' bytes once with read(2), with everything in the page cache. Target: <= 2.0.
// NUMPROBE_BENCH_COMPARE_MIB scales the pair (default 2048), NUMPROBE_BENCH_DIR says where.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "numprobe/compare.h"
#include "numprobe/dump_layout.h"
#include "numprobe/float_convert.h"
#include "numprobe/thread_pool.h"
#include "numprobe/torch_pt.h"

#include "bench_util.h"

namespace numprobe::bench {
namespace {

namespace fs = std::filesystem;

fs::path BenchDir() {
  const char* env = std::getenv("NUMPROBE_BENCH_DIR");
  return env != nullptr && *env != '\0' ? fs::path(env) : fs::path("/tmp");
}

// splitmix64 mapped to roughly normal floats (sum of uniforms): fast and deterministic.
class Noise {
 public:
  explicit Noise(uint64_t seed) : state_(seed) {}
  float Next() {
    float s = 0;
    for (int k = 0; k < 4; ++k) s += static_cast<float>(Bits() >> 40) * 0x1.0p-24f;
    return s - 2.0f;
  }

 private:
  uint64_t Bits() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

struct Spec {
  std::string entry;
  int64_t numel;
  bool target_bf16;
};

// Writes target/ and golden/ rank folders: dump.json plus dump_tensor_data/*.pt.
bool WritePair(const fs::path& root, const std::vector<Spec>& specs) {
  for (const char* side : {"target", "golden"}) {
    const fs::path dir = root / side / "rank0";
    fs::create_directories(dir / "dump_tensor_data");
    std::string json = R"({"task": "tensor", "level": "L1", "framework": "pytorch", "data": {)";
    Noise noise(7);
    Noise perturb(11);
    const bool target = std::string(side) == "target";
    for (size_t i = 0; i < specs.size(); ++i) {
      const Spec& s = specs[i];
      std::vector<float> values(static_cast<size_t>(s.numel));
      for (float& v : values) v = noise.Next();
      if (target) {
        for (float& v : values) v *= 1.0f + 1e-3f * perturb.Next();
      }
      const std::string name = s.entry + ".output.0.pt";
      Status st;
      std::string dtype = "torch.float32";
      if (target && s.target_bf16) {
        std::vector<uint16_t> half(values.size());
        for (size_t k = 0; k < values.size(); ++k) half[k] = F32ToBF16(values[k]);
        const NamedView view{"", TensorView::Contiguous(half.data(), DType::kBF16, {s.numel})};
        st = WriteTorch(dir / "dump_tensor_data" / name, std::span<const NamedView>(&view, 1));
        dtype = "torch.bfloat16";
      } else {
        const NamedView view{"", TensorView::Contiguous(values.data(), DType::kF32, {s.numel})};
        st = WriteTorch(dir / "dump_tensor_data" / name, std::span<const NamedView>(&view, 1));
      }
      if (!st.ok()) {
        std::fprintf(stderr, "writing %s: %s\n", name.c_str(), st.ToString().c_str());
        return false;
      }
      json += fmt::format(
          R"({}"{}": {{"input_args": [], "input_kwargs": {{}}, "output": [{{"type": "torch.Tensor", )"
          R"("dtype": "{}", "shape": [{}], "Max": 1.0, "Min": -1.0, "Mean": 0.0, "Norm": 1.0, )"
          R"("requires_grad": false, "data_name": "{}"}}]}})",
          i == 0 ? "" : ", ", s.entry, dtype, s.numel, name);
    }
    json += "}}";
    std::ofstream(dir / "dump.json") << json;
  }
  return true;
}

int Run() {
  const char* env = std::getenv("NUMPROBE_BENCH_COMPARE_MIB");
  const int64_t total_mib = env != nullptr ? std::max<int64_t>(16, std::atoll(env)) : 2048;
  // Per side: half the bytes in 4 large tensors, half in small 256 KiB tensors.
  const int64_t side_bytes = total_mib / 2 * (int64_t{1} << 20);
  const int64_t large = side_bytes / 2 / 4 / 4;  // elements of each large f32 tensor
  const int64_t small = (int64_t{256} << 10) / 4;
  const int64_t small_count = side_bytes / 2 / (small * 4);
  std::vector<Spec> specs;
  for (int64_t i = 0; i < small_count; ++i) {
    specs.push_back({fmt::format("Functional.op{}.{}.forward", i % 97, i / 97), small, i % 2 == 0});
  }
  for (int i = 0; i < 4; ++i)
    specs.push_back({fmt::format("Functional.big.{}.forward", i), large, false});

  const fs::path root = BenchDir() / fmt::format("numprobe_compare_bench_{}", ::getpid());
  fs::remove_all(root);
  if (!WritePair(root, specs)) return 1;
  std::vector<fs::path> files;
  uint64_t bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) {
      files.push_back(e.path());
      bytes += e.file_size();
    }
  }
  const int reps = Reps(3);
  const double read_s = MedianSeconds(reps, [&] {
    for (const fs::path& f : files) ReadAllBytes(f);
  });
  auto pairs = DiscoverDumpPairs(root / "target", root / "golden");
  if (!pairs) {
    std::fprintf(stderr, "%s\n", pairs.error().ToString().c_str());
    return 1;
  }
  size_t rows = 0;
  const double compare_s = MedianSeconds(reps, [&] {
    auto table = CompareDumps(*(*pairs)[0].target, *(*pairs)[0].golden);
    if (!table) {
      std::fprintf(stderr, "%s\n", table.error().ToString().c_str());
      std::exit(1);
    }
    rows = table->rows.size();
  });
  fs::remove_all(root);
  const double gib = static_cast<double>(bytes) / (1 << 30);
  Report("compare tensor mode vs read(2) of both dumps", compare_s / read_s, 2.0, false,
         fmt::format("{:.2f} GiB, {} tensor pairs, {} threads: compare {:.3f} s ({:.2f} GiB/s), "
                     "read {:.3f} s; peak RSS {:.0f} MiB",
                     gib, rows, ThreadPool::Default().threads(), compare_s, gib / compare_s, read_s,
                     PeakRssMiB()));
  return 0;
}

}  // namespace
}  // namespace numprobe::bench

int main() { return numprobe::bench::Run(); }
