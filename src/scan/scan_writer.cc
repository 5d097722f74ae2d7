// Files of numprobe scan: scan_{ts}.json (everything, standard JSON: non-finite numbers as the
// strings "NaN", "Infinity", "-Infinity"), three CSV tables (anomalies, watchpoint hits, headroom
// of every tensor), and msprobe's anomaly_analyze_{ts}.json, whose data_info copies the anomalous
// entries of dump.json verbatim (with Python's bare NaN tokens, as msprobe writes it).
#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <string>

#include <fmt/compile.h>
#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>

#include "numprobe/scan.h"
#include "numprobe/thread_pool.h"

#include "core/atomic_file.h"
#include "core/csv.h"
#include "core/json_writer.h"
#include "core/ordered_chunks.h"
#include "core/py_format.h"
#include "scan/scan_internal.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;
using detail::CsvLine;
using JsonWriter = numprobe::JsonWriter<rapidjson::StringBuffer, /*kPretty=*/true>;

void Str(JsonWriter& w, std::string_view s) { w.String(s); }

void Number(JsonWriter& w, double v) { w.Double(v); }

void OptionalNumber(JsonWriter& w, bool has, double v) {
  if (has) {
    Number(w, v);
  } else {
    w.Null();
  }
}

void StringList(JsonWriter& w, const std::vector<std::string>& items) {
  w.StartArray();
  for (const auto& s : items) Str(w, s);
  w.EndArray();
}

// One object member per line.
void PutStr(JsonWriter& w, const char* key, std::string_view v) {
  w.Key(key);
  Str(w, v);
}
void PutInt(JsonWriter& w, const char* key, int64_t v) {
  w.Key(key);
  w.Int64(v);
}
void PutBool(JsonWriter& w, const char* key, bool v) {
  w.Key(key);
  w.Bool(v);
}
void PutNum(JsonWriter& w, const char* key, double v) {
  w.Key(key);
  Number(w, v);
}
void PutOpt(JsonWriter& w, const char* key, bool has, double v) {
  w.Key(key);
  OptionalNumber(w, has, v);
}
void PutList(JsonWriter& w, const char* key, const std::vector<std::string>& items) {
  w.Key(key);
  StringList(w, items);
}

void WriteTensor(JsonWriter& w, const ScanTensor& t) {
  w.StartObject();
  PutStr(w, "name", t.name);
  PutStr(w, "dtype", t.dtype);
  PutStr(w, "shape", t.shape);
  PutBool(w, "is_tensor", t.is_tensor);
  PutOpt(w, "max", t.has_max, t.max);
  PutOpt(w, "min", t.has_min, t.min);
  PutOpt(w, "mean", t.has_mean, t.mean);
  PutOpt(w, "norm", t.has_norm, t.norm);
  PutBool(w, "nonfinite", t.nonfinite);
  PutBool(w, "exact", t.exact);
  if (t.exact) {
    PutInt(w, "count", t.count);
    PutInt(w, "nan_count", t.nan_count);
    PutInt(w, "inf_count", t.inf_count);
    PutInt(w, "zero_count", t.zero_count);
    PutStr(w, "file", t.file);
  }
  w.EndObject();
}

void WriteNode(JsonWriter& w, const AnomalyNode& n) {
  w.StartObject();
  PutStr(w, "kind", EnumName(n.kind));
  PutStr(w, "scope", n.scope);
  PutInt(w, "step", n.step);
  PutInt(w, "rank", n.rank);
  PutStr(w, "rank_folder", n.rank_folder);
  PutStr(w, "op_name", n.op_name);
  PutInt(w, "entry_index", n.entry_index);
  PutNum(w, "comm_time", n.time);
  PutList(w, "module_path", n.module_path);
  PutList(w, "stack", n.stack);
  w.Key("inputs");
  w.StartArray();
  for (const auto& t : n.inputs) WriteTensor(w, t);
  w.EndArray();
  w.Key("outputs");
  w.StartArray();
  for (const auto& t : n.outputs) WriteTensor(w, t);
  w.EndArray();
  w.EndObject();
}

