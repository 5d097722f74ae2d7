// numprobe precheck-compare (msprobe's api_precision_compare): the pre-check details of a device
// under test (its errors against the CPU benchmark) judged against those of a reference device
// (e.g. a GPU) run on the same dump. Each output is judged by its API's standard: the benchmark
// standard compares ratios of the two devices' errors (small-value error ratio <= 2; RMSE,
// max/mean relative error within the monitoring level's limits 2/10/2, 1.5/5/1.5 or 1.2/2/1.2),
// the ULP standard passes an f32 output with a mean below 64 ULP, a share above 32 ULP below
// 0.05 or a share below the reference's (f16/bf16: a share above 1 ULP below 0.001 or below the
// reference's), and the absolute-threshold, binary and dual-1000 standards judge the device alone.
// Files: api_precision_compare_result_{ts}.csv and api_precision_compare_details_{ts}.csv with
// msprobe's columns, and the JSON twin precheck_compare_{ts}.json.
#ifndef NUMPROBE_APP_PRECHECK_COMPARE_H_
#define NUMPROBE_APP_PRECHECK_COMPARE_H_

#include <array>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/app/precheck.h"
#include "numprobe/result.h"

namespace numprobe {

// The 28 columns of api_precision_compare_details.
inline constexpr size_t kPrecheckCompareColumns = 28;
std::string_view PrecheckCompareHeader(size_t column);

struct PrecheckCompareRow {
  std::array<std::string, kPrecheckCompareColumns> cells;  // as written; " " when empty
  PrecheckStatus result = PrecheckStatus::kNone;
  const std::string& name() const { return cells[0]; }
};

struct PrecheckCompareApi {
  std::string api;  // "Functional.relu.0"
  PrecheckStatus forward = PrecheckStatus::kNone;
  PrecheckStatus backward = PrecheckStatus::kNone;
  std::string message;
};

struct PrecheckCompareReport {
  std::vector<PrecheckCompareRow> rows;
  std::vector<PrecheckCompareApi> apis;
  std::vector<std::string> warnings;  // rows only in the device's file, ...
  bool failed() const;                // an API's forward or backward result is error
};

// Judges the rows of `device_details` against those of `reference_details` (both
// accuracy_checking_details CSVs). kCorrupt for a malformed file, a missing column or a row
// the reference holds twice.
Result<PrecheckCompareReport> ComparePrecheckDetails(
    const std::filesystem::path& device_details, const std::filesystem::path& reference_details);

struct PrecheckCompareFiles {
  std::filesystem::path result_csv, details_csv, json;
};
Result<PrecheckCompareFiles> WritePrecheckCompare(const PrecheckCompareReport& report,
                                                  const std::filesystem::path& dir,
                                                  std::string_view timestamp);

}  // namespace numprobe

#endif  // NUMPROBE_APP_PRECHECK_COMPARE_H_
