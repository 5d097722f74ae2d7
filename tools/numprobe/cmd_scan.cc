// numprobe scan DUMP [-o DIR] [--dtype T]: the first NaN/Inf, watchpoints and precision headroom
// of a dump, as a short console summary plus JSON/CSV files (docs/scan.md).
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#ifdef NUMPROBE_WITH_MPI
#include "numprobe/app/cluster.h"
#endif
#include "numprobe/scan.h"

#include "cli.h"

namespace numprobe::cli {
namespace {

struct ScanCliOptions {
  std::string dump;
  std::string out_dir = ".";
  std::string dtype;
  std::string watch;
  std::string act_range;
  bool no_tensors = false;
  ScanOptions scan;
  std::string max_memory;
  double act_range_pct_lt = -1;
  double act_range_pct_gt = -1;
};

std::string Num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.6g}", v);
}

std::string OneLine(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    const bool ws = c == ' ' || c == '\n' || c == '\r' || c == '\t';
    if (ws) {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// The frame of user code: the first stack line outside installed packages.
std::string UserFrame(const std::vector<std::string>& stack) {
  for (const std::string& line : stack) {
    if (line.find("site-packages") == std::string::npos &&
        line.find("dist-packages") == std::string::npos) {
      return OneLine(line);
    }
  }
  return stack.empty() ? std::string() : OneLine(stack.front());
}

std::string TensorLine(const ScanTensor& t) {
  if (!t.is_tensor) {
    return t.has_max ? fmt::format("{} = {}", t.name, Num(t.max)) : t.name;
  }
  std::string line = fmt::format("{}  {} {}", t.name, t.dtype, t.shape);
  if (t.has_max) line += fmt::format("  max {}", Num(t.max));
  if (t.has_min) line += fmt::format("  min {}", Num(t.min));
  if (t.exact && (t.nan_count > 0 || t.inf_count > 0)) {
    line += fmt::format("  ({} NaN, {} Inf)", t.nan_count, t.inf_count);
  }
  return line;
}

std::string WhereText(const AnomalyNode& n) {
  std::string where = n.step >= 0 ? fmt::format("step {}", n.step) : std::string("no step");
  if (!n.rank_folder.empty()) where += fmt::format(", {}", n.rank_folder);
  if (n.rank_folder != fmt::format("rank{}", n.rank)) where += fmt::format(" (rank {})", n.rank);
  return where;
}

// What each kind of first anomaly means, for the summary.
constexpr EnumNameEntry<AnomalyKind> kAnomalyKindTexts[] = {
    {AnomalyKind::kCompute, "inputs finite, output NaN/Inf"},
    {AnomalyKind::kCommunication, "communication op: every sender's input finite, output NaN/Inf"},
    {AnomalyKind::kInheritedInput,
     "inputs already NaN/Inf with no earlier op to blame (data, weights or an earlier step)"}};

void PrintSummary(const ScanReport& r, const ScanOutputFiles& files) {
  std::printf(
      "numprobe scan: %s (%s, %zu step%s, %lld rank%s, %lld entries, %lld tensors%s)\n",
      r.dump.c_str(), r.task.empty() ? "unknown task" : r.task.c_str(), r.scopes.size(),
      r.scopes.size() == 1 ? "" : "s", static_cast<long long>(r.ranks), r.ranks == 1 ? "" : "s",
      static_cast<long long>(r.entries), static_cast<long long>(r.tensors),
      r.tensor_files_read > 0 ? fmt::format(", {} tensor files read", r.tensor_files_read).c_str()
                              : "");
  if (r.md5_mode) {
    std::printf("  md5 mode: no statistics, so no NaN/Inf or headroom information\n");
  }
  if (const AnomalyNode* first = r.first_anomaly()) {
    std::printf("First anomaly: %s  (%s)\n", first->op_name.c_str(), WhereText(*first).c_str());
    std::printf("  %s\n", std::string(NameIn(kAnomalyKindTexts, first->kind)).c_str());
    for (const auto& t : first->inputs) {
      if (!t.is_tensor && !t.has_max) continue;  // process groups, None, ...
      std::printf("  input   %s\n", TensorLine(t).c_str());
    }
    for (const auto& t : first->outputs) std::printf("  output  %s\n", TensorLine(t).c_str());
    std::printf("  module  %s\n",
                first->module_path.empty()
                    ? "(top level)"
                    : fmt::format("{}", fmt::join(first->module_path, " > ")).c_str());
    if (!first->stack.empty()) std::printf("  stack   %s\n", UserFrame(first->stack).c_str());
    if (r.anomalies.size() > 1) {
      std::printf("  %zu more birth%s of NaN/Inf (see the anomalies CSV)\n", r.anomalies.size() - 1,
                  r.anomalies.size() == 2 ? "" : "s");
    }
  } else if (!r.md5_mode) {
    std::printf("First anomaly: none (no op turned finite inputs into NaN/Inf)\n");
  }
  std::map<Watchpoint, int64_t> counts;
  for (const auto& h : r.hits) ++counts[h.watchpoint];
  if (counts.empty()) {
    std::printf("Watchpoints: no hits\n");
  } else {
    std::vector<std::string> parts;
    parts.reserve(counts.size());
    for (const auto& [w, n] : counts) parts.push_back(fmt::format("{} {}", EnumName(w), n));
    std::printf("Watchpoints: %zu hit%s: %s\n", r.hits.size(), r.hits.size() == 1 ? "" : "s",
                fmt::format("{}", fmt::join(parts, ", ")).c_str());
    const WatchpointHit& h = r.hits.front();
    std::printf("  first: %s %s at %s (%s: %s)\n", std::string(EnumName(h.watchpoint)).c_str(),
                h.tensor.c_str(), h.step >= 0 ? fmt::format("step {}", h.step).c_str() : "no step",
                h.condition.c_str(), Num(h.actual).c_str());
  }
  for (const HeadroomSummary& s : r.headroom_summary) {
    std::string line =
        fmt::format("Headroom {}: {} tensors, {} overflow, {} underflow, {} subnormal",
                    HeadroomTargetName(s.target), s.tensors, s.overflow, s.underflow, s.subnormal);
    if (!s.keep_higher.empty()) {
      std::vector<std::string> names;
      for (size_t i = 0; i < s.keep_higher.size() && i < 4; ++i) {
        names.push_back(s.keep_higher[i].layer);
      }
      if (s.keep_higher.size() > 4) names.push_back(fmt::format("+{}", s.keep_higher.size() - 4));
      line += fmt::format("; keep in higher precision: {}", fmt::join(names, ", "));
    }
    std::printf("%s\n", line.c_str());
  }
  std::printf("Wrote %s, %s, %s, %s", files.json.string().c_str(),
              files.anomalies_csv.string().c_str(), files.watchpoints_csv.string().c_str(),
              files.headroom_csv.string().c_str());
  if (!files.anomaly_analyze.empty()) std::printf(", %s", files.anomaly_analyze.string().c_str());
  std::printf("\n");
}

// The warnings (the first few), the summary and the exit code of a scan whose files are written.
int PrintScan(const ScanReport& report, const ScanOutputFiles& files) {
  constexpr size_t kShownWarnings = 5;
  for (size_t i = 0; i < report.warnings.size() && i < kShownWarnings; ++i) {
    ReportWarning(report.warnings[i]);
  }
  if (report.warnings.size() > kShownWarnings) {
    ReportWarning(fmt::format("{} more warnings in {}", report.warnings.size() - kShownWarnings,
                              files.json.string()));
  }
  PrintSummary(report, files);
  return report.findings() ? kExitFindings : kExitOk;
}

#ifdef NUMPROBE_WITH_MPI
// Under mpirun/srun: the (step, rank) units spread over the MPI processes (app/cluster.h).
// Process 0 alone writes the files and prints; every process exits with the same code.
int RunClusterScan(const ScanCliOptions& o) {
  auto session = ClusterSession::Start();
  if (!session) return ReportError(session.error());
  const ClusterSession& cluster = **session;
  auto result = ClusterScanDump(cluster, o.dump, o.scan);
  const auto fail = [&](const Status& error) -> int {
    if (cluster.leader()) return ReportError(error);
    return error.code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitBadInput;
  };
  if (!result) return fail(result.error());
  Result<ScanOutputFiles> files = ScanOutputFiles{};
  if (cluster.leader()) files = WriteScanReport(result->report, o.out_dir, FileTimestamp());
  cluster.IdleUntilAll();
  const Status written = cluster.Agree(files.ok() ? Status::Ok() : files.error(), 0);
  if (!written.ok()) return fail(written);
  // The exit code is process 0's (the others hold no report).
  const std::string code =
      cluster.Broadcast(cluster.leader() && result->report.findings() ? "1" : "0");
  if (!cluster.leader()) return code == "1" ? kExitFindings : kExitOk;
  std::printf("%d MPI processes; bytes read per process: %s\n", cluster.processes(),
              fmt::format("{}", fmt::join(result->bytes_per_process, ", ")).c_str());
  return PrintScan(result->report, *files);
}
#endif

int RunScan(ScanCliOptions& o) {
  if (!o.dtype.empty()) {
    const auto target = ParseHeadroomTarget(o.dtype);
    if (!target) {
      return ReportError(Status::InvalidArgument(
          fmt::format("--dtype {}: expected fp16, bf16, fp8_e4m3 or fp8_e5m2", o.dtype)));
    }
    o.scan.targets = {*target};
  }
  if (!o.watch.empty()) {
    o.scan.watch.fill(false);
    size_t start = 0;
    while (start <= o.watch.size()) {
      const size_t comma = o.watch.find(',', start);
      const std::string name =
          o.watch.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (name == "none") {
        // nothing enabled
      } else if (const auto w = EnumFromName<Watchpoint>(name)) {
        o.scan.watch[static_cast<size_t>(*w)] = true;
      } else {
        return ReportError(Status::InvalidArgument(
            fmt::format("--watch: unknown watchpoint \"{}\" (see docs/scan.md)", name)));
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (!o.act_range.empty()) {
    double low = 0;
    double high = 0;
    char extra = 0;
    if (std::sscanf(o.act_range.c_str(), "%lf,%lf%c", &low, &high, &extra) != 2) {
      return ReportError(
          Status::InvalidArgument(fmt::format("--act-range {}: expected LOW,HIGH", o.act_range)));
    }
    o.scan.thresholds.act_range = std::make_pair(low, high);
  }
  if (o.act_range_pct_lt >= 0) o.scan.thresholds.act_range_pct_lt = o.act_range_pct_lt;
  if (o.act_range_pct_gt >= 0) o.scan.thresholds.act_range_pct_gt = o.act_range_pct_gt;
  o.scan.read_tensor_files = !o.no_tensors;
  auto max_memory = MaxMemoryBytes(o.max_memory);
  if (!max_memory) return ReportError(max_memory.error());
  o.scan.max_memory = *max_memory;
  if (IsGraphDumpPath(o.dump)) return RunGraphScan(o.dump);
#ifdef NUMPROBE_WITH_MPI
  if (LaunchedUnderMpi()) return RunClusterScan(o);
#endif
  auto report = ScanDump(o.dump, o.scan);
  if (!report) return ReportError(report.error());
  auto files = WriteScanReport(*report, o.out_dir, FileTimestamp());
  if (!files) return ReportError(files.error());
  return PrintScan(*report, *files);
}

}  // namespace

std::string FileTimestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%d%H%M%S", &tm);
  return buf;
}

void SetupScan(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ScanCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "scan", "Find the first NaN/Inf, watchpoint hits and fp16/bf16/fp8 headroom in a dump");
  cmd->add_option("DUMP", o->dump, "dump root, step folder, rank folder or dump.json")->required();
  cmd->add_option("-o,--output", o->out_dir, "folder for the JSON and CSV files (default: .)");
  cmd->add_option("--dtype", o->dtype, "headroom for one target: fp16, bf16, fp8_e4m3, fp8_e5m2");
  cmd->add_option("--max-memory", o->max_memory, kMaxMemoryHelp);
  cmd->add_flag("--no-tensors", o->no_tensors,
                "use dump.json statistics only, even where tensor files exist");
  cmd->add_option("--watch", o->watch,
                  "comma-separated watchpoints to evaluate (default: all; \"none\" for none)");
  ScanThresholds& th = o->scan.thresholds;
  cmd->add_option("--grad-norm-min", th.grad_norm_min, "gradient_vanishing: norm below")
      ->capture_default_str();
  cmd->add_option("--grad-norm-max", th.grad_norm_max, "gradient_exploding: norm above")
      ->capture_default_str();
  cmd->add_option("--weight-rtol", th.weight_rtol, "weight_not_changed: allclose rtol")
      ->capture_default_str();
  cmd->add_option("--weight-atol", th.weight_atol, "weight_not_changed: allclose atol")
      ->capture_default_str();
  cmd->add_option("--update-ratio-max", th.update_ratio_max,
                  "weight_change_too_large: mean|dw|/mean|w| above")
      ->capture_default_str();
  cmd->add_option("--update-ratio-min", th.update_ratio_min,
                  "weight_change_too_small: mean|dw|/mean|w| below")
      ->capture_default_str();
  cmd->add_option("--tensor-max", th.tensor_abs_max, "tensor_too_large: max|x| above")
      ->capture_default_str();
  cmd->add_option("--act-max-min-lt", th.act_max_min_lt, "activation_range: Max-Min below")
      ->capture_default_str();
  cmd->add_option("--act-max-min-gt", th.act_max_min_gt, "activation_range: Max-Min above")
      ->capture_default_str();
  cmd->add_option("--act-range", o->act_range,
                  "activation_range: LOW,HIGH for the in-range percentage (tensor files)");
  cmd->add_option("--act-range-pct-lt", o->act_range_pct_lt,
                  "activation_range: hit when less than this % is inside --act-range");
  cmd->add_option("--act-range-pct-gt", o->act_range_pct_gt,
                  "activation_range: hit when more than this % is inside --act-range");
  cmd->callback([o, exit_code]() { *exit_code = RunScan(*o); });
}

}  // namespace numprobe::cli
