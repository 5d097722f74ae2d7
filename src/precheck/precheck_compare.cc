// msprobe's api_precision_compare (precheck_compare.h), rule for rule: the standard of each row,
// the ratios of the device's to the reference's errors with msprobe's minimum denominators and
// its handling of Inf/NaN, the per-metric statuses and messages, and the per-API aggregation of
// the result file. A benchmark or ULP metric left empty counts as 0 (as msprobe reads " "); the
// metrics the other standards read must be present, else the row is skipped with the reason.
#include "numprobe/precheck_compare.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>

#include "core/atomic_file.h"
#include "core/json_writer.h"
#include "msprobe/entry_name.h"
#include "precheck/precheck_text.h"

namespace numprobe {
namespace fs = std::filesystem;
namespace {

using detail::CsvWriterLine;
using detail::Fixed14;

constexpr std::array<std::string_view, kPrecheckCompareColumns> kHeader = {
    "API Name",
    "小值域错误比值",
    "小值域判定结果",
    "均方根误差比值",
    "均方根误差判定结果",
    "相对误差最大值比值",
    "相对误差最大值判定结果",
    "相对误差平均值比值",
    "相对误差平均值判定结果",
    "误差均衡性比值",
    "误差均衡性判定结果",
    "inf/nan错误率",
    "inf/nan判定结果",
    "相对误差错误率",
    "相对误差判定结果",
    "绝对误差错误率",
    "绝对误差判定结果",
    "二进制一致错误率",
    "二进制一致错误率判定结果",
    "ULP误差平均值",
    "ULP误差大于阈值占比",
    "ULP误差大于阈值占比比值",
    "ULP误差判定结果",
    "双千指标",
    "双千指标判定结果",
    "比对结果",
    "比对算法",
    "Message"};

enum Col : size_t {
  kName,
  kSmallRatio,
  kSmallStatus,
  kRmseRatio,
  kRmseStatus,
  kMaxRelRatio,
  kMaxRelStatus,
  kMeanRelRatio,
  kMeanRelStatus,
  kEbRatio,
  kEbStatus,
  kInfNan,
  kInfNanStatus,
  kRelErr,
  kRelErrStatus,
  kAbsErr,
  kAbsErrStatus,
  kErrorRate,
  kErrorRateStatus,
  kMeanUlp,
  kUlpProportion,
  kUlpProportionRatio,
  kUlpStatus,
  kThousandth,
  kThousandthStatus,
  kResult,
  kAlgorithm,
  kMessage,
};

std::string Name(PrecheckStatus s) { return std::string(PrecheckStatusName(s)); }

// The parts of a detail row name: (bare API, API, direction), e.g. ("matmul", "Torch.matmul.0",
// "forward") of "Torch.matmul.0.forward.output.0"; empty API for a name of another shape.
struct NameParts {
  std::string api_name, api, direction;
};
NameParts SplitName(const std::string& name) {
  const std::string_view entry = detail::EntryOfRow(name);
  const detail::EntryNameParts parts = detail::ParseEntryName(entry);
  NameParts out;
  if (entry.size() == name.size() || parts.api.empty()) return out;
  out.api_name = std::string(parts.api);
  out.api = std::string(entry.substr(0, parts.op.size() + 1 + parts.call.size()));
  out.direction = parts.forward() ? "forward" : "backward";
  return out;
}

bool Unsupported(const std::string& dtype) {
  return dtype == "torch.float64" || dtype == "torch.complex64" || dtype == "torch.complex128";
}

struct Judge {
  const PrecheckRow& dev;
  const PrecheckRow& ref;
  std::string api_name;
  PrecheckCompareRow* out;
  double minimum_err;

  std::string& cell(Col c) { return out->cells[c]; }

