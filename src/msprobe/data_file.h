// Where a dump's data file is: the one rule every reader of dump_tensor_data/ follows. A data_name
// from dump.json names a file inside the dump's dump_tensor_data/ folder, and that file, links
// followed, lies inside the dump folder (the folder of dump.json): a hostile dump.json or a
// symbolic link cannot make numprobe read any other file.
#ifndef NUMPROBE_MSPROBE_DATA_FILE_H_
#define NUMPROBE_MSPROBE_DATA_FILE_H_

#include <filesystem>
#include <string_view>

#include "numprobe/result.h"

namespace numprobe::detail {

// OK when `name` is a plain file name (no separator, not "." or "..", no NUL, at most 255 bytes);
// kRejected "... is not a plain file name inside the dump" otherwise.
Status CheckDataFileName(std::string_view name);

// The path of data file `name` in `tensor_dir` (a dump's dump_tensor_data/). kRejected when the
// name is not plain or the file resolves outside the dump folder (tensor_dir's parent), kNotFound
// when it does not exist (a dangling link included).
Result<std::filesystem::path> ResolveDataFile(const std::filesystem::path& tensor_dir,
                                              std::string_view name);

}  // namespace numprobe::detail

#endif  // NUMPROBE_MSPROBE_DATA_FILE_H_
