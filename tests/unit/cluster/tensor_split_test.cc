// SplitRanks / ShareWork: a rank pair larger than its fair share has its tensor pairs spread over
// the processes, balanced by bytes; the outcome codec round-trips bit for bit.
#include "cluster/tensor_split.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace numprobe::detail {
namespace {

using Kind = MetricCell::Kind;

TEST(SplitRanks, OnlyRanksAboveTheFairShareWithTensorFiles) {
  // total 130: fair share with 2 processes 65, with 3 processes 43.
  const std::vector<uint64_t> bytes = {100, 10, 10, 10};
  const std::vector<uint64_t> tensors = {90, 5, 5, 0};
  EXPECT_EQ(SplitRanks(bytes, tensors, 1), (std::vector<bool>{false, false, false, false}));
  EXPECT_EQ(SplitRanks(bytes, tensors, 2), (std::vector<bool>{true, false, false, false}));
  // A statistics dump (no tensor files) stays whole however large.
  EXPECT_EQ(SplitRanks(bytes, {0, 5, 5, 0}, 3), (std::vector<bool>{false, false, false, false}));
  // One rank: always above its share with two processes or more.
  EXPECT_EQ(SplitRanks({7}, {6}, 2), (std::vector<bool>{true}));
  // Equal ranks, as many as processes: each exactly its share, none split.
  EXPECT_EQ(SplitRanks({50, 50}, {40, 40}, 2), (std::vector<bool>{false, false}));
  // Exactly the share is not above it (bytes * P > total, in integers: 3 * 3 = 9 = total).
  EXPECT_EQ(SplitRanks({3, 3, 3}, {1, 1, 1}, 3), (std::vector<bool>{false, false, false}));
  EXPECT_EQ(SplitRanks({4, 3, 3}, {1, 1, 1}, 3), (std::vector<bool>{true, false, false}));
}

TEST(ShareWork, OneBigRanksTensorPairsSpreadByBytes) {
  // One rank of 64 tensor pairs of uneven sizes.
  std::vector<uint64_t> pairs;
  for (uint64_t k = 0; k < 64; ++k) pairs.push_back(1000 + (k * 7919) % 5000);
  const uint64_t tensor_total = [&] {
    uint64_t t = 0;
    for (uint64_t b : pairs) t += b;
    return t;
  }();
  const uint64_t json = 300;
  for (const int processes : {2, 3, 4}) {
    const std::vector<bool> split = SplitRanks({tensor_total + json}, {tensor_total}, processes);
    ASSERT_TRUE(split[0]);
    const WorkShares shares = ShareWork({tensor_total + json}, split, {pairs}, {json}, processes);
    EXPECT_EQ(shares.rank_owner, (std::vector<int>{0}));  // process 0 assembles and writes it
    ASSERT_EQ(shares.job_owner[0].size(), pairs.size());
    std::vector<uint64_t> loads(static_cast<size_t>(processes), 0);
    for (size_t k = 0; k < pairs.size(); ++k) {
      loads[static_cast<size_t>(shares.job_owner[0][k])] += pairs[k];
    }
    // Every process has pairs; the loads differ by at most one pair.
    const auto [lo, hi] = std::minmax_element(loads.begin(), loads.end());
    EXPECT_GT(*lo, 0U) << processes;
    EXPECT_LE(*hi - *lo, *std::max_element(pairs.begin(), pairs.end())) << processes;
    // The count: each process's pairs plus the dump files every process reads.
    for (size_t p = 0; p < loads.size(); ++p) {
      EXPECT_EQ(shares.bytes_per_process[p], loads[p] + json) << processes;
    }
    // Deterministic: every process derives the same shares.
    EXPECT_EQ(shares.job_owner,
              ShareWork({tensor_total + json}, split, {pairs}, {json}, processes).job_owner);
  }
}

TEST(ShareWork, BigRankPairsBalanceWithTheWholeRanks) {
  // Rank 1 is large (8 pairs of 100); ranks 0 and 2 are whole (100 and 150).
  const std::vector<uint64_t> bytes = {100, 800, 150};
  const std::vector<bool> split = SplitRanks(bytes, {90, 800, 140}, 3);
  ASSERT_EQ(split, (std::vector<bool>{false, true, false}));
  const std::vector<std::vector<uint64_t>> jobs = {{}, std::vector<uint64_t>(8, 100), {}};
  const WorkShares shares = ShareWork(bytes, split, jobs, {0, 0, 0}, 3);
  // 1050 bytes over 3: each process within one pair (150) of the others.
  const auto [lo, hi] =
      std::minmax_element(shares.bytes_per_process.begin(), shares.bytes_per_process.end());
  EXPECT_LE(*hi - *lo, 150U);
  std::set<int> owners(shares.job_owner[1].begin(), shares.job_owner[1].end());
  EXPECT_EQ(owners.size(), 3U);  // the big rank's pairs on every process
  EXPECT_TRUE(shares.job_owner[0].empty());
  EXPECT_TRUE(shares.job_owner[2].empty());
  EXPECT_NE(shares.rank_owner[0], shares.rank_owner[2]);
}

TEST(ShareWork, WithoutSplitRanksIsShareByBytes) {
  const WorkShares shares = ShareWork({5, 9, 7, 3, 3}, std::vector<bool>(5, false),
                                      std::vector<std::vector<uint64_t>>(5), {0, 0, 0, 0, 0}, 2);
  EXPECT_EQ(shares.rank_owner, (std::vector<int>{1, 0, 1, 0, 0}));
  EXPECT_EQ(shares.bytes_per_process, (std::vector<uint64_t>{15, 12}));
}

TEST(TensorOutcomeCodec, RoundTripsBitForBit) {
  TensorOutcome o;
  o.metrics = {MetricCell::Of(Kind::kValue, 0.1 + 0.2),
               MetricCell::Of(Kind::kValueText, -0.0),
               MetricCell::Of(Kind::kPercent, std::numeric_limits<double>::denorm_min()),
               MetricCell::Of(Kind::kInf, std::numeric_limits<double>::infinity()),
               MetricCell::Of(Kind::kNan, std::numeric_limits<double>::quiet_NaN()),
               MetricCell::Of(Kind::kShapeUnmatched)};
  o.rel_l2 = 1.0 / 3.0;
  TensorExtras e;
  e.mean_abs_err = 1e-300;
  e.mean_rel_err = 2.5;
  e.rmse = std::nextafter(1.0, 2.0);
  e.sqnr_db = std::numeric_limits<double>::infinity();
  e.max_ulp = 3;
  e.mean_ulp = 0.75;
  e.ulp_dtype = "bf16";
  e.allclose_ratio = 0.999;
  e.nan_mismatch = 1;
  e.pos_inf_mismatch = 2;
  e.neg_inf_mismatch = 3;
  e.worst_index = -1;
  o.extras = e;
  TensorOutcome back;
  ASSERT_TRUE(DecodeTensorOutcome(EncodeTensorOutcome(o), &back).ok());
  EXPECT_EQ(EncodeTensorOutcome(back), EncodeTensorOutcome(o));
  EXPECT_FALSE(back.failed);
  for (size_t k = 0; k < 6; ++k) {
    EXPECT_EQ(back.metrics[k].kind, o.metrics[k].kind);
    EXPECT_EQ(std::bit_cast<uint64_t>(back.metrics[k].value),
              std::bit_cast<uint64_t>(o.metrics[k].value));
  }
  ASSERT_TRUE(back.extras.has_value());
  EXPECT_EQ(std::bit_cast<uint64_t>(back.extras->rmse), std::bit_cast<uint64_t>(e.rmse));
  EXPECT_EQ(back.extras->ulp_dtype, "bf16");
  EXPECT_EQ(back.extras->worst_index, -1);
  EXPECT_EQ(back.rel_l2, o.rel_l2);

  TensorOutcome failed;
  failed.failed = true;
  failed.warning = "/x/a.pt: No such file or directory";
  ASSERT_TRUE(DecodeTensorOutcome(EncodeTensorOutcome(failed), &back).ok());
  EXPECT_TRUE(back.failed);
  EXPECT_EQ(back.warning, failed.warning);
  EXPECT_FALSE(back.extras.has_value());
}

TEST(TensorOutcomeCodec, RefusesCutOrForeignBytes) {
  const std::string bytes = EncodeTensorOutcome(TensorOutcome{});
  TensorOutcome back;
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_FALSE(DecodeTensorOutcome(bytes.substr(0, cut), &back).ok()) << cut;
  }
  EXPECT_FALSE(DecodeTensorOutcome(bytes + "x", &back).ok());
  std::string foreign = bytes;
  foreign[0] ^= 1;
  EXPECT_FALSE(DecodeTensorOutcome(foreign, &back).ok());
  std::string bad_kind = bytes;
  bad_kind[8 + 1 + 8] = 99;  // the first cell's kind, after magic, failed and the empty warning
  EXPECT_FALSE(DecodeTensorOutcome(bad_kind, &back).ok());
}

}  // namespace
}  // namespace numprobe::detail
