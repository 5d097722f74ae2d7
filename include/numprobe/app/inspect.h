// inspect: what a file, a folder or a dump tree holds. Tensor files (.npy .npz .safetensors .pt
// .pth .ckpt) are read and every tensor gets its statistics (stats.h); msprobe dumps (dump.json,
// or its capture journal when the run did not stop cleanly) are summarized. A folder is walked
// recursively in path order; symbolic links are skipped, so inspect reads only what it was given.
// The same report is rendered as text for a terminal or as JSON (docs/inspect-json.md).
#ifndef NUMPROBE_APP_INSPECT_H_
#define NUMPROBE_APP_INSPECT_H_

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "numprobe/dump.h"
#include "numprobe/result.h"
#include "numprobe/stats.h"
#include "numprobe/tensor_file.h"

namespace numprobe {

struct InspectOptions {
  // Whole-model pickles are read with unknown classes turned into opaque objects (nothing runs).
  bool inert_pickle = false;
  // --max-memory: the most one file's decompressed storages may take (memory_limit.h);
  // 0 = DefaultMaxMemory(). A file over it is refused before allocating (kOutOfRange).
  uint64_t max_memory = 0;
};

struct InspectedFile {
  std::string path;
  TensorFile file;
  std::vector<TensorStats> stats;  // one per tensor of `file`
};

struct InspectedDump {
  std::string path;  // the dump's folder, or the .json file when it is not named dump.json
  DumpFile file;
  size_t tensor_rows = 0;
  std::string source;  // "dump.json", or the journal's name when it was read instead
};

// What the walk met, in the order it met it: a warning, or a file that could not be read.
struct InspectMessage {
  std::string warning;  // when `error` is OK
  Status error;
  // A pickle refused in strict mode that InspectOptions::inert_pickle would read (a whole model).
  bool inert_would_read = false;
  bool is_error() const { return !error.ok(); }
};

struct InspectReport {
  std::string path;  // as given
  bool folder = false;
  std::vector<InspectedDump> dumps;
  std::vector<InspectedFile> files;
  std::vector<InspectMessage> messages;
  size_t candidates = 0;  // dumps and tensor files found (read or not)
  size_t failed = 0;      // of those, how many could not be read

  bool ok() const { return failed == 0; }
};

// Inspects `path`. kNotFound when it does not exist. Files that cannot be read do not stop the
// walk: they are in `messages` (and counted in `failed`).
Result<InspectReport> Inspect(const std::filesystem::path& path,
                              const InspectOptions& options = {});

// The terminal table: one block per dump and per file, untrusted names and metadata cut and
// escaped to one line.
std::string InspectText(const InspectReport& report);
// The JSON document of docs/inspect-json.md (one line, non-finite numbers as "NaN"/"Infinity").
std::string InspectJson(const InspectReport& report);

}  // namespace numprobe

#endif  // NUMPROBE_APP_INSPECT_H_
