// Finding what to compare in two msprobe dump trees. Accepted layouts, on both sides alike:
//   a dump.json file (or debug.json)          -> one pair
//   a rank folder holding dump.json           -> one pair
//   a step folder with rank{N}/ or proc{pid}/ -> ranks paired by their number; proc folders (whose
//                                                pids differ between runs) in pid order
//   a dump root with step{N}/ folders          -> steps paired by their number, then as above
//   MindSpore's graph/ + pynative/ split       -> each side compared separately, then as above
// A rank or step present on one side only is returned as a pair with the other side missing.
#ifndef NUMPROBE_DUMP_LAYOUT_H_
#define NUMPROBE_DUMP_LAYOUT_H_

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "numprobe/result.h"

namespace numprobe {

// One dump.json and its companions.
struct DumpLocation {
  std::filesystem::path dir;             // the folder holding dump.json
  std::filesystem::path dump_json;       // dump.json (or debug.json)
  std::filesystem::path stack_json;      // empty when absent
  std::filesystem::path construct_json;  // empty when absent
  std::filesystem::path tensor_dir;      // dump_tensor_data/ beside dump.json (may not exist)
};

// Returns the location of the dump in `dir`, or nullopt when it holds no dump.json/debug.json.
std::optional<DumpLocation> LocateDump(const std::filesystem::path& dir);

struct DumpPair {
  std::string scope;  // output subfolder: "" | "step0" | "graph/step1"
  std::string rank;   // "rank0", "rank", "proc17032" (the target's folder); "" for a file pair
  std::string golden_rank;  // the golden's folder name (differs from `rank` for proc folders)
  std::optional<DumpLocation> target;
  std::optional<DumpLocation> golden;
  bool complete() const { return target.has_value() && golden.has_value(); }
};

// The pairs to compare, in scope then rank-number order. kInvalidArgument when one path is a
// file and the other a folder, or the folders have different layouts; kNotFound when a path does
// not exist or holds nothing to compare.
Result<std::vector<DumpPair>> DiscoverDumpPairs(const std::filesystem::path& target,
                                                const std::filesystem::path& golden);

}  // namespace numprobe

#endif  // NUMPROBE_DUMP_LAYOUT_H_
