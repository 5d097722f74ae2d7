// The tensor detail view, computed from the dumped tensor files of one compare row: each side's
// statistics, a histogram of each side's values over shared bins, a heatmap of |target - golden|
// over one 2-D slice (the last two dimensions, pooled to at most 64 x 64 cells by their maximum),
// and the worst elements with their indices. Tensors are streamed element by element in C order
// (any dtype, any strides), so memory stays bounded whatever the tensor's size.
#ifndef NUMPROBE_UI_TENSOR_DETAIL_H_
#define NUMPROBE_UI_TENSOR_DETAIL_H_

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/result.h"
#include "numprobe/stats.h"

namespace numprobe::ui {

struct TensorSide {
  bool present = false;  // a file was named
  std::string file;      // file name inside the dump's tensor folder
  std::string error;     // why it could not be read ("" when read)
  std::string dtype;     // numprobe's short name ("bf16")
  std::vector<int64_t> shape;
  TensorStats stats;
  double finite_min = 0;  // over finite elements (0 when there are none)
  double finite_max = 0;
  std::vector<int64_t> histogram;  // counts per bin of TensorDetail::edges (finite values)
};

struct WorstElement {
  std::vector<int64_t> index;  // in the target's shape
  int64_t flat = 0;
  double target = 0;
  double golden = 0;
  double abs_err = 0;
  double rel_err = 0;  // NaN when the golden value is 0
};

struct TensorDetail {
  TensorSide target;
  TensorSide golden;
  std::vector<double> edges;  // bins + 1 edges shared by both histograms
  bool paired = false;        // both read with the same element count: errors computed
  int64_t nan_mismatch = 0;   // NaN on exactly one side
  int64_t inf_mismatch = 0;   // +-Inf on one side only, or of different signs
  double max_abs_err = 0;     // over positions finite on both sides
  double mean_abs_err = 0;
  // Heatmap of one slice: plane_rows x plane_cols elements pooled into rows x cols cells.
  int64_t slice = 0;
  int64_t slices = 0;
  int64_t plane_rows = 0;
  int64_t plane_cols = 0;
  int64_t cell_rows = 0;  // elements per cell, each way
  int64_t cell_cols = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<double> heat;  // rows * cols, max |t - g| per cell (Inf for a NaN/Inf mismatch)
  std::vector<WorstElement> worst;  // largest |t - g| first
};

struct TensorDetailOptions {
  int bins = 64;
  int top = 20;
  int64_t slice = 0;  // which 2-D slice of the leading dimensions (clamped)
  int max_cells = 64;
};

// Reads the files (either may be empty: that side is absent) and computes the detail. A side
// that cannot be read carries its error; the result is an error only for bad options.
Result<TensorDetail> ComputeTensorDetail(const std::filesystem::path& target_dir,
                                         std::string_view target_file,
                                         const std::filesystem::path& golden_dir,
                                         std::string_view golden_file,
                                         const TensorDetailOptions& options);

}  // namespace numprobe::ui

#endif  // NUMPROBE_UI_TENSOR_DETAIL_H_
