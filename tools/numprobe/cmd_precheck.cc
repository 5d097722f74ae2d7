// numprobe precheck / precheck-compare (docs/precheck.md):
//   precheck -api_info DUMP.json [-o DIR] [-n N] [-csv_path RESUME.csv] [-f] [-save_error_data]
//            [-config CONFIG.json]   re-runs every API of the dump against a float64 benchmark;
//            the dump is checked here, then the replay runs in Debian's Python (the one with
//            torch) as `python -m numprobe.precheck`, whose exit code is this command's.
//   precheck --plan fp16|bf16|fp8_e4m3|fp8_e5m2 DUMP [-o DIR] [--settings FILE]
//            the static plan of a lower precision from an fp32 statistics dump.
//   precheck-compare -npu A.csv -gpu B.csv [-o DIR]   msprobe's api_precision_compare.
// msprobe's single-dash spellings are rewritten to long names for CLI11 (RewriteShortOptions).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef NUMPROBE_WITH_MPI
#include "numprobe/app/cluster.h"
#endif
#include "numprobe/app/precheck.h"
#include "numprobe/app/precheck_compare.h"
#include "numprobe/app/precheck_plan.h"
#include "numprobe/dump.h"
#include "numprobe/scan.h"

#include "cli.h"

namespace numprobe::cli {
namespace {

namespace fs = std::filesystem;

struct PrecheckArgs {
  std::string api_info;
  std::string out = ".";
  int splits = 1;
  std::string csv_path;
  bool filter = false;
  bool save_error_data = false;
  std::string config;
  uint64_t seed = 1234;
  std::string device = "auto";
  int threads = 1;
  std::string plan;
  std::string dump;
  std::string settings;
};

struct CompareArgs {
  std::string npu;
  std::string gpu;
  std::string out = ".";
};

// Parses `raw` with `parser` after rewriting msprobe's spellings; prints CLI11's message and
// returns false on a usage error.
bool Parse(CLI::App& parser, const std::vector<std::string>& raw,
           const std::vector<std::pair<std::string, std::string>>& names, const char* command) {
  std::vector<std::string> args = RewriteShortOptions(raw, names);
  std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
  try {
    parser.parse(args);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "numprobe %s: %s\nRun 'numprobe %s --help' for the options.\n", command,
                 e.what(), command);
    return false;
  }
  return true;
}

bool WantsHelp(const std::vector<std::string>& raw) {
  return std::find(raw.begin(), raw.end(), "--help") != raw.end() ||
         std::find(raw.begin(), raw.end(), "-h") != raw.end();
}

// Runs the replay: /usr/bin/python3 (or $NUMPROBE_PYTHON) -m numprobe.precheck ARGS [extra],
// with the build's package first on PYTHONPATH and capture's autostart off.
int RunReplay(const PrecheckArgs& a, const std::vector<std::string>& extra = {}) {
  const char* env_python = std::getenv("NUMPROBE_PYTHON");
  const std::string python =
      env_python != nullptr && *env_python != '\0' ? env_python : "/usr/bin/python3";
  std::vector<std::string> argv = {python,
                                   "-m",
                                   "numprobe.precheck",
                                   "--api-info",
                                   a.api_info,
                                   "--out",
                                   a.out,
                                   "-n",
                                   std::to_string(a.splits),
                                   "--seed",
                                   std::to_string(a.seed),
                                   "--device",
                                   a.device,
                                   "--threads",
                                   std::to_string(a.threads)};
  if (!a.csv_path.empty()) argv.insert(argv.end(), {"--csv-path", a.csv_path});
  if (!a.config.empty()) argv.insert(argv.end(), {"--config", a.config});
  if (a.filter) argv.emplace_back("--filter");
  if (a.save_error_data) argv.emplace_back("--save-error-data");
  argv.insert(argv.end(), extra.begin(), extra.end());
  if (const std::string root = PackageRoot(); !root.empty()) {
    std::string pythonpath = root;
    if (const char* old = std::getenv("PYTHONPATH"); old != nullptr && *old != '\0') {
      pythonpath += ":" + std::string(old);
    }
    ::setenv("PYTHONPATH", pythonpath.c_str(), 1);
  }
  ::unsetenv("NUMPROBE_CONFIG");  // the replay must not start a capture of itself
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    return ReportError(Status::IoError(std::string("fork failed: ") + std::strerror(errno)));
  }
  if (pid == 0) {
    std::vector<char*> cargv;
    cargv.reserve(argv.size() + 1);
    for (const std::string& s : argv) cargv.push_back(const_cast<char*>(s.c_str()));
    cargv.push_back(nullptr);
    ::execv(cargv[0], cargv.data());
    std::fprintf(stderr, "numprobe: error: cannot run %s: %s\n", cargv[0], std::strerror(errno));
    std::_Exit(kExitBadInput);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return ReportError(Status::IoError("waitpid failed"));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

#ifdef NUMPROBE_WITH_MPI
// A new empty file in the temporary folder (TMPDIR, else /tmp), named by mkstemp.
Result<std::string> NewTempFile() {
  std::string name = (fs::temp_directory_path() / "numprobe-precheck-XXXXXX").string();
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    return Status::IoError(fmt::format("{}: cannot create: {}", name, std::strerror(errno)));
  }
  ::close(fd);
  return name;
}

Result<std::string> ReadWhole(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return Status::IoError(fmt::format("{}: {}", path, std::strerror(errno)));
  std::string text;
  char buffer[1 << 16];
  size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, f)) > 0) text.append(buffer, got);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return Status::IoError(path + ": read error");
  return text;
}

