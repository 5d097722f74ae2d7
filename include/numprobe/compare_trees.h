// Comparing two dump trees rank by rank, as `numprobe compare` does: the rank (and step) folders
// of both sides are paired (dump_layout.h), every pair present on both sides is compared
// (CompareDumps) and analysed for its first divergence (divergence.h), the earliest divergence
// across ranks is found, and, when an output folder is given, the result files are written:
//   OUTPUT/SCOPE/compare_result_{rank}_{ts}.csv (or .xlsx) and its .json twin, per rank
//   OUTPUT/divergence_{ts}.json                 every rank's analysis and the missing ranks
//   OUTPUT/diff_analyze_{ts}.json               msprobe's -da file, when asked for
// Everything is compared before anything is written, so a bad input leaves no partial results.
#ifndef NUMPROBE_COMPARE_TREES_H_
#define NUMPROBE_COMPARE_TREES_H_

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/compare.h"
#include "numprobe/divergence.h"
#include "numprobe/dump_layout.h"
#include "numprobe/result.h"

namespace numprobe {

struct CompareTreesOptions {
  // Per rank: the mapping files, the thread pool and the progress callback. With at least as many
  // rank pairs as threads, ranks run in parallel (each rank's rows then on its own thread);
  // otherwise one after another, each using every thread. Results do not depend on which.
  CompareOptions compare;
  std::filesystem::path output;  // where the result files go; empty: nothing is written
  std::string timestamp;         // the {ts} of the file names; required with `output`
  bool xlsx = false;             // compare_result_*.xlsx with msprobe's highlighting, not .csv
  bool diff_analyze = false;     // also msprobe's diff_analyze_{ts}.json
  // Called (before anything is compared) for each rank skipped because its dump.json is {}, as
  // msprobe writes it for a rank that recorded nothing. May be empty.
  std::function<void(std::string_view message)> warning;
  // A target construct.json that cannot be read fails the compare (false), or is reported through
  // `warning` and its rank analysed without module paths (true: serve and report show what they
  // can).
  bool construct_errors_warn = false;
};

// A rank or step present on one side only.
struct MissingRank {
  std::string label;          // "rank10", "step2"
  bool in_target = false;     // present in the target dump only (else in the golden only)
  std::filesystem::path dir;  // its folder on the side that has it
  std::string Text() const;   // "rank10: only in the target dump (DIR)"
};

// One compared rank.
struct RankCompare {
  DumpPair pair;
  std::string label;  // "step0/rank1", "rank0", "dump.json" for a file pair
  CompareTable table;
  DivergenceReport report;
  ConstructMap construct;      // the target's construct.json (empty when absent or unreadable)
  bool has_construct = false;  // construct.json was read
  std::filesystem::path table_file;  // compare_result_*.csv or .xlsx; empty when not written
  std::filesystem::path json_file;   // its .json twin; empty when not written
};

struct CompareTreesResult {
  std::vector<RankCompare> ranks;    // in scope, then rank order
  std::vector<MissingRank> missing;  // in the same order
  // The index in `ranks` of the earliest first divergence (earlier step first, then forward
  // before backward, then execution order, then rank order); -1 when no rank has one.
  int earliest = -1;
  std::filesystem::path divergence_file;    // divergence_{ts}.json; empty when not written
  std::filesystem::path diff_analyze_file;  // diff_analyze_{ts}.json; empty when not written

  // A divergence, or ranks on one side only.
  bool findings() const { return earliest >= 0 || !missing.empty(); }
};

// Compares the dump trees `target` and `golden` (each a dump.json, a rank folder, a step folder or
// a dump root; both laid out alike). Errors: those of DiscoverDumpPairs, of the mapping files, of
// CompareDumps and of reading construct.json for any rank (the first in rank order; unless
// construct_errors_warn); kNotFound
// when every rank's dump.json is {}; kInvalidArgument for an output without a timestamp; kIoError
// when a result file cannot be written.
Result<CompareTreesResult> CompareDumpTrees(const std::filesystem::path& target,
                                            const std::filesystem::path& golden,
                                            const CompareTreesOptions& options = {});

// Writes the result files of a compare already made (options.output, options.timestamp, xlsx and
// diff_analyze as above; the mapping options are not used) and records their paths in `result`:
// the same files CompareDumpTrees writes when given the output folder, for callers that look at
// the result before deciding where it goes (the Python API's save()). kInvalidArgument without an
// output folder or a timestamp; kIoError when a file cannot be written.
Status WriteCompareTreesFiles(const CompareTreesOptions& options, CompareTreesResult* result);

}  // namespace numprobe

#endif  // NUMPROBE_COMPARE_TREES_H_
