// The statistics numprobe scan works from: dump.json's Max/Min/Mean/Norm, or the exact figures of
// a tensor-mode dump's tensor files (ComputeStats), plus element access for the watchpoints that
// need two tensors side by side (weight updates) or a value census (activation ranges).
#include <cmath>
#include <limits>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "numprobe/memory_limit.h"
#include "numprobe/stats.h"
#include "numprobe/tensor_file.h"

#include "core/ascii_case.h"
#include "core/element_load.h"
#include "msprobe/data_file.h"
#include "scan/scan_internal.h"

namespace numprobe::detail {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A statistic as a number: floats and ints as they are, and the texts "nan"/"inf"/"-inf" some
// writers use for non-finite statistics.
bool NumberOf(const DumpFile& file, const PyValue& value, double* out) {
  switch (value.kind()) {
    case PyValue::Kind::kFloat:
    case PyValue::Kind::kInt:
      *out = value.as_float();
      return true;
    case PyValue::Kind::kStr: {
      const std::string text = AsciiLowered(file.Text(value.text_id()));  // ASCII words only
      if (text == "nan") {
        *out = kNaN;
      } else if (text == "inf" || text == "infinity" || text == "+inf") {
        *out = HUGE_VAL;
      } else if (text == "-inf" || text == "-infinity") {
        *out = -HUGE_VAL;
      } else {
        return false;
      }
      return true;
    }
    default:
      return false;
  }
}

void ApplyFileStats(const TensorStats& s, ScanTensor* t) {
  t->exact = true;
  t->count = s.count;
  t->nan_count = s.nan_count;
  t->inf_count = s.pos_inf_count + s.neg_inf_count;
  t->zero_count = s.zero_count;
  t->has_max = t->has_min = s.has_minmax;
  t->max = s.max;
  t->min = s.min;
  t->has_mean = t->has_norm = s.has_mean_norm;
  t->mean = s.mean;
  t->norm = s.norm;
  t->nonfinite = s.nan_count + s.pos_inf_count + s.neg_inf_count > 0;
  const bool any = s.count > s.nan_count;
  t->max_abs = any ? s.max_abs : kNaN;
  // ComputeStats reports +Inf when no element is non-zero: kept, it means "none to underflow".
  t->min_nonzero_abs = any ? s.min_nonzero_abs : kNaN;
}

}  // namespace

ScanTensor TensorOfRow(const DumpFile& file, const DumpRow& row, const RowReadContext& context,
                       ScanTensor reuse) {
  ScanTensor t;  // every number at its default; the strings take `reuse`'s memory
  t.name.swap(reuse.name);
  t.dtype.swap(reuse.dtype);
  t.shape.swap(reuse.shape);
  t.file.swap(reuse.file);
  t.name.assign(row.name);
  t.dtype.assign(file.Text(row.dtype));
  t.shape.assign(file.Text(row.shape));
  t.file.clear();
  t.is_tensor = row.is_tensor;
  t.max_abs = kNaN;
  t.min_nonzero_abs = kNaN;
  if (!row.is_tensor) {
    // A scalar argument: a NaN or Inf float passed in (masked_fill(-inf), full(nan)) makes the
    // op's non-finite output expected.
    double v = 0;
    if (row.stats[kStatMax].kind() == PyValue::Kind::kFloat &&
        NumberOf(file, row.stats[kStatMax], &v)) {
      t.has_max = t.has_min = true;
      t.max = t.min = v;
      t.nonfinite = !std::isfinite(v);
    }
    return t;
  }
  t.has_max = NumberOf(file, row.stats[kStatMax], &t.max);
  t.has_min = NumberOf(file, row.stats[kStatMin], &t.min);
  t.has_mean = NumberOf(file, row.stats[kStatMean], &t.mean);
  t.has_norm = NumberOf(file, row.stats[kStatNorm], &t.norm);
  // msprobe's rule: a tensor is abnormal when its Max or Min is NaN or +-Inf. (Norm alone can be
  // Inf for finite fp16 values, because msprobe computes it in the tensor's own dtype.)
  t.nonfinite = (t.has_max && !std::isfinite(t.max)) || (t.has_min && !std::isfinite(t.min));
  std::optional<int64_t> numel;
  if (LastShape* last = context.last_shape; last != nullptr) {
    if (!last->set || last->text != t.shape) {
      last->numel = NumelOfShapeText(t.shape);
      last->text = t.shape;
      last->set = true;
    }
    numel = last->numel;
  } else {
    numel = NumelOfShapeText(t.shape);
  }
  if (numel) t.count = *numel;
  if (t.has_max && t.has_min && !t.nonfinite) {
    t.max_abs = std::max(std::fabs(t.max), std::fabs(t.min));
    if (t.min > 0) {
      t.min_nonzero_abs = t.min;
    } else if (t.max < 0) {
      t.min_nonzero_abs = -t.max;
    } else if (t.max == 0 && t.min == 0) {
      t.min_nonzero_abs = HUGE_VAL;  // all zeros: nothing can underflow
    }
  }
  if (!context.read_files || row.data_name.empty() || context.location == nullptr) return t;
  // Its own file or an entry of the packed container (data_file.h).
  auto resolved = LocateDataFile(context.location->tensor_dir, row.data_name);
  if (!resolved) {
    if (resolved.error().code() == ErrorCode::kNotFound) {
      if (context.files_missing != nullptr) ++*context.files_missing;
    } else if (context.warnings != nullptr) {
      context.warnings->push_back(fmt::format("{}: {}", row.name, resolved.error().message()));
    }
    return t;
  }
  const std::filesystem::path& path = resolved->path;
  ReadOptions read_options;
  read_options.max_inflated_bytes = context.max_memory;
  read_options.stream_deflated_over = kStreamDeflatedOver;  // statistics need no whole copy
  auto tensor_file = ReadDataFile(*resolved, read_options);
  if (!tensor_file) {
    if (context.warnings != nullptr) {
      context.warnings->push_back(fmt::format("{}: {}; statistics taken from dump.json",
                                              path.string(), tensor_file.error().message()));
    }
    return t;
  }
  if (tensor_file->tensors.empty()) {
    if (context.warnings != nullptr) {
      context.warnings->push_back(fmt::format("{}: holds no tensor", path.string()));
    }
    return t;
  }
  std::vector<std::string> pass_warnings;
  auto stats =
      ComputeTensorStats(tensor_file->tensors[0].tensor, {}, context.max_memory, &pass_warnings);
  if (context.warnings != nullptr) {
    for (const std::string& w : pass_warnings) {
      context.warnings->push_back(fmt::format("{}: {}", path.string(), w));
    }
  }
  if (!stats) {
    if (context.warnings != nullptr) {
      context.warnings->push_back(fmt::format("{}: {}", path.string(), stats.error().message()));
    }
    return t;
  }
  ApplyFileStats(*stats, &t);
  t.file = path.string();
  if (context.files_read != nullptr) ++*context.files_read;
  return t;
}

