// Dumper: records ops into msprobe's dump tree with a crash-safe journal.
#include "numprobe/dumper.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_set>
#include <utility>

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include "numprobe/baseline_judge.h"
#include "numprobe/casts.h"
#include "numprobe/float_convert.h"
#include "numprobe/stats.h"

#include "capture/copy_buffer_pool.h"
#include "capture/tensor_file_writer.h"
#include "core/atomic_file.h"
#include "core/checked.h"
#include "core/crc32.h"
#include "core/process_id.h"
#include "msprobe/dump_journal.h"
#include "msprobe/dump_tables.h"

namespace numprobe {

DumpValue DumpValue::Plain(std::string type, JsonValue value) {
  DumpValue v;
  v.kind_ = Kind::kPlain;
  v.text_ = std::move(type);
  v.json_ = std::move(value);
  return v;
}

DumpValue DumpValue::Tensor(TensorArg tensor) {
  DumpValue v;
  v.kind_ = Kind::kTensor;
  v.tensor_ = std::make_shared<const TensorArg>(std::move(tensor));
  return v;
}

DumpValue DumpValue::List(Items items) {
  DumpValue v;
  v.kind_ = Kind::kList;
  v.items_ = std::move(items);
  return v;
}

DumpValue DumpValue::Dict(Members members) {
  DumpValue v;
  v.kind_ = Kind::kDict;
  v.members_ = std::move(members);
  return v;
}

DumpValue DumpValue::Literal(JsonValue value) {
  DumpValue v;
  v.kind_ = Kind::kLiteral;
  v.json_ = std::move(value);
  return v;
}

namespace {

namespace fs = std::filesystem;

constexpr int kMaxNesting = 64;

// An incremental dump's record of what it judged, beside dump.json.
constexpr std::string_view kIncrementalFileName = "incremental.json";

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool IsModuleName(std::string_view name) { return name.rfind("Module.", 0) == 0; }

// Backward entries and parameter gradients follow the selection of their forward counterpart.
bool IsBackwardName(std::string_view name) {
  return EndsWith(name, ".backward") || name.find(".backward.") != std::string_view::npos ||
         name.find(".parameters_grad.") != std::string_view::npos;
}

std::string ForwardCounterpart(std::string_view name) {
  std::string out(name);
  const size_t pos = out.rfind("backward");
  if (pos != std::string::npos) out.replace(pos, 8, "forward");
  return out;
}

// An object of the given members, moved in: MakeObject({{key, value}, ...}) would copy every value
// (a whole tree) out of its initializer list.
template <typename... Members>
JsonValue ObjectOf(Members&&... members) {
  JsonValue::Object out;
  out.reserve(sizeof...(members));
  (out.push_back(std::forward<Members>(members)), ...);
  return JsonValue::MakeObject(std::move(out));
}

// "Module.fc1.Linear." of "Module.fc1.Linear.forward.0" or "...parameters_grad.0".
std::string ModulePrefix(std::string_view name) {
  for (std::string_view marker : {".forward.", ".backward.", ".parameters_grad."}) {
    const size_t pos = name.rfind(marker);
    if (pos != std::string_view::npos) return std::string(name.substr(0, pos + 1));
  }
  return std::string(name);
}

// The value of the single element of `view` as msprobe writes it (0-d tensors: all four
// statistics equal the value).
JsonValue ScalarJson(const TensorView& view) {
  const std::byte* p = view.first();
  return Dispatch(view.dtype, [&]<DType D>() -> JsonValue {
    using T = typename StorageType<D>::type;
    T value;
    std::memcpy(&value, p, sizeof(T));
    if constexpr (D == DType::kBool) {
      return JsonValue::Bool(value != 0);
    } else if constexpr (D == DType::kF16) {
      return JsonValue::Double(F16ToF32(value));
    } else if constexpr (D == DType::kBF16) {
      return JsonValue::Double(BF16ToF32(value));
    } else if constexpr (D == DType::kF32 || D == DType::kF64) {
      return JsonValue::Double(static_cast<double>(value));
    } else if constexpr (D == DType::kU64) {
      if (value > static_cast<uint64_t>(INT64_MAX))
        return JsonValue::Double(static_cast<double>(value));
      return JsonValue::Int(static_cast<int64_t>(value));
    } else if constexpr (std::is_integral_v<T> && !IsFloat8(D)) {
      return JsonValue::Int(static_cast<int64_t>(value));
    } else {
      return {};  // fp8 and complex are handled by the caller
    }
  });
}

// An integer tensor's max or min (exact in a double below 2^53, which the caller checks).
JsonValue IntJson(double v) {
  const auto whole = WholeInt64(v);
  return whole ? JsonValue::Int(*whole) : JsonValue::Double(v);
}

// The rounding of a reported mean/norm: the tensor's own dtype (torch computes them in it) or,
// with precision "high", fp32 for the 16-bit types and double for the rest.
double ReportRound(DType dtype, StatsPrecision precision, double v) {
  if (precision == StatsPrecision::kHigh) {
    return (dtype == DType::kF16 || dtype == DType::kBF16) ? RoundToDType(DType::kF32, v) : v;
  }
  return dtype == DType::kF64 ? v : RoundToDType(dtype, v);
}

struct LeafStats {
  std::vector<JsonValue> values;  // Max, Min, Mean, Norm
  bool nonfinite = false;
};

Result<LeafStats> ComputeLeafStats(const TensorView& view, StatsPrecision precision) {
  LeafStats out;
  out.values.assign(4, JsonValue());
  const DType dt = view.dtype;
  if (view.data == nullptr || view.numel() == 0 || IsFloat8(dt)) return out;
  const bool zero_dim = view.shape.empty();
  if (zero_dim && !IsComplex(dt)) {
    JsonValue v = ScalarJson(view);
    if (v.kind() == JsonValue::Kind::kDouble && !std::isfinite(v.double_value())) {
      out.nonfinite = true;
    }
    out.values.assign(4, v);
    return out;
  }
  NUMPROBE_ASSIGN_OR_RETURN(TensorStats s, ComputeStats(view));
  out.nonfinite = s.nan_count + s.pos_inf_count + s.neg_inf_count > 0;
  if (dt == DType::kBool) {
    out.values[0] = JsonValue::Bool(s.max != 0);
    out.values[1] = JsonValue::Bool(s.min != 0);
  } else if (IsInteger(dt)) {
    if ((dt == DType::kI64 || dt == DType::kU64) &&
        (std::fabs(s.max) >= 9007199254740992.0 || std::fabs(s.min) >= 9007199254740992.0)) {
      if (dt == DType::kI64) {
        const auto [hi, lo] = *ExactIntegerExtremes<int64_t>(view);  // non-empty, has data
        out.values[0] = JsonValue::Int(hi);
        out.values[1] = JsonValue::Int(lo);
      } else {
        const auto [hi, lo] = *ExactIntegerExtremes<uint64_t>(view);
        const auto json = [](uint64_t v) {
          return v > static_cast<uint64_t>(INT64_MAX) ? JsonValue::Double(static_cast<double>(v))
                                                      : JsonValue::Int(static_cast<int64_t>(v));
        };
        out.values[0] = json(hi);
        out.values[1] = json(lo);
      }
    } else {
      out.values[0] = IntJson(s.max);
      out.values[1] = IntJson(s.min);
    }
  } else if (IsComplex(dt)) {
    // msprobe: Max/Min/Mean of |x| (numpy, double), no Norm.
    out.values[0] = JsonValue::Double(s.max);
    out.values[1] = JsonValue::Double(s.min);
    out.values[2] = JsonValue::Double(s.mean);
  } else {
    out.values[0] = JsonValue::Double(s.max);
    out.values[1] = JsonValue::Double(s.min);
    // torch's mean is sum / n with the sum already rounded to the dtype (a second rounding).
    double mean = s.mean;
    if (precision == StatsPrecision::kLow && dt != DType::kF64) {
      const auto n = static_cast<double>(s.count);
      mean = RoundToDType(dt, s.mean * n) / n;
    }
    out.values[2] = JsonValue::Double(ReportRound(dt, precision, mean));
    out.values[3] = JsonValue::Double(ReportRound(dt, precision, s.norm));
  }
  return out;
}

// The member a pending tensor leaf carries until ResolvePending fills its statistics, and the one
// a leaf whose data comes then too carries (its data_name is kept only if the data comes).
constexpr std::string_view kPendingMarker = "\x01pending_slot";
constexpr std::string_view kPendingDataMarker = "\x01pending_data";

// Removes the member `key` of an object; true when it had one.
bool EraseMember(JsonValue::Object& members, std::string_view key) {
  return std::erase_if(members, [key](const auto& m) { return m.first == key; }) != 0;
}

// Fills the statistics of every pending leaf under `v` from `slots`, and hands each leaf whose data
// was pending to `with_data` (its md5 and file).
template <typename WithData>
Status FillPending(JsonValue& v, const std::vector<PendingValues>& slots, const WithData& with_data,
                   int depth) {
  if (depth > 64) return Status::Ok();
  if (v.is_array()) {
    for (JsonValue& item : v.array())
      NUMPROBE_RETURN_IF_ERROR(FillPending(item, slots, with_data, depth + 1));
    return Status::Ok();
  }
  if (!v.is_object()) return Status::Ok();
  JsonValue::Object& members = v.object();
  const auto marker = std::find_if(members.begin(), members.end(),
                                   [](const auto& m) { return m.first == kPendingMarker; });
  if (marker == members.end()) {
    for (auto& member : members)
      NUMPROBE_RETURN_IF_ERROR(FillPending(member.second, slots, with_data, depth + 1));
    return Status::Ok();
  }
  const int64_t slot = marker->second.int_value();
  members.erase(marker);
  const bool data_pending = EraseMember(members, kPendingDataMarker);
  if (slot < 0 || static_cast<uint64_t>(slot) >= slots.size()) {
    if (data_pending) EraseMember(members, "data_name");
    return Status::InvalidArgument("ResolvePending: no statistics for slot " +
                                   std::to_string(slot));
  }
  static constexpr const char* kStatNames[] = {"Max", "Min", "Mean", "Norm"};
  const PendingValues& values = slots[static_cast<size_t>(slot)];
  for (size_t i = 0; i < 4; ++i) {
    v.Set(kStatNames[i], i < values.stats.size() ? values.stats[i] : JsonValue());
  }
  if (!data_pending) return Status::Ok();
  if (values.data.data == nullptr) {
    EraseMember(v.object(), "data_name");  // no data came: no file
    return Status::Ok();
  }
  Status st = with_data(v, values.data);
  if (!st.ok()) EraseMember(v.object(), "data_name");
  return st;
}

// Removes the pending markers (the statistics stay null, and a leaf whose data never came loses
// its data_name): records written without ResolvePending.
void DropPending(JsonValue& v, int depth) {
  if (depth > 64) return;
  if (v.is_array()) {
    for (JsonValue& item : v.array()) DropPending(item, depth + 1);
    return;
  }
  if (!v.is_object()) return;
  JsonValue::Object& members = v.object();
  if (EraseMember(members, kPendingDataMarker)) EraseMember(members, "data_name");
  EraseMember(members, kPendingMarker);
  for (auto& member : members) DropPending(member.second, depth + 1);
}

bool PrecomputedNonFinite(const std::vector<JsonValue>& values) {
  for (const JsonValue& v : values) {
    if (v.kind() == JsonValue::Kind::kDouble && !std::isfinite(v.double_value())) return true;
  }
  return false;
}

// msprobe's "md5" summary: zlib.crc32 of the tensor's bytes in C order, 8 hex digits.
Result<std::string> Crc32Hex(const TensorView& view) {
  uint32_t crc = 0;
  if (view.numel() > 0) {
    Tensor copy;
    const TensorView* bytes = &view;
    if (!view.is_contiguous()) {
      NUMPROBE_ASSIGN_OR_RETURN(copy, Tensor::CopyOf(view));
      bytes = &copy.view();
    }
    crc = detail::Crc32(std::span(bytes->first(), static_cast<size_t>(bytes->span_bytes())));
  }
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%08x", crc);
  return std::string(buf);
}

// What a tensor file holds (Impl::QueueData): the dtype, the shape and a hash of the bytes in C
// order, of a contiguous view.
struct DataKey {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  XXH128_hash_t hash{};
  bool operator==(const DataKey& o) const {
    return dtype == o.dtype && shape == o.shape && XXH128_isEqual(hash, o.hash) != 0;
  }
};
struct DataKeyHash {
  size_t operator()(const DataKey& k) const { return static_cast<size_t>(k.hash.low64); }
};
DataKey DataKeyOf(const TensorView& contiguous) {
  DataKey key;
  key.dtype = contiguous.dtype;
  key.shape = contiguous.shape;
  const int64_t bytes = contiguous.numel() > 0 ? contiguous.span_bytes() : 0;
  key.hash = XXH3_128bits(bytes > 0 ? contiguous.first() : nullptr, static_cast<size_t>(bytes));
  return key;
}

// A compact one-line description of a tensor leaf for overflow reports.
std::string DescribeLeaf(const JsonValue& leaf) {
  std::string out;
  if (const JsonValue* d = leaf.Find("dtype")) out += d->string_value();
  if (const JsonValue* s = leaf.Find("shape")) out += " " + ToJson(*s, -1);
  for (const char* key : {"Max", "Min", "Mean", "Norm"}) {
    if (const JsonValue* v = leaf.Find(key)) {
      out += std::string(" ") + key + "=" + ToJson(*v, -1);
    }
  }
  return out;
}

void CollectLeaves(const JsonValue& v, const std::string& path, std::vector<std::string>* lines) {
  if (v.is_object()) {
    const JsonValue* type = v.Find("type");
    if (type != nullptr && v.Find("dtype") != nullptr && v.Find("shape") != nullptr) {
      lines->push_back(path + ": " + DescribeLeaf(v));
      return;
    }
    if (type != nullptr) return;  // a plain value
    for (const auto& [k, child] : v.object()) {
      std::string child_path;
      if (!path.empty()) child_path.append(path).append(".");
      child_path.append(k);
      CollectLeaves(child, child_path, lines);
    }
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.array().size(); ++i) {
      CollectLeaves(v.array()[i], path + "." + std::to_string(i), lines);
    }
  }
}

// The golden dump.json for step `step` of rank folder `rank_folder` under bench_path: the same
// step and rank folder of a dump tree, the only rank folder of that step, a rank folder, or a
// dump.json (a folder holding one, or the file itself). Empty when there is none.
fs::path GoldenDumpJson(const fs::path& bench, int64_t step, const std::string& rank_folder) {
  std::error_code ec;
  if (fs::is_regular_file(bench, ec)) return bench;
  const fs::path step_dir = bench / ("step" + std::to_string(step));
  if (fs::is_regular_file(step_dir / rank_folder / "dump.json", ec)) {
    return step_dir / rank_folder / "dump.json";
  }
  if (fs::is_directory(step_dir, ec)) {
    fs::path only;
    int folders = 0;
    for (const auto& e : fs::directory_iterator(step_dir, ec)) {
      if (e.is_directory(ec) && fs::is_regular_file(e.path() / "dump.json", ec)) {
        only = e.path() / "dump.json";
        ++folders;
      }
    }
    if (folders == 1) return only;
  }
  if (fs::is_regular_file(bench / rank_folder / "dump.json", ec)) {
    return bench / rank_folder / "dump.json";
  }
  if (fs::is_regular_file(bench / "dump.json", ec)) return bench / "dump.json";
  return {};
}

// Removes the data_name of every tensor leaf under `v` whose file is not written.
void DropDataNames(JsonValue& v, const std::vector<std::string_view>& dropped, int depth) {
  if (depth > kMaxNesting) return;
  if (v.is_array()) {
    for (JsonValue& item : v.array()) DropDataNames(item, dropped, depth + 1);
    return;
  }
  if (!v.is_object()) return;
  JsonValue::Object& members = v.object();
  std::erase_if(members, [&](const auto& m) {
    return m.first == "data_name" && m.second.is_string() &&
           std::find(dropped.begin(), dropped.end(), m.second.string_value()) != dropped.end();
  });
  for (auto& member : members) DropDataNames(member.second, dropped, depth + 1);
}

std::string FormatError(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

}  // namespace

struct Dumper::Impl {
  DumpConfig config;
  DumperOptions options;
  mutable std::mutex mu;

