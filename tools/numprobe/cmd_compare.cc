// numprobe compare -tp TARGET -gp GOLDEN [-o DIR] [--threads N]: msprobe's compare, with
// msprobe's spellings of the options (-tp, -gp, ...), which CLI11 cannot declare (its short names
// are one character), so the subcommand's arguments are rewritten to long names and parsed by a
// private CLI11 app, and --help is printed from the same option table.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#ifdef NUMPROBE_WITH_MPI
#include "numprobe/app/cluster.h"
#endif
#include "numprobe/buffer.h"
#include "numprobe/compare.h"
#include "numprobe/compare_trees.h"
#include "numprobe/divergence.h"
#include "numprobe/tensor_file.h"
#include "numprobe/thread_pool.h"

#include "cli.h"
#include "suggest.h"

namespace numprobe::cli {
namespace {

namespace fs = std::filesystem;

struct CompareArgs {
  std::string target;
  std::string golden;
  std::string output = "./output";
  int threads = 0;
  bool diff_analyze = false;
  bool fuzzy = false;
  std::string data_mapping;
  CLI::Option* cell_option = nullptr;
  std::string cell_mapping;
  CLI::Option* api_option = nullptr;
  std::string api_mapping;
  std::string layer_mapping;
  bool no_align = false;
  bool xlsx = false;
  std::string max_memory;
};

// One option: msprobe's short spelling (if any), the long names, the value name, the help.
struct OptionSpec {
  const char* msprobe_short;  // "-tp" or nullptr
  const char* names;          // CLI11 names: "--target_path,--target"
  const char* value;          // "PATH" or nullptr for a flag
  const char* help;
};

constexpr OptionSpec kOptions[] = {
    {"-tp", "--target_path,--target", "PATH",
     "Target dump: a dump.json, a rank folder, a step folder with rank*/proc* folders, or a dump "
     "root with step* folders (required)"},
    {"-gp", "--golden_path,--golden", "PATH", "Golden dump, laid out like the target (required)"},
    {"-o", "--output_path", "DIR", "Where results are written (default ./output)"},
    {nullptr, "--xlsx", nullptr,
     "Write compare_result_*.xlsx with msprobe's red/yellow highlighting instead of the .csv"},
    {"-fm", "--fuzzy_match", nullptr,
     "Pair rows by name without call counts (msprobe's fuzzy match)"},
    {"-dm", "--data_mapping", "MAP.yaml",
     "Pair rows by a YAML of target row name: golden row name"},
    {"-cm", "--cell_mapping", "[MAP.yaml]",
     "MindSpore cells against PyTorch modules: Cell -> Module, then the YAML's cell renames"},
    {"-am", "--api_mapping", "[MAP.yaml]",
     "MindSpore APIs against PyTorch APIs: the built-in table, then the YAML's argument mappings"},
    {"-lm", "--layer_mapping", "MAP.yaml",
     "MindSpore layers against PyTorch layers: a YAML of {LayerClass: {target sub-layer: golden "
     "sub-layer}} (TopLayer: the outermost names) applied along construct.json's module paths; "
     "modules pair by the renamed path, APIs by their order inside them (needs construct.json on "
     "both sides)"},
    {nullptr, "--no_align", nullptr,
     "Leave rows unpaired by name as unmatched (no sequence alignment over API, shape, dtype)"},
    {"-da", "--diff_analyze", nullptr,
     "Also write msprobe's diff_analyze_{timestamp}.json (the first divergence per rank)"},
    {nullptr, "--threads", "N", "Worker threads (default: all hardware threads)"},
    {nullptr, "--max-memory", "SIZE",
     "Most memory one tensor file's decompressed storages may take, e.g. 4G (default: half the "
     "physical memory); a file over it leaves its row uncompared with a warning"},
};

std::string DisplayNames(const OptionSpec& o) {
  std::string names;
  if (o.msprobe_short != nullptr) names = std::string(o.msprobe_short) + ", ";
  std::string longs = o.names;
  for (size_t pos = 0; (pos = longs.find(',', pos)) != std::string::npos; pos += 2) {
    longs.replace(pos, 1, ", ");
  }
  names += longs;
  if (o.value != nullptr) names += std::string(" ") + o.value;
  return names;
}

void PrintHelp() {
  std::printf(
      "Compare a target dump against a golden dump, as msprobe compare does, and name the op "
      "where they start to diverge. The golden run is the reference and comes second, as B does "
      "in numprobe diff A B and config-check compare A B.\n"
      "Usage: numprobe compare -tp TARGET -gp GOLDEN [options]\n\nOptions:\n");
  std::vector<std::pair<std::string, std::string>> lines = {{"-h, --help", "Print this help"}};
  for (const OptionSpec& o : kOptions) lines.emplace_back(DisplayNames(o), o.help);
  size_t width = 0;
  for (const auto& [names, help] : lines) width = std::max(width, names.size());
  for (const auto& [names, help] : lines) {
    std::printf("  %-*s  %s\n", static_cast<int>(width), names.c_str(), help.c_str());
  }
  std::printf(
      "\nWrites compare_result_{rank}_{timestamp}.csv (msprobe's columns and formats) and a .json "
      "twin per compared rank, and divergence_{timestamp}.json: the first op, in execution order, "
      "whose inputs agree with the golden run within their dtype's tolerance but whose output does "
      "not (or whose error grows far beyond its inputs').\nExit status: 0 no divergence, 1 "
      "divergence or ranks on one side only, 2 usage, 3 unreadable or malformed input.\n");
}

// msprobe's short spellings -> long names ("-tp" -> "--target_path"; "-tp=x" too).
std::vector<std::string> RewriteArgs(const std::vector<std::string>& args) {
  std::vector<std::pair<std::string, std::string>> names;
  for (const OptionSpec& o : kOptions) {
    if (o.msprobe_short == nullptr) continue;
    names.emplace_back(o.msprobe_short,
                       std::string(o.names).substr(0, std::string(o.names).find(',')));
  }
  return RewriteShortOptions(args, names);
}

void PrintDivergence(const std::string& label, const DivergenceReport& r) {
  if (!r.first.has_value()) {
    // (The analysis names an op whenever a row is over its tolerance.)
    std::printf("  no divergence: every compared row within its dtype tolerance (%lld ops)\n",
                static_cast<long long>(r.ops_examined));
    return;
  }
  const DivergenceOp& op = *r.first;
  std::printf("  first divergence: %s%s%s (%s, dump entry %u, rule %s)\n", label.c_str(),
              label.empty() ? "" : " ", op.op_name.c_str(), op.backward ? "backward" : "forward",
              op.entry, op.rule.c_str());
  std::printf("    %s\n", op.reason.c_str());
  if (!op.module_path.empty()) {
    std::string path;
    for (const std::string& m : op.module_path) path += (path.empty() ? "" : " > ") + m;
    std::printf("    in: %s\n", path.c_str());
  }
  if (!op.at.empty()) std::printf("    at: %s\n", op.at.c_str());
  if (!r.next.empty()) {
    std::string next;
    for (const DivergenceOp& n : r.next) {
      next +=
          (next.empty() ? "" : ", ") + n.op_name +
          (std::isinf(n.growth) ? std::string(" (NaN/Inf)") : fmt::format(" ({:.1f}x)", n.growth));
    }
    std::printf("    next by error growth: %s\n", next.c_str());
  }
  // The first op whose output is over its dtype's tolerance, when the lines above do not name
  // it: a precision verdict names where a lower precision starts losing accuracy, which can be
  // long before the first row that fails in the table.
  const std::string& over = r.first_over_tolerance;
  const bool named = over.empty() || over == op.op_name ||
                     std::any_of(r.next.begin(), r.next.end(),
                                 [&](const DivergenceOp& n) { return n.op_name == over; });
  if (!named) std::printf("    first output over its dtype's tolerance: %s\n", over.c_str());
}

// compare reads dump trees; a tensor file given instead would be read as a dump.json ("malformed
// JSON at byte 0"). Weight and tensor files are compared by `numprobe diff`: say so.
Status CheckNotTensorFiles(const CompareArgs& args) {
  for (const std::string& given : {args.target, args.golden}) {
    const fs::path path(given);
    std::error_code ec;
    if (!fs::is_regular_file(path, ec) || path.extension() == ".json") continue;
    const auto buffer = Buffer::MapFile(path);
    if (!buffer) continue;  // reading it reports the error
    const FileFormat format = DetectFormat((*buffer)->bytes(), path);
    if (format == FileFormat::kUnknown) continue;
    return Status::InvalidArgument(fmt::format(
        "{} is a tensor file ({}), not an msprobe dump; compare takes dump trees or dump.json. "
        "To compare the tensors of two files, run: numprobe diff {} {}",
        given, EnumName(format), args.target, args.golden));
  }
  return Status::Ok();
}

// The tensor-pair progress bar on a terminal's stderr: every 16 pairs and the last, then cleared.
void DrawProgress(uint64_t done, uint64_t total, std::string_view what) {
  static std::mutex mu;
  if (total <= 1 || (done % 16 != 0 && done != total)) return;
  const std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "\rcompare: %llu/%llu %.*s", static_cast<unsigned long long>(done),
               static_cast<unsigned long long>(total), static_cast<int>(what.size()), what.data());
  if (done == total) std::fprintf(stderr, "\r%*s\r", 60, "");
}

// One compared rank's lines: its counts, its table file, its warnings and its divergence.
void PrintRank(const std::string& label, CompareMode mode, int64_t rows,
               std::map<Verdict, int64_t> counts, const fs::path& table_file,
               const std::vector<std::string>& warnings, const DivergenceReport& report) {
  std::printf("%s: %s mode, %lld rows: %lld pass, %lld warning, %lld error, %lld unmatched\n",
              label.c_str(), std::string(EnumName(mode)).c_str(), static_cast<long long>(rows),
              static_cast<long long>(counts[Verdict::kPass]),
              static_cast<long long>(counts[Verdict::kWarning]),
              static_cast<long long>(counts[Verdict::kError]),
              static_cast<long long>(counts[Verdict::kUnmatched]));
  std::printf("  wrote %s (and .json)\n", table_file.string().c_str());
  for (const std::string& w : warnings) ReportWarning(fmt::format("{}: {}", label, w));
  PrintDivergence("", report);
}

// The closing lines: ranks on one side only, the earliest divergence across ranks (`earliest`
// null when none), the divergence file.
void PrintEnd(size_t ranks, const std::vector<MissingRank>& missing,
              const std::string& earliest_label, const DivergenceReport* earliest,
              const fs::path& divergence_file) {
  for (const MissingRank& m : missing) std::printf("%s; not compared\n", m.Text().c_str());
  if (ranks > 1 && earliest != nullptr) {
    std::printf("earliest divergence across ranks: %s %s\n", earliest_label.c_str(),
                earliest->first->op_name.c_str());
  }
  std::printf("wrote %s\n", divergence_file.string().c_str());
}

#ifdef NUMPROBE_WITH_MPI
// Under mpirun/srun: the rank pairs spread over the MPI processes (app/cluster.h). Process 0
// alone prints (progress, warnings, the summary, the error); every process exits with the same
// code.
int RunClusterCompare(const CompareArgs& args, CompareTreesOptions options) {
  auto session = ClusterSession::Start();
  if (!session) return ReportError(session.error());
  const ClusterSession& cluster = **session;
  options.timestamp = cluster.Broadcast(options.timestamp);  // one {ts} for every process's files
  if (!cluster.leader()) {
    options.warning = nullptr;
    options.compare.progress = nullptr;
  }
  auto result = ClusterCompareDumpTrees(cluster, args.target, args.golden, options);
  if (!result) {
    const Status error = result.error();
    if (cluster.leader()) return ReportError(error);
    return error.code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitBadInput;
  }
  const int code = result->findings() ? kExitFindings : kExitOk;
  if (!cluster.leader()) return code;
  std::printf("numprobe compare: %s (target) vs %s (golden, the reference)\n", args.target.c_str(),
              args.golden.c_str());
  std::printf("%d MPI processes; bytes read per process: %s\n", cluster.processes(),
              fmt::format("{}", fmt::join(result->bytes_per_process, ", ")).c_str());
  for (const ClusterRank& r : result->ranks) {
    PrintRank(r.label, r.mode, r.rows, r.verdicts, r.table_file, r.warnings, r.report);
  }
  const ClusterRank* earliest =
      result->earliest >= 0 ? &result->ranks[static_cast<size_t>(result->earliest)] : nullptr;
  PrintEnd(result->ranks.size(), result->missing,
           earliest != nullptr ? earliest->label : std::string(),
           earliest != nullptr ? &earliest->report : nullptr, result->divergence_file);
  return code;
}
#endif

int RunCompare(const CompareArgs& args) {
  if (args.threads < 0) return ReportError(Status::InvalidArgument("--threads must be >= 0"));
  if (args.threads > 0) ThreadPool::SetDefaultThreads(args.threads);
  if (IsGraphDumpPath(args.target) && IsGraphDumpPath(args.golden)) {
    return RunGraphCompare(args.target, args.golden, args.output, args.xlsx);
  }
  CompareTreesOptions options;
  auto max_memory = MaxMemoryBytes(args.max_memory);
  if (!max_memory) return ReportError(max_memory.error());
  options.compare.max_memory = *max_memory;
  CompareMapping& mapping = options.compare.mapping;
  mapping.fuzzy = args.fuzzy;
  mapping.align = !args.no_align;
  mapping.data_mapping_file = args.data_mapping;
  mapping.cell_mapping = args.cell_option != nullptr && args.cell_option->count() > 0;
  mapping.cell_mapping_file = args.cell_mapping;
  mapping.api_mapping = args.api_option != nullptr && args.api_option->count() > 0;
  mapping.api_mapping_file = args.api_mapping;
  mapping.layer_mapping_file = args.layer_mapping;
  if (::isatty(2) != 0) options.compare.progress = DrawProgress;
  options.output = args.output;
  options.timestamp = FileTimestamp();
  options.xlsx = args.xlsx;
  options.diff_analyze = args.diff_analyze;
  options.warning = ReportWarning;
  if (Status s = CheckNotTensorFiles(args); !s.ok()) return ReportError(s);
#ifdef NUMPROBE_WITH_MPI
  if (LaunchedUnderMpi()) return RunClusterCompare(args, options);
#endif
  auto result = CompareDumpTrees(args.target, args.golden, options);
  if (!result) return ReportError(result.error());

  std::printf("numprobe compare: %s (target) vs %s (golden, the reference)\n", args.target.c_str(),
              args.golden.c_str());
  for (const RankCompare& r : result->ranks) {
    std::map<Verdict, int64_t> counts;
    for (const CompareRow& row : r.table.rows) ++counts[row.result];
    PrintRank(r.label, r.table.mode, static_cast<int64_t>(r.table.rows.size()), counts,
              r.table_file, r.table.warnings, r.report);
  }
  const RankCompare* earliest =
      result->earliest >= 0 ? &result->ranks[static_cast<size_t>(result->earliest)] : nullptr;
  PrintEnd(result->ranks.size(), result->missing,
           earliest != nullptr ? earliest->label : std::string(),
           earliest != nullptr ? &earliest->report : nullptr, result->divergence_file);
  return result->findings() ? kExitFindings : kExitOk;
}

int RunCompareArgs(const std::vector<std::string>& raw) {
  for (const std::string& a : raw) {
    if (a == "-h" || a == "--help") {
      PrintHelp();
      return kExitOk;
    }
  }
  CompareArgs args;
  CLI::App parser{"numprobe compare"};
  parser.set_help_flag();
  for (const OptionSpec& o : kOptions) {
    const std::string names = o.names;
    if (names == "--target_path,--target") {
      parser.add_option(names, args.target)->required();
    } else if (names == "--golden_path,--golden") {
      parser.add_option(names, args.golden)->required();
    } else if (names == "--output_path") {
      parser.add_option(names, args.output);
    } else if (names == "--threads") {
      parser.add_option(names, args.threads);
    } else if (names == "--max-memory") {
      parser.add_option(names, args.max_memory);
    } else if (names == "--diff_analyze") {
      parser.add_flag(names, args.diff_analyze);
    } else if (names == "--fuzzy_match") {
      parser.add_flag(names, args.fuzzy);
    } else if (names == "--data_mapping") {
      parser.add_option(names, args.data_mapping);
    } else if (names == "--cell_mapping") {
      args.cell_option = parser.add_option(names, args.cell_mapping)->expected(0, 1);
    } else if (names == "--api_mapping") {
      args.api_option = parser.add_option(names, args.api_mapping)->expected(0, 1);
    } else if (names == "--layer_mapping") {
      parser.add_option(names, args.layer_mapping);
    } else if (names == "--no_align") {
      parser.add_flag(names, args.no_align);
    } else if (names == "--xlsx") {
      parser.add_flag(names, args.xlsx);
    }
  }
  std::vector<std::string> rewritten = RewriteArgs(raw);
  std::reverse(rewritten.begin(), rewritten.end());  // CLI11 parses a reversed vector
  try {
    parser.parse(rewritten);
  } catch (const CLI::ExtrasError&) {
    std::vector<std::string> names = {"-h", "--help"};
    for (const OptionSpec& o : kOptions) {
      if (o.msprobe_short != nullptr) names.emplace_back(o.msprobe_short);
      for (const std::string& n : CLI::detail::split(o.names, ',')) names.push_back(n);
    }
    std::string message;
    for (const std::string& e : parser.remaining()) {
      if (e.size() > 1 && e[0] == '-') {
        message = UnknownOptionText(e, names);
        break;
      }
    }
    if (message.empty()) {
      message = parser.remaining().empty()
                    ? std::string("unexpected arguments")
                    : "unexpected argument '" + parser.remaining().front() + "'";
    }
    std::fprintf(stderr, "numprobe compare: %s\nRun 'numprobe compare --help' for the options.\n",
                 message.c_str());
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    for (const OptionSpec& o : kOptions) {
      if (o.msprobe_short == nullptr) continue;
      const std::string first_long = std::string(o.names).substr(0, std::string(o.names).find(','));
      const size_t pos = message.find(first_long);
      if (pos != std::string::npos && message.find("required") != std::string::npos) {
        message.replace(pos, first_long.size(), std::string(o.msprobe_short) + "/" + first_long);
      }
    }
    std::fprintf(stderr, "numprobe compare: %s\nRun 'numprobe compare --help' for the options.\n",
                 message.c_str());
    return kExitUsage;
  }
  return RunCompare(args);
}

}  // namespace

void SetupCompare(CLI::App& app, int* exit_code) {
  CLI::App* sub = app.add_subcommand(
      "compare", "Target vs golden dump, op by op (msprobe compare): the first divergence");
  // Arguments are parsed by RunCompareArgs (see the top of this file).
  sub->set_help_flag();
  sub->allow_extras();
  sub->prefix_command();
  sub->callback([sub, exit_code] { *exit_code = RunCompareArgs(sub->remaining()); });
}

}  // namespace numprobe::cli
