// Pairing target rows with golden rows: msprobe's compare keys (exact, -dm, -cm, -am), its
// fuzzy queue (-fm), its dtype rule, then numprobe's sequence alignment of what stays unpaired.
#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "numprobe/thread_pool.h"

#include "compare/compare_internal.h"
#include "compare/loaded_mapping.h"
#include "core/huge_pages.h"
#include "core/name_index.h"
#include "msprobe/entry_name.h"

namespace numprobe::detail {
namespace {

std::string ReplaceAll(std::string_view text_in, std::string_view from, std::string_view to) {
  std::string text(text_in);
  if (from.empty()) return text;
  size_t pos = 0;
  while ((pos = text.find(from, pos)) != std::string::npos) {
    text.replace(pos, from.size(), to);
    pos += to.size();
  }
  return text;
}

std::string ReplaceFirst(std::string_view text_in, std::string_view from, std::string_view to) {
  std::string text(text_in);
  const size_t pos = text.find(from);
  if (!from.empty() && pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

// "Functional.abs.0.forward.input.0" -> "Functional.abs" (msprobe's get_api_name).
std::string ApiName(std::string_view name) {
  const auto parts = SplitDots(name);
  if (parts.size() < 2) return std::string(name);
  return std::string(parts[0]) + "." + std::string(parts[1]);
}

// msprobe's process_cell_mapping.
std::string CellKey(std::string_view name, const LoadedMapping& m) {
  static const std::regex kDirection(R"(\.(forward|backward)\.)");
  if (name.empty()) return "N/A";
  if (!HasPart(name, "parameters_grad") &&
      !std::regex_search(name.begin(), name.end(), kDirection)) {
    return "N/A";
  }
  std::string key = ReplaceFirst(name, "Cell", "Module");
  if (m.cell_map.empty()) return key;
  const size_t dot = key.find('.');
  const std::string rest = dot == std::string::npos ? key : key.substr(dot + 1);
  size_t cut = rest.size();
  for (const char* sep : {".forward.", ".backward.", ".parameters_grad."}) {
    cut = std::min(cut, rest.find(sep) == std::string::npos ? rest.size() : rest.find(sep));
  }
  const std::string cell = rest.substr(0, cut);
  std::string mapped = cell;
  bool exact = false;
  for (const auto& [from, to] : m.cell_map) {
    if (from == cell) {
      mapped = to;
      exact = true;
      break;
    }
  }
  if (!exact) {
    for (const auto& [from, to] : m.cell_map) {
      if (mapped.find(from) != std::string::npos) mapped = ReplaceFirst(mapped, from, to);
    }
  }
  return mapped != cell ? ReplaceFirst(key, cell, mapped) : key;
}

// msprobe's process_internal_api_mapping.
std::string ApiKey(std::string_view name) {
  const auto parts = SplitDots(name);
  if (parts.size() < 2) return std::string(name);
  if (parts[0] == "Mint") return ReplaceAll(name, "Mint", "Torch");
  if (parts[0] == "MintFunctional") return ReplaceAll(name, "MintFunctional", "Functional");
  const std::string api = ApiName(name);
  for (const auto& [ms, pt] : BuiltinMsToPtApis()) {
    if (ms == api) return ReplaceAll(name, api, pt);
  }
  return std::string(name);
}

// msprobe's modify_compare_data_with_user_mapping: argument positions of a user -am YAML.
void ApplyUserApiMapping(const DumpFile& target, const DumpFile& golden, const LoadedMapping& m,
                         RowKeys* keys) {
  std::map<std::string, std::vector<uint32_t>> ms_rows;
  std::map<std::string, bool> pt_apis;
  for (uint32_t r = 0; r < target.rows.size(); ++r)
    ms_rows[ApiName(target.rows[r].name)].push_back(r);
  for (const DumpRow& row : golden.rows) pt_apis[ApiName(row.name)] = true;
  for (const ApiArgMapping& a : m.api_args) {
    if (a.ms_args.size() != a.pt_args.size() || a.ms_outputs.size() != a.pt_outputs.size() ||
        a.ms_parameters.size() != a.pt_parameters.size() ||
        a.ms_parameters_grad.size() != a.pt_parameters_grad.size()) {
      continue;  // msprobe skips entries whose lists differ in length
    }
    const auto it = ms_rows.find(a.ms_api);
    if (it == ms_rows.end() || pt_apis.count(a.pt_api) == 0) continue;
    for (const uint32_t r : it->second) {
      if (!keys->has(r)) continue;
      const DumpRow& row = target.rows[r];
      const std::string name = ReplaceFirst(row.name, a.ms_api, a.pt_api);
      const std::string origin = ReplaceFirst(target.entries[row.entry].name, a.ms_api, a.pt_api);
      const std::vector<std::string>* from = &a.ms_args;
      const std::vector<std::string>* to = &a.pt_args;
      std::string pattern = ".input.";
      switch (row.state) {
        case RowState::kOutput:
          from = &a.ms_outputs;
          to = &a.pt_outputs;
          pattern = ".output.";
          break;
        case RowState::kParameters:
          from = &a.ms_parameters;
          to = &a.pt_parameters;
          pattern = ".parameters.";
          break;
        case RowState::kParametersGrad:
          from = &a.ms_parameters_grad;
          to = &a.pt_parameters_grad;
          pattern = ".parameters_grad.";
          break;
        default:
          break;
      }
      std::string key = name + "abandoned";  // msprobe's marker for positions it cannot map
      const std::string prefix = origin + pattern;
      const std::string rest =
          name.compare(0, prefix.size(), prefix) == 0 ? name.substr(prefix.size()) : name;
      for (size_t i = 0; i < from->size(); ++i) {
        if (rest == (*from)[i]) key = ReplaceAll(name, pattern + (*from)[i], pattern + (*to)[i]);
      }
      keys->Set(r, std::move(key));
    }
  }
}

// msprobe's rename_api: the name without its call count, for fuzzy matching.
std::string RenameApi(const std::string& name) {
  const bool fwd = name.find("forward") != std::string::npos;
  if (!fwd && name.find("backward") == std::string::npos) return name;
  const std::string process = fwd ? "forward" : "backward";
  const size_t p = name.find(process);
  const std::string head = name.substr(0, p);
  const size_t next = name.find(process, p + process.size());
  const std::string in_out =
      name.substr(p + process.size(),
                  next == std::string::npos ? std::string::npos : next - p - process.size());
  // head.rsplit('.', 2)[0]
  std::string func = head;
  for (int k = 0; k < 2; ++k) {
    const size_t dot = func.rfind('.');
    if (dot == std::string::npos) break;
    func = func.substr(0, dot);
  }
  return func + "." + process + in_out;
}

// Cross-framework dtype names (msprobe's cross_dtype_mapping).
std::string CrossDtype(const std::string& d) {
  static const std::unordered_map<std::string, std::string> kMap = {
      {"Int8", "int"},           {"torch.int8", "int"},
      {"UInt8", "int"},          {"torch.uint8", "int"},
      {"Int16", "int"},          {"torch.int16", "int"},
      {"UInt16", "int"},         {"torch.uint16", "int"},
      {"Int32", "int"},          {"torch.int32", "int"},
      {"UInt32", "int"},         {"torch.uint32", "int"},
      {"Int64", "int"},          {"torch.int64", "int"},
      {"UInt64", "int"},         {"torch.uint64", "int"},
      {"Float16", "float"},      {"torch.float16", "float"},
      {"Float32", "float"},      {"torch.float32", "float"},
      {"Float64", "float"},      {"torch.float64", "float"},
      {"BFloat16", "float"},     {"torch.bfloat16", "float"},
      {"Bool", "bool"},          {"torch.bool", "bool"},
      {"Complex64", "complex"},  {"torch.complex64", "complex"},
      {"Complex128", "complex"}, {"torch.complex128", "complex"}};
  const auto it = kMap.find(d);
  return it == kMap.end() ? d : it->second;
}

// API name without its call count, for the alignment: "Functional.linear.3.forward" ->
// "Functional.linear.forward"; "Module.fc1.Linear.forward.0" -> "Module.fc1.Linear.forward".
std::string WithoutCallCount(std::string_view entry) {
  const EntryNameParts parts = ParseEntryName(entry);
  if (!parts.is_call() || parts.call.empty() || parts.op.empty()) return std::string(entry);
  return std::string(parts.op) + (parts.forward() ? ".forward" : ".backward");
}

// Tables smaller than this are faulted in as they are filled: a thread is not worth starting.
constexpr size_t kPrefaultFrom = 4 * kHugePageBytes;

class Pairing {
 public:
  Pairing(CompareTable* table, const LoadedMapping& m, bool debug, ThreadPool* pool)
      : t_(*table), m_(m), debug_(debug), pool_(pool) {}

  void Run() {
    const DumpFile& tf = *t_.target;
    const DumpFile& gf = *t_.golden;
    const bool renumber = !m_.fuzzy && !debug_;
    // The keys of both sides are built side by side (a large compare spends a tenth of its time
    // here), on the compare's pool; one after the other without one.
    RowKeys t_keys;
    RowKeys g_keys;
    const auto keys_of_side = [&](int64_t side) {
      if (side == 0) {
        t_keys = CompareKeys(tf, renumber, debug_);
      } else {
        g_keys = CompareKeys(gf, renumber, debug_);
      }
    };
    if (pool_ != nullptr) {
      pool_->ParallelFor(2, keys_of_side);
    } else {
      keys_of_side(0);
      keys_of_side(1);
    }
    // The table gets a row per target row that has a key. Its memory (128 bytes a row, hundreds
    // of MB for a large dump) is faulted in on a thread of its own, on the core this serial
    // pairing leaves idle: its first touch here was about half of the pairing's time.
    t_.rows.reserve(t_.rows.size() + t_keys.size());
    AdviseHugePages(t_.rows);
    // Not with one thread (--threads 1: the user asked for one core), nor inside the pool's work
    // on several ranks, which keeps every core busy.
    std::jthread prefault;
    if (const size_t unused = (t_.rows.capacity() - t_.rows.size()) * sizeof(CompareRow);
        pool_ != nullptr && pool_->threads() > 1 && !ThreadPool::InParallelFor() &&
        unused >= kPrefaultFrom) {
      prefault = PrefaultInBackground(
          reinterpret_cast<const char*>(t_.rows.data()) + t_.rows.size() * sizeof(CompareRow),
          unused);
    }
    // Mapping modes key the target by its original row name (msprobe's op_name).
    // Rows a -dm file names: msprobe joins on the mapped name, so several of them may share
    // one golden row.
    std::vector<bool> named_by_dm(t_keys.size(), false);
    for (uint32_t r = 0; r < t_keys.size(); ++r) {
      if (!t_keys.has(r)) continue;
      const std::string_view name = tf.rows[r].name;
      if (m_.api_mapping) {
        t_keys.Set(r, ApiKey(name));
      } else if (m_.cell_mapping) {
        t_keys.Set(r, CellKey(name, m_));
      } else if (m_.data_mapping) {
        std::string key(name);
        for (const auto& [from, to] : m_.data_map) {
          if (from == name) {
            key = to;
            named_by_dm[r] = true;
            break;
          }
        }
        t_keys.Set(r, std::move(key));
      }
    }
    if (m_.api_mapping && !m_.api_args.empty()) ApplyUserApiMapping(tf, gf, m_, &t_keys);

    std::vector<int64_t> partner = AdvisedVector<int64_t>(t_keys.size(), -1);
    std::vector<bool> golden_taken(g_keys.size(), false);
    if (m_.fuzzy) {
      Fuzzy(t_keys, g_keys, golden_taken, &partner);
    } else {
      // Golden rows of each key, chained in order: the k-th target row of a key takes the k-th.
      // Keys get dense ids in a flat index (a large dump has millions of rows).
      constexpr uint32_t kEnd = UINT32_MAX;
      // Two runs of one model list the same rows in the same order: while the keys agree row for
      // row, the k-th target row of a key meets the k-th golden row of that key and no index is
      // needed. The index takes over at the first difference, over the rows after the agreeing
      // prefix (every golden row in the prefix is taken). Not with -dm, which joins on a key's
      // first golden row, taken or not.
      uint32_t t_start = 0;
      uint32_t g_start = 0;
      if (!m_.data_mapping) {
        for (;;) {
          while (t_start < t_keys.size() && !t_keys.has(t_start)) ++t_start;
          while (g_start < g_keys.size() && (!g_keys.has(g_start) || golden_taken[g_start])) {
            ++g_start;
          }
          if (t_start == t_keys.size() || g_start == g_keys.size() ||
              t_keys[t_start] != g_keys[g_start]) {
            break;
          }
          partner[t_start++] = g_start++;
        }
      }
      NameIndex index(g_keys.size() - g_start);
      std::vector<uint32_t> first;  // of each key: its first golden row (what -dm joins on)
      std::vector<uint32_t> head;   // its first golden row not taken yet
      std::vector<uint32_t> tail;   // its last golden row
      std::vector<uint32_t> next = AdvisedVector<uint32_t>(g_keys.size(), kEnd);
      const auto key_of = [&](uint32_t id) { return g_keys[first[id]]; };
      for (uint32_t r = g_start; r < g_keys.size(); ++r) {
        if (!g_keys.has(r) || golden_taken[r]) continue;
        const auto [id, inserted] = index.Insert(g_keys[r], key_of);
        if (inserted) {
          first.push_back(r);
          head.push_back(r);
          tail.push_back(r);
        } else {
          next[tail[id]] = r;
          tail[id] = r;
        }
      }
      for (uint32_t r = t_start; r < t_keys.size(); ++r) {
        if (!t_keys.has(r) || partner[r] >= 0) continue;
        const uint32_t id = index.Find(t_keys[r], key_of);
        if (id == NameIndex::kNone) continue;
        if (named_by_dm[r]) {  // not consumed: another -dm row may name the same golden row
          partner[r] = first[id];
          continue;
        }
        if (head[id] == kEnd) continue;
        partner[r] = head[id];
        head[id] = next[head[id]];
      }
    }
    const MatchKind kind = m_.fuzzy ? MatchKind::kFuzzy
                           : (m_.api_mapping || m_.cell_mapping || m_.data_mapping)
                               ? MatchKind::kMapped
                               : MatchKind::kExact;
    const bool cross =
        tf.framework != gf.framework && !tf.framework.empty() && !gf.framework.empty();
    // Whether two dtypes compare, by their ids in the two files: a dump has a handful of dtypes
    // and a large one millions of rows.
    std::unordered_map<uint64_t, bool> comparable_dtypes;
    const auto dtypes_comparable = [&](uint32_t t_dtype, uint32_t g_dtype) {
      const uint64_t pair = (uint64_t{t_dtype} << 32) | g_dtype;
      const auto found = comparable_dtypes.find(pair);
      if (found != comparable_dtypes.end()) return found->second;
      std::string a = tf.Text(t_dtype);
      std::string b = gf.Text(g_dtype);
      if (cross) {
        a = CrossDtype(a);
        b = CrossDtype(b);
      }
      return comparable_dtypes[pair] = DtypesComparable(a, b);
    };
    for (uint32_t r = 0; r < t_keys.size(); ++r) {
      if (!t_keys.has(r)) continue;
      CompareRow row;
      row.target = r;
      if (partner[r] >= 0) {
        row.golden = partner[r];
        const DumpRow& g = gf.rows[static_cast<size_t>(partner[r])];
        // A data mapping (-dm, and -lm, which msprobe turns into one) skips the dtype check.
        const bool comparable = m_.data_mapping || dtypes_comparable(tf.rows[r].dtype, g.dtype);
        if (!comparable) {
          row.match = MatchKind::kDtypeMismatch;
        } else {
          row.match =
              (kind == MatchKind::kFuzzy && tf.rows[r].name == g.name) ? MatchKind::kExact : kind;
        }
      }
      t_.rows.push_back(std::move(row));
    }
    if (prefault.joinable()) prefault.join();  // before Align may move the rows elsewhere
    if (m_.align) Align(g_keys, cross);
  }

 private:
  // msprobe's process_fuzzy_match over the rows of both dumps, in order.
  void Fuzzy(const RowKeys& t_keys, const RowKeys& g_keys, const std::vector<bool>& golden_taken,
             std::vector<int64_t>* partner) {
    std::vector<uint32_t> t_rows;
    std::vector<uint32_t> g_rows;
    for (uint32_t r = 0; r < t_keys.size(); ++r) {
      if (t_keys.has(r) && (*partner)[r] < 0) t_rows.push_back(r);
    }
    for (uint32_t r = 0; r < g_keys.size(); ++r) {
      if (g_keys.has(r) && !golden_taken[r]) g_rows.push_back(r);
    }
    std::vector<std::string> t_renamed(t_keys.size());
    std::vector<std::string> g_renamed(g_keys.size());
    for (const uint32_t r : t_rows) t_renamed[r] = RenameApi(std::string(t_keys[r]));
    for (const uint32_t r : g_rows) g_renamed[r] = RenameApi(std::string(g_keys[r]));
    std::deque<uint32_t> tq;
    std::deque<uint32_t> gq;
    const size_t n = std::max(t_rows.size(), g_rows.size());
    for (size_t i = 0; i < n; ++i) {
      if (i < t_rows.size()) tq.push_back(t_rows[i]);
      if (i < g_rows.size()) gq.push_back(g_rows[i]);
      if (tq.empty() != gq.empty()) break;  // msprobe stops when one side runs out
      if (tq.empty()) continue;
      // msprobe's match_op.
      int64_t ti = -1;
      int64_t gi = -1;
      const uint32_t t_last = tq.back();
      for (size_t b = 0; b + 1 < gq.size() && ti < 0; ++b) {
        if (t_renamed[t_last] == g_renamed[gq[b]]) {
          ti = static_cast<int64_t>(tq.size()) - 1;
          gi = static_cast<int64_t>(b);
        }
      }
      if (ti < 0 && t_renamed[t_last] == g_renamed[gq.back()]) {
        ti = static_cast<int64_t>(tq.size()) - 1;
        gi = static_cast<int64_t>(gq.size()) - 1;
      }
      for (size_t a = 0; a + 1 < tq.size() && ti < 0; ++a) {
        if (t_renamed[tq[a]] == g_renamed[gq.back()]) {
          ti = static_cast<int64_t>(a);
          gi = static_cast<int64_t>(gq.size()) - 1;
        }
      }
      if (ti < 0) continue;
      (*partner)[tq[static_cast<size_t>(ti)]] = gq[static_cast<size_t>(gi)];
      tq.erase(tq.begin(), tq.begin() + ti + 1);
      gq.erase(gq.begin(), gq.begin() + gi + 1);
    }
  }

  // numprobe: rows left unpaired are aligned in execution order over (API name without call
  // count, row suffix, shape, dtype) by a longest common subsequence, so that a drift in call
  // counts does not orphan the rest of the run.
  void Align(const RowKeys& g_keys, bool cross) {
    // Only unpaired target rows are aligned: when every row found its golden row (two runs of one
    // model), there is nothing to do.
    if (std::none_of(t_.rows.begin(), t_.rows.end(),
                     [](const CompareRow& row) { return row.golden < 0; })) {
      return;
    }
    const DumpFile& gf = *t_.golden;
    std::vector<bool> golden_used(gf.rows.size(), false);
    for (const CompareRow& row : t_.rows) {
      if (row.golden >= 0) golden_used[static_cast<size_t>(row.golden)] = true;
    }
    // Paired rows whose golden rows come in increasing order anchor the alignment: unpaired rows
    // are only aligned within the gap between two consecutive anchors, on both sides.
    std::vector<std::pair<int64_t, int64_t>> anchors = {{-1, -1}};
    for (size_t i = 0; i < t_.rows.size(); ++i) {
      const int64_t g = t_.rows[i].golden;
      if (g > anchors.back().second) anchors.emplace_back(static_cast<int64_t>(i), g);
    }
    anchors.emplace_back(static_cast<int64_t>(t_.rows.size()),
                         static_cast<int64_t>(gf.rows.size()));
    for (size_t k = 0; k + 1 < anchors.size(); ++k) {
      std::vector<size_t> a;    // indices into t_.rows
      std::vector<uint32_t> b;  // golden rows
      for (int64_t i = anchors[k].first + 1; i < anchors[k + 1].first; ++i) {
        if (t_.rows[static_cast<size_t>(i)].golden < 0) a.push_back(static_cast<size_t>(i));
      }
      for (int64_t r = anchors[k].second + 1; r < anchors[k + 1].second; ++r) {
        if (!golden_used[static_cast<size_t>(r)] && g_keys.has(static_cast<size_t>(r))) {
          b.push_back(static_cast<uint32_t>(r));
        }
      }
      if (!a.empty() && !b.empty()) AlignGap(a, b, cross);
    }
  }

  void AlignGap(const std::vector<size_t>& a, const std::vector<uint32_t>& b, bool cross) {
    const DumpFile& tf = *t_.target;
    const DumpFile& gf = *t_.golden;
    auto token = [&](const DumpFile& f, const DumpRow& row) {
      const std::string_view entry = f.entries[row.entry].name;
      std::string dtype = f.Text(row.dtype);
      if (cross) dtype = CrossDtype(dtype);
      if (dtype == "torch.float16" || dtype == "torch.bfloat16") dtype = "torch.float32";
      if (dtype == "Float16" || dtype == "BFloat16") dtype = "Float32";
      const std::string_view suffix =
          row.name.compare(0, entry.size(), entry) == 0 ? row.name.substr(entry.size()) : row.name;
      return WithoutCallCount(entry) + "|" + std::string(suffix) + "|" + f.Text(row.shape) + "|" +
             dtype;
    };
    std::unordered_map<std::string, uint32_t> ids;
    auto id_of = [&](const std::string& tok) {
      return ids.emplace(tok, static_cast<uint32_t>(ids.size())).first->second;
    };
    std::vector<uint32_t> ta(a.size());
    std::vector<uint32_t> tb(b.size());
    for (size_t i = 0; i < a.size(); ++i) ta[i] = id_of(token(tf, tf.rows[t_.rows[a[i]].target]));
    for (size_t j = 0; j < b.size(); ++j) tb[j] = id_of(token(gf, gf.rows[b[j]]));

    std::vector<std::pair<size_t, size_t>> matches;
    constexpr size_t kMaxCells = size_t{40} << 20;  // bytes of the direction table
    if (a.size() * b.size() <= kMaxCells) {
      // Longest common subsequence, then walk back from the end.
      const size_t n = a.size();
      const size_t m = b.size();
      std::vector<uint32_t> prev(m + 1, 0);
      std::vector<uint32_t> cur(m + 1, 0);
      std::vector<uint8_t> dir(n * m, 0);  // 1 match, 2 up, 3 left
      for (size_t i = 1; i <= n; ++i) {
        for (size_t j = 1; j <= m; ++j) {
          uint8_t d = 0;
          if (ta[i - 1] == tb[j - 1]) {
            cur[j] = prev[j - 1] + 1;
            d = 1;
          } else if (prev[j] >= cur[j - 1]) {
            cur[j] = prev[j];
            d = 2;
          } else {
            cur[j] = cur[j - 1];
            d = 3;
          }
          dir[(i - 1) * m + (j - 1)] = d;
        }
        std::swap(prev, cur);
      }
      size_t i = n;
      size_t j = m;
      while (i > 0 && j > 0) {
        const uint8_t d = dir[(i - 1) * m + (j - 1)];
        if (d == 1) {
          matches.emplace_back(i - 1, j - 1);
          --i;
          --j;
        } else if (d == 2) {
          --i;
        } else {
          --j;
        }
      }
    } else {
      // Too large for the table: in order, each row takes the next unused golden row of its token.
      std::unordered_map<uint32_t, std::deque<size_t>> by_token;
      for (size_t j = 0; j < tb.size(); ++j) by_token[tb[j]].push_back(j);
      size_t last = 0;
      for (size_t i = 0; i < ta.size(); ++i) {
        auto& q = by_token[ta[i]];
        while (!q.empty() && q.front() < last) q.pop_front();
        if (q.empty()) continue;
        matches.emplace_back(i, q.front());
        last = q.front() + 1;
        q.pop_front();
      }
    }
    for (const auto& [i, j] : matches) {
      CompareRow& row = t_.rows[a[i]];
      row.golden = b[j];
      row.match = MatchKind::kAligned;
    }
  }

  CompareTable& t_;
  const LoadedMapping& m_;
  bool debug_;
  ThreadPool* pool_;
};

}  // namespace

std::string MsToPtApiKey(const std::string& name) { return ApiKey(name); }

void PairRows(CompareTable* table, const LoadedMapping& mapping, bool debug_files,
              ThreadPool* pool) {
  Pairing(table, mapping, debug_files, pool).Run();
}

}  // namespace numprobe::detail
