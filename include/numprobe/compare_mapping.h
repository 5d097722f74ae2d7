// How target rows find their golden rows beyond the exact name, as msprobe's compare options do:
//   -fm  fuzzy: msprobe's greedy queue over names with the call counts left out
//   -dm  data mapping YAML {target row name: golden row name} (no dtype check)
//   -cm  cell mapping: "Cell" -> "Module", then an optional YAML {cell path.Class: module
//        path.Class}
//   -am  API mapping (MindSpore target, PyTorch golden): a built-in table of MindSpore API names
//        and their PyTorch counterparts ("Functional.abs" -> "Torch.abs", "Mint" -> "Torch",
//        "MintFunctional" -> "Functional"), then an optional YAML of argument-index mappings
//   -lm  layer mapping YAML {LayerClass: {target sub-layer: golden sub-layer}}: each target
//        module's path is rewritten along its enclosing modules (construct.json), class by class,
//        and dump entries pair by that scope path, direction and call (APIs by their enclosing
//        module's scope and their order in it); their rows then pair by the row suffix (no dtype
//        check, as -dm: msprobe turns -lm into a data mapping)
// Only one of -dm/-cm/-am applies (msprobe's precedence: -am, then -cm, then -dm). -lm pairs
// first; the rows it leaves (and rows -dm names) go through the other modes. Rows still
// unpaired after that are aligned by numprobe's sequence alignment over (API name without call
// count, row suffix, shape, dtype) in execution order, unless `align` is off.
#ifndef NUMPROBE_COMPARE_MAPPING_H_
#define NUMPROBE_COMPARE_MAPPING_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "numprobe/result.h"

namespace numprobe {

// One entry of an -am user YAML: a MindSpore API, its PyTorch counterpart, and which argument,
// output and parameter positions correspond.
struct ApiArgMapping {
  std::string ms_api;
  std::string pt_api;
  std::vector<std::string> ms_args, pt_args;
  std::vector<std::string> ms_outputs, pt_outputs;
  std::vector<std::string> ms_parameters, pt_parameters;
  std::vector<std::string> ms_parameters_grad, pt_parameters_grad;
};

// An -lm YAML: per layer class (the target's class name, or "TopLayer" for the outermost
// modules), its sub-layer names on the target side and what they are called on the golden side.
// Names may span several levels ("language_model.embedding: embedding").
struct LayerRename {
  std::vector<std::string> from;  // dot-separated segments of the target sub-layer name
  std::vector<std::string> to;    // segments of the golden name (empty: the level is dropped)
};
struct LayerMapping {
  // Class -> renames, longest `from` first (the longest name that fits wins).
  std::unordered_map<std::string, std::vector<LayerRename>> classes;
};

struct CompareMapping {
  bool fuzzy = false;
  bool data_mapping = false;
  std::vector<std::pair<std::string, std::string>> data_map;  // -dm, in file order
  bool cell_mapping = false;
  std::vector<std::pair<std::string, std::string>> cell_map;  // -cm YAML (may be empty)
  bool api_mapping = false;
  std::vector<ApiArgMapping> api_args;  // -am YAML (may be empty)
  bool layer_mapping = false;           // -lm (needs construct.json on both sides)
  LayerMapping layer_map;
  bool align = true;  // numprobe's sequence alignment of rows left unpaired
};

// A YAML mapping of strings to strings, in file order. kInvalidArgument when the file is not
// such a mapping (with the line), kNotFound when it cannot be read, kUnsupported when numprobe was
// built without yaml-cpp.
Result<std::vector<std::pair<std::string, std::string>>> LoadStringMap(
    const std::filesystem::path& path);

// An -am YAML: a list of {ms_api, pt_api, ms_args, pt_args, ms_outputs, pt_outputs, ...}.
Result<std::vector<ApiArgMapping>> LoadApiArgMappings(const std::filesystem::path& path);

// An -lm YAML: a mapping of layer classes to mappings of names to names (an empty file is an
// empty mapping: layers of equal names still pair). Errors as LoadStringMap.
Result<LayerMapping> LoadLayerMapping(const std::filesystem::path& path);

class DumpFile;
class ConstructMap;

// -lm: for each target dump entry, the index of the golden entry it pairs with under `layers`, or
// -1. Modules pair by (their path rewritten by `layers` along their enclosing modules, direction,
// call number); parameter gradients by that path; APIs by (their enclosing module's key, API name
// (MindSpore names as PyTorch's when the frameworks differ), direction, order among those calls
// in the enclosing module). Each golden entry pairs at most once, the first target entry first.
std::vector<int64_t> PairEntriesByLayers(const DumpFile& target,
                                         const ConstructMap& target_construct,
                                         const DumpFile& golden,
                                         const ConstructMap& golden_construct,
                                         const LayerMapping& layers);

// The built-in MindSpore -> PyTorch API name table ("Functional.abs" -> "Torch.abs").
const std::vector<std::pair<std::string_view, std::string_view>>& BuiltinMsToPtApis();

}  // namespace numprobe

#endif  // NUMPROBE_COMPARE_MAPPING_H_
