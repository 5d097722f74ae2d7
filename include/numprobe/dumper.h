// Dumper: the capture API. It records the inputs, outputs and parameters of named ops (tensors as
// TensorViews, plus plain values) and writes msprobe's dump tree:
//   dump_path/step{N}/rank{R}|proc{pid}/dump.json stack.json construct.json dump_tensor_data/
// Statistics are computed on the caller's memory when a value is recorded, so the views only need
// to stay valid for the duration of the Record* call; tensor files are written from a private
// copy on a background thread (bounded queue; a record naming files is journaled once they are
// complete, and a step's files are made durable together at its end unless the config's
// tensor_durability is "file": capture/tensor_file_writer.h). Every recorded part is appended to
// a journal (dump.json.journal,
// one JSON line per record, copied into a shared mapping of the file, so that it survives even a
// SIGKILL) before the call returns (with async_dump, once their device statistics have been
// resolved: see ResolvePending), and
// dump.json is replaced atomically at Stop()/Step(), so a crash loses nothing already recorded
// (see dump_journal.h for reading it back). With bench_path (an incremental dump), each record
// is judged against the golden's entry of the same name before its tensor files are queued, and
// only leaves over their tolerance get files (BaselineJudge); incremental.json beside dump.json
// says what was judged and the bytes not written. The PyTorch layer (python/numprobe) is built on
// this class; C++ programs use it directly to dump their own kernels. All methods are thread-safe.
#ifndef NUMPROBE_DUMPER_H_
#define NUMPROBE_DUMPER_H_

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "numprobe/dump_config.h"
#include "numprobe/json_value.h"
#include "numprobe/result.h"
#include "numprobe/tensor.h"

namespace numprobe {

// A tensor to record. The view is read during the Record* call only.
struct TensorArg {
  TensorView view;  // `data` may be null when `precomputed` is set (device tensors)
  bool requires_grad = false;
  std::string type = "torch.Tensor";
  // Max, Min, Mean, Norm computed elsewhere (on a device), as they should appear in dump.json.
  // When set, no statistics are computed here and no tensor file can be written.
  std::optional<std::vector<JsonValue>> precomputed;
  // async_dump: the statistics are still being computed on the device and arrive later through
  // Dumper::ResolvePending as slots[pending_slot]; -1 = not pending.
  int64_t pending_slot = -1;
  // With pending_slot: the data arrives then too (a host copy still in flight on a copy stream),
  // and with it the tensor's file and md5.
  bool pending_data = false;
};

// async_dump: what Dumper::ResolvePending brings for one pending slot.
struct PendingValues {
  std::vector<JsonValue> stats;  // [Max, Min, Mean, Norm], as they should appear in dump.json
  // The host copy of a TensorArg recorded with pending_data (read during the call only); null
  // data: none (the leaf gets no file and a null md5).
  TensorView data;
};

// A recorded value: a tensor, a plain value written as {"type": T, "value": V}, None, a literal
// JSON object, or a list / dict nesting them (dumped with the same nesting).
class DumpValue {
 public:
  enum class Kind : uint8_t { kNone, kPlain, kTensor, kList, kDict, kLiteral };
  using Items = std::vector<DumpValue>;
  using Members = std::vector<std::pair<std::string, DumpValue>>;

  DumpValue() = default;  // None (null)
  static DumpValue None() { return {}; }
  // {"type": type, "value": value}, e.g. Plain("slice", [0, null, 2]), Plain("torch.Size", [2, 3]).
  static DumpValue Plain(std::string type, JsonValue value);
  static DumpValue Int(int64_t v) { return Plain("int", JsonValue::Int(v)); }
  static DumpValue Float(double v) { return Plain("float", JsonValue::Double(v)); }
  static DumpValue Bool(bool v) { return Plain("bool", JsonValue::Bool(v)); }
  static DumpValue Str(std::string v) { return Plain("str", JsonValue::String(std::move(v))); }
  static DumpValue Tensor(TensorArg tensor);
  static DumpValue List(Items items);
  static DumpValue Dict(Members members);
  // Written exactly as given (e.g. a ProcessGroup's {"type", "group_ranks", "group_id"}).
  static DumpValue Literal(JsonValue value);

  Kind kind() const { return kind_; }
  const std::string& plain_type() const { return text_; }
  const JsonValue& json() const { return json_; }
  const TensorArg& tensor() const { return *tensor_; }
  const Items& items() const { return items_; }
  const Members& members() const { return members_; }

