// What `numprobe serve` and `numprobe report` show: the runs found under the paths they were
// given. A path may be a compare output folder (the compare_result_*.json twins, any
// divergence_*.json and scan_*.json beside them), a single twin file, a scan output, a dump tree
// (shown as one table of its tensors' statistics), or two dump trees compared on the fly. Each
// run is one compared (or dumped) rank of one step: its rows in a ResultStore, its model tree from
// construct.json, and its findings. A Workspace is immutable once loaded and owns its memory.
#ifndef NUMPROBE_UI_WORKSPACE_H_
#define NUMPROBE_UI_WORKSPACE_H_

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "numprobe/json_value.h"
#include "numprobe/result.h"

#include "ui/findings.h"
#include "ui/model_tree.h"
#include "ui/result_store.h"

namespace numprobe::ui {

struct Run {
  std::string label;        // "step0/rank1", "proc17032", "dump.json"
  std::string scope;        // "step0", "graph/step1", ""
  std::string rank_folder;  // "rank1", "proc17032", ""
  int64_t step = -1;        // from the scope's last step{N}; -1 when none
  int64_t rank = -1;        // N of rank{N}; -1 for proc folders and lone files
  std::string mode;         // "statistics", "tensor", "md5", or "dump" (one dump, no compare)
  std::string source;       // the result file, or "compared on the fly"
  std::string target;       // the target's dump.json (a label; may no longer exist)
  std::string golden;       // the golden's dump.json ("" for one dump)
  std::filesystem::path target_tensors;  // dump_tensor_data folders ("" when unknown)
  std::filesystem::path golden_tensors;
  bool has_construct = false;
  std::unique_ptr<ResultStore> store;
  ModelTree tree;
  Findings findings;
};

struct ScanData {
  std::string file;
  JsonValue doc;  // the scan_*.json document (an object)
};

struct Workspace {
  std::string kind;  // "compare", "dumps" (compared on the fly), "dump", "scan", "precheck"
  std::vector<std::string> paths;
  std::vector<std::unique_ptr<Run>> runs;  // ordered by scope (step), then rank
  std::optional<ScanData> scan;
  std::optional<ScanData> precheck;  // a precheck_{ts}.json (numprobe precheck), newest found
  std::string divergence_file;       // a divergence_*.json found beside the results ("" if none)
  std::string divergence_json;       // its text (at most 16 MiB)
  std::vector<std::string> warnings;
};

struct LoadOptions {
  std::filesystem::path golden;  // compare `paths[0]` against this dump tree on the fly
};

// Loads what `path` holds (see the top of this file). kNotFound when it holds nothing numprobe
// can show; kCorrupt/kOutOfRange for malformed files (named in the message).
Result<std::unique_ptr<Workspace>> LoadWorkspace(const std::filesystem::path& path,
                                                 const LoadOptions& options = {});

// Reads one compare JSON twin (as WriteCompareJson writes it) into a store, streaming.
// kCorrupt for malformed JSON or a row whose cell count differs from the columns'.
struct LoadedTable {
  std::unique_ptr<ResultStore> store;
  std::string mode;
  std::string target;
  std::string golden;
};
Result<LoadedTable> ReadCompareJson(const std::filesystem::path& path);

// True for the JSON twin of numprobe precheck: precheck_{14 digits}.json.
bool IsPrecheckTwin(std::string_view file_name);

// Python's str(list of str) back to the strings ("['a.pt', 'b.pt']"); nullopt when `text` is
// not such a list.
std::optional<std::vector<std::string>> ParsePyStrList(std::string_view text);

}  // namespace numprobe::ui

#endif  // NUMPROBE_UI_WORKSPACE_H_
