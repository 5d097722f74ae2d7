// Finding and reading MindSpore graph (kernel-level) dump trees (mindspore_dump.h).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <regex>
#include <system_error>

#include <fmt/format.h>

#include "numprobe/app/mindspore_dump.h"

#include "core/csv_read.h"
#include "core/text_file.h"
#include "mindspore/graph_internal.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxDepth = 64;
constexpr uintmax_t kMaxCsvBytes = uintmax_t{2} << 30;

// msprobe's get_name_dict pattern: op_type.op_name.task_id.stream_id.timestamp(.n)*.
// (input|output)(.n)*.slot.format.npy, where "slot" and "format" are the last two fields before
// .npy (so with a dtype suffix the slot field holds the format and "input.0" the io).
const std::regex& NpyNamePattern() {
  static const std::regex kPattern(
      R"(^([^.]+)\.([^.]+)\.([^.]+)\.([^.]+)\.(\d+(?:\.\d+)*)\.((?:in|out)put(?:\.\d+)*)\.([^.]+)\.([^.]+)\.npy$)");
  return kPattern;
}

std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t v = 0;
  const auto res = std::from_chars(text.data(), text.data() + text.size(), v);
  if (res.ec != std::errc() || res.ptr != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return v;
}

void LowestLevel(const fs::path& dir, int depth, std::vector<fs::path>* out, Status* status) {
  if (depth > kMaxDepth) {
    *status = Status::OutOfRange(dir.string() + ": more than 64 folder levels");
    return;
  }
  std::error_code ec;
  std::vector<fs::path> children;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (it->is_symlink(ec)) continue;  // read only what was given
    if (it->is_directory(ec)) children.push_back(it->path());
  }
  std::sort(children.begin(), children.end());
  for (const fs::path& child : children) {
    bool has_sub = false;
    for (auto it = fs::directory_iterator(child, ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      if (!it->is_symlink(ec) && it->is_directory(ec)) {
        has_sub = true;
        break;
      }
    }
    if (has_sub) {
      LowestLevel(child, depth + 1, out, status);
      if (!status->ok()) return;
    } else {
      out->push_back(child);
    }
  }
}

// rank_{id}/{net}/{graph_id}/{iteration}: the iteration is the folder's name, the rank the
// number after the last '_' three levels up (msprobe's generate_rank_step_id, KBK layout).
std::optional<GraphDumpFolder> RankStepOf(const fs::path& dir) {
  const auto step = ParseInt(dir.filename().string());
  const fs::path rank_dir = dir.parent_path().parent_path().parent_path();
  const std::string rank_name = rank_dir.filename().string();
  if (!step.has_value() || rank_name.rfind("rank_", 0) != 0) return std::nullopt;
  const auto rank = ParseInt(std::string_view(rank_name).substr(rank_name.rfind('_') + 1));
  if (!rank.has_value()) return std::nullopt;
  return GraphDumpFolder{*rank, *step, dir};
}

bool HoldsGraphData(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_regular_file(dir / "statistic.csv", ec)) return true;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (std::regex_match(it->path().filename().string(), NpyNamePattern())) return true;
  }
  return false;
}

// A statistic.csv value as msprobe reads it: "null"/"False" -> 0, "True" -> 1, then float();
// an empty or absent cell is NaN.
double StatValue(const std::vector<std::string>& row, std::optional<size_t> col) {
  if (!col.has_value() || *col >= row.size()) return std::numeric_limits<double>::quiet_NaN();
  std::string_view t = row[*col];
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  if (t == "null" || t == "False") return 0;
  if (t == "True") return 1;
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  double v = 0;
  const auto res = std::from_chars(t.data(), t.data() + t.size(), v);
  if (res.ec != std::errc() || res.ptr != t.data() + t.size()) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return v;
}

