// msprobe's dotted names, parsed in one place. An entry (one recorded call) is named
//   API:     {Prefix}.{api}.{call}.{direction}      "Functional.relu.0.forward",
//   "Torch.linalg.inv.3.backward" module:  {Module|Cell}.{path}.{Class}.{direction}.{call}
//   "Module.fc1.Linear.forward.0" gradient of parameters: {...}.parameters_grad
//   "Module.fc1.Linear.parameters_grad"
// and its rows append the argument's place: ".input.0", ".output.1", ".input.0.1" (nested),
// ".parameters.weight", ".kwargs.eps". Also splitting on dots the way Python's str.split('.') does.
#ifndef NUMPROBE_MSPROBE_ENTRY_NAME_H_
#define NUMPROBE_MSPROBE_ENTRY_NAME_H_

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace numprobe::detail {

// name.split('.')
std::vector<std::string_view> SplitDots(std::string_view name);

// (parts[-1], parts[-2]) of name.split('.'); the second is empty when there is one part.
std::pair<std::string_view, std::string_view> LastTwoParts(std::string_view name);

// True when `part` is one of the dot-separated parts of `name`.
bool HasPart(std::string_view name, std::string_view part);

// True when `s` is non-empty and all ASCII digits (Python's str.isdigit for ASCII).
bool IsDigits(std::string_view s);

enum class EntryDirection : uint8_t { kNone, kForward, kBackward, kParametersGrad };

// An entry name's parts (views into the name).
struct EntryNameParts {
  // From the last two parts, as msprobe's split_data_name_components reads them:
  // "parameters_grad" first, then "forward", then "backward"; kNone for any other name.
  EntryDirection direction = EntryDirection::kNone;
  // The name without its direction and call index ("Functional.relu", "Module.fc1.Linear"),
  // without "parameters_grad" for a gradient entry; empty for kNone or a name too short to have it.
  std::string_view op;
  // For an API-shaped name (at least 4 parts, the direction last, the call index before it): the
  // prefix ("Functional", "Torch", "Tensor") and the bare API ("relu", "linalg.inv"); else empty.
  std::string_view prefix;
  std::string_view api;
  std::string_view call;  // the call index's digits ("0"), in either shape; empty when absent
  bool forward() const { return direction == EntryDirection::kForward; }
  bool backward() const { return direction == EntryDirection::kBackward; }
  // A forward or backward call (not a parameter gradient, not an unknown name).
  bool is_call() const { return forward() || backward(); }
};
EntryNameParts ParseEntryName(std::string_view entry);

// The entry a row belongs to: "Functional.relu.0.forward" of
// "Functional.relu.0.forward.output.1", "Module.fc1.Linear.forward.0" of
// "Module.fc1.Linear.forward.0.input.0", "X.parameters_grad" of "X.parameters_grad.weight"; the
// row name itself when it has no argument part.
std::string_view EntryOfRow(std::string_view row_name);

}  // namespace numprobe::detail

#endif  // NUMPROBE_MSPROBE_ENTRY_NAME_H_
