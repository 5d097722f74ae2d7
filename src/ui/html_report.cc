// numprobe report: the web UI's script and style inlined into one HTML page with the workspace's
// data embedded as JSON (every row, each run's model tree, and the tensor details of the rows
// that matter most). The page's script reads the embedded data instead of calling the server.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include <fmt/format.h>
#include <rapidjson/writer.h>

#include "numprobe/report.h"

#include "core/atomic_file.h"
#include "ui/api.h"
#include "ui/assets.h"
#include "ui/json_writer.h"
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

using JsonWriter = ui::UiJsonWriter<ScriptJsonStream>;

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

// Writes the embedded data: every run's rows, tree and chosen tensor details, and the scan.
Status WriteData(const Api& api, const ReportOptions& options, detail::AtomicOutput* out) {
  const ui::Workspace& ws = api.workspace();
  ScriptJsonStream stream(out);
  JsonWriter w(stream);
  w.StartObject();
  w.KeyStr("numprobe_report");
  w.Int(1);
  w.KeyStr("info");
  w.Raw(api.InfoJson());
  w.KeyStr("runs");
  w.StartArray();
  for (size_t i = 0; i < ws.runs.size(); ++i) {
    const Run& run = *ws.runs[i];
    const ui::ResultStore& s = *run.store;
    w.StartObject();
    w.KeyStr("levels");
    w.StartArray();
    for (uint32_t r = 0; r < s.row_count(); ++r) w.Uint(static_cast<unsigned>(s.level(r)));
    w.EndArray();
    w.KeyStr("entries");
    w.StartArray();
    for (const std::string& e : s.entry_names()) w.Str(e);
    w.EndArray();
    w.KeyStr("row_entry");
    w.StartArray();
    for (uint32_t r = 0; r < s.row_count(); ++r) w.Uint(s.entry(r));
    w.EndArray();
    w.KeyStr("rows");
    w.StartArray();
    for (uint32_t r = 0; r < s.row_count(); ++r) {
      w.StartArray();
      for (size_t c = 0; c < s.columns().size(); ++c) {
        const Cell cell = s.Get(r, static_cast<int>(c));
        if (cell.is_number) {
          w.Double(cell.number);
        } else {
          w.Str(cell.text);
        }
      }
      w.EndArray();
    }
    w.EndArray();
    w.KeyStr("tree");
    w.Raw(api.TreeJson(i));
    w.KeyStr("tensors");
    w.StartObject();
    if (!run.target_tensors.empty() || !run.golden_tensors.empty()) {
      for (const uint32_t r : TensorRows(run, options.tensor_rows)) {
        const ui::ApiResponse t = api.TensorJson(i, r, 0);
        if (t.status != 200) continue;
        w.KeyStr(std::to_string(r));
        w.Raw(t.body);
      }
    }
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.KeyStr("scan");
  if (ws.scan) {
    ws.scan->doc.Accept(w);
  } else {
    w.Null();
  }
  w.EndObject();
  return stream.Finish();
}

}  // namespace

Status WriteHtmlReport(const std::filesystem::path& result, const std::filesystem::path& out,
                       const ReportOptions& options) {
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
  NUMPROBE_ASSIGN_OR_RETURN(auto file, detail::AtomicOutput::Create(out));
  NUMPROBE_RETURN_IF_ERROR(file.Write(fmt::format(
      "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"numprobe report\">\n<title>{}</title>\n<style>\n",
      title_html)));
  NUMPROBE_RETURN_IF_ERROR(file.Write(ReplaceNoCase(css->bytes, "</style", "<\\/style")));
  NUMPROBE_RETURN_IF_ERROR(
      file.Write("\n</style>\n</head>\n<body>\n<div id=\"app\"></div>\n"
                 "<script type=\"application/json\" id=\"numprobe-data\">"));
  NUMPROBE_RETURN_IF_ERROR(WriteData(api, options, &file));
  NUMPROBE_RETURN_IF_ERROR(file.Write("</script>\n<script type=\"module\">\n"));
  const std::string script =
      ReplaceNoCase(ReplaceNoCase(js->bytes, "</script", "<\\/script"), "<!--", "<\\!--");
  NUMPROBE_RETURN_IF_ERROR(file.Write(script));
  NUMPROBE_RETURN_IF_ERROR(file.Write("\n</script>\n</body>\n</html>\n"));
  return file.Commit();
}

}  // namespace numprobe