  // msprobe's calc_ratio with its Inf/NaN rule: a ratio, and whether the two sides agree on
  // being non-finite (a NaN ratio of agreeing sides passes).
  std::pair<double, bool> Ratio(PrecheckColumn column, std::string* message) {
    const double a = dev.columns[column].value_or(0.0);
    const double b = ref.columns[column].value_or(0.0);
    const std::string_view header = PrecheckColumnHeader(column);
    if (std::isinf(a) || std::isinf(b)) {
      const bool same = std::isinf(a) && std::isinf(b) && a == b;
      *message += fmt::format("{}{}\n", header, same ? "同为同号inf或nan" : "inf或nan不一致");
      return {std::nan(""), same};
    }
    if (std::isnan(a) || std::isnan(b)) {
      const bool same = std::isnan(a) && std::isnan(b);
      *message += fmt::format("{}{}\n", header, same ? "同为同号inf或nan" : "inf或nan不一致");
      return {std::nan(""), same};
    }
    return {std::fabs(a) / std::max(std::fabs(b), minimum_err), true};
  }

  PrecheckStatus Benchmark() {
    std::string message;
    const int level = MonitoringLevel(api_name);
    const double rmse_limit = level == 2 ? 1.2 : level == 1 ? 1.5 : 2.0;
    const double max_rel_limit = level == 2 ? 2.0 : level == 1 ? 5.0 : 10.0;
    struct Metric {
      PrecheckColumn column;
      Col ratio_col, status_col;
      double limit;
      const char* error_message;
      bool counts;  // error balance is reported but does not decide the result
    };
    const Metric metrics[] = {
        {kPcSmallValueErrRatio, kSmallRatio, kSmallStatus, 2.0, "ERROR: 小值域错误比值超过阈值\n",
         true},
        {kPcRmse, kRmseRatio, kRmseStatus, rmse_limit, "ERROR: 均方根误差比值超过阈值\n", true},
        {kPcMaxRelErr, kMaxRelRatio, kMaxRelStatus, max_rel_limit,
         "ERROR: 相对误差最大值比值超过阈值\n", true},
        {kPcMeanRelErr, kMeanRelRatio, kMeanRelStatus, rmse_limit,
         "ERROR: 相对误差平均值比值超过阈值\n", true},
        {kPcErrorBalance, kEbRatio, kEbStatus, 2.0, nullptr, false},
    };
    PrecheckStatus result = PrecheckStatus::kPass;
    std::string status_messages;
    for (const Metric& m : metrics) {
      const auto [ratio, consistent] = Ratio(m.column, &message);
      // Inf/NaN on one side only is an error; a NaN ratio of agreeing sides passes.
      const bool over = !consistent || (!std::isnan(ratio) && ratio > m.limit);
      const PrecheckStatus s = over ? PrecheckStatus::kError : PrecheckStatus::kPass;
      cell(m.ratio_col) = Fixed14(ratio);
      cell(m.status_col) = Name(s);
      if (m.counts && s == PrecheckStatus::kError) {
        result = PrecheckStatus::kError;
        status_messages += m.error_message;
      }
    }
    cell(kMessage) = message + status_messages;
    return result;
  }

  PrecheckStatus Ulp(DType dtype) {
    std::string message;
    const double mean = dev.columns[kPcMeanUlpErr].value_or(0.0);
    const double gpu_mean = ref.columns[kPcMeanUlpErr].value_or(0.0);
    bool consistent = true;
    if (std::isinf(mean) || std::isnan(mean) || std::isinf(gpu_mean) || std::isnan(gpu_mean)) {
      const bool same = (std::isnan(mean) && std::isnan(gpu_mean)) ||
                        (std::isinf(mean) && std::isinf(gpu_mean) && mean == gpu_mean);
      message += fmt::format("{}{}\n", PrecheckColumnHeader(kPcMeanUlpErr),
                             same ? "同为同号inf或nan" : "inf或nan不一致");
      consistent = same;
    }
    const double proportion = dev.columns[kPcUlpErrProportion].value_or(0.0);
    const auto [ratio, ratio_consistent] = Ratio(kPcUlpErrProportion, &message);
    cell(kMeanUlp) = Fixed14(mean);
    cell(kUlpProportion) = Fixed14(proportion);
    cell(kUlpProportionRatio) = Fixed14(ratio);
    PrecheckStatus s = PrecheckStatus::kError;
    if (consistent && ratio_consistent) {
      if (dtype == DType::kF32) {
        s = mean < 64 || proportion < 0.05 || ratio < 1 ? PrecheckStatus::kPass
                                                        : PrecheckStatus::kError;
      } else {
        s = proportion < 0.001 || ratio < 1 ? PrecheckStatus::kPass : PrecheckStatus::kError;
      }
    }
    if (s == PrecheckStatus::kError) message += "ERROR: ULP误差不满足标准\n";
    cell(kUlpStatus) = Name(s);
    cell(kMessage) = message;
    return s;
  }

