// The compare half of _numprobe: `numprobe compare` (CompareDumpTrees, compare_trees.h) and
// `numprobe config-check compare` (CompareSnapshots), keeping the C++ results so that save()
// writes the subcommands' files with the library's writers. numprobe/tree_compare.py and
// numprobe/config_check.py wrap them.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "numprobe/app/config_check.h"
#include "numprobe/compare_trees.h"
#include "numprobe/enum_names.h"

#include "divergence_dict.h"
#include "py_errors.h"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace numprobe {
namespace {

struct TreeCompare {
  CompareTreesOptions options;
  CompareTreesResult result;
  std::vector<std::string> warnings;  // ranks skipped (dump.json {}), from options.warning
};

py::dict RankDict(const RankCompare& r) {
  py::dict d;
  d["label"] = r.label;
  d["scope"] = r.pair.scope;
  d["rank"] = r.pair.rank;
  d["mode"] = std::string(EnumName(r.table.mode));
  d["header"] = r.table.Header();
  py::list rows;
  std::vector<std::string> cells;
  for (size_t i = 0; i < r.table.rows.size(); ++i) {
    r.table.CsvCells(i, &cells);
    rows.append(py::cast(cells));
  }
  d["rows"] = rows;
  d["first"] = r.report.first ? py::object(DivergenceDict(*r.report.first)) : py::none();
  py::list next;
  for (const DivergenceOp& op : r.report.next) next.append(DivergenceDict(op));
  d["next"] = next;
  d["ops_examined"] = r.report.ops_examined;
  d["first_over_tolerance"] = r.report.first_over_tolerance;
  std::vector<std::string> warnings;
  for (const std::string& w : r.table.warnings) warnings.push_back(r.label + ": " + w);
  d["warnings"] = warnings;
  return d;
}

py::dict CheckItemDict(const CheckItem& i) {
  py::dict d;
  d["category"] = std::string(EnumName(i.category));
  d["name"] = i.name;
  d["name_b"] = i.name_b;
  d["a"] = i.a;
  d["b"] = i.b;
  d["level"] = std::string(EnumName(i.level));
  d["note"] = i.note;
  return d;
}

}  // namespace

py::dict DivergenceDict(const DivergenceOp& op) {
  py::dict d;
  d["op_name"] = op.op_name;
  d["entry"] = op.entry;
  d["backward"] = op.backward;
  d["rule"] = op.rule;
  d["reason"] = op.reason;
  d["input_error"] = op.input_error;
  d["output_error"] = op.output_error;
  d["tolerance"] = op.tolerance;
  d["growth"] = op.growth;
  d["worst_output"] = op.worst_output;
  d["dtype_pair"] = op.dtype_pair;
  d["non_finite"] = op.non_finite;
  d["module_path"] = op.module_path;
  d["stack"] = op.stack;
  d["at"] = op.at;
  py::list arguments;
  for (const ArgumentChange& a : op.arguments) {
    arguments.append(py::make_tuple(a.name, a.target, a.golden));
  }
  d["arguments"] = arguments;
  d["cast"] = op.cast ? py::object(py::str(op.cast->name + " (" + op.cast->from_dtype + " -> " +
                                           op.cast->to_dtype + ")"))
                      : py::object(py::none());
  return d;
}

