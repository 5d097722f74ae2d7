// numprobe scan: one pass over every rank of every step of a dump. Each rank's dump.json is
// streamed entry by entry (StreamDumpJson), each entry's rows turned into statistics (from the
// tensor files when a tensor-mode dump has them) and reduced, as they are read, to what the
// analysis needs later: anomaly candidates, communication ops, parameter snapshots, watchpoint
// hits and headroom rows. The rows are never held, so memory grows with the findings (and the
// names they cite), not with the dump.
//
// First anomaly. Per rank, ops are walked in execution order: an op whose inputs are finite and
// whose output is not is a birth (kCompute); the first op whose inputs are already non-finite
// with nothing earlier on the rank to explain it is kInheritedInput (NaN data or weights).
// Communication ops are matched across ranks (scan_comm.cc) and levelled; ops between levels L-1
// and L happen at time L - 0.5, a communication op at L. A communication op is the birth when
// every sender's input was finite and its output is not (msprobe: good input, bad output blames
// the op; bad input blames the sender's earlier compute, which has the earlier time). Births are
// ordered by (step, time, position, rank), inherited inputs after every other birth; the first
// is the first anomaly.
#include "numprobe/scan.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "numprobe/buffer.h"
#include "numprobe/float_convert.h"
#include "numprobe/memory_limit.h"

#include "core/huge_pages.h"
#include "core/sample_reserve.h"
#include "msprobe/folder_number.h"
#include "scan/scan_internal.h"
#include "scan/scan_units.h"

namespace numprobe {

const HeadroomUnit& ScanReport::UnitOf(const HeadroomRow& row) const {
  static const HeadroomUnit kNone;
  return row.unit < headroom_units.size() ? headroom_units[row.unit] : kNone;
}

bool ScanReport::has_overflow() const {
  return std::any_of(headroom_summary.begin(), headroom_summary.end(),
                     [](const HeadroomSummary& s) { return s.overflow > 0; });
}

namespace {

using detail::CommDirection;
using detail::CommNode;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string Num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.6g}", v);
}

using detail::ParamSnapshot;
using detail::RankScan;

constexpr std::string_view kRangeNeedsFilesWarning =
    "activation range percentages need tensor files; skipped where the dump has none";

// What the candidate walk needs of one entry.
struct EntryFacts {
  uint32_t entry = 0;
  bool comm = false;
  int comm_node = -1;          // index into the rank's comm_nodes
  bool in_bad = false;         // a non-finite input, scalar arguments included
  bool in_bad_tensor = false;  // a non-finite input tensor
  bool out_bad = false;
  bool module = false;
  bool ignored = false;  // torch.empty and friends: garbage output, never a birth
};

void AddHit(std::vector<WatchpointHit>* hits, Watchpoint w, const RankScan& rank,
            std::string tensor, std::string op, std::string condition, double actual,
            double threshold, bool exact, std::string detail = {}) {
  WatchpointHit hit;
  hit.watchpoint = w;
  hit.scope = rank.scope;
  hit.step = rank.step;
  hit.rank_folder = rank.rank_folder;
  hit.rank = rank.rank;
  hit.tensor = std::move(tensor);
  hit.op_name = std::move(op);
  hit.condition = std::move(condition);
  hit.actual = actual;
  hit.threshold = threshold;
  hit.exact = exact;
  hit.detail = std::move(detail);
  hits->push_back(std::move(hit));
}

bool Watching(const ScanOptions& options, Watchpoint w) {
  return options.watch[static_cast<size_t>(w)];
}

// Module inputs and outputs repeat their APIs' tensors when APIs are dumped too: pass 1 gives
// such a row no watchpoint and no headroom row once the dump is known to hold an API entry.
// Parameters and parameter gradients are never repeats.
bool MayRepeatApiTensor(const DumpEntry& entry, const DumpRow& row) {
  return row.state != RowState::kParameters && detail::IsModuleEntry(entry.name) &&
         !detail::IsParametersGradEntry(entry.name);
}

// Index ranges [first, second) of a vector, in increasing order.
using IndexRanges = std::vector<std::pair<size_t, size_t>>;

void AddRange(IndexRanges* ranges, size_t begin, size_t end) {
  if (begin == end) return;
  if (!ranges->empty() && ranges->back().second == begin) {
    ranges->back().second = end;
  } else {
    ranges->emplace_back(begin, end);
  }
}

// Removes the items at `ranges` from *v, keeping the others' order.
template <typename T>
void EraseRanges(std::vector<T>* v, const IndexRanges& ranges) {
  size_t to = ranges.empty() ? v->size() : ranges.front().first;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const size_t next = i + 1 < ranges.size() ? ranges[i + 1].first : v->size();
    for (size_t from = ranges[i].second; from < next; ++from) (*v)[to++] = std::move((*v)[from]);
  }
  v->resize(to);
}

// One (step, rank) unit scanned into a RankScan (scan_units.h). dump.json is streamed
// (StreamDumpJson): pass 1 runs on each entry as it is read, keeping of it only the facts the
// later passes need, so that neither the dump's rows nor a record per row are held.
class RankScanner {
 public:
  RankScanner(const ScanOptions& options, const DumpLocation& location, int slot, RankScan* out)
      : options_(options), location_(location), slot_(slot), out_(out), initial_(*out) {}

  Status Scan();

 private:
  // Pass 1 over one entry (StreamDumpJson's visitor).
  Status Entry(const DumpFile& file, const DumpEntry& entry, std::span<const DumpRow> rows);
  // Everything pass 1 built, dropped: the entries are delivered again (StreamDumpJson).
  void Restart();
  // Passes 2 and 3, once every entry went through pass 1.
  Status Finish(const DumpFile& file);

