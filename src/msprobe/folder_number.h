// The numbers in a dump tree's folder names: rank{N} under torch.distributed, proc{pid}
// otherwise, step{N} above them (DESIGN.md: ranks pair by their number, not by their position in
// a listing). Used by the layout discovery, compare's result files, scan and the UI.
#ifndef NUMPROBE_MSPROBE_FOLDER_NUMBER_H_
#define NUMPROBE_MSPROBE_FOLDER_NUMBER_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace numprobe::detail {

// N of a folder named prefix{N} ("rank12", "proc345", "step3"): N written as msprobe writes it
// (0 or no leading zero, at most 15 digits). nullopt otherwise, the bare prefix included.
std::optional<int64_t> FolderNumber(std::string_view name, std::string_view prefix);

// The step of an output scope ("step3", "graph/step3"): the number of its last folder when that
// is step{N}; nullopt otherwise.
std::optional<int64_t> ScopeStep(std::string_view scope);

}  // namespace numprobe::detail

#endif  // NUMPROBE_MSPROBE_FOLDER_NUMBER_H_