Status ReadStatisticCsv(const fs::path& path, std::vector<GraphTensor>* out) {
  NUMPROBE_ASSIGN_OR_RETURN(std::string text, detail::ReadTextFile(path, kMaxCsvBytes));
  auto records = detail::ParseCsv(text);
  if (!records) return records.error().WithContext(path.string());
  if (records->empty()) return Status::Corrupt(path.string() + ": empty statistic.csv");
  const std::vector<std::string>& header = (*records)[0];
  auto col = [&](std::initializer_list<std::string_view> names) -> std::optional<size_t> {
    for (std::string_view n : names) {
      const auto it = std::find(header.begin(), header.end(), n);
      if (it != header.end()) return static_cast<size_t>(it - header.begin());
    }
    return std::nullopt;
  };
  const auto op_type = col({"Op Type"});
  const auto op_name = col({"Op Name"});
  const auto task = col({"Task ID"});
  const auto stream = col({"Stream ID"});
  const auto stamp = col({"Timestamp"});
  const auto io = col({"IO", "Input/Output"});
  const auto slot = col({"Slot"});
  if (!op_name || !task || !stamp || !io || !slot) {
    return Status::Corrupt(path.string() +
                           ": not a MindSpore statistic.csv (needs Op Name, Task ID, Timestamp, "
                           "IO and Slot columns)");
  }
  const auto dtype = col({"Data Type"});
  const auto shape = col({"Shape"});
  const auto max = col({"Max Value"});
  const auto min = col({"Min Value"});
  const auto avg = col({"Avg Value"});
  const auto norm = col({"L2Norm Value"});
  const auto nan = col({"NaN Count", "Nan Count"});
  const auto pinf = col({"Positive Inf Count"});
  const auto ninf = col({"Negative Inf Count"});
  for (size_t r = 1; r < records->size(); ++r) {
    const std::vector<std::string>& row = (*records)[r];
    const size_t need = std::max({*op_name, *task, *stamp, *io, *slot}) + 1;
    if (row.size() < need) {
      return Status::Corrupt(
          fmt::format("{}: line {} has {} fields; the file was changed into an "
                      "incorrect format",
                      path.string(), r + 1, row.size()));
    }
    GraphTensor t;
    t.op_type = op_type && *op_type < row.size() ? row[*op_type] : "";
    t.op_name = row[*op_name];
    t.task_id = row[*task];
    t.stream_id = stream && *stream < row.size() ? row[*stream] : "";
    const auto ts = ParseInt(row[*stamp]);
    if (!ts.has_value()) {
      return Status::Corrupt(fmt::format("{}: line {}: timestamp '{}' is not an integer",
                                         path.string(), r + 1, row[*stamp]));
    }
    t.timestamp = *ts;
    t.io = row[*io];
    t.slot = row[*slot];
    t.compare_key = t.op_name + "." + t.task_id + "." + t.io + "." + t.slot;
    t.file = path;
    t.dtype = dtype && *dtype < row.size() ? row[*dtype] : "";
    t.shape = shape && *shape < row.size() ? row[*shape] : "";
    t.has_minmax = max && min && *max < row.size() && *min < row.size() && !row[*max].empty() &&
                   !row[*min].empty();
    t.max = StatValue(row, max);
    t.min = StatValue(row, min);
    t.mean = StatValue(row, avg);
    t.norm = StatValue(row, norm);
    auto count = [&](std::optional<size_t> c) -> std::optional<int64_t> {
      if (!c || *c >= row.size()) return std::nullopt;
      return ParseInt(row[*c]);
    };
    t.nan_count = count(nan);
    t.pos_inf_count = count(pinf);
    t.neg_inf_count = count(ninf);
    out->push_back(std::move(t));
  }
  return Status::Ok();
}

// mapping.csv: long file names MindSpore replaced by numbers, "{number},{original name}".
Result<std::map<std::string, std::string>> ReadMappingCsv(const fs::path& path) {
  std::map<std::string, std::string> map;
  NUMPROBE_ASSIGN_OR_RETURN(std::string text, detail::ReadTextFile(path, kMaxCsvBytes));
  auto records = detail::ParseCsv(text);
  if (!records) return records.error().WithContext(path.string());
  for (size_t r = 1; r < records->size(); ++r) {
    if ((*records)[r].size() >= 2) map[(*records)[r][0]] = (*records)[r][1];
  }
  return map;
}

}  // namespace