  // The headroom rows reserved once, from the density of the first entries (as the reader
  // reserves its own): growing the vector held the old and the new array together, the largest
  // allocation of a large scan.
  void ReserveHeadroom(uint32_t index, const DumpEntry& entry);
  // Runs `effects` of a module row that repeats its APIs' tensors if the dump holds APIs, which
  // is not known yet: what they add is noted, and taken back at the first API entry.
  template <typename Fn>
  void Tentatively(Fn&& effects);
  void RetractTentative();

  void WatchGradient(const RankScan& rank, std::string_view op, const DumpRow& row,
                     const ScanTensor& t);
  void WatchTensor(const RankScan& rank, std::string_view op, const ScanTensor& t);
  void WatchActivation(const RankScan& rank, std::string_view op, const ScanTensor& t);
  // `entry` and `row` are t's, in the rank's DumpFile (whose texts the rank keeps).
  void AddHeadroom(const DumpEntry& entry, const DumpRow& row, const std::string& layer,
                   const ScanTensor& t);
  void Hit(Watchpoint w, const RankScan& rank, std::string tensor, std::string_view op,
           std::string condition, double actual, double threshold, bool exact,
           std::string detail = {}) {
    AddHit(&out_->hits, w, rank, std::move(tensor), std::string(op), std::move(condition), actual,
           threshold, exact, std::move(detail));
  }
  bool Watching(Watchpoint w) const { return numprobe::Watching(options_, w); }

  // `text` in the rank's arena; stored once for a run of rows that repeat it (an entry's op).
  std::string_view Keep(std::string_view text, std::string_view* last) {
    if (*last != text) *last = out_->texts->Store(text);
    return *last;
  }
  std::string_view KeepDtype(std::string_view dtype) {
    for (const std::string_view d : pass1_.kept_dtypes) {
      if (d == dtype) return d;
    }
    return pass1_.kept_dtypes.emplace_back(out_->texts->Store(dtype));
  }

  const ScanOptions& options_;
  const DumpLocation& location_;
  const int slot_;
  RankScan* out_;
  const RankScan initial_;  // *out_ as given, for Restart
  uint64_t file_bytes_ = 0;
  StackMap stack_;
  ConstructMap construct_;
  detail::RowReadContext context_;
  detail::LastShape last_shape_;

  // What pass 1 builds beside *out_ (emptied by Restart).
  struct Pass1 {
    // The texts of headroom rows kept last.
    std::string_view kept_layer;
    std::vector<std::string_view> kept_dtypes;
    std::vector<EntryFacts> ops;  // one per entry
    std::unordered_set<std::string> seen_params;
    ScanTensor t;                           // the row at hand, its memory reused row to row
    // The entry's rows whose tensors came from their files (row, tensor), kept for a node: the
    // others' are made again from the row (TensorOfRow without files, a pure function of it).
    std::vector<std::pair<size_t, ScanTensor>> from_files;
    // The entries that pass 3 may make a node of (a birth, an anomalous communication op): the
    // node, made while the entry's rows were at hand. In entry order.
    std::vector<AnomalyNode> nodes;
    // Pass 3 finds every later op explained from here on: its inherited-input candidates end.
    bool explained = false;
    bool saw_api = false;    // an entry that is neither a module nor a parameter gradient
    bool saw_stats = false;  // a tensor row with a Max
    bool reserved = false;   // ReserveHeadroom done
    // What tentative effects added (Tentatively), while no API entry was seen.
    IndexRanges tentative_hits, tentative_headroom, tentative_warnings;
    bool tentative_range_warning = false;
  };
  Pass1 pass1_;
};

void RankScanner::WatchGradient(const RankScan& rank, std::string_view op, const DumpRow& row,
                                const ScanTensor& t) {
  if (!t.is_tensor) return;
  const std::string param = detail::ParameterKey(op, row.name);
  const ScanThresholds& th = options_.thresholds;
  if (t.nonfinite) {
    if (Watching(Watchpoint::kGradientExploding)) {
      Hit(Watchpoint::kGradientExploding, rank, param, op, "holds NaN/Inf",
          t.has_norm ? t.norm : kNaN, th.grad_norm_max, t.exact,
          fmt::format("max {} min {}", Num(t.max), Num(t.min)));
    }
    return;
  }
  const bool all_zero = t.exact ? (t.count > 0 && t.zero_count == t.count)
                                : (t.has_max && t.has_min && t.max == 0 && t.min == 0);
  if (all_zero) {
    if (Watching(Watchpoint::kGradientAllZero)) {
      Hit(Watchpoint::kGradientAllZero, rank, param, op, "all elements zero", 0, 0, t.exact);
    }
    return;
  }
  if (!t.has_norm) return;
  if (t.norm < th.grad_norm_min && Watching(Watchpoint::kGradientVanishing)) {
    Hit(Watchpoint::kGradientVanishing, rank, param, op,
        fmt::format("norm < {}", Num(th.grad_norm_min)), t.norm, th.grad_norm_min, t.exact);
  }
  if (!(t.norm <= th.grad_norm_max) && Watching(Watchpoint::kGradientExploding)) {
    Hit(Watchpoint::kGradientExploding, rank, param, op,
        fmt::format("norm > {}", Num(th.grad_norm_max)), t.norm, th.grad_norm_max, t.exact);
  }
}

void RankScanner::WatchTensor(const RankScan& rank, std::string_view op, const ScanTensor& t) {
  if (!Watching(Watchpoint::kTensorTooLarge) || !t.is_tensor || t.nonfinite) return;
  if (!detail::IsFloatDTypeText(t.dtype) || std::isnan(t.max_abs)) return;
  const double limit = options_.thresholds.tensor_abs_max;
  if (t.max_abs > limit) {
    Hit(Watchpoint::kTensorTooLarge, rank, t.name, op, fmt::format("max|x| > {}", Num(limit)),
        t.max_abs, limit, t.exact);
  }
}

