// How target rows find their golden rows beyond the exact name, as msprobe's compare options do:
//   -fm  fuzzy: msprobe's greedy queue over names with the call counts left out
//   -dm  data mapping YAML {target row name: golden row name} (no dtype check)
//   -cm  cell mapping: "Cell" -> "Module", then an optional YAML {cell path.Class: module
//        path.Class}
//   -am  API mapping (MindSpore target, PyTorch golden): a built-in table of MindSpore API names
//        and their PyTorch counterparts ("Functional.abs" -> "Torch.abs", "Mint" -> "Torch",
//        "MintFunctional" -> "Functional"), then an optional YAML of argument-index mappings
//   -lm  layer mapping YAML {LayerClass: {target sub-layer: golden sub-layer}}: msprobe's
//        layer mapping (LayerDataMapping below) turned into a data mapping, which replaces -dm
// Only one of -dm/-cm/-am applies (msprobe's precedence: -am, then -cm, then -dm); with -lm
// (a data mapping) there is no dtype check, and several target rows may pair with one golden
// row. Rows still unpaired after that are aligned by numprobe's sequence alignment over (API name
// without call count, row suffix, shape, dtype) in execution order, unless `align` is off.
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
class StackMap;

// -lm as msprobe generates it (core/compare/layer_mapping; docs/compat.md): every target row name
// -> the golden row name it pairs with, or "N/A". Entries get scopes from construct.json (the
// enclosing module) and stack.json (the framework function that called an API); target scopes are
// rewritten by `layers` class by class and looked up in the golden's scope trie by (scope,
// direction, position among that scope's entries); rows of paired entries pair by their suffix.
// Empty (no mapping, as in msprobe) when either side lacks a stack.json or construct.json.
std::vector<std::pair<std::string, std::string>> LayerDataMapping(
    const DumpFile& target, const StackMap* target_stack, const ConstructMap& target_construct,
    const DumpFile& golden, const StackMap* golden_stack, const ConstructMap& golden_construct,
    const LayerMapping& layers);

// The built-in MindSpore -> PyTorch API name table ("Functional.abs" -> "Torch.abs").
const std::vector<std::pair<std::string_view, std::string_view>>& BuiltinMsToPtApis();

}  // namespace numprobe

#endif  // NUMPROBE_COMPARE_MAPPING_H_
