// Internals shared by the MindSpore graph dump reader, compare and scan.
#ifndef NUMPROBE_MINDSPORE_GRAPH_INTERNAL_H_
#define NUMPROBE_MINDSPORE_GRAPH_INTERNAL_H_

#include <optional>
#include <string>

#include "numprobe/app/mindspore_dump.h"
#include "numprobe/stats.h"
#include "numprobe/tensor_file.h"

namespace numprobe::mindspore_detail {

// The fields of a dump file name (msprobe's get_name_dict), without `file`; nullopt when the name
// is not one.
std::optional<GraphTensor> ParseNpyName(const std::string& name);

// An .npy of the dump, read, with its statistics.
struct LoadedNpy {
  TensorFile file;  // one tensor
  TensorStats stats;
};
Result<LoadedNpy> LoadNpy(const std::filesystem::path& path, ThreadPool* pool);

}  // namespace numprobe::mindspore_detail

#endif  // NUMPROBE_MINDSPORE_GRAPH_INTERNAL_H_
