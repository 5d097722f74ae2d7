// MindSpore kernel-level (graph mode) dumps in inspect, scan and compare: the
// rank_{id}/{net}/{graph}/{iteration}/ trees MindSpore's native dump and msprobe's MindSpore L2
// dump write (mindspore_dump.h).
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#ifdef NUMPROBE_WITH_MPI
#include "numprobe/app/cluster.h"
#endif
#include "numprobe/app/mindspore_dump.h"

#include "cli.h"

namespace numprobe::cli {

namespace fs = std::filesystem;

bool IsGraphDumpPath(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && IsMindSporeGraphDump(path);
}

namespace {

void PrintGraphTable(int64_t rank, int64_t step, GraphDumpMode mode, size_t rows,
                     int64_t not_reached, int64_t with_message, const fs::path& path,
                     const std::vector<std::string>& warnings) {
  std::printf(
      "rank %lld step %lld: MindSpore graph dump, %s mode, %zu rows: %lld not reached, %lld "
      "with an Err_message\n",
      static_cast<long long>(rank), static_cast<long long>(step),
      mode == GraphDumpMode::kNpy ? "npy" : "statistic", rows, static_cast<long long>(not_reached),
      static_cast<long long>(with_message));
  std::printf("  wrote %s\n", path.string().c_str());
  for (const std::string& w : warnings) ReportWarning(w);
}

int PrintGraphScan(const std::string& root, const GraphScanReport& r) {
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

#ifdef NUMPROBE_WITH_MPI
// Under mpirun/srun: the (rank, step) units spread over the MPI processes (app/cluster.h); each
// process writes the tables it compared, process 0 alone prints; every process exits alike.
int RunClusterGraphCompare(const std::string& target, const std::string& golden,
                           const std::string& output, bool xlsx) {
  auto session = ClusterSession::Start();
  if (!session) return ReportError(session.error());
  const ClusterSession& cluster = **session;
  const std::string ts = cluster.Broadcast(FileTimestamp());
  auto result = ClusterCompareGraphDumps(cluster, target, golden, output, ts, xlsx);
  if (!result) {
    if (cluster.leader()) return ReportError(result.error());
    return result.error().code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitBadInput;
  }
  bool findings = !result->missing.empty();
  for (const ClusterGraphTable& t : result->tables) {
    PrintGraphTable(t.rank, t.step, t.mode, static_cast<size_t>(t.rows), t.not_reached,
                    t.with_message, t.file, t.warnings);
    findings = findings || t.not_reached > 0 || t.with_message > 0;
  }
  for (const std::string& m : result->missing) std::printf("%s; not compared\n", m.c_str());
  if (cluster.leader()) {
    std::printf("%d MPI processes; bytes read per process: %s\n", cluster.processes(),
                fmt::format("{}", fmt::join(result->bytes_per_process, ", ")).c_str());
  }
  const std::string code = cluster.Broadcast(findings ? "1" : "0");
  return code == "1" ? kExitFindings : kExitOk;
}

int RunClusterGraphScan(const std::string& root) {
  auto session = ClusterSession::Start();
  if (!session) return ReportError(session.error());
  const ClusterSession& cluster = **session;
  auto result = ClusterScanGraphDump(cluster, root);
  if (!result) {
    if (cluster.leader()) return ReportError(result.error());
    return result.error().code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitBadInput;
  }
  int code = kExitOk;
  if (cluster.leader()) {
    code = PrintGraphScan(root, result->report);
    std::printf("%d MPI processes; bytes read per process: %s\n", cluster.processes(),
                fmt::format("{}", fmt::join(result->bytes_per_process, ", ")).c_str());
  }
  const std::string agreed = cluster.Broadcast(code == kExitFindings ? "1" : "0");
  return agreed == "1" ? kExitFindings : kExitOk;
}
#endif

}  // namespace

int RunGraphCompare(const std::string& target, const std::string& golden, const std::string& output,
                    bool xlsx) {
#ifdef NUMPROBE_WITH_MPI
  if (LaunchedUnderMpi()) return RunClusterGraphCompare(target, golden, output, xlsx);
#endif
  std::vector<std::string> missing;
  auto tables = CompareGraphDumps(target, golden, &missing);
  if (!tables) return ReportError(tables.error());
  std::error_code ec;
  fs::create_directories(output, ec);
  if (ec) return ReportError(Status::IoError(output + ": " + ec.message()));
  const std::string ts = FileTimestamp();
  bool findings = !missing.empty();
  for (const GraphCompareTable& t : *tables) {
    const fs::path path = fs::path(output) / GraphCompareFileName(t, ts, xlsx);
    if (Status s = xlsx ? WriteGraphCompareXlsx(t, path) : WriteGraphCompareCsv(t, path); !s.ok()) {
      return ReportError(s);
    }
    PrintGraphTable(t.rank, t.step, t.mode, t.rows.size(), t.not_reached, t.with_message, path,
                    t.warnings);
    findings = findings || t.not_reached > 0 || t.with_message > 0;
  }
  for (const std::string& m : missing) std::printf("%s; not compared\n", m.c_str());
  return findings ? kExitFindings : kExitOk;
}

int RunGraphScan(const std::string& root) {
#ifdef NUMPROBE_WITH_MPI
  if (LaunchedUnderMpi()) return RunClusterGraphScan(root);
#endif
  auto report = ScanGraphDump(root);
  if (!report) return ReportError(report.error());
  return PrintGraphScan(root, *report);
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
