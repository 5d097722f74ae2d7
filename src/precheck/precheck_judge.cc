// msprobe's acc_check judgment of one output (its Comparator._compare_float_tensor and the
// standard classes: which columns it fills, in which order its rules stop, with its messages),
// numprobe's verdict by the API's standard where one run decides it, and the aggregation of an
// API's rows into its line of the result CSV.
#include <cmath>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "numprobe/app/precheck.h"

namespace numprobe {
namespace {

// Python's repr of a tuple of ints: "()", "(5,)", "(2, 3)".
std::string TupleRepr(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

// numpy's name of a dtype ("float32", "int64", "bool").
std::string NumpyName(DType dtype) {
  const std::string torch = TorchDTypeString(dtype);
  return torch.substr(torch.find('.') + 1);
}

void FillStandardColumns(PrecheckStandard standard, const PrecheckMetrics& m, PrecheckRow* r) {
  auto& c = r->columns;
  switch (standard) {
    case PrecheckStandard::kBenchmark:
      c[kPcSmallValueErrRatio] = m.small_value_err_ratio;
      c[kPcMaxRelErr] = m.max_rel_err;
      c[kPcMeanRelErr] = m.mean_rel_err;
      c[kPcRmse] = m.rmse;
      c[kPcErrorBalance] = m.error_balance;
      break;
    case PrecheckStandard::kAbsoluteThreshold:
      c[kPcInfNanErrRatio] = m.inf_nan_err_ratio;
      c[kPcRelErrRatio] = m.rel_err_ratio;
      c[kPcAbsErrRatio] = m.abs_err_ratio;
      break;
    case PrecheckStandard::kUlp:
      c[kPcMaxUlpErr] = m.max_ulp_err;
      c[kPcMeanUlpErr] = m.mean_ulp_err;
      c[kPcUlpErrProportion] = m.ulp_err_proportion;
      break;
    case PrecheckStandard::kThousandth:
      c[kPcDual1000] = m.dual[1];
      break;
    case PrecheckStandard::kBinaryConsistency:
      c[kPcErrorRate] = m.error_rate;
      break;
  }
}

// numprobe's verdict by the output's standard, from this run alone where that is possible.
void JudgeStandard(PrecheckStandard standard, DType dtype, const PrecheckThresholds& t,
                   const PrecheckMetrics& m, PrecheckRow* r) {
  r->standard = std::string(EnumName(standard));
  auto verdict = [&](bool pass, std::string reason) {
    r->standard_result = pass ? PrecheckStatus::kPass : PrecheckStatus::kError;
    r->reason = std::move(reason);
  };
  switch (standard) {
    case PrecheckStandard::kBinaryConsistency:
      verdict(m.error_rate == 0,
              fmt::format("binary consistency: {:.6g} of the elements differ", m.error_rate));
      return;
    case PrecheckStandard::kAbsoluteThreshold: {
      const bool pass = m.inf_nan_err_ratio == 0 && m.rel_err_ratio == 0 && m.abs_err_ratio == 0;
      verdict(pass, fmt::format("absolute threshold: relative errors above rtol {:g} in {:.6g} of "
                                "normal values, absolute errors above {:g} in {:.6g} of small "
                                "values, inf/nan mismatches {:.6g}",
                                t.rtol, m.rel_err_ratio, t.small_atol, m.abs_err_ratio,
                                m.inf_nan_err_ratio));
      return;
    }
    case PrecheckStandard::kUlp: {
      const bool f32 = dtype == DType::kF32;
      const bool pass =
          f32 ? (m.mean_ulp_err < 64 || m.ulp_err_proportion < 0.05) : m.ulp_err_proportion < 0.001;
      verdict(pass, fmt::format("ULP: mean {:.6g}, {:.6g} of the elements above {:g} ULP "
                                "(limits: {})",
                                m.mean_ulp_err, m.ulp_err_proportion, t.ulp_thr,
                                f32 ? "mean < 64 or share < 0.05" : "share < 0.001"));
      return;
    }
    case PrecheckStandard::kThousandth:
      verdict(m.dual[1] >= 0.999,
              fmt::format("dual-1000: {:.6g} of the relative errors below 0.1% (limit 0.999)",
                          m.dual[1]));
      return;
    case PrecheckStandard::kBenchmark:
      r->standard_result = PrecheckStatus::kNone;
      r->reason =
          "benchmark standard: judged against a second device's run (numprobe precheck-compare)";
      return;
  }
}

}  // namespace

PrecheckRow MessageRow(std::string name, PrecheckStatus status, std::string message) {
  PrecheckRow r;
  r.name = std::move(name);
  r.bench_dtype = r.device_dtype = r.shape = " ";
  r.status = status;
  r.message = std::move(message);
  return r;
}

PrecheckRow JudgeBuiltinOutput(std::string name, std::string bench_type, std::string device_type,
                               bool equal) {
  PrecheckRow r =
      MessageRow(std::move(name), equal ? PrecheckStatus::kPass : PrecheckStatus::kError, "");
  r.bench_dtype = std::move(bench_type);
  r.device_dtype = std::move(device_type);
  if (equal) r.columns[kPcErrorRate] = 0.0;
  r.standard = std::string(EnumName(PrecheckStandard::kBinaryConsistency));
  r.standard_result = r.status;
  r.reason = equal ? "the values are equal" : "the values differ";
  return r;
}

PrecheckRow JudgeTensorOutput(const TensorOutputInfo& info, const PrecheckMetrics& m) {
  PrecheckRow r;
  r.name = info.name;
  r.bench_dtype = TorchDTypeString(info.bench_dtype);
  r.device_dtype = TorchDTypeString(info.device_dtype);
  r.shape = TupleRepr(info.shape);
  r.device = info.device;
  r.worst_index = m.worst_index;
  if (m.worst_index >= 0) {
    r.worst_device = m.worst_device;
    r.worst_bench = m.worst_bench;
  }
  if (m.count == 0) {
    r.status = PrecheckStatus::kSkip;
    r.message = "There is not bench calculation result.";
    return r;
  }
  const DType dtype = info.device_dtype;
  if (!IsFloating(dtype)) {
    r.columns[kPcErrorRate] = m.error_rate;
    r.status = m.error_rate == 0 ? PrecheckStatus::kPass : PrecheckStatus::kError;
    r.message = fmt::format("Current {} data, only perform binary comparison.", NumpyName(dtype));
    r.standard = std::string(EnumName(PrecheckStandard::kBinaryConsistency));
    r.standard_result = r.status;
    r.reason = fmt::format("binary consistency: {:.6g} of the elements differ", m.error_rate);
    return r;
  }
  const PrecheckStandard standard = StandardFor(info.api, dtype);
  const auto t = ThresholdsFor(dtype);
  std::string& msg = r.message;
  if (t.has_value()) {
    FillStandardColumns(standard, m, &r);
    JudgeStandard(standard, dtype, *t, m, &r);
    // An input gradient sums over every element its input was broadcast to or reduced from, so
    // a faithful float32 gradient can sit many ULP from float64 near cancellation: only the
    // binary standard judges it alone; the others need a reference device's errors.
    const bool gradient = info.name.find(".backward.") != std::string::npos;
    if (gradient && standard != PrecheckStandard::kBinaryConsistency) {
      r.standard_result = PrecheckStatus::kNone;
      r.reason = fmt::format(
          "{} standard on a gradient: judged against a reference device's run (numprobe "
          "precheck-compare); this run alone is judged by msprobe's Status",
          EnumName(standard));
    }
  } else {
    msg += fmt::format("The data type {} is not supported for new precision standard.",
                       TorchDTypeString(dtype));
  }

  // msprobe's rules, in its order; each stops the row.
  bool cosine_ok = true;
  if (!m.cosine_defined) {
    if (m.count == 1) {
      msg +=
          "All the data in device dump data is scalar. Please refer to other compare algorithms.";
    } else if (m.max_abs_d <= std::numeric_limits<double>::epsilon() &&
               m.max_abs_b <= std::numeric_limits<double>::epsilon()) {
      msg += "All the data in device and bench outputs are zero.";
    } else {
      cosine_ok = false;
      msg += m.max_abs_d <= std::numeric_limits<double>::epsilon()
                 ? "All the data is zero in device dump data."
                 : "All the data is zero in bench dump data.";
    }
  } else if (std::isnan(m.cosine)) {
    r.columns[kPcCosine] = m.cosine;
    msg += "Dump data has NaN when comparing with Cosine Similarity.";
  } else {
    r.columns[kPcCosine] = m.cosine;
    cosine_ok = m.cosine > 0.99;
  }
  msg += "\n";
  auto stop = [&](PrecheckStatus status, std::string_view text) {
    r.status = status;
    msg += text;
    return r;
  };
  if (!cosine_ok) {
    return stop(PrecheckStatus::kError,
                "Cosine similarity is less than 0.99, consider as error, skip other check and set "
                "to SPACE.\n");
  }
  r.columns[kPcMaxAbsErr] = m.max_abs_err;
  if (m.max_abs_err < 0.001) {
    return stop(PrecheckStatus::kPass,
                "Max abs error is less than 0.001, consider as pass, skip other check and set to "
                "SPACE.\n");
  }
  const bool half = dtype == DType::kF16 || dtype == DType::kBF16;
  if (half) {
    r.columns[kPcDual100] = m.dual[0];
    if (!(m.dual[0] > 1 - 0.01)) {
      return stop(PrecheckStatus::kError,
                  "Relative error is greater than 0.01, consider as error, skip other check and "
                  "set to SPACE.\n");
    }
  }
  r.columns[kPcDual1000] = m.dual[1];
  const bool thousand_ok = m.dual[1] > 1 - 0.001;
  if (half) {
    return thousand_ok ? stop(PrecheckStatus::kPass,
                              "Relative error is less than 0.001, consider as pass, skip other "
                              "check and set to SPACE.\n")
                       : stop(PrecheckStatus::kWarning,
                              "Relative error is greater than 0.001, consider as warning, skip "
                              "other check and set to SPACE.\n");
  }
  r.columns[kPcDual10000] = m.dual[2];
  if (dtype == DType::kF32 || dtype == DType::kF64) {
    if (!thousand_ok) {
      return stop(PrecheckStatus::kError,
                  "Relative error is greater than 0.001, consider as error, skip other check and "
                  "set to SPACE.\n");
    }
    if (!(m.dual[2] > 1 - 0.0001)) {
      return stop(PrecheckStatus::kWarning,
                  "Relative error is greater than 0.0001, consider as warning, skip other check "
                  "and set to SPACE.\n");
    }
    return stop(PrecheckStatus::kPass, "Relative error is less than 0.0001, consider as pass.\n");
  }
  return stop(PrecheckStatus::kPass, "");
}

PrecheckStatus JudgeDropout(int64_t bench_zeros, int64_t device_zeros, int64_t numel) {
  if (numel < 100) return PrecheckStatus::kPass;
  const double share =
      static_cast<double>(std::llabs(bench_zeros - device_zeros)) / static_cast<double>(numel);
  return share < 0.1 ? PrecheckStatus::kPass : PrecheckStatus::kError;
}

void Aggregate(PrecheckApiResult* api) {
  auto fold = [](const std::vector<PrecheckRow>& rows) {
    if (rows.empty()) return PrecheckStatus::kNone;
    PrecheckStatus out = PrecheckStatus::kSkip;
    bool judged = false;
    for (const PrecheckRow& r : rows) {
      if (r.status == PrecheckStatus::kSkip || r.status == PrecheckStatus::kNone) continue;
      out = judged ? WorseStatus(out, r.status) : r.status;
      judged = true;
    }
    return out;
  };
  if (!api->dropout) api->forward = fold(api->forward_rows);
  api->backward = fold(api->backward_rows);
  api->message.clear();
  if (api->forward == PrecheckStatus::kSkip && !api->forward_rows.empty()) {
    api->message = api->forward_rows.front().message;
  } else if (api->backward == PrecheckStatus::kSkip && !api->backward_rows.empty()) {
    api->message = api->backward_rows.front().message;
  }
  PrecheckStatus verdict = api->dropout ? api->forward : PrecheckStatus::kNone;
  for (const auto* rows : {&api->forward_rows, &api->backward_rows}) {
    for (const PrecheckRow& r : *rows) verdict = WorseStatus(verdict, r.verdict());
  }
  api->verdict = verdict;
}

PrecheckApiResult SkippedApi(std::string api, std::string message) {
  PrecheckApiResult out;
  out.forward_rows.push_back(
      MessageRow(api + ".forward.output.0", PrecheckStatus::kSkip, std::move(message)));
  out.api = std::move(api);
  Aggregate(&out);
  out.backward = PrecheckStatus::kSkip;
  return out;
}

PrecheckSummary Summarize(const std::vector<PrecheckApiResult>& apis) {
  PrecheckSummary s;
  for (const PrecheckApiResult& a : apis) {
    ++s.apis;
    switch (a.verdict) {
      case PrecheckStatus::kPass:
        ++s.pass;
        break;
      case PrecheckStatus::kWarning:
        ++s.warning;
        break;
      case PrecheckStatus::kError:
        ++s.error;
        break;
      default:
        ++s.skip;
        break;
    }
  }
  return s;
}

}  // namespace numprobe
