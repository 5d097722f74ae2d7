// The Result and Err_message columns: msprobe's checkers (indicator_analysis/algorithm.py), run
// per API over its input rows (inputs, kwargs, parameters, parameter grads) and output rows
// (names containing ".output."), in msprobe's order so that messages appear in its order. Rules
// that look at inputs and outputs together mark the first output row. numprobe then marks rows
// without a golden counterpart "unmatched" (msprobe calls them "pass").
#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

#include "compare/compare_internal.h"
#include "core/py_format.h"
#include "msprobe/entry_name.h"

namespace numprobe::detail {
namespace {

constexpr std::string_view kMessages[kMsgCount] = {
    "error: There is nan/inf/-inf in the maximum or minimum value of NPU.",
    "error: The NormRelativeErr of output is greater than 0.5.",
    "error: The input/parameters of One Thousandth Err Ratio > 0.9 while the output < 0.6.",
    "error: The Required_Grad of NPU and Bench are inconsistent",
    "error: The scalar parameters of NPU and Bench are inconsistent.",
    "error: The CRC-32 value of NPU differs from that of the bench.",
    "warning: The parameter of NPU does not match the bench.",
    "error: The dtype of NPU and Bench are inconsistent.",
    "error: The shape of NPU and Bench are inconsistent.",
    "warning: The norm relative error of output is 10 times that of input.",
    "warning: The input/parameters of Cosine > 0.9, and input/parameters - output > 0.1",
    "unmatched: No bench data matched.",
    "unmatched: the bench row of this name has a dtype that cannot be compared.",
};

static_assert(kMsgCount - 1 <= MessageList::kMaxId, "a message id must fit a MessageList");

enum class Ignore { kNone, kInputs, kAll };

// msprobe's metric columns used by the rules.
constexpr int kNormRelCol = 7;     // statistics: NormRelativeErr
constexpr int kCosineCol = 0;      // tensor: Cosine
constexpr int kThousandthCol = 4;  // tensor: One Thousandth Err Ratio

void Mark(CompareRow* row, Verdict level, MessageId message) {
  row->result = Worse(row->result, level);
  row->messages.push_back(message);
}

// The value a rule sees in a metric cell: percentages as fractions, numbers as themselves; text
// (tokens, "0") is skipped (nullopt), as msprobe's get_min_or_max_value does.
std::optional<double> RuleValue(const MetricCell& cell) {
  if (cell.kind == MetricCell::Kind::kPercent) return cell.value / 100;
  if (cell.kind == MetricCell::Kind::kValue || cell.kind == MetricCell::Kind::kValueText) {
    return cell.value;
  }
  return std::nullopt;
}

// msprobe's str2float: float(text.strip('%')) / 100, or 0 when that fails.
double Str2Float(const MetricCell& cell) {
  using Kind = MetricCell::Kind;
  switch (cell.kind) {
    case Kind::kPercent:
    case Kind::kValue:
    case Kind::kValueText:
      return cell.value / 100;
    case Kind::kInf:
      return HUGE_VAL;
    case Kind::kNegInf:
      return -HUGE_VAL;
    case Kind::kNan:
      return std::nan("");
    default:
      return 0;
  }
}

// Python's min(a, b) / max(a, b) (a NaN b is never chosen).
double PyMin(double a, double b) { return b < a ? b : a; }
double PyMax(double a, double b) { return b > a ? b : a; }

double Extreme(const CompareTable& t, const std::vector<size_t>& rows, int col, bool is_min) {
  double out = is_min ? 1.0 : 0.0;
  for (const size_t i : rows) {
    const auto v = RuleValue(t.rows[i].metrics[col]);
    if (!v.has_value()) continue;
    out = is_min ? PyMin(out, *v) : PyMax(out, *v);
  }
  return out;
}

bool IsInfOrNan(const SummaryValue& v) {
  return v.type == ValType::kNan || v.type == ValType::kInf || v.type == ValType::kNegInf;
}

// Python's == between two summary values.
bool PyEqual(const SummaryValue& a, const SummaryValue& b) {
  auto numeric = [](const SummaryValue& v) {
    if (v.raw == nullptr) return false;
    const auto k = v.raw->kind();
    if (k == PyValue::Kind::kFloat) return !std::isnan(v.raw->as_float());
    return k == PyValue::Kind::kInt || k == PyValue::Kind::kBigInt || k == PyValue::Kind::kBool;
  };
  const bool an = numeric(a);
  const bool bn = numeric(b);
  if (an && bn) {
    const double x =
        a.raw->kind() == PyValue::Kind::kBool ? (a.raw->as_bool() ? 1.0 : 0.0) : a.number;
    const double y =
        b.raw->kind() == PyValue::Kind::kBool ? (b.raw->as_bool() ? 1.0 : 0.0) : b.number;
    return x == y;
  }
  if (an != bn) return false;
  return a.SameText(b);
}

class ApiRules {
 public:
  ApiRules(CompareTable* table, size_t begin, size_t end)
      : t_(*table), inputs_(Lists().inputs), outputs_(Lists().outputs), data_(Lists().data) {
    inputs_.clear();
    outputs_.clear();
    data_.clear();
    for (size_t i = begin; i < end; ++i) {
      CompareRow& row = t_.rows[i];
      row.result = Verdict::kPass;
      row.messages.clear();
      const std::string_view name = t_.target->rows[row.target].name;
      (name.find(".output.") != std::string::npos ? outputs_ : inputs_).push_back(i);
    }
    if (!inputs_.empty()) {
      // The API: the second dot-separated part of the first input's name.
      std::string_view api = t_.target->rows[t_.rows[inputs_[0]].target].name;
      const size_t dot = api.find('.');
      if (dot != std::string_view::npos) {
        api.remove_prefix(dot + 1);
        api = api.substr(0, api.find('.'));
        static constexpr std::string_view kAll[] = {"empty",
                                                    "empty_like",
                                                    "numpy",
                                                    "to",
                                                    "__setitem__",
                                                    "empty_with_format",
                                                    "new_empty_strided",
                                                    "new_empty",
                                                    "empty_strided"};
        static constexpr std::string_view kInputs[] = {"_reduce_scatter_base", "_all_gather_base",
                                                       "all_to_all_single", "batch_isend_irecv"};
        if (std::find(std::begin(kAll), std::end(kAll), api) != std::end(kAll)) {
          ignore_ = Ignore::kAll;
        } else if (std::find(std::begin(kInputs), std::end(kInputs), api) != std::end(kInputs)) {
          ignore_ = Ignore::kInputs;
        }
      }
    }
    if (ignore_ == Ignore::kNone) data_.assign(inputs_.begin(), inputs_.end());
    if (ignore_ != Ignore::kAll) data_.insert(data_.end(), outputs_.begin(), outputs_.end());
  }