namespace mindspore_detail {

std::optional<GraphTensor> ParseNpyName(const std::string& name) {
  std::smatch m;
  if (!std::regex_match(name, m, NpyNamePattern())) return std::nullopt;
  GraphTensor t;
  t.op_type = m[1].str();
  t.op_name = m[2].str();
  t.task_id = m[3].str();
  t.stream_id = m[4].str();
  const std::string stamp = m[5].str();
  const auto ts = ParseInt(std::string_view(stamp).substr(0, stamp.find('.')));
  if (!ts.has_value()) return std::nullopt;
  t.timestamp = *ts;
  t.io = m[6].str();
  t.slot = m[7].str();
  t.compare_key = t.op_name + "." + t.task_id + "." + t.io + "." + t.slot;
  return t;
}

}  // namespace mindspore_detail

Result<std::vector<GraphDumpFolder>> FindGraphDumpFolders(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return Status::NotFound(root.string() + ": not a folder");
  std::vector<fs::path> lowest;
  Status status;
  LowestLevel(root, 0, &lowest, &status);
  NUMPROBE_RETURN_IF_ERROR(status);
  std::vector<GraphDumpFolder> out;
  for (const fs::path& dir : lowest) {
    auto f = RankStepOf(dir);
    if (f.has_value() && HoldsGraphData(dir)) out.push_back(std::move(*f));
  }
  if (out.empty()) {
    return Status::NotFound(root.string() +
                            ": no rank_{id}/{net}/{graph}/{iteration}/ folder with MindSpore dump "
                            "files");
  }
  std::stable_sort(out.begin(), out.end(), [](const GraphDumpFolder& a, const GraphDumpFolder& b) {
    return std::tie(a.rank, a.step) < std::tie(b.rank, b.step);
  });
  return out;
}

bool IsMindSporeGraphDump(const fs::path& root) { return FindGraphDumpFolders(root).ok(); }

Result<GraphDumpData> ReadGraphDump(const std::vector<fs::path>& dirs) {
  GraphDumpData data;
  bool any_npy = false;
  bool any_stat = false;
  for (const fs::path& dir : dirs) {
    std::error_code ec;
    std::map<std::string, std::string> mapping;
    if (fs::is_regular_file(dir / "mapping.csv", ec)) {
      NUMPROBE_ASSIGN_OR_RETURN(mapping, ReadMappingCsv(dir / "mapping.csv"));
    }
    std::vector<fs::path> npys;
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      if (it->path().extension() == ".npy" && it->is_regular_file(ec)) npys.push_back(it->path());
    }
    std::sort(npys.begin(), npys.end());
    if (!npys.empty()) {  // a folder's .npy files win over its statistic.csv (msprobe)
      any_npy = true;
      for (const fs::path& p : npys) {
        const std::string name = p.filename().string();
        const auto mapped = mapping.find(name);
        auto t = mindspore_detail::ParseNpyName(mapped != mapping.end() ? mapped->second : name);
        if (!t.has_value()) continue;  // not a dump file name (msprobe skips it too)
        t->file = p;
        data.tensors.push_back(std::move(*t));
      }
    } else if (fs::is_regular_file(dir / "statistic.csv", ec)) {
      any_stat = true;
      NUMPROBE_RETURN_IF_ERROR(ReadStatisticCsv(dir / "statistic.csv", &data.tensors));
    }
  }
  if (any_npy && any_stat) {
    return Status::InvalidArgument(dirs.front().string() +
                                   ": the folders of one rank and step mix .npy files and "
                                   "statistic.csv");
  }
  if (!any_npy && !any_stat) {
    return Status::NotFound((dirs.empty() ? std::string("?") : dirs.front().string()) +
                            ": no .npy files or statistic.csv");
  }
  data.mode = any_npy ? GraphDumpMode::kNpy : GraphDumpMode::kStatistic;
  return data;
}

}  // namespace numprobe