Status WriteWhole(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return Status::IoError(fmt::format("{}: {}", path, std::strerror(errno)));
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !written) return Status::IoError(path + ": write error");
  return Status::Ok();
}

// Under mpirun/srun: the APIs left to run are dealt round-robin over the MPI processes (API i to
// process i mod P); each process's own Python replays its share into a shard file in its local
// temporary folder (`--shard`), the shards are gathered to process 0, and its Python writes the
// result files from them in dump order (`--merge-shards`): the same files, byte for byte, as one
// process writes. A failure anywhere is agreed and printed once, by process 0.
int RunClusterReplay(const PrecheckArgs& a) {
  auto session = ClusterSession::Start();
  if (!session) return ReportError(session.error());
  const ClusterSession& cluster = **session;
  const auto fail = [&](const Status& error) -> int {
    if (cluster.leader()) return ReportError(error);
    return error.code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitBadInput;
  };
  const std::string ts = cluster.Broadcast(FileTimestamp());
  Status local;
  std::string shard;
  auto shard_file = NewTempFile();
  if (!shard_file) {
    local = shard_file.error();
  } else {
    const int rc = RunReplay(a, {"--timestamp", ts, "--shard",
                                 fmt::format("{}/{}", cluster.process(), cluster.processes()),
                                 "--shard-file", *shard_file});
    auto text = ReadWhole(*shard_file);
    std::remove(shard_file->c_str());
    if (!text) {
      local = text.error();
    } else if (rc == 0) {
      shard = std::move(*text);
    } else {  // the shard file holds the replay's error message
      const std::string message =
          text->empty() ? fmt::format("the replay of MPI process {} exited with code {}",
                                      cluster.process(), rc)
                        : *text;
      local = rc == kExitUsage ? Status::InvalidArgument(message) : Status::IoError(message);
    }
  }
  cluster.IdleUntilAll();  // replays take long: the processes done first wait asleep
  if (Status agreed = cluster.Agree(local, cluster.process()); !agreed.ok()) return fail(agreed);
  auto gathered = cluster.GatherToLeader(shard);
  std::string().swap(shard);
  if (Status agreed = cluster.Agree(gathered.ok() ? Status::Ok() : gathered.error(), 0);
      !agreed.ok()) {
    return fail(agreed);
  }
  int code = kExitOk;
  if (cluster.leader()) {
    std::vector<std::string> files;
    std::vector<std::string> extra = {"--timestamp", ts, "--merge-shards"};
    Status staged;
    for (std::string& text : *gathered) {
      auto file = NewTempFile();
      if (!file) {
        staged = file.error();
        break;
      }
      files.push_back(*file);
      staged = WriteWhole(*file, text);
      std::string().swap(text);
      if (!staged.ok()) break;
      extra.push_back(*file);
    }
    code = staged.ok() ? RunReplay(a, extra) : ReportError(staged);
    for (const std::string& f : files) std::remove(f.c_str());
  }
  cluster.IdleUntilAll();
  const std::string agreed = cluster.Broadcast(std::to_string(code));
  return std::atoi(agreed.c_str());
}
#endif

