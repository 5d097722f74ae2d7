// msprobe's MindSpore graph compare (msprobe/mindspore/compare/ms_graph_compare.py): per
// (rank, step), tensors pair by compare key (op_name.task_id.io.slot) and their order among
// equal keys by timestamp; npy mode computes msprobe's tensor metrics, statistic mode the
// differences of statistic.csv's values in float32 with "Accuracy Reached or Not" from the
// relative max difference.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "numprobe/app/mindspore_dump.h"
#include "numprobe/compare.h"
#include "numprobe/compare_metrics.h"
#include "numprobe/stats.h"

#include "compare/xlsx_table.h"
#include "core/atomic_file.h"
#include "core/checked.h"
#include "core/csv.h"
#include "core/py_format.h"
#include "mindspore/graph_internal.h"
#include "mindspore/graph_units.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kBase = {
    "NPU Name",           "Bench Name", "NPU Dtype",  "Bench Dtype",  "NPU Tensor Shape",
    "Bench Tensor Shape", "NPU max",    "NPU min",    "NPU mean",     "NPU l2norm",
    "Bench max",          "Bench min",  "Bench mean", "Bench l2norm", "Accuracy Reached or Not",
    "Err_message"};
const std::vector<std::string> kNpy = {"Cosine",
                                       "EucDist",
                                       "MaxAbsErr",
                                       "MaxRelativeErr",
                                       "One Thousandth Err Ratio",
                                       "Five Thousandths Err Ratio"};
const std::vector<std::string> kStat = {
    "Max diff",       "Min diff",        "Mean diff",       "L2norm diff",  "MaxRelativeErr",
    "MinRelativeErr", "MeanRelativeErr", "NormRelativeErr", "NPU CSV File", "Bench CSV File"};

// Python's str of a shape tuple, with msprobe's ( ) -> [ ] so that spreadsheets keep it as text.
std::string ShapeText(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("[{},]", shape[0]);
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

std::string Brackets(std::string s) {
  std::replace(s.begin(), s.end(), '(', '[');
  std::replace(s.begin(), s.end(), ')', ']');
  return s;
}

// A float cell as msprobe's CSV holds it: NaN empty (pandas' na_rep), Inf " inf" (msprobe's
// replace for spreadsheets), else str() of the numpy scalar.
std::string FloatCell(double v, bool f32) {
  if (std::isnan(v)) return "";
  if (std::isinf(v)) return v > 0 ? " inf" : " -inf";
  return f32 ? detail::PyFloat32Repr(static_cast<float>(v)) : detail::PyFloatRepr(v);
}

// str() of a numpy statistic of the tensor's dtype (float32 for the float types numpy reads).
std::string StatText(DType d, double v) { return FloatCell(v, IsFloating(d) && d != DType::kF64); }

// str() of numpy's max (or min) of `v`, whose TensorStats value is `stat`: an integer array's is
// exact, and a 64-bit one's past 2^53 comes from its elements, which a double does not hold.
std::string ExtremeText(const TensorView& v, double stat, bool max) {
  if (!IsInteger(v.dtype) || !std::isfinite(stat)) return StatText(v.dtype, stat);
  if (std::fabs(stat) >= 0x1p53) {
    if (const auto e = ExactIntegerExtremes<int64_t>(v))
      return fmt::format("{}", max ? e->first : e->second);
    if (const auto e = ExactIntegerExtremes<uint64_t>(v))
      return fmt::format("{}", max ? e->first : e->second);
  }
  if (const auto whole = WholeInt64(stat)) return fmt::format("{}", *whole);
  return StatText(v.dtype, stat);
}

// msprobe's check_accuracy(cos, max_abs_err).
std::string CheckAccuracy(const MetricCell& cos, const MetricCell& mae) {
  using K = MetricCell::Kind;
  if (cos.kind == K::kShapeUnmatched) return "Unmatched";
  if (cos.kind == K::kNA || mae.kind == K::kNA) return "No";
  if (!cos.is_number() || !mae.is_number()) return "None";
  if (cos.value < 0.99 && mae.value > 0.001) return "No";
  if (cos.value < 0.9 || mae.value > 1) return "No";
  return "Yes";
}

// Row order and pairing: each side's tensors by timestamp (stable), the k-th of a key on one
// side with the k-th on the other.
std::vector<std::pair<int64_t, int64_t>> Pair(const GraphDumpData& t, const GraphDumpData& g) {
  auto order = [](const GraphDumpData& d) {
    std::vector<size_t> idx(d.tensors.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      return d.tensors[a].timestamp < d.tensors[b].timestamp;
    });
    return idx;
  };
  const auto t_order = order(t);
  const auto g_order = order(g);
  std::map<std::pair<std::string, int64_t>, size_t> golden;
  std::map<std::string, int64_t> count;
  for (size_t i : g_order)
    golden[{g.tensors[i].compare_key, count[g.tensors[i].compare_key]++}] = i;
  count.clear();
  std::vector<bool> used(g.tensors.size(), false);
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (size_t i : t_order) {
    const auto it = golden.find({t.tensors[i].compare_key, count[t.tensors[i].compare_key]++});
    int64_t gi = -1;
    if (it != golden.end()) {
      gi = static_cast<int64_t>(it->second);
      used[it->second] = true;
    }
    pairs.emplace_back(static_cast<int64_t>(i), gi);
  }
  for (size_t i : g_order) {
    if (!used[i]) pairs.emplace_back(-1, static_cast<int64_t>(i));
  }
  return pairs;
}

