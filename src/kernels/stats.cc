// ComputeStats: the chunked driver (strides, threads, reduction order), the scalar reference
// kernels and the final msprobe-compatible statistics. The SIMD kernels are in stats_hwy.cc; both
// follow the reduction order documented in stats_internal.h.
#include "numprobe/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "numprobe/thread_pool.h"

#include "core/checked.h"
#include "core/element_load.h"
#include "kernels/stats_internal.h"

namespace numprobe {
namespace {

using detail::kStatsChunk;
using detail::kStatsLanes;
using detail::StatsAcc;
using detail::StatsRunFn;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Elements gathered from a strided view (or decoded) per kernel call. A multiple of the lane
// count, so every run inside a chunk starts at lane 0.
constexpr int64_t kBlock = 4096;
static_assert(kStatsChunk % kBlock == 0 && kBlock % kStatsLanes == 0);
// Chunks reduced per ParallelFor call (bounds the memory of the per-chunk partial results).
constexpr int64_t kChunksPerBatch = 1024;

using detail::LoadRaw;

// The value of element `p` of floating or complex dtype D as a double (complex: |x|, computed in
// the element's precision as torch.abs and numpy.abs do).
template <DType D>
double FloatValue(const std::byte* p) {
  static_assert(IsFloating(D) || IsComplex(D));
  return detail::LoadElement<D, detail::ComplexAs::kMagnitudeInOwnType>(p);
}

// The scalar reference: a run of n elements of dtype D, element i to lane i % 8.
template <DType D>
void ScalarRun(const void* data, int64_t n, StatsAcc* acc) {
  const auto* p = static_cast<const std::byte*>(data);
  constexpr int64_t kItem = ItemSize(D);
  if constexpr (IsFloating(D) || IsComplex(D)) {
    for (int64_t i = 0; i < n; ++i) {
      detail::UpdateFloat(acc, FloatValue<D>(p + i * kItem), static_cast<int>(i % kStatsLanes));
    }
  } else {
    using T = typename StorageType<D>::type;  // bool is stored as uint8_t
    detail::IntExtremes<T> ext;
    for (int64_t i = 0; i < n; ++i) ext.Update(LoadRaw<T>(p + i * kItem));
    ext.MergeInto(acc);
  }
}

// The one value of a 0-d tensor, as msprobe reports it (bool: 1/0; complex: |x|).
double ElementValue(DType dtype, const std::byte* p) {
  return detail::LoadElement<detail::ComplexAs::kMagnitudeInOwnType>(dtype, p);
}

// ---------------------------------------------------------------------------------------------
// The kernel plan of a dtype: the run function, and for the SIMD path an optional decoder that
// turns raw elements into the run function's input (fp8 -> f32, c64 -> |x| f32, c128 -> |x| f64).

using DecodeFn = void (*)(const std::byte* src, int64_t n, std::byte* dst);

struct KernelPlan {
  StatsRunFn run = nullptr;
  DecodeFn decode = nullptr;
  int decoded_item = 0;
};

template <DType D>
void DecodeToFloatRun(const std::byte* src, int64_t n, std::byte* dst) {
  using Out = std::conditional_t<D == DType::kC128, double, float>;
  for (int64_t i = 0; i < n; ++i) {
    const Out v = static_cast<Out>(FloatValue<D>(src + i * ItemSize(D)));  // exact: same type
    std::memcpy(dst + i * static_cast<int64_t>(sizeof(Out)), &v, sizeof(Out));
  }
}

KernelPlan ScalarPlan(DType dtype) {
  KernelPlan plan;
  plan.run = Dispatch(dtype, []<DType D>() -> StatsRunFn { return &ScalarRun<D>; });
  return plan;
}

#if defined(NUMPROBE_WITH_HWY)
KernelPlan SimdPlan(DType dtype) {
  using detail::SimdInput;
  KernelPlan plan;
  const auto direct = [&](SimdInput input) { plan.run = detail::HwyStatsRunFn(input); };
  switch (dtype) {
    case DType::kF64:
      direct(SimdInput::kF64);
      break;
    case DType::kF32:
      direct(SimdInput::kF32);
      break;
    case DType::kF16:
      direct(SimdInput::kF16);
      break;
    case DType::kBF16:
      direct(SimdInput::kBF16);
      break;
    case DType::kI64:
      direct(SimdInput::kI64);
      break;
    case DType::kI32:
      direct(SimdInput::kI32);
      break;
    case DType::kI16:
      direct(SimdInput::kI16);
      break;
    case DType::kI8:
      direct(SimdInput::kI8);
      break;
    case DType::kU64:
      direct(SimdInput::kU64);
      break;
    case DType::kU32:
      direct(SimdInput::kU32);
      break;
    case DType::kU16:
      direct(SimdInput::kU16);
      break;
    case DType::kU8:
    case DType::kBool:
      direct(SimdInput::kU8);
      break;
    case DType::kC128:
      direct(SimdInput::kF64);
      plan.decode = &DecodeToFloatRun<DType::kC128>;
      plan.decoded_item = 8;
      break;
    case DType::kC64:
    case DType::kF8E4M3FN:
    case DType::kF8E5M2:
    case DType::kF8E4M3FNUZ:
    case DType::kF8E5M2FNUZ:
      direct(SimdInput::kF32);
      plan.decode = Dispatch(dtype, []<DType D>() -> DecodeFn {
        if constexpr (IsFloat8(D) || D == DType::kC64) return &DecodeToFloatRun<D>;
        return nullptr;
      });
      plan.decoded_item = 4;
      break;
  }
  return plan;
}
#endif

[[maybe_unused]] bool ScalarForcedByEnv() {
  const char* env = std::getenv("NUMPROBE_FORCE_SCALAR");
  return env != nullptr && std::strcmp(env, "1") == 0;
}

// ---------------------------------------------------------------------------------------------
// Element layout: the view with size-1 dims dropped and mergeable dims fused, so that a
// contiguous view becomes one dim of stride 1 and a strided one walks as few rows as possible.

struct Layout {
  const std::byte* first = nullptr;
  int item = 0;
  int64_t count = 0;
  bool contiguous = true;
  std::vector<int64_t> shape;    // outermost first
  std::vector<int64_t> strides;  // in elements
};

Layout MakeLayout(const TensorView& view, int64_t count) {
  Layout layout;
  layout.first = view.first();
  layout.item = ItemSize(view.dtype);
  layout.count = count;
  for (int d = 0; d < view.ndim(); ++d) {
    if (view.shape[d] == 1) continue;
    if (!layout.shape.empty() && layout.strides.back() == view.strides[d] * view.shape[d]) {
      layout.shape.back() *= view.shape[d];  // the outer dim steps exactly over the inner one
      layout.strides.back() = view.strides[d];
    } else {
      layout.shape.push_back(view.shape[d]);
      layout.strides.push_back(view.strides[d]);
    }
  }
  layout.contiguous = layout.shape.empty() || (layout.shape.size() == 1 && layout.strides[0] == 1);
  return layout;
}

// Walks a strided layout in C order from a given element, copying elements out.
class Gatherer {
 public:
  Gatherer(const Layout& layout, int64_t start) : layout_(layout), index_(layout.shape.size(), 0) {
    int64_t rest = start;
    for (size_t d = layout.shape.size(); d-- > 0;) {
      index_[d] = rest % layout.shape[d];
      rest /= layout.shape[d];
      offset_ += index_[d] * layout.strides[d];
    }
  }

