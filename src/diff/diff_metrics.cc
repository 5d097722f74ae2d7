// The figures of one diff pair and the whole diff. TroubleShooter's columns (allclose with the
// user's rtol/atol, cosine, mean and max |a - b|) have their own accumulation here because their
// semantics differ from msprobe's (no zeroing of NaN/Inf, no rounding, user tolerances); the
// msprobe/numprobe metrics (MaxRelativeErr, RMSE, ULP) come from CompareTensorPair, which shows
// this file every block of values it decodes, so both tensors are read once.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "numprobe/compare_metrics.h"
#include "numprobe/diff.h"
#include "numprobe/thread_pool.h"

#include "compare/pair_blocks.h"

namespace numprobe {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

struct Partial {
  int64_t close = 0;
  int64_t finite = 0;
  double dot = 0, aa = 0, bb = 0, sum_abs = 0, max_abs = 0;
  int64_t worst_index = -1;
  int64_t nan_mm = 0, inf_mm = 0;

  void Merge(const Partial& o) {
    close += o.close;
    finite += o.finite;
    dot += o.dot;
    aa += o.aa;
    bb += o.bb;
    sum_abs += o.sum_abs;
    if (o.worst_index >= 0 && (worst_index < 0 || o.max_abs > max_abs)) {
      max_abs = o.max_abs;  // a later chunk wins only when strictly worse: the first index stays
      worst_index = o.worst_index;
    }
    nan_mm += o.nan_mm;
    inf_mm += o.inf_mm;
  }
};

// Adds elements [first_index, first_index + count) of a and b, in order, to `p`.
void Accumulate(const double* av, const double* bv, int64_t count, int64_t first_index, double rtol,
                double atol, Partial* p) {
  for (int64_t i = 0; i < count; ++i) {
    const double x = av[i];
    const double y = bv[i];
    const bool x_nan = std::isnan(x);
    const bool y_nan = std::isnan(y);
    const bool x_inf = std::isinf(x);
    const bool y_inf = std::isinf(y);
    if (x_nan || y_nan || x_inf || y_inf) {
      p->nan_mm += static_cast<int64_t>(x_nan != y_nan);
      const bool same_inf = x_inf && y_inf && (x > 0) == (y > 0);
      p->inf_mm += static_cast<int64_t>((x_inf || y_inf) && !same_inf && !x_nan && !y_nan);
      p->close += static_cast<int64_t>((x_nan && y_nan) || same_inf);
      continue;
    }
    const double d = std::fabs(x - y);
    ++p->finite;
    p->close += static_cast<int64_t>(d <= atol + rtol * std::fabs(y));
    p->dot += x * y;
    p->aa += x * x;
    p->bb += y * y;
    p->sum_abs += d;
    if (p->worst_index < 0 || d > p->max_abs) {
      p->max_abs = d;
      p->worst_index = first_index + i;
    }
  }
}

double Cosine(const Partial& p) {
  const double na = std::sqrt(p.aa);
  const double nb = std::sqrt(p.bb);
  if (na <= kEps && nb <= kEps) return 1.0;
  if (na <= kEps || nb <= kEps) return std::numeric_limits<double>::quiet_NaN();
  return std::clamp(p.dot / (na * nb), -1.0, 1.0);
}

// One Partial per chunk of the pair, filled from the blocks CompareTensorPair decodes and
// combined in chunk order: the reduction ChunkedReduce performs, so the figures do not depend on
// the thread count.
class DiffSink final : public detail::PairBlockSink {
 public:
  DiffSink(int64_t numel, double rtol, double atol)
      : chunks_(static_cast<size_t>((numel + detail::kPairChunk - 1) / detail::kPairChunk)),
        rtol_(rtol),
        atol_(atol) {}

  void Block(int64_t chunk, const double* a, const double* b, int64_t n,
             int64_t first_index) override {
    Accumulate(a, b, n, first_index, rtol_, atol_, &chunks_[static_cast<size_t>(chunk)]);
  }

  Partial Total() const {
    Partial total;
    for (const Partial& part : chunks_) total.Merge(part);
    return total;
  }

 private:
  std::vector<Partial> chunks_;
  double rtol_, atol_;
};

}  // namespace

