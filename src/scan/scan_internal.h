// Pieces of numprobe scan shared by its source files: entry-name rules, the statistics of one
// dump row, element access to tensor files, raw entry extraction from dump.json, the ordering of
// communication ops across ranks, and the watchpoint/headroom evaluators.
#ifndef NUMPROBE_SCAN_SCAN_INTERNAL_H_
#define NUMPROBE_SCAN_SCAN_INTERNAL_H_

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "numprobe/dump.h"
#include "numprobe/dump_layout.h"
#include "numprobe/scan.h"
#include "numprobe/tensor.h"

namespace numprobe::detail {

// ---- entry names (scan_names.cc) ----

// "Module.fc1.Linear.forward.0" / "Cell.dense.Dense.forward.0".
bool IsModuleEntry(std::string_view name);
// "Module.fc1.Linear.parameters_grad.0" (or without the trailing count).
bool IsParametersGradEntry(std::string_view name);
// A communication op in msprobe's sense ("Distributed.all_reduce.0.forward").
bool IsCommunicationEntry(std::string_view name);
// Ops whose outputs hold uninitialised memory (torch.empty and friends): never an anomaly.
bool IsIgnoredEntry(std::string_view name);
bool IsBackwardEntry(std::string_view name);
// The second dot-separated part: the API name of an API entry ("all_reduce", "__mul__").
std::string_view ApiName(std::string_view name);
// The class of a module entry, lower case ("linear"), or the API name of an API entry.
std::string OpKindLower(std::string_view name);
// A module entry without its direction and call count: "Module.fc1.Linear".
std::string ModuleOfEntry(std::string_view name);
// The layer an entry belongs to: the innermost module of construct.json, the module itself for
// module entries, or the op without its call count ("Tensor.__mul__").
std::string LayerOf(std::string_view name, const std::vector<std::string>& module_path);
// The parameter a parameter row belongs to: "Module.fc1.Linear.weight".
std::string ParameterKey(std::string_view entry, std::string_view row_name);
// Activation functions whose outputs the activation_range watchpoint inspects.
bool IsActivationOp(std::string_view name);
// True for "torch.float32", "Float16", "torch.bfloat16", "float64", ...
bool IsFloatDTypeText(std::string_view dtype);
// The element count of a shape text like "[2, 3]" ("[]" = 1); nullopt when unparsable.
std::optional<int64_t> NumelOfShapeText(std::string_view shape);

// ---- tensors (scan_tensor.cc) ----

// The element count of the last shape text read (a dump repeats a shape row after row, and
// parsing it was a tenth of reading a row).
struct LastShape {
  std::string text;
  std::optional<int64_t> numel;
  bool set = false;
};

// The statistics scan uses for one dump row, from dump.json or its tensor file.
struct RowReadContext {
  const DumpLocation* location = nullptr;
  LastShape* last_shape = nullptr;  // may be null (no reuse)
  bool read_files = true;
  int64_t* files_read = nullptr;
  int64_t* files_missing = nullptr;  // data_name given but no such file
  std::vector<std::string>* warnings = nullptr;
  uint64_t max_memory = 0;  // ScanOptions::max_memory, resolved (never 0)
};
// `reuse` lends its strings' memory (a large scan reads millions of rows into one ScanTensor).
ScanTensor TensorOfRow(const DumpFile& file, const DumpRow& row, const RowReadContext& context,
                       ScanTensor reuse = {});

// The one tensor of a tensor file (the first when there are several), as a contiguous tensor.
// `max_memory` caps the decompressed storages (ReadOptions::max_inflated_bytes).
Result<Tensor> LoadTensorFile(const std::filesystem::path& path, uint64_t max_memory);
// Element i of a contiguous tensor as a double; complex tensors give |x|.
double ElementAsDouble(const TensorView& view, int64_t i);

// mean|a - b| / (mean|b| + epsilon) and whether allclose(a, b, rtol, atol) holds everywhere
// (NaN never close). kInvalidArgument when the element counts differ.
struct UpdateFacts {
  double ratio = 0;
  bool allclose = false;
};
Result<UpdateFacts> CompareUpdate(const Tensor& current, const Tensor& previous, double rtol,
                                  double atol, double epsilon);
// The percentage of non-NaN elements of `t` inside [low, high].
double PercentInRange(const Tensor& t, double low, double high);

// ---- raw entries (scan_entries.cc) ----

// The JSON text of the values of the given top-level entries of dump.json's "data" object
// (numbers kept as written). A repeated entry: the last value wins.
Result<std::unordered_map<std::string, std::string>> ExtractEntries(
    std::span<const char> bytes, const std::unordered_set<std::string>& names);
// The same for the members of one JSON object given as text (an extracted entry).
Result<std::unordered_map<std::string, std::string>> ExtractMembers(
    std::string_view object_json, const std::unordered_set<std::string>& names);

// ---- communication (scan_comm.cc) ----

enum class CommDirection : uint8_t { kLink, kSrc, kDst };

struct CommNode {
  int rank_slot = 0;   // index of the rank in the step
  uint32_t entry = 0;  // entry index in that rank's dump.json
  std::string op_name;
  std::string api;  // normalized: isend -> send, irecv -> recv
  CommDirection direction = CommDirection::kLink;
  std::optional<int64_t> peer;  // the other rank of a point-to-point op
  std::vector<int64_t> group;   // the process group's ranks (empty: every rank)
  bool input_bad = false;
  bool output_bad = false;
  int instance = -1;  // matched instance (one collective call, or one send/recv pair)
  int level = 0;
};

// Fills api, direction, peer and group of `node` from the entry's JSON text (msprobe's
// find_connected_nodes and _resolve_type) for a rank numbered `rank`.
void DescribeCommNode(std::string_view raw_entry, int64_t rank, CommNode* node);

// Matches the nodes of one step across ranks into instances and gives each instance a level:
// instances that follow one another on any rank get increasing levels (communication order).
// `rank_numbers[slot]` is the rank number of each slot; `per_rank[slot]` lists that rank's nodes
// (indices into `nodes`) in execution order.
void OrderCommNodes(const std::vector<int64_t>& rank_numbers,
                    const std::vector<std::vector<int>>& per_rank, std::vector<CommNode>* nodes);

// ---- headroom (scan_headroom.cc) ----

TargetFit FitOf(DType target, double max_abs, double min_nonzero_abs);
// FitOf without headroom_log2 (left NaN): the verdicts that the summary and the JSON's flagged
// rows test on every row; a log2 per row and target in each of the three passes over the rows
// was 3% of a 200k-entry scan (perf).
TargetFit VerdictsOf(DType target, double max_abs, double min_nonzero_abs);
// VerdictsOf by rounding the two magnitudes into `target`: what VerdictsOf's comparisons with
// the type's rounding edges stand for (exposed for the test that checks they agree).
TargetFit VerdictsByRounding(DType target, double max_abs, double min_nonzero_abs);
// FitOf's headroom_log2: log2(max_finite / max_abs); NaN when max_abs is 0.
double HeadroomLog2(DType target, double max_abs);
std::vector<HeadroomSummary> SummarizeHeadroom(const std::vector<HeadroomRow>& rows,
                                               const std::vector<DType>& targets);

}  // namespace numprobe::detail

#endif  // NUMPROBE_SCAN_SCAN_INTERNAL_H_
