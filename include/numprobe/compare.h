// Comparing a target dump against a golden dump, as msprobe's compare does: rows paired by name
// (backward call numbers renumbered first), msprobe's dtype rule, its statistics / tensor / md5
// columns and value formats, and its pass/warning/error rules, with one deliberate difference:
// a row that has no golden counterpart is "unmatched", never "pass" (docs/compat.md lists all
// differences). A CompareTable keeps both DumpFiles alive and refers to their rows by index.
#ifndef NUMPROBE_COMPARE_H_
#define NUMPROBE_COMPARE_H_

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/casts.h"
#include "numprobe/compare_mapping.h"
#include "numprobe/dump.h"
#include "numprobe/dump_layout.h"
#include "numprobe/enum_names.h"
#include "numprobe/progress.h"
#include "numprobe/result.h"
#include "numprobe/verdict.h"

namespace numprobe {

class ThreadPool;

// msprobe's three modes: task "tensor" -> kTensor; task "statistics" -> kMd5 when a tensor leaf
// carries "md5", else kStatistics.
enum class CompareMode : uint8_t { kStatistics, kTensor, kMd5 };
inline constexpr EnumNameEntry<CompareMode> kCompareModeNames[] = {
    {CompareMode::kStatistics, "statistics"},
    {CompareMode::kTensor, "tensor"},
    {CompareMode::kMd5, "md5"}};
constexpr const auto& EnumNameTable(CompareMode /*unused*/) { return kCompareModeNames; }

// One metric cell as msprobe writes it: a number, a percentage, or one of its tokens.
struct MetricCell {
  enum class Kind : uint8_t {
    kEmpty,           // ""
    kValue,           // a float value: repr(), with inf written " inf" as pandas' CSV does
    kValueText,       // a float msprobe turned into text first: repr(), inf written "inf"
    kPercent,         // repr(value) + "%"
    kZero,            // "0": the two values were equal
    kNA,              // "N/A"
    kNan,             // "Nan"
    kInf,             // "inf"
    kNegInf,          // "-inf"
    kDiff,            // "Diff"
    kUnsupported,     // "unsupported"
    kShapeUnmatched,  // "shape unmatched"
  };
  Kind kind = Kind::kEmpty;
  double value = 0;

  static MetricCell Of(Kind kind, double value = 0) { return {kind, value}; }
  bool is_number() const {
    return kind == Kind::kValue || kind == Kind::kValueText || kind == Kind::kPercent;
  }
  std::string Text() const;  // as in msprobe's CSV
  void AppendText(std::string* out) const;
};

// numprobe's metrics beyond msprobe's (tensor mode), over positions finite on both sides.
struct TensorExtras {
  double mean_abs_err = 0;
  double mean_rel_err = 0;  // |t - g| / |g| over non-zero golden elements
  double rmse = 0;
  double sqnr_db = 0;  // 10 log10(sum g^2 / sum (t - g)^2); +inf when equal
  double max_ulp = 0;  // ULP distance after rounding both to `ulp_dtype`
  double mean_ulp = 0;
  std::string ulp_dtype;      // the lower-precision dtype of the pair ("bf16")
  double allclose_ratio = 0;  // share within atol + rtol |g| of that dtype
  int64_t nan_mismatch = 0;   // positions NaN on exactly one side
  int64_t pos_inf_mismatch = 0;
  int64_t neg_inf_mismatch = 0;
  int64_t worst_index = -1;  // flat index of the largest |t - g| (-1 when none)
};

enum class MatchKind : uint8_t {
  kExact,          // same name (after backward renumbering)
  kFuzzy,          // -fm: same name without call numbers
  kMapped,         // -dm / -cm / -am / -lm
  kAligned,        // numprobe's sequence alignment over (API, shape, dtype)
  kNone,           // no golden row
  kDtypeMismatch,  // a golden row of this name whose dtype cannot be compared (msprobe: N/A)
};

// The Match column.
inline constexpr EnumNameEntry<MatchKind> kMatchKindNames[] = {
    {MatchKind::kExact, "exact"},   {MatchKind::kFuzzy, "fuzzy"},
    {MatchKind::kMapped, "mapped"}, {MatchKind::kAligned, "aligned"},
    {MatchKind::kNone, "none"},     {MatchKind::kDtypeMismatch, "dtype"}};
constexpr const auto& EnumNameTable(MatchKind /*unused*/) { return kMatchKindNames; }

// A row's eight metric cells, held packed (the kinds apart from the values): 72 bytes rather
// than 128 in every row of a compare that may have millions of them.
class MetricCells {
 public:
  static constexpr size_t kCount = 8;

