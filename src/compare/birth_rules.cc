// The first-divergence rules (include/numprobe/divergence.h): which op the target run's error is
// born in, and the sentence that says why.
#include "compare/birth_rules.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "numprobe/compare_metrics.h"
#include "numprobe/dtype.h"

#include "compare/arguments.h"
#include "compare/dataflow.h"
#include "compare/user_frame.h"
#include "core/huge_pages.h"
#include "msprobe/entry_name.h"

namespace numprobe::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

std::optional<DType> DtypeOfName(const std::string& text) {
  if (auto d = DTypeFromTorchName(text)) return d;
  return DTypeFromMindSpore(text);
}

size_t EntryEnd(const CompareTable& table, size_t begin) {
  const uint32_t entry = table.target->rows[table.rows[begin].target].entry;
  size_t end = begin + 1;
  while (end < table.rows.size() && table.target->rows[table.rows[end].target].entry == entry) {
    ++end;
  }
  return end;
}

double WorkingUnitRoundoff(const CompareTable& table, size_t begin, size_t end) {
  double working = 0;
  for (size_t i = begin; i < end; ++i) {
    const CompareRow& row = table.rows[i];
    if (!row.paired()) continue;
    const DumpRow& t = table.target->rows[row.target];
    const DumpRow& g = table.golden->rows[static_cast<size_t>(row.golden)];
    if (!t.is_tensor || !g.is_tensor) continue;
    for (const auto& d :
         {DtypeOfName(table.target->Text(t.dtype)), DtypeOfName(table.golden->Text(g.dtype))}) {
      if (d.has_value()) working = std::max(working, UnitRoundoff(*d));
    }
  }
  return working;
}

namespace {

bool Judged(const CompareRow& r) { return !std::isnan(r.error) && !std::isnan(r.tolerance); }
bool Exceeds(const CompareRow& r) { return r.over_tolerance(); }

std::string Percent(double v) {
  if (std::isinf(v)) return "inf";
  return fmt::format("{:.3g}%", v * 100);
}

// "4.4e+04x its tolerance"; integers and bool have none.
std::string OverTolerance(double error, double tolerance) {
  if (tolerance <= 0) return "an exact match is required";
  if (std::isinf(error)) return "NaN/Inf";
  return fmt::format("{:.3g}x its tolerance", error / tolerance);
}

// Which non-finite values a tensor's statistics show: "NaN", "Inf", "-Inf", "Inf and -Inf".
std::string NonFiniteKind(const RowStats& s) {
  const auto nan = [](const std::optional<double>& v) { return v && std::isnan(*v); };
  if (nan(s[kStatMax]) || nan(s[kStatMin]) || nan(s[kStatMean])) return "NaN";
  const bool pos = s[kStatMax] && *s[kStatMax] == kInf;
  const bool neg = s[kStatMin] && *s[kStatMin] == -kInf;
  if (pos && neg) return "Inf and -Inf";
  if (neg) return "-Inf";
  return pos ? "Inf" : "NaN/Inf";
}

// The part of a row name after its entry: "output.0".
std::string Suffix(std::string_view row, std::string_view entry) {
  if (row.size() > entry.size() + 1 && row.compare(0, entry.size(), entry) == 0) {
    return std::string(row.substr(entry.size() + 1));
  }
  return std::string(row);
}

// The lower-precision dtype whose rounding an error of this size is (16-bit floats), if any.
std::optional<DType> RoundingOfSize(double error) {
  if (!(error > kToleranceUlps * UnitRoundoff(DType::kF32))) return std::nullopt;
  for (const DType d : {DType::kF16, DType::kBF16}) {
    if (error <= kToleranceUlps * UnitRoundoff(d)) return d;
  }
  return std::nullopt;
}

struct Op {
  uint32_t entry = 0;
  size_t begin = 0;  // rows [begin, end) of table.rows
  size_t end = 0;
  bool backward = false;
};

struct Candidate {
  DivergenceOp op;
  const CompareRow* worst = nullptr;  // the row the verdict is about
  bool weak = false;                  // growth only: an answer when nothing stronger fits
  double max_before = 0;              // the largest finite error of every row before the op
};

// A candidate as the ranking in Run needs it. Its DivergenceOp (names, reason, causes: most of
// a candidate's memory, and a large compare has one candidate per op) is made again, by the same
// Evaluate in the same state, for the few that are reported.
struct Ranked {
  Op op;
  bool seen_exceeding = false;  // Analyzer::seen_exceeding_ when it was evaluated
  bool fallback = false;        // made by Fallback, not Evaluate
  bool weak = false;
  bool source = false;  // rule kRuleSource
  bool backward = false;
  double output_error = 0;
  double growth = 0;
  double max_before = 0;
  const CompareRow* worst = nullptr;
};

// A dump's dtype texts parsed once each: the rules ask for the dtype of every row of every op
// they evaluate, and a dump has a handful of dtype texts (interned: one id per text).
class DtypeOfText {
 public:
  explicit DtypeOfText(const DumpFile& file) : file_(file), parsed_(file.text_count()) {}
  std::optional<DType> operator()(uint32_t text_id) const {
    std::optional<std::optional<DType>>& slot = parsed_[text_id];
    if (!slot.has_value()) slot = DtypeOfName(file_.Text(text_id));
    return *slot;
  }

