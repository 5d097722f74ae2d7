// How target rows find their golden rows beyond the exact name, as msprobe's compare options do:
//   -fm  fuzzy: msprobe's greedy queue over names with the call counts left out
//   -dm  data mapping YAML {target row name: golden row name} (no dtype check)
//   -cm  cell mapping: "Cell" -> "Module", then an optional YAML {cell path.Class: module
//        path.Class}
//   -am  API mapping (MindSpore target, PyTorch golden): a built-in table of MindSpore API names
//        and their PyTorch counterparts ("Functional.abs" -> "Torch.abs", "Mint" -> "Torch",
//        "MintFunctional" -> "Functional"), then an optional YAML of argument-index mappings
//   -lm  layer mapping YAML {LayerClass: {target sub-layer: golden sub-layer}}: msprobe's
//        layer mapping (scopes from construct.json and stack.json) turned into a data mapping,
//        which replaces -dm
// Only one of -dm/-cm/-am applies (msprobe's precedence: -am, then -cm, then -dm); with -lm
// (a data mapping) there is no dtype check, and several target rows may pair with one golden
// row. Rows still unpaired after that are aligned by numprobe's sequence alignment over (API name
// without call count, row suffix, shape, dtype) in execution order, unless `align` is off.
#ifndef NUMPROBE_COMPARE_MAPPING_H_
#define NUMPROBE_COMPARE_MAPPING_H_

#include <filesystem>

namespace numprobe {

// The pairing options, as msprobe's compare takes them; the compare reads the files. A YAML that
// cannot be read or is not the mapping its option wants fails the compare: kNotFound,
// kInvalidArgument (with the line), or kUnsupported when numprobe was built without yaml-cpp.
struct CompareMapping {
  bool fuzzy = false;                        // -fm
  std::filesystem::path data_mapping_file;   // -dm YAML; empty: no -dm
  bool cell_mapping = false;                 // -cm
  std::filesystem::path cell_mapping_file;   // -cm's YAML of cell renames (optional)
  bool api_mapping = false;                  // -am
  std::filesystem::path api_mapping_file;    // -am's YAML of argument mappings (optional)
  std::filesystem::path layer_mapping_file;  // -lm YAML (an empty file is an empty mapping); empty:
                                             // no -lm. Needs construct.json on both sides.
  bool align = true;                         // numprobe's sequence alignment of rows left unpaired
};

}  // namespace numprobe

#endif  // NUMPROBE_COMPARE_MAPPING_H_
