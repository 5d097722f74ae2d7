// Communication ops: direction, peers and groups as msprobe's nan_analyze reads them, matching
// across ranks and the levels that order them in time.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scan/scan_internal.h"

namespace numprobe::detail {
namespace {

CommNode Describe(const std::string& op, const std::string& json, int64_t rank) {
  CommNode node;
  node.op_name = op;
  DescribeCommNode(json, rank, &node);
  return node;
}

TEST(ScanCommTest, SendAndRecvByKeyword) {
  const CommNode send =
      Describe("Distributed.send.0.forward", R"({"input_args": [{"type": "torch.Tensor"}],
               "input_kwargs": {"dst": {"type": "int", "value": 1}}, "output": [null]})",
               0);
  EXPECT_EQ(send.api, "send");
  EXPECT_EQ(send.direction, CommDirection::kSrc);
  EXPECT_EQ(send.peer, 1);
  const CommNode recv = Describe("Distributed.irecv.3.forward",
                                 R"({"input_args": [], "input_kwargs": {"src": {"type": "int",
                                 "value": 0}}})",
                                 1);
  EXPECT_EQ(recv.api, "recv");  // irecv pairs with send like recv
  EXPECT_EQ(recv.direction, CommDirection::kDst);
  EXPECT_EQ(recv.peer, 0);
}

TEST(ScanCommTest, DirectedCollectivesByPositionalRoot) {
  const std::string json = R"({"input_args": [{"type": "torch.Tensor"}, {"type": "int",
      "value": 2}], "input_kwargs": {"group": {"type": "torch.ProcessGroup",
      "group_ranks": [3, 2, 1, 0], "group_id": 7}}})";
  EXPECT_EQ(Describe("Distributed.broadcast.0.forward", json, 2).direction, CommDirection::kSrc);
  EXPECT_EQ(Describe("Distributed.broadcast.0.forward", json, 0).direction, CommDirection::kDst);
  EXPECT_EQ(Describe("Distributed.gather.0.forward", json, 2).direction, CommDirection::kDst);
  EXPECT_EQ(Describe("Distributed.gather.0.forward", json, 1).direction, CommDirection::kSrc);
  EXPECT_EQ(Describe("Distributed.reduce.0.forward", json, 1).direction, CommDirection::kSrc);
  const CommNode b = Describe("Distributed.broadcast.0.forward", json, 0);
  EXPECT_EQ(b.group, (std::vector<int64_t>{0, 1, 2, 3}));  // sorted
}

TEST(ScanCommTest, UndirectedOpsLinkTheirGroup) {
  const CommNode n = Describe("Distributed.all_reduce.4.forward",
                              R"({"input_args": [{"type": "torch.Tensor"}, {"type": "ProcessGroup",
          "group_ranks": [0, 2]}], "input_kwargs": {}})",
                              2);
  EXPECT_EQ(n.direction, CommDirection::kLink);
  EXPECT_EQ(n.group, (std::vector<int64_t>{0, 2}));
  EXPECT_FALSE(n.peer.has_value());
  // Malformed JSON leaves a plain link.
  const CommNode bad = Describe("Distributed.all_gather.0.forward", "{", 0);
  EXPECT_EQ(bad.direction, CommDirection::kLink);
  EXPECT_EQ(bad.api, "all_gather");
}

// Builds nodes from (rank slot, api, peer, group) in per-rank order.
struct Plan {
  std::vector<CommNode> nodes;
  std::vector<std::vector<int>> per_rank;
  int Add(int slot, const std::string& api, std::optional<int64_t> peer = std::nullopt,
          std::vector<int64_t> group = {}) {
    CommNode n;
    n.rank_slot = slot;
    n.api = api;
    n.peer = peer;
    n.group = std::move(group);
    if (per_rank.size() <= static_cast<size_t>(slot)) per_rank.resize(slot + 1);
    per_rank[slot].push_back(static_cast<int>(nodes.size()));
    nodes.push_back(n);
    return static_cast<int>(nodes.size()) - 1;
  }
};

