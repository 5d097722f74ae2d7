// Longest-processing-time-first scheduling over processes (byte_shares.h).
#include "cluster/byte_shares.h"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <numeric>
#include <queue>
#include <utility>

namespace numprobe::detail {

std::vector<int> ShareByBytes(const std::vector<uint64_t>& bytes, int processes) {
  std::vector<int> owner(bytes.size(), 0);
  if (processes <= 1) return owner;
  std::vector<size_t> order(bytes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return bytes[a] > bytes[b]; });
  // (bytes so far, process): the least loaded, then the lowest process, on top.
  using Load = std::pair<uint64_t, int>;
  std::priority_queue<Load, std::vector<Load>, std::greater<>> loads;
  for (int p = 0; p < processes; ++p) loads.emplace(0, p);
  for (const size_t item : order) {
    auto [load, p] = loads.top();
    loads.pop();
    owner[item] = p;
    loads.emplace(load + bytes[item], p);
  }
  return owner;
}

}  // namespace numprobe::detail