  // Copies the next n elements into dst (contiguous).
  void Gather(int64_t n, std::byte* dst) {
    const size_t inner = layout_.shape.size() - 1;
    const int64_t item = layout_.item;
    const int64_t stride = layout_.strides[inner];
    while (n > 0) {
      const int64_t run = std::min(n, layout_.shape[inner] - index_[inner]);
      const std::byte* src = layout_.first + offset_ * item;
      if (stride == 1) {
        std::memcpy(dst, src, static_cast<size_t>(run * item));
      } else {
        CopyStrided(src, run, stride * item, dst);
      }
      dst += run * item;
      n -= run;
      index_[inner] += run;
      offset_ += run * stride;
      if (index_[inner] == layout_.shape[inner]) Carry(inner);
    }
  }

 private:
  void Carry(size_t inner) {
    offset_ -= layout_.shape[inner] * layout_.strides[inner];
    index_[inner] = 0;
    for (size_t d = inner; d-- > 0;) {
      offset_ += layout_.strides[d];
      if (++index_[d] < layout_.shape[d]) return;
      offset_ -= layout_.shape[d] * layout_.strides[d];
      index_[d] = 0;
    }
  }

  template <int kItem>
  static void CopyFixed(const std::byte* src, int64_t n, int64_t step, std::byte* dst) {
    for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * kItem, src + i * step, kItem);
  }