  int64_t step = 0;
  std::optional<int64_t> rank;
  const pid_t owner_pid = detail::CurrentProcessId();
  bool started = false;      // between Start() and Stop()
  bool step_opened = false;  // the current step's folder was created by this Dumper
  bool closed = false;
  fs::path current_dir;  // where the current step's folder is
  JsonValue header;

  detail::EntryTable entries;
  detail::StackTable stacks;
  // AddStack's shared stacks met this step: their group in `stacks` (the pointer kept alive).
  std::unordered_map<const std::vector<std::string>*,
                     std::pair<std::shared_ptr<const std::vector<std::string>>, size_t>>
      stack_groups;
  detail::ConstructTable construct;
  JsonValue debug = JsonValue::MakeObject();  // debug.json's data
  bool track_casts = false;                   // casts.json (TrackCasts)
  JsonValue::Array casts;
  DumpJournalWriter journal;  // declared before the writer, whose thread appends to it
  detail::CopyBufferPool copies;  // the queued copies' buffers, reused once written
  detail::TensorFileWriter writer;
  // The tensor data queued in current_dir (either layout), by content, and the key each
  // data_name was last given (QueueData). Only SetCurrentDir changes current_dir, and empties them.
  std::unordered_map<DataKey, std::string, DataKeyHash> step_data;
  std::unordered_map<std::string, DataKey> step_data_keys;
  // The statistics of the content queued in current_dir, by the same key (TensorLeaf): a
  // repeated tensor's are not computed again. Emptied with step_data.
  std::unordered_map<DataKey, LeafStats, DataKeyHash> step_stats;

