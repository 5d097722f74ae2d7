// Short names of the compare metrics, as configs and scripts name them ("cosine", "mae",
// "relative", ...), and the compare table column (CompareTable::Header) each one reads. One
// table, so that the closed-loop config (docs/config-dialect.md) validates the names it is given
// and the front ends pick the same columns. A metric exists in one compare mode: tensor mode has
// msprobe's Cosine ... Five Thousandths and numprobe's extras, statistics mode msprobe's diffs.
#ifndef NUMPROBE_COMPARE_METRIC_NAMES_H_
#define NUMPROBE_COMPARE_METRIC_NAMES_H_

#include <string_view>

namespace numprobe {

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

#endif  // NUMPROBE_COMPARE_METRIC_NAMES_H_
