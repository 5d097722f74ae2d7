// ShareByBytes: byte-balanced shares of rank pairs over MPI processes.
#include "cluster/byte_shares.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace numprobe::detail {
namespace {

std::vector<uint64_t> Loads(const std::vector<uint64_t>& bytes, const std::vector<int>& owner,
                            int processes) {
  std::vector<uint64_t> loads(static_cast<size_t>(processes), 0);
  for (size_t i = 0; i < bytes.size(); ++i) loads[static_cast<size_t>(owner[i])] += bytes[i];
  return loads;
}

TEST(ShareByBytes, OneProcessTakesEverything) {
  EXPECT_EQ(ShareByBytes({5, 1, 9}, 1), (std::vector<int>{0, 0, 0}));
  EXPECT_TRUE(ShareByBytes({}, 4).empty());
}

TEST(ShareByBytes, LargestFirstToTheLeastLoaded) {
  // 9 -> p0; 7 -> p1; 5 -> p1 (7 < 9); the first 3 -> p0 (9 < 12); the second 3: a tie at 12,
  // so the lower process, p0.
  const std::vector<uint64_t> bytes = {5, 9, 7, 3, 3};
  const std::vector<int> owner = ShareByBytes(bytes, 2);
  EXPECT_EQ(owner, (std::vector<int>{1, 0, 1, 0, 0}));
  EXPECT_EQ(Loads(bytes, owner, 2), (std::vector<uint64_t>{15, 12}));
}

TEST(ShareByBytes, UnevenRanksBalanceWithinOneItem) {
  std::vector<uint64_t> bytes;
  for (uint64_t r = 0; r < 1024; ++r) bytes.push_back(1000 + (r % 4) * 100 + r % 7);
  for (const int processes : {2, 3, 4, 7}) {
    const std::vector<int> owner = ShareByBytes(bytes, processes);
    const std::vector<uint64_t> loads = Loads(bytes, owner, processes);
    const auto [lo, hi] = std::minmax_element(loads.begin(), loads.end());
    EXPECT_LE(*hi - *lo, *std::max_element(bytes.begin(), bytes.end())) << processes;
    EXPECT_EQ(owner, ShareByBytes(bytes, processes));  // deterministic
  }
}

TEST(ShareByBytes, MoreProcessesThanItemsLeavesSomeIdle) {
  const std::vector<int> owner = ShareByBytes({10, 20}, 4);
  EXPECT_EQ(owner, (std::vector<int>{1, 0}));
}

}  // namespace
}  // namespace numprobe::detail