void RankScanner::WatchActivation(const RankScan& rank, std::string_view op, const ScanTensor& t) {
  if (!Watching(Watchpoint::kActivationRange) || !t.is_tensor || t.nonfinite) return;
  if (!detail::IsFloatDTypeText(t.dtype) || !t.has_max || !t.has_min) return;
  if (t.count >= 0 && t.count <= 1) return;  // one value has no range
  const ScanThresholds& th = options_.thresholds;
  const double spread = t.max - t.min;
  if (spread < th.act_max_min_lt) {
    Hit(Watchpoint::kActivationRange, rank, t.name, op,
        fmt::format("max - min < {}", Num(th.act_max_min_lt)), spread, th.act_max_min_lt, t.exact,
        fmt::format("every output equals {} (dead or saturated)", Num(t.max)));
  }
  if (spread > th.act_max_min_gt) {
    Hit(Watchpoint::kActivationRange, rank, t.name, op,
        fmt::format("max - min > {}", Num(th.act_max_min_gt)), spread, th.act_max_min_gt, t.exact);
  }
  if (!th.act_range.has_value() || (!th.act_range_pct_lt && !th.act_range_pct_gt)) return;
  if (t.file.empty()) {
    if (out_->range_warning_at < 0) {
      out_->range_warning_at = static_cast<int64_t>(out_->warnings.size());
    }
    return;
  }
  auto tensor = detail::LoadTensorFile(t.file, EffectiveMaxMemory(options_.max_memory));
  if (!tensor) {
    out_->warnings.push_back(tensor.error().message());
    return;
  }
  const auto [low, high] = *th.act_range;
  const double pct = detail::PercentInRange(*tensor, low, high);
  const std::string range = fmt::format("[{}, {}]", Num(low), Num(high));
  if (th.act_range_pct_lt && pct < *th.act_range_pct_lt) {
    Hit(Watchpoint::kActivationRange, rank, t.name, op,
        fmt::format("% in {} < {}", range, Num(*th.act_range_pct_lt)), pct, *th.act_range_pct_lt,
        true);
  }
  if (th.act_range_pct_gt && pct > *th.act_range_pct_gt) {
    Hit(Watchpoint::kActivationRange, rank, t.name, op,
        fmt::format("% in {} > {}", range, Num(*th.act_range_pct_gt)), pct, *th.act_range_pct_gt,
        true);
  }
}

void RankScanner::AddHeadroom(const DumpEntry& entry, const DumpRow& dump_row,
                              const std::string& layer, const ScanTensor& t) {
  if (!t.is_tensor || !detail::IsFloatDTypeText(t.dtype)) return;
  if (!t.nonfinite && std::isnan(t.max_abs)) return;  // no statistics (md5 mode, null stats)
  HeadroomRow row;  // of unit 0: the assembler numbers the units (ScanAssembler::AddStep)
  row.tensor = dump_row.name;  // in out_->file_texts
  row.op_name = entry.name;
  row.layer = Keep(layer, &pass1_.kept_layer);
  row.dtype = KeepDtype(t.dtype);
  row.exact = t.exact;
  row.nonfinite = t.nonfinite;
  row.max_abs = t.max_abs;
  row.min_nonzero_abs = t.min_nonzero_abs;
  out_->headroom.push_back(row);
}

void RankScanner::ReserveHeadroom(uint32_t index, const DumpEntry& entry) {
  if (pass1_.reserved || index < detail::kReserveSample) return;
  pass1_.reserved = true;
  const size_t want = detail::ReserveFromSample(out_->headroom.size(), entry.offset, file_bytes_,
                                                sizeof(HeadroomRow));
  if (want <= out_->headroom.capacity()) return;
  out_->headroom.reserve(want);
  detail::AdviseHugePages(out_->headroom);
}

template <typename Fn>
void RankScanner::Tentatively(Fn&& effects) {
  const size_t hits = out_->hits.size();
  const size_t headroom = out_->headroom.size();
  const size_t warnings = out_->warnings.size();
  const bool range_warning = out_->range_warning_at >= 0;
  effects();
  AddRange(&pass1_.tentative_hits, hits, out_->hits.size());
  AddRange(&pass1_.tentative_headroom, headroom, out_->headroom.size());
  AddRange(&pass1_.tentative_warnings, warnings, out_->warnings.size());
  if (!range_warning && out_->range_warning_at >= 0) pass1_.tentative_range_warning = true;
}

void RankScanner::RetractTentative() {
  EraseRanges(&out_->hits, pass1_.tentative_hits);
  EraseRanges(&out_->headroom, pass1_.tentative_headroom);
  if (pass1_.tentative_range_warning) {
    out_->range_warning_at = -1;
  } else if (out_->range_warning_at >= 0) {  // it moves down with the warnings before it
    const auto at = static_cast<size_t>(out_->range_warning_at);
    size_t before = 0;
    for (const auto& [first, end] : pass1_.tentative_warnings) {
      if (first < at) before += std::min(end, at) - first;
    }
    out_->range_warning_at -= static_cast<int64_t>(before);
  }
  EraseRanges(&out_->warnings, pass1_.tentative_warnings);
  pass1_.tentative_hits.clear();
  pass1_.tentative_headroom.clear();
  pass1_.tentative_warnings.clear();
  pass1_.tentative_range_warning = false;
}

void RankScanner::Restart() {
  *out_ = initial_;
  out_->texts = std::make_shared<detail::TextArena>();  // not the first attempt's
  pass1_ = Pass1();
}

