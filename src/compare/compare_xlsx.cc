// msprobe's xlsx output: the CSV's table in a workbook, rows filled red or yellow by its
// highlighting rules (core/compare/highlight.py).
#include <cmath>
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "compare/compare_internal.h"
#include "compare/compare_writer.h"
#include "compare/xlsx_table.h"
#include "core/py_format.h"
#include "core/utf8.h"
#include "core/xlsx_workbook.h"

#ifdef NUMPROBE_WITH_XLSX
#include <xlsxwriter.h>
#endif

namespace numprobe {
namespace {

using detail::SummaryOf;
using detail::ValType;

constexpr size_t kHighlightRowLimit = 1048500;  // msprobe stops highlighting past this
constexpr uint32_t kExcelRows = 1048576;

// A metric cell as a number (percentages as fractions, msprobe's "0" for equal values as 0), or
// nullopt for text.
std::optional<double> Number(const MetricCell& c) {
  if (c.kind == MetricCell::Kind::kZero) return 0.0;
  if (c.kind == MetricCell::Kind::kPercent) return c.value / 100;
  if (c.kind == MetricCell::Kind::kValue || c.kind == MetricCell::Kind::kValueText) return c.value;
  return std::nullopt;
}

bool SummaryIsNumber(const DumpFile& f, const PyValue& v) {
  return SummaryOf(f, v).type == ValType::kNum && v.kind() != PyValue::Kind::kStr;
}

}  // namespace

std::vector<RowColor> MsprobeHighlights(const CompareTable& t) {
  std::vector<RowColor> color(t.rows.size(), RowColor::kNone);
  if (t.mode == CompareMode::kMd5) return color;
  const bool stats = t.mode == CompareMode::kStatistics;
  const int max_diff = stats ? 0 : 2;  // "Max diff" or "MaxAbsErr"
  const int stats_max_rel = 4;         // statistics "MaxRelativeErr"
  auto red = [&](size_t i) { color[i] = RowColor::kRed; };
  auto yellow = [&](size_t i) {
    if (color[i] == RowColor::kNone) color[i] = RowColor::kYellow;
  };
  const DumpFile& tf = *t.target;
  size_t begin = 0;
  while (begin < t.rows.size()) {
    const uint32_t entry = tf.rows[t.rows[begin].target].entry;
    size_t end = begin + 1;
    while (end < t.rows.size() && tf.rows[t.rows[end].target].entry == entry) ++end;
    std::vector<size_t> inputs;
    std::vector<size_t> outputs;
    for (size_t i = begin; i < end; ++i) {
      const CompareRow& r = t.rows[i];
      const DumpRow& row = tf.rows[r.target];
      // Overflow: NaN/Inf in the NPU's Max or Min, or an absurd Max diff.
      const ValType mx = SummaryOf(tf, row.stats[kStatMax]).type;
      const ValType mn = SummaryOf(tf, row.stats[kStatMin]).type;
      auto non_finite = [](ValType v) {
        return v == ValType::kNan || v == ValType::kInf || v == ValType::kNegInf;
      };
      const auto d = Number(r.metrics[max_diff]);
      if (non_finite(mx) || non_finite(mn) || (d.has_value() && std::fabs(*d) > 1e10)) red(i);
      if (row.state == RowState::kOutput) {
        outputs.push_back(i);
      } else if (row.state == RowState::kInput || row.state == RowState::kParameters) {
        inputs.push_back(i);
      }
    }
    auto numeric = [&](size_t i) {
      const CompareRow& r = t.rows[i];
      if (!r.paired()) return false;
      const DumpRow& g = t.golden->rows[static_cast<size_t>(r.golden)];
      return SummaryIsNumber(tf, tf.rows[r.target].stats[kStatMax]) &&
             SummaryIsNumber(*t.golden, g.stats[kStatMax]) &&
             Number(r.metrics[max_diff]).has_value();
    };
    for (const size_t o : outputs) {
      if (color[o] == RowColor::kRed || !numeric(o)) continue;
      for (const size_t in : inputs) {
        if (!numeric(in)) continue;
        const auto& ro = t.rows[o].metrics;
        const auto& ri = t.rows[in].metrics;
        // Order of magnitude of the max difference.
        const double din = std::fabs(*Number(ri[max_diff]));
        const double dout = std::fabs(*Number(ro[max_diff]));
        if (!(din > dout || din <= 1 || dout <= 1) && std::log10(dout) - std::log10(din) >= 1) {
          yellow(o);
        }
        if (stats) {
          const auto out_rel = Number(ro[stats_max_rel]);
          if (!out_rel.has_value()) continue;
          if (*out_rel > 0.5) red(o);
          const auto in_rel = Number(ri[stats_max_rel]);
          if (in_rel.has_value() && *out_rel > 0.1 && *in_rel < 0.01) yellow(o);
        } else {
          const auto in_k = Number(ri[4]);
          const auto out_k = Number(ro[4]);
          if (in_k.has_value() && out_k.has_value()) {
            if (*in_k > 0.9 && *out_k < 0.6) {
              red(o);
            } else if (*in_k - *out_k > 0.1) {
              yellow(o);
            }
          }
          const auto in_c = Number(ri[0]);
          const auto out_c = Number(ro[0]);
          if (in_c.has_value() && out_c.has_value() && *in_c - *out_c > 0.1) yellow(o);
        }
      }
    }
    for (size_t i = begin; i < end; ++i) {
      const CompareRow& r = t.rows[i];
      const std::string a = detail::RequiresGradText(tf, tf.rows[r.target]);
      const std::string b =
          r.paired()
              ? detail::RequiresGradText(*t.golden, t.golden->rows[static_cast<size_t>(r.golden)])
              : "N/A";
      if (a != b) yellow(i);
    }
    begin = end;
  }
  return color;
}

Status WriteCompareXlsx(const CompareTable& table, const std::filesystem::path& path) {
  const std::vector<RowColor> colors = MsprobeHighlights(table);
  detail::XlsxTable x;
  x.header = table.Header();
  x.rows = table.rows.size();
  x.cells = [&table](size_t i) { return table.CsvCells(i); };
  x.color = [&colors](size_t i) { return i < kHighlightRowLimit ? colors[i] : RowColor::kNone; };
  return detail::WriteXlsxTable(x, path);
}

namespace detail {

Status WriteXlsxTable(const XlsxTable& table, const std::filesystem::path& path) {
#ifdef NUMPROBE_WITH_XLSX
  // Rows stream to disk (constant memory): memory does not grow with the table.
  NUMPROBE_ASSIGN_OR_RETURN(detail::XlsxWorkbook workbook,
                            detail::XlsxWorkbook::Create(path, /*constant_memory=*/true));
  lxw_workbook* wb = workbook.get();
  lxw_format* red = workbook_add_format(wb);
  format_set_pattern(red, LXW_PATTERN_SOLID);
  format_set_bg_color(red, 0xFF0000);
  lxw_format* yellow = workbook_add_format(wb);
  format_set_pattern(yellow, LXW_PATTERN_SOLID);
  format_set_bg_color(yellow, 0xFFFF00);
  const std::vector<std::string>& header = table.header;
  lxw_worksheet* ws = nullptr;
  uint32_t row_in_sheet = 0;
  int sheets = 0;
  bool ok = true;
  auto write_cell = [&](uint32_t r, uint16_t c, std::string text, lxw_format* fmt) {
    double v = 0;
    if (text == " inf" || text == " -inf") {
      text = text.substr(1) + "\t";  // msprobe writes float Inf into xlsx as "inf\t"
    } else if (detail::ParsePyNumber(text, &v) && std::isfinite(v)) {
      ok &= worksheet_write_number(ws, r, c, v, fmt) == LXW_NO_ERROR;
      return;
    }
    text.resize(detail::Utf8PrefixLength(text, 32767));  // Excel's cell limit
    ok &= worksheet_write_string(ws, r, c, text.c_str(), fmt) == LXW_NO_ERROR;
  };
  auto new_sheet = [&] {
    ++sheets;
    const std::string name = sheets == 1 ? "Sheet" : fmt::format("Sheet{}", sheets);
    ws = workbook_add_worksheet(wb, name.c_str());
    if (ws == nullptr) return false;
    for (size_t c = 0; c < header.size(); ++c)
      write_cell(0, static_cast<uint16_t>(c), header[c], nullptr);
    row_in_sheet = 1;
    return true;
  };
  ok = new_sheet();
  for (size_t i = 0; ok && i < table.rows; ++i) {
    if (row_in_sheet >= kExcelRows && !new_sheet()) {
      ok = false;
      break;
    }
    lxw_format* fmt = nullptr;
    const RowColor color = table.color ? table.color(i) : RowColor::kNone;
    if (color == RowColor::kRed) fmt = red;
    if (color == RowColor::kYellow) fmt = yellow;
    const std::vector<std::string> cells = table.cells(i);
    for (size_t c = 0; c < cells.size(); ++c) {
      write_cell(row_in_sheet, static_cast<uint16_t>(c), cells[c], fmt);
    }
    ++row_in_sheet;
  }
  return workbook.Close(ok);
#else
  (void)table;
  return Status::Unsupported(path.string() +
                             ": xlsx output needs libxlsxwriter, which this build "
                             "left out");
#endif
}

}  // namespace detail
}  // namespace numprobe
