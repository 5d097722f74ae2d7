// The steps of CompareDumpTrees (compare_trees.h), for callers that spread them over several
// processes (src/cluster/: plan everywhere, compare a share of the pairs in each process, write
// each rank's files where it was compared, then the cross-rank files once). Not public API.
#ifndef NUMPROBE_COMPARE_COMPARE_TREES_PARTS_H_
#define NUMPROBE_COMPARE_COMPARE_TREES_PARTS_H_

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "numprobe/compare_trees.h"
#include "numprobe/dump_layout.h"
#include "numprobe/result.h"
#include "numprobe/status.h"

#include "compare/divergence_file.h"
#include "compare/loaded_mapping.h"

namespace numprobe::detail {

// What a tree compare compares: known from the folder listing and the mapping files alone.
struct TreePlan {
  LoadedMapping mapping;
  std::vector<DumpPair> pairs;       // every pair, in scope then rank order
  std::vector<size_t> complete;      // indices into `pairs` of those compared, in that order
  std::vector<MissingRank> missing;  // pairs with one side only, in that order
};

// Discovers the pairs and loads the mapping files; a rank whose dump.json is {} is skipped with
// a warning through options.warning. Errors as CompareDumpTrees'.
Result<TreePlan> PlanTreeCompare(const std::filesystem::path& target,
                                 const std::filesystem::path& golden,
                                 const CompareTreesOptions& options);

// "step0/rank1", "rank1", "step2"; "dump.json" for a pair of files.
std::string PairLabel(const DumpPair& pair);

// When a rank's divergence is found: as it is made, or later by FindRankDivergence (so that the
// verdict can run while the rank's files are written).
enum class RankVerdict : uint8_t { kNow, kLater };

// Compares and analyses `pairs` (in parallel over ranks when there are at least as many as
// threads) into `out`, in their order. On failure, `*failed` (when given) is the index in `pairs`
// of the first that failed, whose error is returned.
Status CompareTreePairs(const std::vector<const DumpPair*>& pairs, const LoadedMapping& mapping,
                        const CompareTreesOptions& options, std::vector<RankCompare>* out,
                        size_t* failed = nullptr, RankVerdict verdict = RankVerdict::kNow);

// A compared table made into a rank (as CompareTreePairs does): its construct.json read (with
// options.construct_errors_warn a failure to read it is `*warning` instead of the error), its
// divergence found (with kLater, not yet: FindRankDivergence does it).
Status MakeRank(const DumpPair& pair, CompareTable table, const CompareTreesOptions& options,
                RankCompare* out, std::string* warning, RankVerdict verdict = RankVerdict::kNow);

// The divergence of a rank made with RankVerdict::kLater: reads only its table and construct, and
// writes only its report.
void FindRankDivergence(RankCompare* rank);

// Writes one rank's table (.csv or .xlsx) and its .json twin into options.output, recording
// their paths in `rank`.
Status WriteRankFiles(const CompareTreesOptions& options, RankCompare* rank);

// The cross-rank files: divergence_{ts}.json and, when asked for, diff_analyze_{ts}.json (from
// the members DiffAnalyzeMember made, in rank order). Fills the two paths of `result`.
Status WriteCrossRankFiles(const CompareTreesOptions& options,
                           const std::vector<RankDivergence>& ranks,
                           const std::vector<std::string>& diff_analyze_members,
                           const std::vector<MissingRank>& missing, CompareTreesResult* result);

// One compared rank as the cross-rank files see it.
RankDivergence DivergenceOf(const RankCompare& rank);

}  // namespace numprobe::detail

#endif  // NUMPROBE_COMPARE_COMPARE_TREES_PARTS_H_