  void Run() {
    switch (t_.mode) {
      case CompareMode::kStatistics:
        InfNan();
        NormRelativeErr();
        RequiresGrad();
        ScalarParameters();
        Dtype();
        Shape();
        NormRelativeWarn();
        break;
      case CompareMode::kTensor:
        InfNan();
        OneThousandth();
        RequiresGrad();
        ScalarParameters();
        Dtype();
        Shape();
        CosineWarn();
        break;
      case CompareMode::kMd5:
        Crc32();
        break;
    }
  }

 private:
  const DumpRow& Target(size_t i) const { return t_.target->rows[t_.rows[i].target]; }
  const DumpRow* Golden(size_t i) const {
    const CompareRow& r = t_.rows[i];
    return r.paired() ? &t_.golden->rows[static_cast<size_t>(r.golden)] : nullptr;
  }

  void InfNan() {
    for (const size_t i : data_) {
      const DumpRow* g = Golden(i);
      const SummaryValue g_max =
          g != nullptr ? SummaryOf(*t_.golden, g->stats[kStatMax]) : SummaryNA();
      const SummaryValue g_min =
          g != nullptr ? SummaryOf(*t_.golden, g->stats[kStatMin]) : SummaryNA();
      if (IsInfOrNan(g_max) || IsInfOrNan(g_min)) continue;
      const DumpRow& r = Target(i);
      if (IsInfOrNan(SummaryOf(*t_.target, r.stats[kStatMax])) ||
          IsInfOrNan(SummaryOf(*t_.target, r.stats[kStatMin]))) {
        Mark(&t_.rows[i], Verdict::kError, kMsgInfNan);
      }
    }
  }

  void NormRelativeErr() {
    if (ignore_ != Ignore::kNone) return;
    if (std::fabs(Extreme(t_, inputs_, kNormRelCol, false)) >= 0.1) return;
    for (const size_t i : outputs_) {
      if (std::fabs(Str2Float(t_.rows[i].metrics[kNormRelCol])) > 0.5) {
        Mark(&t_.rows[i], Verdict::kError, kMsgNormRelErr);
      }
    }
  }

  void OneThousandth() {
    if (ignore_ != Ignore::kNone || outputs_.empty()) return;
    const double in = Extreme(t_, inputs_, kThousandthCol, true);
    const double out = Extreme(t_, outputs_, kThousandthCol, true);
    if (in > 0.9 && out < 0.1) Mark(&t_.rows[outputs_[0]], Verdict::kError, kMsgOneThousandth);
  }

  void RequiresGrad() {
    for (const size_t i : data_) {
      const DumpRow* g = Golden(i);
      if (g == nullptr) continue;
      if (RequiresGradText(*t_.target, Target(i)) != RequiresGradText(*t_.golden, *g)) {
        Mark(&t_.rows[i], Verdict::kError, kMsgRequiresGrad);
      }
    }
  }

