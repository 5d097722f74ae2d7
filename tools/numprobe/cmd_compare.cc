// numprobe compare -tp TARGET -gp GOLDEN [-o DIR] [--threads N]: msprobe's compare, with
// msprobe's spellings of the options (-tp, -gp, ...), which CLI11 cannot declare (its short names
// are one character), so the subcommand's arguments are rewritten to long names and parsed by a
// private CLI11 app, and --help is printed from the same option table.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "numprobe/buffer.h"
#include "numprobe/compare.h"
#include "numprobe/compare_mapping.h"
#include "numprobe/compare_writer.h"
#include "numprobe/divergence.h"
#include "numprobe/dump_layout.h"
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

std::string Timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%d%H%M%S", &tm);
  return buf;
}

std::string PairLabel(const DumpPair& p) {
  std::string label = p.scope;
  if (!p.rank.empty()) label = label.empty() ? p.rank : label + "/" + p.rank;
  return label.empty() ? "dump.json" : label;
}

struct Done {
  DumpPair pair;
  CompareTable table;
  DivergenceReport report;
};

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
        given, FormatName(format), args.target, args.golden));
  }
  return Status::Ok();
}

int RunCompare(const CompareArgs& args) {
  if (args.threads < 0) return ReportError(Status::InvalidArgument("--threads must be >= 0"));
  if (args.threads > 0) ThreadPool::SetDefaultThreads(args.threads);
  if (IsGraphDumpPath(args.target) && IsGraphDumpPath(args.golden)) {
    return RunGraphCompare(args.target, args.golden, args.output, args.xlsx);
  }
  CompareOptions options;
  auto max_memory = MaxMemoryBytes(args.max_memory);
  if (!max_memory) return ReportError(max_memory.error());
  options.max_memory = *max_memory;
  CompareMapping& mapping = options.mapping;
  mapping.fuzzy = args.fuzzy;
  mapping.align = !args.no_align;
  if (!args.data_mapping.empty()) {
    auto map = LoadStringMap(args.data_mapping);
    if (!map) return ReportError(map.error());
    mapping.data_mapping = true;
    mapping.data_map = std::move(*map);
  }
  if (args.cell_option != nullptr && args.cell_option->count() > 0) {
    mapping.cell_mapping = true;
    if (!args.cell_mapping.empty()) {
      auto map = LoadStringMap(args.cell_mapping);
      if (!map) return ReportError(map.error());
      mapping.cell_map = std::move(*map);
    }
  }
  if (args.api_option != nullptr && args.api_option->count() > 0) {
    mapping.api_mapping = true;
    if (!args.api_mapping.empty()) {
      auto map = LoadApiArgMappings(args.api_mapping);
      if (!map) return ReportError(map.error());
      mapping.api_args = std::move(*map);
    }
  }
  if (!args.layer_mapping.empty()) {
    auto map = LoadLayerMapping(args.layer_mapping);
    if (!map) return ReportError(map.error());
    mapping.layer_mapping = true;
    mapping.layer_map = std::move(*map);
  }
  if (Status s = CheckNotTensorFiles(args); !s.ok()) return ReportError(s);
  auto pairs = DiscoverDumpPairs(args.target, args.golden);
  if (!pairs) return ReportError(pairs.error());

  // Compare everything before writing anything: a bad input leaves no partial results behind.
  // With at least as many rank pairs as threads, ranks run in parallel (each rank's rows then run
  // on its own thread); otherwise ranks run one after another, each using every thread.
  std::vector<const DumpPair*> complete;
  size_t skipped = 0;
  for (const DumpPair& p : *pairs) {
    if (!p.complete()) continue;
    // msprobe writes dump.json as {} for a rank that recorded nothing and skips that rank.
    const bool empty_target = IsEmptyDumpJson(p.target->dump_json);
    if (empty_target || IsEmptyDumpJson(p.golden->dump_json)) {
      ReportWarning(fmt::format("{}: {} is {{}} (the rank recorded nothing); skipped", PairLabel(p),
                                (empty_target ? p.target : p.golden)->dump_json.string()));
      ++skipped;
      continue;
    }
    complete.push_back(&p);
  }
  if (complete.empty() && skipped > 0) {
    return ReportError(Status::NotFound("nothing to compare: every dump.json is {}"));
  }
  std::vector<std::optional<Done>> results(complete.size());
  std::vector<Status> errors(complete.size());
  auto compare_one = [&](int64_t k) {
    const DumpPair& p = *complete[static_cast<size_t>(k)];
    auto table = CompareDumps(*p.target, *p.golden, options);
    if (!table) {
      errors[static_cast<size_t>(k)] = table.error();
      return;
    }
    ConstructMap construct;
    if (!p.target->construct_json.empty()) {
      auto c = ReadConstructJson(p.target->construct_json);
      if (!c) {
        errors[static_cast<size_t>(k)] = c.error();
        return;
      }
      construct = std::move(*c);
    }
    DivergenceReport report = FindDivergence(*table, &construct);
    results[static_cast<size_t>(k)] = Done{p, std::move(*table), std::move(report)};
  };
  ThreadPool& pool = ThreadPool::Default();
  if (complete.size() > 1 && static_cast<int>(complete.size()) >= pool.threads()) {
    pool.ParallelFor(static_cast<int64_t>(complete.size()), compare_one);
  } else {
    for (size_t k = 0; k < complete.size(); ++k) compare_one(static_cast<int64_t>(k));
  }
  for (const Status& s : errors) {
    if (!s.ok()) return ReportError(s);
  }
  std::vector<Done> done;
  done.reserve(results.size());
  for (auto& r : results) done.push_back(std::move(*r));

  std::printf("numprobe compare: %s (target) vs %s (golden, the reference)\n", args.target.c_str(),
              args.golden.c_str());
  const std::string ts = Timestamp();
  for (const Done& d : done) {
    const fs::path dir = fs::path(args.output) / d.pair.scope;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return ReportError(Status::IoError(fmt::format("{}: {}", dir.string(), ec.message())));
    const std::string stem =
        "compare_result" + (d.pair.rank.empty() ? "" : "_" + d.pair.rank) + "_" + ts;
    const fs::path csv = dir / (stem + (args.xlsx ? ".xlsx" : ".csv"));
    const fs::path json = dir / (stem + ".json");
    Status s = args.xlsx ? WriteCompareXlsx(d.table, csv) : WriteCompareCsv(d.table, csv);
    if (s.ok()) {
      s = WriteCompareJson(d.table, json, d.pair.target->dump_json.string(),
                           d.pair.golden->dump_json.string());
    }
    if (!s.ok()) return ReportError(s);
    std::map<ResultLevel, int64_t> counts;
    for (const CompareRow& r : d.table.rows) ++counts[r.result];
    std::printf("%s: %s mode, %zu rows: %lld pass, %lld warning, %lld error, %lld unmatched\n",
                PairLabel(d.pair).c_str(), std::string(CompareModeName(d.table.mode)).c_str(),
                d.table.rows.size(), static_cast<long long>(counts[ResultLevel::kPass]),
                static_cast<long long>(counts[ResultLevel::kWarning]),
                static_cast<long long>(counts[ResultLevel::kError]),
                static_cast<long long>(counts[ResultLevel::kUnmatched]));
    std::printf("  wrote %s (and .json)\n", csv.string().c_str());
    for (const std::string& w : d.table.warnings) ReportWarning(PairLabel(d.pair) + ": " + w);
    PrintDivergence("", d.report);
  }
  std::vector<std::string> missing;
  for (const DumpPair& p : *pairs) {
    if (p.complete()) continue;
    const bool in_target = p.target.has_value();
    missing.push_back(fmt::format("{}: only in the {} dump ({})", PairLabel(p),
                                  in_target ? "target" : "golden",
                                  (in_target ? p.target->dir : p.golden->dir).string()));
    std::printf("%s; not compared\n", missing.back().c_str());
  }

  std::vector<RankDivergence> ranks;
  ranks.reserve(done.size());
  for (const Done& d : done) ranks.push_back({d.pair.scope, d.pair.rank, &d.table, d.report});
  std::error_code ec;
  fs::create_directories(args.output, ec);
  const fs::path divergence = fs::path(args.output) / ("divergence_" + ts + ".json");
  if (Status s = WriteDivergenceJson(ranks, missing, divergence); !s.ok()) return ReportError(s);
  if (args.diff_analyze) {
    const fs::path analyze = fs::path(args.output) / ("diff_analyze_" + ts + ".json");
    if (Status s = WriteDiffAnalyzeJson(ranks, analyze); !s.ok()) return ReportError(s);
  }
  const int earliest = EarliestDivergence(ranks);
  if (ranks.size() > 1 && earliest >= 0) {
    const RankDivergence& r = ranks[static_cast<size_t>(earliest)];
    std::printf("earliest divergence across ranks: %s %s\n",
                PairLabel(done[static_cast<size_t>(earliest)].pair).c_str(),
                r.report.first->op_name.c_str());
  }
  std::printf("wrote %s\n", divergence.string().c_str());
  return earliest >= 0 || !missing.empty() ? kExitFindings : kExitOk;
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