void WriteThresholds(JsonWriter& w, const ScanThresholds& th) {
  w.StartObject();
  const std::pair<const char*, double> values[] = {
      {"grad_norm_min", th.grad_norm_min},       {"grad_norm_max", th.grad_norm_max},
      {"weight_rtol", th.weight_rtol},           {"weight_atol", th.weight_atol},
      {"update_ratio_max", th.update_ratio_max}, {"update_ratio_min", th.update_ratio_min},
      {"update_epsilon", th.update_epsilon},     {"tensor_abs_max", th.tensor_abs_max},
      {"act_max_min_lt", th.act_max_min_lt},     {"act_max_min_gt", th.act_max_min_gt}};
  for (const auto& [key, v] : values) {
    w.Key(key);
    Number(w, v);
  }
  w.Key("act_range");
  if (th.act_range) {
    w.StartArray();
    Number(w, th.act_range->first);
    Number(w, th.act_range->second);
    w.EndArray();
  } else {
    w.Null();
  }
  PutOpt(w, "act_range_pct_lt", th.act_range_pct_lt.has_value(), th.act_range_pct_lt.value_or(0));
  PutOpt(w, "act_range_pct_gt", th.act_range_pct_gt.has_value(), th.act_range_pct_gt.value_or(0));
  w.EndObject();
}

void WriteHit(JsonWriter& w, const WatchpointHit& h) {
  w.StartObject();
  PutStr(w, "watchpoint", EnumName(h.watchpoint));
  PutStr(w, "scope", h.scope);
  PutInt(w, "step", h.step);
  PutInt(w, "rank", h.rank);
  PutStr(w, "rank_folder", h.rank_folder);
  PutStr(w, "op_name", h.op_name);
  PutStr(w, "tensor", h.tensor);
  PutStr(w, "condition", h.condition);
  PutNum(w, "actual", h.actual);
  PutNum(w, "threshold", h.threshold);
  PutBool(w, "exact", h.exact);
  PutStr(w, "detail", h.detail);
  w.EndObject();
}

std::string Status4(const TargetFit& f) {
  std::string s = f.overflow ? "overflow" : "";
  const char* low = f.underflow ? "underflow" : f.subnormal ? "subnormal" : nullptr;
  if (low != nullptr) s += s.empty() ? low : std::string("+") + low;
  return s.empty() ? "ok" : s;
}