Status RankScanner::Entry(const DumpFile& file, const DumpEntry& entry,
                          std::span<const DumpRow> rows) {
  RankScan* rank = out_;
  const auto e = static_cast<uint32_t>(&entry - file.entries.data());
  const std::string_view name = entry.name;
  if (!pass1_.saw_api && !detail::IsModuleEntry(name) && !detail::IsParametersGradEntry(name)) {
    RetractTentative();
    pass1_.saw_api = true;
  }
  ReserveHeadroom(e, entry);
  for (const DumpRow& row : rows) {
    if (!row.is_tensor) continue;
    ++rank->tensors;
    pass1_.saw_stats = pass1_.saw_stats || !row.stats[kStatMax].is_none();
  }
  ScanTensor& t = pass1_.t;
  auto read_row = [&](size_t i) { t = detail::TensorOfRow(file, rows[i], context_, std::move(t)); };
  if (detail::IsParametersGradEntry(name)) {
    const std::string layer = detail::ModuleOfEntry(name);
    for (size_t i = 0; i < rows.size(); ++i) {
      read_row(i);
      WatchGradient(*rank, name, rows[i], t);
      WatchTensor(*rank, name, t);
      AddHeadroom(entry, rows[i], layer, t);
    }
    return Status::Ok();  // no op of the candidate walk
  }
  const bool module = detail::IsModuleEntry(name);
  const std::string layer = detail::LayerOf(name, construct_.ModulePath(name));
  const bool activation = !detail::IsBackwardEntry(name) && detail::IsActivationOp(name);
  EntryFacts op;
  op.entry = e;
  op.module = module;
  pass1_.from_files.clear();
  for (size_t i = 0; i < rows.size(); ++i) {
    const DumpRow& row = rows[i];
    read_row(i);
    if (row.state == RowState::kParameters) {
      const std::string key = detail::ParameterKey(name, row.name);
      if (pass1_.seen_params.insert(key).second) {
        ParamSnapshot state;
        state.op_name = name;
        state.tensor = t;
        if (row.md5.has_value()) state.md5 = row.md5;  // dropped in Finish unless md5 mode
        state.trainable = !(row.requires_grad.kind() == PyValue::Kind::kStr &&
                            file.Text(row.requires_grad.text_id()) == "False");
        rank->params.emplace(key, std::move(state));
        rank->param_order.push_back(key);
        WatchTensor(*rank, name, t);
        AddHeadroom(entry, row, detail::ModuleOfEntry(name), t);
      }
    } else if (!MayRepeatApiTensor(entry, row)) {
      WatchTensor(*rank, name, t);
      AddHeadroom(entry, row, layer, t);
      if (activation && row.state == RowState::kOutput) WatchActivation(*rank, name, t);
    } else if (!pass1_.saw_api) {
      Tentatively([&] {
        WatchTensor(*rank, name, t);
        AddHeadroom(entry, row, layer, t);
        if (activation && row.state == RowState::kOutput) WatchActivation(*rank, name, t);
      });
    }
    if (row.state == RowState::kOutput) {
      op.out_bad = op.out_bad || t.nonfinite;
    } else if (row.state == RowState::kInput || row.state == RowState::kParameters) {
      op.in_bad = op.in_bad || t.nonfinite;
      op.in_bad_tensor = op.in_bad_tensor || (t.is_tensor && t.nonfinite);
    }
    if (!t.file.empty()) pass1_.from_files.emplace_back(i, t);
  }
  if (detail::IsCommunicationEntry(name)) {
    op.comm = true;
    CommNode node;
    node.rank_slot = slot_;
    node.entry = e;
    node.op_name = name;
    node.input_bad = op.in_bad;
    node.output_bad = op.out_bad;
    op.comm_node = static_cast<int>(rank->comm_nodes.size());
    rank->comm_nodes.push_back(std::move(node));
  } else if (detail::IsIgnoredEntry(name)) {
    op.ignored = true;
  }
  // Whether pass 3 may make a node of this op, as it decides (a communication op's direction,
  // which decides whether its input counts, is not known yet): the node is made now.
  bool node_wanted = false;
  if (op.comm) {
    node_wanted = op.in_bad || op.out_bad;
    pass1_.explained = pass1_.explained || op.out_bad;
  } else if (op.ignored) {
    pass1_.explained = pass1_.explained || op.out_bad;
  } else {
    node_wanted = (!op.in_bad && op.out_bad) || (op.in_bad_tensor && !pass1_.explained);
    pass1_.explained = pass1_.explained || op.out_bad || op.in_bad_tensor;
  }
  if (node_wanted) {
    AnomalyNode node;
    node.scope = rank->scope;
    node.step = rank->step;
    node.rank_folder = rank->rank_folder;
    node.rank = rank->rank;
    node.op_name = name;
    node.entry_index = e;
    node.module_path = construct_.ModulePath(name);
    if (const auto* lines = stack_.Find(name)) node.stack = *lines;
    static const detail::RowReadContext kWithoutFiles = [] {
      detail::RowReadContext context;
      context.read_files = false;
      return context;
    }();
    auto kept = pass1_.from_files.begin();
    for (size_t i = 0; i < rows.size(); ++i) {
      const RowState state = rows[i].state;
      const bool from_file = kept != pass1_.from_files.end() && kept->first == i;
      std::vector<ScanTensor>* to = state == RowState::kOutput ? &node.outputs
                                    : state == RowState::kInput || state == RowState::kParameters
                                        ? &node.inputs
                                        : nullptr;
      if (to != nullptr) {
        to->push_back(from_file ? kept->second : detail::TensorOfRow(file, rows[i], kWithoutFiles));
      }
      if (from_file) ++kept;
    }
    pass1_.nodes.push_back(std::move(node));
  }
  pass1_.ops.push_back(op);
  return Status::Ok();
}

