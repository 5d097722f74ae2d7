// Which recorded op produced a tensor. A dump has no edges between ops, but a tensor handed from
// one op to the next keeps its values, and so its statistics: an input row whose Max and Min
// equal an earlier output row's (and Mean and Norm too: exactly for the same dtype, to bf16
// rounding across a dtype change, since a widening cast keeps the values but the mean is
// reported in the tensor's own dtype) was produced by that op, possibly through views or
// reshapes that the dump does not record. An input that matches no earlier output is a source:
// a parameter, a data batch, or a tensor an unrecorded op made.
#ifndef NUMPROBE_COMPARE_DATAFLOW_H_
#define NUMPROBE_COMPARE_DATAFLOW_H_

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "numprobe/casts.h"
#include "numprobe/dump.h"

namespace numprobe::detail {

// Max, Min, Mean, Norm of a tensor row as numbers (nullopt where the dump has none).
using RowStats = std::array<std::optional<double>, 4>;
RowStats StatsOfRow(const DumpFile& file, const DumpRow& row);

// A statistic that is there and finite.
inline bool IsFiniteStat(const std::optional<double>& v) { return v && std::isfinite(*v); }

// Whether two tensors with these statistics and dtypes can be the same values.
bool SameValues(const RowStats& a, const RowStats& b, bool same_dtype);

class ProducerIndex {
 public:
  explicit ProducerIndex(const DumpFile& file);
  // The output row of the latest entry before `row`'s entry holding the same values as `row`
  // (an index into file.rows), or -1.
  int64_t Producer(uint32_t row) const;

 private:
  struct Key {
    uint64_t max_bits;
    uint64_t min_bits;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return k.max_bits * 1000003U ^ k.min_bits; }
  };
  static std::optional<Key> KeyOf(const RowStats& s);
  RowStats StatsAt(uint32_t row) const;
  const DumpFile& file_;
  std::unordered_map<Key, std::vector<uint32_t>, KeyHash> outputs_;  // in entry order
};

// The cast of `record` whose output holds the values of `row` (statistics; the latest recorded
// before entry `before_entry`), or nullptr.
const CastNote* CastProducing(const CastRecord& record, const RowStats& row, int64_t before_entry);

}  // namespace numprobe::detail

#endif  // NUMPROBE_COMPARE_DATAFLOW_H_
