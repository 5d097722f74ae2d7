#include "ui/findings.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/ascii_case.h"
#include "msprobe/entry_name.h"

namespace numprobe::ui {

namespace {

constexpr size_t kCulprits = 6;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

bool IsModule(std::string_view entry) { return entry.starts_with("Module."); }
bool IsBackward(std::string_view entry) {
  const detail::EntryDirection d = detail::ParseEntryName(entry).direction;
  return d == detail::EntryDirection::kBackward || d == detail::EntryDirection::kParametersGrad;
}

// The part of a row name after its entry: "output.0".
std::string_view Leaf(std::string_view row_name, std::string_view entry) {
  return row_name.size() > entry.size() + 1 ? row_name.substr(entry.size() + 1) : row_name;
}

std::string_view NameOf(const ResultStore& store, uint32_t row) {
  const Cell c = store.Get(row, store.name_column());
  return c.is_number ? std::string_view() : c.text;
}

}  // namespace

bool IsNonFiniteText(std::string_view text) {
  const std::string_view t = Trim(text);
  if (t.size() < 3 || t.size() > 9) return false;
  const std::string lower = detail::AsciiLowered(t);
  return lower == "nan" || lower == "inf" || lower == "-inf" || lower == "+inf" ||
         lower == "infinity" || lower == "-infinity";
}

Findings AnalyzeFindings(const ResultStore& store) {
  Findings out;
  const auto& entries = store.entry_names();
  const bool has_result = store.ColumnIndex("Result") >= 0;
  std::vector<int> stat_columns;
  for (const char* name : {"NPU max", "NPU min", "NPU mean", "NPU l2norm"}) {
    const int c = store.ColumnIndex(name);
    if (c >= 0) stat_columns.push_back(c);
  }
  auto nonfinite = [&](uint32_t row) {
    for (const int c : stat_columns) {
      const Cell cell = store.Get(row, c);
      if (!cell.is_number && IsNonFiniteText(cell.text)) return true;
    }
    return false;
  };

  // Candidates per severity: [level][pass 0..3] where passes are forward APIs, forward modules,
  // backward APIs, backward modules.
  std::vector<Culprit> found[2][4];
  std::optional<Culprit> first_failing;
  for (uint32_t e = 0; e < entries.size(); ++e) {
    const std::string& entry = entries[e];
    Verdict inputs = Verdict::kNone;
    Verdict outputs = Verdict::kNone;
    std::vector<uint32_t> bad_outputs;
    bool inputs_finite = true;
    std::vector<uint32_t> nonfinite_outputs;
    for (const uint32_t row : store.entry_rows(e)) {
      const std::string_view name = NameOf(store, row);
      const bool is_input = IsInputRowName(name, entry);
      const Verdict level = store.level(row);
      if (is_input) {
        inputs = Worse(inputs, level);
        if (nonfinite(row)) inputs_finite = false;
      } else {
        outputs = Worse(outputs, level);
        if (level == Verdict::kError || level == Verdict::kWarning) bad_outputs.push_back(row);
        if (nonfinite(row)) nonfinite_outputs.push_back(row);
      }
    }
    if (!out.first_anomaly && inputs_finite && !nonfinite_outputs.empty()) {
      Culprit c;
      c.entry = e;
      c.level = Verdict::kError;
      c.rows = nonfinite_outputs;
      c.why = fmt::format("inputs finite; {} non-finite", Leaf(NameOf(store, c.rows[0]), entry));
      out.first_anomaly = std::move(c);
    }
    if (!has_result) continue;
    const Verdict entry_worst = Worse(inputs, outputs);
    if (!first_failing && entry_worst == Verdict::kError) {
      Culprit c;
      c.entry = e;
      c.level = Verdict::kError;
      for (const uint32_t row : store.entry_rows(e)) {
        if (store.level(row) == Verdict::kError) c.rows.push_back(row);
      }
      c.why = "first op with an error row (no op has agreeing inputs and a failing output)";
      first_failing = std::move(c);
    }
    const bool inputs_agree = inputs != Verdict::kWarning && inputs != Verdict::kError;
    if (!inputs_agree || (outputs != Verdict::kError && outputs != Verdict::kWarning)) continue;
    Culprit c;
    c.entry = e;
    c.level = outputs;
    for (const uint32_t row : bad_outputs) {
      if (store.level(row) == outputs) c.rows.push_back(row);
    }
    c.why = fmt::format("inputs {}; {} {}", inputs == Verdict::kNone ? "absent" : "pass",
                        Leaf(NameOf(store, c.rows[0]), entry), EnumName(outputs));
    const int severity = outputs == Verdict::kError ? 0 : 1;
    const int pass = (IsBackward(entry) ? 2 : 0) + (IsModule(entry) ? 1 : 0);
    found[severity][pass].push_back(std::move(c));
  }
  for (auto& by_pass : found) {
    for (auto& list : by_pass) {
      for (Culprit& c : list) {
        if (out.divergence.size() < kCulprits) out.divergence.push_back(std::move(c));
      }
    }
    if (!out.divergence.empty()) break;  // errors first; warnings only when there is no error
  }
  if (out.divergence.empty() && first_failing) {
    out.divergence.push_back(std::move(*first_failing));
    out.divergence_fallback = true;
  }
  return out;
}

void ApplyAnalysis(const ResultStore& store, const DivergenceReport& report, Findings* findings) {
  findings->divergence.clear();
  findings->divergence_source = "analysis";
  findings->divergence_fallback = false;
  findings->first_over_tolerance = report.first_over_tolerance;
  const auto& names = store.entry_names();
  const int judgment = store.ColumnIndex("Judgment");
  auto add = [&](const DivergenceOp& op) {
    const auto it = std::find(names.begin(), names.end(), op.op_name);
    if (it == names.end()) return;
    Culprit c;
    c.entry = static_cast<uint32_t>(it - names.begin());
    c.why = op.reason;
    // The worst output first, then the op's other outputs over their tolerance.
    const auto worst = store.FindByName(op.worst_output);
    if (worst && store.entry(*worst) == c.entry) c.rows.push_back(*worst);
    Verdict level = Verdict::kWarning;  // over its tolerance, whatever msprobe's rules said
    for (const uint32_t row : store.entry_rows(c.entry)) {
      if (IsInputRowName(NameOf(store, row), op.op_name)) continue;
      level = Worse(level, store.level(row));
      const bool differs = judgment >= 0 && store.Get(row, judgment).text == "differs";
      if (differs && (c.rows.empty() || c.rows[0] != row)) c.rows.push_back(row);
    }
    c.level = op.non_finite ? Verdict::kError : level;
    c.analysis = op;
    findings->divergence.push_back(std::move(c));
  };
  if (report.first) add(*report.first);
  for (const DivergenceOp& op : report.next) {
    if (findings->divergence.size() >= kCulprits) break;
    add(op);
  }
}

}  // namespace numprobe::ui
