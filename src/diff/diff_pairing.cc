// Pairing the tensors of the two sides of a diff: name rules, the user map and shape alignment.
#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "numprobe/diff.h"

#include "core/json.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

std::vector<int64_t> Squeezed(std::span<const int64_t> shape) {
  std::vector<int64_t> out;
  for (int64_t d : shape) {
    if (d != 1) out.push_back(d);
  }
  return out;
}

// Which tensors of one side are paired already.
class Remaining {
 public:
  explicit Remaining(size_t n) : paired_(n, false) {}
  bool paired(size_t i) const { return paired_[i]; }
  void Take(size_t i) { paired_[i] = true; }
  std::vector<size_t> Left() const {
    std::vector<size_t> out;
    for (size_t i = 0; i < paired_.size(); ++i) {
      if (!paired_[i]) out.push_back(i);
    }
    return out;
  }

 private:
  std::vector<bool> paired_;
};

// The indices holding each name (or canonical name), in file order.
std::unordered_map<std::string, std::vector<size_t>> IndexByName(std::span<const TensorKey> keys,
                                                                 bool canonical) {
  std::unordered_map<std::string, std::vector<size_t>> index;
  for (size_t i = 0; i < keys.size(); ++i) {
    index[canonical ? CanonicalParamName(keys[i].name) : keys[i].name].push_back(i);
  }
  return index;
}

