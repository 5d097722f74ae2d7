// The pairing options of compare_mapping.h with their files read: the maps PairRows applies, the
// readers of the YAML files, msprobe's layer mapping and the built-in MindSpore -> PyTorch API
// table (not public API).
#ifndef NUMPROBE_COMPARE_LOADED_MAPPING_H_
#define NUMPROBE_COMPARE_LOADED_MAPPING_H_

#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "numprobe/compare_mapping.h"
#include "numprobe/result.h"

namespace numprobe {
class DumpFile;
class ConstructMap;
class StackMap;
}  // namespace numprobe

namespace numprobe::detail {

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

struct LoadedMapping {
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

// Reads the files `mapping` names, in the order -dm, -cm, -am, -lm (the first error is returned).
Result<LoadedMapping> LoadMapping(const CompareMapping& mapping);

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

}  // namespace numprobe::detail

#endif  // NUMPROBE_COMPARE_LOADED_MAPPING_H_