Result<Tensor> LoadTensorFile(const std::filesystem::path& path, uint64_t max_memory) {
  ReadOptions read_options;
  read_options.max_inflated_bytes = max_memory;
  // `path` is a ScanTensor's file: a data file located by TensorOfRow, in either layout.
  NUMPROBE_ASSIGN_OR_RETURN(
      TensorFile file, ReadDataFile(path.parent_path(), path.filename().string(), read_options));
  if (file.tensors.empty()) return Status::NotFound(path.string() + ": holds no tensor");
  Tensor t = std::move(file.tensors[0].tensor);
  if (t.view().is_contiguous()) return t;
  return Tensor::CopyOf(t.view());
}

double ElementAsDouble(const TensorView& view, int64_t i) {
  return LoadElement<ComplexAs::kMagnitude>(view.dtype, view.first() + i * ItemSize(view.dtype));
}

Result<UpdateFacts> CompareUpdate(const Tensor& current, const Tensor& previous, double rtol,
                                  double atol, double epsilon) {
  const int64_t n = current.numel();
  if (n != previous.numel()) {
    return Status::InvalidArgument(
        fmt::format("{} elements now but {} in the previous step", n, previous.numel()));
  }
  UpdateFacts facts;
  facts.allclose = true;
  if (n == 0) return facts;
  // Sums in element order: the same result for any thread count.
  double diff_sum = 0;
  double base_sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double a = ElementAsDouble(current.view(), i);
    const double b = ElementAsDouble(previous.view(), i);
    diff_sum += std::fabs(a - b);
    base_sum += std::fabs(b);
    if (facts.allclose) {
      const bool close = !std::isnan(a) && !std::isnan(b) &&
                         (a == b || std::fabs(a - b) <= atol + rtol * std::fabs(b));
      facts.allclose = close;
    }
  }
  const auto count = static_cast<double>(n);
  facts.ratio = (diff_sum / count) / (base_sum / count + epsilon);
  return facts;
}

double PercentInRange(const Tensor& t, double low, double high) {
  int64_t counted = 0;
  int64_t inside = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = ElementAsDouble(t.view(), i);
    if (std::isnan(v)) continue;
    ++counted;
    if (v >= low && v <= high) ++inside;
  }
  return counted == 0 ? 0.0 : 100.0 * static_cast<double>(inside) / static_cast<double>(counted);
}

}  // namespace numprobe::detail