  // The metric a standard reads directly, or a reason to skip the row.
  std::optional<double> Required(PrecheckColumn column, std::string* why) {
    if (!dev.columns[column]) *why = "ERROR: Input data is an empty string";
    return dev.columns[column];
  }

  PrecheckStatus Binary(std::string* why) {
    const auto rate = Required(kPcErrorRate, why);
    if (!rate) return PrecheckStatus::kSkip;
    const PrecheckStatus s = *rate == 0 ? PrecheckStatus::kPass : PrecheckStatus::kError;
    cell(kErrorRate) = Fixed14(*rate);
    cell(kErrorRateStatus) = Name(s);
    cell(kMessage) = s == PrecheckStatus::kError ? "ERROR: 二进制一致错误率超过阈值\n" : "";
    return s;
  }

  PrecheckStatus Absolute(std::string* why) {
    const auto inf_nan = Required(kPcInfNanErrRatio, why);
    const auto rel = Required(kPcRelErrRatio, why);
    const auto abs = Required(kPcAbsErrRatio, why);
    if (!inf_nan || !rel || !abs) return PrecheckStatus::kSkip;
    auto status = [](double v) { return v == 0 ? PrecheckStatus::kPass : PrecheckStatus::kError; };
    cell(kInfNan) = Fixed14(*inf_nan);
    cell(kInfNanStatus) = Name(status(*inf_nan));
    cell(kRelErr) = Fixed14(*rel);
    cell(kRelErrStatus) = Name(status(*rel));
    cell(kAbsErr) = Fixed14(*abs);
    cell(kAbsErrStatus) = Name(status(*abs));
    std::string message;
    if (*inf_nan != 0) message += "ERROR: inf/nan错误率超过阈值";
    if (*rel != 0) message += "ERROR: 相对误差错误率超过阈值";
    if (*abs != 0) message += "ERROR: 绝对误差错误率超过阈值";
    cell(kMessage) = message;
    return message.empty() ? PrecheckStatus::kPass : PrecheckStatus::kError;
  }