Status RankScanner::Scan() {
  if (!location_.stack_json.empty()) {
    NUMPROBE_ASSIGN_OR_RETURN(stack_, ReadStackJson(location_.stack_json));
  }
  if (!location_.construct_json.empty()) {
    NUMPROBE_ASSIGN_OR_RETURN(construct_, ReadConstructJson(location_.construct_json));
  }
  context_.location = &location_;
  context_.last_shape = &last_shape_;
  context_.read_files = options_.read_tensor_files;
  context_.files_read = &out_->tensor_files_read;
  context_.files_missing = &out_->files_missing;
  context_.warnings = &out_->warnings;
  context_.max_memory = EffectiveMaxMemory(options_.max_memory);
  std::error_code size_error;
  file_bytes_ = std::filesystem::file_size(location_.dump_json, size_error);
  if (size_error) file_bytes_ = 0;
  NUMPROBE_ASSIGN_OR_RETURN(
      DumpFile file, StreamDumpJson(
                         location_.dump_json,
                         [this](const DumpFile& f, const DumpEntry& entry,
                                std::span<const DumpRow> rows) { return Entry(f, entry, rows); },
                         [this] { Restart(); }));
  return Finish(file);
}

Status RankScanner::Finish(const DumpFile& file) {
  RankScan* rank = out_;
  rank->task = file.task;
  rank->framework = file.framework;
  rank->level = file.level;
  // md5 dumps carry Max/Min/Mean/Norm beside the checksum (msprobe's summary_mode md5); only
  // checksums without any statistics (every file) leave no finiteness information.
  rank->checksums_only = file.has_md5 && !pass1_.saw_stats;
  rank->entries = static_cast<int64_t>(file.entries.size());
  rank->file_texts = file.stored_texts();
  if (!file.has_md5) {  // a parameter's md5 is msprobe's CRC of a value: no checksum
    for (auto& [key, param] : rank->params) param.md5.reset();
  }
  const std::vector<EntryFacts>& ops = pass1_.ops;

  // Pass 2: the JSON of the communication ops (peers, groups) and of the likely births, read in
  // one more streaming pass.
  std::unordered_set<std::string> wanted;
  for (const EntryFacts& op : ops) {
    if (op.comm || (!op.ignored && !op.in_bad && op.out_bad)) {
      wanted.emplace(file.entries[op.entry].name);
    }
  }
  std::unordered_map<std::string, std::string> raw;
  auto extract = [&](const std::unordered_set<std::string>& names) -> Status {
    if (names.empty()) return Status::Ok();
    auto buffer = Buffer::MapFile(location_.dump_json);
    if (!buffer) return buffer.error().WithContext(location_.dump_json.string());
    const auto bytes = (*buffer)->bytes();
    auto extracted = detail::ExtractEntries(
        std::span<const char>(reinterpret_cast<const char*>(bytes.data()), bytes.size()), names);
    if (!extracted) return extracted.error().WithContext(location_.dump_json.string());
    for (auto& [key, text] : *extracted) raw[key] = std::move(text);
    return Status::Ok();
  };
  NUMPROBE_RETURN_IF_ERROR(extract(wanted));
  for (CommNode& node : rank->comm_nodes) {
    const auto it = raw.find(node.op_name);
    if (it != raw.end()) detail::DescribeCommNode(it->second, rank->rank, &node);
  }

  // Pass 3: births on this rank, in execution order.
  Status missing_node;
  auto make_node = [&](const EntryFacts& op, AnomalyKind kind) {
    const auto it = std::lower_bound(
        pass1_.nodes.begin(), pass1_.nodes.end(), op.entry,
        [](const AnomalyNode& n, uint32_t entry) { return n.entry_index < entry; });
    AnomalyNode node;
    if (it != pass1_.nodes.end() && it->entry_index == op.entry) {
      node = *it;
    } else if (missing_node.ok()) {  // pass 1's choice of nodes missed one pass 3 makes
      missing_node = Status::Internal(
          fmt::format("scan: no node kept for entry {}", file.entries[op.entry].name));
    }
    node.kind = kind;
    return node;
  };
  bool explained = false;
  int segment = 0;
  for (const EntryFacts& op : ops) {
    if (op.comm) {
      const CommNode& node = rank->comm_nodes[static_cast<size_t>(op.comm_node)];
      // A receiver's input is its receive buffer: whatever it held does not matter.
      const bool in_bad = node.direction != CommDirection::kDst && node.input_bad;
      if (in_bad && !explained) {
        rank->births.push_back(make_node(op, AnomalyKind::kInheritedInput));
        rank->birth_segment.push_back(segment);
        explained = true;
      }
      if (node.output_bad) {
        rank->comm_anomalies.emplace_back(op.comm_node, make_node(op, AnomalyKind::kCommunication));
        explained = true;
      }
      ++segment;
      continue;
    }
    if (op.ignored) {
      explained = explained || op.out_bad;
      continue;
    }
    if (!op.in_bad && op.out_bad) {
      explained = true;
      const std::string_view name = file.entries[op.entry].name;
      if (op.module) {
        // A module whose birth happened in one of its APIs: the API is the birth.
        const bool inner =
            std::any_of(rank->births.begin(), rank->births.end(), [&](const auto& b) {
              return std::find(b.module_path.begin(), b.module_path.end(), name) !=
                     b.module_path.end();
            });
        if (inner) continue;
      }
      rank->births.push_back(make_node(op, AnomalyKind::kCompute));
      rank->birth_segment.push_back(segment);
    } else if (op.in_bad_tensor && !explained) {
      // (A NaN/Inf scalar argument, as in masked_fill(-inf), is not inherited data.)
      rank->births.push_back(make_node(op, AnomalyKind::kInheritedInput));
      rank->birth_segment.push_back(segment);
      explained = true;
    } else if (op.out_bad) {
      explained = true;
    }
  }
  // The JSON of births not read yet (an op whose inputs were already bad).
  std::unordered_set<std::string> missing;
  for (const AnomalyNode& b : rank->births) {
    if (raw.count(b.op_name) == 0) missing.insert(b.op_name);
  }
  NUMPROBE_RETURN_IF_ERROR(extract(missing));
  for (AnomalyNode& b : rank->births) b.raw_entry = raw[b.op_name];
  for (auto& [id, node] : rank->comm_anomalies) node.raw_entry = raw[node.op_name];
  return missing_node;
}