std::vector<std::string> NpyRow(const GraphTensor* t, const GraphTensor* g, ThreadPool* pool,
                                std::vector<std::string>* warnings) {
  std::vector<std::string> row(kBase.size() + kNpy.size());
  std::optional<mindspore_detail::LoadedNpy> n;
  std::optional<mindspore_detail::LoadedNpy> b;
  auto load = [&](const GraphTensor* x, size_t name_col, size_t dtype_col, size_t shape_col,
                  size_t stat_col, std::optional<mindspore_detail::LoadedNpy>* out) {
    if (x == nullptr) return;
    auto loaded = mindspore_detail::LoadNpy(x->file, pool);
    if (!loaded) {
      warnings->push_back(loaded.error().message());
      return;
    }
    const TensorView& v = loaded->file.tensors[0].tensor.view();
    row[name_col] = fs::absolute(x->file).string();
    row[dtype_col] = std::string(Traits(v.dtype).torch_name);
    row[shape_col] = ShapeText(v.shape);
    row[stat_col] = ExtremeText(v, loaded->stats.max, true);
    row[stat_col + 1] = ExtremeText(v, loaded->stats.min, false);
    row[stat_col + 2] = StatText(v.dtype, loaded->stats.mean);
    row[stat_col + 3] = StatText(v.dtype, loaded->stats.norm);
    *out = std::move(*loaded);
  };
  load(t, 0, 2, 4, 6, &n);
  load(g, 1, 3, 5, 10, &b);
  // msprobe's npy_data_check.
  std::string message;
  if (!n.has_value() || !b.has_value()) {
    message = "Dump file is not ndarray.\n";
  } else {
    const TensorView& nv = n->file.tensors[0].tensor.view();
    const TensorView& bv = b->file.tensors[0].tensor.view();
    if (nv.numel() == 0 || bv.numel() == 0) {
      message = "This is empty data, can not compare.\n";
    } else {
      if (nv.shape.empty() || bv.shape.empty()) {
        message += "This is type of scalar data, can not compare.\n";
      }
      if (nv.shape != bv.shape) message += "Shape of NPU and bench Tensor do not match.\n";
      if (nv.dtype != bv.dtype) message += "Dtype of NPU and bench Tensor do not match. Skipped.\n";
    }
    if (message.empty()) {
      const TensorPairMetrics m = CompareTensorPair(nv, bv, pool);
      if (m.msprobe[0].kind == MetricCell::Kind::kNA) {
        message = "The position of inf or nan in NPU and bench Tensor do not match.\n";
      } else {
        for (size_t k = 0; k < 6; ++k) row[kBase.size() + k] = m.msprobe[k].Text();
        row[14] = CheckAccuracy(m.msprobe[0], m.msprobe[2]);
      }
    }
  }
  row[15] = message;
  return row;
}

float F32(double v) { return static_cast<float>(v); }