  // scope / list filtering
  bool scope_active = false;
  std::unordered_set<std::string> list_modules_active;
  std::unordered_set<std::string> selected_forward;
  std::unordered_set<std::string> selected_modules;

  // overflow_check
  std::unordered_map<std::string, std::pair<JsonValue, bool>> pending_inputs;
  // async_dump: records waiting for their device statistics (ResolvePending), in record order,
  // and whether the part being built has a pending leaf.
  std::vector<std::pair<std::string, JsonValue>> deferred;
  bool part_pending = false;
  std::unordered_map<std::string, std::vector<std::string>> stack_by_name;
  int64_t overflow_count = 0;
  std::deque<OverflowReport> overflow_reports;
  // What the step's JSON files hold: every change to entries, stacks, construct, casts or debug
  // bumps `revision`; WriteJsonFiles skips the files when they already hold it (stop() then step()
  // would otherwise serialise and fsync the whole step twice).
  uint64_t revision = 0;
  std::optional<uint64_t> written_revision;

  // Incremental dump (bench_path): the current step's golden (null when it has none), the tensor
  // leaves of the record being made whose files wait for its judgement (their views are valid
  // until the Record* call returns), the entries given files (diff_nums), and the summaries.
  struct FileCandidate {
    std::string data_name;
    const TensorView* view;
  };
  std::unique_ptr<BaselineJudge> judge;
  std::unique_ptr<BaselineJudge> last_judge;  // the last step's, for a golden every step shares
  // The next step's golden, parsed on the writer's thread while this step runs (OpenGolden): the
  // parse is about a millisecond a step the training thread need not spend. OpenGolden never
  // waits for it: one not yet parsed is parsed there, and the queued parse is dropped.
  struct GoldenPrefetch {
    fs::path path;
    std::mutex mu;
    // OpenGolden has come for it, or the run has ended: a queued parse not yet begun is skipped.
    bool taken = false;
    std::optional<Result<std::unique_ptr<BaselineJudge>>> judge;
  };
  std::shared_ptr<GoldenPrefetch> next_golden;
  std::vector<FileCandidate> candidates;
  std::unordered_set<std::string> diff_entries;  // "step/name"
  std::unordered_set<std::string> step_diff_names;  // the current step's names in diff_entries
  IncrementalSummary run_summary;
  IncrementalSummary step_summary;
  std::optional<DivergenceNotice> divergence;
  bool divergence_taken = false;

  Impl(DumpConfig c, DumperOptions o)
      : config(std::move(c)),
        options(std::move(o)),
        copies(options.max_idle_copy_bytes),
        writer(options.max_pending_bytes,
               config.tensor_durability == TensorDurability::kFile ? FileSync::kNow
                                                                   : FileSync::kDeferred,
               &journal) {
    if (options.pid == 0) options.pid = static_cast<int64_t>(detail::CurrentProcessId());
    rank = options.rank;
  }

  bool Incremental() const { return !config.bench_path.empty(); }
  bool FilesWanted() const {
    return config.task == DumpTask::kTensor || !config.tensor_list.empty() || Incremental();
  }
  std::string RankFolderName() const {
    return rank ? "rank" + std::to_string(*rank) : "proc" + std::to_string(options.pid);
  }
  fs::path StepDir() const {
    return fs::path(config.dump_path) / ("step" + std::to_string(step)) / RankFolderName();
  }
  bool Selected() const {
    const int64_t r = rank.value_or(0);
    return config.StepSelected(step) && config.RankSelected(r);
  }
  // The closed loop's overflow check (DumpConfig::loop): every output of a checked step is looked
  // at for NaN/Inf, and the first one found is reported, whether the step is dumped or not.
  bool Checking() const {
    const ClosedLoopConfig& loop = config.loop;
    if (!loop.overflow_check || config.task == DumpTask::kOverflowCheck) return false;
    const bool step_checked =
        loop.check_steps.empty() ||
        std::binary_search(loop.check_steps.begin(), loop.check_steps.end(), step);
    return step_checked && config.RankSelected(rank.value_or(0));
  }
  bool Terminated() const {
    return config.task == DumpTask::kOverflowCheck && config.overflow_nums != -1 &&
           overflow_count >= config.overflow_nums;
  }
  // A forked child (a DataLoader worker) inherits the Dumper and its shared journal mapping: it
  // must not record into the parent's files.
  bool Active() const {
    return started && !closed && detail::CurrentProcessId() == owner_pid &&
           (Selected() || Checking()) && !Terminated();
  }

  // ---- filtering ----
  bool Filtering() const { return !config.scope.empty() || !config.list.empty(); }
  bool ListMatch(std::string_view name) const {
    for (const std::string& item : config.list) {
      if (name.find(item) != std::string_view::npos) return true;
    }
    return false;
  }
  void EnterLocked(std::string_view name) {
    if (!config.scope.empty() && name == config.scope[0]) scope_active = true;
    if (!config.list.empty() && IsModuleName(name) && ListMatch(name)) {
      list_modules_active.insert(std::string(name));
    }
  }
  void LeaveLocked(std::string_view name) {
    if (!config.scope.empty() && name == config.scope[1]) scope_active = false;
    if (!list_modules_active.empty()) list_modules_active.erase(std::string(name));
  }
  bool SelectedLocked(std::string_view name) {
    if (!Filtering()) return true;
    if (IsBackwardName(name)) {
      if (!config.list.empty() && ListMatch(name)) return true;
      if (name.find(".parameters_grad.") != std::string_view::npos) {
        return selected_modules.count(ModulePrefix(name)) != 0;
      }
      return selected_forward.count(ForwardCounterpart(name)) != 0;
    }
    std::string key(name);
    if (selected_forward.count(key) != 0) return true;
    bool selected = false;
    if (!config.scope.empty()) {
      selected = scope_active || name == config.scope[0] || name == config.scope[1];
    }
    if (!config.list.empty())
      selected = selected || ListMatch(name) || !list_modules_active.empty();
    if (selected) {
      if (IsModuleName(name)) selected_modules.insert(ModulePrefix(name));
      selected_forward.insert(std::move(key));
    }
    return selected;
  }

  bool WantsFiles(std::string_view entry) const {
    // Incremental: decided per leaf by JudgeRecord, for the entries that can still get files.
    if (Incremental()) return judge != nullptr && FilesStillPossible(entry);
    if (config.task == DumpTask::kTensor) return true;
    if (config.task != DumpTask::kStatistics) return false;
    for (const std::string& item : config.tensor_list) {
      if (entry.find(item) != std::string_view::npos) return true;
    }
    return false;
  }

  // Whether a record of `entry` can still get tensor files in an incremental dump: fewer than
  // diff_nums entries have theirs, or this one is among them (its inputs went over, so its
  // outputs may too). Past that, a record's leaves are judged without data_names to build and
  // drop (JudgeRecord), and their bytes are counted as not written where they are met
  // (TensorLeaf).
  bool FilesStillPossible(std::string_view entry) const {
    if (config.diff_nums == -1 || static_cast<int64_t>(diff_entries.size()) < config.diff_nums) {
      return true;
    }
    // (empty in most steps: no name is built per record to look up)
    return !step_diff_names.empty() && step_diff_names.count(std::string(entry)) != 0;
  }

  // A tensor's content key (DataKey), and for a strided view the contiguous copy it was hashed
  // from (the copy that is written, if the content is new to the step).
  struct KeyedData {
    DataKey key;
    Tensor copy;
  };
  Result<KeyedData> KeyData(const TensorView& view) {
    KeyedData out;
    if (view.is_contiguous()) {
      out.key = DataKeyOf(view);
    } else {
      NUMPROBE_ASSIGN_OR_RETURN(out.copy, copies.Copy(view));  // hashed as it will be written
      out.key = DataKeyOf(out.copy.view());
    }
    return out;
  }

