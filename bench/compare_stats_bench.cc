// Benchmark of statistics-mode `numprobe compare`: a generated pair of dump.json files with 100k
// entries per side (3 tensor rows and a scalar each, like an L1 dump), compared end to end as the
// command does it (CompareDumps, the first-divergence analysis, the CSV and its JSON twin),
// against parsing both dump.json files alone (ParseDumpJson: the streaming parse into the dump
// model), with the files in the page cache. Target: <= 3.0. For scale, the line also gives a bare
// RapidJSON SAX parse of both files (no model built). NUMPROBE_BENCH_STATS_ENTRIES overrides the
// entry count.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <unistd.h>

#include "numprobe/compare.h"
#include "numprobe/divergence.h"
#include "numprobe/dump_layout.h"

#include "bench_util.h"
#include "compare/compare_writer.h"

namespace numprobe::bench {
namespace {

namespace fs = std::filesystem;

fs::path BenchDir() {
  const char* env = std::getenv("NUMPROBE_BENCH_DIR");
  return env != nullptr && *env != '\0' ? fs::path(env) : fs::path("/tmp");
}

std::string Leaf(const char* dtype, double scale, int k) {
  return fmt::format(
      R"({{"type": "torch.Tensor", "dtype": "{}", "shape": [{}, 1024], "Max": {}, "Min": {}, )"
      R"("Mean": {}, "Norm": {}, "requires_grad": true}})",
      dtype, 8 + k % 8, 3.25 * scale, -3.125 * scale, 0.0123 * scale, 181.02 * scale);
}

void WriteDump(const fs::path& dir, int entries, bool target) {
  fs::create_directories(dir);
  std::ofstream out(dir / "dump.json");
  out << R"({"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": null, "data": {)";
  for (int i = 0; i < entries; ++i) {
    const double s = 1.0 + (i % 13) * 0.01 + (target ? 1e-4 * (i % 7) : 0.0);
    const char* act = target ? "torch.bfloat16" : "torch.float32";
    out << (i == 0 ? "" : ",") << "\n \"Functional.op" << (i % 211) << "." << (i / 211)
        << ".forward\": {\"input_args\": [" << Leaf(act, s, i) << ", "
        << Leaf("torch.float32", 1.0, i)
        << R"(, {"type": "float", "value": 0.5}], "input_kwargs": {}, "output": [)"
        << Leaf(act, s * 1.01, i) << "]}";
  }
  out << "}}\n";
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int Run() {
  const char* env = std::getenv("NUMPROBE_BENCH_STATS_ENTRIES");
  const int entries = env != nullptr ? std::max(100, std::atoi(env)) : 100000;
  const fs::path root = BenchDir() / fmt::format("numprobe_stats_bench_{}", ::getpid());
  fs::remove_all(root);
  WriteDump(root / "target" / "rank0", entries, true);
  WriteDump(root / "golden" / "rank0", entries, false);
  const std::string t_text = Slurp(root / "target" / "rank0" / "dump.json");
  const std::string g_text = Slurp(root / "golden" / "rank0" / "dump.json");
  const int reps = Reps(3);
  const double model_s = MedianSeconds(reps, [&] {
    for (const std::string* text : {&t_text, &g_text}) {
      if (!ParseDumpJson(std::span<const char>(text->data(), text->size())).ok()) std::exit(1);
    }
  });
  const double sax_s = MedianSeconds(reps, [&] {
    for (const std::string* text : {&t_text, &g_text}) {
      rapidjson::MemoryStream stream(text->data(), text->size());
      rapidjson::BaseReaderHandler<> handler;
      rapidjson::Reader reader;
      reader.Parse<rapidjson::kParseNanAndInfFlag>(stream, handler);
    }
  });
  auto pairs = DiscoverDumpPairs(root / "target", root / "golden");
  if (!pairs) {
    std::fprintf(stderr, "%s\n", pairs.error().ToString().c_str());
    return 1;
  }
  size_t rows = 0;
  double write_s = 0;
  const double compare_s = MedianSeconds(reps, [&] {
    auto table = CompareDumps(*(*pairs)[0].target, *(*pairs)[0].golden);
    if (!table) {
      std::fprintf(stderr, "%s\n", table.error().ToString().c_str());
      std::exit(1);
    }
    (void)FindDivergence(*table, nullptr);
    const auto w0 = std::chrono::steady_clock::now();
    if (!WriteCompareCsv(*table, root / "result.csv").ok()) std::exit(1);
    if (!WriteCompareJson(*table, root / "result.json", "target", "golden").ok()) std::exit(1);
    write_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    rows = table->rows.size();
  });
  const double mib = static_cast<double>(t_text.size() + g_text.size()) / (1 << 20);
  fs::remove_all(root);
  Report("compare statistics mode vs parsing both dump.json", compare_s / model_s, 3.0, false,
         fmt::format("{} entries per side, {:.0f} MiB of JSON, {} rows: compare {:.2f} s (of "
                     "which CSV+JSON {:.2f} s), parse {:.2f} s; bare SAX parse {:.2f} s "
                     "(compare/SAX {:.1f}); peak RSS {:.0f} MiB",
                     entries, mib, rows, compare_s, write_s, model_s, sax_s, compare_s / sax_s,
                     PeakRssMiB()));
  return 0;
}

}  // namespace
}  // namespace numprobe::bench

int main() { return numprobe::bench::Run(); }