  void CopyStrided(const std::byte* src, int64_t n, int64_t step, std::byte* dst) const {
    switch (layout_.item) {
      case 1:
        return CopyFixed<1>(src, n, step, dst);
      case 2:
        return CopyFixed<2>(src, n, step, dst);
      case 4:
        return CopyFixed<4>(src, n, step, dst);
      case 8:
        return CopyFixed<8>(src, n, step, dst);
      default:
        return CopyFixed<16>(src, n, step, dst);
    }
  }

  const Layout& layout_;
  std::vector<int64_t> index_;
  int64_t offset_ = 0;
};

// Partial statistics of chunk `chunk` (elements [chunk * kStatsChunk, ...)).
void ProcessChunk(const Layout& layout, const KernelPlan& plan, int64_t chunk, StatsAcc* acc) {
  detail::ResetAcc(acc);
  const int64_t begin = chunk * kStatsChunk;
  const int64_t len = std::min(kStatsChunk, layout.count - begin);
  if (layout.contiguous && plan.decode == nullptr) {
    plan.run(layout.first + begin * layout.item, len, acc);
    return;
  }
  std::vector<std::byte> gathered(layout.contiguous ? 0
                                                    : static_cast<size_t>(kBlock * layout.item));
  std::vector<std::byte> decoded(
      plan.decode != nullptr ? static_cast<size_t>(kBlock * plan.decoded_item) : 0);
  std::optional<Gatherer> gatherer;
  if (!layout.contiguous) gatherer.emplace(layout, begin);
  for (int64_t done = 0; done < len; done += kBlock) {
    const int64_t n = std::min(kBlock, len - done);
    const std::byte* src = nullptr;
    if (layout.contiguous) {
      src = layout.first + (begin + done) * layout.item;
    } else {
      gatherer->Gather(n, gathered.data());
      src = gathered.data();
    }
    if (plan.decode != nullptr) {
      plan.decode(src, n, decoded.data());
      src = decoded.data();
    }
    plan.run(src, n, acc);
  }
}

// Canonical NaN, so that results never depend on which NaN payload won.
double Canonical(double x) { return std::isnan(x) ? kNaN : x; }

// A zero max or min is -0.0 only when every zero of the tensor is -0.0, otherwise +0.0. The
// kernels visit equal zeros in different orders, so the sign must not come from the comparisons.
double ZeroSign(double x, const StatsAcc& acc) {
  if (x != 0.0) return x;
  return acc.pos_zero_seen ? 0.0 : -0.0;
}

TensorStats Finalize(DType dtype, int64_t count, double sum, double sumsq, const StatsAcc& acc) {
  TensorStats s;
  s.count = count;
  s.nan_count = acc.nan_count;
  s.pos_inf_count = acc.pos_inf_count;
  s.neg_inf_count = acc.neg_inf_count;
  s.zero_count = acc.zero_count;
  s.max_abs = acc.max_abs;
  s.min_nonzero_abs = acc.min_nonzero_abs;
  s.has_minmax = true;
  const DTypeKind kind = Traits(dtype).kind;
  if (kind == DTypeKind::kFloat || kind == DTypeKind::kComplex) {
    s.has_mean_norm = true;
    s.max = acc.nan_count > 0 ? kNaN : ZeroSign(acc.max, acc);
    s.min = acc.nan_count > 0 ? kNaN : ZeroSign(acc.min, acc);
    s.mean = Canonical(sum / static_cast<double>(count));
    s.norm = Canonical(std::sqrt(sumsq));
  } else if (kind == DTypeKind::kBool) {
    s.max = acc.max != 0.0 ? 1.0 : 0.0;  // any
    s.min = acc.min != 0.0 ? 1.0 : 0.0;  // all
    s.max_abs = s.max;
    s.min_nonzero_abs = s.max != 0.0 ? 1.0 : kInf;
    s.mean = s.norm = kNaN;
  } else {
    s.max = acc.max;
    s.min = acc.min;
    s.mean = s.norm = kNaN;
  }
  return s;
}

Status CheckView(const TensorView& view) {
  if (view.shape.size() != view.strides.size()) {
    return Status::InvalidArgument("view has " + std::to_string(view.shape.size()) + " dims but " +
                                   std::to_string(view.strides.size()) + " strides");
  }
  for (size_t d = 0; d < view.shape.size(); ++d) {
    if (view.shape[d] < 0) {
      return Status::InvalidArgument("negative size " + std::to_string(view.shape[d]) + " in dim " +
                                     std::to_string(d));
    }
    if (view.strides[d] < 0) {
      return Status::InvalidArgument("negative stride " + std::to_string(view.strides[d]) +
                                     " in dim " + std::to_string(d));
    }
  }
  if (view.byte_offset < 0) return Status::InvalidArgument("negative byte offset");
  return Status::Ok();
}

// The kernels address elements as first() + offset * item; a view whose extent does not fit in
// 64 bits cannot be valid (ValidateView rejects it too), so refuse it before any access.
Status CheckExtent(const TensorView& view) {
  int64_t last = 0;
  for (size_t d = 0; d < view.shape.size(); ++d) {
    if (view.shape[d] == 0) return Status::Ok();
    const std::optional<int64_t> term = CheckedMul<int64_t>(view.shape[d] - 1, view.strides[d]);
    const std::optional<int64_t> sum = term ? CheckedAdd<int64_t>(last, *term) : std::nullopt;
    if (!sum)
      return Status::OutOfRange("view extent overflows 64 bits in dim " + std::to_string(d));
    last = *sum;
  }
  const std::optional<int64_t> end = CheckedAdd<int64_t>(last, 1);
  const std::optional<int64_t> bytes =
      end ? CheckedMul<int64_t>(*end, ItemSize(view.dtype)) : std::nullopt;
  if (!bytes || !CheckedAdd<int64_t>(*bytes, view.byte_offset)) {
    return Status::OutOfRange("view extent overflows 64 bits");
  }
  return Status::Ok();
}

}  // namespace