int RunDynamic(const PrecheckArgs& a) {
  if (a.api_info.empty()) {
    return ReportError(Status::InvalidArgument(
        "precheck needs -api_info DUMP.json (or --plan DTYPE DUMP for the static plan)"));
  }
  if (a.splits < 1 || a.splits > 64) {
    return ReportError(Status::InvalidArgument("-n must be between 1 and 64"));
  }
  if (a.device != "auto" && a.device != "cpu" && a.device != "cuda") {
    return ReportError(Status::InvalidArgument("--device must be auto, cpu or cuda"));
  }
  // The dump is read here first, so that a missing or malformed one fails at once (exit 3).
  auto dump = ReadDumpJson(a.api_info);
  if (!dump.ok()) return ReportError(dump.error());
  int64_t apis = 0;
  for (const DumpEntry& e : dump->entries) {
    if (e.name.find("Module") == std::string::npos && e.name.ends_with(".forward")) ++apis;
  }
  if (apis == 0) {
    return ReportError(Status::NotFound(
        fmt::format("{}: no forward API entries (precheck needs a dump taken at level L1 or mix)",
                    a.api_info)));
  }
  if (!a.csv_path.empty()) {
    auto files = PrecheckFilesOf(a.csv_path);
    if (!files.ok()) return ReportError(files.error());
    for (const fs::path& p : {files->result_csv, files->details_csv}) {
      std::error_code ec;
      if (!fs::is_regular_file(p, ec)) {
        return ReportError(Status::NotFound(fmt::format("{}: no such file to resume", p.string())));
      }
    }
  }
#ifdef NUMPROBE_WITH_MPI
  if (LaunchedUnderMpi()) return RunClusterReplay(a);
#endif
  return RunReplay(a);
}

// The plan's summary, its files (with -o) and warnings, and the exit code.
int PrintPlan(const PrecheckArgs& a, const PlanReport& r) {
  std::printf(
      "precheck plan %s for %s: %lld error, %lld warning, %lld info (%lld tensors, %lld "
      "API calls)\n",
      a.plan.c_str(), a.dump.c_str(), static_cast<long long>(r.Count(PlanSeverity::kError)),
      static_cast<long long>(r.Count(PlanSeverity::kWarning)),
      static_cast<long long>(r.Count(PlanSeverity::kInfo)), static_cast<long long>(r.tensors),
      static_cast<long long>(r.ops));
  constexpr size_t kShown = 40;
  for (size_t i = 0; i < r.findings.size() && i < kShown; ++i) {
    const PlanFinding& f = r.findings[i];
    const std::string where = f.tensor.empty() ? f.op : f.tensor;
    std::printf("  %-7s %-18s %s%s%s\n           -> %s\n",
                std::string(EnumName(f.severity)).c_str(), f.kind.c_str(), where.c_str(),
                where.empty() ? "" : ": ", f.detail.c_str(), f.advice.c_str());
  }
  if (r.findings.size() > kShown) {
    std::printf("  ... %zu more (see the JSON with -o)\n", r.findings.size() - kShown);
  }
  if (a.out != ".") {
    if (Status s = WritePlanReport(r, a.out, FileTimestamp()); !s.ok()) return ReportError(s);
    std::printf("  wrote precheck_plan_%s_*.json and .csv in %s\n", a.plan.c_str(), a.out.c_str());
  }
  for (const std::string& w : r.warnings) ReportWarning(w);
  return r.Count(PlanSeverity::kError) > 0 ? kExitFindings : kExitOk;
}