void WriteHeadroomRow(JsonWriter& w, const HeadroomRow& r, const HeadroomUnit& unit,
                      const std::vector<DType>& targets) {
  w.StartObject();
  PutInt(w, "step", unit.step);
  PutInt(w, "rank", unit.rank);
  PutStr(w, "op_name", r.op_name);
  PutStr(w, "tensor", r.tensor);
  PutStr(w, "layer", r.layer);
  PutStr(w, "dtype", r.dtype);
  PutBool(w, "exact", r.exact);
  PutNum(w, "max_abs", r.max_abs);
  PutOpt(w, "min_nonzero_abs", !std::isnan(r.min_nonzero_abs), r.min_nonzero_abs);
  w.Key("fits");
  w.StartObject();
  for (DType target : targets) {
    if (r.nonfinite) break;  // no verdict (a flagged row never is)
    const TargetFit f = FitOf(r, target);
    const std::string_view name = HeadroomTargetName(target);
    w.Key(name);
    w.StartObject();
    PutStr(w, "status", Status4(f));
    PutBool(w, "overflow", f.overflow);
    PutBool(w, "underflow", f.underflow);
    PutBool(w, "subnormal", f.subnormal);
    PutBool(w, "min_known", f.min_known);
    PutOpt(w, "headroom_log2", !std::isnan(f.headroom_log2), f.headroom_log2);
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
}

void WriteLayers(JsonWriter& w, const std::vector<LayerHeadroom>& layers) {
  w.StartArray();
  for (const auto& l : layers) {
    w.StartObject();
    PutStr(w, "layer", l.layer);
    PutInt(w, "tensors", l.tensors);
    PutNum(w, "max_abs", l.max_abs);
    PutNum(w, "worst_headroom_log2", l.worst_headroom_log2);
    PutStr(w, "worst_tensor", l.worst_tensor);
    w.EndObject();
  }
  w.EndArray();
}

std::string ScanJson(const ScanReport& r) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer, JsonFileKind::kResult);
  w.SetIndent(' ', 1);
  w.StartObject();
  w.Key("numprobe_scan");
  w.Int(1);
  PutStr(w, "dump", r.dump);
  PutStr(w, "task", r.task);
  PutStr(w, "framework", r.framework);
  PutStr(w, "level", r.level);
  PutBool(w, "md5_mode", r.md5_mode);
  PutList(w, "steps", r.scopes);
  PutInt(w, "ranks", r.ranks);
  PutInt(w, "rank_folders", r.rank_folders);
  PutInt(w, "entries", r.entries);
  PutInt(w, "tensors", r.tensors);
  PutInt(w, "tensor_files_read", r.tensor_files_read);
  w.Key("first_anomaly");
  if (const AnomalyNode* first = r.first_anomaly()) {
    WriteNode(w, *first);
  } else {
    w.Null();
  }
  w.Key("anomalies");
  w.StartArray();
  for (const auto& n : r.anomalies) WriteNode(w, n);
  w.EndArray();

  w.Key("watchpoints");
  w.StartObject();
  w.Key("enabled");
  w.StartArray();
  for (int i = 0; i < kWatchpointCount; ++i) {
    if (r.options.watch[static_cast<size_t>(i)]) Str(w, EnumName(static_cast<Watchpoint>(i)));
  }
  w.EndArray();
  w.Key("thresholds");
  WriteThresholds(w, r.options.thresholds);
  w.Key("counts");
  w.StartObject();
  std::map<std::string_view, int64_t> counts;
  for (const auto& h : r.hits) ++counts[EnumName(h.watchpoint)];
  for (const auto& [name, n] : counts) {
    w.Key(name);
    w.Int64(n);
  }
  w.EndObject();
  w.Key("hits");
  w.StartArray();
  for (const auto& h : r.hits) WriteHit(w, h);
  w.EndArray();
  w.EndObject();

  w.Key("headroom");
  w.StartObject();
  w.Key("targets");
  w.StartArray();
  for (DType t : r.options.targets) Str(w, HeadroomTargetName(t));
  w.EndArray();
  w.Key("summary");
  w.StartArray();
  for (const auto& s : r.headroom_summary) {
    w.StartObject();
    PutStr(w, "target", HeadroomTargetName(s.target));
    PutInt(w, "tensors", s.tensors);
    PutInt(w, "overflow", s.overflow);
    PutInt(w, "underflow", s.underflow);
    PutInt(w, "subnormal", s.subnormal);
    PutInt(w, "min_unknown", s.min_unknown);
    w.Key("keep_higher_precision");
    WriteLayers(w, s.keep_higher);
    w.Key("underflowing_layers");
    WriteLayers(w, s.underflowing);
    w.EndObject();
  }
  w.EndArray();
  // Only the tensors with a finding; the CSV lists every tensor.
  w.Key("flagged");
  w.StartArray();
  for (const auto& row : r.headroom) {
    const bool flagged =
        !row.nonfinite &&
        std::any_of(r.options.targets.begin(), r.options.targets.end(), [&row](DType target) {
          const TargetFit f = detail::VerdictsOf(target, row.max_abs, row.min_nonzero_abs);
          return f.overflow || f.underflow;
        });
    if (flagged) WriteHeadroomRow(w, row, r.UnitOf(row), r.options.targets);
  }
  w.EndArray();
  w.EndObject();
  PutList(w, "warnings", r.warnings);
  w.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

void AppendCsvNumber(double v, std::string* out) {
  char buffer[detail::kPyFloatReprBytes];
  out->append(detail::FormatShortestFloat(v, buffer));
}

std::string CsvNumber(double v) {
  std::string text;
  AppendCsvNumber(v, &text);
  return text;
}

std::string TensorBrief(const ScanTensor& t) {
  if (!t.is_tensor) {
    return t.has_max ? fmt::format("{}={}", t.name, CsvNumber(t.max)) : t.name;
  }
  return fmt::format("{} {} {} max={} min={}", t.name, t.dtype, t.shape,
                     t.has_max ? CsvNumber(t.max) : "-", t.has_min ? CsvNumber(t.min) : "-");
}

