// numprobe precheck (msprobe's acc_check): every forward API of an L1 dump is re-run in the
// dtype it ran in and in float64 on the CPU (the benchmark), and each output (and input gradient)
// is judged by msprobe's metrics and standards. The replay itself runs torch in Python
// (numprobe.precheck); this header is the C++ half it calls: the metrics of one output against
// its benchmark, msprobe's judgment of them, and the result files
// (accuracy_checking_result_{ts}.csv, accuracy_checking_details_{ts}.csv with msprobe's columns
// and numprobe's after them, and the JSON twin precheck_{ts}.json), written row by row so that an
// interrupted run resumes from its result CSV.
//
// Standards (docs/precheck.md has the full rules): an output is judged by
//   msprobe's Status   cosine > 0.99, then max abs error < 0.001 passes, else the dual-100/1000
//                      (f16, bf16) or dual-1000/10000 (f32, f64) ratios decide pass/warning/error;
//   its API's standard absolute threshold (add, mul, div, ...), binary consistency (relu, gather,
//                      integer and bool outputs, ...), ULP (matmul, mm, linear, ...), dual-1000
//                      (conv1d, conv2d) or benchmark (everything else). The first four give a
//                      verdict from one run; the benchmark standard compares against a second
//                      device's run (numprobe precheck-compare).
// numprobe's verdict of an output is the worse of the two.
#ifndef NUMPROBE_APP_PRECHECK_H_
#define NUMPROBE_APP_PRECHECK_H_

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/dtype.h"
#include "numprobe/enum_names.h"
#include "numprobe/result.h"
#include "numprobe/tensor.h"