template <typename T>
std::optional<std::pair<T, T>> ExactIntegerExtremes(const TensorView& view) {
  constexpr DType kDType = std::is_signed_v<T> ? DType::kI64 : DType::kU64;
  const int64_t n = view.numel();
  if (view.dtype != kDType || view.data == nullptr || n <= 0) return std::nullopt;
  T hi = std::numeric_limits<T>::lowest();
  T lo = std::numeric_limits<T>::max();
  const auto fold = [&](const std::byte* p, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
      const T v = LoadRaw<T>(p + i * static_cast<int64_t>(sizeof(T)));
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  };
  // The elements in C order through ComputeStats' own walk of the strides, a block at a time.
  const Layout layout = MakeLayout(view, n);
  if (layout.contiguous) {
    fold(layout.first, n);
  } else {
    Gatherer gatherer(layout, 0);
    std::vector<std::byte> block(static_cast<size_t>(kBlock) * sizeof(T));
    for (int64_t done = 0; done < n; done += kBlock) {
      const int64_t count = std::min(kBlock, n - done);
      gatherer.Gather(count, block.data());
      fold(block.data(), count);
    }
  }
  return std::pair<T, T>{hi, lo};
}

template std::optional<std::pair<int64_t, int64_t>> ExactIntegerExtremes(const TensorView&);
template std::optional<std::pair<uint64_t, uint64_t>> ExactIntegerExtremes(const TensorView&);

