// -lm: pairing the entries of two dumps by the scopes construct.json gives them, with the target's
// layer names rewritten into the golden's by a {LayerClass: {target name: golden name}} mapping.
//
// A module entry "Cell.network.layers.0.attention.wq.Dense.forward.0" has the path
// network.layers.0.attention.wq. Its enclosing modules (construct.json) split that path into
// levels: the outermost modules' names belong to "TopLayer" (or the prefix, "Cell"/"Module"), the
// names below a module of class C belong to C. Each level's leading name is looked up in its
// class's renames (the longest that fits; a name may reach into deeper levels, which are then
// consumed), so with {TopLayer: {network: model}, DecoderLayer: {attention: attn}, Attention:
// {wq: q_proj}} the path becomes model.layers.0.attn.q_proj, the golden module
// "Module.model.layers.0.attn.q_proj.Linear.forward.0"'s path. Class names are not compared
// (Dense and Linear differ). APIs are keyed by their enclosing module's key, their name, their
// direction and their order among those calls inside it.
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "numprobe/compare_mapping.h"
#include "numprobe/dump.h"

#include "compare/compare_internal.h"
#include "msprobe/entry_name.h"

namespace numprobe {
namespace {

enum class EntryKind : uint8_t { kModule, kApi, kParamGrad, kOther };

// The parts of a dump entry name that -lm keys on.
struct EntryShape {
  EntryKind kind = EntryKind::kOther;
  std::string prefix;             // "Cell", "Module" (modules and parameter gradients)
  std::vector<std::string> path;  // module path segments
  std::string cls;                // module class
  std::string api;                // "Functional.matmul" (APIs)
  std::string state;              // "forward" / "backward"
  std::string call;               // the call number in the name
};

bool IsDirection(std::string_view p) { return p == "forward" || p == "backward"; }

EntryShape ShapeOf(std::string_view name) {
  EntryShape s;
  const auto parts = detail::SplitDots(name);
  const size_t n = parts.size();
  auto join = [&](size_t from, size_t to) {
    std::string out;
    for (size_t i = from; i < to; ++i) {
      if (i > from) out += '.';
      out += parts[i];
    }
    return out;
  };
  if (n >= 4 && detail::IsDigits(parts[n - 1]) && IsDirection(parts[n - 2])) {
    // {prefix}.{path...}.{Class}.{forward|backward}.{n}
    s.kind = EntryKind::kModule;
    s.prefix = parts[0];
    for (size_t i = 1; i + 3 < n; ++i) s.path.emplace_back(parts[i]);
    s.cls = parts[n - 3];
    s.state = parts[n - 2];
    s.call = parts[n - 1];
  } else if (n >= 3 && IsDirection(parts[n - 1]) && detail::IsDigits(parts[n - 2])) {
    // {api type}.{api name}.{n}.{forward|backward}
    s.kind = EntryKind::kApi;
    s.api = join(0, n - 2);
    s.state = parts[n - 1];
    s.call = parts[n - 2];
  } else if (n >= 3 && parts[n - 1] == "parameters_grad") {
    // {prefix}.{path...}.{Class}.parameters_grad
    s.kind = EntryKind::kParamGrad;
    s.prefix = parts[0];
    for (size_t i = 1; i + 2 < n; ++i) s.path.emplace_back(parts[i]);
    s.cls = parts[n - 2];
  }
  return s;
}

std::string JoinPath(const std::vector<std::string>& path) {
  std::string out;
  for (const std::string& p : path) {
    if (!out.empty()) out += '.';
    out += p;
  }
  return out;
}

// Keys of one dump's entries; `layers` is null for the golden side (its names are the target).
class ScopeKeys {
 public:
  ScopeKeys(const ConstructMap& construct, const LayerMapping* layers, bool ms_to_pt)
      : construct_(construct), layers_(layers), ms_to_pt_(ms_to_pt) {}

  // The key of each entry ("" when -lm cannot key it), in entry order.
  std::vector<std::string> Keys(const DumpFile& file) {
    std::vector<std::string> keys(file.entries.size());
    std::unordered_map<std::string, uint32_t> api_order;
    for (size_t e = 0; e < file.entries.size(); ++e) {
      const std::string& name = file.entries[e].name;
      const EntryShape s = ShapeOf(name);
      switch (s.kind) {
        case EntryKind::kModule:
          keys[e] = ModuleKey(name, s);
          break;
        case EntryKind::kParamGrad:
          keys[e] = "G|" + MappedPath(name, s);
          break;
        case EntryKind::kApi: {
          const std::vector<std::string> enclosing = construct_.ModulePath(name);
          std::string scope;
          if (!enclosing.empty()) {
            const EntryShape p = ShapeOf(enclosing.back());
            scope = p.kind == EntryKind::kModule ? ModuleKey(enclosing.back(), p)
                                                 : "?" + enclosing.back();
          }
          std::string api = s.api;
          if (ms_to_pt_) api = ShapeOf(detail::MsToPtApiKey(name)).api;
          std::string key = "A|";
          key.append(scope).append("|").append(api).append("|").append(s.state);
          const uint32_t k = api_order[key]++;
          keys[e] = key + "|" + std::to_string(k);
          break;
        }
        case EntryKind::kOther:
          break;
      }
    }
    return keys;
  }