  // A tensor's data for the background writer. A tensor whose bytes, dtype and shape the step
  // has already queued under another name is not queued again: in the files layout its name
  // becomes a hard link to that file, in the packed layout a second index line of its bytes:
  // an op's output is the next op's input, a parameter is read by the forward and then by the
  // optimizer, a gradient passes through an add unchanged; half the bytes of a transformer
  // block's L1 tensor dump were such repeats (13.3 of 25.8 MiB a step). The training thread then
  // neither copies them nor has them written: their content is hashed where they lie (XXH3,
  // 128 bits: an accidental match is out of reach, and a dump records the user's own tensors).
  Status QueueData(const std::string& data_name, const TensorView& view) {
    NUMPROBE_ASSIGN_OR_RETURN(KeyedData keyed, KeyData(view));
    return QueueData(data_name, view, std::move(keyed));
  }
  Status QueueData(const std::string& data_name, const TensorView& view, KeyedData keyed) {
    const bool contiguous = view.is_contiguous();
    Tensor copy = std::move(keyed.copy);
    DataKey key = std::move(keyed.key);
    const auto earlier = step_data.find(key);
    if (earlier != step_data.end() && earlier->second == data_name) {
      return Status::Ok();  // the same name, the same content: its file already has it
    }
    if (earlier != step_data.end()) {
      const fs::path dir = current_dir / "dump_tensor_data";
      if (config.dump_layout == DumpLayout::kPacked) {
        writer.EnqueuePackedRepeat(dir, data_name, earlier->second);
      } else {
        writer.EnqueueLink(dir / data_name, dir / earlier->second);
      }
    } else {
      if (contiguous) {
        NUMPROBE_ASSIGN_OR_RETURN(copy, copies.Copy(view));
      }
      QueueTensor(data_name, std::move(copy));
    }
    // A name given new content no longer holds what it held: forget that content under it.
    const auto old_key = step_data_keys.find(data_name);
    if (old_key != step_data_keys.end()) {
      const auto held = step_data.find(old_key->second);
      if (held != step_data.end() && held->second == data_name) step_data.erase(held);
    }
    if (earlier == step_data.end()) step_data.emplace(key, data_name);
    step_data_keys.insert_or_assign(data_name, std::move(key));
    return Status::Ok();
  }

  // A tensor's data for the background writer: its own file, or an entry of the step's packed
  // container under the same data_name (dump.json is the same in both layouts).
  void QueueTensor(const std::string& data_name, Tensor copy) {
    if (config.dump_layout == DumpLayout::kPacked) {
      writer.EnqueuePacked(current_dir / "dump_tensor_data", data_name, std::move(copy));
    } else {
      writer.Enqueue(current_dir / "dump_tensor_data" / data_name, std::move(copy),
                     config.file_format);
    }
  }

  // ---- values ----
  struct Walk {
    std::string_view entry;
    std::string_view category;
    const std::string* save_name = nullptr;  // parameter gradients name their file directly
    bool files = false;
    bool judged = false;  // incremental: files wait for JudgeRecord
    bool nonfinite = false;
    std::vector<std::string> keys;
  };

  Result<JsonValue> TensorLeaf(const TensorArg& t, Walk& w) {
    JsonValue::Object leaf;
    leaf.reserve(10);
    leaf.emplace_back("type", JsonValue::String(t.type));
    leaf.emplace_back("dtype", JsonValue::String(TorchDTypeString(t.view.dtype)));
    JsonValue::Array shape;
    for (int64_t d : t.view.shape) shape.push_back(JsonValue::Int(d));
    leaf.emplace_back("shape", JsonValue::MakeArray(std::move(shape)));
    std::vector<JsonValue> stats;
    const bool has_data = t.view.data != nullptr;
    // A file queued now is keyed by its content first: the statistics of content the step has
    // already recorded (an op's output is the next op's input; at mix a module's output is its
    // last op's) are taken from that record, not computed again. They are the same values: the
    // statistics depend on the elements in C order only, not on the layout (StatsTest,
    // StridedViewsMatchContiguousCopies).
    std::optional<KeyedData> keyed;
    if (w.files && has_data && !w.judged) {
      NUMPROBE_ASSIGN_OR_RETURN(keyed, KeyData(t.view));
    }
    if (t.pending_slot >= 0) {
      // Filled by ResolvePending; the marker member is removed then.
      stats.resize(4);
      leaf.emplace_back(std::string(kPendingMarker), JsonValue::Int(t.pending_slot));
      part_pending = true;
    } else if (t.precomputed) {
      stats = *t.precomputed;
      stats.resize(4);
      w.nonfinite = w.nonfinite || PrecomputedNonFinite(stats);
    } else {
      const auto known = keyed ? step_stats.find(keyed->key) : step_stats.end();
      LeafStats computed;
      if (known != step_stats.end()) {
        computed = known->second;
      } else {
        auto fresh = ComputeLeafStats(t.view, config.precision);
        if (!fresh) return fresh.error().WithContext(std::string(w.entry));
        computed = std::move(*fresh);
        if (keyed) step_stats.emplace(keyed->key, computed);
      }
      stats = std::move(computed.values);
      w.nonfinite = w.nonfinite || computed.nonfinite;
    }
    static constexpr const char* kStatNames[] = {"Max", "Min", "Mean", "Norm"};
    for (size_t i = 0; i < 4; ++i) leaf.emplace_back(kStatNames[i], std::move(stats[i]));
    leaf.emplace_back("requires_grad", JsonValue::Bool(t.requires_grad));
    // async_dump: the host copy is still in flight; its file and md5 come with ResolvePending.
    const bool data_pending = t.pending_slot >= 0 && t.pending_data && !has_data;
    if (data_pending) {
      if (w.judged) {
        return Status::InvalidArgument(std::string(w.entry) +
                                       ": a judged record's data cannot wait for ResolvePending");
      }
      leaf.emplace_back(std::string(kPendingDataMarker), JsonValue::Bool(true));
    }
    if (w.judged && !w.files && has_data && judge != nullptr && Selected()) {
      // An incremental record past diff_nums (FilesStillPossible): no file, bytes not written.
      step_summary.bytes_not_written +=
          static_cast<uint64_t>(t.view.numel()) * static_cast<uint64_t>(ItemSize(t.view.dtype));
    }
    if (w.files && (has_data || data_pending)) {
      const char* ext = config.file_format == TensorFileFormat::kNpy ? ".npy" : ".pt";
      std::string data_name;
      if (w.save_name != nullptr) {
        data_name = *w.save_name + ext;
      } else {
        data_name = std::string(w.entry) + "." + std::string(w.category);
        for (const std::string& k : w.keys) data_name += "." + k;
        data_name += ext;
      }
      if (w.judged) {
        candidates.push_back({data_name, &t.view});  // JudgeRecord decides
      } else if (!data_pending) {  // else FillData queues it once the data has come
        NUMPROBE_RETURN_IF_ERROR(QueueData(data_name, t.view, std::move(*keyed)));
      }
      leaf.emplace_back("data_name", JsonValue::String(std::move(data_name)));
    }
    if (config.summary_mode == SummaryMode::kMd5) {
      if (has_data) {
        NUMPROBE_ASSIGN_OR_RETURN(std::string crc, Crc32Hex(t.view));
        leaf.emplace_back("md5", JsonValue::String(std::move(crc)));
      } else {
        leaf.emplace_back("md5", JsonValue());
      }
    }
    return JsonValue::MakeObject(std::move(leaf));
  }

  // ResolvePending: the data of a leaf recorded with pending_data, its md5 and its file.
  Status FillData(JsonValue& leaf, const TensorView& data) {
    if (config.summary_mode == SummaryMode::kMd5) {
      NUMPROBE_ASSIGN_OR_RETURN(std::string crc, Crc32Hex(data));
      leaf.Set("md5", JsonValue::String(std::move(crc)));
    }
    const JsonValue* data_name = leaf.Find("data_name");
    if (data_name == nullptr || !data_name->is_string()) return Status::Ok();
    return QueueData(data_name->string_value(), data);
  }

  Result<JsonValue> Convert(const DumpValue& v, Walk& w, int depth) {
    if (depth > kMaxNesting) {
      return Status::OutOfRange(std::string(w.entry) + ": values nested deeper than " +
                                std::to_string(kMaxNesting));
    }
    switch (v.kind()) {
      case DumpValue::Kind::kNone:
        return JsonValue();
      case DumpValue::Kind::kPlain:
        return ObjectOf(JsonValue::Member("type", JsonValue::String(v.plain_type())),
                        JsonValue::Member("value", v.json()));
      case DumpValue::Kind::kLiteral:
        return v.json();
      case DumpValue::Kind::kTensor:
        return TensorLeaf(v.tensor(), w);
      case DumpValue::Kind::kList: {
        JsonValue::Array items;
        items.reserve(v.items().size());
        for (size_t i = 0; i < v.items().size(); ++i) {
          w.keys.push_back(std::to_string(i));
          auto item = Convert(v.items()[i], w, depth + 1);
          w.keys.pop_back();
          if (!item) return item.error();
          items.push_back(std::move(*item));
        }
        return JsonValue::MakeArray(std::move(items));
      }
      case DumpValue::Kind::kDict: {
        JsonValue::Object members;
        members.reserve(v.members().size());
        for (const auto& [key, child] : v.members()) {
          w.keys.push_back(key);
          auto item = Convert(child, w, depth + 1);
          w.keys.pop_back();
          if (!item) return item.error();
          members.emplace_back(key, std::move(*item));
        }
        return JsonValue::MakeObject(std::move(members));
      }
    }
    return JsonValue();
  }

  // Converts a top-level List/Dict (args, kwargs, outputs, parameters).
  Result<JsonValue> ConvertTop(const DumpValue& v, std::string_view entry,
                               std::string_view category, bool* nonfinite) {
    Walk w{entry, category};
    w.files = Selected() && WantsFiles(entry);
    w.judged = Incremental();
    auto out = Convert(v, w, 0);
    if (out && nonfinite != nullptr) *nonfinite = *nonfinite || w.nonfinite;
    return out;
  }