// Relative closeness of two statistics, as allclose on values.
bool StatClose(double now, double before, double rtol, double atol) {
  if (std::isnan(now) || std::isnan(before)) return false;
  return now == before || std::fabs(now - before) <= atol + rtol * std::fabs(before);
}

Status ValidateOptions(const ScanOptions& options) {
  for (auto it = options.targets.begin(); it != options.targets.end(); ++it) {
    const DType t = *it;
    if (!IsFloating(t) || Traits(t).bits > 16) {
      return Status::InvalidArgument(
          fmt::format("headroom target {} is not a 16- or 8-bit float type", Name(t)));
    }
    if (std::find(options.targets.begin(), it, t) != it) {
      return Status::InvalidArgument(
          fmt::format("headroom target {} is named twice", HeadroomTargetName(t)));
    }
  }
  const ScanThresholds& th = options.thresholds;
  if (th.act_range && th.act_range->first > th.act_range->second) {
    return Status::InvalidArgument("activation range start is above its end");
  }
  for (double v :
       {th.grad_norm_min, th.grad_norm_max, th.weight_rtol, th.weight_atol, th.update_ratio_max,
        th.update_ratio_min, th.update_epsilon, th.tensor_abs_max}) {
    if (std::isnan(v) || v < 0) {
      return Status::InvalidArgument("watchpoint thresholds must be non-negative numbers");
    }
  }
  return Status::Ok();
}

}  // namespace

namespace detail {

size_t ScanPlan::StepBegin(size_t unit) const {
  size_t begin = 0;
  for (const size_t end : step_end) {
    if (unit < end) return begin;
    begin = end;
  }
  return begin;
}

Result<ScanPlan> PlanScan(const std::filesystem::path& path, const ScanOptions& options) {
  NUMPROBE_RETURN_IF_ERROR(ValidateOptions(options));
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return Status::NotFound(path.string() + ": no such file or folder");
  }
  auto pairs = DiscoverDumpPairs(path, path);
  if (!pairs) {
    if (pairs.error().code() == ErrorCode::kNotFound) {
      return Status::NotFound(path.string() +
                              ": no dump.json, rank*/proc* or step* folders to scan");
    }
    return pairs.error();
  }
  ScanPlan plan;
  plan.dump = path.string();
  // Pairs come in scope order, ranks by number within a scope.
  for (DumpPair& pair : *pairs) {
    if (!pair.target.has_value() || pair.target->dump_json.empty()) continue;
    if (!plan.units.empty() && plan.units.back().scope != pair.scope) {
      plan.step_end.push_back(plan.units.size());
    }
    plan.units.push_back(std::move(pair));
  }
  if (plan.units.empty()) return Status::NotFound(path.string() + ": no dump.json to scan");
  plan.step_end.push_back(plan.units.size());
  return plan;
}

Result<RankScan> ScanUnit(const ScanPlan& plan, size_t unit, const ScanOptions& options) {
  const DumpPair& pair = plan.units[unit];
  const size_t slot = unit - plan.StepBegin(unit);
  const DumpLocation& location = *pair.target;
  const std::string& scope = pair.scope;
  RankScan rank;
  rank.scope = scope;
  std::optional<int64_t> step = ScopeStep(scope);
  if (!step) step = ScopeStep(location.dir.parent_path().filename().string());
  rank.step = step.value_or(-1);
  const size_t slash = scope.rfind('/');
  rank.prefix =
      ScopeStep(scope) ? (slash == std::string::npos ? "" : scope.substr(0, slash)) : scope;
  rank.rank_folder = pair.rank.empty() ? location.dir.filename().string() : pair.rank;
  // "rank" alone (no number) is rank 0.
  rank.rank = rank.rank_folder == "rank"
                  ? 0
                  : FolderNumber(rank.rank_folder, "rank").value_or(static_cast<int64_t>(slot));
  RankScanner scanner(options, location, static_cast<int>(slot), &rank);
  NUMPROBE_RETURN_IF_ERROR(scanner.Scan());
  return rank;
}

ScanAssembler::ScanAssembler(const ScanPlan& plan, const ScanOptions& options) : options_(options) {
  report_.dump = plan.dump;
  report_.options = options;
}

namespace {

// Moves `from`'s items to the end of `to`, leaving `from` empty. The first rank's vector is taken
// whole: a 1,000,000-entry dump's 3,000,000 headroom rows (480 MB) grown item by item were a
// tenth of scan's time, in copies and in page faults on each larger buffer.
template <typename T>
void AppendMoved(std::vector<T>* to, std::vector<T>* from) {
  if (to->empty()) {
    to->swap(*from);
  } else {  // insert grows the buffer geometrically, as push_back would
    to->insert(to->end(), std::make_move_iterator(from->begin()),
               std::make_move_iterator(from->end()));
  }
  from->clear();
}

}  // namespace

