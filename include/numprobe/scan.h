// Offline anomaly analysis of an msprobe dump (numprobe scan): the op where NaN/Inf was born
// (ordered across ranks through the communication ops, with msprobe's directed and undirected
// rules), MindInsight's watchpoints where the dump has the data (zero, vanishing or exploding
// gradients, weights not updated or updated too much or too little, tensors too large, activation
// ranges), and the precision headroom of every tensor in fp16, bf16 and fp8 (which tensors and
// layers would overflow or underflow). Statistics come from dump.json, or exactly from the tensor
// files of a tensor-mode dump. A ScanReport owns all its memory.
#ifndef NUMPROBE_SCAN_H_
#define NUMPROBE_SCAN_H_

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "numprobe/dtype.h"
#include "numprobe/enum_names.h"
#include "numprobe/json_value.h"
#include "numprobe/result.h"

namespace numprobe {

namespace detail {
class TextArena;  // core/text_arena.h: where a report's headroom texts live
}  // namespace detail

// MindInsight's watchpoint conditions that a dump can answer.
enum class Watchpoint : uint8_t {
  kGradientAllZero,       // a parameter gradient is exactly zero everywhere
  kGradientVanishing,     // 0 < |grad|_2 < grad_norm_min
  kGradientExploding,     // |grad|_2 > grad_norm_max, or the gradient holds NaN/Inf
  kWeightNotChanged,      // a trainable weight is allclose to itself one step earlier
  kWeightChangeTooLarge,  // mean|w - w_prev| / (mean|w_prev| + eps) > update_ratio_max
  kWeightChangeTooSmall,  // the same ratio < update_ratio_min (needs tensor files)
  kTensorTooLarge,        // a floating tensor with finite max|x| > tensor_abs_max
  kActivationRange,       // an activation's output range or in-range percentage off limits
};
// MindInsight's condition ids, lower case.
inline constexpr EnumNameEntry<Watchpoint> kWatchpointNames[] = {
    {Watchpoint::kGradientAllZero, "gradient_all_zero"},
    {Watchpoint::kGradientVanishing, "gradient_vanishing"},
    {Watchpoint::kGradientExploding, "gradient_exploding"},
    {Watchpoint::kWeightNotChanged, "weight_not_changed"},
    {Watchpoint::kWeightChangeTooLarge, "weight_change_too_large"},
    {Watchpoint::kWeightChangeTooSmall, "weight_change_too_small"},
    {Watchpoint::kTensorTooLarge, "tensor_too_large"},
    {Watchpoint::kActivationRange, "activation_range"}};
constexpr const auto& EnumNameTable(Watchpoint /*unused*/) { return kWatchpointNames; }
inline constexpr int kWatchpointCount = std::size(kWatchpointNames);

// Thresholds of the watchpoints; the defaults are documented in docs/scan.md.
// The command-line names of headroom targets (another dtype's name is its dtype.h name).
inline constexpr EnumNameEntry<DType> kHeadroomTargetNames[] = {
    {DType::kF16, "fp16"},
    {DType::kBF16, "bf16"},
    {DType::kF8E4M3FN, "fp8_e4m3"},
    {DType::kF8E5M2, "fp8_e5m2"},
    {DType::kF8E4M3FNUZ, "fp8_e4m3fnuz"},
    {DType::kF8E5M2FNUZ, "fp8_e5m2fnuz"}};
constexpr std::string_view HeadroomTargetName(DType target) {
  return NameIn(kHeadroomTargetNames, target, Name(target));
}
constexpr std::optional<DType> ParseHeadroomTarget(std::string_view name) {
  return FromNameIn<DType>(kHeadroomTargetNames, name);
}

struct ScanThresholds {
  double grad_norm_min = 1e-8;
  double grad_norm_max = 1e3;
  double weight_rtol = 1e-5;  // weight_not_changed: allclose(w, w_prev, rtol, atol)
  double weight_atol = 1e-8;
  double update_ratio_max = 0.1;
  double update_ratio_min = 1e-4;
  double update_epsilon = 1e-9;
  double tensor_abs_max = 1e4;
  double act_max_min_lt = 1e-6;  // activation output Max - Min below this: collapsed
  double act_max_min_gt = 1e4;   // ... above this: exploding range
  // Optional range test on tensor files: share (in percent) of elements inside [first, second].
  std::optional<std::pair<double, double>> act_range;
  std::optional<double> act_range_pct_lt;
  std::optional<double> act_range_pct_gt;
};

inline constexpr std::array<DType, 4> kDefaultHeadroomTargets = {DType::kF16, DType::kBF16,
                                                                 DType::kF8E4M3FN, DType::kF8E5M2};

struct ScanOptions {
  // Target dtypes of the precision headroom (floating, 16 or 8 bits), each at most once.
  std::vector<DType> targets{kDefaultHeadroomTargets.begin(), kDefaultHeadroomTargets.end()};
  ScanThresholds thresholds;
  std::array<bool, kWatchpointCount> watch = {true, true, true, true, true, true, true, true};
  // Read the tensor files of a tensor-mode dump for exact statistics (false: dump.json only).
  bool read_tensor_files = true;
  // --max-memory: the most one tensor file's decompressed storages may take (memory_limit.h);
  // 0 = DefaultMaxMemory(). A file over it is refused before allocating (a warning; the row keeps
  // dump.json's statistics).
  uint64_t max_memory = 0;
};

// One tensor as scan saw it. Unknown numbers are NaN with their has_* flag false.
struct ScanTensor {
  std::string name;   // msprobe's row name: "Tensor.__mul__.0.forward.output.0"
  std::string dtype;  // as dumped: "torch.float32"
  std::string shape;  // as dumped: "[2, 4, 16, 16]"
  bool is_tensor = false;
  bool exact = false;  // statistics computed from the tensor file
  bool has_max = false, has_min = false, has_mean = false, has_norm = false;
  double max = 0, min = 0, mean = 0, norm = 0;
  bool nonfinite = false;  // NaN or +-Inf present (or a NaN/Inf scalar argument)
  int64_t count = -1;      // elements; -1 when unknown
  int64_t nan_count = -1, inf_count = -1, zero_count = -1;  // tensor files only
  double max_abs = 0;                                       // NaN when unknown
  double min_nonzero_abs = 0;                               // NaN when unknown
  std::string file;                                         // tensor file used (empty when none)
};

enum class AnomalyKind : uint8_t {
  kCompute,        // finite inputs, non-finite output
  kCommunication,  // every sender's input finite, this rank's output not
  kInheritedInput  // the first op of a rank whose inputs were already non-finite (data, weights)
};
inline constexpr EnumNameEntry<AnomalyKind> kAnomalyKindNames[] = {
    {AnomalyKind::kCompute, "compute"},
    {AnomalyKind::kCommunication, "communication"},
    {AnomalyKind::kInheritedInput, "input"}};
constexpr const auto& EnumNameTable(AnomalyKind /*unused*/) { return kAnomalyKindNames; }

struct AnomalyNode {
  AnomalyKind kind = AnomalyKind::kCompute;
  std::string scope;        // "step0", "graph/step1", "" for a lone dump.json
  int64_t step = -1;        // -1 when the dump has no step folder
  std::string rank_folder;  // "rank1", "proc18393", "" for a lone dump.json
  int64_t rank = 0;         // rank{N}'s N; the position for proc folders
  std::string op_name;
  uint32_t entry_index = 0;  // position in dump.json (execution order)
  double time = 0;           // communication level (ops between levels L-1 and L get L - 0.5)
  std::vector<std::string> module_path;  // construct.json, outermost first
  std::vector<std::string> stack;        // stack.json lines
  std::vector<ScanTensor> inputs;        // inputs, kwargs and parameters
  std::vector<ScanTensor> outputs;
  std::string raw_entry;  // the entry's value in dump.json as JSON text (for msprobe's file)
};

struct WatchpointHit {
  Watchpoint watchpoint = Watchpoint::kGradientAllZero;
  std::string scope;
  int64_t step = -1;
  std::string rank_folder;
  int64_t rank = 0;
  std::string tensor;     // row name, or the parameter ("Module.fc1.Linear.weight")
  std::string op_name;    // the dump entry
  std::string condition;  // "norm > 1000"
  double actual = 0;
  double threshold = 0;
  bool exact = false;  // decided from tensor data rather than from statistics
  std::string detail;
};

// How a tensor fits one target dtype.
struct TargetFit {
  bool overflow = false;     // max|x| rounds to Inf/NaN in the target
  bool underflow = false;    // the smallest non-zero |x| rounds to zero
  bool subnormal = false;    // ... lands among the target's subnormals (precision loss)
  bool min_known = false;    // the smallest non-zero |x| is known
  double headroom_log2 = 0;  // log2(max_finite / max|x|); negative = overflow; NaN if max|x| = 0
};

// Where headroom rows were dumped: one step of one rank folder.
struct HeadroomUnit {
  std::string scope;
  int64_t step = -1;
  std::string rank_folder;
  int64_t rank = 0;
};

// A tensor's headroom. A large dump has millions of them: the texts are views into the
// ScanReport's headroom_texts (valid as long as the report, or a copy of it, lives), not strings
// of their own; its step and rank are its unit's (ScanReport::headroom_units), not repeated in
// every row; and its fit to each target is derived when asked (FitOf below), not stored. Up to
// six fits made a row 240 bytes, and the unit's texts and numbers 136 instead of 88: a large
// scan's memory is mostly these rows.
struct HeadroomRow {
  std::string_view tensor;
  std::string_view op_name;
  std::string_view layer;  // innermost module ("Module.qkv.Linear") or the op ("Tensor.__mul__")
  std::string_view dtype;
  uint32_t unit = 0;  // index into ScanReport::headroom_units
  bool exact = false;
  bool nonfinite = false;  // already NaN/Inf: no verdict
  double max_abs = 0;
  double min_nonzero_abs = 0;  // NaN when unknown
};

// How the row's tensor fits `target` (one of ScanOptions::targets, or any 16- or 8-bit float
// type): a pure function of max_abs and min_nonzero_abs. A nonfinite row has no verdict; its
// fit says nothing.
TargetFit FitOf(const HeadroomRow& row, DType target);

struct LayerHeadroom {
  std::string layer;
  int64_t tensors = 0;  // tensors of the layer that overflow (or underflow) the target
  double max_abs = 0;
  double worst_headroom_log2 = 0;
  std::string worst_tensor;
};

struct HeadroomSummary {
  DType target = DType::kF16;
  int64_t tensors = 0;  // tensors with a verdict
  int64_t overflow = 0;
  int64_t underflow = 0;
  int64_t subnormal = 0;
  int64_t min_unknown = 0;                  // no smallest non-zero |x| (statistics span zero)
  std::vector<LayerHeadroom> keep_higher;   // layers with an overflowing tensor
  std::vector<LayerHeadroom> underflowing;  // layers with an underflowing tensor
};

struct ScanReport {
  std::string dump;  // the path scanned
  std::string task;  // statistics | tensor | ... (of the first dump.json)
  std::string framework;
  std::string level;
  bool md5_mode = false;  // md5 checksums without statistics in every file: no finiteness or
                          // headroom information (md5 dumps with Max/Min/... are scanned)
  std::vector<std::string> scopes;  // steps in order
  int64_t ranks = 0;                // distinct ranks (by rank number) over all steps
  int64_t rank_folders = 0;         // rank folders over all steps (steps x ranks when complete)
  int64_t entries = 0;
  int64_t tensors = 0;
  int64_t tensor_files_read = 0;
  ScanOptions options;
  std::vector<AnomalyNode> anomalies;  // every birth, first anomaly first
  std::vector<WatchpointHit> hits;
  std::vector<HeadroomRow> headroom;
  std::vector<HeadroomUnit> headroom_units;  // the units headroom's rows name
  // The memory headroom's texts live in (shared, so that a copied report's views stay valid).
  std::vector<std::shared_ptr<const detail::TextArena>> headroom_texts;
  std::vector<HeadroomSummary> headroom_summary;  // parallel to options.targets
  std::vector<std::string> warnings;

