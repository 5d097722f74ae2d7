// Ordering communication ops across ranks. Each op is described as msprobe's nan_analyze does
// (graph.py: _resolve_type and find_connected_nodes): directed ops (send/recv/broadcast/scatter/
// gather/reduce) have a source and destination side, the rest (all_reduce, all_gather,
// reduce_scatter, all_to_all) link their group. Ops are then matched into instances (the k-th
// all_reduce over one group on every member rank; the k-th send a->b with the k-th recv b<-a), and
// instances are levelled by a topological walk over each rank's execution order, so that ops
// between two levels on one rank can be compared in time with ops on another.
#include <algorithm>
#include <map>
#include <queue>
#include <string>

#include <fmt/format.h>
#include "core/json.h"
#include "scan/scan_internal.h"

namespace numprobe::detail {
namespace {

std::optional<int64_t> IntValue(const JsonValue& v) {
  if (v.kind() == JsonValue::Kind::kInt) return v.int_value();
  if (!v.is_object()) return std::nullopt;
  const JsonValue* value = v.Find("value");
  if (value == nullptr || value->kind() != JsonValue::Kind::kInt) return std::nullopt;
  const JsonValue* type = v.Find("type");
  if (type != nullptr && type->is_string() && type->string_value() != "int") return std::nullopt;
  return value->int_value();
}

std::vector<int64_t> GroupRanks(const JsonValue& v) {
  std::vector<int64_t> ranks;
  if (!v.is_object()) return ranks;
  const JsonValue* list = v.Find("group_ranks");
  if (list == nullptr || !list->is_array()) return ranks;
  for (const JsonValue& r : list->array()) {
    if (r.kind() == JsonValue::Kind::kInt) ranks.push_back(r.int_value());
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

// The side the API's integer argument names (msprobe's DIRECTED_API, plus reduce's dst).
std::optional<CommDirection> DirectedSide(std::string_view api) {
  static const std::map<std::string_view, CommDirection> kDirected = {
      {"send", CommDirection::kDst},
      {"recv", CommDirection::kSrc},
      {"isend", CommDirection::kDst},
      {"irecv", CommDirection::kSrc},
      {"broadcast", CommDirection::kSrc},
      {"scatter", CommDirection::kSrc},
      {"gather", CommDirection::kDst},
      {"reduce", CommDirection::kDst},
      {"send_object_list", CommDirection::kDst},
      {"recv_object_list", CommDirection::kSrc}};
  const auto it = kDirected.find(api);
  if (it == kDirected.end()) return std::nullopt;
  return it->second;
}

CommDirection Opposite(CommDirection d) {
  return d == CommDirection::kSrc ? CommDirection::kDst : CommDirection::kSrc;
}

bool IsPointToPoint(std::string_view api) {
  return api == "send" || api == "recv" || api == "send_object_list" || api == "recv_object_list";
}

bool IsSender(std::string_view api) { return api == "send" || api == "send_object_list"; }

}  // namespace

void DescribeCommNode(std::string_view raw_entry, int64_t rank, CommNode* node) {
  std::string api(ApiName(node->op_name));
  const std::optional<CommDirection> directed = DirectedSide(api);
  if (api == "isend") api = "send";
  if (api == "irecv") api = "recv";
  node->api = api;
  node->direction = CommDirection::kLink;

  // A dump.json entry copied as written (bare NaN/Infinity tokens included).
  auto doc =
      ParseJson(raw_entry, kPythonJson);
  if (!doc || !doc->is_object()) return;
  static const JsonValue kEmpty = JsonValue::MakeObject();
  const JsonValue* kwargs_value = doc->Find("input_kwargs");
  const JsonValue& kwargs =
      kwargs_value != nullptr && kwargs_value->is_object() ? *kwargs_value : kEmpty;
  const JsonValue* args = doc->Find("input_args");
  const bool has_args = args != nullptr && args->is_array();

  auto kwarg_int = [&](std::initializer_list<const char*> keys) -> std::optional<int64_t> {
    for (const char* key : keys) {
      const JsonValue* v = kwargs.Find(key);
      if (v != nullptr && !v->is_null()) return IntValue(*v);
    }
    return std::nullopt;
  };
  std::optional<int64_t> first_int;
  if (has_args) {
    for (const JsonValue& arg : args->array()) {
      if (auto v = IntValue(arg)) {
        first_int = v;
        break;
      }
    }
  }
  // Direction, as msprobe's _resolve_type.
  if (auto src = kwarg_int({"src", "group_src", "src_group"})) {
    node->direction = *src == rank ? CommDirection::kSrc : CommDirection::kDst;
    node->peer = src;
  } else if (auto dst = kwarg_int({"dst", "group_dst", "dst_group"})) {
    node->direction = *dst == rank ? CommDirection::kDst : CommDirection::kSrc;
    node->peer = dst;
  } else if (directed.has_value() && first_int.has_value()) {
    node->direction = *first_int == rank ? *directed : Opposite(*directed);
    node->peer = first_int;
  }
  // The process group: a "group" keyword or a ProcessGroup among the positional arguments.
  if (const JsonValue* group = kwargs.Find("group"); group != nullptr) {
    node->group = GroupRanks(*group);
  }
  if (node->group.empty() && has_args) {
    for (const JsonValue& arg : args->array()) {
      if (auto ranks = GroupRanks(arg); !ranks.empty()) {
        node->group = std::move(ranks);
        break;
      }
    }
  }
}

void OrderCommNodes(const std::vector<int64_t>& rank_numbers,
                    const std::vector<std::vector<int>>& per_rank, std::vector<CommNode>* nodes) {
  // 1. Instances.
  std::map<std::string, int> instance_of_key;
  int instances = 0;
  for (size_t slot = 0; slot < per_rank.size(); ++slot) {
    const int64_t self = rank_numbers[slot];
    std::map<std::string, int> seen;  // occurrences of each channel on this rank
    for (const int id : per_rank[slot]) {
      CommNode& n = (*nodes)[static_cast<size_t>(id)];
      std::string channel;
      if (IsPointToPoint(n.api) && n.peer.has_value()) {
        const bool sender = IsSender(n.api);
        const std::string_view family =
            n.api.find("object_list") != std::string::npos ? "object_list" : "tensor";
        channel =
            fmt::format("p2p/{}/{}->{}", family, sender ? self : *n.peer, sender ? *n.peer : self);
      } else if (!IsPointToPoint(n.api) && n.api != "batch_isend_irecv" && n.api != "P2POp") {
        channel = n.group.empty() ? fmt::format("{}/world", n.api)
                                  : fmt::format("{}/[{}]", n.api, fmt::join(n.group, ","));
      }
      if (channel.empty()) {
        n.instance = instances++;  // nothing to match it with
        continue;
      }
      const std::string key = fmt::format("{}#{}", channel, seen[channel]++);
      const auto [it, inserted] = instance_of_key.try_emplace(key, instances);
      if (inserted) ++instances;
      n.instance = it->second;
    }
  }
  // 2. Levels: a topological walk over "instance A precedes instance B on some rank".
  std::vector<std::vector<int>> successors(static_cast<size_t>(instances));
  std::vector<int> indegree(static_cast<size_t>(instances), 0);
  std::vector<size_t> first_position(static_cast<size_t>(instances), SIZE_MAX);
  for (const auto& order : per_rank) {
    for (size_t i = 0; i < order.size(); ++i) {
      const int a = (*nodes)[static_cast<size_t>(order[i])].instance;
      first_position[static_cast<size_t>(a)] = std::min(first_position[static_cast<size_t>(a)], i);
      if (i == 0) continue;
      const int p = (*nodes)[static_cast<size_t>(order[i - 1])].instance;
      if (p == a) continue;
      auto& succ = successors[static_cast<size_t>(p)];
      if (std::find(succ.begin(), succ.end(), a) == succ.end()) {
        succ.push_back(a);
        ++indegree[static_cast<size_t>(a)];
      }
    }
  }
  std::vector<int> level(static_cast<size_t>(instances), 0);
  std::vector<bool> done(static_cast<size_t>(instances), false);
  // Ready instances by (level, first position, id): deterministic.
  using Item = std::tuple<int, size_t, int>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
  for (int i = 0; i < instances; ++i) {
    if (indegree[static_cast<size_t>(i)] == 0)
      ready.emplace(0, first_position[static_cast<size_t>(i)], i);
  }
  int processed = 0;
  while (processed < instances) {
    if (ready.empty()) {
      // A cycle (ranks disagree on the order of matched ops): release the earliest waiting one.
      int pick = -1;
      for (int i = 0; i < instances; ++i) {
        if (done[static_cast<size_t>(i)]) continue;
        if (pick < 0 ||
            first_position[static_cast<size_t>(i)] < first_position[static_cast<size_t>(pick)]) {
          pick = i;
        }
      }
      indegree[static_cast<size_t>(pick)] = 0;
      ready.emplace(level[static_cast<size_t>(pick)], first_position[static_cast<size_t>(pick)],
                    pick);
    }
    const int c = std::get<2>(ready.top());
    ready.pop();
    if (done[static_cast<size_t>(c)]) continue;
    done[static_cast<size_t>(c)] = true;
    ++processed;
    for (const int s : successors[static_cast<size_t>(c)]) {
      level[static_cast<size_t>(s)] =
          std::max(level[static_cast<size_t>(s)], level[static_cast<size_t>(c)] + 1);
      if (!done[static_cast<size_t>(s)] && --indegree[static_cast<size_t>(s)] == 0) {
        ready.emplace(level[static_cast<size_t>(s)], first_position[static_cast<size_t>(s)], s);
      }
    }
  }
  for (CommNode& n : *nodes) n.level = level[static_cast<size_t>(n.instance)];
}

}  // namespace numprobe::detail
