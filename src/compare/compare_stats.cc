// Statistics-mode cells, reproducing msprobe's CalcStatsDiff: values equal as text give "0";
// numbers give their difference and "|diff/bench*100|%" ("inf" when bench is 0); NaN, inf, N/A,
// device strings and other text give msprobe's tokens.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "compare/compare_internal.h"
#include "core/py_format.h"

namespace numprobe::detail {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

ValType ClassifyText(const std::string& text, double* number) {
  const std::string lower = Lower(text);
  if (lower == "nan") return ValType::kNan;
  if (lower == "inf") return ValType::kInf;
  if (lower == "-inf") return ValType::kNegInf;
  if (lower != "true" && lower != "false" && ParsePyNumber(text, number)) return ValType::kNum;
  if (lower.find("npu") != std::string::npos || lower.find("cpu") != std::string::npos ||
      lower.find("cuda") != std::string::npos) {
    return ValType::kDevice;
  }
  if (text == "N/A") return ValType::kNA;
  return ValType::kOther;
}

}  // namespace

SummaryValue SummaryNA() { return {}; }

SummaryValue SummaryOf(const DumpFile& file, const PyValue& value) {
  SummaryValue v;
  v.raw = &value;
  v.file = &file;
  switch (value.kind()) {
    case PyValue::Kind::kNone:
    case PyValue::Kind::kBool:
      v.type = ValType::kOther;
      break;
    case PyValue::Kind::kInt:
      v.number = static_cast<double>(value.as_int());
      v.type = ValType::kNum;
      break;
    case PyValue::Kind::kBigInt:
      v.number = std::strtod(file.Text(value.text_id()).c_str(), nullptr);
      v.type = ValType::kNum;
      break;
    case PyValue::Kind::kFloat: {
      const double f = value.as_float();
      v.number = f;
      v.is_float = !std::isnan(f);  // msprobe's set_summary turns NaN into the string "Nan"
      if (std::isnan(f)) {
        v.type = ValType::kNan;
      } else if (std::isinf(f)) {
        v.type = f > 0 ? ValType::kInf : ValType::kNegInf;
      } else {
        v.type = ValType::kNum;
      }
      break;
    }
    case PyValue::Kind::kStr:
      v.type = ClassifyText(file.Text(value.text_id()), &v.number);
      break;
  }
  return v;
}

std::string SummaryText(const DumpFile& file, const PyValue& value) {
  switch (value.kind()) {
    case PyValue::Kind::kNone:
      return "None";
    case PyValue::Kind::kBool:
      return value.as_bool() ? "True" : "False";
    case PyValue::Kind::kInt:
      return std::to_string(value.as_int());
    case PyValue::Kind::kBigInt:
    case PyValue::Kind::kStr:
      return file.Text(value.text_id());
    case PyValue::Kind::kFloat: {
      const double f = value.as_float();
      if (std::isnan(f)) return "Nan";
      if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
      return PyFloatRepr(f);
    }
  }
  return "";
}

std::string SummaryValue::Text() const { return raw == nullptr ? "N/A" : SummaryText(*file, *raw); }

bool SummaryValue::SameText(const SummaryValue& o) const {
  if (raw == nullptr || o.raw == nullptr) return raw == nullptr && o.raw == nullptr;
  const auto a = raw->kind();
  const auto b = o.raw->kind();
  if (a == b) {
    switch (a) {
      case PyValue::Kind::kNone:
        return true;
      case PyValue::Kind::kBool:
        return raw->as_bool() == o.raw->as_bool();
      case PyValue::Kind::kInt:
        return raw->as_int() == o.raw->as_int();
      case PyValue::Kind::kFloat: {
        const double x = raw->as_float();
        const double y = o.raw->as_float();
        if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
        return x == y && std::signbit(x) == std::signbit(y);  // repr is unique per value
      }
      case PyValue::Kind::kBigInt:
      case PyValue::Kind::kStr:
        return file->Text(raw->text_id()) == o.file->Text(o.raw->text_id());
    }
  }
  // Different kinds can still print alike (the string "1.5" and the float 1.5).
  return Text() == o.Text();
}

std::string SummaryCsvText(const SummaryValue& v) {
  std::string out;
  AppendSummaryCsv(v, &out);
  return out;
}

void AppendSummaryCsv(const SummaryValue& v, std::string* out) {
  if (v.raw != nullptr && v.raw->kind() == PyValue::Kind::kFloat) {
    const double f = v.raw->as_float();
    if (std::isnan(f)) {
      *out += "Nan";
    } else if (std::isinf(f)) {
      *out += f > 0 ? " inf" : " -inf";
    } else {
      AppendPyFloatRepr(f, out);
    }
    return;
  }
  *out += v.Text();
}

void FillStatisticsCells(const CompareTable& table, CompareRow* row) {
  using Kind = MetricCell::Kind;
  const DumpRow& t = table.target->rows[row->target];
  const DumpRow* g =
      row->paired() ? &table.golden->rows[static_cast<size_t>(row->golden)] : nullptr;
  for (int k = 0; k < 4; ++k) {
    const SummaryValue a = SummaryOf(*table.target, t.stats[k]);
    const SummaryValue b = g != nullptr ? SummaryOf(*table.golden, g->stats[k]) : SummaryNA();
    MetricCell diff;
    MetricCell rel;
    if (a.SameText(b)) {
      row->metrics.Set(k, MetricCell::Of(Kind::kZero));
      row->metrics.Set(k + 4, MetricCell::Of(Kind::kZero));
      continue;
    }
    const ValType x = a.type;
    const ValType y = b.type;
    auto both = [&](Kind kind) { diff = rel = MetricCell::Of(kind); };
    auto numeric = [](ValType v) {
      return v == ValType::kNum || v == ValType::kNan || v == ValType::kInf ||
             v == ValType::kNegInf;
    };
    // One branch per msprobe rule, in msprobe's order, so equal outcomes repeat.
    // NOLINTBEGIN(bugprone-branch-clone)
    if (x == ValType::kNA || y == ValType::kNA) {
      both(Kind::kNA);
    } else if (x == ValType::kNum && y == ValType::kNum) {
      const double d = a.number - b.number;
      diff = MetricCell::Of(Kind::kValueText, d);
      rel = b.number == 0 ? MetricCell::Of(Kind::kInf)
                          : MetricCell::Of(Kind::kPercent, std::fabs(d / b.number * 100));
    } else if ((x == ValType::kNan && numeric(y)) || (y == ValType::kNan && numeric(x))) {
      both(Kind::kNan);
    } else if (x == ValType::kInf && (y == ValType::kNum || y == ValType::kNegInf)) {
      both(Kind::kInf);
    } else if (x == ValType::kNegInf && (y == ValType::kNum || y == ValType::kInf)) {
      both(Kind::kNegInf);
    } else if (x == ValType::kNum && y == ValType::kInf) {
      both(Kind::kNegInf);
    } else if (x == ValType::kNum && y == ValType::kNegInf) {
      both(Kind::kInf);
    } else if (x == ValType::kDevice && y == ValType::kDevice) {
      both(Kind::kNA);
    } else if ((x == ValType::kDevice || x == ValType::kOther) ||
               (y == ValType::kDevice || y == ValType::kOther)) {
      both(Kind::kDiff);
    } else {
      both(Kind::kNA);  // msprobe's default rule
    }
    // NOLINTEND(bugprone-branch-clone)
    row->metrics.Set(k, diff);
    row->metrics.Set(k + 4, rel);
  }
}

}  // namespace numprobe::detail