Result<TensorStats> ComputeStats(const TensorView& view, const StatsOptions& options) {
  NUMPROBE_RETURN_IF_ERROR(CheckView(view));
  const std::optional<int64_t> numel = CheckedNumel(view.shape);
  if (!numel) return Status::OutOfRange("element count of the view overflows 64 bits");
  NUMPROBE_RETURN_IF_ERROR(CheckExtent(view));
  const int64_t count = *numel;
  if (count == 0) {
    TensorStats s;
    s.max = s.min = s.mean = s.norm = kNaN;
    s.max_abs = 0.0;
    s.min_nonzero_abs = kInf;
    return s;
  }
  if (view.data == nullptr)
    return Status::InvalidArgument("view of " + std::to_string(count) + " elements has no data");

  KernelPlan plan = ScalarPlan(view.dtype);
#if defined(NUMPROBE_WITH_HWY)
  if (!options.force_scalar && !ScalarForcedByEnv()) {
    const KernelPlan simd = SimdPlan(view.dtype);
    if (simd.run != nullptr) plan = simd;
  }
#endif
  const Layout layout = MakeLayout(view, count);
  const int64_t chunks = (count - 1) / kStatsChunk + 1;

  double sum = 0.0;
  double sumsq = 0.0;
  StatsAcc total;
  detail::ResetAcc(&total);
  const auto fold = [&](const StatsAcc& part) {
    sum = sum + detail::CombineLanes(part.sum);
    sumsq = sumsq + detail::CombineLanes(part.sumsq);
    detail::MergeExtremes(&total, part);
  };
  if (chunks == 1) {
    StatsAcc part;
    ProcessChunk(layout, plan, 0, &part);
    fold(part);
  } else {
    ThreadPool& pool = options.pool != nullptr ? *options.pool : ThreadPool::Default();
    std::vector<StatsAcc> parts(static_cast<size_t>(std::min(chunks, kChunksPerBatch)));
    for (int64_t first = 0; first < chunks; first += kChunksPerBatch) {
      const int64_t batch = std::min(kChunksPerBatch, chunks - first);
      pool.ParallelFor(batch, [&](int64_t i) {
        ProcessChunk(layout, plan, first + i, &parts[static_cast<size_t>(i)]);
      });
      for (int64_t i = 0; i < batch; ++i) fold(parts[static_cast<size_t>(i)]);
    }
  }

  TensorStats s = Finalize(view.dtype, count, sum, sumsq, total);
  if (view.ndim() == 0) {
    // msprobe reports a 0-d tensor's value as all four statistics, for every dtype.
    const double value = Canonical(ElementValue(view.dtype, view.first()));
    s.max = s.min = s.mean = s.norm = value;
    s.has_mean_norm = true;
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Streaming: the chunks of a contiguous tensor, met one block of bytes at a time.

namespace {

KernelPlan ChoosePlan(DType dtype, const StatsOptions& options) {
  KernelPlan plan = ScalarPlan(dtype);
#if defined(NUMPROBE_WITH_HWY)
  if (!options.force_scalar && !ScalarForcedByEnv()) {
    const KernelPlan simd = SimdPlan(dtype);
    if (simd.run != nullptr) plan = simd;
  }
#else
  (void)options;
#endif
  return plan;
}

}  // namespace

struct StatsAccumulator::Impl {
  DType dtype = DType::kF32;
  int ndim = 0;
  Status invalid;  // a bad shape, reported by Add and Finish
  int64_t count = 0;
  int item = 1;
  uint64_t expected_bytes = 0;
  uint64_t received = 0;
  KernelPlan plan;
  ThreadPool* pool = nullptr;
  std::vector<std::byte> pending;  // the bytes of an incomplete chunk
  std::vector<std::byte> first;    // the first element (a 0-d tensor's value)
  std::vector<StatsAcc> parts;
  double sum = 0.0;
  double sumsq = 0.0;
  StatsAcc total{};

  void Fold(const StatsAcc& part) {
    sum = sum + detail::CombineLanes(part.sum);
    sumsq = sumsq + detail::CombineLanes(part.sumsq);
    detail::MergeExtremes(&total, part);
  }

  // Reduces the `n` elements at `data` (whole chunks, and a partial one only as the last of the
  // tensor) in chunk order.
  void Reduce(const std::byte* data, int64_t n) {
    Layout layout;
    layout.first = data;
    layout.item = item;
    layout.count = n;
    layout.contiguous = true;
    const int64_t chunks = (n - 1) / kStatsChunk + 1;
    if (chunks == 1) {
      StatsAcc part;
      ProcessChunk(layout, plan, 0, &part);
      Fold(part);
      return;
    }
    ThreadPool& p = pool != nullptr ? *pool : ThreadPool::Default();
    parts.resize(static_cast<size_t>(std::min(chunks, kChunksPerBatch)));
    for (int64_t first_chunk = 0; first_chunk < chunks; first_chunk += kChunksPerBatch) {
      const int64_t batch = std::min(kChunksPerBatch, chunks - first_chunk);
      p.ParallelFor(batch, [&](int64_t i) {
        ProcessChunk(layout, plan, first_chunk + i, &parts[static_cast<size_t>(i)]);
      });
      for (int64_t i = 0; i < batch; ++i) Fold(parts[static_cast<size_t>(i)]);
    }
  }
};

StatsAccumulator::StatsAccumulator(DType dtype, std::vector<int64_t> shape,
                                   const StatsOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.dtype = dtype;
  m.ndim = static_cast<int>(shape.size());
  m.item = ItemSize(dtype);
  m.pool = options.pool;
  m.plan = ChoosePlan(dtype, options);
  detail::ResetAcc(&m.total);
  for (int64_t d : shape) {
    if (d < 0) m.invalid = Status::InvalidArgument("negative size " + std::to_string(d));
  }
  const std::optional<int64_t> numel = CheckedNumel(shape);
  const std::optional<int64_t> bytes =
      numel ? CheckedMul<int64_t>(*numel, m.item) : std::optional<int64_t>();
  if (m.invalid.ok() && !bytes) {
    m.invalid = Status::OutOfRange("element count of the shape overflows 64 bits");
  }
  if (m.invalid.ok()) {
    m.count = *numel;
    m.expected_bytes = static_cast<uint64_t>(*bytes);
  }
}

StatsAccumulator::~StatsAccumulator() = default;
StatsAccumulator::StatsAccumulator(StatsAccumulator&&) noexcept = default;
StatsAccumulator& StatsAccumulator::operator=(StatsAccumulator&&) noexcept = default;

Status StatsAccumulator::Add(std::span<const std::byte> bytes) {
  Impl& m = *impl_;
  NUMPROBE_RETURN_IF_ERROR(m.invalid);
  if (bytes.size() > m.expected_bytes - m.received) {
    return Status::InvalidArgument("more bytes than the " + std::to_string(m.count) +
                                   " elements of the tensor");
  }
  if (m.first.size() < static_cast<size_t>(m.item)) {
    const size_t n = std::min(bytes.size(), static_cast<size_t>(m.item) - m.first.size());
    m.first.insert(m.first.end(), bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(n));
  }
  m.received += bytes.size();
  const auto chunk_bytes = static_cast<size_t>(kStatsChunk * m.item);
  if (!m.pending.empty()) {
    const size_t n = std::min(bytes.size(), chunk_bytes - m.pending.size());
    m.pending.insert(m.pending.end(), bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(n));
    bytes = bytes.subspan(n);
    if (m.pending.size() < chunk_bytes) return Status::Ok();
    m.Reduce(m.pending.data(), kStatsChunk);
    m.pending.clear();
  }
  const size_t whole = bytes.size() / chunk_bytes * chunk_bytes;
  if (whole > 0) {
    m.Reduce(bytes.data(), static_cast<int64_t>(whole / static_cast<size_t>(m.item)));
    bytes = bytes.subspan(whole);
  }
  if (!bytes.empty()) {
    m.pending.reserve(chunk_bytes);
    m.pending.assign(bytes.begin(), bytes.end());
  }
  return Status::Ok();
}

Result<TensorStats> StatsAccumulator::Finish() {
  Impl& m = *impl_;
  NUMPROBE_RETURN_IF_ERROR(m.invalid);
  if (m.received != m.expected_bytes) {
    return Status::InvalidArgument("got " + std::to_string(m.received) + " of the " +
                                   std::to_string(m.expected_bytes) + " bytes of the tensor");
  }
  if (m.count == 0) {
    TensorStats s;
    s.max = s.min = s.mean = s.norm = kNaN;
    s.max_abs = 0.0;
    s.min_nonzero_abs = kInf;
    return s;
  }
  if (!m.pending.empty()) {
    m.Reduce(m.pending.data(), static_cast<int64_t>(m.pending.size()) / m.item);
    m.pending.clear();
  }
  TensorStats s = Finalize(m.dtype, m.count, m.sum, m.sumsq, m.total);
  if (m.ndim == 0) {
    const double value = Canonical(ElementValue(m.dtype, m.first.data()));
    s.max = s.min = s.mean = s.norm = value;
    s.has_mean_norm = true;
  }
  return s;
}

Result<TensorStats> ComputeTensorStats(const Tensor& tensor, const StatsOptions& options,
                                       uint64_t max_memory, std::vector<std::string>* warnings) {
  const TensorView& view = tensor.view();
  if (!tensor.is_streamed() || view.numel() == 0) return ComputeStats(view, options);
  NUMPROBE_RETURN_IF_ERROR(CheckView(view));
  if (!view.is_contiguous()) {
    std::string warning;
    NUMPROBE_ASSIGN_OR_RETURN(const Tensor whole, tensor.InMemory(max_memory, &warning));
    if (!warning.empty() && warnings != nullptr) warnings->push_back(warning);
    return ComputeStats(whole.view(), options);
  }
  // A pass over the storage: the bytes before the view skipped, the view's bytes reduced a few
  // MiB at a time (whole chunks, so that nothing waits in the accumulator), the rest drained so
  // that the end of the storage is verified.
  const StreamedStorage& storage = *tensor.streamed();
  const int item = ItemSize(view.dtype);
  const auto view_bytes = static_cast<uint64_t>(view.numel()) * static_cast<uint64_t>(item);
  if (static_cast<uint64_t>(view.byte_offset) > storage.size() ||
      view_bytes > storage.size() - static_cast<uint64_t>(view.byte_offset)) {
    return Status::OutOfRange("view extends past its streamed storage " + storage.Describe());
  }
  NUMPROBE_ASSIGN_OR_RETURN(std::unique_ptr<ByteStream> pass, storage.Open());
  NUMPROBE_RETURN_IF_ERROR(pass->Skip(static_cast<uint64_t>(view.byte_offset)));
  constexpr int64_t kChunksPerRead = 32;
  std::vector<std::byte> block(static_cast<size_t>(
      std::min<uint64_t>(view_bytes, static_cast<uint64_t>(kStatsChunk * kChunksPerRead * item))));
  StatsAccumulator acc(view.dtype, view.shape, options);
  uint64_t left = view_bytes;
  while (left > 0) {
    const auto want = static_cast<size_t>(std::min<uint64_t>(left, block.size()));
    NUMPROBE_ASSIGN_OR_RETURN(const size_t got, pass->Read(std::span(block.data(), want)));
    if (got != want) {
      return Status::Corrupt(storage.Describe() + " ends before the tensor's last element");
    }
    NUMPROBE_RETURN_IF_ERROR(acc.Add(std::span<const std::byte>(block.data(), got)));
    left -= got;
  }
  NUMPROBE_RETURN_IF_ERROR(pass->Drain());
  if (warnings != nullptr && !pass->warning().empty()) warnings->push_back(pass->warning());
  return acc.Finish();
}

const char* StatsKernelName() {
#if defined(NUMPROBE_WITH_HWY)
  if (!ScalarForcedByEnv()) return detail::HwyStatsTargetName();
#endif
  return "scalar";
}

#if !defined(NUMPROBE_WITH_HWY)
namespace detail {
std::vector<std::string> StatsSimdTargets() { return {}; }
bool ForceStatsSimdTarget(std::string_view name) { return name.empty(); }
}  // namespace detail
#endif

}  // namespace numprobe
