// Benchmark of `numprobe serve` on a million-row compare result (a JSON twin with msprobe's tensor
// mode columns, written under NUMPROBE_BENCH_DIR):
//   - loading it (streamed into the columnar store, model tree, findings) against reading its
//     bytes once (ReadAllBytes), as CPU times (the machines are shared);
//   - API latency per page of 100 rows (median and p99 over many pages, keep-alive loopback
//     client): execution order at random offsets, sorted by a metric (after the first, cached
//     sort), and filtered; each against the latency of a request the server answers without
//     touching the data (the HTTP round trip itself);
//   - time to the first rendered table row in headless Chromium (bench/ui_first_table.mjs,
//     playwright-core from web/node_modules), against the time to the first rendered view that
//     needs no rows (the app's own start-up).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>
#include <rapidjson/document.h>
#include <rapidjson/filewritestream.h>
#include <rapidjson/writer.h>

#include "bench_util.h"
#include "ui/http_server.h"
#include "ui/workspace.h"

namespace numprobe::bench {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kRows = 1'000'000;

fs::path BenchDir() {
  const char* env = std::getenv("NUMPROBE_BENCH_DIR");
  return env != nullptr && *env != '\0' ? fs::path(env) : fs::path("/tmp");
}

// Writes the million-row twin: 250,000 ops of 4 rows (2 inputs, 2 outputs), msprobe's tensor-mode
// columns, values drawn from a fixed seed, about 1% errors and 2% warnings.
fs::path WriteResult(const fs::path& dir) {
  fs::create_directories(dir);
  const fs::path path = dir / "compare_result_rank0_20260101000000.json";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return {};
  char buffer[1 << 16];
  rapidjson::FileWriteStream stream(f, buffer, sizeof(buffer));
  rapidjson::Writer<rapidjson::FileWriteStream> w(stream);
  const std::vector<std::string> columns = {"NPU Name",
                                            "Bench Name",
                                            "NPU Dtype",
                                            "Bench Dtype",
                                            "NPU Tensor Shape",
                                            "Bench Tensor Shape",
                                            "NPU Requires_grad",
                                            "Bench Requires_grad",
                                            "Cosine",
                                            "EucDist",
                                            "MaxAbsErr",
                                            "MaxRelativeErr",
                                            "One Thousandth Err Ratio",
                                            "Five Thousandths Err Ratio",
                                            "NPU max",
                                            "NPU min",
                                            "NPU mean",
                                            "NPU l2norm",
                                            "Bench max",
                                            "Bench min",
                                            "Bench mean",
                                            "Bench l2norm",
                                            "Requires_grad Consistent",
                                            "Result",
                                            "Err_message",
                                            "NPU_Stack_Info",
                                            "Data_name"};
  auto str = [&w](const std::string& s) {
    w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
  };
  w.StartObject();
  w.Key("numprobe_compare");
  w.Int(1);
  w.Key("mode");
  str("tensor");
  w.Key("target");
  str("npu/dump.json");
  w.Key("golden");
  str("bench/dump.json");
  w.Key("columns");
  w.StartArray();
  for (const auto& c : columns) str(c);
  w.EndArray();
  w.Key("rows");
  w.StartArray();
  std::mt19937_64 rng(20260101);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const char* ops[] = {"linear", "matmul", "layer_norm", "gelu", "softmax", "add", "mul"};
  for (uint32_t i = 0; i < kRows; ++i) {
    const uint32_t op = i / 4;
    const std::string entry = fmt::format("Functional.{}.{}.forward", ops[op % 7], op / 7);
    const std::string name = entry + ((i % 4) < 2 ? ".input." : ".output.") + std::to_string(i % 2);
    const double r = unit(rng);
    const char* result = r < 0.01 ? "error" : (r < 0.03 ? "warning" : "pass");
    w.StartArray();
    str(name);
    str(name);
    str("torch.bfloat16");
    str("torch.float32");
    str("[8, 128, 1024]");
    str("[8, 128, 1024]");
    str("True");
    str("True");
    w.Double(1.0 - unit(rng) * (r < 0.03 ? 0.1 : 1e-4));  // Cosine
    w.Double(unit(rng) * 10);                             // EucDist
    w.Double(unit(rng) * 0.5);                            // MaxAbsErr
    w.Double(unit(rng) * 0.05);                           // MaxRelativeErr
    w.Double(unit(rng));
    w.Double(unit(rng));
    for (int k = 0; k < 8; ++k) w.Double((unit(rng) - 0.5) * 20);
    str("True");
    str(result);
    str(r < 0.03 ? "[\"warning: MaxRelativeErr\"]" : "[]");
    str(i % 4 == 0 ? "['File model.py, line 12, in forward, \\n y = layer(x)']" : "N/A");
    str("['" + name + ".pt', '" + name + ".pt']");
    w.EndArray();
  }
  w.EndArray();
  w.EndObject();
  stream.Flush();
  std::fclose(f);
  return path;
}

struct Latency {
  double median_ms = 0;
  double p99_ms = 0;
};

Latency Measure(httplib::Client& client, const std::vector<std::string>& paths) {
  std::vector<double> ms;
  for (const std::string& p : paths) {
    const auto t0 = std::chrono::steady_clock::now();
    auto res = client.Get(p.c_str());
    const auto t1 = std::chrono::steady_clock::now();
    if (!res || res->status >= 500) {
      std::fprintf(stderr, "request failed: %s\n", p.c_str());
      continue;
    }
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  if (ms.empty()) return {};
  return {ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 99 / 100)]};
}