  // ---- incremental dump ----
  // Judges the record `part` of `name` against the golden: the candidates' files are queued for
  // the leaves over their tolerance (of the first diff_nums entries with such leaves), the other
  // leaves lose their data_name; the first entry over tolerance becomes the divergence notice.
  Status JudgeRecord(std::string_view name, JsonValue& part) {
    std::vector<FileCandidate> files;
    files.swap(candidates);
    if (judge == nullptr) return Status::Ok();
    auto judged = judge->Judge(name, part, config.summary_mode == SummaryMode::kMd5);
    if (!judged) return judged.error().WithContext(std::string(name));
    std::vector<const JudgedRow*> over;
    for (const JudgedRow& row : *judged) {
      if (!row.paired || std::isnan(row.error) || std::isnan(row.tolerance)) continue;
      ++step_summary.tensors_judged;
      if (row.over) over.push_back(&row);
    }
    step_summary.tensors_over += static_cast<int64_t>(over.size());
    bool write = false;
    if (!over.empty()) {
      // An entry's records (its inputs, then its outputs) share its slot; names repeat per step.
      std::string key = std::to_string(step) + "/" + std::string(name);
      const bool known = diff_entries.count(key) != 0;
      if (!known) ++step_summary.entries_over;
      write = known || config.diff_nums == -1 ||
              static_cast<int64_t>(diff_entries.size()) < config.diff_nums;
      if (write && diff_entries.insert(std::move(key)).second) {
        step_diff_names.insert(std::string(name));
      }
    }
    std::vector<std::string_view> dropped;  // a record has a few leaves: a list, not a set
    for (const FileCandidate& file : files) {
      const auto bytes = static_cast<uint64_t>(file.view->numel()) *
                         static_cast<uint64_t>(ItemSize(file.view->dtype));
      const bool is_over = write && std::any_of(over.begin(), over.end(), [&](const JudgedRow* r) {
                             return r->data_name == file.data_name;
                           });
      if (!is_over) {
        step_summary.bytes_not_written += bytes;
        dropped.push_back(file.data_name);
        continue;
      }
      NUMPROBE_RETURN_IF_ERROR(QueueData(file.data_name, *file.view));
      ++step_summary.tensors_written;
      step_summary.bytes_written += bytes;
    }
    if (!dropped.empty()) DropDataNames(part, dropped, 0);
    if (!over.empty() && !divergence && run_summary.first_divergence.empty() &&
        step_summary.first_divergence.empty()) {
      NoteDivergence(name, over);
    }
    return Status::Ok();
  }

  void NoteDivergence(std::string_view name, const std::vector<const JudgedRow*>& over) {
    step_summary.first_divergence = std::string(name);
    step_summary.first_divergence_step = step;
    DivergenceNotice n;
    n.name = std::string(name);
    n.step = step;
    n.rank = RankFolderName();
    std::string text = "numprobe: first divergence from bench_path: " + n.name + " (step " +
                       std::to_string(step) + ", " + n.rank + ")\n";
    for (const JudgedRow* r : over) {
      text += "  " + r->name + ": error " + FormatError(r->error) + " over its tolerance " +
              FormatError(r->tolerance) + "\n";
    }
    text += "  golden: " + judge->golden_path().string() + "\n";
    n.report = std::move(text);
    divergence = std::move(n);
  }

  // incremental.json's content: what the step judged and wrote.
  std::string IncrementalJson() const {
    JsonValue out = JsonValue::MakeObject();
    out.Set("bench",
            judge != nullptr ? JsonValue::String(judge->golden_path().string()) : JsonValue());
    out.Set("diff_nums", JsonValue::Int(config.diff_nums));
    out.Set("stop_at_first", JsonValue::Bool(config.stop_at_first));
    out.Set("tensors_judged", JsonValue::Int(step_summary.tensors_judged));
    out.Set("tensors_over_tolerance", JsonValue::Int(step_summary.tensors_over));
    out.Set("entries_over_tolerance", JsonValue::Int(step_summary.entries_over));
    out.Set("tensors_written", JsonValue::Int(step_summary.tensors_written));
    out.Set("bytes_written", JsonValue::Int(static_cast<int64_t>(step_summary.bytes_written)));
    out.Set("bytes_not_written",
            JsonValue::Int(static_cast<int64_t>(step_summary.bytes_not_written)));
    out.Set("first_divergence", step_summary.first_divergence.empty()
                                    ? JsonValue()
                                    : JsonValue::String(step_summary.first_divergence));
    return ToJson(out, 1);
  }

  // The run's summary: the finished steps' counts and the current one's.
  IncrementalSummary RunSummary() const {
    IncrementalSummary s = run_summary;
    s.tensors_judged += step_summary.tensors_judged;
    s.tensors_over += step_summary.tensors_over;
    s.entries_over += step_summary.entries_over;
    s.tensors_written += step_summary.tensors_written;
    s.bytes_written += step_summary.bytes_written;
    s.bytes_not_written += step_summary.bytes_not_written;
    if (s.first_divergence.empty()) {
      s.first_divergence = step_summary.first_divergence;
      s.first_divergence_step = step_summary.first_divergence_step;
    }
    if (judge != nullptr) s.bench = judge->golden_path().string();
    return s;
  }

  // Opens the golden of the step being opened (none: its records are statistics only), and
  // queues the parse of the next step's. A bench_path naming one dump.json is every step's
  // golden: it is parsed once.
  Status OpenGolden() {
    if (!Incremental()) return Status::Ok();
    const fs::path golden = GoldenDumpJson(config.bench_path, step, RankFolderName());
    std::unique_ptr<BaselineJudge> last = std::move(last_judge);
    judge.reset();
    if (!golden.empty() && last != nullptr && last->golden_path() == golden) {
      judge = std::move(last);
    } else if (!golden.empty()) {
      auto prefetched = TakePrefetchedGolden(golden);
      if (prefetched) {
        if (!*prefetched) return prefetched->error();
        judge = std::move(**prefetched);
      } else {
        NUMPROBE_ASSIGN_OR_RETURN(judge, BaselineJudge::Open(golden));
      }
    }
    PrefetchGolden(step + 1);
    return Status::Ok();
  }

  void PrefetchGolden(int64_t next_step) {
    (void)TakePrefetchedGolden({});  // a parse nobody came for is dropped
    // A forked child has no writer thread; a step not dumped opens no golden.
    if (detail::CurrentProcessId() != owner_pid || !config.StepSelected(next_step)) return;
    fs::path path = GoldenDumpJson(config.bench_path, next_step, RankFolderName());
    if (path.empty() || (judge != nullptr && judge->golden_path() == path)) return;
    auto prefetch = std::make_shared<GoldenPrefetch>();
    prefetch->path = std::move(path);
    next_golden = prefetch;
    writer.EnqueueTask(
        [prefetch] {
          {
            std::lock_guard lock(prefetch->mu);
            if (prefetch->taken) return Status::Ok();
          }
          auto parsed = BaselineJudge::Open(prefetch->path);
          std::lock_guard lock(prefetch->mu);
          prefetch->judge.emplace(std::move(parsed));
          return Status::Ok();  // an error is OpenGolden's to report, as if it had parsed
        },
        prefetch->path.string());
  }

  // The prefetched parse of `path` when it is done (its error included), else nullopt; either
  // way the prefetch is taken (an empty `path` only drops it).
  std::optional<Result<std::unique_ptr<BaselineJudge>>> TakePrefetchedGolden(const fs::path& path) {
    std::shared_ptr<GoldenPrefetch> prefetch = std::exchange(next_golden, nullptr);
    // In a forked child its mutex may have been held by the parent's writer at the fork.
    if (prefetch == nullptr || detail::CurrentProcessId() != owner_pid) return std::nullopt;
    std::lock_guard lock(prefetch->mu);
    prefetch->taken = true;
    if (path.empty() || prefetch->path != path || !prefetch->judge) return std::nullopt;
    return std::move(prefetch->judge);
  }

  // ---- writing ----
  Status Commit(std::string_view name, JsonValue part) {
    if (part_pending || !deferred.empty()) {
      part_pending = false;
      deferred.emplace_back(std::string(name), std::move(part));
      return Status::Ok();
    }
    return CommitNow(name, std::move(part));
  }

  // A record of a non-overflow_check task: reported when the closed loop checks for NaN/Inf and it
  // has some, kept when its step is dumped.
  Status Keep(std::string_view name, JsonValue part, bool nonfinite) {
    if (nonfinite && Checking()) NoteOverflow(name, part);
    if (!Selected()) {  // a step that is only checked
      part_pending = false;
      candidates.clear();
      return Status::Ok();
    }
    NUMPROBE_RETURN_IF_ERROR(JudgeRecord(name, part));
    return Commit(name, std::move(part));
  }