namespace numprobe {

class ThreadPool;

// msprobe's precision standards (its compare algorithms).
enum class PrecheckStandard : uint8_t {
  kBenchmark,
  kAbsoluteThreshold,
  kBinaryConsistency,
  kUlp,
  kThousandth,
};
inline constexpr EnumNameEntry<PrecheckStandard> kPrecheckStandardNames[] = {
    {PrecheckStandard::kBenchmark, "benchmark"},
    {PrecheckStandard::kAbsoluteThreshold, "absolute_threshold"},
    {PrecheckStandard::kBinaryConsistency, "binary_consistency"},
    {PrecheckStandard::kUlp, "ulp_compare"},
    {PrecheckStandard::kThousandth, "thousandth_threshold"}};
constexpr const auto& EnumNameTable(PrecheckStandard /*unused*/) { return kPrecheckStandardNames; }
// msprobe's names in its 比对算法 column (NameIn(kPrecheckAlgorithmNames, standard)).
inline constexpr EnumNameEntry<PrecheckStandard> kPrecheckAlgorithmNames[] = {
    {PrecheckStandard::kBenchmark, "标杆比对法"},
    {PrecheckStandard::kAbsoluteThreshold, "绝对阈值法"},
    {PrecheckStandard::kBinaryConsistency, "二进制一致法"},
    {PrecheckStandard::kUlp, "ULP误差比对法"},
    {PrecheckStandard::kThousandth, "双千指标法"}};

// The standard of an output of API `api` (the bare name: "matmul", "__add__") of dtype `output`:
// non-float outputs are judged by binary consistency, float ones by their API's class.
PrecheckStandard StandardFor(std::string_view api, DType output);
// msprobe's operator monitoring level (0, 1 or 2): it sets the benchmark ratio limits.
int MonitoringLevel(std::string_view api);

// msprobe's per-dtype constants (documented values; see docs/precheck.md).
struct PrecheckThresholds {
  double small_value = 0;  // |bench| at or below: a small value
  double small_atol = 0;   // absolute error allowed to a small value
  double rtol = 0;         // relative error allowed by the absolute-threshold standard
  double eps = 0;          // added to |bench| in relative errors
  double clip = 0;         // the largest finite value of the compare dtype
  bool ulp = false;        // ULP errors are defined (f16, bf16, f32)
  int ulp_min_exp = 0;
  int ulp_mant = 0;
  double ulp_thr = 0;      // ULP errors above this exceed (1 for f16/bf16, 32 for f32)
  double minimum_err = 0;  // precheck-compare: the smallest denominator of a ratio
};
// Thresholds of an output dtype; nullopt when msprobe's standards do not cover it (f64, fp8,
// integers).
std::optional<PrecheckThresholds> ThresholdsFor(DType output);

// Everything measured on one output against its benchmark. NaN marks a metric that is not
// defined for the pair (e.g. ULP errors of an f64 output).
struct PrecheckMetrics {
  int64_t count = 0;
  double cosine = 0;                    // NaN when either side holds NaN/Inf
  bool cosine_defined = true;           // false for a single element or an all-zero side
  double max_abs_d = 0, max_abs_b = 0;  // NaN when a side holds NaN
  double max_abs_err = 0;
  double dual[3] = {0, 0, 0};  // shares of relative errors below 1%, 0.1%, 0.01%
  double error_rate = 0;       // share of elements that differ (binary consistency)
  double error_balance = 0;    // |#(d > b) - #(d < b)| / count
  double rmse = 0;
  double small_value_err_ratio = 0;
  double max_rel_err = 0, mean_rel_err = 0;
  double inf_nan_err_ratio = 0, rel_err_ratio = 0, abs_err_ratio = 0;
  double max_ulp_err = 0, mean_ulp_err = 0, ulp_err_proportion = 0;
  int64_t worst_index = -1;  // first index of the largest |d - b| over finite pairs
  double worst_device = 0, worst_bench = 0;
};

// Metrics of `device` against `bench`. Both must be C-contiguous with the same number of
// elements; `bench` is float64 for float outputs, any dtype otherwise. Thresholds are those of
// device's dtype (ThresholdsFor; absent ones leave their metrics NaN). Bit-identical for any
// thread count and SIMD target. kInvalidArgument for non-contiguous views or differing sizes.
Result<PrecheckMetrics> PrecheckTensorPair(const TensorView& device, const TensorView& bench,
                                           ThreadPool* pool = nullptr);

// Statuses as msprobe writes them: "pass", "warning", "error", "SKIP", and " " for none.
enum class PrecheckStatus : uint8_t { kNone, kPass, kWarning, kError, kSkip };
inline constexpr EnumNameEntry<PrecheckStatus> kPrecheckStatusNames[] = {
    {PrecheckStatus::kNone, " "},
    {PrecheckStatus::kPass, "pass"},
    {PrecheckStatus::kWarning, "warning"},
    {PrecheckStatus::kError, "error"},
    {PrecheckStatus::kSkip, "SKIP"}};
constexpr const auto& EnumNameTable(PrecheckStatus /*unused*/) { return kPrecheckStatusNames; }
// The worse of two (error > warning > pass > SKIP > none).
PrecheckStatus WorseStatus(PrecheckStatus a, PrecheckStatus b);

// msprobe's 17 metric columns of accuracy_checking_details, in its order.
enum PrecheckColumn : uint8_t {
  kPcCosine,
  kPcMaxAbsErr,
  kPcDual100,
  kPcDual1000,
  kPcDual10000,
  kPcErrorRate,
  kPcErrorBalance,
  kPcRmse,
  kPcSmallValueErrRatio,
  kPcMaxRelErr,
  kPcMeanRelErr,
  kPcInfNanErrRatio,
  kPcRelErrRatio,
  kPcAbsErrRatio,
  kPcMaxUlpErr,
  kPcMeanUlpErr,
  kPcUlpErrProportion,
  kPcColumnCount,
};
// msprobe's header text of a column ("余弦相似度", ...) and numprobe's JSON key ("cosine", ...).
std::string_view PrecheckColumnHeader(PrecheckColumn column);
std::string_view PrecheckColumnKey(PrecheckColumn column);

// One line of accuracy_checking_details: one output (or input gradient) of one API.
struct PrecheckRow {
  std::string name;          // "Functional.relu.0.forward.output.0"
  std::string bench_dtype;   // "torch.float64", "<class 'int'>"; " " when none
  std::string device_dtype;  // "torch.float32"
  std::string shape;         // Python's tuple repr: "(2, 3)", "(5,)", "()"
  std::array<std::optional<double>, kPcColumnCount> columns{};  // absent: written as " "
  PrecheckStatus status = PrecheckStatus::kNone;                // msprobe's Status
  std::string message;
  // numprobe's columns.
  std::string standard;  // PrecheckStandardName, "" when none applies
  PrecheckStatus standard_result = PrecheckStatus::kNone;  // kNone: needs a second device
  std::string reason;                                      // why the verdict is what it is
  int64_t worst_index = -1;
  std::optional<double> worst_device, worst_bench;
  std::string device;  // where the API ran: "cpu", "cuda:0"