  MetricCell operator[](size_t i) const { return {kinds_[i], values_[i]}; }
  void Set(size_t i, MetricCell cell) {
    kinds_[i] = cell.kind;
    values_[i] = cell.value;
  }
  void Fill(MetricCell cell) {
    for (size_t i = 0; i < kCount; ++i) Set(i, cell);
  }

 private:
  std::array<double, kCount> values_{};
  std::array<MetricCell::Kind, kCount> kinds_{};
};

// A row's Err_message entries (ids for MessageText) in order, four bits each in one word rather
// than a vector per row. It holds kCapacity ids, more than the checkers of one mode can add to a
// row (one each, plus "unmatched"); further ids are dropped.
class MessageList {
 public:
  static constexpr size_t kCapacity = 16;
  static constexpr uint8_t kMaxId = 14;  // ids are held as id + 1 in four bits, 0 ends the list

  bool empty() const { return bits_ == 0; }
  size_t size() const { return (static_cast<size_t>(std::bit_width(bits_)) + 3) / 4; }
  uint8_t operator[](size_t i) const {
    return static_cast<uint8_t>(((bits_ >> (4 * i)) & 0xF) - 1);
  }
  void push_back(uint8_t id) {
    const size_t n = size();
    if (n < kCapacity && id <= kMaxId) bits_ |= static_cast<uint64_t>(id + 1) << (4 * n);
  }
  void push_front(uint8_t id) {
    if (size() < kCapacity && id <= kMaxId) bits_ = (bits_ << 4) | static_cast<uint64_t>(id + 1);
  }
  void clear() { bits_ = 0; }
  bool operator==(const MessageList&) const = default;

 private:
  uint64_t bits_ = 0;  // entry i in bits [4i, 4i + 4)
};

// One row of the table, kept small (a statistics compare of 1,000,000 entries has 4,000,000).
struct CompareRow {
  uint32_t target = 0;  // index into the target DumpFile's rows
  MatchKind match = MatchKind::kNone;
  // The Result column: msprobe's pass/warning/error, or numprobe's "unmatched" for a row without
  // a golden counterpart.
  Verdict result = Verdict::kPass;
  int64_t golden = -1;  // index into the golden DumpFile's rows; -1 when there is none
  // Statistics mode: Max diff, Min diff, Mean diff, L2norm diff, MaxRelativeErr, MinRelativeErr,
  // MeanRelativeErr, NormRelativeErr. Tensor mode: Cosine, EucDist, MaxAbsErr, MaxRelativeErr,
  // One Thousandth Err Ratio, Five Thousandths Err Ratio (first six). Md5 mode: unused.
  MetricCells metrics;
  MessageList messages;  // Err_message entries (see MessageText)
  // Tensor mode only, so held apart: a statistics compare of millions of rows does not pay for
  // it in every row. Null when absent (statistics and md5 modes, empty or mismatched pairs).
  std::shared_ptr<const TensorExtras> extras;
  // numprobe's error estimate for the row (relative to the golden's magnitude; see divergence.h);
  // NaN when it could not be estimated.
  double error = std::numeric_limits<double>::quiet_NaN();
  // The dtype-aware tolerance for `error` (divergence.h); NaN when the row is not judged.
  double tolerance = std::numeric_limits<double>::quiet_NaN();

  bool paired() const { return golden >= 0 && match != MatchKind::kDtypeMismatch; }
  // The Judgment column's "differs": judged, and the error exceeds the tolerance.
  bool over_tolerance() const {
    return !std::isnan(error) && !std::isnan(tolerance) && error > tolerance;
  }
};

// The text of an Err_message entry.
std::string_view MessageText(uint8_t id);

struct CompareTable {
  CompareMode mode = CompareMode::kStatistics;
  std::shared_ptr<const DumpFile> target;
  std::shared_ptr<const DumpFile> golden;
  std::shared_ptr<const StackMap> stack;    // the target's stack.json; null when absent
  std::shared_ptr<const CastRecord> casts;  // the target's casts.json (casts.h); null when absent
  std::vector<CompareRow> rows;             // in target (execution) order
  std::vector<std::string> warnings;        // e.g. tensor files that could not be read

