// numprobe report: the web UI's script and style inlined into one HTML page with the workspace's
// data embedded as JSON (each run's rows, capped at ReportOptions::max_rows per run, each run's
// model tree, and the tensor details of the rows that matter most). The page's script reads the
// embedded data instead of calling the server.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include <fmt/format.h>

#include "numprobe/app/report.h"

#include "core/atomic_file.h"
#include "core/json_writer.h"
#include "core/sha256.h"
#include "ui/api.h"
#include "ui/assets.h"
#include "ui/report_rows.h"
#include "ui/workspace.h"

namespace numprobe {

namespace {

using ui::Api;
using ui::Cell;
using ui::Run;

// Case-insensitive replacement of `from` (ASCII) by `to`.
std::string ReplaceNoCase(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    bool match = i + from.size() <= text.size();
    for (size_t k = 0; match && k < from.size(); ++k) {
      const char a = text[i + k];
      const char b = from[k];
      match = (a == b) || (a >= 'A' && a <= 'Z' && a - 'A' + 'a' == b);
    }
    if (match) {
      out += to;
      i += from.size();
    } else {
      out += text[i++];
    }
  }
  return out;
}

// A rapidjson output stream into the report file, for JSON inside <script
// type="application/json">: every '<' (which can only occur inside JSON strings) is written as
// \u003c, so no "</script" or "<!--" can end or confuse the element. Buffered; the first write
// error sticks and is returned by Finish().
class ScriptJsonStream {
 public:
  using Ch = char;
  explicit ScriptJsonStream(detail::AtomicOutput* out) : out_(out) { buffer_.reserve(kChunk); }
  void Put(char c) {
    if (c == '<') {
      buffer_ += "\\u003c";
    } else {
      buffer_ += c;
    }
    if (buffer_.size() >= kChunk) Flush();
  }
  void Flush() {
    if (status_.ok() && !buffer_.empty()) status_ = out_->Write(buffer_);
    buffer_.clear();
  }
  Status Finish() {
    Flush();
    return status_;
  }