std::string Joined(const std::vector<std::string>& items, std::string_view sep) {
  return fmt::format("{}", fmt::join(items, sep));
}

std::string AnomaliesCsv(const ScanReport& r) {
  std::string out = CsvLine({"Order", "Kind", "Step", "Rank", "Rank Folder", "Op Name",
                             "Entry Index", "Module Path", "Inputs", "Outputs", "Stack"});
  for (size_t i = 0; i < r.anomalies.size(); ++i) {
    const AnomalyNode& n = r.anomalies[i];
    std::vector<std::string> ins;
    for (const auto& t : n.inputs) ins.push_back(TensorBrief(t));
    std::vector<std::string> outs;
    for (const auto& t : n.outputs) outs.push_back(TensorBrief(t));
    out += CsvLine({std::to_string(i + 1), std::string(EnumName(n.kind)), std::to_string(n.step),
                    std::to_string(n.rank), n.rank_folder, n.op_name, std::to_string(n.entry_index),
                    Joined(n.module_path, " > "), Joined(ins, "; "), Joined(outs, "; "),
                    Joined(n.stack, " | ")});
  }
  return out;
}

std::string WatchpointsCsv(const ScanReport& r) {
  std::string out = CsvLine({"Watchpoint", "Step", "Rank", "Rank Folder", "Op Name", "Tensor",
                             "Condition", "Actual", "Threshold", "Exact", "Detail"});
  for (const auto& h : r.hits) {
    out += CsvLine({std::string(EnumName(h.watchpoint)), std::to_string(h.step),
                    std::to_string(h.rank), h.rank_folder, h.op_name, h.tensor, h.condition,
                    CsvNumber(h.actual), CsvNumber(h.threshold), h.exact ? "True" : "False",
                    h.detail});
  }
  return out;
}

// The headroom table has a row per tensor (hundreds of MB for a large dump): it is formatted in
// chunks over the pool and written in table order, never built whole in memory.
Status WriteHeadroomCsv(const ScanReport& r, const fs::path& path) {
  NUMPROBE_ASSIGN_OR_RETURN(detail::AtomicOutput file, detail::AtomicOutput::Create(path));
  std::vector<std::string> header = {"Step",  "Rank",  "Rank Folder", "Op Name", "Tensor",
                                     "Layer", "Dtype", "Exact",       "Max Abs", "Min Nonzero Abs"};
  for (DType t : r.options.targets) {
    header.push_back(fmt::format("{} Status", HeadroomTargetName(t)));
    header.push_back(fmt::format("{} Headroom Log2", HeadroomTargetName(t)));
  }
  NUMPROBE_RETURN_IF_ERROR(file.Write(CsvLine(header)));
  constexpr size_t kChunk = 4096;
  const size_t rows = r.headroom.size();
  // Each row cell by cell into the chunk's text, every cell followed by a comma and the row's
  // last comma turned into its line end: a string per cell was a tenth of a large scan's
  // writing (millions of rows).
  auto format = [&](int64_t c, std::string* out) {
    const size_t begin = static_cast<size_t>(c) * kChunk;
    auto text = [out](std::string_view cell) {
      detail::AppendCsvField(cell, out);
      out->push_back(',');
    };
    auto number = [out](bool present, double v) {
      if (present) AppendCsvNumber(v, out);
      out->push_back(',');
    };
    for (size_t i = begin; i < std::min(rows, begin + kChunk); ++i) {
      const auto& row = r.headroom[i];
      const HeadroomUnit& unit = r.UnitOf(row);
      char ids[48];
      char* ids_end = fmt::format_to(ids, FMT_COMPILE("{},{},"), unit.step, unit.rank);
      out->append(ids, ids_end);
      text(unit.rank_folder);
      text(row.op_name);
      text(row.tensor);
      text(row.layer);
      text(row.dtype);
      text(row.exact ? "True" : "False");
      number(!row.nonfinite, row.max_abs);
      number(!std::isnan(row.min_nonzero_abs), row.min_nonzero_abs);
      for (DType target : r.options.targets) {
        if (row.nonfinite) {
          text("nonfinite");
          text("");
          continue;
        }
        const TargetFit fit = FitOf(row, target);
        text(Status4(fit));
        number(!std::isnan(fit.headroom_log2), fit.headroom_log2);
      }
      out->back() = '\n';
    }
  };
  NUMPROBE_RETURN_IF_ERROR(detail::WriteChunksInOrder<std::string>(
      &ThreadPool::Default(), static_cast<int64_t>((rows + kChunk - 1) / kChunk), format,
      [&](const std::string& text) { return file.Write(text); }));
  return file.Commit();
}

