// numprobe config-check collect | compare: environment snapshots of runs and their differences
// (docs/config-check.md).
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "numprobe/config_check.h"

#include "cli.h"

namespace numprobe::cli {
namespace {

struct CollectCli {
  std::string output;
  std::vector<std::string> configs;
  std::vector<std::string> data;
  std::vector<std::string> weights;
  std::vector<std::string> set;
  std::vector<std::string> command;
  std::string python = "/usr/bin/python3";
  bool no_python = false;
  bool no_tensor_stats = false;
  int python_timeout = 120;
};

struct CompareCli {
  std::string a;
  std::string b;
  std::string out_dir = ".";
  bool xlsx = false;
};

int RunCollect(const CollectCli& o) {
  CollectOptions options;
  for (const auto& p : o.configs) options.configs.emplace_back(p);
  for (const auto& p : o.data) options.data.emplace_back(p);
  for (const auto& p : o.weights) options.weights.emplace_back(p);
  options.command = o.command;
  options.python = o.no_python ? "" : o.python;
  options.python_timeout_s = o.python_timeout;
  options.set = o.set;
  options.tensor_stats = !o.no_tensor_stats;
  auto snapshot = CollectSnapshot(options);
  if (!snapshot) return ReportError(snapshot.error());
  Status s = WriteSnapshot(*snapshot, o.output);
  if (!s.ok()) return ReportError(s);
  for (const auto& w : snapshot->warnings) ReportWarning(w);
  std::vector<std::string> counts;
  counts.reserve(kCheckCategoryCount);
  for (int c = 0; c < kCheckCategoryCount; ++c) {
    counts.push_back(
        fmt::format("{} {}", snapshot->items[c].size(), EnumName(static_cast<CheckCategory>(c))));
  }
  std::printf("numprobe config-check: wrote %s (%s)\n", o.output.c_str(),
              fmt::format("{}", fmt::join(counts, ", ")).c_str());
  return kExitOk;
}

std::string Shown(const std::optional<std::string>& v) {
  if (!v) return "(absent)";
  std::string text = *v;
  constexpr size_t kWidth = 48;
  if (text.size() > kWidth) text = text.substr(0, kWidth - 3) + "...";
  return text;
}

int RunCompare(const CompareCli& o) {
  auto a = ReadSnapshot(o.a);
  if (!a) return ReportError(a.error());
  auto b = ReadSnapshot(o.b);
  if (!b) return ReportError(b.error());
  const CheckReport report = CompareSnapshots(*a, *b, o.a, o.b);
  const std::string ts = FileTimestamp();
  const std::filesystem::path dir(o.out_dir);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return ReportError(
        Status::IoError(fmt::format("{}: cannot create folder: {}", dir.string(), ec.message())));
  }
  const auto csv = dir / fmt::format("config_check_{}.csv", ts);
  const auto json = dir / fmt::format("config_check_{}.json", ts);
  const auto xlsx = dir / fmt::format("config_check_{}.xlsx", ts);
  for (const Status& s : {WriteCheckCsv(report, csv), WriteCheckJson(report, json)}) {
    if (!s.ok()) return ReportError(s);
  }
  if (o.xlsx) {
    Status s = WriteCheckXlsx(report, xlsx);
    if (!s.ok()) return ReportError(s);
  }
  std::printf("numprobe config-check: %s (A, checked) vs %s (B, baseline)\n", o.a.c_str(),
              o.b.c_str());
  // A summary line per kind, then the differences, both in kCheckCategoryOrder (the report's).
  for (const CheckCategory category : kCheckCategoryOrder) {
    std::map<Verdict, int64_t> n;
    for (const CheckItem& i : report.items) {
      if (i.category == category) ++n[i.level];
    }
    std::printf("  %-16s %-8s %lld pass, %lld warning, %lld error\n",
                std::string(EnumName(category)).c_str(),
                std::string(EnumName(report.Summary(category))).c_str(),
                static_cast<long long>(n[Verdict::kPass]),
                static_cast<long long>(n[Verdict::kWarning]),
                static_cast<long long>(n[Verdict::kError]));
  }
  std::vector<const CheckItem*> diffs;
  for (const CheckItem& i : report.items) {
    if (i.level != Verdict::kPass) diffs.push_back(&i);
  }
  if (diffs.empty()) {
    std::printf("No differences.\n");
  } else {
    std::printf("Differences (%zu), A | B:\n", diffs.size());
    for (const CheckItem* i : diffs) {
      std::string name = i->name;
      if (!i->name_b.empty()) name += " ~ " + i->name_b;
      std::printf("  %-7s %-15s %s: %s | %s%s\n", std::string(EnumName(i->level)).c_str(),
                  std::string(EnumName(i->category)).c_str(), name.c_str(), Shown(i->a).c_str(),
                  Shown(i->b).c_str(),
                  i->note.empty() ? "" : fmt::format("  ({})", i->note).c_str());
    }
  }
  std::printf("Wrote %s, %s%s\n", csv.string().c_str(), json.string().c_str(),
              o.xlsx ? (", " + xlsx.string()).c_str() : "");
  return report.differs() ? kExitFindings : kExitOk;
}

}  // namespace

