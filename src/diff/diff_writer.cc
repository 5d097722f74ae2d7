// CSV and JSON files of a diff report (columns and fields: docs/diff.md).
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>

#include "numprobe/diff.h"

#include "core/atomic_file.h"
#include "core/csv.h"
#include "core/json_writer.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;
using detail::CsvLine;

std::string ShapeText(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// Shortest round-trip text; "nan", "inf", "-inf" for the non-finite values.
std::string Number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{}", v);
}

std::string UnpairedStatus(std::string_view name, char side) {
  return fmt::format("only in {}{}", side, IsFrameworkOnlyName(name) ? " (framework-only)" : "");
}

const std::vector<std::string> kValueColumns = {
    "name_a",       "name_b",      "rule",     "status",         "shape_a",   "shape_b",
    "dtype_a",      "dtype_b",     "allclose", "allclose_ratio", "cosine",    "mean_abs_diff",
    "max_abs_diff", "max_rel_err", "rmse",     "max_ulp",        "ulp_dtype", "nan_mismatch",
    "inf_mismatch", "worst_index", "note"};

}  // namespace

Status WriteDiffValuesCsv(const DiffReport& report, const fs::path& path) {
  std::string text = CsvLine(kValueColumns);
  for (const DiffRow& r : report.rows) {
    const NamedTensor& a = report.a.tensors[r.pair.a];
    const NamedTensor& b = report.b.tensors[r.pair.b];
    std::vector<std::string> cells = {a.name,
                                      b.name,
                                      std::string(EnumName(r.pair.rule)),
                                      std::string(DiffStatusText(r)),
                                      ShapeText(a.tensor.shape()),
                                      ShapeText(b.tensor.shape()),
                                      std::string(Name(a.tensor.dtype())),
                                      std::string(Name(b.tensor.dtype()))};
    if (r.compared()) {
      const DiffMetrics& m = r.metrics;
      for (const std::string& cell :
           {std::string(m.allclose ? "True" : "False"), Number(m.allclose_ratio), Number(m.cosine),
            Number(m.mean_abs), Number(m.max_abs), Number(m.max_rel), Number(m.rmse),
            Number(m.max_ulp), m.ulp_dtype, fmt::format("{}", m.nan_mismatch),
            fmt::format("{}", m.inf_mismatch), fmt::format("{}", m.worst_index)}) {
        cells.push_back(cell);
      }
    } else {
      cells.resize(kValueColumns.size() - 1);
      cells[8] = "False";
    }
    cells.resize(kValueColumns.size() - 1);
    cells.push_back(r.note);
    text += CsvLine(cells);
  }
  auto unpaired = [&](const DiffSource& s, const std::vector<size_t>& idx, bool is_a) {
    for (size_t i : idx) {
      const NamedTensor& t = s.tensors[i];
      std::vector<std::string> cells(kValueColumns.size());
      cells[is_a ? 0 : 1] = t.name;
      cells[3] = UnpairedStatus(t.name, is_a ? 'A' : 'B');
      cells[is_a ? 4 : 5] = ShapeText(t.tensor.shape());
      cells[is_a ? 6 : 7] = std::string(Name(t.tensor.dtype()));
      text += CsvLine(cells);
    }
  };
  unpaired(report.a, report.only_a, true);
  unpaired(report.b, report.only_b, false);
  return detail::WriteFileAtomically(path, text);
}

Status WriteDiffShapesCsv(const DiffReport& report, const fs::path& path) {
  std::string text = CsvLine({"name_a", "name_b", "shape_equal", "shape_a", "shape_b"});
  for (const DiffRow& r : report.rows) {
    const Tensor& a = report.a.tensors[r.pair.a].tensor;
    const Tensor& b = report.b.tensors[r.pair.b].tensor;
    const char* equal = a.shape() == b.shape()                   ? "True"
                        : ShapesCompatible(a.shape(), b.shape()) ? "True (size-1 dims ignored)"
                                                                 : "False";
    text += CsvLine({report.a.tensors[r.pair.a].name, report.b.tensors[r.pair.b].name, equal,
                     ShapeText(a.shape()), ShapeText(b.shape())});
  }
  for (size_t i : report.only_a) {
    text += CsvLine(
        {report.a.tensors[i].name, "", "False", ShapeText(report.a.tensors[i].tensor.shape()), ""});
  }
  for (size_t j : report.only_b) {
    text += CsvLine(
        {"", report.b.tensors[j].name, "False", "", ShapeText(report.b.tensors[j].tensor.shape())});
  }
  return detail::WriteFileAtomically(path, text);
}