  bool has_stack() const { return stack != nullptr; }
  // msprobe's columns in msprobe's order, then numprobe's.
  std::vector<std::string> Header() const;
  // The cells of row `i` as msprobe's CSV writes them, aligned with Header().
  std::vector<std::string> CsvCells(size_t i) const;
  // The same into *cells, reusing its strings (no allocation per row once they have grown).
  void CsvCells(size_t i, std::vector<std::string>* cells) const;
};

struct CompareOptions {
  ThreadPool* pool = nullptr;  // tensor mode; nullptr = ThreadPool::Default()
  CompareMapping mapping;      // -fm, -dm, -cm, -am, -lm and the alignment of unpaired rows
  ProgressCallback progress;   // tensor mode: each tensor pair compared ("tensor pairs")
  // --max-memory: the most one tensor file's decompressed storages may take (memory_limit.h);
  // 0 = DefaultMaxMemory(). A file over it leaves its row uncompared with a warning.
  uint64_t max_memory = 0;
};

// Compares one pair of dumps. kInvalidArgument when the tasks differ or are not comparable;
// kCorrupt / kNotFound / kIoError from reading the JSON files (tensor files that cannot be read
// make their rows "unsupported", as in msprobe); errors of the mapping files as
// compare_mapping.h says.
Result<CompareTable> CompareDumps(const DumpLocation& target, const DumpLocation& golden,
                                  const CompareOptions& options = {});

// Short names of the compare metrics, as configs and scripts name them ("cosine", "mae",
// "relative", ...), and the compare table column (CompareTable::Header) each one reads. One
// table, so that the closed-loop config (docs/config-dialect.md) validates the names it is given
// and the front ends pick the same columns. A metric exists in one compare mode: tensor mode has
// msprobe's Cosine ... Five Thousandths and numprobe's extras, statistics mode msprobe's diffs.
struct CompareMetricName {
  std::string_view name;    // "mae"
  std::string_view column;  // "MaxAbsErr"
  // The compare mode whose table has the column ("tensor", "statistics"); "" for every mode.
  std::string_view mode;
};

inline constexpr CompareMetricName kCompareMetricNames[] = {
    // msprobe's tensor-mode metrics, with the short names its users write.
    {"cosine", "Cosine", "tensor"},
    {"euclidean", "EucDist", "tensor"},
    {"mae", "MaxAbsErr", "tensor"},  // max absolute error
    {"max_abs_err", "MaxAbsErr", "tensor"},
    // MaxRelativeErr is a column of both modes (in statistics mode: of the maxima).
    {"relative", "MaxRelativeErr", ""},
    {"max_relative_err", "MaxRelativeErr", ""},
    {"one_thousandth", "One Thousandth Err Ratio", "tensor"},
    {"five_thousandths", "Five Thousandths Err Ratio", "tensor"},
    // numprobe's tensor-mode metrics.
    {"mean_abs_err", "Mean AbsErr", "tensor"},
    {"mean_rel_err", "Mean RelErr", "tensor"},
    {"rmse", "RMSE", "tensor"},
    {"sqnr", "SQNR(dB)", "tensor"},
    {"max_ulp", "Max ULP", "tensor"},
    {"mean_ulp", "Mean ULP", "tensor"},
    {"allclose_ratio", "Allclose Ratio", "tensor"},
    {"nan_mismatch", "NaN Mismatch", "tensor"},
    {"pos_inf_mismatch", "+Inf Mismatch", "tensor"},
    {"neg_inf_mismatch", "-Inf Mismatch", "tensor"},
    {"worst_index", "Worst Index", "tensor"},
    // msprobe's statistics-mode metrics.
    {"max_diff", "Max diff", "statistics"},
    {"min_diff", "Min diff", "statistics"},
    {"mean_diff", "Mean diff", "statistics"},
    {"norm_diff", "L2norm diff", "statistics"},
    {"min_relative_err", "MinRelativeErr", "statistics"},
    {"mean_relative_err", "MeanRelativeErr", "statistics"},
    {"norm_relative_err", "NormRelativeErr", "statistics"},
    // numprobe's error estimate and tolerance (every mode).
    {"rel_error", "Rel Error", ""},
    {"tolerance", "Dtype Tolerance", ""},
};

// The entry named `name`; nullptr when no metric has that name.
constexpr const CompareMetricName* FindCompareMetric(std::string_view name) {
  for (const CompareMetricName& m : kCompareMetricNames) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

}  // namespace numprobe

#endif  // NUMPROBE_COMPARE_H_
