#include "ui/tensor_detail.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

#include <fmt/format.h>

#include "numprobe/dtype.h"
#include "numprobe/tensor_file.h"

#include "core/element_load.h"
#include "msprobe/data_file.h"

namespace numprobe::ui {

namespace {

namespace fs = std::filesystem;

// Walks a view's elements in C order, whatever its strides.
class Cursor {
 public:
  explicit Cursor(const TensorView& view)
      : view_(view),
        load_(detail::ElementLoaderFor<detail::ComplexAs::kMagnitude>(view.dtype)),
        item_(ItemSize(view.dtype)),
        index_(view.shape.size(), 0),
        ptr_(view.first()) {}

  double Next() {
    const double v = load_(ptr_);
    for (size_t d = index_.size(); d-- > 0;) {
      const int64_t step = view_.strides[d] * item_;
      if (++index_[d] < view_.shape[d]) {
        ptr_ += step;
        return v;
      }
      ptr_ -= (view_.shape[d] - 1) * step;
      index_[d] = 0;
    }
    return v;
  }

 private:
  const TensorView& view_;
  detail::ElementLoader load_;
  int64_t item_;
  std::vector<int64_t> index_;
  const std::byte* ptr_;
};

std::vector<int64_t> Unravel(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] <= 0) continue;
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

struct Loaded {
  TensorFile file;  // keeps the mapping alive
  const TensorView* view = nullptr;
};

// Reads one side; fills `side` and returns the loaded tensor, or records the error in `side`.
std::optional<Loaded> LoadSide(const fs::path& dir, std::string_view name, TensorSide* side) {
  side->present = !name.empty();
  side->file = std::string(name);
  if (name.empty()) return std::nullopt;
  if (Status s = detail::CheckDataFileName(name); !s.ok()) {
    side->error = s.message();
    return std::nullopt;
  }
  if (dir.empty()) {
    side->error = "the dump's tensor folder is unknown";
    return std::nullopt;
  }
  // Its own file or an entry of the packed container (data_file.h).
  auto path = detail::LocateDataFile(dir, name);
  if (!path) {
    side->error = path.error().message();
    return std::nullopt;
  }
  auto file = detail::ReadDataFile(*path);
  if (!file) {
    side->error = file.error().message();
    return std::nullopt;
  }
  if (file->tensors.empty()) {
    side->error = fmt::format("{} holds no tensor", path->path.filename().string());
    return std::nullopt;
  }
  Loaded loaded;
  loaded.file = std::move(*file);
  loaded.view = &loaded.file.tensors[0].tensor.view();
  side->dtype = std::string(Name(loaded.view->dtype));
  side->shape = loaded.view->shape;
  auto stats = ComputeStats(*loaded.view);
  if (!stats) {
    side->error = stats.error().message();
    return std::nullopt;
  }
  side->stats = *stats;
  // Finite range for the histogram.
  Cursor cursor(*loaded.view);
  const int64_t n = loaded.view->numel();
  bool any = false;
  for (int64_t i = 0; i < n; ++i) {
    const double v = cursor.Next();
    if (!std::isfinite(v)) continue;
    if (!any || v < side->finite_min) side->finite_min = v;
    if (!any || v > side->finite_max) side->finite_max = v;
    any = true;
  }
  return loaded;
}

void Histogram(const TensorView& view, const std::vector<double>& edges, TensorSide* side) {
  const size_t bins = edges.size() - 1;
  side->histogram.assign(bins, 0);
  const double lo = edges.front();
  const double width = edges.back() - edges.front();
  Cursor cursor(view);
  const int64_t n = view.numel();
  for (int64_t i = 0; i < n; ++i) {
    const double v = cursor.Next();
    if (!std::isfinite(v)) continue;
    double pos = (v - lo) / width * static_cast<double>(bins);
    pos = std::clamp(pos, 0.0, static_cast<double>(bins - 1));
    ++side->histogram[static_cast<size_t>(pos)];
  }
}

}  // namespace