  Status CommitNow(std::string_view name, JsonValue part) {
    // With no tensor file waiting, the line is formatted straight into the journal's own buffer
    // (no string allocated and copied per record).
    if (writer.Busy()) {
      writer.EnqueueJournalLine(DumpJournalWriter::DataLine(name, part));
    } else {
      NUMPROBE_RETURN_IF_ERROR(journal.AppendData(name, part));
    }
    entries.Merge(name, std::move(part));
    ++revision;
    return Status::Ok();
  }

  // Appends a record that may name tensor files: behind the queued files when there are any
  // (tensor_file_writer.h), so the journal never names a file that is not complete.
  Status Journal(std::string line) {
    if (writer.Busy()) {
      writer.EnqueueJournalLine(std::move(line));
      return Status::Ok();
    }
    return journal.AppendFormatted(line);
  }

  // Waits for the queued files; true when, with tensor_durability "step", they are still to be
  // made durable (together, at the step's end: WriteJsonFiles).
  Result<bool> FinishFiles() {
    NUMPROBE_RETURN_IF_ERROR(writer.Drain());
    return writer.TakeWrittenSinceSync() && config.tensor_durability == TensorDurability::kStep;
  }

  void NoteOverflow(std::string_view name, const JsonValue& entry_part) {
    ++overflow_count;
    if (overflow_count != 1) return;
    OverflowReport r;
    r.name = std::string(name);
    r.step = step;
    r.rank = RankFolderName();
    std::string text = "numprobe: overflow_check: first non-finite output in " + r.name +
                       " (step " + std::to_string(step) + ", " + r.rank + ")\n";
    const std::optional<std::string>* parent = construct.Find(name);
    text +=
        "  module: " + ((parent != nullptr && *parent) ? **parent : std::string("(none)")) + "\n";
    std::vector<std::string> lines;
    CollectLeaves(entry_part, "", &lines);
    for (const std::string& l : lines) text += "  " + l + "\n";
    auto it = stack_by_name.find(r.name);
    if (it != stack_by_name.end() && !it->second.empty()) {
      const std::string* source = &it->second.front();
      for (const std::string& f : it->second) {
        if (f.find("/torch/") == std::string::npos && f.find("/numprobe/") == std::string::npos) {
          source = &f;
          break;
        }
      }
      text += "  source: " + *source + "\n";
    }
    r.report = std::move(text);
    overflow_reports.push_back(std::move(r));
  }

  // Journals and merges the waiting records in order, their statistics from `values` (or null
  // when `values` is nullptr).
  Status FlushDeferred(const std::vector<PendingValues>* values) {
    std::vector<std::pair<std::string, JsonValue>> waiting;
    waiting.swap(deferred);
    Status first;
    const auto with_data = [this](JsonValue& leaf, const TensorView& data) {
      return FillData(leaf, data);
    };
    for (auto& [name, part] : waiting) {
      if (values != nullptr) {
        Status st = FillPending(part, *values, with_data, 0);
        if (!st.ok()) {
          if (first.ok()) first = st;
          DropPending(part, 0);
        }
      } else {
        DropPending(part, 0);
      }
      Status st = CommitNow(name, std::move(part));
      if (!st.ok() && first.ok()) first = st;
    }
    return first;
  }

  // Writes the step's JSON files when they do not hold every record yet, all together at the
  // step's end, each renamed into place complete, and queues their sync (with the step's tensor
  // files, tensor_durability "step") on the writer's thread: the training thread does not wait
  // for the disk (12-20 ms a step on a tensor dump). Once they are durable the writer appends the
  // journal's written marker, so a reader after a machine crash that lost them reads the journal.
  // The next step's end (or Close) waits for that sync and reports its error.
  Status WriteJsonFiles() {
    if (!step_opened) return Status::Ok();
    Status flushed = FlushDeferred(nullptr);
    // Nothing recorded or queued since the files were written (stop() then step()): they are
    // current, and their sync is on its way; waiting for it here would put the disk back in
    // the step.
    if (flushed.ok() && written_revision == revision && !writer.FilesSinceSync()) {
      return Status::Ok();
    }
    auto finished = FinishFiles();  // whatever the first error, the queue is done after it
    NUMPROBE_RETURN_IF_ERROR(flushed);
    if (!finished) return finished.error();
    const fs::path tensor_dir = current_dir / "dump_tensor_data";
    // Cut before the sync is queued, not after (DumpJournalWriter::Cut says why).
    NUMPROBE_RETURN_IF_ERROR(journal.Cut());
    if (written_revision == revision) {
      if (*finished) {
        writer.EnqueueTask(
            [tensor_dir] {
              return detail::MakeDurable({}, detail::BatchFlush::kFilesystem, {&tensor_dir, 1});
            },
            tensor_dir.string());
      }
      return Status::Ok();
    }
    std::vector<detail::FileContent> files;
    files.push_back({current_dir / "dump.json", entries.DumpJsonText(header, 1)});
    if (config.extra_info) {
      files.push_back({current_dir / "stack.json", ToJson(stacks.ToJson(), 1)});
      files.push_back({current_dir / "construct.json", ToJson(construct.ToJson(), 1)});
    }
    if (track_casts) {
      files.push_back(
          {current_dir / std::string(kCastsFileName), ToJson(CastRecordJson(casts), 1)});
    }
    if (Incremental()) {
      files.push_back({current_dir / std::string(kIncrementalFileName), IncrementalJson()});
    }
    if (!debug.object().empty()) {
      JsonValue out = header;
      out.Set("level", JsonValue::String("debug"));
      out.Set("data", debug);
      files.push_back({current_dir / "debug.json", ToJson(out, 1)});
    }
    NUMPROBE_ASSIGN_OR_RETURN(detail::NotYetDurable pending,
                              detail::ReplaceFilesNotYetDurable(files));
    written_revision = revision;
    // With tensor files still to be made durable, one syncfs covers them and the JSON files; a
    // statistics step's few JSON files are fsync'ed each, so that the sync never waits for other
    // writers' data on the same filesystem (a checkpoint being saved).
    const detail::BatchFlush flush =
        *finished ? detail::BatchFlush::kFilesystem : detail::BatchFlush::kEachFile;
    std::vector<fs::path> also_sync;
    if (*finished) also_sync.push_back(tensor_dir);
    const fs::path journal_path = current_dir / std::string(kDumpJournalName);
    writer.EnqueueTask(
        [this, pending = std::move(pending), flush, also_sync = std::move(also_sync), journal_path,
         journal_size = journal.size()] {
          NUMPROBE_RETURN_IF_ERROR(detail::MakeDurable(pending, flush, also_sync));
          return journal.AppendWrittenIfUnchanged(journal_path, journal_size);
        },
        (current_dir / "dump.json").string());
    return Status::Ok();
  }

  // The step folder records go to. Repeats refer back only within one folder: links stay in a
  // step's folder, and the packed writer starts afresh in a renamed one.
  void SetCurrentDir(fs::path dir) {
    current_dir = std::move(dir);
    step_data.clear();
    step_data_keys.clear();
    step_stats.clear();
  }

  Status OpenStep() {
    SetCurrentDir(StepDir());
    std::error_code ec;
    fs::create_directories(current_dir, ec);
    if (ec) return Status::IoError(current_dir.string() + ": cannot create: " + ec.message());
    if (FilesWanted()) {
      fs::create_directories(current_dir / "dump_tensor_data", ec);
      if (ec) return Status::IoError(current_dir.string() + "/dump_tensor_data: " + ec.message());
      // A rerun into the same path starts the container afresh, as it does the journal.
      if (config.dump_layout == DumpLayout::kPacked) {
        detail::RemovePackedContainer(current_dir / "dump_tensor_data");
      }
    }
    NUMPROBE_RETURN_IF_ERROR(OpenGolden());
    header = JsonValue::MakeObject();
    header.Set("task", JsonValue::String(std::string(config.task_name())));
    header.Set("level", JsonValue::String(std::string(config.level_name())));
    header.Set("framework", JsonValue::String(options.framework));
    header.Set("dump_data_dir",
               FilesWanted()
                   ? JsonValue::String(fs::absolute(current_dir / "dump_tensor_data").string())
                   : JsonValue());
    // A new step starts its journal afresh (a rerun into the same path replaces the old one).
    NUMPROBE_RETURN_IF_ERROR(journal.Open(current_dir / std::string(kDumpJournalName)));
    NUMPROBE_RETURN_IF_ERROR(journal.AppendHeader(header));
    if (track_casts) NUMPROBE_RETURN_IF_ERROR(journal.AppendCastsMarker());
    step_opened = true;
    // The JSON files are first written at Stop()/Step(): until then the journal holds the step
    // (readers fall back to it), and writing them here too would cost a sync per step for nothing.
    return Status::Ok();
  }

