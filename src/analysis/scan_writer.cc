// Files of numprobe scan: scan_{ts}.json (everything, standard JSON: non-finite numbers as the
// strings "NaN", "Infinity", "-Infinity"), three CSV tables (anomalies, watchpoint hits, headroom
// of every tensor), and msprobe's anomaly_analyze_{ts}.json, whose data_info copies the anomalous
// entries of dump.json verbatim (with Python's bare NaN tokens, as msprobe writes it).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <fmt/format.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include "numprobe/compare_writer.h"
#include "numprobe/scan.h"

#include "analysis/scan_internal.h"
#include "io/atomic_output.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;
using JsonWriter = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

Status WriteFile(const fs::path& path, std::string_view content) {
  NUMPROBE_ASSIGN_OR_RETURN(auto out, detail::AtomicOutput::Create(path));
  NUMPROBE_RETURN_IF_ERROR(out.Write(content));
  return out.Commit();
}

void Str(JsonWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void Number(JsonWriter& w, double v) {
  if (std::isnan(v)) {
    w.String("NaN");
  } else if (std::isinf(v)) {
    w.String(v > 0 ? "Infinity" : "-Infinity");
  } else {
    w.Double(v);
  }
}

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

void WriteTensor(JsonWriter& w, const ScanTensor& t) {
  w.StartObject();
  w.Key("name");
  Str(w, t.name);
  w.Key("dtype");
  Str(w, t.dtype);
  w.Key("shape");
  Str(w, t.shape);
  w.Key("is_tensor");
  w.Bool(t.is_tensor);
  w.Key("max");
  OptionalNumber(w, t.has_max, t.max);
  w.Key("min");
  OptionalNumber(w, t.has_min, t.min);
  w.Key("mean");
  OptionalNumber(w, t.has_mean, t.mean);
  w.Key("norm");
  OptionalNumber(w, t.has_norm, t.norm);
  w.Key("nonfinite");
  w.Bool(t.nonfinite);
  w.Key("exact");
  w.Bool(t.exact);
  if (t.exact) {
    w.Key("count");
    w.Int64(t.count);
    w.Key("nan_count");
    w.Int64(t.nan_count);
    w.Key("inf_count");
    w.Int64(t.inf_count);
    w.Key("zero_count");
    w.Int64(t.zero_count);
    w.Key("file");
    Str(w, t.file);
  }
  w.EndObject();
}

void WriteNode(JsonWriter& w, const AnomalyNode& n) {
  w.StartObject();
  w.Key("kind");
  Str(w, AnomalyKindName(n.kind));
  w.Key("scope");
  Str(w, n.scope);
  w.Key("step");
  w.Int64(n.step);
  w.Key("rank");
  w.Int64(n.rank);
  w.Key("rank_folder");
  Str(w, n.rank_folder);
  w.Key("op_name");
  Str(w, n.op_name);
  w.Key("entry_index");
  w.Uint(n.entry_index);
  w.Key("comm_time");
  w.Double(n.time);
  w.Key("module_path");
  StringList(w, n.module_path);
  w.Key("stack");
  StringList(w, n.stack);
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
  w.Key("act_range_pct_lt");
  OptionalNumber(w, th.act_range_pct_lt.has_value(), th.act_range_pct_lt.value_or(0));
  w.Key("act_range_pct_gt");
  OptionalNumber(w, th.act_range_pct_gt.has_value(), th.act_range_pct_gt.value_or(0));
  w.EndObject();
}

void WriteHit(JsonWriter& w, const WatchpointHit& h) {
  w.StartObject();
  w.Key("watchpoint");
  Str(w, WatchpointName(h.watchpoint));
  w.Key("scope");
  Str(w, h.scope);
  w.Key("step");
  w.Int64(h.step);
  w.Key("rank");
  w.Int64(h.rank);
  w.Key("rank_folder");
  Str(w, h.rank_folder);
  w.Key("op_name");
  Str(w, h.op_name);
  w.Key("tensor");
  Str(w, h.tensor);
  w.Key("condition");
  Str(w, h.condition);
  w.Key("actual");
  Number(w, h.actual);
  w.Key("threshold");
  Number(w, h.threshold);
  w.Key("exact");
  w.Bool(h.exact);
  w.Key("detail");
  Str(w, h.detail);
  w.EndObject();
}

std::string Status4(const TargetFit& f) {
  std::string s = f.overflow ? "overflow" : "";
  const char* low = f.underflow ? "underflow" : f.subnormal ? "subnormal" : nullptr;
  if (low != nullptr) s += s.empty() ? low : std::string("+") + low;
  return s.empty() ? "ok" : s;
}

void WriteHeadroomRow(JsonWriter& w, const HeadroomRow& r, const std::vector<DType>& targets) {
  w.StartObject();
  w.Key("step");
  w.Int64(r.step);
  w.Key("rank");
  w.Int64(r.rank);
  w.Key("op_name");
  Str(w, r.op_name);
  w.Key("tensor");
  Str(w, r.tensor);
  w.Key("layer");
  Str(w, r.layer);
  w.Key("dtype");
  Str(w, r.dtype);
  w.Key("exact");
  w.Bool(r.exact);
  w.Key("max_abs");
  Number(w, r.max_abs);
  w.Key("min_nonzero_abs");
  OptionalNumber(w, !std::isnan(r.min_nonzero_abs), r.min_nonzero_abs);
  w.Key("fits");
  w.StartObject();
  for (size_t t = 0; t < targets.size() && t < r.fits.size(); ++t) {
    const TargetFit& f = r.fits[t];
    const std::string_view name = HeadroomTargetName(targets[t]);
    w.Key(name.data(), static_cast<rapidjson::SizeType>(name.size()));
    w.StartObject();
    w.Key("status");
    Str(w, Status4(f));
    w.Key("overflow");
    w.Bool(f.overflow);
    w.Key("underflow");
    w.Bool(f.underflow);
    w.Key("subnormal");
    w.Bool(f.subnormal);
    w.Key("min_known");
    w.Bool(f.min_known);
    w.Key("headroom_log2");
    OptionalNumber(w, !std::isnan(f.headroom_log2), f.headroom_log2);
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
}

void WriteLayers(JsonWriter& w, const std::vector<LayerHeadroom>& layers) {
  w.StartArray();
  for (const auto& l : layers) {
    w.StartObject();
    w.Key("layer");
    Str(w, l.layer);
    w.Key("tensors");
    w.Int64(l.tensors);
    w.Key("max_abs");
    Number(w, l.max_abs);
    w.Key("worst_headroom_log2");
    Number(w, l.worst_headroom_log2);
    w.Key("worst_tensor");
    Str(w, l.worst_tensor);
    w.EndObject();
  }
  w.EndArray();
}

std::string ScanJson(const ScanReport& r) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.SetIndent(' ', 1);
  w.StartObject();
  w.Key("numprobe_scan");
  w.Int(1);
  w.Key("dump");
  Str(w, r.dump);
  w.Key("task");
  Str(w, r.task);
  w.Key("framework");
  Str(w, r.framework);
  w.Key("level");
  Str(w, r.level);
  w.Key("md5_mode");
  w.Bool(r.md5_mode);
  w.Key("steps");
  StringList(w, r.scopes);
  w.Key("ranks");
  w.Int64(r.ranks);
  w.Key("entries");
  w.Int64(r.entries);
  w.Key("tensors");
  w.Int64(r.tensors);
  w.Key("tensor_files_read");
  w.Int64(r.tensor_files_read);
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
    if (r.options.watch[static_cast<size_t>(i)]) Str(w, WatchpointName(static_cast<Watchpoint>(i)));
  }
  w.EndArray();
  w.Key("thresholds");
  WriteThresholds(w, r.options.thresholds);
  w.Key("counts");
  w.StartObject();
  std::map<std::string_view, int64_t> counts;
  for (const auto& h : r.hits) ++counts[WatchpointName(h.watchpoint)];
  for (const auto& [name, n] : counts) {
    w.Key(name.data(), static_cast<rapidjson::SizeType>(name.size()));
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
    w.Key("target");
    Str(w, HeadroomTargetName(s.target));
    w.Key("tensors");
    w.Int64(s.tensors);
    w.Key("overflow");
    w.Int64(s.overflow);
    w.Key("underflow");
    w.Int64(s.underflow);
    w.Key("subnormal");
    w.Int64(s.subnormal);
    w.Key("min_unknown");
    w.Int64(s.min_unknown);
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
    const bool flagged = std::any_of(row.fits.begin(), row.fits.end(),
                                     [](const TargetFit& f) { return f.overflow || f.underflow; });
    if (flagged) WriteHeadroomRow(w, row, r.options.targets);
  }
  w.EndArray();
  w.EndObject();
  w.Key("warnings");
  StringList(w, r.warnings);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string CsvNumber(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{}", v);
}

std::string CsvLine(const std::vector<std::string>& cells) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) line += ',';
    line += CsvField(cells[i]);
  }
  line += '\n';
  return line;
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
    out += CsvLine({std::to_string(i + 1), std::string(AnomalyKindName(n.kind)),
                    std::to_string(n.step), std::to_string(n.rank), n.rank_folder, n.op_name,
                    std::to_string(n.entry_index), Joined(n.module_path, " > "), Joined(ins, "; "),
                    Joined(outs, "; "), Joined(n.stack, " | ")});
  }
  return out;
}

