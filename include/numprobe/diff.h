// Diffing the tensors of two files or folders across frameworks (TroubleShooter's weight compare):
// any two of .pt/.pth, .ckpt, .safetensors, .npz, a folder of .npy files or an msprobe dump tree.
// Tensors are paired by exact name, then by the built-in PyTorch <-> MindSpore parameter names,
// then by a user map, then (for unnamed tensors such as gradients) by aligning the sequences of
// (shape, dtype); each pair gets TroubleShooter's columns plus numprobe's compare metrics.
// A DiffSource owns its tensors (memory maps or heap copies); a DiffReport owns both sources and
// refers to their tensors by index.
#ifndef NUMPROBE_DIFF_H_
#define NUMPROBE_DIFF_H_

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "numprobe/enum_names.h"
#include "numprobe/result.h"
#include "numprobe/tensor_file.h"
#include "numprobe/verdict.h"

namespace numprobe {

class ThreadPool;

// One side of a diff.
struct DiffSource {
  std::filesystem::path path;
  std::string kind;  // "pt", "ckpt", "safetensors", "npz", "npy", "npy folder", "dump"
  std::vector<NamedTensor> tensors;  // file order; folders: natural order of relative paths
  std::vector<std::string> warnings;
};

// Loads `path`: a tensor file (every tensor in it), or a folder whose .npy files, and whose tensor
// files under dump_tensor_data/ folders, are read recursively. A folder tensor is named by its
// path relative to `path` without the extension, with dump_tensor_data/ segments dropped
// ("rank0/Functional.conv2d.0.forward.output.0"). Symlinks are skipped. kNotFound when the path
// does not exist or a folder holds no tensor file; reader errors carry the file's path.
Result<DiffSource> LoadDiffSource(const std::filesystem::path& path,
                                  const ReadOptions& options = {});

// How a pair was found.
enum class PairRule : uint8_t { kExact, kFramework, kUserMap, kShapeAligned };
inline constexpr EnumNameEntry<PairRule> kPairRuleNames[] = {
    {PairRule::kExact, "exact"},
    {PairRule::kFramework, "framework"},
    {PairRule::kUserMap, "map"},
    {PairRule::kShapeAligned, "shape-aligned"}};
constexpr const auto& EnumNameTable(PairRule /*unused*/) { return kPairRuleNames; }

// What pairing looks at.
struct TensorKey {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::kF32;
};

// A user name map: (A name, B name) entries, tried in both directions.
struct NameMap {
  std::vector<std::pair<std::string, std::string>> names;
  size_t value_transforms = 0;  // TroubleShooter's {name: "module.func"} entries (not applied)
};

// Parses a map: {"a_name": "b_name", ...}, or TroubleShooter's get_weight_map list
// [{"pt_name": "ms_name", ...}, {"pt_name": "dotted.func", ...}] (names from the first object;
// the second holds value transforms, counted and not applied). kCorrupt when the JSON is
// malformed or a value is not a string.
Result<NameMap> ParseNameMap(std::string_view json);
Result<NameMap> ReadNameMap(const std::filesystem::path& path);

// The PyTorch spelling of a MindSpore parameter name: the last component gamma -> weight,
// beta -> bias, moving_mean -> running_mean, moving_variance -> running_var,
// embedding_table -> weight, a -> weight, and BatchNorm3d's ".bn2d" level dropped. Other names
// are returned unchanged.
std::string CanonicalParamName(std::string_view name);

// Shapes with their size-1 dimensions removed are equal (MindSpore's 4-d Conv1d weight pairs with
// PyTorch's 3-d one).
bool ShapesCompatible(std::span<const int64_t> a, std::span<const int64_t> b);

// PyTorch buffers MindSpore has no counterpart for ("*.num_batches_tracked"): listed when
// unpaired, but they do not make a diff fail.
bool IsFrameworkOnlyName(std::string_view name);

enum class AlignMode : uint8_t {
  kAuto,    // align shapes only when no tensor was paired by a name rule (unnamed tensors)
  kAlways,  // align whatever is left after the name rules
  kNever,
};

struct PairingOptions {
  const NameMap* map = nullptr;  // not owned; may be null
  AlignMode align = AlignMode::kAuto;
  // Shape alignment is an LCS over an (unpaired A) x (unpaired B) table; above this many cells it
  // is skipped with a warning.
  uint64_t max_align_cells = uint64_t{16} << 20;
};

struct TensorPairIndex {
  size_t a = 0;
  size_t b = 0;
  PairRule rule = PairRule::kExact;
};

struct Pairing {
  std::vector<TensorPairIndex> pairs;  // in A's order
  std::vector<size_t> only_a;          // unpaired, in file order
  std::vector<size_t> only_b;
  std::vector<std::string> warnings;
};

// Pairs the tensors of two sides: exact names; then CanonicalParamName() equal with compatible
// shapes; then the user map (either direction); then, per `options.align`, the longest common
// subsequence of the remaining (squeezed shape, dtype) sequences, in file order.
Pairing PairTensors(std::span<const TensorKey> a, std::span<const TensorKey> b,
                    const PairingOptions& options = {});

// Element-wise figures of A against B (B is the reference, as in numpy.isclose(a, b)). Elements
// are compared in C order after size-1 dimensions are dropped. Sums are taken in fixed chunks
// combined in order, so figures do not depend on the thread count.
struct DiffMetrics {
  int64_t numel = 0;
  int64_t close = 0;  // |a - b| <= atol + rtol |b|; NaN vs NaN and equal infinities count as close
  bool allclose = false;  // close == numel
  double allclose_ratio = 0;
  // Over positions finite on both sides: cosine of the flattened tensors (both norms <= eps: 1,
  // one: NaN), mean and max |a - b|.
  double cosine = 0;
  double mean_abs = 0;
  double max_abs = 0;
  int64_t worst_index = -1;  // first index of the largest |a - b|; -1 when none differs
  int64_t nan_mismatch = 0;  // NaN on exactly one side
  int64_t inf_mismatch = 0;  // +-Inf on one side only, or of opposite signs
  // From CompareTensorPair (compare_metrics.h): msprobe's MaxRelativeErr (NaN when msprobe gives
  // none: NaN/Inf at different positions), RMSE, and the max ULP distance in the lower-precision
  // float dtype of the pair (NaN unless both are floats).
  double max_rel = std::numeric_limits<double>::quiet_NaN();
  double rmse = 0;
  double max_ulp = std::numeric_limits<double>::quiet_NaN();
  std::string ulp_dtype;
};

// Figures of `a` against `b`, whose element counts must be equal (compatible shapes) and whose
// dtypes are not complex. `pool` parallelises within the pair (nullptr = serial). kUnsupported
// for complex dtypes; kInvalidArgument when shapes are not compatible; other errors only when a
// strided view cannot be copied.
Result<DiffMetrics> DiffTensorValues(const TensorView& a, const TensorView& b, double rtol,
                                     double atol, ThreadPool* pool = nullptr);

// Why a pair's values were not compared.
enum class DiffSkip : uint8_t {
  kNone,           // they were compared
  kShapeMismatch,  // shapes not compatible
  kUnsupported,    // complex values; `note` says why
};
// The texts of the status column for pairs not compared.
inline constexpr EnumNameEntry<DiffSkip> kDiffSkipNames[] = {
    {DiffSkip::kNone, ""},
    {DiffSkip::kShapeMismatch, "shape mismatch"},
    {DiffSkip::kUnsupported, "not compared"}};
constexpr const auto& EnumNameTable(DiffSkip /*unused*/) { return kDiffSkipNames; }

struct DiffRow {
  TensorPairIndex pair;
  // kPass: every element within tolerance; kError: some element outside it, or shapes not
  // compatible; kNone: not compared (kUnsupported).
  Verdict verdict = Verdict::kPass;
  DiffSkip skip = DiffSkip::kNone;
  DiffMetrics metrics;  // valid when compared()
  std::string note;