// msprobe's anomaly_analyze file: {"rank_N": [{op_name, data_info, construct_info, stack_info}]}.
std::string AnomalyAnalyzeJson(const ScanReport& r) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer, JsonFileKind::kResult);
  w.SetIndent(' ', 2);
  std::vector<int64_t> rank_order;
  std::map<int64_t, std::vector<const AnomalyNode*>> by_rank;
  for (const auto& n : r.anomalies) {
    if (by_rank.count(n.rank) == 0) rank_order.push_back(n.rank);
    by_rank[n.rank].push_back(&n);
  }
  w.StartObject();
  for (int64_t rank : rank_order) {
    const std::string key = fmt::format("rank_{}", rank);
    w.Key(key);
    w.StartArray();
    for (const AnomalyNode* n : by_rank[rank]) {
      w.StartObject();
      w.Key("op_name");
      w.String(n->op_name);
      w.Key("data_info");
      const bool forward = !detail::IsBackwardEntry(n->op_name);
      const std::vector<std::string> parts =
          forward ? std::vector<std::string>{"input_args", "input_kwargs", "output"}
                  : std::vector<std::string>{"input", "output"};
      // Copied as written in dump.json (numbers keep their digits).
      auto members = detail::ExtractMembers(n->raw_entry, {parts.begin(), parts.end()});
      w.StartObject();
      if (members) {
        for (const std::string& part : parts) {
          const auto it = members->find(part);
          if (it == members->end()) continue;
          w.Key(part);
          w.RawObject(it->second);
        }
      }
      w.EndObject();
      w.Key("construct_info");
      w.StartArray();
      for (const auto& m : n->module_path) {
        w.String(m);
      }
      w.String(n->op_name);
      w.EndArray();
      w.Key("stack_info");
      if (n->stack.empty()) {
        w.StartObject();  // msprobe's find_stack returns {} when there is none
        w.EndObject();
      } else {
        w.StartArray();
        for (const auto& line : n->stack) {
          w.String(line);
        }
        w.EndArray();
      }
      // numprobe's additions; msprobe's readers ignore them.
      PutInt(w, "step", n->step);
      w.Key("kind");
      w.String(std::string(EnumName(n->kind)).c_str());
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

}  // namespace

Result<ScanOutputFiles> WriteScanReport(const ScanReport& report, const fs::path& dir,
                                        std::string_view timestamp) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return Status::IoError(fmt::format("{}: cannot create folder: {}", dir.string(), ec.message()));
  ScanOutputFiles files;
  files.json = dir / fmt::format("scan_{}.json", timestamp);
  files.anomalies_csv = dir / fmt::format("scan_anomalies_{}.csv", timestamp);
  files.watchpoints_csv = dir / fmt::format("scan_watchpoints_{}.csv", timestamp);
  files.headroom_csv = dir / fmt::format("scan_headroom_{}.csv", timestamp);
  NUMPROBE_RETURN_IF_ERROR(detail::WriteFileAtomically(files.json, ScanJson(report)));
  NUMPROBE_RETURN_IF_ERROR(detail::WriteFileAtomically(files.anomalies_csv, AnomaliesCsv(report)));
  NUMPROBE_RETURN_IF_ERROR(
      detail::WriteFileAtomically(files.watchpoints_csv, WatchpointsCsv(report)));
  NUMPROBE_RETURN_IF_ERROR(WriteHeadroomCsv(report, files.headroom_csv));
  if (!report.anomalies.empty()) {
    files.anomaly_analyze = dir / fmt::format("anomaly_analyze_{}.json", timestamp);
    NUMPROBE_RETURN_IF_ERROR(
        detail::WriteFileAtomically(files.anomaly_analyze, AnomalyAnalyzeJson(report)));
  }
  return files;
}

}  // namespace numprobe