Result<TensorDetail> ComputeTensorDetail(const fs::path& target_dir, std::string_view target_file,
                                         const fs::path& golden_dir, std::string_view golden_file,
                                         const TensorDetailOptions& options) {
  if (options.bins < 1 || options.bins > 1024) {
    return Status::InvalidArgument("bins must be between 1 and 1024");
  }
  if (options.top < 0 || options.top > 1000) {
    return Status::InvalidArgument("top must be between 0 and 1000");
  }
  if (options.max_cells < 1 || options.max_cells > 512) {
    return Status::InvalidArgument("cells must be between 1 and 512");
  }
  TensorDetail d;
  auto t = LoadSide(target_dir, target_file, &d.target);
  auto g = LoadSide(golden_dir, golden_file, &d.golden);

  // Shared histogram edges over both sides' finite values.
  bool any = false;
  double lo = 0;
  double hi = 0;
  for (const auto* side : {&d.target, &d.golden}) {
    const bool read = side->present && side->error.empty();
    if (!read || side->stats.count == side->stats.nan_count + side->stats.pos_inf_count +
                                          side->stats.neg_inf_count) {
      continue;
    }
    lo = any ? std::min(lo, side->finite_min) : side->finite_min;
    hi = any ? std::max(hi, side->finite_max) : side->finite_max;
    any = true;
  }
  if (any) {
    if (!(hi > lo)) {
      lo -= 0.5;
      hi += 0.5;
    }
    d.edges.resize(static_cast<size_t>(options.bins) + 1);
    for (int i = 0; i <= options.bins; ++i) {
      d.edges[static_cast<size_t>(i)] = lo + (hi - lo) * i / options.bins;
    }
    if (t) Histogram(*t->view, d.edges, &d.target);
    if (g) Histogram(*g->view, d.edges, &d.golden);
  }

  if (!t || !g || t->view->numel() != g->view->numel()) return d;
  d.paired = true;
  const std::vector<int64_t>& shape = t->view->shape;
  const int64_t n = t->view->numel();
  // The heatmap's plane: the last two dimensions (a vector is one row).
  if (shape.size() >= 2) {
    d.plane_rows = shape[shape.size() - 2];
    d.plane_cols = shape[shape.size() - 1];
  } else {
    d.plane_rows = 1;
    d.plane_cols = shape.empty() ? 1 : shape[0];
  }
  const int64_t plane = d.plane_rows * d.plane_cols;
  d.slices = plane > 0 ? n / plane : 0;
  d.slice = std::clamp<int64_t>(options.slice, 0, std::max<int64_t>(0, d.slices - 1));
  if (plane > 0) {
    d.cell_rows = (d.plane_rows + options.max_cells - 1) / options.max_cells;
    d.cell_cols = (d.plane_cols + options.max_cells - 1) / options.max_cells;
    d.rows = (d.plane_rows + d.cell_rows - 1) / d.cell_rows;
    d.cols = (d.plane_cols + d.cell_cols - 1) / d.cell_cols;
    d.heat.assign(static_cast<size_t>(d.rows * d.cols), 0.0);
  }
  const int64_t slice_begin = d.slice * plane;
  const int64_t slice_end = slice_begin + plane;

  // Worst elements: a bounded heap whose top is the mildest kept (smaller error, or equal error
  // and later index), so the result is the same whatever the order of ties.
  using Item = std::pair<double, int64_t>;
  auto worse = [](const Item& a, const Item& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  std::priority_queue<Item, std::vector<Item>, decltype(worse)> heap(worse);
  Cursor ct(*t->view);
  Cursor cg(*g->view);
  double sum_abs = 0;
  int64_t finite_pairs = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double a = ct.Next();
    const double b = cg.Next();
    double err = 0;
    if (std::isfinite(a) && std::isfinite(b)) {
      err = std::fabs(a - b);
      d.max_abs_err = std::max(d.max_abs_err, err);
      sum_abs += err;
      ++finite_pairs;
    } else if (std::isnan(a) != std::isnan(b)) {
      ++d.nan_mismatch;
      err = std::numeric_limits<double>::infinity();
    } else if (!std::isnan(a) && a != b) {
      ++d.inf_mismatch;
      err = std::numeric_limits<double>::infinity();
    }
    if (i >= slice_begin && i < slice_end) {
      const int64_t local = i - slice_begin;
      const int64_t r = local / d.plane_cols / d.cell_rows;
      const int64_t c = local % d.plane_cols / d.cell_cols;
      double& cell = d.heat[static_cast<size_t>(r * d.cols + c)];
      cell = std::max(cell, err);
    }
    if (options.top > 0 && err > 0) {
      const Item item{err, i};
      if (heap.size() < static_cast<size_t>(options.top)) {
        heap.push(item);
      } else if (worse(item, heap.top())) {
        heap.pop();
        heap.push(item);
      }
    }
  }
  d.mean_abs_err = finite_pairs > 0 ? sum_abs / static_cast<double>(finite_pairs) : 0;
  std::vector<Item> items;
  while (!heap.empty()) {
    items.push_back(heap.top());
    heap.pop();
  }
  std::sort(items.begin(), items.end(), worse);
  // Values of the worst elements: one more pass over the chosen flat indices.
  if (!items.empty()) {
    std::vector<Item> by_index = items;
    std::sort(by_index.begin(), by_index.end(),
              [](const Item& a, const Item& b) { return a.second < b.second; });
    std::vector<std::pair<double, double>> values(by_index.size());
    Cursor vt(*t->view);
    Cursor vg(*g->view);
    size_t next = 0;
    for (int64_t i = 0; i < n && next < by_index.size(); ++i) {
      const double a = vt.Next();
      const double b = vg.Next();
      if (i == by_index[next].second) values[next++] = {a, b};
    }
    for (const Item& item : items) {
      const auto pos =
          std::lower_bound(by_index.begin(), by_index.end(), item,
                           [](const Item& a, const Item& b) { return a.second < b.second; }) -
          by_index.begin();
      WorstElement w;
      w.flat = item.second;
      w.index = Unravel(item.second, shape);
      w.target = values[static_cast<size_t>(pos)].first;
      w.golden = values[static_cast<size_t>(pos)].second;
      w.abs_err = item.first;
      w.rel_err = w.golden != 0 && std::isfinite(item.first)
                      ? item.first / std::fabs(w.golden)
                      : std::numeric_limits<double>::quiet_NaN();
      d.worst.push_back(std::move(w));
    }
  }
  return d;
}

}  // namespace numprobe::ui
