#include "ui/model_tree.h"

#include <algorithm>

#include "numprobe/dump.h"

#include "core/ascii_case.h"

namespace numprobe::ui {

namespace {

bool ContainsNoCase(std::string_view hay, std::string_view needle) {
  if (needle.empty()) return true;
  if (needle.size() > hay.size()) return false;
  for (size_t i = 0; i + needle.size() <= hay.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && detail::AsciiLower(hay[i + k]) == detail::AsciiLower(needle[k]))
      ++k;
    if (k == needle.size()) return true;
  }
  return false;
}

}  // namespace

ModelTree ModelTree::Build(ResultStore& store, const ConstructMap* construct) {
  ModelTree tree;
  tree.nodes_.emplace_back();  // the root
  // Returns the node named `name`, creating it under `parent` when new. A node keeps the parent
  // it was created with, and a new node's parent always exists already, so the links form a tree
  // whatever construct.json says.
  auto ensure = [&tree](const std::string& name, uint32_t parent) {
    auto [it, inserted] =
        tree.by_name_.try_emplace(name, static_cast<uint32_t>(tree.nodes_.size()));
    if (inserted) {
      TreeNode node;
      node.name = name;
      node.parent = static_cast<int32_t>(parent);
      tree.nodes_.push_back(std::move(node));
    }
    return it->second;
  };
  const std::vector<std::string>& names = store.entry_names();
  for (uint32_t e = 0; e < names.size(); ++e) {
    uint32_t parent = 0;
    if (construct != nullptr) {
      for (const std::string& module : construct->ModulePath(names[e])) {
        if (module == names[e]) break;  // a cycle back to the entry itself
        parent = ensure(module, parent);
        tree.nested_ = true;
      }
    }
    const uint32_t id = ensure(names[e], parent);
    TreeNode& node = tree.nodes_[id];
    node.entry = static_cast<int32_t>(e);
    for (const uint32_t row : store.entry_rows(e)) {
      node.own = Worse(node.own, store.level(row));
      node.first_row = std::min(node.first_row, row);
    }
    node.rows = static_cast<uint32_t>(store.entry_rows(e).size());
  }
  // Parents precede their children in `nodes_`: aggregate from the back.
  for (size_t i = tree.nodes_.size(); i-- > 0;) {
    TreeNode& node = tree.nodes_[i];
    node.worst = Worse(node.worst, node.own);
    if (node.parent < 0) continue;
    TreeNode& parent = tree.nodes_[static_cast<size_t>(node.parent)];
    parent.children.push_back(static_cast<uint32_t>(i));
    parent.worst = Worse(parent.worst, node.worst);
    parent.rows += node.rows;
    parent.first_row = std::min(parent.first_row, node.first_row);
  }
  for (TreeNode& node : tree.nodes_) {
    std::stable_sort(node.children.begin(), node.children.end(), [&tree](uint32_t a, uint32_t b) {
      return tree.nodes_[a].first_row < tree.nodes_[b].first_row;
    });
  }
  // Pre-order positions, iteratively (a hostile construct.json may nest deeply).
  std::vector<std::pair<uint32_t, size_t>> stack = {{0, 0}};
  uint32_t next = 0;
  tree.nodes_[0].position = next++;
  while (!stack.empty()) {
    auto& [id, child] = stack.back();
    TreeNode& node = tree.nodes_[id];
    if (child < node.children.size()) {
      const uint32_t c = node.children[child++];
      tree.nodes_[c].position = next++;
      stack.emplace_back(c, 0);
    } else {
      node.end = next;
      stack.pop_back();
    }
  }
  std::vector<uint32_t> positions(names.size(), 0);
  for (const TreeNode& node : tree.nodes_) {
    if (node.entry >= 0) positions[static_cast<size_t>(node.entry)] = node.position;
  }
  store.SetEntryTreePositions(std::move(positions));
  return tree;
}

std::optional<uint32_t> ModelTree::Find(std::string_view name) const {
  if (name.empty()) return 0;
  const auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

std::vector<uint32_t> ModelTree::PathTo(uint32_t id) const {
  std::vector<uint32_t> path;
  for (int64_t n = id; n > 0; n = nodes_[static_cast<size_t>(n)].parent) {
    path.push_back(static_cast<uint32_t>(n));
  }
  return {path.rbegin(), path.rend()};
}

std::vector<std::string> ModelTree::ModulePath(uint32_t id) const {
  std::vector<std::string> out;
  for (const uint32_t n : PathTo(id)) {
    if (n != id) out.push_back(nodes_[n].name);
  }
  return out;
}

std::vector<uint32_t> ModelTree::Search(std::string_view needle, size_t limit) const {
  std::vector<uint32_t> hits;
  for (uint32_t i = 1; i < nodes_.size(); ++i) {
    if (ContainsNoCase(nodes_[i].name, needle)) hits.push_back(i);
  }
  std::sort(hits.begin(), hits.end(),
            [this](uint32_t a, uint32_t b) { return nodes_[a].position < nodes_[b].position; });
  if (hits.size() > limit) hits.resize(limit);
  return hits;
}

}  // namespace numprobe::ui