  void ScalarParameters() {
    if (ignore_ != Ignore::kNone) return;
    for (const size_t i : inputs_) {
      const DumpRow* g = Golden(i);
      if (g == nullptr) continue;
      const DumpRow& r = Target(i);
      const std::string& t_dtype = t_.target->Text(r.dtype);
      const std::string& g_dtype = t_.golden->Text(g->dtype);
      if (t_dtype.find("class") == std::string::npos ||
          g_dtype.find("class") == std::string::npos) {
        continue;
      }
      if (t_.target->Text(r.shape) != "[]") continue;
      if (!PyEqual(SummaryOf(*t_.target, r.stats[kStatMax]),
                   SummaryOf(*t_.golden, g->stats[kStatMax]))) {
        Mark(&t_.rows[i], Verdict::kError, kMsgScalarParams);
      }
    }
  }

  void Dtype() {
    for (const size_t i : data_) {
      const DumpRow* g = Golden(i);
      if (g == nullptr) continue;
      // msprobe's DTypeErrChecker compares the dtype texts as written, so every MindSpore row
      // ("Float32") against a PyTorch one ("torch.float32") is an error there too; numprobe's own
      // Judgment stays dtype-aware. Fused qkv / gate_up bench rows are skipped, as msprobe does.
      if (g->name.find("qkv") != std::string::npos ||
          g->name.find("gate_up") != std::string::npos) {
        continue;
      }
      const std::string& t_dtype = t_.target->Text(Target(i).dtype);
      const std::string& g_dtype = t_.golden->Text(g->dtype);
      if (!t_dtype.empty() && !g_dtype.empty() && t_dtype != g_dtype) {
        Mark(&t_.rows[i], Verdict::kError, kMsgDtype);
      }
    }
  }

  void Shape() {
    for (const size_t i : data_) {
      const DumpRow* g = Golden(i);
      if (g == nullptr) continue;
      if (t_.target->Text(Target(i).shape) != t_.golden->Text(g->shape)) {
        Mark(&t_.rows[i], Verdict::kError, kMsgShape);
      }
    }
  }

  void NormRelativeWarn() {
    if (ignore_ != Ignore::kNone || outputs_.empty()) return;
    const double in = std::fabs(Extreme(t_, inputs_, kNormRelCol, false));
    const double out = std::fabs(Extreme(t_, outputs_, kNormRelCol, false));
    const bool warn = in == 0 ? out > 0.1 : out / in > 10;
    if (warn) Mark(&t_.rows[outputs_[0]], Verdict::kWarning, kMsgNormRelWarn);
  }

  void CosineWarn() {
    if (ignore_ != Ignore::kNone || outputs_.empty()) return;
    const double in = Extreme(t_, inputs_, kCosineCol, true);
    const double out = Extreme(t_, outputs_, kCosineCol, true);
    if (in > 0.9 && in - out > 0.1) Mark(&t_.rows[outputs_[0]], Verdict::kWarning, kMsgCosineWarn);
  }

  void Crc32() {
    for (const size_t i : data_) {
      const DumpRow* g = Golden(i);
      const std::string_view npu = Target(i).md5.value_or("N/A");
      const std::string_view bench = g != nullptr ? g->md5.value_or("N/A") : "N/A";
      if (npu == bench) continue;
      const bool missing = npu == "N/A" || npu == "Nan" || bench == "N/A" || bench == "Nan";
      Mark(&t_.rows[i], missing ? Verdict::kWarning : Verdict::kError,
           missing ? kMsgCrc32Unmatched : kMsgCrc32Differs);
    }
  }

  CompareTable& t_;
  // The entry's rows by role, in lists each thread reuses from entry to entry: a large compare
  // judges hundreds of thousands of entries, and allocated three vectors for each.
  struct RowLists {
    std::vector<size_t> inputs;
    std::vector<size_t> outputs;
    std::vector<size_t> data;
  };
  static RowLists& Lists() {
    thread_local RowLists lists;
    return lists;
  }
  std::vector<size_t>& inputs_;
  std::vector<size_t>& outputs_;
  std::vector<size_t>& data_;
  Ignore ignore_ = Ignore::kNone;
};

}  // namespace

std::string RequiresGradText(const DumpFile& file, const DumpRow& row) {
  return row.requires_grad.is_none() ? "N/A" : SummaryText(file, row.requires_grad);
}

void ApplyResultRules(CompareTable* table, size_t begin, size_t end) {
  ApiRules(table, begin, end).Run();
  for (size_t i = begin; i < end; ++i) {
    CompareRow& row = table->rows[i];
    if (row.paired()) continue;
    row.result = Verdict::kUnmatched;
    row.messages.push_front(row.match == MatchKind::kDtypeMismatch ? kMsgDtypeIncomparable
                                                                   : kMsgUnmatched);
  }
}

}  // namespace numprobe::detail

namespace numprobe {

std::string_view MessageText(uint8_t id) {
  return id < detail::kMsgCount ? detail::kMessages[id] : std::string_view("unknown");
}

}  // namespace numprobe
