// -lm as msprobe generates it (core/compare/layer_mapping: data_scope_parser.py,
// postprocess_pass.py, layer_mapping.py), rule for rule, so that the same dumps pair the same way:
//  1. Each dump entry becomes a data item with a scope: a module's own path (its name without the
//     prefix word's class, direction and count), an API's enclosing module path from
//     construct.json ("TopLayer" at the top) followed by the framework function that called it
//     (from stack.json: the last framework frame between the "Template" frame and the forward /
//     construct frame), then the item's name (module: its last path part; API: its API name).
//     Backward items take their forward item's scope; ParallelTransformer "layers" indexes are
//     renumbered from the smallest.
//  2. Each side's items go into a trie of scope parts; a node takes the class (type) of the last
//     item put into it, and keeps its items per state (forward / backward / parameters_grad).
//  3. A target item's scope is rewritten part by part: under a node of class C, the next parts are
//     looked up in the mapping's entries for C (the longest that fits; "Cell" is "TopLayer"; a
//     value's "(...)" is dropped). The golden item is the one at the same position among the
//     items of the same state in the rewritten scope's node.
//  4. Rows pair by their suffix after the entry name; rows without a partner map to "N/A".
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "numprobe/dump.h"

#include "compare/compare_internal.h"
#include "compare/loaded_mapping.h"
#include "msprobe/entry_name.h"

