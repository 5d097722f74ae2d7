// casts.json: numprobe's side record of the dtype-narrowing casts a captured run made (x.to(bf16),
// x.half(), x.type_as(y), ...), written beside dump.json in the rank folder. msprobe drops casts
// at its default risk level (and numprobe writes dump.json entry for entry as msprobe does), so
// without this record a cast that loses precision is invisible: the first-divergence analysis
// reads it, when present, to name the cast where precision was lost. Dumps without it (msprobe's
// own) are analysed from their dtypes alone. The format is documented in docs/casts.md:
//   {"numprobe_casts": 1,
//    "casts": [{"name": "Tensor.bfloat16.0.forward", "entries_before": 12,
//               "input": {tensor leaf}, "output": {tensor leaf}, "stack": ["File ...", ...]}]}
// Leaves are dump.json's tensor leaves (type, dtype, shape, Max, Min, Mean, Norm, requires_grad);
// `name` is the entry msprobe would write for the call at risk_level ALL; `entries_before` the
// number of dump.json entries recorded when the cast ran (its place in execution order).
#ifndef NUMPROBE_CASTS_H_
#define NUMPROBE_CASTS_H_

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/json_value.h"
#include "numprobe/result.h"

namespace numprobe {

inline constexpr std::string_view kCastsFileName = "casts.json";
inline constexpr int64_t kCastsFormatVersion = 1;

// One tensor of a cast: its dtype ("torch.float32"), shape and Max/Min/Mean/Norm (nullopt where
// the leaf has none).
struct CastTensor {
  std::string dtype;
  std::vector<int64_t> shape;
  std::array<std::optional<double>, 4> stats;
};

struct CastNote {
  std::string name;
  int64_t entries_before = 0;
  CastTensor input;
  CastTensor output;
  std::vector<std::string> stack;  // innermost frame first, as in stack.json
};

// The casts of one rank folder (one step), in execution order.
struct CastRecord {
  std::vector<CastNote> casts;
};

// One cast as a casts.json element (the Dumper's writer; leaves are built by the caller).
JsonValue CastNoteJson(std::string_view name, int64_t entries_before, JsonValue input,
                       JsonValue output, const std::vector<std::string>& stack);
// The whole file's JSON from elements made by CastNoteJson.
JsonValue CastRecordJson(JsonValue::Array casts);

// Reads one element; kCorrupt naming what is missing or of the wrong type.
Result<CastNote> ParseCastNote(const JsonValue& value);
// Parses casts.json text. kCorrupt for malformed JSON, a missing or unknown "numprobe_casts"
// version, or a malformed element.
Result<CastRecord> ParseCastsJson(std::string_view text);
// The casts of a rank folder: casts.json, or the capture journal's casts when the journal holds
// records written after the JSON files (a run that did not stop cleanly). nullopt when the
// folder has neither (a dump msprobe wrote). Errors are prefixed with the path.
Result<std::optional<CastRecord>> ReadCasts(const std::filesystem::path& rank_dir);

}  // namespace numprobe

#endif  // NUMPROBE_CASTS_H_
