// The library calls the closed loop makes at stop() (numprobe.pytorch._closed_loop): compare this
// run's dump tree against the baseline's (CompareDumpTrees, with the first divergence), write
// report.html (WriteHtmlReport, as `numprobe report`), and compare two config-check snapshots.
// Each returns plain Python values; the wording printed to the user is the Python side's.
#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "numprobe/app/config_check.h"
#include "numprobe/compare.h"
#include "numprobe/compare_trees.h"
#include "numprobe/divergence.h"
#include "numprobe/enum_names.h"
#include "numprobe/verdict.h"
#if NUMPROBE_WITH_WEBUI
#include "numprobe/app/report.h"
#endif

#include "divergence_dict.h"
#include "py_errors.h"

namespace py = pybind11;

namespace numprobe {
namespace {

// The cells of the compare row of `table` named `row_name`, by column ({} when there is none).
py::dict RowCells(const CompareTable& table, const std::string& row_name) {
  py::dict cells;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    if (table.target->rows[table.rows[i].target].name != row_name) continue;
    const std::vector<std::string> header = table.Header();
    const std::vector<std::string> values = table.CsvCells(i);
    for (size_t c = 0; c < header.size() && c < values.size(); ++c)
      cells[py::str(header[c])] = values[c];
    break;
  }
  return cells;
}

py::dict OpToDict(const DivergenceOp& op, const CompareTable& table) {
  py::dict d = DivergenceDict(op);
  d["cells"] = RowCells(table, op.worst_output);
  return d;
}

py::dict RankToDict(const RankCompare& r) {
  py::dict d;
  d["label"] = r.label;
  d["mode"] = std::string(EnumName(r.table.mode));
  d["rows"] = r.table.rows.size();
  std::array<int64_t, std::size(kVerdictNames)> counts{};
  for (const CompareRow& row : r.table.rows) ++counts[static_cast<size_t>(row.result)];
  py::dict by_verdict;
  for (const auto& entry : kVerdictNames) {
    by_verdict[py::str(std::string(entry.name))] = counts[static_cast<size_t>(entry.value)];
  }
  d["counts"] = by_verdict;
  d["table_file"] = r.table_file.string();
  d["json_file"] = r.json_file.string();
  d["warnings"] = r.table.warnings;
  d["rows_over_tolerance"] = r.report.rows_over_tolerance;
  d["first_over_tolerance"] = r.report.first_over_tolerance;
  d["first"] =
      r.report.first ? py::object(OpToDict(*r.report.first, r.table)) : py::object(py::none());
  py::list next;
  for (const DivergenceOp& n : r.report.next) next.append(n.op_name);
  d["next"] = next;
  return d;
}

}  // namespace

void BindClosedLoop(py::module_& m) {
  m.def(
      "compare_metric_columns",
      [] {
        py::dict columns;
        for (const CompareMetricName& metric : kCompareMetricNames) {
          columns[py::str(std::string(metric.name))] = std::string(metric.column);
        }
        return columns;
      },
      "The compare metrics' short names (cosine, mae, relative, ...) and their table columns.");
  m.def(
      "compare_dump_trees",
      [](const std::string& target, const std::string& golden, const std::string& output,
         const std::string& timestamp) {
        CompareTreesOptions options;
        options.output = output;
        options.timestamp = timestamp;
        std::vector<std::string> warnings;
        options.warning = [&warnings](std::string_view w) { warnings.emplace_back(w); };
        Result<CompareTreesResult> result = [&] {
          py::gil_scoped_release release;
          return CompareDumpTrees(target, golden, options);
        }();
        CompareTreesResult r = ValueOrThrow(std::move(result));
        py::dict out;
        py::list ranks;
        for (const RankCompare& rank : r.ranks) ranks.append(RankToDict(rank));
        out["ranks"] = ranks;
        py::list missing;
        for (const MissingRank& mr : r.missing) missing.append(mr.Text());
        out["missing"] = missing;
        out["earliest"] = r.earliest;
        out["divergence_file"] = r.divergence_file.string();
        out["warnings"] = warnings;
        return out;
      },
      py::arg("target"), py::arg("golden"), py::arg("output"), py::arg("timestamp"),
      "numprobe compare TARGET GOLDEN -o OUTPUT (the library's CompareDumpTrees): every rank's "
      "counts and first divergence as a dict; the result files are written into OUTPUT.");

  m.def(
      "write_html_report",
      [](const std::string& result, const std::string& out) {
#if NUMPROBE_WITH_WEBUI
        Status st;
        {
          py::gil_scoped_release release;
          st = WriteHtmlReport(result, out);
        }
        ThrowIfError(st);
#else
        (void)result;
        (void)out;
        ThrowIfError(
            Status::Unsupported("this numprobe was built without the web UI (configure with "
                                "-DNUMPROBE_WITH_WEBUI=ON)"));
#endif
      },
      py::arg("result"), py::arg("out"),
      "numprobe report RESULT -o OUT: the self-contained report.html of a compare output folder.");

  m.def(
      "compare_snapshot_files",
      [](const std::string& a, const std::string& b, const std::string& output_dir,
         const std::string& timestamp) {
        Snapshot sa = ValueOrThrow(ReadSnapshot(a));
        Snapshot sb = ValueOrThrow(ReadSnapshot(b));
        const CheckReport report = CompareSnapshots(sa, sb, a, b);
        py::dict out;
        if (!output_dir.empty()) {
          const std::filesystem::path dir(output_dir);
          std::error_code ec;
          std::filesystem::create_directories(dir, ec);
          if (ec) ThrowIfError(Status::IoError(output_dir + ": cannot create: " + ec.message()));
          // The names `numprobe config-check compare` gives them.
          const auto csv = dir / ("config_check_" + timestamp + ".csv");
          const auto json = dir / ("config_check_" + timestamp + ".json");
          ThrowIfError(WriteCheckCsv(report, csv));
          ThrowIfError(WriteCheckJson(report, json));
          out["csv"] = csv.string();
          out["json"] = json.string();
        }
        py::list items;
        for (const CheckItem& item : report.items) {
          if (item.level == Verdict::kPass) continue;
          py::dict d;
          d["category"] = std::string(EnumName(item.category));
          d["name"] = item.name;
          d["a"] = item.a ? py::object(py::str(*item.a)) : py::object(py::none());
          d["b"] = item.b ? py::object(py::str(*item.b)) : py::object(py::none());
          d["level"] = std::string(EnumName(item.level));
          d["note"] = item.note;
          items.append(d);
        }
        out["differs"] = report.differs();
        out["items"] = items;
        return out;
      },
      py::arg("a"), py::arg("b"), py::arg("output_dir") = "", py::arg("timestamp") = "",
      "numprobe config-check compare A B -o OUTPUT_DIR: the items that are not 'pass', and the "
      "result files' paths.");
}

}  // namespace numprobe