  PrecheckStatus verdict() const { return WorseStatus(status, standard_result); }
};

// Judges a tensor output from its metrics: fills the columns msprobe fills (and leaves blank
// those its rules never reach) and msprobe's Status and message, then numprobe's standard verdict.
// `api` is the bare API name; `dropout` APIs are judged by their share of zeros instead.
struct TensorOutputInfo {
  std::string name;
  std::string api;
  DType device_dtype = DType::kF32;
  DType bench_dtype = DType::kF64;
  std::vector<int64_t> shape;
  std::string device = "cpu";
};
PrecheckRow JudgeTensorOutput(const TensorOutputInfo& info, const PrecheckMetrics& metrics);
// A non-tensor output (bool, int, float, str): equal or not. Type names as Python's str(type).
PrecheckRow JudgeBuiltinOutput(std::string name, std::string bench_type, std::string device_type,
                               bool equal);
// A row that only carries a status and a message (skipped APIs, missing outputs).
PrecheckRow MessageRow(std::string name, PrecheckStatus status, std::string message);
// msprobe's dropout rule: outputs of 100 elements or more pass when their shares of zeros differ
// by less than 0.1; smaller ones pass.
PrecheckStatus JudgeDropout(int64_t bench_zeros, int64_t device_zeros, int64_t numel);

// One API: its forward and backward rows and the line of accuracy_checking_result.
struct PrecheckApiResult {
  std::string api;  // "Functional.relu.0"
  PrecheckStatus forward = PrecheckStatus::kNone;
  PrecheckStatus backward = PrecheckStatus::kNone;
  std::string message;
  PrecheckStatus verdict = PrecheckStatus::kNone;  // numprobe's: worst row verdict
  std::vector<PrecheckRow> forward_rows;
  std::vector<PrecheckRow> backward_rows;
  // dropout is judged without detail rows, as msprobe does; its status is set directly.
  bool dropout = false;
};
// Fills forward/backward/message/verdict from the rows (msprobe's aggregation: error if any row
// is, else warning if any, else pass; SKIP when the first row is SKIP).
void Aggregate(PrecheckApiResult* api);
// An API skipped as a whole (not allowed, filtered, failed to run): one SKIP row with `message`.
PrecheckApiResult SkippedApi(std::string api, std::string message);

// How an output folder's files are named.
struct PrecheckFiles {
  std::filesystem::path result_csv;   // accuracy_checking_result_{ts}.csv
  std::filesystem::path details_csv;  // accuracy_checking_details_{ts}.csv
  std::filesystem::path json;         // precheck_{ts}.json
  std::string timestamp;
};
PrecheckFiles PrecheckFilesIn(const std::filesystem::path& dir, std::string_view timestamp);
// The files of an earlier run from its result CSV (the timestamp is taken from its name, which
// must be accuracy_checking_result_{14 digits}.csv as msprobe requires). kInvalidArgument else.
Result<PrecheckFiles> PrecheckFilesOf(const std::filesystem::path& result_csv);

// What the JSON twin records about the run.
struct PrecheckRunInfo {
  std::string dump;  // the dump.json checked
  std::string mode;  // "statistics" or "tensor"
  uint64_t seed = 0;
  std::string device;  // "cpu", "cuda"
  std::vector<std::string> warnings;
};

// Writes the result files row by row (each API appended and flushed, so that an interrupted run
// leaves complete lines), and the JSON twin at Finish. Not thread-safe.
class PrecheckWriter {
 public:
  ~PrecheckWriter();
  PrecheckWriter(PrecheckWriter&&) noexcept;
  PrecheckWriter& operator=(PrecheckWriter&&) noexcept;

  // Starts new files in `dir` (created if missing). kIoError when they cannot be written.
  static Result<PrecheckWriter> Create(const std::filesystem::path& dir,
                                       std::string_view timestamp);
  // Continues the files of `result_csv` (msprobe's -csv_path): the APIs already there are read
  // back and listed by done(). kNotFound / kCorrupt when the files are missing or malformed.
  static Result<PrecheckWriter> Resume(const std::filesystem::path& result_csv);

  const PrecheckFiles& files() const;
  // APIs already in the result CSV.
  const std::set<std::string>& done() const;
  Status Append(const PrecheckApiResult& api);
  // Writes precheck_{ts}.json (atomically) with every API, those resumed included.
  Status Finish(const PrecheckRunInfo& info);
  // The APIs written so far (resumed ones first), in file order.
  const std::vector<PrecheckApiResult>& apis() const;

 private:
  PrecheckWriter();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Reads accuracy_checking_details (numprobe's or msprobe's) into rows; the result CSV into APIs
// without rows. kCorrupt for a malformed file, naming the line.
Result<std::vector<PrecheckRow>> ReadPrecheckDetails(const std::filesystem::path& path);
Result<std::vector<PrecheckApiResult>> ReadPrecheckResults(const std::filesystem::path& path);
// The same for details CSV bytes in memory (`label` names them in messages).
Result<std::vector<PrecheckRow>> ParsePrecheckDetails(std::span<const char> bytes,
                                                      std::string_view label);

// Counts of a run, for summaries.
struct PrecheckSummary {
  int64_t apis = 0, pass = 0, warning = 0, error = 0, skip = 0;
};
PrecheckSummary Summarize(const std::vector<PrecheckApiResult>& apis);

}  // namespace numprobe

#endif  // NUMPROBE_APP_PRECHECK_H_
