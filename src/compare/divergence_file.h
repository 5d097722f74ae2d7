// divergence_{ts}.json and msprobe's diff_analyze_{ts}.json: written by CompareDumpTrees
// (compare_trees.h) for the ranks it compared, read back by the UI. Writer and reader side by side;
// not public API.
#ifndef NUMPROBE_COMPARE_DIVERGENCE_FILE_H_
#define NUMPROBE_COMPARE_DIVERGENCE_FILE_H_

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/compare.h"
#include "numprobe/divergence.h"
#include "numprobe/result.h"
#include "numprobe/status.h"

namespace numprobe {

// One compared rank and its analysis, for the files below.
struct RankDivergence {
  std::string scope;                    // "" | "step0" | "graph/step1"
  std::string rank;                     // "rank0", "proc17032", "" for a file pair
  const CompareTable* table = nullptr;  // needed by diff_analyze only (DiffAnalyzeMember)
  DivergenceReport report;
  CompareMode mode = CompareMode::kStatistics;  // the table's
};

// The index in `ranks` of the earliest first divergence (earlier step first, then forward before
// backward, then execution order, then rank order), or -1 when no rank has one.
int EarliestDivergence(const std::vector<RankDivergence>& ranks);

// divergence_{ts}.json: {"numprobe_divergence": 1, "first": op | null, "ranks": [{"scope",
// "rank", "first", "next", "ops_examined", "rows_over_tolerance"}], "missing": [...]}.
// `missing` lists ranks or steps present on one side only ("rank10: only in target").
Status WriteDivergenceJson(const std::vector<RankDivergence>& ranks,
                           const std::vector<std::string>& missing,
                           const std::filesystem::path& path);
// The text WriteDivergenceJson writes (also what the processes of an MPI run send process 0).
std::string DivergenceJsonText(const std::vector<RankDivergence>& ranks,
                               const std::vector<std::string>& missing);

// divergence_{ts}.json read back: its ranks, each with its analysis (as the UI shows them).
struct DivergenceFileRank {
  std::string scope;
  std::string rank;
  std::string mode;
  DivergenceReport report;
};
struct DivergenceFile {
  std::vector<DivergenceFileRank> ranks;
  std::vector<std::string> missing;
};

// Reads what WriteDivergenceJson wrote, leniently: a rank without "scope" and "rank" strings and an
// op without "op_name" are skipped; an error figure written as a string ("Infinity", "-inf") or
// absent reads as its value (absent or "NaN": NaN). kCorrupt for malformed JSON or a root that is
// not an object; kOutOfRange for nesting deeper than kMaxJsonDepth (core/json.h).
Result<DivergenceFile> ParseDivergenceJson(std::string_view text);

// msprobe's diff_analyze_{ts}.json (-da): {"rank_N": [{"op_name", "data_info": {"input": {row:
// {"NPU max", "NPU min", "NPU mean", "NPU l2norm"}}, "output": {...}}, "stack_info"}]}, one node
// per rank: numprobe's first divergence of that rank.
Status WriteDiffAnalyzeJson(const std::vector<RankDivergence>& ranks,
                            const std::filesystem::path& path);
// The same file in two halves, for ranks analysed in different processes: one rank's member
// ("rank_N": [...]) as it stands in the file, empty when the rank has no first divergence or no
// table; and the file made of such members, in rank order.
std::string DiffAnalyzeMember(const RankDivergence& r);
Status WriteDiffAnalyzeFile(const std::vector<std::string>& members,
                            const std::filesystem::path& path);

}  // namespace numprobe

#endif  // NUMPROBE_COMPARE_DIVERGENCE_FILE_H_
