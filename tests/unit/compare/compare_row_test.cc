// The packed parts of a CompareRow: Err_message ids keep their order (appended, and "unmatched"
// put first), and metric cells give back their kind and exact value.
#include <bit>
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

#include "numprobe/compare.h"

namespace numprobe {
namespace {

TEST(MessageList, KeepsOrderAndPutsFrontFirst) {
  MessageList m;
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.size(), 0u);
  m.push_back(0);
  m.push_back(9);
  m.push_back(3);
  m.push_front(11);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0], 11);
  EXPECT_EQ(m[1], 0);
  EXPECT_EQ(m[2], 9);
  EXPECT_EQ(m[3], 3);
  m.clear();
  EXPECT_TRUE(m.empty());
}

TEST(MessageList, HoldsEveryIdUpToCapacity) {
  MessageList m;
  for (size_t i = 0; i < MessageList::kCapacity; ++i) {
    m.push_back(static_cast<uint8_t>(i % (MessageList::kMaxId + 1)));
  }
  ASSERT_EQ(m.size(), MessageList::kCapacity);
  for (size_t i = 0; i < MessageList::kCapacity; ++i) {
    EXPECT_EQ(m[i], i % (MessageList::kMaxId + 1)) << i;
  }
  m.push_back(1);  // full: dropped, the list unchanged
  m.push_front(1);
  ASSERT_EQ(m.size(), MessageList::kCapacity);
  EXPECT_EQ(m[0], 0);
}

TEST(MetricCells, KindsAndExactValues) {
  MetricCells cells;
  for (size_t i = 0; i < MetricCells::kCount; ++i)
    EXPECT_EQ(cells[i].kind, MetricCell::Kind::kEmpty);
  cells.Fill(MetricCell::Of(MetricCell::Kind::kUnsupported));
  cells.Set(2, MetricCell::Of(MetricCell::Kind::kPercent, 0.1 + 0.2));
  cells.Set(7,
            MetricCell::Of(MetricCell::Kind::kValue, -std::numeric_limits<double>::denorm_min()));
  EXPECT_EQ(cells[0].kind, MetricCell::Kind::kUnsupported);
  EXPECT_EQ(cells[2].kind, MetricCell::Kind::kPercent);
  EXPECT_EQ(std::bit_cast<uint64_t>(cells[2].value), std::bit_cast<uint64_t>(0.1 + 0.2));
  EXPECT_EQ(cells[7].kind, MetricCell::Kind::kValue);
  EXPECT_EQ(std::bit_cast<uint64_t>(cells[7].value),
            std::bit_cast<uint64_t>(-std::numeric_limits<double>::denorm_min()));
  EXPECT_EQ(cells[7].Text(), "-5e-324");
}

}  // namespace
}  // namespace numprobe