#ifdef NUMPROBE_WITH_MPI
// Under mpirun/srun: the scan and the op facts spread over the MPI processes (app/cluster.h).
// Process 0 alone writes and prints; every process exits with the same code.
int RunClusterPlan(const PrecheckArgs& a, DType target, const PlanSettings* settings) {
  auto session = ClusterSession::Start();
  if (!session) return ReportError(session.error());
  const ClusterSession& cluster = **session;
  auto result = ClusterPlanPrecision(cluster, a.dump, target, settings);
  if (!result) {
    if (cluster.leader()) return ReportError(result.error());
    return result.error().code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitBadInput;
  }
  // Process 0 prints and writes; its exit code (3 when the files cannot be written) is everyone's.
  const int code = cluster.leader() ? PrintPlan(a, result->report) : 0;
  cluster.IdleUntilAll();
  const std::string agreed = cluster.Broadcast(std::string(1, static_cast<char>('0' + code)));
  return agreed.size() == 1 ? agreed[0] - '0' : kExitBadInput;
}
#endif

int RunPlan(const PrecheckArgs& a) {
  const auto target = ParseHeadroomTarget(a.plan);
  if (!target) {
    return ReportError(Status::InvalidArgument(
        fmt::format("--plan {}: expected fp16, bf16, fp8_e4m3 or fp8_e5m2", a.plan)));
  }
  if (a.dump.empty()) return ReportError(Status::InvalidArgument("--plan needs a DUMP"));
  std::optional<PlanSettings> settings;
  if (!a.settings.empty()) {
    auto s = ReadPlanSettings(a.settings);
    if (!s.ok()) return ReportError(s.error());
    settings = *s;
  }
#ifdef NUMPROBE_WITH_MPI
  if (LaunchedUnderMpi()) return RunClusterPlan(a, *target, settings ? &*settings : nullptr);
#endif
  auto report = PlanPrecision(a.dump, *target, settings ? &*settings : nullptr);
  if (!report.ok()) return ReportError(report.error());
  return PrintPlan(a, *report);
}

int RunPrecheckArgs(const std::vector<std::string>& raw) {
  PrecheckArgs a;
  CLI::App parser{
      "numprobe precheck: re-run every API of an L1 dump in its dtypes and in float64 and judge "
      "the errors by msprobe's standards (acc_check); or, with --plan, list what a lower "
      "precision would break"};
  parser.add_option("--api_info_file", a.api_info, "-api_info: the dump.json to check");
  parser.add_option("--out_path", a.out, "-o: output folder (default .)");
  parser.add_option("--num_splits", a.splits, "-n: processes (1-64; results equal -n 1's)");
  parser.add_option("--result_csv_path", a.csv_path,
                    "-csv_path: resume the run of this accuracy_checking_result_{ts}.csv");
  parser.add_flag("--filter_api", a.filter,
                  "-f: skip calls that repeat an earlier call's arguments");
  parser.add_flag("--save_error_data", a.save_error_data,
                  "-save_error_data: save the inputs and outputs of failing APIs");
  parser.add_option("--config_path", a.config,
                    "-config: msprobe's config.json (acc_check white_list / black_list)");
  parser.add_option("--seed", a.seed, "seed of statistics-mode inputs (default 1234)");
  parser.add_option("--device", a.device,
                    "auto (CUDA where the dump's tensors were, if available), cpu or cuda");
  parser.add_option("--threads", a.threads, "torch threads per process (default 1)");
  parser.add_option("--plan", a.plan, "the static plan of fp16, bf16, fp8_e4m3 or fp8_e5m2");
  parser.add_option("--settings", a.settings,
                    "--plan: precheck_settings.json (optimizer, loss scaling, autocast)");
  parser.add_option("dump", a.dump, "--plan: the fp32 statistics dump");
  if (WantsHelp(raw)) {
    std::printf("%s", parser.help().c_str());
    return kExitOk;
  }
  if (!Parse(parser, raw,
             {{"-api_info", "--api_info_file"},
              {"-o", "--out_path"},
              {"-n", "--num_splits"},
              {"-csv_path", "--result_csv_path"},
              {"-f", "--filter_api"},
              {"-save_error_data", "--save_error_data"},
              {"-config", "--config_path"}},
             "precheck")) {
    return kExitUsage;
  }
  return a.plan.empty() ? RunDynamic(a) : RunPlan(a);
}