void SetupConfigCheck(CLI::App& app, int* exit_code, int* argc, char** argv) {
  CLI::App* cmd =
      app.add_subcommand("config-check", "Snapshot a run's environment, or compare two snapshots");
  cmd->require_subcommand(1);

  auto c = std::make_shared<CollectCli>();
  CLI::App* collect = cmd->add_subcommand(
      "collect",
      "Write a snapshot: env (secrets masked), versions, seeds, hyperparameters, "
      "data and weight fingerprints");
  collect->add_option("-o,--output", c->output, "snapshot file to write (JSON)")->required();
  collect->add_option("--config", c->configs, "hyperparameter files (.json, .yaml, .yml, .sh)");
  collect->add_option("--data", c->data,
                      "dataset files or folders to fingerprint, PATH or LABEL=PATH; items are "
                      "named by LABEL (default data1, data2, ... by position), not by file name");
  collect->add_option("--weights", c->weights,
                      "weight files or folders to fingerprint, PATH or LABEL=PATH; items are "
                      "named by LABEL (default weights1, weights2, ... by position), so that "
                      "w_A.pt in one run compares with w_B.pt in the other");
  collect->add_option("--python", c->python, "interpreter asked for versions and torch flags")
      ->capture_default_str();
  collect->add_flag("--no-python", c->no_python, "do not run Python");
  collect->add_option("--python-timeout", c->python_timeout, "seconds allowed to the interpreter")
      ->capture_default_str();
  collect->add_option("--set", c->set,
                      "extra facts CATEGORY.NAME=VALUE (e.g. random.seed=1234 from a script)");
  collect->add_flag("--no-tensor-stats", c->no_tensor_stats,
                    "fingerprint tensor files by SHA-256 only");
  collect->footer(
      "The run's command line follows \"--\" and is kept verbatim: ... -- python train.py --lr "
      "0.1");
  collect->callback([c, exit_code]() { *exit_code = RunCollect(*c); });
  // CLI11 lets "--" end a list option ("--config a.yaml b.yaml -- python ..."), so the command is
  // cut off argv here, before parsing: everything after the first "--" that follows
  // "config-check collect".
  if (argc != nullptr && argv != nullptr) {
    for (int i = 1; i + 1 < *argc; ++i) {
      if (std::string_view(argv[i]) != "config-check") continue;
      if (std::string_view(argv[i + 1]) != "collect") break;
      for (int j = i + 2; j < *argc; ++j) {
        if (std::string_view(argv[j]) != "--") continue;
        c->command.assign(argv + j + 1, argv + *argc);
        *argc = j;
        break;
      }
      break;
    }
  }

  auto p = std::make_shared<CompareCli>();
  CLI::App* compare = cmd->add_subcommand(
      "compare",
      "Compare two snapshots: A the run to check, B the baseline (second, as in compare)");
  compare->add_option("A", p->a, "snapshot of the run to check")->required();
  compare
      ->add_option("B", p->b,
                   "baseline snapshot: the reference, second as in numprobe compare -tp "
                   "TARGET -gp GOLDEN and numprobe diff A B")
      ->required();
  compare->add_option("-o,--output", p->out_dir, "folder for the CSV/JSON/XLSX (default: .)");
  compare->add_flag("--xlsx", p->xlsx, "also write an XLSX workbook");
  compare->footer(
      "Findings are listed by kind: hyperparameters, random (seeds and RNG), env, pip (packages), "
      "dataset, weights; each value as A | B.\nExit status: 0 everything passes, 1 a warning or "
      "an error, 2 usage, 3 unreadable or malformed snapshot.");
  compare->callback([p, exit_code]() { *exit_code = RunCompare(*p); });
}

}  // namespace numprobe::cli