std::vector<std::string> StatRow(const GraphTensor* t, const GraphTensor* g) {
  std::vector<std::string> row(kBase.size() + kStat.size());
  auto fill = [&](const GraphTensor* x, size_t name_col, size_t dtype_col, size_t shape_col,
                  size_t stat_col, size_t csv_col) {
    if (x == nullptr) return;
    row[name_col] = x->compare_key;
    row[dtype_col] = x->dtype;
    row[shape_col] = Brackets(x->shape);
    const double stats[4] = {x->max, x->min, x->mean, x->norm};
    for (int k = 0; k < 4; ++k) {
      row[stat_col + k] = FloatCell(F32(stats[k]), true);
    }
    row[csv_col] = fs::absolute(x->file).string();
  };
  fill(t, 0, 2, 4, 6, kBase.size() + 8);
  fill(g, 1, 3, 5, 10, kBase.size() + 9);
  // msprobe's statistics_data_check (a missing side's shape and dtype are NaN: neither empty nor
  // equal to anything).
  std::string message;
  if ((t != nullptr && t->shape.empty()) || (g != nullptr && g->shape.empty())) {
    message += "This is type of scalar data, can not compare.\n";
  } else if (t == nullptr || g == nullptr || t->shape != g->shape) {
    message += "Tensor shapes do not match.\n";
  }
  if (t == nullptr || g == nullptr || t->dtype != g->dtype) {
    message += "Dtype of NPU and bench Tensor do not match. Skipped.\n";
  }
  row[15] = message;
  if (!message.empty()) return row;
  const float n[4] = {F32(t->max), F32(t->min), F32(t->mean), F32(t->norm)};
  const float b[4] = {F32(g->max), F32(g->min), F32(g->mean), F32(g->norm)};
  float diff[4];
  for (int k = 0; k < 4; ++k) {
    diff[k] = n[k] - b[k];
    row[kBase.size() + k] = FloatCell(diff[k], true);
    std::string rel = "N/A";
    if (b[k] != 0) {
      const float r = diff[k] / b[k];
      // r * 100 is a float64 in numpy (a float32 scalar times a Python int).
      rel = std::isnan(r) ? "Nan"
                          : detail::PyFloatRepr(std::fabs(static_cast<double>(r) * 100)) + "%";
    }
    row[kBase.size() + 4 + k] = rel;
  }
  // Python's max(a, b) keeps a unless b > a (so a NaN first stays).
  const float top = b[0] > n[0] ? b[0] : n[0];
  double magnitude = static_cast<double>(diff[0]) / (static_cast<double>(top) + 1e-10);
  if (std::isnan(n[0]) && std::isnan(b[0])) magnitude = 0;
  row[14] = magnitude <= 0.5 ? "Yes" : "No";
  return row;
}

}  // namespace

namespace mindspore_detail {

Result<LoadedNpy> LoadNpy(const fs::path& path, ThreadPool* pool) {
  LoadedNpy out;
  NUMPROBE_ASSIGN_OR_RETURN(out.file, ReadTensorFile(path, ReadOptions{}));
  if (out.file.tensors.size() != 1) {
    return Status::Corrupt(path.string() + ": not a single .npy array");
  }
  StatsOptions options;
  options.pool = pool;
  auto stats = ComputeStats(out.file.tensors[0].tensor.view(), options);
  if (!stats) return stats.error().WithContext(path.string());
  out.stats = *stats;
  return out;
}

}  // namespace mindspore_detail