namespace numprobe::detail {
namespace {

constexpr std::string_view kTopLayer = "TopLayer";

std::string Join(const std::vector<std::string_view>& parts, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to && i < parts.size(); ++i) {
    if (i > from) out += '.';
    out += parts[i];
  }
  return out;
}

std::vector<std::string_view> Split(std::string_view s) { return SplitDots(s); }

struct Item {
  std::string data_name;
  std::string api_type;
  std::string api_name;
  std::string type_name;
  std::string state;
  std::string layer_scope;
  std::string frame_scope;
  std::string full_scope;
};

// The function name of a stack line "File f, line n, in func, \n code", or "" when the line is
// skipped (msprobe's get_stack_in_lines: msprobe's / MindSpeed's files, construct / __call__).
std::string StackFunc(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    fields.push_back(line.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (fields.size() < 3) return "";
  for (std::string_view skip : {"msprobe", "MindSpeed"}) {
    if (fields[0].find(skip) != std::string_view::npos) return "";
  }
  for (std::string_view skip : {"construct", "__call__"}) {
    if (fields[2].find(skip) != std::string_view::npos) return "";
  }
  // func_ele.split()[1]
  std::vector<std::string_view> words;
  std::string_view f = fields[2];
  size_t i = 0;
  while (i < f.size()) {
    while (i < f.size() && std::isspace(static_cast<unsigned char>(f[i])) != 0) ++i;
    const size_t b = i;
    while (i < f.size() && std::isspace(static_cast<unsigned char>(f[i])) == 0) ++i;
    if (i > b) words.push_back(f.substr(b, i - b));
  }
  return words.size() > 1 ? std::string(words[1]) : "";
}

bool IsFrameworkFile(std::string_view file) {
  for (std::string_view f :
       {"site-packages/torch", "package/torch", "site-packages/mindspore", "package/mindspore"}) {
    if (file.find(f) != std::string_view::npos) return true;
  }
  return false;
}

// The framework frame that called the API (msprobe's frame_stack_scope).
std::string FrameScope(const std::vector<std::string>& lines, bool mindspore) {
  int64_t start = -1;
  auto end = static_cast<int64_t>(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.find("Template") != std::string::npos) {
      start = static_cast<int64_t>(i);
    } else if (start >= 0 && (mindspore ? l.find("construct") != std::string::npos
                                        : (l.find("in forward,") != std::string::npos ||
                                           l.find("in backward,") != std::string::npos))) {
      end = static_cast<int64_t>(i);
      break;
    }
  }
  const std::string* frame = nullptr;
  bool no_entrance = true;
  for (int64_t i = start + 1; i < end; ++i) {
    const std::string& l = lines[static_cast<size_t>(i)];
    const std::string_view file = std::string_view(l).substr(0, l.find(','));
    if (IsFrameworkFile(file) && no_entrance) {
      frame = &l;
    } else {
      no_entrance = false;
    }
  }
  return frame == nullptr ? "" : StackFunc(*frame);
}

bool MakeItem(std::string_view name, const std::string* parent, const StackMap* stack,
              bool mindspore, Item* out) {
  const auto parts = Split(name);
  const size_t n = parts.size();
  if (n < 4) return false;  // msprobe refuses such names
  Item it;
  it.data_name = name;
  if (parts[n - 1] == "parameters_grad") {
    it.api_type = "parameters_grad";
    it.api_name = parts[n - 3];
    it.type_name = parts[n - 2];
    it.state = "parameters_grad";
  } else if (parts[n - 2] == "parameters_grad" && detail::IsDigits(parts[n - 1])) {
    it.api_type = "parameters_grad";
    it.api_name = parts[n - 4];
    it.type_name = parts[n - 3];
    it.state = "parameters_grad";
  } else {
    it.api_type = parts[0];
    it.type_name = parts[n - 3];
    if (it.api_type == "Cell" || it.api_type == "Module") {
      it.api_name = parts[n - 4];
      it.state = parts[n - 2];
    } else {
      it.api_name = it.type_name;
      it.state = parts[n - 1];
    }
  }
  const bool layer = it.api_type == "Cell" || it.api_type == "Module";
  if (layer || it.api_type == "parameters_grad") {
    // A module's own path (its name part removed for modules): everything before the class.
    std::vector<std::string_view> data(parts.begin(), parts.end());
    if (layer) data.erase(data.begin() + static_cast<std::ptrdiff_t>(n - 4));
    it.layer_scope = Join(data, 0, data.size() >= 3 ? data.size() - 3 : 0);
  } else if (parent != nullptr && !parent->empty()) {
    const auto p = Split(*parent);
    it.layer_scope = Join(p, 0, p.size() >= 3 ? p.size() - 3 : 0);
  } else {
    it.layer_scope = kTopLayer;
  }
  if (!layer && it.api_type != "Primitive" && it.api_type != "Jit" && stack != nullptr) {
    if (const auto* lines = stack->Find(name)) it.frame_scope = FrameScope(*lines, mindspore);
  }
  it.full_scope = it.layer_scope;
  if (!it.frame_scope.empty()) it.full_scope += "." + it.frame_scope;
  it.full_scope += "." + it.api_name;
  *out = std::move(it);
  return true;
}

// The last number of the part after "prefix." at the start of `scope` (msprobe's
// extract_next_item_last_number), or +inf.
double NextItemLastNumber(std::string_view scope, std::string_view prefix) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (scope.size() <= prefix.size() + 1 || scope.substr(0, prefix.size()) != prefix ||
      scope[prefix.size()] != '.') {
    return kInf;
  }
  std::string_view rest = scope.substr(prefix.size() + 1);
  const size_t dot = rest.find('.', 1);
  const std::string_view next = rest.substr(0, dot);
  double last = kInf;
  for (size_t i = 0; i < next.size();) {
    if (std::isdigit(static_cast<unsigned char>(next[i])) == 0) {
      ++i;
      continue;
    }
    double v = 0;
    while (i < next.size() && std::isdigit(static_cast<unsigned char>(next[i])) != 0) {
      v = v * 10 + (next[i] - '0');
      ++i;
    }
    last = v;
  }
  return last;
}

void RenumberParallelTransformerLayers(std::vector<Item>* items) {
  std::map<std::string, double> min_index;
  for (const Item& it : *items) {
    if (it.type_name == "ParallelTransformer") min_index[it.full_scope + ".layers"] = INFINITY;
  }
  for (auto& [prefix, least] : min_index) {
    for (const Item& it : *items)
      least = std::min(least, NextItemLastNumber(it.full_scope, prefix));
  }
  for (const auto& [prefix, least] : min_index) {
    for (Item& it : *items) {
      const double rel = NextItemLastNumber(it.full_scope, prefix) - least;
      if (!std::isfinite(rel)) continue;
      const std::string_view rest = std::string_view(it.full_scope).substr(prefix.size() + 1);
      const size_t dot = rest.find('.', 1);
      it.full_scope = prefix + "." + std::to_string(static_cast<int64_t>(rel)) +
                      (dot == std::string_view::npos ? "" : std::string(rest.substr(dot)));
    }
  }
}