 private:
  Kind kind_ = Kind::kNone;
  std::string text_;
  JsonValue json_;
  std::shared_ptr<const TensorArg> tensor_;
  Items items_;
  Members members_;
};

struct DumperOptions {
  std::string framework = "pytorch";  // dump.json's "framework"
  int64_t pid = 0;                    // for the proc{pid} folder; 0 = this process
  std::optional<int64_t> rank;        // rank{R} folder when set, else proc{pid}
  // Tensor bytes copied but not yet written; Record* waits when more would be pending.
  uint64_t max_pending_bytes = uint64_t{1} << 30;
  // Written copies' buffers kept for the next step's copies of the same size, so that their pages
  // are not faulted in again every step (capture/copy_buffer_pool.h); 0 keeps none.
  uint64_t max_idle_copy_bytes = uint64_t{256} << 20;
};

// What overflow_check found first: the op, where, and a printable multi-line report.
struct OverflowReport {
  std::string name;
  int64_t step = 0;
  std::string rank;  // "rank0" or "proc123"
  std::string report;
};

// An incremental dump (DumpConfig::bench_path): what was judged against the golden and what that
// saved. Counts are of tensor leaves; bytes are tensor data bytes.
struct IncrementalSummary {
  std::string bench;            // the golden dump.json judged against last ("" when none)
  int64_t tensors_judged = 0;   // paired with a golden row and judged
  int64_t tensors_over = 0;     // over their tolerance
  int64_t entries_over = 0;     // entries with a row over its tolerance
  int64_t tensors_written = 0;  // tensor files written
  uint64_t bytes_written = 0;
  uint64_t bytes_not_written = 0;  // tensors a full tensor dump would have written
  std::string first_divergence;    // the first entry with a row over tolerance ("" when none)
  int64_t first_divergence_step = -1;
};

// The first entry of an incremental dump whose record left the golden behind, once.
struct DivergenceNotice {
  std::string name;
  int64_t step = 0;
  std::string rank;    // "rank0" or "proc123"
  std::string report;  // printable, multi-line: the entry, its rows over tolerance, the golden
};

class Dumper {
 public:
  // Validates `config` and prepares (nothing is created on disk until Start()).
  static Result<std::unique_ptr<Dumper>> Open(DumpConfig config, DumperOptions options = {});
  ~Dumper();  // Close(), ignoring errors  NOLINT(bugprone-exception-escape): see dumper.cc
  Dumper(const Dumper&) = delete;
  Dumper& operator=(const Dumper&) = delete;

  const DumpConfig& config() const;
  int64_t step() const;
  // Whether records of the current step are kept: started, step and rank selected, and
  // overflow_check's overflow_nums not reached; or looked at for NaN/Inf only, when the closed
  // loop's overflow check (DumpConfig::loop) covers a step that is not dumped.
  bool active() const;
  // The folder of the current step (whether it exists yet or not).
  std::filesystem::path rank_dir() const;
  int64_t entry_count() const;

  // Sets the rank (torch.distributed became available). The proc{pid} folders this process wrote
  // (the current step's and earlier ones) are renamed to rank{R}, after the queued tensor files
  // are written. kIoError if that fails.
  Status SetRank(int64_t rank);
  // Begins or resumes dumping the current step: creates its folder, the journal and empty JSON
  // files. No-op when the step or rank is not selected.
  Status Start();
  // Waits for pending tensor files, then writes dump.json, stack.json and construct.json of the
  // current step atomically (temporary file + rename). Recording stops until the next Start().
  // Their sync (with the step's tensor files) runs in the background: the step's journal gains
  // its written marker once they are durable, and the next Stop(), Flush() or Close() reports a
  // failed sync. Until then a reader reads the step from the journal, with the same content.
  Status Stop();
  // Stop(), then moves to the next step (counters and in-memory entries start afresh).
  Status Step();
  // Waits until everything recorded so far is written and the last step end's files are durable
  // (for a reader in the same process: the closed loop's compare). Their first error.
  Status Flush();
  // Stop(), Flush() and ends the background writer. Further calls are no-ops.
  Status Close();