  PrecheckStatus Thousandth(std::string* why) {
    const auto v = Required(kPcDual1000, why);
    if (!v) return PrecheckStatus::kSkip;
    const PrecheckStatus s = *v >= 0.999 ? PrecheckStatus::kPass : PrecheckStatus::kError;
    cell(kThousandth) = Fixed14(*v);
    cell(kThousandthStatus) = Name(s);
    cell(kMessage) = s == PrecheckStatus::kError ? "ERROR: 双千指标不达标\n" : "";
    return s;
  }
};

PrecheckStatus Fold(const std::vector<PrecheckStatus>& statuses) {
  if (statuses.empty()) return PrecheckStatus::kNone;
  bool all_skip = true;
  bool warning = false;
  for (PrecheckStatus s : statuses) {
    if (s == PrecheckStatus::kError) return PrecheckStatus::kError;
    warning = warning || s == PrecheckStatus::kWarning;
    all_skip = all_skip && s == PrecheckStatus::kSkip;
  }
  if (all_skip) return PrecheckStatus::kSkip;
  return warning ? PrecheckStatus::kWarning : PrecheckStatus::kPass;
}

}  // namespace

std::string_view PrecheckCompareHeader(size_t column) { return kHeader.at(column); }

bool PrecheckCompareReport::failed() const {
  for (const PrecheckCompareApi& a : apis) {
    if (a.forward == PrecheckStatus::kError || a.backward == PrecheckStatus::kError) return true;
  }
  return false;
}

Result<PrecheckCompareReport> ComparePrecheckDetails(const fs::path& device_details,
                                                     const fs::path& reference_details) {
  NUMPROBE_ASSIGN_OR_RETURN(std::vector<PrecheckRow> dev_rows, ReadPrecheckDetails(device_details));
  NUMPROBE_ASSIGN_OR_RETURN(std::vector<PrecheckRow> ref_rows,
                            ReadPrecheckDetails(reference_details));
  std::map<std::string, size_t> ref_index;
  for (size_t i = 0; i < ref_rows.size(); ++i) {
    if (!ref_index.emplace(ref_rows[i].name, i).second) {
      return Status::Corrupt(
          fmt::format("{}: {} has multiple records", reference_details.string(), ref_rows[i].name));
    }
  }
  PrecheckCompareReport report;
  std::string last_api;
  std::string last_dtype;
  std::string last_skip_message;
  std::vector<PrecheckStatus> forward;
  std::vector<PrecheckStatus> backward;
  auto flush = [&] {
    if (last_api.empty()) return;
    PrecheckCompareApi a;
    a.api = last_api;
    if (Unsupported(last_dtype)) {
      a.forward = a.backward = PrecheckStatus::kSkip;
      a.message = "This data type does not support benchmark compare.";
    } else {
      a.forward = Fold(forward);
      a.backward = Fold(backward);
      const NameParts parts = SplitName(last_api + ".forward.output.0");
      if (a.forward == PrecheckStatus::kError && parts.api_name == "topk") {
        a.message +=
            "在npu上，topk的入参sorted=False时不生效，会返回有序tensor，而cpu上会返回无序"
            "tensor。 如果topk精度不达标，请检查是否是该原因导致的。";
      }
      if (a.forward == PrecheckStatus::kSkip) a.message += last_skip_message;
    }
    last_skip_message.clear();
    report.apis.push_back(std::move(a));
    forward.clear();
    backward.clear();
  };
  for (const PrecheckRow& dev : dev_rows) {
    PrecheckCompareRow row;
    row.cells.fill(" ");
    row.cells[kName] = dev.name;
    const NameParts parts = SplitName(dev.name);
    if (parts.api.empty()) {
      row.result = PrecheckStatus::kSkip;
      row.cells[kResult] = Name(row.result);
      row.cells[kMessage] = fmt::format("The API name {} is invalid.", dev.name);
      report.rows.push_back(row);
      PrecheckCompareApi a;
      a.api = dev.name;
      a.forward = a.backward = PrecheckStatus::kSkip;
      a.message = row.cells[kMessage];
      report.apis.push_back(std::move(a));
      continue;
    }
    auto it = ref_index.find(dev.name);
    if (it == ref_index.end()) {
      report.warnings.push_back(fmt::format("{} is not in the reference's details", dev.name));
      continue;
    }
    const PrecheckRow& ref = ref_rows[it->second];
    PrecheckStatus status = PrecheckStatus::kSkip;
    const std::string& dtype_text = dev.device_dtype;
    const bool blank = dtype_text.find_first_not_of(' ') == std::string::npos;
    if (blank || Unsupported(dtype_text) || dev.shape == "(0,)") {
      row.cells[kMessage] = dev.message;
    } else {
      const DType dtype = DTypeFromTorchName(dtype_text).value_or(DType::kI64);
      const PrecheckStandard standard = StandardFor(parts.api_name, dtype);
      const auto t = ThresholdsFor(dtype);
      Judge judge{dev, ref, parts.api_name, &row, t ? t->minimum_err : 0x1p-14};
      std::string why;
      switch (standard) {
        case PrecheckStandard::kBenchmark:
          status = judge.Benchmark();
          break;
        case PrecheckStandard::kUlp:
          status = judge.Ulp(dtype);
          break;
        case PrecheckStandard::kBinaryConsistency:
          status = judge.Binary(&why);
          break;
        case PrecheckStandard::kAbsoluteThreshold:
          status = judge.Absolute(&why);
          break;
        case PrecheckStandard::kThousandth:
          status = judge.Thousandth(&why);
          break;
      }
      if (!why.empty()) {
        row.cells.fill(" ");
        row.cells[kName] = dev.name;
        row.cells[kMessage] = why;
      } else {
        row.cells[kAlgorithm] = std::string(PrecheckAlgorithmName(standard));
      }
    }
    row.result = status;
    row.cells[kResult] = Name(status);
    report.rows.push_back(row);
    if (!last_api.empty() && parts.api != last_api) flush();
    last_api = parts.api;
    last_dtype = dtype_text;
    if (blank || !Unsupported(dtype_text)) {
      if (parts.direction == "forward") {
        forward.push_back(status);
        last_skip_message = status == PrecheckStatus::kSkip ? dev.message : "";
      } else if (parts.direction == "backward") {
        backward.push_back(status);
      }
    }
  }
  flush();
  return report;
}

Result<PrecheckCompareFiles> WritePrecheckCompare(const PrecheckCompareReport& report,
                                                  const fs::path& dir, std::string_view timestamp) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError(fmt::format("{}: cannot create: {}", dir.string(), ec.message()));
  PrecheckCompareFiles files;
  files.result_csv = dir / fmt::format("api_precision_compare_result_{}.csv", timestamp);
  files.details_csv = dir / fmt::format("api_precision_compare_details_{}.csv", timestamp);
  files.json = dir / fmt::format("precheck_compare_{}.json", timestamp);
  const std::string bom(detail::kUtf8Bom);
  std::string details = bom + CsvWriterLine({kHeader.begin(), kHeader.end()});
  for (const PrecheckCompareRow& r : report.rows)
    details += CsvWriterLine({r.cells.begin(), r.cells.end()});
  std::string result =
      bom + CsvWriterLine({"API Name", "Forward Test Success", "Backward Test Success", "Message"});
  for (const PrecheckCompareApi& a : report.apis) {
    result += CsvWriterLine({a.api, Name(a.forward), Name(a.backward), a.message});
  }
  rapidjson::StringBuffer buffer;
  JsonWriter<rapidjson::StringBuffer> w(buffer, JsonFileKind::kResult);
  auto str = [&](std::string_view s) { w.String(s); };
  w.StartObject();
  str("numprobe_precheck_compare");
  w.Int(1);
  str("columns");
  w.StartArray();
  for (std::string_view h : kHeader) str(h);
  w.EndArray();
  str("rows");
  w.StartArray();
  for (const PrecheckCompareRow& r : report.rows) {
    w.StartArray();
    for (const std::string& c : r.cells) str(c);
    w.EndArray();
  }
  w.EndArray();
  str("apis");
  w.StartArray();
  for (const PrecheckCompareApi& a : report.apis) {
    w.StartObject();
    str("api");
    str(a.api);
    str("forward");
    str(PrecheckStatusName(a.forward));
    str("backward");
    str(PrecheckStatusName(a.backward));
    str("message");
    str(a.message);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  const std::pair<const fs::path*, std::string_view> outputs[] = {
      {&files.details_csv, details},
      {&files.result_csv, result},
      {&files.json, std::string_view(buffer.GetString(), buffer.GetSize())}};
  for (const auto& [path, text] : outputs) {
    NUMPROBE_RETURN_IF_ERROR(detail::WriteFileAtomically(*path, text));
  }
  return files;
}

}  // namespace numprobe
