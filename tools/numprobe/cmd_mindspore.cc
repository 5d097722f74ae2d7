// MindSpore kernel-level (graph mode) dumps in inspect, scan and compare: the
// rank_{id}/{net}/{graph}/{iteration}/ trees MindSpore's native dump and msprobe's MindSpore L2
// dump write (mindspore_dump.h).
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include <fmt/format.h>

#include "numprobe/app/mindspore_dump.h"

#include "cli.h"

namespace numprobe::cli {

namespace fs = std::filesystem;

bool IsGraphDumpPath(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && IsMindSporeGraphDump(path);
}

int RunGraphCompare(const std::string& target, const std::string& golden, const std::string& output,
                    bool xlsx) {
  std::vector<std::string> missing;
  auto tables = CompareGraphDumps(target, golden, &missing);
  if (!tables) return ReportError(tables.error());
  std::error_code ec;
  fs::create_directories(output, ec);
  if (ec) return ReportError(Status::IoError(output + ": " + ec.message()));
  const std::string ts = FileTimestamp();
  bool findings = !missing.empty();
  for (const GraphCompareTable& t : *tables) {
    const fs::path path = fs::path(output) / fmt::format("compare_result_{}_{}_{}.{}", t.rank,
                                                         t.step, ts, xlsx ? "xlsx" : "csv");
    if (Status s = xlsx ? WriteGraphCompareXlsx(t, path) : WriteGraphCompareCsv(t, path); !s.ok()) {
      return ReportError(s);
    }
    std::printf(
        "rank %lld step %lld: MindSpore graph dump, %s mode, %zu rows: %lld not reached, %lld "
        "with an Err_message\n",
        static_cast<long long>(t.rank), static_cast<long long>(t.step),
        t.mode == GraphDumpMode::kNpy ? "npy" : "statistic", t.rows.size(),
        static_cast<long long>(t.not_reached), static_cast<long long>(t.with_message));
    std::printf("  wrote %s\n", path.string().c_str());
    for (const std::string& w : t.warnings) ReportWarning(w);
    findings = findings || t.not_reached > 0 || t.with_message > 0;
  }
  for (const std::string& m : missing) std::printf("%s; not compared\n", m.c_str());
  return findings ? kExitFindings : kExitOk;
}

int RunGraphScan(const std::string& root) {
  auto report = ScanGraphDump(root);
  if (!report) return ReportError(report.error());
  const GraphScanReport& r = *report;
  std::printf(
      "numprobe scan: %s (MindSpore graph dump, %s mode, %lld folders, %lld kernels, %lld "
      "tensors)\n",
      root.c_str(), r.mode == GraphDumpMode::kNpy ? "npy" : "statistic",
      static_cast<long long>(r.folders), static_cast<long long>(r.kernels),
      static_cast<long long>(r.tensors));
  if (r.first_anomaly.has_value()) {
    const GraphScanFinding& f = *r.first_anomaly;
    std::printf("First anomaly: %s  (rank %lld, iteration %lld, timestamp %lld)\n", f.op.c_str(),
                static_cast<long long>(f.rank), static_cast<long long>(f.step),
                static_cast<long long>(f.timestamp));
    std::printf("  finite inputs, NaN/Inf in output %s\n", f.tensor.c_str());
  } else {
    std::printf("First anomaly: none (no kernel turned finite inputs into NaN/Inf)\n");
  }
  std::printf("Tensors with NaN/Inf: %zu\n", r.nonfinite.size());
  for (size_t i = 0; i < r.nonfinite.size() && i < 10; ++i) {
    const GraphScanFinding& f = r.nonfinite[i];
    std::printf("  rank %lld iteration %lld %s\n", static_cast<long long>(f.rank),
                static_cast<long long>(f.step), f.tensor.c_str());
  }
  return r.nonfinite.empty() ? kExitOk : kExitFindings;
}

int PrintGraphDumpSummary(const std::string& root) {
  auto folders = FindGraphDumpFolders(root);
  if (!folders) return ReportError(folders.error());
  std::map<std::pair<int64_t, int64_t>, std::vector<fs::path>> by_step;
  for (const auto& f : *folders) by_step[{f.rank, f.step}].push_back(f.dir);
  for (const auto& [key, dirs] : by_step) {
    auto data = ReadGraphDump(dirs);
    if (!data) return ReportError(data.error());
    int64_t inputs = 0;
    for (const GraphTensor& t : data->tensors) inputs += t.io.rfind("input", 0) == 0 ? 1 : 0;
    std::printf(
        "%s: MindSpore graph dump, rank %lld iteration %lld: %zu tensors (%lld inputs, "
        "%lld outputs) from %s\n",
        dirs.front().string().c_str(), static_cast<long long>(key.first),
        static_cast<long long>(key.second), data->tensors.size(), static_cast<long long>(inputs),
        static_cast<long long>(static_cast<int64_t>(data->tensors.size()) - inputs),
        data->mode == GraphDumpMode::kNpy ? ".npy files" : "statistic.csv");
  }
  return kExitOk;
}

}  // namespace numprobe::cli
