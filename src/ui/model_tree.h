// The model tree of one run: modules and APIs nested as construct.json records them (each node's
// parent module), every node coloured by the worst result among the rows of its subtree. Nodes
// are numbered in pre-order, so a subtree is a contiguous span of positions and "the rows under
// this module" is a range test per row. Children are ordered by first execution. Built once from
// a ResultStore; immutable afterwards. Owns its memory.
#ifndef NUMPROBE_UI_MODEL_TREE_H_
#define NUMPROBE_UI_MODEL_TREE_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ui/result_store.h"

namespace numprobe {
class ConstructMap;
}  // namespace numprobe

namespace numprobe::ui {

struct TreeNode {
  std::string name;                // "Module.conv1.Conv2d.forward.0", "Functional.conv2d.0.forward"
  int32_t parent = -1;             // -1 for the root
  int32_t entry = -1;              // the store's entry of this node, -1 for a module without rows
  std::vector<uint32_t> children;  // in order of first execution
  Verdict worst = Verdict::kNone;  // over the subtree's rows
  Verdict own = Verdict::kNone;    // over the node's own rows
  uint32_t rows = 0;               // rows in the subtree
  uint32_t first_row = std::numeric_limits<uint32_t>::max();  // earliest row of the subtree
  uint32_t position = 0;  // pre-order position; the subtree spans [position, end)
  uint32_t end = 0;
};

class ModelTree {
 public:
  // Builds the tree of `store`'s entries, nested by `construct` (may be null: entries then hang
  // from the root), and tells the store each entry's position.
  static ModelTree Build(ResultStore& store, const ConstructMap* construct);

  const TreeNode& root() const { return nodes_[0]; }
  const TreeNode& node(uint32_t id) const { return nodes_[id]; }
  size_t size() const { return nodes_.size(); }
  std::optional<uint32_t> Find(std::string_view name) const;
  // Ids from the root's child down to `id` (excluding the root).
  std::vector<uint32_t> PathTo(uint32_t id) const;
  // Names of the enclosing modules of `id`, outermost first.
  std::vector<std::string> ModulePath(uint32_t id) const;
  // Nodes whose name contains `needle` (case-insensitive), in pre-order, at most `limit`.
  std::vector<uint32_t> Search(std::string_view needle, size_t limit) const;
  bool nested() const { return nested_; }

 private:
  std::vector<TreeNode> nodes_;
  std::unordered_map<std::string, uint32_t> by_name_;
  bool nested_ = false;  // construct.json placed at least one node under a module
};

}  // namespace numprobe::ui

#endif  // NUMPROBE_UI_MODEL_TREE_H_