void BindCompare(py::module_& m) {
  py::class_<TreeCompare, std::shared_ptr<TreeCompare>>(m, "_TreeCompare")
      .def_property_readonly("ranks",
                             [](const TreeCompare& c) {
                               py::list out;
                               for (const RankCompare& r : c.result.ranks) out.append(RankDict(r));
                               return out;
                             })
      .def_property_readonly("missing",
                             [](const TreeCompare& c) {
                               std::vector<std::string> out;
                               for (const MissingRank& r : c.result.missing) {
                                 out.push_back(r.Text());
                               }
                               return out;
                             })
      .def_readonly("warnings", &TreeCompare::warnings)
      .def_property_readonly("earliest", [](const TreeCompare& c) { return c.result.earliest; })
      .def(
          "save",
          [](TreeCompare& c, const fs::path& dir, const std::string& timestamp, bool xlsx,
             bool diff_analyze) {
            CompareTreesOptions options = c.options;
            options.output = dir;
            options.timestamp = timestamp;
            options.xlsx = xlsx;
            options.diff_analyze = diff_analyze;
            {
              py::gil_scoped_release release;
              ThrowIfError(WriteCompareTreesFiles(options, &c.result));
            }
            std::vector<fs::path> written;
            for (const RankCompare& r : c.result.ranks) {
              written.push_back(r.table_file);
              written.push_back(r.json_file);
            }
            written.push_back(c.result.divergence_file);
            if (!c.result.diff_analyze_file.empty()) written.push_back(c.result.diff_analyze_file);
            return written;
          },
          py::arg("dir"), py::arg("timestamp"), py::arg("xlsx"), py::arg("diff_analyze"));
  m.def(
      "_compare_trees",
      [](const fs::path& target, const fs::path& golden, bool fuzzy,
         const std::optional<fs::path>& data_mapping, const std::optional<fs::path>& cell_mapping,
         const std::optional<fs::path>& api_mapping, const std::optional<fs::path>& layer_mapping,
         bool align) {
        auto c = std::make_shared<TreeCompare>();
        CompareMapping& mapping = c->options.compare.mapping;
        mapping.fuzzy = fuzzy;
        mapping.align = align;
        if (data_mapping) mapping.data_mapping_file = *data_mapping;
        if (cell_mapping) {
          mapping.cell_mapping = true;
          mapping.cell_mapping_file = *cell_mapping;
        }
        if (api_mapping) {
          mapping.api_mapping = true;
          mapping.api_mapping_file = *api_mapping;
        }
        if (layer_mapping) mapping.layer_mapping_file = *layer_mapping;
        std::vector<std::string>* warnings = &c->warnings;
        c->options.warning = [warnings](std::string_view w) { warnings->emplace_back(w); };
        Result<CompareTreesResult> result = [&] {
          py::gil_scoped_release release;
          return CompareDumpTrees(target, golden, c->options);
        }();
        c->result = ValueOrThrow(std::move(result));
        c->options.warning = nullptr;  // `warnings` must not be written after this call
        return c;
      },
      py::arg("target"), py::arg("golden"), py::arg("fuzzy"), py::arg("data_mapping"),
      py::arg("cell_mapping"), py::arg("api_mapping"), py::arg("layer_mapping"), py::arg("align"));

  py::class_<CheckReport, std::shared_ptr<CheckReport>>(m, "_CheckReport")
      .def_readonly("a_label", &CheckReport::a_label)
      .def_readonly("b_label", &CheckReport::b_label)
      .def_property_readonly("differs", &CheckReport::differs)
      .def_property_readonly("items",
                             [](const CheckReport& r) {
                               py::list out;
                               for (const CheckItem& i : r.items) out.append(CheckItemDict(i));
                               return out;
                             })
      .def_property_readonly("summary",
                             [](const CheckReport& r) {
                               py::dict out;
                               for (const CheckCategory c : kCheckCategoryOrder) {
                                 out[py::str(std::string(EnumName(c)))] =
                                     std::string(EnumName(r.Summary(c)));
                               }
                               return out;
                             })
      .def(
          "save",
          [](const CheckReport& r, const fs::path& dir, const std::string& timestamp, bool xlsx) {
            std::error_code ec;
            fs::create_directories(dir, ec);
            if (ec) {
              ThrowIfError(Status::IoError(
                  fmt::format("{}: cannot create folder: {}", dir.string(), ec.message())));
            }
            std::vector<fs::path> written = {dir / fmt::format("config_check_{}.csv", timestamp),
                                             dir / fmt::format("config_check_{}.json", timestamp)};
            ThrowIfError(WriteCheckCsv(r, written[0]));
            ThrowIfError(WriteCheckJson(r, written[1]));
            if (xlsx) {
              written.push_back(dir / fmt::format("config_check_{}.xlsx", timestamp));
              ThrowIfError(WriteCheckXlsx(r, written[2]));
            }
            return written;
          },
          py::arg("dir"), py::arg("timestamp"), py::arg("xlsx"));
  m.def(
      "_config_check_compare",
      [](const fs::path& a, const fs::path& b) {
        Snapshot snapshot_a = ValueOrThrow(ReadSnapshot(a));
        Snapshot snapshot_b = ValueOrThrow(ReadSnapshot(b));
        return std::make_shared<CheckReport>(
            CompareSnapshots(snapshot_a, snapshot_b, a.string(), b.string()));
      },
      py::arg("a"), py::arg("b"));
}

}  // namespace numprobe