 private:
  const DumpFile& file_;
  // Filled as asked; the Analyzer that owns it runs on one thread.
  mutable std::vector<std::optional<std::optional<DType>>> parsed_;
};

// A tensor of the op that the target holds in a lower precision than the golden.
struct Narrowed {
  const CompareRow* row = nullptr;
  DType target = DType::kF32;
  DType golden = DType::kF32;
  bool input = false;
  std::string from;                    // the producing row when known ("X.forward.output.0")
  std::optional<CastCause> cast;       // the cast that did it, when recorded
  std::optional<uint32_t> cast_entry;  // that cast's dump.json entry, when dump.json holds it
};

class Analyzer {
 public:
  Analyzer(const CompareTable& table, const ConstructMap* construct)
      : table_(table),
        tf_(*table.target),
        gf_(*table.golden),
        construct_(construct),
        target_dtype_(tf_),
        golden_dtype_(gf_),
        target_flow_(tf_),
        golden_flow_(gf_) {
    target_row_to_compare_ = AdvisedVector<int64_t>(tf_.rows.size(), -1);
    golden_row_to_compare_ = AdvisedVector<int64_t>(gf_.rows.size(), -1);
    for (size_t i = 0; i < table.rows.size(); ++i) {
      const CompareRow& r = table.rows[i];
      target_row_to_compare_[r.target] = static_cast<int64_t>(i);
      if (r.paired())
        golden_row_to_compare_[static_cast<size_t>(r.golden)] = static_cast<int64_t>(i);
    }
  }

  DivergenceReport Run();

 private:
  std::vector<Op> Ops(DivergenceReport* report) const;
  bool ChangesIdenticalInputs(const Op& op) const;
  std::optional<Candidate> Evaluate(const Op& op);
  bool IsNarrowedRow(uint32_t target_row, Narrowed* out) const;
  std::optional<Narrowed> Narrowing(const CompareRow& r) const;
  void FindCast(const Op& op, Narrowed* n) const;
  void Describe(const Op& op, DivergenceOp* d) const;
  DivergenceOp Base(const Op& op, const CompareRow& worst, double in_err) const;
  Candidate Fallback(const Op& op) const;
  Ranked RankedOf(const Op& op, const Candidate& c, bool fallback) const;
  DivergenceOp Reported(const Ranked& r);
  std::string DtypeName(DType d) const { return TorchDTypeString(d); }

