#include "numprobe/dump_layout.h"

#include <algorithm>
#include <map>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "numprobe/enum_names.h"

#include "msprobe/dump_journal.h"
#include "msprobe/folder_number.h"

namespace numprobe {
namespace fs = std::filesystem;

namespace {

enum class FolderKind { kRank, kStep, kRoot, kMix, kUnknown };

// What a folder of each kind is, for messages.
constexpr EnumNameEntry<FolderKind> kFolderKindTexts[] = {
    {FolderKind::kRank, "a rank folder (dump.json)"},
    {FolderKind::kStep, "a step folder (rank*/proc* folders)"},
    {FolderKind::kRoot, "a dump root (step* folders)"},
    {FolderKind::kMix, "a MindSpore graph/pynative root"},
    {FolderKind::kUnknown, "an unrecognised folder"}};
constexpr const auto& EnumNameTable(FolderKind /*unused*/) { return kFolderKindTexts; }

// Subfolders named prefix{N} (or prefix alone when allow_bare), by number; bare = -1.
std::map<long long, std::string> NumberedDirs(const fs::path& dir, std::string_view prefix,
                                              bool allow_bare) {
  std::map<long long, std::string> out;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
    const std::string name = it->path().filename().string();
    if (name == prefix) {
      if (allow_bare) out.emplace(-1, name);
      continue;
    }
    if (const auto n = detail::FolderNumber(name, prefix)) out.emplace(*n, name);
  }
  return out;
}

bool IsDir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

FolderKind Classify(const fs::path& dir) {
  if (LocateDump(dir).has_value()) return FolderKind::kRank;
  if (IsDir(dir / "graph") || IsDir(dir / "pynative")) return FolderKind::kMix;
  if (!NumberedDirs(dir, "rank", true).empty() || !NumberedDirs(dir, "proc", false).empty()) {
    return FolderKind::kStep;
  }
  if (!NumberedDirs(dir, "step", false).empty()) return FolderKind::kRoot;
  return FolderKind::kUnknown;
}

std::string JoinScope(const std::string& scope, const std::string& name) {
  return scope.empty() ? name : scope + "/" + name;
}

void PairStep(const fs::path& target, const fs::path& golden, const std::string& scope,
              std::vector<DumpPair>* out) {
  const auto t_ranks = NumberedDirs(target, "rank", true);
  const auto g_ranks = NumberedDirs(golden, "rank", true);
  auto add = [&](const std::string* t_name, const std::string* g_name) {
    if (t_name == nullptr && g_name == nullptr) return;  // every caller passes one name at least
    DumpPair pair;
    pair.scope = scope;
    pair.rank = t_name != nullptr ? *t_name : *g_name;
    pair.golden_rank = g_name != nullptr ? *g_name : *t_name;
    if (t_name != nullptr) pair.target = LocateDump(target / *t_name);
    if (g_name != nullptr) pair.golden = LocateDump(golden / *g_name);
    if (pair.target.has_value() || pair.golden.has_value()) out->push_back(std::move(pair));
  };
  if (!t_ranks.empty() && !g_ranks.empty()) {
    // rank{N} pairs with rank{N}: never by position in a listing.
    std::map<long long, std::pair<const std::string*, const std::string*>> by_number;
    for (const auto& [n, name] : t_ranks) by_number[n].first = &name;
    for (const auto& [n, name] : g_ranks) by_number[n].second = &name;
    for (const auto& [n, names] : by_number) add(names.first, names.second);
    return;
  }
  // proc{pid} folders carry process ids, which differ between runs: pair them in pid order.
  const auto t_procs = t_ranks.empty() ? NumberedDirs(target, "proc", false) : t_ranks;
  const auto g_procs = g_ranks.empty() ? NumberedDirs(golden, "proc", false) : g_ranks;
  auto t_it = t_procs.begin();
  auto g_it = g_procs.begin();
  while (t_it != t_procs.end() || g_it != g_procs.end()) {
    add(t_it != t_procs.end() ? &t_it->second : nullptr,
        g_it != g_procs.end() ? &g_it->second : nullptr);
    if (t_it != t_procs.end()) ++t_it;
    if (g_it != g_procs.end()) ++g_it;
  }
}

Status PairFolders(const fs::path& target, const fs::path& golden, const std::string& scope,
                   int depth, std::vector<DumpPair>* out);

void PairNumbered(const fs::path& target, const fs::path& golden, std::string_view prefix,
                  const std::string& scope, int depth, std::vector<DumpPair>* out,
                  Status* first_error) {
  const auto t_steps = NumberedDirs(target, prefix, false);
  const auto g_steps = NumberedDirs(golden, prefix, false);
  std::map<long long, std::pair<const std::string*, const std::string*>> by_number;
  for (const auto& [n, name] : t_steps) by_number[n].first = &name;
  for (const auto& [n, name] : g_steps) by_number[n].second = &name;
  for (const auto& [n, names] : by_number) {
    const std::string step_scope =
        JoinScope(scope, names.first != nullptr ? *names.first : *names.second);
    if (names.first == nullptr || names.second == nullptr) {
      // A step on one side only: report it as a pair with one side missing.
      DumpPair pair;
      pair.scope = step_scope;
      if (names.first != nullptr) pair.target = DumpLocation{target / *names.first, {}, {}, {}, {}};
      if (names.second != nullptr)
        pair.golden = DumpLocation{golden / *names.second, {}, {}, {}, {}};
      out->push_back(std::move(pair));
      continue;
    }
    Status s =
        PairFolders(target / *names.first, golden / *names.second, step_scope, depth + 1, out);
    if (!s.ok() && first_error->ok()) *first_error = s;
  }
}

Status PairFolders(const fs::path& target, const fs::path& golden, const std::string& scope,
                   int depth, std::vector<DumpPair>* out) {
  if (depth > 3) return Status::InvalidArgument("dump folders nested too deeply");
  const FolderKind t_kind = Classify(target);
  const FolderKind g_kind = Classify(golden);
  if (t_kind == FolderKind::kUnknown) {
    return Status::NotFound(
        fmt::format("{}: no dump.json, rank*/proc* or step* folders to compare", target.string()));
  }
  if (g_kind == FolderKind::kUnknown) {
    return Status::NotFound(
        fmt::format("{}: no dump.json, rank*/proc* or step* folders to compare", golden.string()));
  }
  if (t_kind != g_kind) {
    return Status::InvalidArgument(fmt::format("target {} is {} but golden {} is {}",
                                               target.string(), EnumName(t_kind), golden.string(),
                                               EnumName(g_kind)));
  }
  Status first_error;
  switch (t_kind) {
    case FolderKind::kRank: {
      DumpPair pair;
      pair.scope = scope;
      pair.rank = target.filename().string();
      pair.golden_rank = golden.filename().string();
      pair.target = LocateDump(target);
      pair.golden = LocateDump(golden);
      out->push_back(std::move(pair));
      break;
    }
    case FolderKind::kStep:
      PairStep(target, golden, scope, out);
      break;
    case FolderKind::kRoot:
      PairNumbered(target, golden, "step", scope, depth, out, &first_error);
      break;
    case FolderKind::kMix:
      for (const char* part : {"graph", "pynative"}) {
        const bool t_has = IsDir(target / part);
        const bool g_has = IsDir(golden / part);
        if (!t_has && !g_has) continue;
        if (t_has != g_has) {
          DumpPair pair;
          pair.scope = JoinScope(scope, part);
          if (t_has) pair.target = DumpLocation{target / part, {}, {}, {}, {}};
          if (g_has) pair.golden = DumpLocation{golden / part, {}, {}, {}, {}};
          out->push_back(std::move(pair));
          continue;
        }
        Status s =
            PairFolders(target / part, golden / part, JoinScope(scope, part), depth + 1, out);
        if (!s.ok() && first_error.ok()) first_error = s;
      }
      break;
    case FolderKind::kUnknown:
      break;
  }
  return first_error;
}

}  // namespace