void ScanAssembler::AddStep(std::vector<RankScan> ranks) {
  if (ranks.empty()) return;
  report_.scopes.push_back(ranks.front().scope);
  report_.rank_folders += static_cast<int64_t>(ranks.size());
  std::vector<CommNode> nodes;  // of this step
  std::vector<int64_t> rank_numbers;
  std::vector<std::vector<int>> per_rank;  // each rank's nodes, in order
  for (RankScan& r : ranks) {
    rank_numbers.push_back(r.rank);
    ranks_seen_.insert(r.rank);
    if (report_.task.empty()) {
      report_.task = r.task;
      report_.framework = r.framework;
      report_.level = r.level;
    }
    report_.md5_mode = (scanned_a_file_ ? report_.md5_mode : true) && r.checksums_only;
    scanned_a_file_ = true;
    report_.entries += r.entries;
    report_.tensors += r.tensors;
    report_.tensor_files_read += r.tensor_files_read;
    files_missing_ += r.files_missing;
    for (size_t w = 0; w <= r.warnings.size(); ++w) {
      if (r.range_warning_at == static_cast<int64_t>(w) && !warned_range_needs_files_) {
        report_.warnings.emplace_back(kRangeNeedsFilesWarning);
        warned_range_needs_files_ = true;
      }
      if (w < r.warnings.size()) report_.warnings.push_back(std::move(r.warnings[w]));
    }
    r.warnings.clear();
    AppendMoved(&report_.hits, &r.hits);
    if (!r.headroom.empty()) {
      report_.headroom_texts.push_back(r.texts);
      if (r.file_texts != nullptr) report_.headroom_texts.push_back(r.file_texts);
      // The rank's rows are of its unit 0: numbered here, where the report's units are.
      const auto unit = static_cast<uint32_t>(report_.headroom_units.size());
      report_.headroom_units.push_back({r.scope, r.step, r.rank_folder, r.rank});
      const size_t first = report_.headroom.size();
      AppendMoved(&report_.headroom, &r.headroom);
      if (unit != 0) {
        for (size_t i = first; i < report_.headroom.size(); ++i) report_.headroom[i].unit = unit;
      }
    }
    std::vector<int> ids;
    ids.reserve(r.comm_nodes.size());
    for (CommNode& n : r.comm_nodes) {
      ids.push_back(static_cast<int>(nodes.size()));
      nodes.push_back(std::move(n));
    }
    r.comm_nodes.clear();
    per_rank.push_back(std::move(ids));
  }
  report_.ranks = static_cast<int64_t>(ranks_seen_.size());
  OrderCommNodes(rank_numbers, per_rank, &nodes);

  // Time of each birth: between the levels of the communication ops around it.
  for (size_t i = 0; i < ranks.size(); ++i) {
    RankScan& r = ranks[i];
    const std::vector<int>& ids = per_rank[i];
    for (size_t b = 0; b < r.births.size(); ++b) {
      const int segment = r.birth_segment[b];
      double time = -0.5;
      if (static_cast<size_t>(segment) < ids.size()) {
        time = nodes[static_cast<size_t>(ids[static_cast<size_t>(segment)])].level - 0.5;
      } else if (!ids.empty()) {
        time = nodes[static_cast<size_t>(ids.back())].level + 0.5;
      }
      r.births[b].time = time;
      report_.anomalies.push_back(std::move(r.births[b]));
    }
  }
  // Communication births: no sender of the instance had a bad input.
  std::map<int, bool> instance_input_bad;
  for (const CommNode& n : nodes) {
    bool& bad = instance_input_bad[n.instance];
    bad = bad || (n.direction != CommDirection::kDst && n.input_bad);
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    RankScan& r = ranks[i];
    for (auto& [local, node] : r.comm_anomalies) {
      const CommNode& n = nodes[static_cast<size_t>(per_rank[i][static_cast<size_t>(local)])];
      if (instance_input_bad[n.instance]) continue;
      node.time = n.level;
      report_.anomalies.push_back(std::move(node));
    }
    r.comm_anomalies.clear();
    r.births.clear();
    r.birth_segment.clear();
  }
  for (RankScan& r : ranks) done_ranks_.push_back(std::move(r));
}

