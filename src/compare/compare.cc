// The compare pipeline: read both dump.json files, decide the mode, pair rows, fill msprobe's
// cells, judge. Tensor-mode metrics live in compare_tensor.cc.
#include "numprobe/compare.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "numprobe/divergence.h"
#include "numprobe/thread_pool.h"

#include "compare/birth_rules.h"
#include "compare/compare_internal.h"
#include "compare/compare_split.h"
#include "compare/loaded_mapping.h"
#include "compare/row_cells.h"
#include "core/py_format.h"
#include "msprobe/dump_journal.h"
#include "msprobe/entry_name.h"

namespace numprobe {

std::string MetricCell::Text() const {
  std::string out;
  AppendText(&out);
  return out;
}

void MetricCell::AppendText(std::string* out) const {
  // The texts of msprobe's tokens (the other kinds are numbers).
  static constexpr EnumNameEntry<Kind> kTokens[] = {{Kind::kEmpty, ""},
                                                    {Kind::kZero, "0"},
                                                    {Kind::kNA, "N/A"},
                                                    {Kind::kNan, "Nan"},
                                                    {Kind::kInf, "inf"},
                                                    {Kind::kNegInf, "-inf"},
                                                    {Kind::kDiff, "Diff"},
                                                    {Kind::kUnsupported, "unsupported"},
                                                    {Kind::kShapeUnmatched, "shape unmatched"}};
  switch (kind) {
    case Kind::kValue:
      if (std::isinf(value)) {
        *out += value > 0 ? " inf" : " -inf";
        return;
      }
      detail::AppendPyFloatRepr(value, out);
      return;
    case Kind::kValueText:
      detail::AppendPyFloatRepr(value, out);
      return;
    case Kind::kPercent:
      detail::AppendPyFloatRepr(value, out);
      *out += '%';
      return;
    default:
      *out += NameIn(kTokens, kind);
  }
}

namespace detail {

bool DtypesComparable(std::string_view a, std::string_view b) {
  if (a == b) return true;
  auto in = [](std::string_view d, std::initializer_list<std::string_view> set) {
    for (const std::string_view s : set) {
      if (d == s) return true;
    }
    return false;
  };
  const auto torch = {std::string_view("torch.float16"), std::string_view("torch.float32"),
                      std::string_view("torch.bfloat16")};
  const auto ms = {std::string_view("Float16"), std::string_view("Float32"),
                   std::string_view("BFloat16")};
  return (in(a, torch) && in(b, torch)) || (in(a, ms) && in(b, ms));
}

namespace {

std::string ReplaceAll(std::string_view text, std::string_view from) {
  if (from.empty()) return std::string(text);
  std::string out;
  size_t start = 0;
  while (true) {
    const size_t pos = text.find(from, start);
    if (pos == std::string_view::npos) break;
    out.append(text.substr(start, pos - start));
    start = pos + from.size();
  }
  out.append(text.substr(start));
  return out;
}

}  // namespace

RowKeys CompareKeys(const DumpFile& file, bool renumber_backward, bool is_debug_file) {
  RowKeys keys(&file);
  std::unordered_map<std::string, uint32_t> backward_count;
  for (const DumpEntry& e : file.entries) {
    const uint32_t end = e.first_row + e.row_count;
    if (is_debug_file) {
      for (uint32_t r = e.first_row; r < end; ++r) keys.SetName(r);
      continue;
    }
    // msprobe's split_data_name_components, which ParseEntryName follows.
    const EntryNameParts parsed = ParseEntryName(e.name);
    const auto [last, second] = LastTwoParts(e.name);
    const std::string op_no_number(parsed.op);
    const bool backward = parsed.backward();
    if (op_no_number.empty()) continue;  // msprobe skips entries it cannot name
    uint32_t order = 0;
    if (backward) order = backward_count[op_no_number]++;
    for (uint32_t r = e.first_row; r < end; ++r) {
      const std::string_view name = file.rows[r].name;
      if (!renumber_backward || !backward) {  // (a backward entry has 3 parts or more)
        keys.SetName(r);
        continue;
      }
      // Replace the call number (before or after "backward") by the backward call order.
      std::string head(second);
      std::string tail(last);
      const bool head_digit = IsDigits(head);
      const bool tail_digit = IsDigits(tail);
      if (!head_digit && !tail_digit) {
        keys.SetName(r);
        continue;
      }
      if (head_digit) head = std::to_string(order);
      if (tail_digit) tail = std::to_string(order);
      keys.Set(r, fmt::format("{}.{}.{}{}", op_no_number, head, tail, ReplaceAll(name, e.name)));
    }
  }
  return keys;
}

// msprobe's check_op_str_pattern_valid: text that starts (or continues after ';') with + - = % @
// (or their full-width forms) would be a formula when the table is opened in a spreadsheet, so
// msprobe refuses such dumps; so does numprobe. Plain numbers ("-1") are fine.
bool LooksLikeFormula(std::string_view text) {
  static constexpr std::string_view kFullWidth[] = {"\xef\xbc\x8b", "\xef\xbc\x8d", "\xef\xbc\x9d",
                                                    "\xef\xbc\x85", "\xef\xbc\xa0"};
  auto starts_bad = [](std::string_view t) {
    if (t.empty()) return false;
    if (t[0] == '+' || t[0] == '-' || t[0] == '=' || t[0] == '%' || t[0] == '@') return true;
    for (const std::string_view w : kFullWidth) {
      if (t.substr(0, w.size()) == w) return true;
    }
    return false;
  };
  double number = 0;
  if (detail::ParsePyNumber(text, &number)) return false;
  if (starts_bad(text)) return true;
  for (size_t pos = text.find(';'); pos != std::string_view::npos; pos = text.find(';', pos + 1)) {
    if (starts_bad(text.substr(pos + 1))) return true;
  }
  return false;
}

}  // namespace detail

namespace {

using detail::SummaryCsvText;
using detail::SummaryNA;
using detail::SummaryOf;

bool IsDebugFile(const DumpLocation& loc) { return loc.dump_json.filename() == "debug.json"; }

Status CheckFormulaText(const DumpFile& f) {
  for (const DumpEntry& e : f.entries) {
    if (detail::LooksLikeFormula(e.name)) {
      return Status::Rejected(
          fmt::format("entry {} would run as a spreadsheet formula in the result table",
                      detail::PyStrRepr(e.name.substr(0, 60))));
    }
  }
  for (const DumpRow& r : f.rows) {
    for (const PyValue& v : r.stats) {
      if (v.kind() == PyValue::Kind::kStr && detail::LooksLikeFormula(f.Text(v.text_id()))) {
        return Status::Rejected(
            fmt::format("{}: value {} would run as a spreadsheet formula in the result table",
                        r.name, detail::PyStrRepr(f.Text(v.text_id()).substr(0, 60))));
      }
    }
  }
  return Status::Ok();
}

Result<CompareMode> DecideMode(const DumpFile& target, const DumpFile& golden) {
  if (target.task.empty()) return Status::InvalidArgument("the target dump.json names no task");
  if (golden.task.empty()) return Status::InvalidArgument("the golden dump.json names no task");
  if (target.task != golden.task) {
    return Status::InvalidArgument(
        fmt::format(R"(the target was dumped with task "{}" and the golden with task "{}")",
                    target.task, golden.task));
  }
  if (target.task == "tensor") return CompareMode::kTensor;
  if (target.task == "statistics") {
    if (target.has_md5 != golden.has_md5) {
      return Status::InvalidArgument(
          "one dump has md5 checksums and the other statistics; both must use the same "
          "summary_mode");
    }
    return target.has_md5 ? CompareMode::kMd5 : CompareMode::kStatistics;
  }
  return Status::Unsupported(fmt::format(
      R"(task "{}" cannot be compared (only "statistics" and "tensor" dumps))", target.task));
}

}  // namespace

std::vector<std::string> CompareTable::Header() const {
  std::vector<std::string> h = {"NPU Name",          "Bench Name",         "NPU Dtype",
                                "Bench Dtype",       "NPU Tensor Shape",   "Bench Tensor Shape",
                                "NPU Requires_grad", "Bench Requires_grad"};
  const std::vector<std::string> summary = {"NPU max",   "NPU min",   "NPU mean",   "NPU l2norm",
                                            "Bench max", "Bench min", "Bench mean", "Bench l2norm"};
  switch (mode) {
    case CompareMode::kStatistics:
      h.insert(h.end(), {"Max diff", "Min diff", "Mean diff", "L2norm diff", "MaxRelativeErr",
                         "MinRelativeErr", "MeanRelativeErr", "NormRelativeErr"});
      h.insert(h.end(), summary.begin(), summary.end());
      break;
    case CompareMode::kTensor:
      h.insert(h.end(), {"Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr",
                         "One Thousandth Err Ratio", "Five Thousandths Err Ratio"});
      h.insert(h.end(), summary.begin(), summary.end());
      break;
    case CompareMode::kMd5:
      h.insert(h.end(), {"NPU MD5", "BENCH MD5"});
      break;
  }
  h.insert(h.end(), {"Requires_grad Consistent", "Result", "Err_message"});
  if (has_stack()) h.emplace_back("NPU_Stack_Info");
  if (mode == CompareMode::kTensor) {
    h.emplace_back("Data_name");
    // numprobe's columns follow msprobe's.
    h.insert(h.end(),
             {"Mean AbsErr", "Mean RelErr", "RMSE", "SQNR(dB)", "Max ULP", "Mean ULP", "ULP Dtype",
              "Allclose Ratio", "NaN Mismatch", "+Inf Mismatch", "-Inf Mismatch", "Worst Index"});
  }
  h.insert(h.end(), {"Rel Error", "Dtype Tolerance", "Judgment", "Match"});
  return h;
}

std::vector<std::string> CompareTable::CsvCells(size_t i) const {
  std::vector<std::string> cells;
  CsvCells(i, &cells);
  return cells;
}

namespace {

// ForEachCell's sink for CsvCells: the cells into the strings already in *out, so that a caller
// reusing one vector allocates nothing per row once the strings have grown.
class CellStrings {
 public:
  explicit CellStrings(std::vector<std::string>* out) : out_(out) {}
  void Text(std::string_view text) { Next().append(text); }
  void Interned(const DumpFile& file, uint32_t id) { Text(file.Text(id)); }
  void Messages(MessageList list) { Text(detail::MessagesCellText(list)); }
  void Float(double v) {
    std::string& cell = Next();
    if (std::isnan(v)) {
      cell.append("N/A");
    } else {
      detail::AppendPyFloatRepr(v, &cell);
    }
  }
  template <typename Fn>
  void Write(Fn&& fn) {
    std::forward<Fn>(fn)(&Next());
  }
  size_t count() const { return count_; }