std::string WatchpointsCsv(const ScanReport& r) {
  std::string out = CsvLine({"Watchpoint", "Step", "Rank", "Rank Folder", "Op Name", "Tensor",
                             "Condition", "Actual", "Threshold", "Exact", "Detail"});
  for (const auto& h : r.hits) {
    out += CsvLine({std::string(WatchpointName(h.watchpoint)), std::to_string(h.step),
                    std::to_string(h.rank), h.rank_folder, h.op_name, h.tensor, h.condition,
                    CsvNumber(h.actual), CsvNumber(h.threshold), h.exact ? "True" : "False",
                    h.detail});
  }
  return out;
}

std::string HeadroomCsv(const ScanReport& r) {
  std::vector<std::string> header = {"Step",  "Rank",  "Rank Folder", "Op Name", "Tensor",
                                     "Layer", "Dtype", "Exact",       "Max Abs", "Min Nonzero Abs"};
  for (DType t : r.options.targets) {
    header.push_back(fmt::format("{} Status", HeadroomTargetName(t)));
    header.push_back(fmt::format("{} Headroom Log2", HeadroomTargetName(t)));
  }
  std::string out = CsvLine(header);
  for (const auto& row : r.headroom) {
    std::vector<std::string> cells = {
        std::to_string(row.step),
        std::to_string(row.rank),
        row.rank_folder,
        row.op_name,
        row.tensor,
        row.layer,
        row.dtype,
        row.exact ? "True" : "False",
        row.nonfinite ? "" : CsvNumber(row.max_abs),
        std::isnan(row.min_nonzero_abs) ? "" : CsvNumber(row.min_nonzero_abs)};
    for (size_t t = 0; t < r.options.targets.size(); ++t) {
      if (row.nonfinite || t >= row.fits.size()) {
        cells.push_back("nonfinite");
        cells.push_back("");
        continue;
      }
      cells.push_back(Status4(row.fits[t]));
      cells.push_back(std::isnan(row.fits[t].headroom_log2) ? ""
                                                            : CsvNumber(row.fits[t].headroom_log2));
    }
    out += CsvLine(cells);
  }
  return out;
}