  bool compared() const { return skip == DiffSkip::kNone; }
};

// The status column: "equal" (pass), "differs" (error), or why the pair was not compared
// ("shape mismatch", "not compared").
std::string_view DiffStatusText(const DiffRow& row);

struct DiffOptions {
  double rtol = 1e-4;  // TroubleShooter's defaults
  double atol = 1e-4;
  PairingOptions pairing;
  ThreadPool* pool = nullptr;  // nullptr = ThreadPool::Default()
};

struct DiffReport {
  DiffSource a;
  DiffSource b;
  double rtol = 0;
  double atol = 0;
  std::vector<DiffRow> rows;  // in A's order
  std::vector<size_t> only_a;
  std::vector<size_t> only_b;
  std::vector<std::string> warnings;

  int64_t CountCompared(Verdict verdict) const;  // compared pairs of this verdict
  int64_t CountSkipped(DiffSkip skip) const;     // pairs not compared for this reason
  // Unpaired tensors that count against the diff (IsFrameworkOnlyName() ones do not).
  int64_t CountFailingUnpaired() const;
  // Every pair equal and nothing unpaired that counts.
  bool clean() const;
};

// Pairs and compares two sources. Pairs run in parallel on `options.pool`; the report does not
// depend on the thread count. kInvalidArgument for a negative or NaN tolerance.
Result<DiffReport> DiffSources(DiffSource a, DiffSource b, const DiffOptions& options = {});

// Writes the value table (one row per pair, then one per unpaired tensor) as CSV, the shapes table
// as CSV, and the whole report as JSON (docs/diff.md lists the columns and fields). Files are
// written under a temporary name and renamed into place. kIoError when a file cannot be written.
Status WriteDiffValuesCsv(const DiffReport& report, const std::filesystem::path& path);
Status WriteDiffShapesCsv(const DiffReport& report, const std::filesystem::path& path);
Status WriteDiffJson(const DiffReport& report, const std::filesystem::path& path);

}  // namespace numprobe

#endif  // NUMPROBE_DIFF_H_