Result<DiffMetrics> DiffTensorValues(const TensorView& a, const TensorView& b, double rtol,
                                     double atol, ThreadPool* pool) {
  if (IsComplex(a.dtype) || IsComplex(b.dtype)) {
    return Status::Unsupported("complex values are not compared");
  }
  if (!ShapesCompatible(a.shape, b.shape)) {
    return Status::InvalidArgument("shapes are not compatible");
  }
  DiffMetrics m;
  m.numel = a.numel();
  DiffSink sink(m.numel, rtol, atol);
  if (m.numel > 0) {
    const TensorPairMetrics cm = detail::CompareTensorPairWithSink(a, b, pool, &sink);
    if (!cm.compared) return Status::Internal("the compare kernel did not read the pair");
    const MetricCell& rel = cm.msprobe[3];
    m.max_rel = rel.is_number()                       ? rel.value
                : rel.kind == MetricCell::Kind::kZero ? 0.0
                                                      : std::numeric_limits<double>::quiet_NaN();
    if (cm.extras.has_value()) {
      m.rmse = cm.extras->rmse;
      m.max_ulp = cm.extras->max_ulp;
      m.ulp_dtype = cm.extras->ulp_dtype;
    }
  } else {
    m.max_rel = 0;
  }
  const Partial p = sink.Total();
  m.close = p.close;
  m.allclose = p.close == m.numel;
  m.allclose_ratio =
      m.numel > 0 ? static_cast<double>(p.close) / static_cast<double>(m.numel) : 1.0;
  m.cosine = Cosine(p);
  m.mean_abs = p.finite > 0 ? p.sum_abs / static_cast<double>(p.finite) : 0.0;
  m.max_abs = p.max_abs;
  m.worst_index = p.max_abs > 0 ? p.worst_index : -1;
  m.nan_mismatch = p.nan_mm;
  m.inf_mismatch = p.inf_mm;
  return m;
}

std::string_view DiffStatusText(const DiffRow& row) {
  // diff's words for the verdict of a compared pair.
  static constexpr EnumNameEntry<Verdict> kCompared[] = {{Verdict::kPass, "equal"},
                                                         {Verdict::kError, "differs"}};
  return row.compared() ? NameIn(kCompared, row.verdict) : EnumName(row.skip);
}

int64_t DiffReport::CountCompared(Verdict verdict) const {
  return std::count_if(rows.begin(), rows.end(), [verdict](const DiffRow& r) {
    return r.compared() && r.verdict == verdict;
  });
}

int64_t DiffReport::CountSkipped(DiffSkip skip) const {
  return std::count_if(rows.begin(), rows.end(),
                       [skip](const DiffRow& r) { return r.skip == skip; });
}

int64_t DiffReport::CountFailingUnpaired() const {
  int64_t n = 0;
  for (size_t i : only_a) n += static_cast<int64_t>(!IsFrameworkOnlyName(a.tensors[i].name));
  for (size_t j : only_b) n += static_cast<int64_t>(!IsFrameworkOnlyName(b.tensors[j].name));
  return n;
}

bool DiffReport::clean() const {
  return CountCompared(Verdict::kPass) == static_cast<int64_t>(rows.size()) &&
         CountFailingUnpaired() == 0;
}

Result<DiffReport> DiffSources(DiffSource a, DiffSource b, const DiffOptions& options) {
  if (!(options.rtol >= 0) || !(options.atol >= 0)) {
    return Status::InvalidArgument(
        fmt::format("tolerances must be >= 0 (rtol {}, atol {})", options.rtol, options.atol));
  }
  DiffReport report;
  report.rtol = options.rtol;
  report.atol = options.atol;
  std::vector<TensorKey> ka;
  std::vector<TensorKey> kb;
  for (const NamedTensor& t : a.tensors) ka.push_back({t.name, t.tensor.shape(), t.tensor.dtype()});
  for (const NamedTensor& t : b.tensors) kb.push_back({t.name, t.tensor.shape(), t.tensor.dtype()});
  Pairing pairing = PairTensors(ka, kb, options.pairing);
  report.warnings = std::move(pairing.warnings);
  report.only_a = std::move(pairing.only_a);
  report.only_b = std::move(pairing.only_b);
  report.rows.resize(pairing.pairs.size());

  ThreadPool& pool = options.pool != nullptr ? *options.pool : ThreadPool::Default();
  // Many pairs: one pair per task (kernels then run serially inside); few: pairs one after
  // another, each kernel using the whole pool. Either way the figures are the same.
  const bool across_pairs = static_cast<int>(pairing.pairs.size()) >= pool.threads();
  auto diff_one = [&](int64_t k) {
    DiffRow& row = report.rows[static_cast<size_t>(k)];
    row.pair = pairing.pairs[static_cast<size_t>(k)];
    const Tensor& ta = a.tensors[row.pair.a].tensor;
    const Tensor& tb = b.tensors[row.pair.b].tensor;
    if (!ShapesCompatible(ta.shape(), tb.shape())) {
      row.verdict = Verdict::kError;
      row.skip = DiffSkip::kShapeMismatch;
      return;
    }
    auto m = DiffTensorValues(ta.view(), tb.view(), options.rtol, options.atol,
                              across_pairs ? nullptr : &pool);
    if (!m) {
      row.verdict = Verdict::kNone;
      row.skip = DiffSkip::kUnsupported;
      row.note = std::string(m.error().message());
      return;
    }
    row.metrics = std::move(*m);
    row.verdict = row.metrics.allclose ? Verdict::kPass : Verdict::kError;
  };
  const auto count = static_cast<int64_t>(report.rows.size());
  if (across_pairs) {
    pool.ParallelFor(count, diff_one);
  } else {
    for (int64_t k = 0; k < count; ++k) diff_one(k);
  }
  report.a = std::move(a);
  report.b = std::move(b);
  return report;
}

}  // namespace numprobe