  const CompareTable& table_;
  const DumpFile& tf_;
  const DumpFile& gf_;
  const ConstructMap* construct_;
  DtypeOfText target_dtype_;
  DtypeOfText golden_dtype_;
  ProducerIndex target_flow_;
  ProducerIndex golden_flow_;
  std::vector<int64_t> target_row_to_compare_;
  std::vector<int64_t> golden_row_to_compare_;
  double min_symptom_tolerance_ = kInf;  // the tightest tolerance any row over it has
  double max_symptom_ratio_ = 0;         // the largest error / tolerance of those rows
  // The one API call whose inputs are identical in both runs and whose output is not; nullopt
  // when none or several are (several: nondeterminism or another device, not a single origin).
  std::optional<uint32_t> sole_changer_;
  bool seen_exceeding_ = false;  // a row before the op being evaluated is over tolerance
  double max_error_so_far_ = 0;
  // Set by Reported alone. Run ranks every op's candidate by its rule and numbers; the names, the
  // causes and the sentence (most of an evaluation's time on a large compare) are made for the
  // few candidates reported, by the same Evaluate with this set.
  bool describing_ = false;
};

std::vector<Op> Analyzer::Ops(DivergenceReport* report) const {
  // Reserved for every entry (an op is one, at most) and advised for huge pages: a large
  // compare's ops and candidates grown by doubling took a third of its page faults.
  std::vector<Op> forward;
  std::vector<Op> backward;
  forward.reserve(tf_.entries.size());
  backward.reserve(tf_.entries.size());
  AdviseHugePages(forward);
  AdviseHugePages(backward);
  for (size_t begin = 0; begin < table_.rows.size();) {
    const size_t end = EntryEnd(table_, begin);
    const uint32_t entry = tf_.rows[table_.rows[begin].target].entry;
    const std::string_view name = tf_.entries[entry].name;
    const EntryNameParts parsed = ParseEntryName(name);
    // Parameter gradients repeat backward outputs; other entries are not ops.
    if (parsed.is_call()) {
      const bool bwd = parsed.backward();
      (bwd ? backward : forward).push_back({entry, begin, end, bwd});
      ++report->ops_examined;
    }
    begin = end;
  }
  forward.insert(forward.end(), backward.begin(), backward.end());
  return forward;
}

// Whether target row `target_row` is held in a lower precision than its golden row.
bool Analyzer::IsNarrowedRow(uint32_t target_row, Narrowed* out) const {
  const int64_t c = target_row_to_compare_[target_row];
  if (c < 0) return false;
  const CompareRow& r = table_.rows[static_cast<size_t>(c)];
  if (!r.paired()) return false;
  const auto td = target_dtype_(tf_.rows[r.target].dtype);
  const auto gd = golden_dtype_(gf_.rows[static_cast<size_t>(r.golden)].dtype);
  if (!td || !gd || !IsFloating(*td) || !IsFloating(*gd)) return false;
  if (UnitRoundoff(*td) <= UnitRoundoff(*gd)) return false;
  if (out != nullptr) {
    out->row = &r;
    out->target = *td;
    out->golden = *gd;
  }
  return true;
}

std::optional<Narrowed> Analyzer::Narrowing(const CompareRow& r) const {
  Narrowed n;
  if (!tf_.rows[r.target].is_tensor || !IsNarrowedRow(r.target, &n)) return std::nullopt;
  n.input = tf_.rows[r.target].state != RowState::kOutput;
  return n;
}

// Names the cast that narrowed input `n` of `op`: an entry of dump.json (a cast msprobe recorded,
// which the golden run does not have), else casts.json.
void Analyzer::FindCast(const Op& op, Narrowed* n) const {
  const DumpRow& row = tf_.rows[n->row->target];
  const int64_t producer = target_flow_.Producer(n->row->target);
  if (producer >= 0) {
    const DumpRow& p = tf_.rows[static_cast<size_t>(producer)];
    n->from = p.name;
    const int64_t c = target_row_to_compare_[static_cast<size_t>(producer)];
    const bool unpaired = c < 0 || !table_.rows[static_cast<size_t>(c)].paired();
    const std::string_view entry = tf_.entries[p.entry].name;
    static constexpr std::string_view kCasts[] = {"to",      "half", "bfloat16", "float",
                                                  "type_as", "type", "double"};
    const std::string_view api = ApiOfEntry(entry);
    if (unpaired && std::find(std::begin(kCasts), std::end(kCasts), api) != std::end(kCasts)) {
      n->cast_entry = p.entry;
      CastCause cause{std::string(entry), "", tf_.Text(p.dtype), ""};
      const DumpEntry& e = tf_.entries[p.entry];
      for (uint32_t i = e.first_row; i < e.first_row + e.row_count; ++i) {
        if (tf_.rows[i].state == RowState::kInput && tf_.rows[i].is_tensor) {
          cause.from_dtype = tf_.Text(tf_.rows[i].dtype);
          break;
        }
      }
      if (table_.stack != nullptr) {
        if (const auto* lines = table_.stack->Find(entry)) cause.at = UserFrame(*lines);
      }
      n->cast = std::move(cause);
      return;
    }
  }
  if (table_.casts == nullptr) return;
  const RowStats stats = StatsOfRow(tf_, row);
  if (const CastNote* c = CastProducing(*table_.casts, stats, op.entry)) {
    n->cast = CastCause{c->name, c->input.dtype, c->output.dtype, UserFrame(c->stack)};
  }
}

DivergenceOp Analyzer::Base(const Op& op, const CompareRow& worst, double in_err) const {
  DivergenceOp d;
  d.entry = op.entry;
  d.backward = op.backward;
  d.input_error = in_err;
  d.output_error = worst.error;
  d.tolerance = worst.tolerance;
  const double floor = std::max(worst.tolerance / kToleranceUlps, 1e-300);
  d.growth = std::isinf(worst.error) ? kInf : worst.error / std::max(in_err, floor);
  d.non_finite = std::isinf(worst.error);
  if (describing_) {
    const DumpRow& wt = tf_.rows[worst.target];
    const DumpRow& wg = gf_.rows[static_cast<size_t>(worst.golden)];
    d.op_name = tf_.entries[op.entry].name;
    d.worst_output = wt.name;
    d.dtype_pair = tf_.Text(wt.dtype) + " vs " + gf_.Text(wg.dtype);
  }
  return d;
}

void Analyzer::Describe(const Op& op, DivergenceOp* d) const {
  if (construct_ != nullptr) d->module_path = construct_->ModulePath(d->op_name);
  if (table_.stack != nullptr) {
    if (const auto* lines = table_.stack->Find(d->op_name)) d->stack = *lines;
  }
  d->at = UserFrame(d->stack);
  (void)op;
}

std::string CastText(const CastCause& c) {
  std::string text = fmt::format("{} ({} -> {}", c.name, c.from_dtype, c.to_dtype);
  if (!c.at.empty()) text += " at " + ShortFrame(c.at);
  return text + ")";
}

std::optional<Candidate> Analyzer::Evaluate(const Op& op) {
  const std::string_view name = tf_.entries[op.entry].name;
  double in_err = 0;
  bool inputs_finite = true;
  bool plain_inputs_agree = true;  // the inputs held at the golden's precision
  bool inputs_agree = true;
  const CompareRow* worst = nullptr;
  std::vector<const CompareRow*> differing_inputs;
  std::vector<Narrowed> fresh;
  std::vector<Narrowed> narrowed_outputs;
  bool any_input_narrowed = false;
  for (size_t i = op.begin; i < op.end; ++i) {
    const CompareRow& r = table_.rows[i];
    if (!Judged(r)) continue;
    const bool output = tf_.rows[r.target].state == RowState::kOutput;
    std::optional<Narrowed> n = Narrowing(r);
    if (output) {
      if (Exceeds(r) && (worst == nullptr || r.error > worst->error)) worst = &r;
      if (n) narrowed_outputs.push_back(std::move(*n));
      continue;
    }
    in_err = std::max(in_err, r.error);
    inputs_agree &= !Exceeds(r);
    inputs_finite &= std::isfinite(r.error);
    if (Exceeds(r)) differing_inputs.push_back(&r);
    if (!n) {
      plain_inputs_agree &= !Exceeds(r);
      continue;
    }
    any_input_narrowed = true;
    // Narrowed here, or already by an earlier recorded op (a lower-precision region)?
    const int64_t producer = target_flow_.Producer(r.target);
    const bool inherited = producer >= 0 && IsNarrowedRow(static_cast<uint32_t>(producer), nullptr);
    if (!inherited) {
      if (describing_) {
        FindCast(op, &*n);
        if (n->from.empty()) {
          // What the golden run fed the op: the output the target narrowed on the way.
          const int64_t gp = golden_flow_.Producer(static_cast<uint32_t>(r.golden));
          if (gp >= 0) n->from = gf_.rows[static_cast<size_t>(gp)].name;
        }
      }
      fresh.push_back(std::move(*n));
    }
  }
  if (!any_input_narrowed) {
    for (Narrowed& n : narrowed_outputs) fresh.push_back(std::move(n));
  }

  // non_finite
  if (worst != nullptr && std::isinf(worst->error) && inputs_finite) {
    Candidate c;
    c.worst = worst;
    c.op = Base(op, *worst, in_err);
    c.op.rule = kRuleNonFinite;
    if (!describing_) return c;
    const DumpRow& wt = tf_.rows[worst->target];
    const DumpRow& wg = gf_.rows[static_cast<size_t>(worst->golden)];
    const RowStats ts = StatsOfRow(tf_, wt);
    const bool target_side = !(IsFiniteStat(ts[kStatMax]) && IsFiniteStat(ts[kStatMin]));
    c.op.reason = fmt::format(
        "{} has {} only in the {} run while its inputs are finite", Suffix(wt.name, name),
        NonFiniteKind(target_side ? ts : StatsOfRow(gf_, wg)), target_side ? "target" : "golden");
    if (!fresh.empty()) {
      const Narrowed& n = fresh.front();
      c.op.reason += fmt::format("; it computes in {} where the golden run uses {}",
                                 DtypeName(n.target), DtypeName(n.golden));
      if (n.cast) {
        c.op.reason += ", its " + Suffix(tf_.rows[n.row->target].name, name) + " narrowed by " +
                       CastText(*n.cast);
        c.op.cast = n.cast;
      }
    }
    return c;
  }

  // inputs_agree / argument: an error beyond the op's own precision, or any change of the
  // output where an argument differs (a concrete cause, even within tolerance)
  std::vector<ArgumentChange> arguments;
  const CompareRow* changed = worst;
  if (inputs_agree) {
    arguments = DifferingArguments(table_, op.begin, op.end);
    if (changed == nullptr && !arguments.empty()) {
      for (size_t i = op.begin; i < op.end; ++i) {
        const CompareRow& r = table_.rows[i];
        if (Judged(r) && tf_.rows[r.target].state == RowState::kOutput && r.error > 0 &&
            (changed == nullptr || r.error > changed->error)) {
          changed = &r;
        }
      }
    }
  }
  if (changed != nullptr && inputs_agree && changed->error > kCarryFactor * in_err) {
    Candidate c;
    c.worst = changed;
    c.op = Base(op, *changed, in_err);
    c.op.arguments = std::move(arguments);
    c.op.rule = c.op.arguments.empty() ? kRuleInputsAgree : kRuleArgument;
    if (!describing_) return c;
    const std::string differs =
        fmt::format("{} differs by {} ({})", Suffix(tf_.rows[changed->target].name, name),
                    Percent(changed->error), OverTolerance(changed->error, changed->tolerance));
    if (!c.op.arguments.empty()) {
      std::string args;
      for (const ArgumentChange& a : c.op.arguments) {
        args += fmt::format("{}{}: {} vs {}", args.empty() ? "" : ", ", a.name, a.target, a.golden);
      }
      c.op.reason = fmt::format("argument{} {} (target vs golden); the tensor inputs agree and {}",
                                c.op.arguments.size() > 1 ? "s" : "", args, differs);
    } else {
      c.op.reason = fmt::format("inputs agree (largest error {}) but {}", Percent(in_err), differs);
    }
    return c;
  }

  // precision: computed in a lower precision than the golden, judged against the golden's
  // tolerance, when some symptom lies above that precision
  if (!fresh.empty() && plain_inputs_agree) {
    DType narrow = fresh.front().target;
    for (const Narrowed& n : fresh) {
      if (UnitRoundoff(n.target) > UnitRoundoff(narrow)) narrow = n.target;
    }
    // Confirmed by a symptom above the narrowed precision, or by symptoms that are all
    // rounding-sized (a lower-precision run whose rounding adds up past its own tolerance).
    const bool confirmed = min_symptom_tolerance_ < kToleranceUlps * UnitRoundoff(narrow) ||
                           max_symptom_ratio_ <= kGrowthFactor;
    // The worst row against the golden dtype's tolerance: an output, else a narrowed input.
    const CompareRow* judged = nullptr;
    double judged_tolerance = 0;
    double best_ratio = 1;
    auto consider = [&](const CompareRow& r) {
      const auto gd = golden_dtype_(gf_.rows[static_cast<size_t>(r.golden)].dtype);
      if (!gd || !Judged(r)) return;
      const double tol = kToleranceUlps * UnitRoundoff(*gd);
      const double ratio = tol > 0 ? r.error / tol : (r.error > 0 ? kInf : 0);
      if (ratio > best_ratio) {
        best_ratio = ratio;
        judged = &r;
        judged_tolerance = tol;
      }
    };
    for (size_t i = op.begin; i < op.end; ++i) {
      const CompareRow& r = table_.rows[i];
      if (tf_.rows[r.target].is_tensor && tf_.rows[r.target].state == RowState::kOutput) {
        consider(r);
      }
    }
    if (judged == nullptr) {
      for (const Narrowed& n : fresh) consider(*n.row);
    }
    if (confirmed && judged != nullptr) {
      Candidate c;
      c.worst = judged;
      const Narrowed* cause = &fresh.front();
      for (const Narrowed& n : fresh) {
        if (n.input && (n.cast || !cause->input)) {
          cause = &n;
          if (n.cast) break;
        }
      }
      Op named = op;
      if (cause->cast_entry.has_value()) {
        // dump.json holds the cast itself: it is where the precision was lost.
        named.entry = *cause->cast_entry;
      }
      c.op = Base(named, *judged, in_err);
      c.op.tolerance = judged_tolerance;
      c.op.growth = judged->error / std::max(judged_tolerance / kToleranceUlps, 1e-300);
      c.op.rule = kRulePrecision;
      if (!describing_) return c;
      c.op.cast = cause->cast;
      std::string how;
      if (!cause->input) {
        how = fmt::format(
            " although its inputs are at the golden's precision (an autocast region "
            "or a lower-precision kernel)");
      } else if (cause->cast) {
        how = fmt::format(": its {} was narrowed by {}",
                          Suffix(tf_.rows[cause->row->target].name, name), CastText(*cause->cast));
      } else {
        how = fmt::format(": its {} was narrowed{} by a cast the dump does not record",
                          Suffix(tf_.rows[cause->row->target].name, name),
                          cause->from.empty() ? "" : " after " + cause->from);
      }
      const std::string judged_name(tf_.rows[judged->target].name);
      c.op.reason = fmt::format(
          "computes in {} where the golden run uses {}{}; {} differs by {} ({} in {})",
          DtypeName(cause->target), DtypeName(cause->golden), how,
          named.entry == op.entry ? Suffix(judged_name, name) : judged_name, Percent(judged->error),
          OverTolerance(judged->error, judged_tolerance), DtypeName(cause->golden));
      return c;
    }
  }

  // source / transit: an input that differs although no recorded op made it differ
  for (const CompareRow* r : differing_inputs) {
    if (Narrowing(*r)) continue;
    const DumpRow& t = tf_.rows[r->target];
    const int64_t gp = golden_flow_.Producer(static_cast<uint32_t>(r->golden));
    if (gp < 0) {
      if (seen_exceeding_) continue;  // it may carry an earlier error through unrecorded ops
      Candidate c;
      c.worst = r;
      c.op = Base(op, *r, 0);
      c.op.rule = kRuleSource;
      if (!describing_) return c;
      const std::string which = Suffix(t.name, name);
      const std::string param = ArgumentName(name, t.name);
      c.op.reason = fmt::format(
          "{} ({}{} {}) differs before any op touched it: a parameter or data that no recorded "
          "op produced, off by {} ({})",
          param == which ? which : "the " + param, param == which ? "" : which + ", ",
          tf_.Text(t.dtype), tf_.Text(t.shape), Percent(r->error),
          OverTolerance(r->error, r->tolerance));
      return c;
    }
    const int64_t pc = golden_row_to_compare_[static_cast<size_t>(gp)];
    if (pc < 0) continue;
    const CompareRow& produced = table_.rows[static_cast<size_t>(pc)];
    if (!Judged(produced) || Exceeds(produced)) continue;
    const RowStats here = StatsOfRow(tf_, t);
    const DumpRow& pt = tf_.rows[produced.target];
    if (SameValues(here, StatsOfRow(tf_, pt), pt.dtype == t.dtype)) continue;
    Candidate c;
    c.worst = r;
    c.op = Base(op, *r, produced.error);
    c.op.rule = kRuleTransit;
    if (!describing_) return c;
    std::string by = "an op the dump does not record";
    if (table_.casts != nullptr) {
      if (const CastNote* note = CastProducing(*table_.casts, here, op.entry)) {
        c.op.cast =
            CastCause{note->name, note->input.dtype, note->output.dtype, UserFrame(note->stack)};
        by = CastText(*c.op.cast);
      }
    }
    std::string size;
    if (const auto d = RoundingOfSize(r->error); d && !c.op.cast) {
      size = fmt::format(", the size of {} rounding", DtypeName(*d));
    }
    c.op.reason = fmt::format(
        "{} differs from {}, which produced it and agrees: changed in between by {}; off by {} "
        "({}{})",
        Suffix(t.name, name), pt.name, by, Percent(r->error), OverTolerance(r->error, r->tolerance),
        size);
    return c;
  }

  // identical_inputs: the only call in the run that turns identical inputs into a different
  // output (in a deterministic pair of runs, where every later difference comes from)
  if (sole_changer_ == op.entry) {
    const CompareRow* most = nullptr;
    for (size_t i = op.begin; i < op.end; ++i) {
      const CompareRow& r = table_.rows[i];
      if (Judged(r) && tf_.rows[r.target].state == RowState::kOutput &&
          (most == nullptr || r.error > most->error)) {
        most = &r;
      }
    }
    Candidate c;
    c.worst = most;
    c.op = Base(op, *most, 0);
    c.op.rule = kRuleIdenticalInputs;
    if (!describing_) return c;
    c.op.reason = fmt::format(
        "its inputs are identical in both runs and {} differs by {} ({}): the only op that "
        "changes identical inputs, where the differences after it come from",
        Suffix(tf_.rows[most->target].name, name), Percent(most->error),
        OverTolerance(most->error, most->tolerance));
    return c;
  }

  // growth (weak)
  if (worst != nullptr && !std::isinf(worst->error)) {
    Candidate c;
    c.worst = worst;
    c.op = Base(op, *worst, in_err);
    if (c.op.growth >= kGrowthFactor) {
      c.weak = true;
      c.op.rule = kRuleGrowth;
      if (!describing_) return c;
      c.op.reason =
          fmt::format("error grows {:.1f}x: inputs {}, {} {}", c.op.growth, Percent(in_err),
                      Suffix(tf_.rows[worst->target].name, name), Percent(worst->error));
      return c;
    }
  }
  return std::nullopt;
}

// Every tensor input of `op` equal in both runs (error exactly 0, at least one), every argument
// equal, and an output that differs at all.
bool Analyzer::ChangesIdenticalInputs(const Op& op) const {
  bool inputs = false;
  bool changed = false;
  for (size_t i = op.begin; i < op.end; ++i) {
    const CompareRow& r = table_.rows[i];
    if (!r.paired()) continue;
    const DumpRow& t = tf_.rows[r.target];
    if (!t.is_tensor) continue;
    if (t.state == RowState::kOutput) {
      changed |= Judged(r) && r.error > 0;
    } else {
      if (!Judged(r) || r.error != 0) return false;
      inputs = true;
    }
  }
  return inputs && changed && DifferingArguments(table_, op.begin, op.end).empty();
}

Candidate Analyzer::Fallback(const Op& op) const {
  const CompareRow* worst = nullptr;
  double in_err = 0;
  for (size_t i = op.begin; i < op.end; ++i) {
    const CompareRow& r = table_.rows[i];
    if (!Judged(r)) continue;
    const bool output = tf_.rows[r.target].state == RowState::kOutput;
    if (!output) in_err = std::max(in_err, r.error);
    if (!Exceeds(r)) continue;
    const bool worst_output =
        worst != nullptr && tf_.rows[worst->target].state == RowState::kOutput;
    if (worst == nullptr || (output && !worst_output) ||
        (output == worst_output && r.error > worst->error)) {
      worst = &r;
    }
  }
  Candidate c;
  c.worst = worst;
  c.op = Base(op, *worst, in_err);
  c.op.rule = kRuleFallback;
  const std::string_view name = tf_.entries[op.entry].name;
  c.op.reason = fmt::format(
      "no op fits the rules (inputs agree and an output does not, a changed argument, a "
      "precision change, a source, growth); fallback: the first op with a row over its "
      "tolerance, {} off by {} ({}) with inputs off by {}",
      Suffix(tf_.rows[worst->target].name, name), Percent(worst->error),
      OverTolerance(worst->error, worst->tolerance), Percent(in_err));
  return c;
}

DivergenceReport Analyzer::Run() {
  DivergenceReport report;
  for (const CompareRow& r : table_.rows) {
    if (!Exceeds(r)) continue;
    ++report.rows_over_tolerance;
    min_symptom_tolerance_ = std::min(min_symptom_tolerance_, r.tolerance);
    // kInf is a double already: clang-tidy's narrowing warning here is a false positive.
    // NOLINTNEXTLINE(bugprone-narrowing-conversions)
    const double ratio = r.tolerance > 0 ? r.error / r.tolerance : kInf;
    max_symptom_ratio_ = std::max(max_symptom_ratio_, ratio);
  }
  const std::vector<Op> ops = Ops(&report);
  int changers = 0;
  for (const Op& op : ops) {
    if (ApiOfEntry(tf_.entries[op.entry].name).empty() || !ChangesIdenticalInputs(op)) {
      continue;
    }
    if (++changers == 1) sole_changer_ = op.entry;
  }
  if (changers != 1) sole_changer_.reset();
  std::string first_over_backward;
  const Op* first_exceeding = nullptr;
  std::vector<Ranked> found;
  found.reserve(ops.size());
  AdviseHugePages(found);
  for (const Op& op : ops) {
    bool output_over = false;
    bool any_over = false;
    double op_max = 0;
    for (size_t i = op.begin; i < op.end; ++i) {
      const CompareRow& r = table_.rows[i];
      if (!Judged(r)) continue;
      if (std::isfinite(r.error)) op_max = std::max(op_max, r.error);
      if (!Exceeds(r)) continue;
      any_over = true;
      output_over |= tf_.rows[r.target].state == RowState::kOutput;
    }
    if (output_over) {
      std::string& slot = op.backward ? first_over_backward : report.first_over_tolerance;
      if (slot.empty()) slot = tf_.entries[op.entry].name;
    }
    if (any_over && first_exceeding == nullptr) first_exceeding = &op;
    if (report.rows_over_tolerance > 0) {
      if (auto c = Evaluate(op)) {
        c->max_before = max_error_so_far_;
        found.push_back(RankedOf(op, *c, false));
      }
    }
    seen_exceeding_ |= any_over;
    max_error_so_far_ = std::max(max_error_so_far_, op_max);
  }
  if (report.first_over_tolerance.empty()) report.first_over_tolerance = first_over_backward;
  if (report.rows_over_tolerance == 0) return report;

  // The answer: the first strong birth (a source superseded by a later forward op that
  // multiplies every earlier error), else the first weak one, else the fallback.
  std::optional<size_t> first;
  for (size_t i = 0; i < found.size(); ++i) {
    if (!found[i].weak) {
      first = i;
      break;
    }
  }
  if (first && found[*first].source) {
    for (size_t i = *first + 1; i < found.size(); ++i) {
      const Ranked& later = found[i];
      if (later.backward || std::isinf(later.output_error)) continue;
      if (later.output_error >= kGrowthFactor * later.max_before) {
        first = i;
        break;
      }
    }
  }
  if (!first && !found.empty()) first = 0;
  if (!first) {
    // Rows over tolerance only in entries that are not ops (parameter gradients, debug.json
    // saves): the entry of the first of them, so that there is always an answer.
    Op other;
    if (first_exceeding == nullptr) {
      const auto row = std::find_if(table_.rows.begin(), table_.rows.end(),
                                    [](const CompareRow& r) { return Exceeds(r); });
      other.begin = static_cast<size_t>(row - table_.rows.begin());
      while (other.begin > 0 &&
             tf_.rows[table_.rows[other.begin - 1].target].entry == tf_.rows[row->target].entry) {
        --other.begin;
      }
      other.end = EntryEnd(table_, other.begin);
      other.entry = tf_.rows[row->target].entry;
      other.backward = !ParseEntryName(tf_.entries[other.entry].name).forward();
      first_exceeding = &other;
    }
    found.insert(found.begin(),
                 RankedOf(*first_exceeding, Fallback(*first_exceeding), /*fallback=*/true));
    first = 0;
  }
  report.first = Reported(found[*first]);
  // The rest by growth (stable: execution order breaks ties), skipping repeats of a tensor
  // already listed (a module's output is the same tensor as its last API's output).
  std::vector<size_t> order;
  for (size_t i = 0; i < found.size(); ++i) {
    if (i != *first) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return found[a].growth > found[b].growth; });
  std::vector<const CompareRow*> listed = {found[*first].worst};
  // The same tensor: equal shape, dtype and statistics on both sides.
  auto same_stats = [](const DumpRow& a, const DumpRow& b) {
    for (int k = 0; k < 4; ++k) {
      const PyValue& x = a.stats[k];
      const PyValue& y = b.stats[k];
      if (x.kind() != y.kind() || x.as_int() != y.as_int() || x.text_id() != y.text_id())
        return false;
    }
    return a.shape == b.shape && a.dtype == b.dtype;
  };
  auto same_tensor = [&](const CompareRow* a, const CompareRow* b) {
    return a->error == b->error && same_stats(tf_.rows[a->target], tf_.rows[b->target]) &&
           same_stats(gf_.rows[static_cast<size_t>(a->golden)],
                      gf_.rows[static_cast<size_t>(b->golden)]);
  };
  for (const size_t i : order) {
    if (report.next.size() >= static_cast<size_t>(kRankedIntroducers)) break;
    const bool repeat = std::any_of(listed.begin(), listed.end(), [&](const CompareRow* r) {
      return same_tensor(r, found[i].worst);
    });
    if (repeat) continue;
    listed.push_back(found[i].worst);
    report.next.push_back(Reported(found[i]));
  }
  return report;
}

Ranked Analyzer::RankedOf(const Op& op, const Candidate& c, bool fallback) const {
  Ranked r;
  r.op = op;
  r.seen_exceeding = seen_exceeding_;
  r.fallback = fallback;
  r.weak = c.weak;
  r.source = c.op.rule == kRuleSource;
  r.backward = c.op.backward;
  r.output_error = c.op.output_error;
  r.growth = c.op.growth;
  r.max_before = c.max_before;
  r.worst = c.worst;
  return r;
}

DivergenceOp Analyzer::Reported(const Ranked& r) {
  const bool seen = seen_exceeding_;
  seen_exceeding_ = r.seen_exceeding;
  describing_ = true;
  std::optional<Candidate> c = r.fallback ? Fallback(r.op) : Evaluate(r.op);
  describing_ = false;
  seen_exceeding_ = seen;
  DivergenceOp d = c.has_value() ? std::move(c->op) : DivergenceOp{};
  Describe(r.op, &d);
  return d;
}

}  // namespace

DivergenceReport FindBirths(const CompareTable& table, const ConstructMap* construct) {
  return Analyzer(table, construct).Run();
}

}  // namespace numprobe::detail