  // Range tracking for scope/list: an op or module named `name` starts / ends. Record* of a
  // forward entry imply Enter (inputs) and Leave (outputs) of that name.
  void Enter(std::string_view name);
  void Leave(std::string_view name);
  // Whether an entry named `name` passes the scope/list filter now.
  bool Selected(std::string_view name);
  // Whether records of `entry` use their tensors' data (md5 summaries, tensor files, or leaves an
  // incremental dump may write), so that a caller holding device tensors copies to the host only
  // those: a statistics dump with a tensor_list needs the listed entries' data alone.
  bool NeedsData(std::string_view entry) const;

  // Forward inputs of `name` ("input_args" from the List `args`, "input_kwargs" from the Dict
  // `kwargs`), recorded now, before the op runs (so in-place ops show their inputs as they were).
  Status RecordForwardInputs(std::string_view name, const DumpValue& args, const DumpValue& kwargs);
  // Forward outputs (a List) and, for modules, parameters (a Dict) of `name`.
  Status RecordForwardOutputs(std::string_view name, const DumpValue& output,
                              const DumpValue* parameters = nullptr);
  // Both of the above in one call (modules, whose inputs are taken at the end).
  Status RecordForward(std::string_view name, const DumpValue& args, const DumpValue& kwargs,
                       const DumpValue& output, const DumpValue* parameters = nullptr);
  // A backward entry: "input" = gradients of the op's outputs, "output" = gradients of its inputs
  // (msprobe's meaning). Both are Lists.
  Status RecordBackward(std::string_view name, const DumpValue& grad_outputs,
                        const DumpValue& grad_inputs);
  // One parameter's gradient into "<module>.parameters_grad.<n>": {param: [T]}.
  Status RecordParameterGrad(std::string_view entry, std::string_view param, const DumpValue& grad);
  // debug.json (PrecisionDebugger.save): `name` ("x.0" for the first save of "x") holds `value`
  // as analyzed; tensor files are named "<name>.debug[.<index>].pt".
  Status RecordDebug(std::string_view name, const DumpValue& value);
  // stack.json: the call stack of `name`, innermost frame first, as msprobe formats frames
  // ("File p, line n, in f, \n source"). Identical stacks are stored once.
  void AddStack(std::string_view name, std::vector<std::string> frames);
  // The same for a stack the caller keeps and hands over again for each record made at it: after
  // its first record in a step, a record costs a reference in the journal instead of the frames.
  void AddStack(std::string_view name, std::shared_ptr<const std::vector<std::string>> frames);
  // construct.json: `name`'s parent module (nullopt = null). A name keeps its first position.
  void AddConstruct(std::string_view name, std::optional<std::string_view> parent);

  // casts.json (casts.h): from now on each step writes the narrowing casts given to AddCast (an
  // empty list when there were none) beside dump.json. Off by default: a capture that does not
  // watch its casts writes no casts.json, so readers do not mistake "not watched" for "none".
  void TrackCasts();
  // One narrowing cast `name` (msprobe's entry name for the call at risk_level ALL) from `input`
  // to `output` (tensors, statistics computed now; no tensor files), at `stack` (innermost frame
  // first; dropped when extra_info is off). No-op unless TrackCasts was called and the step is
  // active. kInvalidArgument for non-tensors or pending (async) statistics.
  Status AddCast(std::string_view name, const DumpValue& input, const DumpValue& output,
                 const std::vector<std::string>& stack);

  // async_dump: the statistics (and, for pending_data, the data) of the TensorArgs recorded with a
  // pending_slot since the last call, slots[slot]. Until then those records, and every record
  // after the first of them (so that dump.json keeps the execution order), wait in memory; here
  // their files are queued and they are journaled and merged, in order. Call it before
  // Stop()/Step(), which otherwise write the waiting records with null statistics and without
  // the files whose data never came. kInvalidArgument for a slot without a value.
  Status ResolvePending(const std::vector<PendingValues>& slots);
  // Records waiting for ResolvePending.
  int64_t pending_records() const;

  // overflow_check, and the closed loop's overflow check: the first overflow not yet taken, once.
  std::optional<OverflowReport> TakeOverflowReport();

  // Incremental dump (bench_path): the whole run's summary so far (nullopt without bench_path),
  // and the first divergence, once (the front ends print it and, with stop_at_first, stop).
  std::optional<IncrementalSummary> incremental_summary() const;
  std::optional<DivergenceNotice> TakeDivergence();

 private:
  struct Impl;
  explicit Dumper(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace numprobe

#endif  // NUMPROBE_DUMPER_H_