 private:
  static constexpr size_t kChunk = size_t{1} << 20;
  detail::AtomicOutput* out_;
  std::string buffer_;
  Status status_;
};

using JsonWriter = numprobe::JsonWriter<ScriptJsonStream>;

// The page's Content-Security-Policy, as strict as serve's (ui/http_server.cc): nothing is
// loaded or sent anywhere, the one inline script runs by its hash (no injected markup can run
// script, inline handlers included), styles are inline (the style element; ECharts sets style
// attributes), images only data: URLs. frame-ancestors cannot be set from a <meta> element.
std::string ReportPolicy(std::string_view script_sha256_base64) {
  return fmt::format(
      "default-src 'none'; script-src 'sha256-{}'; style-src 'unsafe-inline'; img-src data:; "
      "base-uri 'none'; form-action 'none'",
      script_sha256_base64);
}

// Rows whose tensor detail is embedded: the culprits' rows, then error rows, in execution order.
std::vector<uint32_t> TensorRows(const Run& run, int limit) {
  std::vector<uint32_t> rows;
  std::set<uint32_t> seen;
  auto add = [&](uint32_t r) {
    if (static_cast<int>(rows.size()) < limit && seen.insert(r).second) rows.push_back(r);
  };
  for (const ui::Culprit& c : run.findings.divergence) {
    for (const uint32_t r : c.rows) add(r);
  }
  if (run.findings.first_anomaly) {
    for (const uint32_t r : run.findings.first_anomaly->rows) add(r);
  }
  const ui::ResultStore& s = *run.store;
  for (const Verdict level : {Verdict::kError, Verdict::kWarning}) {
    for (uint32_t r = 0; r < s.row_count() && static_cast<int>(rows.size()) < limit; ++r) {
      if (s.level(r) == level) add(r);
    }
  }
  return rows;
}

// Writes the embedded data: every run's rows (or a capped sample of them, with "row_index"
// naming each embedded row's index in the full table), tree and chosen tensor details, the scan,
// and "full_result", the path `numprobe serve` opens the whole result from.
Status WriteData(const Api& api, const std::filesystem::path& result, const ReportOptions& options,
                 ReportOutcome* outcome, detail::AtomicOutput* out) {
  const ui::Workspace& ws = api.workspace();
  ScriptJsonStream stream(out);
  JsonWriter w(stream, JsonFileKind::kUi);
  w.StartObject();
  w.Key("numprobe_report");
  w.Int(1);
  w.Key("full_result");
  w.String(result.string());
  w.Key("info");
  w.RawObject(api.InfoJson());
  w.Key("runs");
  w.StartArray();
  for (size_t i = 0; i < ws.runs.size(); ++i) {
    const Run& run = *ws.runs[i];
    const ui::ResultStore& s = *run.store;
    const bool has_tensors = !run.target_tensors.empty() || !run.golden_tensors.empty();
    const std::vector<uint32_t> tensor_rows =
        has_tensors ? TensorRows(run, options.tensor_rows) : std::vector<uint32_t>{};
    std::vector<uint32_t> must_keep = tensor_rows;
    for (const ui::Culprit& c : run.findings.divergence) {
      must_keep.insert(must_keep.end(), c.rows.begin(), c.rows.end());
    }
    if (run.findings.first_anomaly) {
      const auto& rows = run.findings.first_anomaly->rows;
      must_keep.insert(must_keep.end(), rows.begin(), rows.end());
    }
    const std::vector<uint32_t> rows = ui::ReportRows(run, options.max_rows, must_keep);
    const bool capped = rows.size() < s.row_count();
    if (capped && outcome != nullptr) {
      outcome->omitted.push_back({run.label, rows.size(), s.row_count()});
    }
    w.StartObject();
    if (capped) {
      w.Key("row_index");
      w.StartArray();
      for (const uint32_t r : rows) w.Uint(r);
      w.EndArray();
    }
    w.Key("levels");
    w.StartArray();
    for (const uint32_t r : rows) w.Uint(static_cast<unsigned>(s.level(r)));
    w.EndArray();
    w.Key("entries");
    w.StartArray();
    for (const std::string& e : s.entry_names()) w.String(e);
    w.EndArray();
    w.Key("row_entry");
    w.StartArray();
    for (const uint32_t r : rows) w.Uint(s.entry(r));
    w.EndArray();
    w.Key("rows");
    w.StartArray();
    for (const uint32_t r : rows) {
      w.StartArray();
      for (size_t c = 0; c < s.columns().size(); ++c) {
        const Cell cell = s.Get(r, static_cast<int>(c));
        if (cell.is_number) {
          w.Double(cell.number);
        } else {
          w.String(cell.text);
        }
      }
      w.EndArray();
    }
    w.EndArray();
    w.Key("tree");
    w.RawObject(api.TreeJson(i));
    w.Key("tensors");
    w.StartObject();
    for (const uint32_t r : tensor_rows) {
      // Only rows the page has: a tensor detail opens from its row.
      if (!std::binary_search(rows.begin(), rows.end(), r)) continue;
      const ui::ApiResponse t = api.TensorJson(i, r, 0);
      if (t.status != 200) continue;
      w.Key(std::to_string(r));
      w.RawObject(t.body);
    }
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.Key("scan");
  if (ws.scan) {
    w.Value(ws.scan->doc);
  } else {
    w.Null();
  }
  w.Key("precheck");
  if (ws.precheck) {
    w.Value(ws.precheck->doc);
  } else {
    w.Null();
  }
  w.EndObject();
  return stream.Finish();
}

}  // namespace

Status WriteHtmlReport(const std::filesystem::path& result, const std::filesystem::path& out,
                       const ReportOptions& options, ReportOutcome* outcome) {
  if (options.max_rows == 0) return Status::InvalidArgument("max_rows must be at least 1");
  if (outcome != nullptr) outcome->omitted.clear();
  const auto js = ui::FindAsset("/assets/app.js");
  const auto css = ui::FindAsset("/assets/app.css");
  if (!js || !css) return Status::Internal("the web UI assets are missing from this build");
  ui::LoadOptions load;
  load.golden = options.golden;
  NUMPROBE_ASSIGN_OR_RETURN(auto workspace, ui::LoadWorkspace(result, load));
  const Api api(std::shared_ptr<const ui::Workspace>(std::move(workspace)));

  std::string title = "numprobe report";
  if (!api.workspace().paths.empty()) title += " - " + api.workspace().paths[0];
  std::string title_html;
  for (const char c : title) {
    switch (c) {
      case '<':
        title_html += "&lt;";
        break;
      case '>':
        title_html += "&gt;";
        break;
      case '&':
        title_html += "&amp;";
        break;
      default:
        title_html += c;
    }
  }
  // The script element's text, exactly as the browser will hash it: the policy allows it by its
  // hash. HTML parsing turns CR LF and CR into LF, so the text holds none (in JavaScript a raw CR
  // can only be a line end, or inside a template literal, which reads it as LF too).
  std::string script =
      ReplaceNoCase(ReplaceNoCase(ReplaceNoCase(ReplaceNoCase(js->bytes, "\r\n", "\n"), "\r", "\n"),
                                  "</script", "<\\/script"),
                    "<!--", "<\\!--");
  script = "\n" + script + "\n";
  auto script_hash = detail::Sha256::Base64(script);
  if (!script_hash) {
    return script_hash.error().WithContext("the report's Content-Security-Policy (a script hash)");
  }
  NUMPROBE_ASSIGN_OR_RETURN(auto file, detail::AtomicOutput::Create(out));
  NUMPROBE_RETURN_IF_ERROR(file.Write(fmt::format(
      "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"numprobe report\">\n<title>{}</title>\n<style>\n",
      ReportPolicy(*script_hash), title_html)));
  NUMPROBE_RETURN_IF_ERROR(file.Write(ReplaceNoCase(css->bytes, "</style", "<\\/style")));
  NUMPROBE_RETURN_IF_ERROR(
      file.Write("\n</style>\n</head>\n<body>\n<div id=\"app\"></div>\n"
                 "<script type=\"application/json\" id=\"numprobe-data\">"));
  NUMPROBE_RETURN_IF_ERROR(WriteData(api, result, options, outcome, &file));
  NUMPROBE_RETURN_IF_ERROR(file.Write("</script>\n<script type=\"module\">"));
  NUMPROBE_RETURN_IF_ERROR(file.Write(script));
  NUMPROBE_RETURN_IF_ERROR(file.Write("</script>\n</body>\n</html>\n"));
  return file.Commit();
}

}  // namespace numprobe