std::optional<DumpLocation> LocateDump(const fs::path& dir) {
  std::error_code ec;
  DumpLocation loc;
  loc.dir = dir;
  // A journal without dump.json is a run that was killed before its first write: ReadDumpJson and
  // friends read the journal for these names (dump_journal.h).
  const bool journal = HasDumpJournal(dir);
  if (fs::is_regular_file(dir / "dump.json", ec) || journal) {
    loc.dump_json = dir / "dump.json";
  } else if (fs::is_regular_file(dir / "debug.json", ec)) {
    loc.dump_json = dir / "debug.json";
  } else {
    return std::nullopt;
  }
  if (fs::is_regular_file(dir / "stack.json", ec) || journal) loc.stack_json = dir / "stack.json";
  if (fs::is_regular_file(dir / "construct.json", ec) || journal) {
    loc.construct_json = dir / "construct.json";
  }
  loc.tensor_dir = dir / "dump_tensor_data";
  return loc;
}

Result<std::vector<DumpPair>> DiscoverDumpPairs(const fs::path& target, const fs::path& golden) {
  std::error_code ec;
  for (const fs::path& p : {target, golden}) {
    if (!fs::exists(p, ec)) return Status::NotFound(p.string() + ": no such file or folder");
  }
  const bool t_dir = fs::is_directory(target, ec);
  const bool g_dir = fs::is_directory(golden, ec);
  if (t_dir != g_dir) {
    return Status::InvalidArgument(
        "the target and golden paths must both be dump.json files or both be folders");
  }
  std::vector<DumpPair> pairs;
  if (!t_dir) {
    DumpPair pair;
    for (auto [path, side] : {std::pair{target, &pair.target}, std::pair{golden, &pair.golden}}) {
      DumpLocation loc;
      loc.dir = path.parent_path();
      loc.dump_json = path;
      if (fs::is_regular_file(loc.dir / "stack.json", ec)) loc.stack_json = loc.dir / "stack.json";
      if (fs::is_regular_file(loc.dir / "construct.json", ec)) {
        loc.construct_json = loc.dir / "construct.json";
      }
      loc.tensor_dir = loc.dir / "dump_tensor_data";
      *side = std::move(loc);
    }
    pairs.push_back(std::move(pair));
    return pairs;
  }
  NUMPROBE_RETURN_IF_ERROR(PairFolders(target, golden, "", 0, &pairs));
  if (pairs.empty()) {
    return Status::NotFound(
        fmt::format("nothing to compare between {} and {}", target.string(), golden.string()));
  }
  return pairs;
}

}  // namespace numprobe