Status WriteDiffJson(const DiffReport& report, const fs::path& path) {
  rapidjson::StringBuffer buffer;
  JsonWriter<rapidjson::StringBuffer> w(buffer, JsonFileKind::kDiff);
  auto str = [&](std::string_view s) { w.String(s); };
  auto num = [&](double v) { w.Double(v); };  // NaN/Inf as null (core/json_writer.h)
  auto shape = [&](const std::vector<int64_t>& s) {
    w.StartArray();
    for (int64_t d : s) w.Int64(d);
    w.EndArray();
  };
  auto side = [&](const DiffSource& s) {
    w.StartObject();
    str("path");
    str(s.path.string());
    str("kind");
    str(s.kind);
    str("tensors");
    w.Uint64(s.tensors.size());
    w.EndObject();
  };
  w.StartObject();
  str("a");
  side(report.a);
  str("b");
  side(report.b);
  str("rtol");
  w.Double(report.rtol);
  str("atol");
  w.Double(report.atol);
  str("summary");
  w.StartObject();
  str("pairs");
  w.Uint64(report.rows.size());
  const std::pair<const char*, int64_t> counts[] = {
      {"equal", report.CountCompared(Verdict::kPass)},
      {"differs", report.CountCompared(Verdict::kError)},
      {"shape_mismatch", report.CountSkipped(DiffSkip::kShapeMismatch)},
      {"not_compared", report.CountSkipped(DiffSkip::kUnsupported)}};
  for (const auto& [key, count] : counts) {
    str(key);
    w.Int64(count);
  }
  str("only_a");
  w.Uint64(report.only_a.size());
  str("only_b");
  w.Uint64(report.only_b.size());
  str("clean");
  w.Bool(report.clean());
  w.EndObject();
  str("pairs");
  w.StartArray();
  for (const DiffRow& r : report.rows) {
    const NamedTensor& a = report.a.tensors[r.pair.a];
    const NamedTensor& b = report.b.tensors[r.pair.b];
    w.StartObject();
    str("name_a");
    str(a.name);
    str("name_b");
    str(b.name);
    str("rule");
    str(EnumName(r.pair.rule));
    str("status");
    str(DiffStatusText(r));
    str("shape_a");
    shape(a.tensor.shape());
    str("shape_b");
    shape(b.tensor.shape());
    str("dtype_a");
    str(Name(a.tensor.dtype()));
    str("dtype_b");
    str(Name(b.tensor.dtype()));
    if (r.compared()) {
      const DiffMetrics& m = r.metrics;
      str("numel");
      w.Int64(m.numel);
      str("allclose");
      w.Bool(m.allclose);
      str("allclose_ratio");
      num(m.allclose_ratio);
      str("cosine");
      num(m.cosine);
      str("mean_abs_diff");
      num(m.mean_abs);
      str("max_abs_diff");
      num(m.max_abs);
      str("max_rel_err");
      num(m.max_rel);
      str("rmse");
      num(m.rmse);
      str("max_ulp");
      num(m.max_ulp);
      str("ulp_dtype");
      str(m.ulp_dtype);
      str("nan_mismatch");
      w.Int64(m.nan_mismatch);
      str("inf_mismatch");
      w.Int64(m.inf_mismatch);
      str("worst_index");
      w.Int64(m.worst_index);
    }
    if (!r.note.empty()) {
      str("note");
      str(r.note);
    }
    w.EndObject();
  }
  w.EndArray();
  auto unpaired = [&](const char* key, const DiffSource& s, const std::vector<size_t>& idx) {
    str(key);
    w.StartArray();
    for (size_t i : idx) {
      w.StartObject();
      str("name");
      str(s.tensors[i].name);
      str("shape");
      shape(s.tensors[i].tensor.shape());
      str("dtype");
      str(Name(s.tensors[i].tensor.dtype()));
      str("framework_only");
      w.Bool(IsFrameworkOnlyName(s.tensors[i].name));
      w.EndObject();
    }
    w.EndArray();
  };
  unpaired("only_a", report.a, report.only_a);
  unpaired("only_b", report.b, report.only_b);
  str("warnings");
  w.StartArray();
  for (const std::string& warning : report.warnings) str(warning);
  w.EndArray();
  w.EndObject();
  return detail::WriteFileAtomically(path, std::string_view(buffer.GetString(), buffer.GetSize()));
}

}  // namespace numprobe