// msprobe's anomaly_analyze file: {"rank_N": [{op_name, data_info, construct_info, stack_info}]}.
std::string AnomalyAnalyzeJson(const ScanReport& r) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.SetIndent(' ', 2);
  std::vector<int64_t> rank_order;
  std::map<int64_t, std::vector<const AnomalyNode*>> by_rank;
  for (const auto& n : r.anomalies) {
    if (!by_rank.count(n.rank)) rank_order.push_back(n.rank);
    by_rank[n.rank].push_back(&n);
  }
  w.StartObject();
  for (int64_t rank : rank_order) {
    const std::string key = fmt::format("rank_{}", rank);
    w.Key(key.c_str(), static_cast<rapidjson::SizeType>(key.size()));
    w.StartArray();
    for (const AnomalyNode* n : by_rank[rank]) {
      w.StartObject();
      w.Key("op_name");
      w.String(n->op_name.c_str(), static_cast<rapidjson::SizeType>(n->op_name.size()));
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
          w.Key(part.c_str(), static_cast<rapidjson::SizeType>(part.size()));
          w.RawValue(it->second.data(), it->second.size(), rapidjson::kObjectType);
        }
      }
      w.EndObject();
      w.Key("construct_info");
      w.StartArray();
      for (const auto& m : n->module_path) {
        w.String(m.c_str(), static_cast<rapidjson::SizeType>(m.size()));
      }
      w.String(n->op_name.c_str(), static_cast<rapidjson::SizeType>(n->op_name.size()));
      w.EndArray();
      w.Key("stack_info");
      if (n->stack.empty()) {
        w.StartObject();  // msprobe's find_stack returns {} when there is none
        w.EndObject();
      } else {
        w.StartArray();
        for (const auto& line : n->stack) {
          w.String(line.c_str(), static_cast<rapidjson::SizeType>(line.size()));
        }
        w.EndArray();
      }
      // numprobe's additions; msprobe's readers ignore them.
      w.Key("step");
      w.Int64(n->step);
      w.Key("kind");
      w.String(std::string(AnomalyKindName(n->kind)).c_str());
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
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
  NUMPROBE_RETURN_IF_ERROR(WriteFile(files.json, ScanJson(report)));
  NUMPROBE_RETURN_IF_ERROR(WriteFile(files.anomalies_csv, AnomaliesCsv(report)));
  NUMPROBE_RETURN_IF_ERROR(WriteFile(files.watchpoints_csv, WatchpointsCsv(report)));
  NUMPROBE_RETURN_IF_ERROR(WriteFile(files.headroom_csv, HeadroomCsv(report)));
  if (!report.anomalies.empty()) {
    files.anomaly_analyze = dir / fmt::format("anomaly_analyze_{}.json", timestamp);
    NUMPROBE_RETURN_IF_ERROR(WriteFile(files.anomaly_analyze, AnomalyAnalyzeJson(report)));
  }
  return files;
}

}  // namespace numprobe