 private:
  std::string& Next() {
    if (count_ == out_->size()) out_->emplace_back();
    std::string& cell = (*out_)[count_++];
    cell.clear();
    return cell;
  }
  std::vector<std::string>* out_;
  size_t count_ = 0;
};

}  // namespace

void CompareTable::CsvCells(size_t i, std::vector<std::string>* out) const {
  CellStrings cells(out);
  detail::ForEachCell(*this, i, cells);
  out->resize(cells.count());
}

namespace detail {

Result<CompareTable> PairDumps(const DumpLocation& target, const DumpLocation& golden,
                               const LoadedMapping& loaded, ThreadPool* pool) {
  CompareTable table;
  ThreadPool& workers = pool != nullptr ? *pool : ThreadPool::Default();
  // The two dump.json files are read side by side (reading is most of a large statistics
  // compare); a nested call, inside the pool's own work on several ranks, reads them in turn.
  std::array<DumpFile, 2> files;
  std::array<Status, 2> read;
  const std::array<const std::filesystem::path*, 2> paths = {&target.dump_json, &golden.dump_json};
  workers.ParallelFor(2, [&](int64_t side) {
    const auto s = static_cast<size_t>(side);
    auto file = ReadDumpJson(*paths[s]);
    if (file) {
      files[s] = std::move(*file);
    } else {
      read[s] = file.error();
    }
  });
  NUMPROBE_RETURN_IF_ERROR(read[0]);
  NUMPROBE_RETURN_IF_ERROR(read[1]);
  DumpFile& t_file = files[0];
  DumpFile& g_file = files[1];
  for (const auto& [file, where] : {std::pair{&t_file, &target}, std::pair{&g_file, &golden}}) {
    if (!file->from_journal) continue;
    table.warnings.push_back(fmt::format(
        "{}: dump.json is missing or older than the capture journal (the run did not stop "
        "cleanly, or is still writing this step); read {} entries from {}{}",
        where->dir.string(), file->entries.size(), kDumpJournalName,
        file->journal_truncated_tail ? " (its last, incomplete record skipped)" : ""));
  }
  table.target = std::make_shared<const DumpFile>(std::move(t_file));
  table.golden = std::make_shared<const DumpFile>(std::move(g_file));
  NUMPROBE_ASSIGN_OR_RETURN(table.mode, DecideMode(*table.target, *table.golden));
  if (!target.stack_json.empty()) {
    NUMPROBE_ASSIGN_OR_RETURN(auto stack, ReadStackJson(target.stack_json));
    table.stack = std::make_shared<const StackMap>(std::move(stack));
  }
  NUMPROBE_ASSIGN_OR_RETURN(auto casts, ReadCasts(target.dir));
  if (casts.has_value()) table.casts = std::make_shared<const CastRecord>(std::move(*casts));

  NUMPROBE_RETURN_IF_ERROR(CheckFormulaText(*table.target).WithContext(target.dump_json.string()));
  NUMPROBE_RETURN_IF_ERROR(CheckFormulaText(*table.golden).WithContext(golden.dump_json.string()));
  if (table.stack != nullptr) {
    for (const DumpEntry& e : table.target->entries) {
      const std::vector<std::string>* lines = table.stack->Find(e.name);
      if (lines == nullptr) continue;
      for (const std::string& line : *lines) {
        if (detail::LooksLikeFormula(line)) {
          return Status::Rejected(fmt::format(
              "{}: stack of {}: {} would run as a spreadsheet formula in the result table",
              target.stack_json.string(), e.name, detail::PyStrRepr(line.substr(0, 60))));
        }
      }
    }
  }

  const bool debug = IsDebugFile(target) && IsDebugFile(golden);
  LoadedMapping mapping = loaded;
  if (mapping.layer_mapping) {
    // -lm: msprobe's layer mapping from construct.json and stack.json, as a data mapping.
    ConstructMap constructs[2];
    const DumpLocation* sides[2] = {&target, &golden};
    for (int i = 0; i < 2; ++i) {
      if (sides[i]->construct_json.empty()) {
        return Status::InvalidArgument(fmt::format(
            "{}: -lm/--layer_mapping needs the construct.json beside dump.json, and there is none",
            sides[i]->dir.string()));
      }
      NUMPROBE_ASSIGN_OR_RETURN(constructs[i], ReadConstructJson(sides[i]->construct_json));
    }
    std::shared_ptr<const StackMap> golden_stack;
    if (!golden.stack_json.empty()) {
      NUMPROBE_ASSIGN_OR_RETURN(StackMap s, ReadStackJson(golden.stack_json));
      golden_stack = std::make_shared<const StackMap>(std::move(s));
    }
    auto data_map = LayerDataMapping(*table.target, table.stack.get(), constructs[0], *table.golden,
                                     golden_stack.get(), constructs[1], mapping.layer_map);
    if (data_map.empty()) {
      table.warnings.emplace_back(
          "-lm: stack.json or construct.json is missing or empty on a side (a dump at level L1?), "
          "so, as in msprobe, no layer mapping applies");
    } else {
      // msprobe replaces any -dm with it; rows it maps to "N/A" stay unpaired (not aligned).
      mapping.data_mapping = true;
      mapping.data_map = std::move(data_map);
      mapping.align = false;
    }
  }
  PairRows(&table, mapping, debug, &workers);
  return table;
}

void FinishTable(CompareTable* table, ThreadPool* pool) {
  // Entries in chunks of a fixed count (the result does not depend on the pool): each row is
  // written by its own entry's work only.
  std::vector<size_t> starts;
  for (size_t begin = 0; begin < table->rows.size(); begin = EntryEnd(*table, begin)) {
    starts.push_back(begin);
  }
  starts.push_back(table->rows.size());
  constexpr size_t kEntriesPerChunk = 2048;
  const size_t entries = starts.size() - 1;
  const auto chunks = static_cast<int64_t>((entries + kEntriesPerChunk - 1) / kEntriesPerChunk);
  auto finish_chunk = [&](int64_t c) {
    const size_t first = static_cast<size_t>(c) * kEntriesPerChunk;
    for (size_t e = first; e < std::min(entries, first + kEntriesPerChunk); ++e) {
      ApplyResultRules(table, starts[e], starts[e + 1]);
      AssessEntryRows(table, starts[e], starts[e + 1]);
    }
  };
  if (pool != nullptr) {
    pool->ParallelFor(chunks, finish_chunk);
  } else {
    for (int64_t c = 0; c < chunks; ++c) finish_chunk(c);
  }
}

Result<CompareTable> CompareWithMapping(const DumpLocation& target, const DumpLocation& golden,
                                        const LoadedMapping& loaded, ThreadPool* pool,
                                        const ProgressCallback& progress, uint64_t max_memory) {
  NUMPROBE_ASSIGN_OR_RETURN(CompareTable table, PairDumps(target, golden, loaded, pool));
  ThreadPool& workers = pool != nullptr ? *pool : ThreadPool::Default();
  if (table.mode == CompareMode::kStatistics) {
    constexpr size_t kRowsPerChunk = 8192;
    const auto chunks =
        static_cast<int64_t>((table.rows.size() + kRowsPerChunk - 1) / kRowsPerChunk);
    workers.ParallelFor(chunks, [&](int64_t c) {
      const size_t first = static_cast<size_t>(c) * kRowsPerChunk;
      for (size_t i = first; i < std::min(table.rows.size(), first + kRowsPerChunk); ++i) {
        FillStatisticsCells(table, &table.rows[i]);
      }
    });
  } else if (table.mode == CompareMode::kTensor) {
    FillTensorCells(&table, target, golden, pool, progress, max_memory);
  }
  FinishTable(&table, &workers);
  return table;
}

}  // namespace detail

Result<CompareTable> CompareDumps(const DumpLocation& target, const DumpLocation& golden,
                                  const CompareOptions& options) {
  NUMPROBE_ASSIGN_OR_RETURN(const detail::LoadedMapping mapping,
                            detail::LoadMapping(options.mapping));
  return detail::CompareWithMapping(target, golden, mapping, options.pool, options.progress,
                                    options.max_memory);
}

}  // namespace numprobe
