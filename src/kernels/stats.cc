// ComputeStats: the chunked driver (strides, threads, reduction order), the scalar reference
// kernels and the final msprobe-compatible statistics. The SIMD kernels are in stats_hwy.cc; both
// follow the reduction order documented in stats_internal.h.
#include "numprobe/stats.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "numprobe/float_convert.h"
#include "numprobe/thread_pool.h"

#include "core/checked.h"
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

template <typename T>
T LoadAs(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

// The 256 values of an fp8 format, decoded once by float_convert.
template <DType D>
const float* F8Table() {
  static const std::array<float, 256> kTable = [] {
    std::array<float, 256> t{};
    for (int i = 0; i < 256; ++i) t[static_cast<size_t>(i)] = F8ToF32(D, static_cast<uint8_t>(i));
    return t;
  }();
  return kTable.data();
}

// The value of element `p` of floating or complex dtype D as a double (complex: |x|, computed in
// the element's precision as torch.abs and numpy.abs do).
template <DType D>
double FloatValue(const std::byte* p) {
  if constexpr (D == DType::kF64) {
    return LoadAs<double>(p);
  } else if constexpr (D == DType::kF32) {
    return LoadAs<float>(p);
  } else if constexpr (D == DType::kF16) {
    return F16ToF32(LoadAs<uint16_t>(p));
  } else if constexpr (D == DType::kBF16) {
    return BF16ToF32(LoadAs<uint16_t>(p));
  } else if constexpr (D == DType::kC64) {
    const auto re = LoadAs<float>(p);
    const auto im = LoadAs<float>(p + 4);
    return std::hypot(re, im);  // float overload: hypotf, like numpy's and torch's abs
  } else if constexpr (D == DType::kC128) {
    return std::hypot(LoadAs<double>(p), LoadAs<double>(p + 8));
  } else {
    static_assert(IsFloat8(D));
    return F8Table<D>()[static_cast<uint8_t>(*p)];
  }
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
    for (int64_t i = 0; i < n; ++i) ext.Update(LoadAs<T>(p + i * kItem));
    ext.MergeInto(acc);
  }
}

// The one value of a 0-d tensor, as msprobe reports it (bool: 1/0; complex: |x|).
double ElementValue(DType dtype, const std::byte* p) {
  return Dispatch(dtype, [&]<DType D>() -> double {
    if constexpr (IsFloating(D) || IsComplex(D)) {
      return FloatValue<D>(p);
    } else if constexpr (D == DType::kBool) {
      return *p != std::byte{0} ? 1.0 : 0.0;
    } else {
      return static_cast<double>(LoadAs<typename StorageType<D>::type>(p));
    }
  });
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