// Longest common subsequence of the (squeezed shape, dtype) sequences `ia` and `ib` (indices into
// a and b); returns the matched index pairs in order.
std::vector<std::pair<size_t, size_t>> AlignShapes(std::span<const TensorKey> a,
                                                   std::span<const TensorKey> b,
                                                   const std::vector<size_t>& ia,
                                                   const std::vector<size_t>& ib) {
  const size_t n = ia.size();
  const size_t m = ib.size();
  auto same = [&](size_t i, size_t j) {
    const TensorKey& x = a[ia[i]];
    const TensorKey& y = b[ib[j]];
    return x.dtype == y.dtype && Squeezed(x.shape) == Squeezed(y.shape);
  };
  // Suffix table: len[i][j] = LCS of ia[i:] and ib[j:], so the walk below goes forward and, among
  // equally long alignments, prefers the earliest pairs.
  std::vector<uint32_t> len((n + 1) * (m + 1), 0);
  auto at = [&](size_t i, size_t j) -> uint32_t& { return len[i * (m + 1) + j]; };
  for (size_t i = n; i-- > 0;) {
    for (size_t j = m; j-- > 0;) {
      at(i, j) = same(i, j) ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    }
  }
  std::vector<std::pair<size_t, size_t>> out;
  size_t i = 0;
  size_t j = 0;
  while (i < n && j < m) {
    if (same(i, j) && at(i, j) == at(i + 1, j + 1) + 1) {
      out.emplace_back(ia[i], ib[j]);
      ++i;
      ++j;
    } else if (at(i + 1, j) >= at(i, j + 1)) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

}  // namespace

std::string CanonicalParamName(std::string_view name) {
  static const std::map<std::string_view, std::string_view> kLeaf = {
      {"gamma", "weight"},
      {"beta", "bias"},
      {"moving_mean", "running_mean"},
      {"moving_variance", "running_var"},
      {"embedding_table", "weight"},
      {"a", "weight"},
  };
  const size_t dot = name.rfind('.');
  const std::string_view leaf = dot == std::string_view::npos ? name : name.substr(dot + 1);
  auto it = kLeaf.find(leaf);
  if (it == kLeaf.end()) return std::string(name);
  std::string_view prefix =
      dot == std::string_view::npos ? std::string_view() : name.substr(0, dot);
  constexpr std::string_view kBn2d = "bn2d";  // TroubleShooter maps BatchNorm3d under "bn2d."
  if (prefix == kBn2d) {
    prefix = {};
  } else if (prefix.size() > kBn2d.size() && prefix.ends_with(kBn2d) &&
             prefix[prefix.size() - kBn2d.size() - 1] == '.') {
    prefix.remove_suffix(kBn2d.size() + 1);
  }
  return prefix.empty() ? std::string(it->second) : fmt::format("{}.{}", prefix, it->second);
}

bool ShapesCompatible(std::span<const int64_t> a, std::span<const int64_t> b) {
  return Squeezed(a) == Squeezed(b);
}

bool IsFrameworkOnlyName(std::string_view name) {
  constexpr std::string_view kLeaf = "num_batches_tracked";
  return name == kLeaf || (name.ends_with(kLeaf) && name.size() > kLeaf.size() &&
                           name[name.size() - kLeaf.size() - 1] == '.');
}

Result<NameMap> ParseNameMap(std::string_view json) {
  // A map is standard JSON (TroubleShooter writes it with json.dump); a key given twice keeps its
  // last value, as Python's json.load reads it.
  NUMPROBE_ASSIGN_OR_RETURN(
      const JsonValue doc,
      ParseJson(json, kStandardJson));
  const JsonValue* names = nullptr;
  NameMap map;
  if (doc.is_object()) {
    names = &doc;
  } else if (doc.is_array() && !doc.array().empty() && doc.array()[0].is_object()) {
    names = &doc.array()[0];
    for (size_t k = 1; k < doc.array().size(); ++k) {
      if (!doc.array()[k].is_object()) {
        return Status::Corrupt(fmt::format("map list entry {} is not an object", k));
      }
      map.value_transforms += doc.array()[k].object().size();
    }
  } else {
    return Status::Corrupt(
        "a name map must be an object {\"a_name\": \"b_name\"} or TroubleShooter's list "
        "[{names}, {transforms}]");
  }
  for (const auto& [key, value] : names->object()) {
    if (!value.is_string()) {
      return Status::Corrupt(fmt::format("map entry '{}': the value is not a string", key));
    }
    map.names.emplace_back(key, value.string_value());
  }
  return map;
}

Result<NameMap> ReadNameMap(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("{}: cannot open the name map", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IoError(fmt::format("{}: read failed", path.string()));
  auto map = ParseNameMap(text.str());
  if (!map) return map.error().WithContext(path.string());
  return map;
}

Pairing PairTensors(std::span<const TensorKey> a, std::span<const TensorKey> b,
                    const PairingOptions& options) {
  Pairing out;
  Remaining ra(a.size());
  Remaining rb(b.size());
  auto take = [&](size_t i, size_t j, PairRule rule) {
    ra.Take(i);
    rb.Take(j);
    out.pairs.push_back({i, j, rule});
  };

  // 1. Exact names.
  {
    auto by_name = IndexByName(b, false);
    for (size_t i = 0; i < a.size(); ++i) {
      auto it = by_name.find(a[i].name);
      if (it == by_name.end()) continue;
      for (size_t j : it->second) {
        if (!rb.paired(j)) {
          take(i, j, PairRule::kExact);
          break;
        }
      }
    }
  }
  // 2. PyTorch <-> MindSpore parameter names, when the shapes agree.
  {
    auto by_canon = IndexByName(b, true);
    for (size_t i = 0; i < a.size(); ++i) {
      if (ra.paired(i)) continue;
      auto it = by_canon.find(CanonicalParamName(a[i].name));
      if (it == by_canon.end()) continue;
      for (size_t j : it->second) {
        if (!rb.paired(j) && ShapesCompatible(a[i].shape, b[j].shape)) {
          take(i, j, PairRule::kFramework);
          break;
        }
      }
    }
  }
  // 3. The user map, in either direction.
  if (options.map != nullptr) {
    auto a_names = IndexByName(a, false);
    auto b_names = IndexByName(b, false);
    auto first_free = [](const auto& index, const Remaining& r, const std::string& name) -> long {
      auto it = index.find(name);
      if (it == index.end()) return -1;
      for (size_t k : it->second) {
        if (!r.paired(k)) return static_cast<long>(k);
      }
      return -1;
    };
    auto known = [](const auto& index, const std::string& name) { return index.contains(name); };
    int64_t unknown = 0;
    std::string first_unknown;
    for (const auto& [from, to] : options.map->names) {
      long i = first_free(a_names, ra, from);
      long j = first_free(b_names, rb, to);
      if (i < 0 || j < 0) {  // TroubleShooter's compare_pth_and_ckpt reverses the map
        i = first_free(a_names, ra, to);
        j = first_free(b_names, rb, from);
      }
      if (i >= 0 && j >= 0) {
        take(static_cast<size_t>(i), static_cast<size_t>(j), PairRule::kUserMap);
        continue;
      }
      const bool seen = (known(a_names, from) && known(b_names, to)) ||
                        (known(a_names, to) && known(b_names, from));
      if (!seen) {
        if (unknown++ == 0) first_unknown = fmt::format("'{}' -> '{}'", from, to);
      }
    }
    if (unknown > 0) {
      out.warnings.push_back(fmt::format("{} name map entr{} matched no tensor pair (first: {})",
                                         unknown, unknown == 1 ? "y" : "ies", first_unknown));
    }
    if (options.map->value_transforms > 0) {
      out.warnings.push_back(fmt::format(
          "{} value transform{} in the name map not applied (shapes that differ only by size-1 "
          "dimensions are compared anyway)",
          options.map->value_transforms, options.map->value_transforms == 1 ? "" : "s"));
    }
  }
  // 4. Shape alignment of what is left.
  const bool align = options.align == AlignMode::kAlways ||
                     (options.align == AlignMode::kAuto && out.pairs.empty());
  if (align) {
    const std::vector<size_t> ia = ra.Left();
    const std::vector<size_t> ib = rb.Left();
    const uint64_t cells = static_cast<uint64_t>(ia.size() + 1) * (ib.size() + 1);
    if (cells > options.max_align_cells) {
      out.warnings.push_back(
          fmt::format("shape alignment skipped: {} x {} unpaired tensors exceed the {}-cell limit",
                      ia.size(), ib.size(), options.max_align_cells));
    } else if (!ia.empty() && !ib.empty()) {
      for (const auto& [i, j] : AlignShapes(a, b, ia, ib)) take(i, j, PairRule::kShapeAligned);
    }
  }
  std::sort(out.pairs.begin(), out.pairs.end(),
            [](const TensorPairIndex& x, const TensorPairIndex& y) { return x.a < y.a; });
  out.only_a = ra.Left();
  out.only_b = rb.Left();
  return out;
}

}  // namespace numprobe
