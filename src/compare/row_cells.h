// The cells of a compare table's row, in column order (CompareTable::Header), handed to a sink as
// they are made: CompareTable::CsvCells collects them as strings (the workbook, serve), and the
// CSV and JSON writer puts them straight into both files' text, formatting each cell once and
// scanning only the cells that may need quoting. A sink has:
//   Text(std::string_view)  a cell as it stands;
//   Float(double)           a number: Python's repr, "N/A" for NaN (never quoted in CSV);
//   Write(fn)               a cell that fn(std::string*) appends to an empty string;
//   Interned(file, id)      file.Text(id), a text the dump interned (a dtype, a shape): the same
//                           file and id are the same text, so a sink may reuse what it made of it;
//   Messages(list)          the Err_message cell of `list` (MessagesCellText), likewise by list.
#ifndef NUMPROBE_COMPARE_ROW_CELLS_H_
#define NUMPROBE_COMPARE_ROW_CELLS_H_

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/compare.h"

#include "compare/compare_internal.h"
#include "core/py_format.h"

namespace numprobe::detail {

// The Err_message cell: msprobe's JSON list of the row's messages.
inline std::string MessagesCellText(MessageList list) {
  if (list.empty()) return "[]";
  std::vector<std::string> messages;
  for (size_t m = 0; m < list.size(); ++m) messages.emplace_back(MessageText(list[m]));
  return JsonStringList(messages);
}

template <typename Sink>
void ForEachCell(const CompareTable& table, size_t i, Sink& sink) {
  const std::string_view na = "N/A";
  const CompareRow& row = table.rows[i];
  const DumpFile& target = *table.target;
  const DumpFile& golden = *table.golden;
  const DumpRow& t = target.rows[row.target];
  const DumpRow* g = row.paired() ? &golden.rows[static_cast<size_t>(row.golden)] : nullptr;
  sink.Text(t.name);
  sink.Text(g != nullptr ? std::string_view{g->name} : na);
  sink.Interned(target, t.dtype);
  if (g != nullptr) {
    sink.Interned(golden, g->dtype);
  } else {
    sink.Text(na);
  }
  sink.Interned(target, t.shape);
  if (g != nullptr) {
    sink.Interned(golden, g->shape);
  } else {
    sink.Text(na);
  }
  const std::string t_rg = RequiresGradText(target, t);
  const std::string g_rg = g != nullptr ? RequiresGradText(golden, *g) : std::string(na);
  sink.Text(t_rg);
  sink.Text(g_rg);
  // A finite float's text is its repr (Float); the other values have texts of their own.
  auto summary_cell = [&](const DumpFile& file, const PyValue& value) {
    if (value.kind() == PyValue::Kind::kFloat && std::isfinite(value.as_float())) {
      sink.Float(value.as_float());
    } else {
      sink.Write([&](std::string* cell) { AppendSummaryCsv(SummaryOf(file, value), cell); });
    }
  };
  auto summary = [&] {
    for (int s = 0; s < 4; ++s) summary_cell(target, t.stats[s]);
    for (int s = 0; s < 4; ++s) {
      if (g != nullptr) {
        summary_cell(golden, g->stats[s]);
      } else {
        sink.Text(na);
      }
    }
  };
  auto metrics = [&](int count) {
    for (int m = 0; m < count; ++m) {
      const MetricCell cell = row.metrics[m];
      const bool repr =
          cell.kind == MetricCell::Kind::kValue || cell.kind == MetricCell::Kind::kValueText;
      if (repr && std::isfinite(cell.value)) {
        sink.Float(cell.value);
      } else {
        sink.Write([&](std::string* text) { cell.AppendText(text); });
      }
    }
  };
  switch (table.mode) {
    case CompareMode::kStatistics:
      metrics(8);
      summary();
      break;
    case CompareMode::kTensor:
      metrics(6);
      summary();
      break;
    case CompareMode::kMd5:
      sink.Text(t.md5.has_value() ? std::string_view{*t.md5} : na);
      sink.Text((g != nullptr) && g->md5.has_value() ? std::string_view{*g->md5} : na);
      break;
  }
  sink.Text(t_rg == g_rg ? "True" : "False");
  sink.Text(EnumName(row.result));
  sink.Messages(row.messages);
  if (table.has_stack()) {
    const DumpEntry& entry = target.entries[t.entry];
    const std::vector<std::string>* lines =
        row.target == entry.first_row ? table.stack->Find(entry.name) : nullptr;
    if (lines != nullptr) {
      sink.Text(PyStrListRepr(*lines));
    } else {
      sink.Text(na);
    }
  }
  if (table.mode == CompareMode::kTensor) {
    const std::string t_data(t.data_name.empty() ? "-1" : t.data_name);
    const std::string g_data(g != nullptr ? (g->data_name.empty() ? "-1" : g->data_name)
                                          : std::string_view(na));
    sink.Text(PyStrListRepr({t_data, g_data}));
    if (row.extras != nullptr) {
      const TensorExtras& e = *row.extras;
      sink.Float(e.mean_abs_err);
      sink.Float(e.mean_rel_err);
      sink.Float(e.rmse);
      sink.Float(e.sqnr_db);
      sink.Float(e.max_ulp);
      sink.Float(e.mean_ulp);
      sink.Text(e.ulp_dtype.empty() ? na : std::string_view{e.ulp_dtype});
      sink.Float(e.allclose_ratio);
      sink.Text(std::to_string(e.nan_mismatch));
      sink.Text(std::to_string(e.pos_inf_mismatch));
      sink.Text(std::to_string(e.neg_inf_mismatch));
      sink.Text(std::to_string(e.worst_index));
    } else {
      for (int m = 0; m < 12; ++m) sink.Text(na);
    }
  }
  sink.Float(row.error);
  sink.Float(row.tolerance);
  if (std::isnan(row.error) || std::isnan(row.tolerance)) {
    sink.Text(na);
  } else {
    sink.Text(row.over_tolerance() ? "differs" : "ok");
  }
  sink.Text(EnumName(row.match));
}

}  // namespace numprobe::detail

#endif  // NUMPROBE_COMPARE_ROW_CELLS_H_