 private:
  std::string ModuleKey(const std::string& name, const EntryShape& s) {
    return "M|" + MappedPath(name, s) + "|" + s.state + "|" + s.call;
  }

  // The module's path with each level's leading name renamed by its class's mapping.
  std::string MappedPath(const std::string& name, const EntryShape& s) {
    if (layers_ == nullptr) return JoinPath(s.path);
    const auto cached = mapped_.find(name);
    if (cached != mapped_.end()) return cached->second;
    struct Level {
      const std::vector<LayerRename>* renames;
      size_t start;
    };
    static const std::vector<LayerRename> kNone;
    auto renames_of = [&](const std::string& cls) -> const std::vector<LayerRename>* {
      const auto it = layers_->classes.find(cls);
      return it == layers_->classes.end() ? &kNone : &it->second;
    };
    std::vector<Level> levels;
    const auto top = layers_->classes.find("TopLayer");
    levels.push_back({top != layers_->classes.end() ? &top->second : renames_of(s.prefix), 0});
    for (const std::string& outer : construct_.ModulePath(name)) {
      const EntryShape o = ShapeOf(outer);
      if (o.kind != EntryKind::kModule || o.path.size() >= s.path.size() ||
          o.path.size() < levels.back().start) {
        continue;  // not an enclosing scope of this path
      }
      bool prefix = true;
      for (size_t i = 0; i < o.path.size() && prefix; ++i) prefix = o.path[i] == s.path[i];
      if (prefix) levels.push_back({renames_of(o.cls), o.path.size()});
    }
    std::vector<std::string> out;
    size_t pos = 0;
    for (size_t i = 0; i < levels.size(); ++i) {
      const size_t end = i + 1 < levels.size() ? levels[i + 1].start : s.path.size();
      if (pos == levels[i].start) {
        for (const LayerRename& r : *levels[i].renames) {
          if (pos + r.from.size() > s.path.size()) continue;
          bool fits = true;
          for (size_t k = 0; k < r.from.size() && fits; ++k) fits = s.path[pos + k] == r.from[k];
          if (!fits) continue;
          out.insert(out.end(), r.to.begin(), r.to.end());
          pos += r.from.size();
          break;  // longest first
        }
      }
      for (; pos < end; ++pos) out.push_back(s.path[pos]);
    }
    std::string joined = JoinPath(out);
    mapped_.emplace(name, joined);
    return joined;
  }

  const ConstructMap& construct_;
  const LayerMapping* layers_;
  bool ms_to_pt_;
  std::unordered_map<std::string, std::string> mapped_;
};

}  // namespace

std::vector<int64_t> PairEntriesByLayers(const DumpFile& target,
                                         const ConstructMap& target_construct,
                                         const DumpFile& golden,
                                         const ConstructMap& golden_construct,
                                         const LayerMapping& layers) {
  const bool ms_to_pt = target.framework == "mindspore" && golden.framework != "mindspore" &&
                        !golden.framework.empty();
  const std::vector<std::string> t_keys =
      ScopeKeys(target_construct, &layers, ms_to_pt).Keys(target);
  const std::vector<std::string> g_keys = ScopeKeys(golden_construct, nullptr, false).Keys(golden);
  // Golden entries of each key in order; the k-th target entry of a key takes the k-th.
  std::unordered_map<std::string_view, std::vector<uint32_t>> by_key;
  for (uint32_t e = 0; e < g_keys.size(); ++e) {
    if (!g_keys[e].empty()) by_key[g_keys[e]].push_back(e);
  }
  std::unordered_map<std::string_view, size_t> taken;
  std::vector<int64_t> partner(t_keys.size(), -1);
  for (size_t e = 0; e < t_keys.size(); ++e) {
    if (t_keys[e].empty()) continue;
    const auto it = by_key.find(t_keys[e]);
    if (it == by_key.end()) continue;
    size_t& next = taken[it->first];
    if (next < it->second.size()) partner[e] = it->second[next++];
  }
  return partner;
}

}  // namespace numprobe