namespace mindspore_detail {

Result<GraphComparePlan> PlanGraphCompare(const fs::path& target, const fs::path& golden) {
  auto t_folders = FindGraphDumpFolders(target);
  if (!t_folders) return t_folders.error().WithContext("target");
  auto g_folders = FindGraphDumpFolders(golden);
  if (!g_folders) return g_folders.error().WithContext("golden");
  using Key = std::pair<int64_t, int64_t>;
  std::map<Key, std::vector<fs::path>> t_dirs;
  std::map<Key, std::vector<fs::path>> g_dirs;
  for (const auto& f : *t_folders) t_dirs[{f.rank, f.step}].push_back(f.dir);
  for (const auto& f : *g_folders) g_dirs[{f.rank, f.step}].push_back(f.dir);
  GraphComparePlan plan;
  for (auto& [key, dirs] : t_dirs) {
    const auto other = g_dirs.find(key);
    if (other == g_dirs.end()) {
      plan.missing.push_back(
          fmt::format("rank {} step {}: only in the target dump", key.first, key.second));
      continue;
    }
    plan.units.push_back(GraphUnit{key.first, key.second, std::move(dirs), other->second});
  }
  for (const auto& [key, dirs] : g_dirs) {
    if (t_dirs.count(key) == 0) {
      plan.missing.push_back(
          fmt::format("rank {} step {}: only in the golden dump", key.first, key.second));
    }
  }
  return plan;
}

Result<GraphCompareTable> CompareGraphUnit(const GraphUnit& unit, ThreadPool* pool) {
  auto t = ReadGraphDump(unit.target);
  if (!t) return t.error().WithContext("target");
  auto g = ReadGraphDump(unit.golden);
  if (!g) return g.error().WithContext("golden");
  if (t->mode != g->mode) {
    return Status::InvalidArgument(
        fmt::format("rank {} step {}: the target dump holds {} and the golden {}", unit.rank,
                    unit.step, t->mode == GraphDumpMode::kNpy ? ".npy files" : "statistic.csv",
                    g->mode == GraphDumpMode::kNpy ? ".npy files" : "statistic.csv"));
  }
  GraphCompareTable table;
  table.rank = unit.rank;
  table.step = unit.step;
  table.mode = t->mode;
  table.header = kBase;
  const auto& extra = t->mode == GraphDumpMode::kNpy ? kNpy : kStat;
  table.header.insert(table.header.end(), extra.begin(), extra.end());
  for (const auto& [ti, gi] : Pair(*t, *g)) {
    const GraphTensor* tt = ti >= 0 ? &t->tensors[static_cast<size_t>(ti)] : nullptr;
    const GraphTensor* gg = gi >= 0 ? &g->tensors[static_cast<size_t>(gi)] : nullptr;
    table.rows.push_back(t->mode == GraphDumpMode::kNpy ? NpyRow(tt, gg, pool, &table.warnings)
                                                        : StatRow(tt, gg));
    if (table.rows.back()[14] == "No") ++table.not_reached;
    if (!table.rows.back()[15].empty()) ++table.with_message;
  }
  return table;
}

}  // namespace mindspore_detail

Result<std::vector<GraphCompareTable>> CompareGraphDumps(const fs::path& target,
                                                         const fs::path& golden,
                                                         std::vector<std::string>* missing,
                                                         ThreadPool* pool) {
  NUMPROBE_ASSIGN_OR_RETURN(mindspore_detail::GraphComparePlan plan,
                            mindspore_detail::PlanGraphCompare(target, golden));
  std::vector<GraphCompareTable> tables;
  tables.reserve(plan.units.size());
  for (const mindspore_detail::GraphUnit& unit : plan.units) {
    NUMPROBE_ASSIGN_OR_RETURN(GraphCompareTable table,
                              mindspore_detail::CompareGraphUnit(unit, pool));
    tables.push_back(std::move(table));
  }
  if (missing != nullptr) missing->insert(missing->end(), plan.missing.begin(), plan.missing.end());
  return tables;
}

std::string GraphCompareFileName(const GraphCompareTable& table, const std::string& timestamp,
                                 bool xlsx) {
  return fmt::format("compare_result_{}_{}_{}.{}", table.rank, table.step, timestamp,
                     xlsx ? "xlsx" : "csv");
}

Status WriteGraphCompareCsv(const GraphCompareTable& table, const fs::path& path) {
  std::string text;
  detail::AppendCsvLine(table.header, &text);
  for (const auto& row : table.rows) detail::AppendCsvLine(row, &text);
  return detail::WriteFileAtomically(path, text);
}

Status WriteGraphCompareXlsx(const GraphCompareTable& table, const fs::path& path) {
  detail::XlsxTable x;  // msprobe's save_excel: no highlighting for graph compare
  x.header = table.header;
  x.rows = table.rows.size();
  x.cells = [&table](size_t i) { return table.rows[i]; };
  return detail::WriteXlsxTable(x, path);
}

}  // namespace numprobe