TEST(ScanCommTest, CollectivesMatchByOccurrenceAndLevelInOrder) {
  Plan p;
  const int a0 = p.Add(0, "all_reduce");
  const int a1 = p.Add(0, "all_reduce");
  const int b0 = p.Add(1, "all_reduce");
  const int b1 = p.Add(1, "all_reduce");
  OrderCommNodes({0, 1}, p.per_rank, &p.nodes);
  EXPECT_EQ(p.nodes[a0].instance, p.nodes[b0].instance);
  EXPECT_EQ(p.nodes[a1].instance, p.nodes[b1].instance);
  EXPECT_NE(p.nodes[a0].instance, p.nodes[a1].instance);
  EXPECT_EQ(p.nodes[a0].level, 0);
  EXPECT_EQ(p.nodes[b1].level, 1);
}

TEST(ScanCommTest, PointToPointPairsSenderWithReceiverAndChainsLevels) {
  // Rank 0 sends to 1, rank 1 forwards to 2, then everyone all_reduces.
  Plan p;
  const int s01 = p.Add(0, "send", 1);
  const int r01 = p.Add(1, "recv", 0);
  const int s12 = p.Add(1, "send", 2);
  const int r12 = p.Add(2, "recv", 1);
  const int ar0 = p.Add(0, "all_reduce");
  const int ar1 = p.Add(1, "all_reduce");
  const int ar2 = p.Add(2, "all_reduce");
  OrderCommNodes({0, 1, 2}, p.per_rank, &p.nodes);
  EXPECT_EQ(p.nodes[s01].instance, p.nodes[r01].instance);
  EXPECT_EQ(p.nodes[s12].instance, p.nodes[r12].instance);
  EXPECT_EQ(p.nodes[s01].level, 0);
  EXPECT_EQ(p.nodes[s12].level, 1);  // after the receive on rank 1
  EXPECT_EQ(p.nodes[r12].level, 1);
  EXPECT_EQ(p.nodes[ar0].level, 2);
  EXPECT_EQ(p.nodes[ar1].level, 2);
  EXPECT_EQ(p.nodes[ar2].level, 2);
}

TEST(ScanCommTest, GroupsKeepCollectivesApart) {
  Plan p;
  const int g01 = p.Add(0, "all_reduce", std::nullopt, {0, 1});
  const int g23 = p.Add(2, "all_reduce", std::nullopt, {2, 3});
  const int h01 = p.Add(1, "all_reduce", std::nullopt, {0, 1});
  const int h23 = p.Add(3, "all_reduce", std::nullopt, {2, 3});
  OrderCommNodes({0, 1, 2, 3}, p.per_rank, &p.nodes);
  EXPECT_EQ(p.nodes[g01].instance, p.nodes[h01].instance);
  EXPECT_EQ(p.nodes[g23].instance, p.nodes[h23].instance);
  EXPECT_NE(p.nodes[g01].instance, p.nodes[g23].instance);
}

TEST(ScanCommTest, InconsistentOrdersStillTerminateWithLevels) {
  // Rank 0: broadcast then all_gather; rank 1: the reverse (a cycle between two instances).
  Plan p;
  p.Add(0, "broadcast");
  p.Add(0, "all_gather");
  p.Add(1, "all_gather");
  p.Add(1, "broadcast");
  p.Add(1, "batch_isend_irecv");  // never matched
  OrderCommNodes({0, 1}, p.per_rank, &p.nodes);
  for (const CommNode& n : p.nodes) {
    EXPECT_GE(n.instance, 0);
    EXPECT_GE(n.level, 0);
  }
  EXPECT_NE(p.nodes[4].instance, p.nodes[0].instance);
  EXPECT_NE(p.nodes[0].level, p.nodes[1].level);
}

}  // namespace
}  // namespace numprobe::detail
