// CompareTensorPair for a caller that needs figures of its own over the same pair (diff): it is
// shown every block of elements the compare kernel decodes, so that each byte of both tensors is
// read once for both.
#ifndef NUMPROBE_COMPARE_PAIR_BLOCKS_H_
#define NUMPROBE_COMPARE_PAIR_BLOCKS_H_

#include <cstdint>

#include "numprobe/compare_metrics.h"
#include "numprobe/tensor.h"

#include "kernels/compare_kernel.h"

namespace numprobe::detail {

// Elements are read in chunks of this many (the last one shorter); a sink that keeps one result
// per chunk and combines them in chunk order gets the same figures for any thread count.
inline constexpr int64_t kPairChunk = kCmpChunk;

class PairBlockSink {
 public:
  virtual ~PairBlockSink() = default;
  // Elements [first_index, first_index + n) of both sides, in C order, decoded as compare
  // decodes them (see element_load.h; complex: the real part). The blocks of one chunk
  // (first_index / kPairChunk) come in order from one thread; different chunks may come from
  // different threads at the same time, in any order.
  virtual void Block(int64_t chunk, const double* target, const double* golden, int64_t n,
                     int64_t first_index) = 0;
};

// CompareTensorPair(target, golden, pool), showing `sink` every element of the pair. Nothing is
// shown when the pair is not compared element by element (.compared false: empty, or shapes
// that differ once size-1 dimensions are dropped).
TensorPairMetrics CompareTensorPairWithSink(const TensorView& target, const TensorView& golden,
                                            ThreadPool* pool, PairBlockSink* sink);

}  // namespace numprobe::detail

#endif  // NUMPROBE_COMPARE_PAIR_BLOCKS_H_
