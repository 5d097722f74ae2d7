// How target rows find their golden rows beyond the exact name, as msprobe's compare options do:
//   -fm  fuzzy: msprobe's greedy queue over names with the call counts left out
//   -dm  data mapping YAML {target row name: golden row name} (no dtype check)
//   -cm  cell mapping: "Cell" -> "Module", then an optional YAML {cell path.Class: module
//   path.Class} -am  API mapping (MindSpore target, PyTorch golden): a built-in table of MindSpore
//   API names
//        and their PyTorch counterparts ("Functional.abs" -> "Torch.abs", "Mint" -> "Torch",
//        "MintFunctional" -> "Functional"), then an optional YAML of argument-index mappings
// Only one of -dm/-cm/-am applies (msprobe's precedence: -am, then -cm, then -dm). Rows still
// unpaired after that are aligned by numprobe's sequence alignment over (API name without call
// count, row suffix, shape, dtype) in execution order, unless `align` is off.
#ifndef NUMPROBE_COMPARE_MAPPING_H_
#define NUMPROBE_COMPARE_MAPPING_H_

#include <filesystem>
#include <string>
#include <string_view>
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

struct CompareMapping {
  bool fuzzy = false;
  bool data_mapping = false;
  std::vector<std::pair<std::string, std::string>> data_map;  // -dm, in file order
  bool cell_mapping = false;
  std::vector<std::pair<std::string, std::string>> cell_map;  // -cm YAML (may be empty)
  bool api_mapping = false;
  std::vector<ApiArgMapping> api_args;  // -am YAML (may be empty)
  bool align = true;                    // numprobe's sequence alignment of rows left unpaired
};

// A YAML mapping of strings to strings, in file order. kInvalidArgument when the file is not
// such a mapping (with the line), kNotFound when it cannot be read, kUnsupported when numprobe was
// built without yaml-cpp.
Result<std::vector<std::pair<std::string, std::string>>> LoadStringMap(
    const std::filesystem::path& path);

// An -am YAML: a list of {ms_api, pt_api, ms_args, pt_args, ms_outputs, pt_outputs, ...}.
Result<std::vector<ApiArgMapping>> LoadApiArgMappings(const std::filesystem::path& path);

// The built-in MindSpore -> PyTorch API name table ("Functional.abs" -> "Torch.abs").
const std::vector<std::pair<std::string_view, std::string_view>>& BuiltinMsToPtApis();

}  // namespace numprobe

#endif  // NUMPROBE_COMPARE_MAPPING_H_
