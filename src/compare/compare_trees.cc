// The multi-rank compare (compare_trees.h): discover the pairs, compare them (ranks in parallel
// when there are enough of them), analyse each, then write the files.
#include "numprobe/compare_trees.h"

#include <array>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "numprobe/dump.h"
#include "numprobe/thread_pool.h"

#include "compare/compare_internal.h"
#include "compare/compare_trees_parts.h"
#include "compare/compare_writer.h"
#include "compare/divergence_file.h"
#include "compare/loaded_mapping.h"

namespace numprobe {

namespace fs = std::filesystem;

namespace detail {

std::string PairLabel(const DumpPair& p) {
  std::string label = p.scope;
  if (!p.rank.empty()) label = label.empty() ? p.rank : label + "/" + p.rank;
  return label.empty() ? "dump.json" : label;
}

Status MakeRank(const DumpPair& p, CompareTable table, const CompareTreesOptions& tree_options,
                RankCompare* out, std::string* warning, RankVerdict verdict) {
  RankCompare rank;
  if (!p.target->construct_json.empty()) {
    auto c = ReadConstructJson(p.target->construct_json);
    if (c) {
      rank.construct = std::move(*c);
      rank.has_construct = true;
    } else if (tree_options.construct_errors_warn) {
      *warning = c.error().message();
    } else {
      return c.error();
    }
  }
  rank.pair = p;
  rank.label = PairLabel(p);
  rank.table = std::move(table);
  if (verdict == RankVerdict::kNow) FindRankDivergence(&rank);
  *out = std::move(rank);
  return Status::Ok();
}

void FindRankDivergence(RankCompare* rank) {
  rank->report = FindDivergence(rank->table, &rank->construct);
}

// The first error in rank order wins.
Status CompareTreePairs(const std::vector<const DumpPair*>& pairs, const LoadedMapping& mapping,
                        const CompareTreesOptions& tree_options, std::vector<RankCompare>* out,
                        size_t* failed, RankVerdict verdict) {
  const CompareOptions& options = tree_options.compare;
  std::vector<std::optional<RankCompare>> results(pairs.size());
  std::vector<Status> errors(pairs.size());
  std::vector<std::string> warnings(pairs.size());  // of construct_errors_warn
  auto compare_one = [&](int64_t k) {
    const auto i = static_cast<size_t>(k);
    const DumpPair& p = *pairs[i];
    auto table = CompareWithMapping(*p.target, *p.golden, mapping, options.pool, options.progress,
                                    options.max_memory);
    if (!table) {
      errors[i] = table.error();
      return;
    }
    RankCompare rank;
    errors[i] = MakeRank(p, std::move(*table), tree_options, &rank, &warnings[i], verdict);
    if (errors[i].ok()) results[i] = std::move(rank);
  };
  ThreadPool& pool = options.pool != nullptr ? *options.pool : ThreadPool::Default();
  if (pairs.size() > 1 && static_cast<int>(pairs.size()) >= pool.threads()) {
    pool.ParallelFor(static_cast<int64_t>(pairs.size()), compare_one);
  } else {
    for (size_t k = 0; k < pairs.size(); ++k) compare_one(static_cast<int64_t>(k));
  }
  for (size_t i = 0; i < errors.size(); ++i) {
    if (errors[i].ok()) continue;
    if (failed != nullptr) *failed = i;
    return errors[i];
  }
  for (const std::string& w : warnings) {
    if (!w.empty() && tree_options.warning) tree_options.warning(w);
  }
  out->reserve(out->size() + results.size());
  for (auto& r : results) out->push_back(std::move(*r));
  return Status::Ok();
}

Status WriteRankFiles(const CompareTreesOptions& options, RankCompare* r) {
  const std::string& ts = options.timestamp;
  const fs::path dir = options.output / r->pair.scope;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError(fmt::format("{}: {}", dir.string(), ec.message()));
  const std::string stem =
      "compare_result" + (r->pair.rank.empty() ? "" : "_" + r->pair.rank) + "_" + ts;
  const fs::path table_file = dir / (stem + (options.xlsx ? ".xlsx" : ".csv"));
  const fs::path json_file = dir / (stem + ".json");
  ThreadPool& pool =
      options.compare.pool != nullptr ? *options.compare.pool : ThreadPool::Default();
  if (!options.xlsx) {
    // On a large statistics compare, writing the CSV and its JSON twin is much of the time: each
    // row's cells are formatted once for both, over the pool (in turn inside its work on ranks).
    NUMPROBE_RETURN_IF_ERROR(WriteCompareCsvAndJson(r->table, table_file, json_file,
                                                    r->pair.target->dump_json.string(),
                                                    r->pair.golden->dump_json.string(), &pool));
  } else {
    // The workbook and the JSON twin side by side.
    std::array<Status, 2> written;
    pool.ParallelFor(2, [&](int64_t which) {
      if (which == 0) {
        written[0] = WriteCompareXlsx(r->table, table_file);
      } else {
        written[1] = WriteCompareJson(r->table, json_file, r->pair.target->dump_json.string(),
                                      r->pair.golden->dump_json.string());
      }
    });
    NUMPROBE_RETURN_IF_ERROR(written[0]);
    NUMPROBE_RETURN_IF_ERROR(written[1]);
  }
  r->table_file = table_file;
  r->json_file = json_file;
  return Status::Ok();
}

Status WriteCrossRankFiles(const CompareTreesOptions& options,
                           const std::vector<RankDivergence>& ranks,
                           const std::vector<std::string>& diff_analyze_members,
                           const std::vector<MissingRank>& missing, CompareTreesResult* result) {
  const std::string& ts = options.timestamp;
  std::vector<std::string> missing_text;
  missing_text.reserve(missing.size());
  for (const MissingRank& m : missing) missing_text.push_back(m.Text());
  std::error_code ec;
  fs::create_directories(options.output, ec);  // a write error below names the problem
  const fs::path divergence = options.output / ("divergence_" + ts + ".json");
  NUMPROBE_RETURN_IF_ERROR(WriteDivergenceJson(ranks, missing_text, divergence));
  result->divergence_file = divergence;
  if (options.diff_analyze) {
    const fs::path analyze = options.output / ("diff_analyze_" + ts + ".json");
    NUMPROBE_RETURN_IF_ERROR(WriteDiffAnalyzeFile(diff_analyze_members, analyze));
    result->diff_analyze_file = analyze;
  }
  return Status::Ok();
}

RankDivergence DivergenceOf(const RankCompare& r) {
  return {r.pair.scope, r.pair.rank, &r.table, r.report, r.table.mode};
}

Result<TreePlan> PlanTreeCompare(const fs::path& target, const fs::path& golden,
                                 const CompareTreesOptions& options) {
  TreePlan plan;
  NUMPROBE_ASSIGN_OR_RETURN(plan.mapping, LoadMapping(options.compare.mapping));
  NUMPROBE_ASSIGN_OR_RETURN(plan.pairs, DiscoverDumpPairs(target, golden));
  size_t skipped = 0;
  for (size_t i = 0; i < plan.pairs.size(); ++i) {
    const DumpPair& p = plan.pairs[i];
    if (!p.complete()) {
      const bool in_target = p.target.has_value();
      plan.missing.push_back({PairLabel(p), in_target, (in_target ? p.target : p.golden)->dir});
      continue;
    }
    // msprobe writes dump.json as {} for a rank that recorded nothing and skips that rank.
    const bool empty_target = IsEmptyDumpJson(p.target->dump_json);
    if (empty_target || IsEmptyDumpJson(p.golden->dump_json)) {
      if (options.warning) {
        options.warning(fmt::format("{}: {} is {{}} (the rank recorded nothing); skipped",
                                    PairLabel(p),
                                    (empty_target ? p.target : p.golden)->dump_json.string()));
      }
      ++skipped;
      continue;
    }
    plan.complete.push_back(i);
  }
  if (plan.complete.empty() && skipped > 0) {
    return Status::NotFound("nothing to compare: every dump.json is {}");
  }
  return plan;
}

}  // namespace detail

namespace {

// divergence_{ts}.json (and diff_analyze_{ts}.json), after the ranks' files.
Status WriteDivergenceFiles(const CompareTreesOptions& options,
                            const std::vector<RankDivergence>& ranks, CompareTreesResult* result) {
  std::vector<std::string> members;
  if (options.diff_analyze) {
    members.reserve(ranks.size());
    for (const RankDivergence& r : ranks) members.push_back(DiffAnalyzeMember(r));
  }
  return detail::WriteCrossRankFiles(options, ranks, members, result->missing, result);
}

std::vector<RankDivergence> DivergencesOf(const std::vector<RankCompare>& compared) {
  std::vector<RankDivergence> ranks;
  ranks.reserve(compared.size());
  for (const RankCompare& r : compared) ranks.push_back(detail::DivergenceOf(r));
  return ranks;
}

}  // namespace

Status WriteCompareTreesFiles(const CompareTreesOptions& options, CompareTreesResult* result) {
  if (options.output.empty() || options.timestamp.empty()) {
    return Status::InvalidArgument(
        "compare: writing the results needs an output folder and a "
        "timestamp for file names");
  }
  for (RankCompare& r : result->ranks) {
    NUMPROBE_RETURN_IF_ERROR(detail::WriteRankFiles(options, &r));
  }
  return WriteDivergenceFiles(options, DivergencesOf(result->ranks), result);
}

std::string MissingRank::Text() const {
  return fmt::format("{}: only in the {} dump ({})", label, in_target ? "target" : "golden",
                     dir.string());
}

Result<CompareTreesResult> CompareDumpTrees(const fs::path& target, const fs::path& golden,
                                            const CompareTreesOptions& options) {
  if (!options.output.empty() && options.timestamp.empty()) {
    return Status::InvalidArgument("compare: an output folder needs a timestamp for file names");
  }
  NUMPROBE_ASSIGN_OR_RETURN(detail::TreePlan plan,
                            detail::PlanTreeCompare(target, golden, options));
  std::vector<const DumpPair*> complete;
  complete.reserve(plan.complete.size());
  for (const size_t i : plan.complete) complete.push_back(&plan.pairs[i]);

  CompareTreesResult result;
  if (options.output.empty()) {
    NUMPROBE_RETURN_IF_ERROR(
        detail::CompareTreePairs(complete, plan.mapping, options, &result.ranks));
    result.missing = std::move(plan.missing);
    result.earliest = EarliestDivergence(DivergencesOf(result.ranks));
    return result;
  }
  NUMPROBE_RETURN_IF_ERROR(detail::CompareTreePairs(complete, plan.mapping, options, &result.ranks,
                                                    nullptr, detail::RankVerdict::kLater));
  result.missing = std::move(plan.missing);
  // The verdicts (one thread, rank after rank) run while the ranks' tables are written (over the
  // pool): writing a large table leaves a core partly idle, and neither needs the other.
  Status tables_written;
  {
    std::thread verdicts([&result] {
      for (RankCompare& r : result.ranks) detail::FindRankDivergence(&r);
    });
    for (RankCompare& r : result.ranks) {
      tables_written = detail::WriteRankFiles(options, &r);
      if (!tables_written.ok()) break;
    }
    verdicts.join();
  }
  NUMPROBE_RETURN_IF_ERROR(tables_written);
  const std::vector<RankDivergence> ranks = DivergencesOf(result.ranks);
  result.earliest = EarliestDivergence(ranks);
  NUMPROBE_RETURN_IF_ERROR(WriteDivergenceFiles(options, ranks, &result));
  return result;
}

}  // namespace numprobe