  void ResetStepState() {
    deferred.clear();  // (WriteJsonFiles has written them)
    part_pending = false;
    entries.Clear();
    stacks.Clear();
    stack_groups.clear();
    construct.Clear();
    debug = JsonValue::MakeObject();
    casts.clear();
    journal.Close();
    step_opened = false;
    scope_active = false;
    list_modules_active.clear();
    selected_forward.clear();
    selected_modules.clear();
    pending_inputs.clear();
    stack_by_name.clear();
    written_revision.reset();
    candidates.clear();
    const IncrementalSummary whole = RunSummary();
    run_summary = whole;
    step_summary = IncrementalSummary();
    step_diff_names.clear();
    last_judge = std::move(judge);  // the next step has none until OpenGolden
  }
};

Dumper::Dumper(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

// Close() only throws std::bad_alloc; terminating then is the intended outcome.
Dumper::~Dumper() { (void)Close(); }  // NOLINT(bugprone-exception-escape)

Result<std::unique_ptr<Dumper>> Dumper::Open(DumpConfig config, DumperOptions options) {
  NUMPROBE_RETURN_IF_ERROR(config.Validate());
  if (config.dump_path.empty())
    return Status::InvalidArgument("config key 'dump_path': is required");
  if (std::error_code ec; !config.bench_path.empty() && !fs::exists(config.bench_path, ec)) {
    return Status::NotFound("config key 'bench_path': " + config.bench_path +
                            ": no such golden dump");
  }
  return std::unique_ptr<Dumper>(
      new Dumper(std::make_unique<Impl>(std::move(config), std::move(options))));
}

const DumpConfig& Dumper::config() const { return impl_->config; }

int64_t Dumper::step() const {
  std::lock_guard lock(impl_->mu);
  return impl_->step;
}

bool Dumper::active() const {
  std::lock_guard lock(impl_->mu);
  return impl_->Active();
}

std::filesystem::path Dumper::rank_dir() const {
  std::lock_guard lock(impl_->mu);
  return impl_->step_opened ? impl_->current_dir : impl_->StepDir();
}

int64_t Dumper::entry_count() const {
  std::lock_guard lock(impl_->mu);
  return static_cast<int64_t>(impl_->entries.size());
}

Status Dumper::SetRank(int64_t rank) {
  std::lock_guard lock(impl_->mu);
  Impl& d = *impl_;
  if (d.rank == rank) return Status::Ok();
  const std::string before = d.RankFolderName();
  d.rank = rank;
  // The files queued for the current folder are written before it is renamed.
  Status drained = d.writer.Drain();
  // Earlier steps this process wrote as proc{pid} are renamed too: every folder of a rank is
  // named by it, from its first record on.
  const std::string after = d.RankFolderName();
  std::error_code ec;
  for (int64_t s = 0; s < d.step; ++s) {
    const fs::path step_dir = fs::path(d.config.dump_path) / ("step" + std::to_string(s));
    if (!fs::is_directory(step_dir / before, ec) || fs::exists(step_dir / after, ec)) continue;
    fs::rename(step_dir / before, step_dir / after, ec);
    if (ec) {
      return Status::IoError((step_dir / before).string() + ": cannot rename to " + after + ": " +
                             ec.message());
    }
  }
  if (!d.step_opened) return drained;
  const fs::path target = d.StepDir();
  fs::create_directories(target.parent_path(), ec);
  if (fs::exists(target, ec)) fs::remove_all(target, ec);
  fs::rename(d.current_dir, target, ec);
  if (ec) {
    return Status::IoError(d.current_dir.string() + ": cannot rename to " + target.string() + ": " +
                           ec.message());
  }
  d.SetCurrentDir(target);
  if (d.FilesWanted()) {
    d.header.Set("dump_data_dir",
                 JsonValue::String(fs::absolute(target / "dump_tensor_data").string()));
  }
  return drained;
}

Status Dumper::Start() {
  std::lock_guard lock(impl_->mu);
  Impl& d = *impl_;
  if (d.closed) return Status::InvalidArgument("Start() after Close()");
  d.started = true;
  if (!d.Selected() || d.step_opened) return Status::Ok();
  return d.OpenStep();
}

Status Dumper::Stop() {
  std::lock_guard lock(impl_->mu);
  if (detail::CurrentProcessId() != impl_->owner_pid)
    return Status::Ok();  // a forked child writes nothing
  impl_->started = false;
  return impl_->WriteJsonFiles();
}

Status Dumper::Step() {
  std::lock_guard lock(impl_->mu);
  Impl& d = *impl_;
  if (detail::CurrentProcessId() != impl_->owner_pid)
    return Status::Ok();  // a forked child writes nothing
  d.started = false;
  Status st = d.WriteJsonFiles();
  d.ResetStepState();
  ++d.step;
  return st;
}

Status Dumper::Flush() {
  std::lock_guard lock(impl_->mu);
  if (detail::CurrentProcessId() != impl_->owner_pid) return Status::Ok();
  return impl_->writer.Drain();
}

Status Dumper::Close() {
  std::lock_guard lock(impl_->mu);
  Impl& d = *impl_;
  if (detail::CurrentProcessId() != impl_->owner_pid)
    return Status::Ok();  // a forked child writes nothing
  if (d.closed) return Status::Ok();
  d.started = false;
  (void)d.TakePrefetchedGolden({});  // no step follows
  Status st = d.WriteJsonFiles();
  // The last step's sync: everything is durable when the run ends.
  Status synced = d.writer.Drain();
  if (st.ok()) st = synced;
  d.writer.Shutdown();
  d.journal.Close();
  d.closed = true;
  return st;
}

void Dumper::Enter(std::string_view name) {
  std::lock_guard lock(impl_->mu);
  impl_->EnterLocked(name);
}

void Dumper::Leave(std::string_view name) {
  std::lock_guard lock(impl_->mu);
  impl_->LeaveLocked(name);
}

bool Dumper::Selected(std::string_view name) {
  std::lock_guard lock(impl_->mu);
  return impl_->SelectedLocked(name);
}

bool Dumper::NeedsData(std::string_view entry) const {
  std::lock_guard lock(impl_->mu);
  return impl_->config.summary_mode == SummaryMode::kMd5 || impl_->WantsFiles(entry);
}

Status Dumper::RecordForwardInputs(std::string_view name, const DumpValue& args,
                                   const DumpValue& kwargs) {
  std::lock_guard lock(impl_->mu);
  Impl& d = *impl_;
  d.candidates.clear();  // (an earlier record that failed may have left some)
  d.EnterLocked(name);
  if (!d.Active() || !d.Selected() || !d.config.dump_forward || !d.config.dump_input ||
      !d.SelectedLocked(name)) {
    return Status::Ok();
  }
  bool nonfinite = false;
  NUMPROBE_ASSIGN_OR_RETURN(JsonValue a, d.ConvertTop(args, name, "input", &nonfinite));
  NUMPROBE_ASSIGN_OR_RETURN(JsonValue k, d.ConvertTop(kwargs, name, "kwargs", &nonfinite));
  JsonValue part = ObjectOf(JsonValue::Member("input_args", std::move(a)),
                            JsonValue::Member("input_kwargs", std::move(k)));
  if (d.config.task == DumpTask::kOverflowCheck) {
    d.pending_inputs[std::string(name)] = {std::move(part), nonfinite};
    return Status::Ok();
  }
  NUMPROBE_RETURN_IF_ERROR(d.JudgeRecord(name, part));
  return d.Commit(name, std::move(part));
}

Status Dumper::RecordForwardOutputs(std::string_view name, const DumpValue& output,
                                    const DumpValue* parameters) {
  std::lock_guard lock(impl_->mu);
  Impl& d = *impl_;
  d.candidates.clear();  // (an earlier record that failed may have left some)
  const bool record =
      d.Active() && d.config.dump_forward && d.config.dump_output && d.SelectedLocked(name);
  Status st;
  if (record) {
    bool nonfinite = false;
    auto out = d.ConvertTop(output, name, "output", &nonfinite);
    if (!out) {
      st = out.error();
    } else {
      JsonValue part = ObjectOf(JsonValue::Member("output", std::move(*out)));
      bool params_ok = true;
      if (parameters != nullptr) {
        bool ignored = false;
        auto p = d.ConvertTop(*parameters, name, "parameters", &ignored);
        if (!p) {
          st = p.error();
          params_ok = false;
        } else {
          part.Set("parameters", std::move(*p));
        }
      }
      if (params_ok) {
        if (d.config.task == DumpTask::kOverflowCheck) {
          auto it = d.pending_inputs.find(std::string(name));
          if (nonfinite) {
            JsonValue whole = JsonValue::MakeObject();
            if (it != d.pending_inputs.end()) whole.Update(std::move(it->second.first));
            whole.Update(std::move(part));
            d.NoteOverflow(name, whole);
            st = d.Commit(name, std::move(whole));
          }
          if (it != d.pending_inputs.end()) d.pending_inputs.erase(it);
        } else {
          st = d.Keep(name, std::move(part), nonfinite);
        }
      }
    }
  } else if (d.config.task == DumpTask::kOverflowCheck) {
    d.pending_inputs.erase(std::string(name));
  }
  d.LeaveLocked(name);
  return st;
}

Status Dumper::RecordForward(std::string_view name, const DumpValue& args, const DumpValue& kwargs,
                             const DumpValue& output, const DumpValue* parameters) {
  NUMPROBE_RETURN_IF_ERROR(RecordForwardInputs(name, args, kwargs));
  return RecordForwardOutputs(name, output, parameters);
}

Status Dumper::RecordBackward(std::string_view name, const DumpValue& grad_outputs,
                              const DumpValue& grad_inputs) {
  std::lock_guard lock(impl_->mu);
  Impl& d = *impl_;
  d.candidates.clear();  // (an earlier record that failed may have left some)
  if (!d.Active() || !d.config.dump_backward || !d.SelectedLocked(name)) return Status::Ok();
  JsonValue part = JsonValue::MakeObject();
  bool in_nonfinite = false;
  bool out_nonfinite = false;
  if (d.config.dump_input) {
    NUMPROBE_ASSIGN_OR_RETURN(JsonValue in,
                              d.ConvertTop(grad_outputs, name, "input", &in_nonfinite));
    part.Set("input", std::move(in));
  }
  if (d.config.dump_output) {
    NUMPROBE_ASSIGN_OR_RETURN(JsonValue out,
                              d.ConvertTop(grad_inputs, name, "output", &out_nonfinite));
    part.Set("output", std::move(out));
  }
  if (part.object().empty()) return Status::Ok();
  if (d.config.task == DumpTask::kOverflowCheck) {
    if (!out_nonfinite) return Status::Ok();
    d.NoteOverflow(name, part);
    return d.Commit(name, std::move(part));
  }
  return d.Keep(name, std::move(part), out_nonfinite);
}

Status Dumper::RecordParameterGrad(std::string_view entry, std::string_view param,
                                   const DumpValue& grad) {
  std::lock_guard lock(impl_->mu);
  Impl& d = *impl_;
  d.candidates.clear();  // (an earlier record that failed may have left some)
  if (!d.Active() || !d.config.dump_backward || !d.SelectedLocked(entry)) return Status::Ok();
  const std::string save_name = std::string(entry) + "." + std::string(param);
  Impl::Walk w{entry, ""};
  w.files = d.WantsFiles(entry);
  w.judged = d.Incremental();
  w.save_name = &save_name;
  NUMPROBE_ASSIGN_OR_RETURN(JsonValue g, d.Convert(grad, w, 0));
  JsonValue part = JsonValue::MakeObject();
  JsonValue::Array grads;
  grads.push_back(std::move(g));  // (MakeArray({g}) would copy g out of its initializer list)
  part.Set(std::string(param), JsonValue::MakeArray(std::move(grads)));
  if (d.config.task == DumpTask::kOverflowCheck) {
    if (!w.nonfinite) return Status::Ok();
    d.NoteOverflow(entry, part);
    return d.Commit(entry, std::move(part));
  }
  return d.Keep(entry, std::move(part), w.nonfinite);
}

Status Dumper::RecordDebug(std::string_view name, const DumpValue& value) {
  std::lock_guard lock(impl_->mu);
  Impl& d = *impl_;
  if (!d.Active() || !d.Selected()) return Status::Ok();
  Impl::Walk w{name, "debug"};
  w.files = d.config.task == DumpTask::kTensor;
  NUMPROBE_ASSIGN_OR_RETURN(JsonValue v, d.Convert(value, w, 0));
  const std::string key = std::string(name) + ".debug";
  NUMPROBE_RETURN_IF_ERROR(d.Journal(DumpJournalWriter::DebugLine(key, v)));
  d.debug.Set(key, std::move(v));
  ++d.revision;
  return Status::Ok();
}

void Dumper::TrackCasts() {
  std::lock_guard lock(impl_->mu);
  Impl& d = *impl_;
  if (d.track_casts) return;
  d.track_casts = true;
  ++d.revision;  // casts.json is written from now on
  if (d.step_opened) {
    (void)d.journal.AppendCastsMarker();
  }
}

Status Dumper::AddCast(std::string_view name, const DumpValue& input, const DumpValue& output,
                       const std::vector<std::string>& stack) {
  std::lock_guard lock(impl_->mu);
  Impl& d = *impl_;
  if (!d.Active() || !d.Selected() || !d.track_casts) return Status::Ok();
  if (input.kind() != DumpValue::Kind::kTensor || output.kind() != DumpValue::Kind::kTensor) {
    return Status::InvalidArgument(std::string(name) + ": a cast records two tensors");
  }
  if (input.tensor().pending_slot >= 0 || output.tensor().pending_slot >= 0) {
    return Status::InvalidArgument(std::string(name) +
                                   ": a cast's statistics cannot wait for ResolvePending");
  }
  Impl::Walk w{name, "cast"};  // statistics only: casts write no tensor files
  NUMPROBE_ASSIGN_OR_RETURN(JsonValue in, d.TensorLeaf(input.tensor(), w));
  NUMPROBE_ASSIGN_OR_RETURN(JsonValue out, d.TensorLeaf(output.tensor(), w));
  // Its place in execution order: the entries recorded before it (dump.json holds the cast
  // itself at risk level ALL, its entry made when its input was recorded).
  const std::optional<size_t> own = d.entries.IndexOf(name);
  const auto before = static_cast<int64_t>(own ? *own : d.entries.size() + d.deferred.size());
  JsonValue note = CastNoteJson(name, before, std::move(in), std::move(out),
                                d.config.extra_info ? stack : std::vector<std::string>());
  NUMPROBE_RETURN_IF_ERROR(d.journal.AppendCast(note));
  d.casts.push_back(std::move(note));
  ++d.revision;
  return Status::Ok();
}

void Dumper::AddStack(std::string_view name, std::vector<std::string> frames) {
  std::lock_guard lock(impl_->mu);
  Impl& d = *impl_;
  if (!d.Active() || !d.config.extra_info) return;
  if (d.config.task == DumpTask::kOverflowCheck || d.Checking()) {
    d.stack_by_name[std::string(name)] = frames;
  }
  if (!d.Selected()) return;
  (void)d.journal.AppendStack(name, frames);
  d.stacks.Add(name, std::move(frames));
  ++d.revision;
}

void Dumper::AddStack(std::string_view name,
                      std::shared_ptr<const std::vector<std::string>> frames) {
  std::lock_guard lock(impl_->mu);
  Impl& d = *impl_;
  if (!d.Active() || !d.config.extra_info || frames == nullptr) return;
  if (d.config.task == DumpTask::kOverflowCheck || d.Checking()) {
    d.stack_by_name[std::string(name)] = *frames;
  }
  if (!d.Selected()) return;
  auto it = d.stack_groups.find(frames.get());
  if (it != d.stack_groups.end() && d.stacks.AddToGroup(name, it->second.second)) {
    (void)d.journal.AppendStackRef(name, it->second.second);
  } else {
    const size_t before = d.stacks.group_count();
    const size_t group = d.stacks.Add(name, *frames);
    if (group == before) {
      (void)d.journal.AppendStack(name, *frames);
    } else {
      (void)d.journal.AppendStackRef(name, group);
    }
    const auto* key = frames.get();
    d.stack_groups[key] = {std::move(frames), group};
  }
  ++d.revision;
}

void Dumper::AddConstruct(std::string_view name, std::optional<std::string_view> parent) {
  std::lock_guard lock(impl_->mu);
  Impl& d = *impl_;
  if (!d.started || d.closed || !d.Selected() || !d.config.extra_info) return;
  if (d.config.level == DumpLevel::kL1 || d.config.level == DumpLevel::kL2) return;
  std::optional<std::string> p;
  if (parent) p = std::string(*parent);
  (void)d.journal.AppendConstruct(name, p);
  d.construct.Add(name, std::move(p));
  ++d.revision;
}

Status Dumper::ResolvePending(const std::vector<PendingValues>& slots) {
  std::lock_guard lock(impl_->mu);
  return impl_->FlushDeferred(&slots);
}

int64_t Dumper::pending_records() const {
  std::lock_guard lock(impl_->mu);
  return static_cast<int64_t>(impl_->deferred.size());
}

std::optional<IncrementalSummary> Dumper::incremental_summary() const {
  std::lock_guard lock(impl_->mu);
  if (!impl_->Incremental()) return std::nullopt;
  return impl_->RunSummary();
}

std::optional<DivergenceNotice> Dumper::TakeDivergence() {
  std::lock_guard lock(impl_->mu);
  Impl& d = *impl_;
  if (!d.divergence || d.divergence_taken) return std::nullopt;
  d.divergence_taken = true;
  return d.divergence;
}

std::optional<OverflowReport> Dumper::TakeOverflowReport() {
  std::lock_guard lock(impl_->mu);
  if (impl_->overflow_reports.empty()) return std::nullopt;
  OverflowReport r = std::move(impl_->overflow_reports.front());
  impl_->overflow_reports.pop_front();
  return r;
}

}  // namespace numprobe