std::string RunCommand(const std::string& command) {
  std::string out;
  std::FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

int Main() {
  const int reps = Reps(5);
  const fs::path dir = BenchDir() / "ui_million";
  const fs::path existing = dir / "compare_result_rank0_20260101000000.json";
  const fs::path file = std::getenv("NUMPROBE_BENCH_KEEP") != nullptr && fs::exists(existing)
                            ? existing
                            : WriteResult(dir);
  if (file.empty()) {
    std::fprintf(stderr, "cannot write under %s\n", dir.c_str());
    return 1;
  }
  const double bytes = static_cast<double>(fs::file_size(file));

  // Loading, against reading the bytes.
  std::unique_ptr<ui::Workspace> ws;
  const double load_s = MedianSeconds(std::max(1, reps / 2), [&] {
    auto loaded = ui::LoadWorkspace(dir);
    if (!loaded) {
      std::fprintf(stderr, "%s\n", loaded.error().message().c_str());
      std::exit(1);
    }
    ws = std::move(*loaded);
  });
  const double read_s = MedianSeconds(reps, [&] { ReadAllBytes(file); });
  // CPU time of one more load (the machine is shared: wall time includes waiting for a core).
  const double cpu0 = CpuSeconds();
  {
    auto again = ui::LoadWorkspace(dir);
    if (!again) return 1;
  }
  const double load_cpu = CpuSeconds() - cpu0;
  const double cpu1 = CpuSeconds();
  for (int i = 0; i < 3; ++i) ReadAllBytes(file);
  const double read_cpu = (CpuSeconds() - cpu1) / 3;
  // The ratio is of CPU times, which waiting for a shared core does not inflate.
  Report("ui load 1M-row result (CPU)", load_cpu / read_cpu, 50.0, false,
         fmt::format("load {:.2f} s CPU ({:.2f} s wall), read {:.3f} s CPU ({:.3f} s wall), "
                     "{:.0f} MiB, peak RSS {:.0f} MiB",
                     load_cpu, load_s, read_cpu, read_s, bytes / (1 << 20), PeakRssMiB()));

  auto server = ui::CreateServer(std::shared_ptr<const ui::Workspace>(std::move(ws)),
                                 {.host = "127.0.0.1", .port = 0});
  if (!server) {
    std::fprintf(stderr, "%s\n", server.error().message().c_str());
    return 1;
  }
  std::thread serving([&] { (void)(*server)->Run(); });
  const int port = (*server)->port();
  httplib::Client client("127.0.0.1", port);
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);
  client.set_read_timeout(120, 0);

  const int pages = 200 * std::max(1, reps / 5);
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> offset(0, kRows - 100);
  std::vector<std::string> trivial, plain, sorted, filtered;
  for (int i = 0; i < pages; ++i) {
    trivial.push_back("/api/none");
    plain.push_back(fmt::format("/api/rows?run=0&limit=100&offset={}", offset(rng)));
    sorted.push_back(
        fmt::format("/api/rows?run=0&limit=100&sort=MaxAbsErr&desc=1&offset={}", offset(rng)));
    filtered.push_back(
        fmt::format("/api/rows?run=0&limit=100&result=error,warning&range=Cosine:0:0.99&offset={}",
                    offset(rng) % 5000));
  }
  const Latency base = Measure(client, trivial);
  // The first sort and the first filter pay for themselves once; the pages after are cached.
  const Latency cold_sort = Measure(client, {"/api/rows?run=0&limit=100&sort=MaxRelativeErr"});
  const Latency cold_filter = Measure(client, {"/api/rows?run=0&limit=100&q=*softmax*output*"});
  const Latency p = Measure(client, plain);
  const Latency s = Measure(client, sorted);
  const Latency f = Measure(client, filtered);
  const auto line = [&](const char* name, const Latency& l) {
    Report(name, l.median_ms / base.median_ms, 20.0, false,
           fmt::format("median {:.3f} ms, p99 {:.3f} ms per page of 100 rows; HTTP round trip "
                       "{:.3f} ms",
                       l.median_ms, l.p99_ms, base.median_ms));
  };
  line("ui api page, execution order", p);
  line("ui api page, sorted (cached)", s);
  line("ui api page, filtered (cached)", f);
  std::printf("       first sort of 1M rows %.0f ms, first name-glob filter %.0f ms\n",
              cold_sort.median_ms, cold_filter.median_ms);

  // Time to the first rendered table row in headless Chromium.
  const std::string script = std::string(NUMPROBE_SOURCE_DIR) + "/bench/ui_first_table.mjs";
  const std::string out = RunCommand(fmt::format("'{}' '{}' 'http://127.0.0.1:{}/' {} 2>&1",
                                                 NUMPROBE_NODE, script, port, std::max(3, reps)));
  rapidjson::Document doc;
  doc.Parse(out.c_str());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("table_ms")) {
    std::printf("BENCH %-44s skipped: %s\n", "ui first table row in Chromium", out.c_str());
  } else {
    const double table = doc["table_ms"].GetDouble();
    const double sorted_ms = doc["sorted_ms"].GetDouble();
    const double boot = doc["boot_ms"].GetDouble();
    Report("ui first table row in Chromium", table / boot, 3.0, false,
           fmt::format("first row {:.0f} ms (sorted by a metric {:.0f} ms), app start-up with "
                       "no rows {:.0f} ms (medians of {})",
                       table, sorted_ms, boot, doc["reps"].GetInt()));
  }
  (*server)->Stop();
  serving.join();
  if (std::getenv("NUMPROBE_BENCH_KEEP") == nullptr) {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  return 0;
}

}  // namespace
}  // namespace numprobe::bench

int main() { return numprobe::bench::Main(); }