void ScanAssembler::CheckWeights() {
  const bool any = Watching(options_, Watchpoint::kWeightNotChanged) ||
                   Watching(options_, Watchpoint::kWeightChangeTooLarge) ||
                   Watching(options_, Watchpoint::kWeightChangeTooSmall);
  if (!any) return;
  const ScanThresholds& th = options_.thresholds;
  // Steps of each rank, in step order.
  std::map<std::pair<std::string, std::string>, std::vector<const RankScan*>> series;
  for (const RankScan& r : done_ranks_) series[{r.prefix, r.rank_folder}].push_back(&r);
  for (auto& [key, steps] : series) {
    std::stable_sort(steps.begin(), steps.end(),
                     [](const RankScan* a, const RankScan* b) { return a->step < b->step; });
    for (size_t i = 1; i < steps.size(); ++i) {
      const RankScan& prev = *steps[i - 1];
      const RankScan& cur = *steps[i];
      if (prev.step < 0 || prev.step == cur.step) continue;
      for (const std::string& param : cur.param_order) {
        const auto p_it = prev.params.find(param);
        if (p_it == prev.params.end()) continue;
        const ParamSnapshot& p = p_it->second;
        const ParamSnapshot& c = cur.params.at(param);
        if (!c.trainable || !c.tensor.is_tensor || c.tensor.shape != p.tensor.shape) continue;
        if (c.tensor.nonfinite || p.tensor.nonfinite) continue;
        const std::string where = fmt::format("step {} -> {}", prev.step, cur.step);
        bool unchanged = false;
        bool exact = false;
        std::optional<double> ratio;        // exact update ratio
        std::optional<double> ratio_floor;  // a lower bound from statistics
        if (!c.tensor.file.empty() && !p.tensor.file.empty()) {
          auto a = detail::LoadTensorFile(c.tensor.file, EffectiveMaxMemory(options_.max_memory));
          auto b = detail::LoadTensorFile(p.tensor.file, EffectiveMaxMemory(options_.max_memory));
          if (a && b) {
            auto facts =
                detail::CompareUpdate(*a, *b, th.weight_rtol, th.weight_atol, th.update_epsilon);
            if (facts) {
              exact = true;
              unchanged = facts->allclose;
              ratio = facts->ratio;
            }
          } else {
            report_.warnings.push_back((a ? b.error() : a.error()).message());
          }
        }
        if (!exact && c.md5.has_value() && p.md5.has_value()) {
          exact = true;
          unchanged = *c.md5 == *p.md5;
        } else if (!exact) {
          const ScanTensor& ct = c.tensor;
          const ScanTensor& pt = p.tensor;
          if (!ct.has_max || !ct.has_min || !pt.has_max || !pt.has_min) continue;
          unchanged = StatClose(ct.max, pt.max, th.weight_rtol, th.weight_atol) &&
                      StatClose(ct.min, pt.min, th.weight_rtol, th.weight_atol) &&
                      (!ct.has_mean || !pt.has_mean ||
                       StatClose(ct.mean, pt.mean, th.weight_rtol, th.weight_atol)) &&
                      (!ct.has_norm || !pt.has_norm ||
                       StatClose(ct.norm, pt.norm, th.weight_rtol, th.weight_atol));
          // mean|dw| >= max(|d mean|, |d norm| / n) and mean|w| <= norm / sqrt(n).
          if (ct.has_mean && pt.has_mean && ct.has_norm && pt.has_norm && ct.count > 0) {
            const auto n = static_cast<double>(ct.count);
            const double floor_diff =
                std::max(std::fabs(ct.mean - pt.mean), std::fabs(ct.norm - pt.norm) / n);
            ratio_floor = floor_diff / (pt.norm / std::sqrt(n) + th.update_epsilon);
          }
        }
        if (unchanged) {
          if (Watching(options_, Watchpoint::kWeightNotChanged)) {
            AddHit(&report_.hits, Watchpoint::kWeightNotChanged, cur, param, c.op_name,
                   fmt::format("allclose(w, w_prev, rtol={}, atol={})", Num(th.weight_rtol),
                               Num(th.weight_atol)),
                   ratio.value_or(0), th.weight_rtol, exact,
                   exact ? where : where + " (statistics equal)");
          }
          continue;
        }
        const std::optional<double> large = ratio ? ratio : ratio_floor;
        if (large && *large > th.update_ratio_max &&
            Watching(options_, Watchpoint::kWeightChangeTooLarge)) {
          AddHit(&report_.hits, Watchpoint::kWeightChangeTooLarge, cur, param, c.op_name,
                 fmt::format("update ratio > {}", Num(th.update_ratio_max)), *large,
                 th.update_ratio_max, ratio.has_value(),
                 ratio ? where : where + " (lower bound from statistics)");
        }
        if (ratio && *ratio < th.update_ratio_min &&
            Watching(options_, Watchpoint::kWeightChangeTooSmall)) {
          AddHit(&report_.hits, Watchpoint::kWeightChangeTooSmall, cur, param, c.op_name,
                 fmt::format("update ratio < {}", Num(th.update_ratio_min)), *ratio,
                 th.update_ratio_min, true, where);
        }
      }
    }
  }
}

ScanReport ScanAssembler::Finish() {
  CheckWeights();
  // Births in time order: step, communication time, position, rank.
  // Births from finite inputs first: a tensor that was already non-finite when it entered (NaN
  // data, or an -inf attention mask built outside the dumped region) is the first anomaly only
  // when no op anywhere made NaN/Inf out of finite inputs. Then steps by number (MindSpore's
  // graph/ and pynative/ parts of one step sort together), communication time, position, rank.
  auto key = [](const AnomalyNode& n) {
    return std::make_tuple(n.kind == AnomalyKind::kInheritedInput, n.step, n.scope, n.time,
                           n.entry_index, n.rank);
  };
  std::stable_sort(report_.anomalies.begin(), report_.anomalies.end(),
                   [&](const AnomalyNode& a, const AnomalyNode& b) { return key(a) < key(b); });
  report_.headroom_summary = detail::SummarizeHeadroom(report_.headroom, options_.targets);
  if (files_missing_ > 0) {
    report_.warnings.push_back(fmt::format(
        "{} tensor file{} named in dump.json {} missing; statistics taken from dump.json",
        files_missing_, files_missing_ == 1 ? "" : "s", files_missing_ == 1 ? "is" : "are"));
  }
  return std::move(report_);
}

}  // namespace detail

Result<ScanReport> ScanDump(const std::filesystem::path& path, const ScanOptions& options) {
  NUMPROBE_ASSIGN_OR_RETURN(const detail::ScanPlan plan, detail::PlanScan(path, options));
  detail::ScanAssembler assembler(plan, options);
  size_t begin = 0;
  for (const size_t end : plan.step_end) {
    std::vector<RankScan> step;
    for (size_t u = begin; u < end; ++u) {
      NUMPROBE_ASSIGN_OR_RETURN(RankScan rank, detail::ScanUnit(plan, u, options));
      step.push_back(std::move(rank));
    }
    assembler.AddStep(std::move(step));
    begin = end;
  }
  return assembler.Finish();
}

}  // namespace numprobe