std::vector<Item> DataItems(const DumpFile& f, const StackMap* stack, const ConstructMap& c) {
  std::vector<Item> items;
  const bool mindspore = f.framework == "mindspore";
  for (const DumpEntry& e : f.entries) {
    Item it;
    if (MakeItem(e.name, c.Parent(e.name), stack, mindspore, &it)) items.push_back(std::move(it));
  }
  // Backward items take their forward item's scopes (msprobe's backward_pass).
  std::unordered_map<std::string_view, size_t> by_name;
  for (size_t i = 0; i < items.size(); ++i) by_name.emplace(items[i].data_name, i);
  for (Item& it : items) {
    auto parts = Split(it.data_name);
    const size_t n = parts.size();
    bool backward = false;
    std::string forward;
    for (size_t i = 0; i < n; ++i) {
      std::string part(parts[i]);
      if (i + 2 >= n) {
        for (size_t at = part.find("backward"); at != std::string::npos;
             at = part.find("backward", at)) {
          part.replace(at, 8, "forward");
          backward = true;
        }
      }
      forward += (i > 0 ? "." : "") + part;
    }
    if (!backward) continue;
    const auto f_it = by_name.find(forward);
    if (f_it == by_name.end()) continue;
    const Item& fwd = items[f_it->second];
    it.frame_scope = fwd.frame_scope;
    it.full_scope = fwd.full_scope;
    it.layer_scope = fwd.layer_scope;
  }
  RenumberParallelTransformerLayers(&items);
  return items;
}

struct Trie {
  std::string type_name;
  std::map<std::string, std::vector<const Item*>, std::less<>> items;  // by state
  std::map<std::string, std::unique_ptr<Trie>, std::less<>> children;

  Trie* Child(std::string_view name) {
    const auto it = children.find(name);
    return it == children.end() ? nullptr : it->second.get();
  }
  void Insert(const Item& item) {
    const auto parts = Split(item.full_scope);
    Trie* node = this;
    for (size_t i = 1; i < parts.size(); ++i) {
      auto& child = node->children[std::string(parts[i])];
      if (!child) {
        child = std::make_unique<Trie>();
        child->type_name = std::string(parts[i]);
      }
      node = child.get();
    }
    node->items[item.state].push_back(&item);
    node->type_name = item.type_name;
  }
};

// msprobe's preprocess_layer_mapping: class -> first name part -> (name, value, parts), longest
// first; "Cell" stands for "TopLayer".
using Rules = std::map<std::string, std::map<std::string, std::vector<const LayerRename*>>>;

Rules Preprocess(const LayerMapping& mapping) {
  Rules rules;
  const bool has_cell = mapping.classes.count("Cell") > 0;
  for (const auto& [cls, renames] : mapping.classes) {
    if (has_cell && cls == kTopLayer) continue;  // msprobe: Cell's entries replace TopLayer's
    const std::string key = cls == "Cell" ? std::string(kTopLayer) : cls;
    for (const LayerRename& r : renames) {  // already longest first, file order among equals
      if (!r.from.empty()) rules[key][r.from[0]].push_back(&r);
    }
  }
  return rules;
}

std::string JoinSegments(const std::vector<std::string>& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i > 0 ? "." : "") + s[i];
  return out;
}

