// Fused one-pass statistics of a tensor of any dtype and any strides: msprobe's Max, Min, Mean,
// Norm plus counts of NaN, +Inf, -Inf and zeros, the largest |x| and the smallest non-zero |x|.
// Accumulation is in double. Large tensors are reduced in fixed-size chunks combined in chunk
// order, and the SIMD path reproduces the scalar reference's summation order, so results are
// bit-identical for any thread count and any instruction set. NUMPROBE_FORCE_SCALAR=1 selects
// the scalar reference.
#ifndef NUMPROBE_STATS_H_
#define NUMPROBE_STATS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "numprobe/result.h"
#include "numprobe/tensor.h"

namespace numprobe {

class ThreadPool;

struct TensorStats {
  int64_t count = 0;  // elements
  // msprobe semantics. Floating: max/min propagate NaN (torch.max), mean/norm as double sums.
  // Integers: max/min only (has_mean_norm false). bool: max = any, min = all. Complex: the
  // statistics of |x|. 0-d: all four equal the value. Empty: all NaN and has_minmax false.
  // A statistic that does not apply (mean/norm when has_mean_norm is false) is NaN; every NaN
  // result is the canonical quiet NaN. A zero max or min is -0.0 only when every zero element
  // is -0.0, otherwise +0.0.
  bool has_minmax = false;
  bool has_mean_norm = false;
  double max = 0;
  double min = 0;
  double mean = 0;
  double norm = 0;  // L2
  int64_t nan_count = 0;
  int64_t pos_inf_count = 0;
  int64_t neg_inf_count = 0;
  int64_t zero_count = 0;
  // Over non-NaN elements; max_abs is 0 and min_nonzero_abs is +Inf when there are none.
  double max_abs = 0;
  double min_nonzero_abs = 0;
};

struct StatsOptions {
  ThreadPool* pool = nullptr;  // nullptr = ThreadPool::Default()
  bool force_scalar = false;   // also forced by the environment variable NUMPROBE_FORCE_SCALAR=1
};

// Statistics of `view`. kInvalidArgument for a view with negative dims or strides.
Result<TensorStats> ComputeStats(const TensorView& view, const StatsOptions& options = {});

// The exact {max, min} of a 64-bit integer tensor: T is int64_t for kI64, uint64_t for kU64.
// TensorStats holds them as doubles, exact only up to 2^53, where msprobe prints numpy's exact
// value. nullopt for another dtype, an empty tensor, or a view without data.
template <typename T>
std::optional<std::pair<T, T>> ExactIntegerExtremes(const TensorView& view);

// ComputeStats over elements that arrive in C order a block at a time (a streamed storage):
// whole kStatsChunk-element chunks are reduced as they complete and folded in chunk order, the
// last one when Finish is called, exactly as ComputeStats cuts and folds a contiguous tensor, so
// the result is the same bits for any split of the bytes, any thread count and any SIMD path.
// Memory: one chunk of pending bytes.
class StatsAccumulator {
 public:
  StatsAccumulator(DType dtype, std::vector<int64_t> shape, const StatsOptions& options = {});
  ~StatsAccumulator();
  StatsAccumulator(StatsAccumulator&&) noexcept;
  StatsAccumulator& operator=(StatsAccumulator&&) noexcept;

  // The next bytes of the elements (any split, even inside an element). kInvalidArgument past
  // the shape's numel * item size, or for a shape with a negative or overflowing size.
  Status Add(std::span<const std::byte> bytes);
  // The statistics, once every byte was added (kInvalidArgument when some are missing).
  Result<TensorStats> Finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Statistics of `tensor`, streamed or not: a tensor in memory goes to ComputeStats; a streamed
// contiguous one is read in one pass of a few MiB at a time through StatsAccumulator (the same
// bits); a streamed strided one is loaded whole first, which fails with kOutOfRange when its
// storage exceeds `max_memory` bytes. A pass's warning (a CRC mismatch) is appended to
// `warnings` (may be null).
Result<TensorStats> ComputeTensorStats(const Tensor& tensor, const StatsOptions& options,
                                       uint64_t max_memory,
                                       std::vector<std::string>* warnings = nullptr);

// The name of the kernel path ComputeStats uses now ("scalar", "AVX2", "AVX3", ...).
const char* StatsKernelName();

}  // namespace numprobe

#endif  // NUMPROBE_STATS_H_
