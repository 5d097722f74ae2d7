// numprobe diff A B [--map MAP.json] [--rtol R] [--atol A] [--align MODE] [--all] [--inert]
// [-o DIR]: tensors of two files or folders across frameworks (TroubleShooter's weight compare).
// B is the reference, as compare's golden (-gp) is: relative figures divide by B.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "numprobe/diff.h"
#include "numprobe/dump_layout.h"
#include "numprobe/thread_pool.h"

#include "cli.h"

namespace numprobe::cli {
namespace {

namespace fs = std::filesystem;

struct DiffArgs {
  std::string a;
  std::string b;
  std::string map;
  double rtol = 1e-4;
  double atol = 1e-4;
  std::string align = "auto";
  bool all = false;
  bool inert = false;
  std::string output;
  int threads = 0;
};

std::string Shape(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// TroubleShooter's display: the ratio as a percentage with 2 decimals, figures with 5.
std::string Fig(double v) { return fmt::format("{:.5g}", v); }

void PrintRows(const DiffReport& report, bool all) {
  struct Line {
    std::vector<std::string> cells;
  };
  std::vector<Line> lines = {
      {{"name A", "name B", "rule", "shape A", "shape B", "allclose", "ratio", "cosine",
        "mean|diff|", "max|diff|", "max rel", "RMSE", "ULP"}}};
  for (const DiffRow& r : report.rows) {
    if (!all && r.compared() && r.verdict == Verdict::kPass) continue;
    const NamedTensor& a = report.a.tensors[r.pair.a];
    const NamedTensor& b = report.b.tensors[r.pair.b];
    Line line{{a.name, b.name, std::string(EnumName(r.pair.rule)), Shape(a.tensor.shape()),
               Shape(b.tensor.shape())}};
    if (r.compared()) {
      const DiffMetrics& m = r.metrics;
      for (std::string cell :
           {std::string(m.allclose ? "True" : "False"),
            fmt::format("{:.2f}%", m.allclose_ratio * 100), Fig(m.cosine), Fig(m.mean_abs),
            Fig(m.max_abs), Fig(m.max_rel), Fig(m.rmse),
            std::isnan(m.max_ulp) ? std::string("-") : fmt::format("{:g}", m.max_ulp)}) {
        line.cells.push_back(std::move(cell));
      }
    } else {
      line.cells.push_back(std::string(DiffStatusText(r)) + (r.note.empty() ? "" : ": " + r.note));
    }
    lines.push_back(std::move(line));
  }
  if (lines.size() == 1) return;
  std::vector<size_t> width(lines[0].cells.size(), 0);
  for (const Line& l : lines) {
    for (size_t c = 0; c < l.cells.size(); ++c) {
      // A short row's last cell (a status) spans the metric columns: it sets no width.
      if (c + 1 < l.cells.size() || l.cells.size() == width.size()) {
        width[c] = std::max(width[c], l.cells[c].size());
      }
    }
  }
  for (const Line& l : lines) {
    std::string text = " ";
    for (size_t c = 0; c < l.cells.size(); ++c) {
      text += c + 1 == l.cells.size() ? l.cells[c] : fmt::format("{:<{}}  ", l.cells[c], width[c]);
    }
    std::printf("%s\n", text.c_str());
  }
}

void PrintUnpaired(const DiffSource& s, const std::vector<size_t>& idx, const char* side) {
  if (idx.empty()) return;
  std::printf("only in %s (%zu):\n", side, idx.size());
  for (size_t i : idx) {
    const NamedTensor& t = s.tensors[i];
    std::printf("  %s %s %s%s\n", t.name.c_str(), Shape(t.tensor.shape()).c_str(),
                std::string(Name(t.tensor.dtype())).c_str(),
                IsFrameworkOnlyName(t.name) ? "  (PyTorch-only buffer, not counted)" : "");
  }
}

// An msprobe dump tree (dump.json in it, or in its rank or step folders).
bool IsDumpTree(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && DiscoverDumpPairs(path, path).ok();
}

std::string CompareHint(const DiffArgs& args) {
  return fmt::format(
      "numprobe compare -tp {} -gp {} compares dump trees op by op and names the first divergence",
      args.a, args.b);
}

// A load error with what to do about it: a whole pickled object (torch.save(model)) that --inert
// reads, or a dump tree (a statistics dump has no tensor files) that compare reads.
Status Explained(const Status& error, const DiffArgs& args, const std::string& path) {
  Status hinted = WithInertHint(
      error, args.inert, [&](const ReadOptions& o) { return LoadDiffSource(path, o).ok(); });
  if (hinted.message() != error.message()) return hinted;
  if (IsDumpTree(path)) {
    return error.WithNote(fmt::format("{} is an msprobe dump tree; {}", path, CompareHint(args)));
  }
  return error;
}

int RunDiff(const DiffArgs& args) {
  if (args.threads < 0) return ReportError(Status::InvalidArgument("--threads must be >= 0"));
  if (args.threads > 0) ThreadPool::SetDefaultThreads(args.threads);
  static const std::map<std::string, AlignMode> kAlign = {
      {"auto", AlignMode::kAuto}, {"always", AlignMode::kAlways}, {"never", AlignMode::kNever}};
  DiffOptions options;
  options.rtol = args.rtol;
  options.atol = args.atol;
  options.pairing.align = kAlign.at(args.align);
  NameMap map;
  if (!args.map.empty()) {
    auto m = ReadNameMap(args.map);
    if (!m) return ReportError(m.error());
    map = std::move(*m);
    options.pairing.map = &map;
  }
  ReadOptions read;
  read.inert_pickle = args.inert;
  auto a = LoadDiffSource(args.a, read);
  if (!a) return ReportError(Explained(a.error(), args, args.a));
  auto b = LoadDiffSource(args.b, read);
  if (!b) return ReportError(Explained(b.error(), args, args.b));
  if (IsDumpTree(args.a) && IsDumpTree(args.b)) {
    std::fprintf(stderr, "numprobe: note: A and B are msprobe dump trees; %s\n",
                 CompareHint(args).c_str());
  }
  auto report = DiffSources(std::move(*a), std::move(*b), options);
  if (!report) return ReportError(report.error());
  const DiffReport& r = *report;

  if (!args.output.empty()) {
    std::error_code ec;
    fs::create_directories(args.output, ec);
    if (ec) {
      return ReportError(Status::IoError(fmt::format("{}: {}", args.output, ec.message())));
    }
    const fs::path dir = args.output;
    Status s = WriteDiffValuesCsv(r, dir / "diff_values.csv");
    if (s.ok()) s = WriteDiffShapesCsv(r, dir / "diff_shapes.csv");
    if (s.ok()) s = WriteDiffJson(r, dir / "diff.json");
    if (!s.ok()) return ReportError(s);
  }
  for (const std::string& w : r.a.warnings) ReportWarning(w);
  for (const std::string& w : r.b.warnings) ReportWarning(w);
  for (const std::string& w : r.warnings) ReportWarning(w);

  std::printf("A (target): %s (%s, %zu tensors)\nB (reference): %s (%s, %zu tensors)\n",
              r.a.path.string().c_str(), r.a.kind.c_str(), r.a.tensors.size(),
              r.b.path.string().c_str(), r.b.kind.c_str(), r.b.tensors.size());
  std::map<PairRule, int64_t> by_rule;
  for (const DiffRow& row : r.rows) ++by_rule[row.pair.rule];
  std::string rules;
  for (const auto& [rule, n] : by_rule) {
    rules += fmt::format("{}{} {}", rules.empty() ? "" : ", ", n, EnumName(rule));
  }
  std::printf(
      "%zu pairs%s%s%s: %lld equal, %lld differ, %lld shape mismatch, %lld not compared "
      "(rtol %g, atol %g); %zu only in A, %zu only in B\n",
      r.rows.size(), rules.empty() ? "" : " (", rules.c_str(), rules.empty() ? "" : ")",
      static_cast<long long>(r.CountCompared(Verdict::kPass)),
      static_cast<long long>(r.CountCompared(Verdict::kError)),
      static_cast<long long>(r.CountSkipped(DiffSkip::kShapeMismatch)),
      static_cast<long long>(r.CountSkipped(DiffSkip::kUnsupported)), r.rtol, r.atol,
      r.only_a.size(), r.only_b.size());
  PrintRows(r, args.all);
  PrintUnpaired(r.a, r.only_a, "A");
  PrintUnpaired(r.b, r.only_b, "B");
  if (!args.output.empty()) {
    std::printf("wrote %s/{diff_values.csv, diff_shapes.csv, diff.json}\n", args.output.c_str());
  }
  return r.clean() ? kExitOk : kExitFindings;
}

}  // namespace

void SetupDiff(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* sub = app.add_subcommand(
      "diff", "Weights and tensors of two files or folders, across frameworks (B = reference)");
  sub->add_option("A", args->a, "Target: the file or folder under test")->required();
  sub->add_option("B", args->b,
                  "Reference (golden), second as in compare -tp TARGET -gp GOLDEN: relative "
                  "figures divide by B")
      ->required();
  sub->add_option("--map", args->map,
                  R"(Name map JSON: {"a_name": "b_name"} or TroubleShooter's weight map list)");
  const CLI::Validator non_negative(
      [](const std::string& text) {
        double v = 0;
        return CLI::detail::lexical_cast(text, v) && v >= 0 ? std::string()
                                                            : "must be a number >= 0, got " + text;
      },
      "TOL");
  sub->add_option("--rtol", args->rtol, "Relative tolerance of allclose (default 1e-4)")
      ->check(non_negative);
  sub->add_option("--atol", args->atol, "Absolute tolerance of allclose (default 1e-4)")
      ->check(non_negative);
  sub->add_option("--align", args->align,
                  "Shape-sequence alignment of tensors left unpaired: auto (only when no name "
                  "matched), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  sub->add_flag("--all", args->all, "Print every pair, not only those that differ");
  sub->add_flag("--inert", args->inert,
                "Read whole pickled objects (torch.save(model)): tensors are extracted, other "
                "classes become opaque objects (nothing runs)");
  sub->add_option("-o,--output", args->output,
                  "Write diff_values.csv, diff_shapes.csv and diff.json into DIR");
  sub->add_option("--threads", args->threads, "Worker threads (default: all hardware threads)");
  sub->footer(
      "A and B: .pt/.pth, .ckpt, .safetensors, .npz, folders of .npy files, tensor dump trees. "
      "Tensors pair by name, PyTorch<->MindSpore parameter rules, --map, or shape alignment.\n"
      "Exit status: 0 all pairs equal, 1 a pair differs or a tensor is unpaired, 2 usage, 3 "
      "unreadable or malformed input.");
  sub->callback([args, exit_code] { *exit_code = RunDiff(*args); });
}

}  // namespace numprobe::cli