  const AnomalyNode* first_anomaly() const { return anomalies.empty() ? nullptr : &anomalies[0]; }
  // The unit `row` names; a unit of its own (no step, no rank folder) when headroom_units does
  // not hold it (a report assembled by hand).
  const HeadroomUnit& UnitOf(const HeadroomRow& row) const;
  bool has_overflow() const;
  // Anything found: an anomaly, a watchpoint hit or a headroom overflow.
  bool findings() const { return !anomalies.empty() || !hits.empty() || has_overflow(); }
};

// Scans the dump at `path`: a dump.json file, a rank folder, a step folder (rank*/proc*), a dump
// root (step*), or MindSpore's graph/pynative split. kNotFound when it holds no dump;
// kCorrupt/kOutOfRange for a malformed dump.json, stack.json or construct.json (named in the
// message); kInvalidArgument for bad options. Unreadable tensor files are reported as warnings
// and their statistics taken from dump.json.
Result<ScanReport> ScanDump(const std::filesystem::path& path, const ScanOptions& options = {});

struct ScanOutputFiles {
  std::filesystem::path json;             // scan_{ts}.json
  std::filesystem::path anomalies_csv;    // scan_anomalies_{ts}.csv
  std::filesystem::path watchpoints_csv;  // scan_watchpoints_{ts}.csv
  std::filesystem::path headroom_csv;     // scan_headroom_{ts}.csv
  std::filesystem::path anomaly_analyze;  // anomaly_analyze_{ts}.json (msprobe's); empty if none
};

// Writes the report's files into `dir` (created if missing), each atomically. kIoError when a
// file cannot be written.
Result<ScanOutputFiles> WriteScanReport(const ScanReport& report, const std::filesystem::path& dir,
                                        std::string_view timestamp);

// scan_{ts}.json (as WriteScanReport writes it) read back as a document, for the UI, which shows
// its members as they are. kCorrupt for malformed JSON or a root that is not an object;
// kOutOfRange for nesting deeper than kMaxJsonDepth (core/json.h).
Result<JsonValue> ParseScanJson(std::string_view text);

}  // namespace numprobe

#endif  // NUMPROBE_SCAN_H_