int RunCompareArgs(const std::vector<std::string>& raw) {
  CompareArgs a;
  CLI::App parser{
      "numprobe precheck-compare: judge a device's pre-check details against a reference "
      "device's (msprobe's api_precision_compare)"};
  parser.add_option("--npu_csv_path", a.npu, "-npu: accuracy_checking_details of the device")
      ->required();
  parser.add_option("--gpu_csv_path", a.gpu, "-gpu: accuracy_checking_details of the reference")
      ->required();
  parser.add_option("--out_path", a.out, "-o: output folder (default .)");
  if (WantsHelp(raw)) {
    std::printf("%s", parser.help().c_str());
    return kExitOk;
  }
  if (!Parse(parser, raw,
             {{"-npu", "--npu_csv_path"}, {"-gpu", "--gpu_csv_path"}, {"-o", "--out_path"}},
             "precheck-compare")) {
    return kExitUsage;
  }
  auto report = ComparePrecheckDetails(a.npu, a.gpu);
  if (!report.ok()) return ReportError(report.error());
  auto files = WritePrecheckCompare(*report, a.out, FileTimestamp());
  if (!files.ok()) return ReportError(files.error());
  int64_t counts[5] = {0, 0, 0, 0, 0};
  for (const PrecheckCompareApi& api : report->apis) {
    ++counts[static_cast<int>(WorseStatus(api.forward, api.backward))];
  }
  std::printf("precheck-compare: %zu APIs: %lld pass, %lld warning, %lld error, %lld skipped\n",
              report->apis.size(), static_cast<long long>(counts[1]),
              static_cast<long long>(counts[2]), static_cast<long long>(counts[3]),
              static_cast<long long>(counts[4]) + static_cast<long long>(counts[0]));
  for (const PrecheckCompareApi& api : report->apis) {
    if (api.forward == PrecheckStatus::kError || api.backward == PrecheckStatus::kError) {
      std::printf("  error  %s  forward %s, backward %s\n", api.api.c_str(),
                  std::string(EnumName(api.forward)).c_str(),
                  std::string(EnumName(api.backward)).c_str());
    }
  }
  std::printf("  wrote %s, %s, %s\n", files->result_csv.string().c_str(),
              files->details_csv.string().c_str(), files->json.string().c_str());
  for (const std::string& w : report->warnings) ReportWarning(w);
  return report->failed() ? kExitFindings : kExitOk;
}

}  // namespace

void SetupPrecheck(CLI::App& app, int* exit_code) {
  CLI::App* sub = app.add_subcommand(
      "precheck", "APIs that lose precision, re-run against float64 (msprobe acc_check); --plan");
  sub->set_help_flag();
  sub->allow_extras();
  sub->prefix_command();
  sub->callback([sub, exit_code] { *exit_code = RunPrecheckArgs(sub->remaining()); });
  CLI::App* cmp = app.add_subcommand("precheck-compare",
                                     "One device's precheck details judged against another's "
                                     "(api_precision_compare)");
  cmp->set_help_flag();
  cmp->allow_extras();
  cmp->prefix_command();
  cmp->callback([cmp, exit_code] { *exit_code = RunCompareArgs(cmp->remaining()); });
}

}  // namespace numprobe::cli