const Item* ConvertItem(Trie& npu, Trie& bench, const Item& item, const Rules& rules) {
  std::string scope(kTopLayer);
  const auto parts = Split(item.full_scope);
  Trie* cur = &npu;
  size_t idx = 0;
  while (idx + 1 < parts.size() && cur != nullptr) {
    const std::string_view child = parts[idx + 1];
    size_t step = 1;
    std::string target(child);
    const auto cls = rules.find(cur->type_name);
    if (cls != rules.end()) {
      const auto list = cls->second.find(std::string(child));
      if (list != cls->second.end()) {
        for (const LayerRename* r : list->second) {
          const size_t level = r->from.size();
          if (idx + 1 + level <= parts.size() &&
              Join(parts, idx + 1, idx + 1 + level) == JoinSegments(r->from)) {
            target = JoinSegments(r->to);
            step = level;
            break;
          }
        }
      }
    }
    scope += "." + target;
    for (size_t s = 0; s < step && cur != nullptr; ++s) {
      cur = cur->Child(parts[idx + 1]);
      ++idx;
    }
  }
  if (cur == nullptr) return nullptr;
  int64_t index = -1;
  const auto own = cur->items.find(item.state);
  if (own != cur->items.end()) {
    for (size_t k = 0; k < own->second.size(); ++k) {
      if (own->second[k]->data_name == item.data_name) index = static_cast<int64_t>(k);
    }
  }
  // Query the golden trie.
  const auto q = Split(scope);
  Trie* node = &bench;
  for (size_t k = 1; k < q.size() && node != nullptr; ++k) node = node->Child(q[k]);
  if (node == nullptr) return nullptr;
  const auto found = node->items.find(item.state);
  if (found == node->items.end() || found->second.empty()) return nullptr;
  const auto size = static_cast<int64_t>(found->second.size());
  if (index >= size) return nullptr;
  // Python's list[-1]: the last one.
  return found->second[static_cast<size_t>(index < 0 ? size + index : index)];
}

}  // namespace

std::vector<std::pair<std::string, std::string>> LayerDataMapping(
    const DumpFile& target, const StackMap* target_stack, const ConstructMap& target_construct,
    const DumpFile& golden, const StackMap* golden_stack, const ConstructMap& golden_construct,
    const LayerMapping& layers) {
  std::vector<std::pair<std::string, std::string>> out;
  // msprobe builds no items (and so no mapping) unless both files exist and are not empty.
  if (target_stack == nullptr || golden_stack == nullptr || target_stack->size() == 0 ||
      golden_stack->size() == 0 || target_construct.size() == 0 || golden_construct.size() == 0) {
    return out;
  }
  const std::vector<Item> t_items = DataItems(target, target_stack, target_construct);
  const std::vector<Item> g_items = DataItems(golden, golden_stack, golden_construct);
  Trie t_trie;
  t_trie.type_name = kTopLayer;
  for (const Item& it : t_items) t_trie.Insert(it);
  Trie g_trie;
  g_trie.type_name = kTopLayer;
  for (const Item& it : g_items) g_trie.Insert(it);
  const Rules rules = Preprocess(layers);

  std::unordered_map<std::string_view, uint32_t> g_entry;
  for (uint32_t e = 0; e < golden.entries.size(); ++e) g_entry.emplace(golden.entries[e].name, e);
  std::unordered_map<std::string_view, uint32_t> t_entry;
  for (uint32_t e = 0; e < target.entries.size(); ++e) t_entry.emplace(target.entries[e].name, e);
  auto suffix = [](const DumpEntry& e, const DumpRow& r) {
    return std::string_view(r.name).substr(
        std::min(e.name.size(), r.name.size()));  // rows start with their entry's name
  };
  for (const Item& it : t_items) {
    const Item* partner = ConvertItem(t_trie, g_trie, it, rules);
    const DumpEntry& te = target.entries[t_entry.at(it.data_name)];
    std::unordered_map<std::string_view, std::string_view> g_rows;
    if (partner != nullptr) {
      const DumpEntry& ge = golden.entries[g_entry.at(partner->data_name)];
      for (uint32_t r = ge.first_row; r < ge.first_row + ge.row_count; ++r) {
        g_rows[suffix(ge, golden.rows[r])] = golden.rows[r].name;
      }
    }
    for (uint32_t r = te.first_row; r < te.first_row + te.row_count; ++r) {
      const auto g = g_rows.find(suffix(te, target.rows[r]));
      out.emplace_back(target.rows[r].name, g == g_rows.end() ? "N/A" : g->second);
    }
  }
  return out;
}

}  // namespace numprobe::detail
