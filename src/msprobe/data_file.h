// Where a dump's data file is: the one rule every reader of dump_tensor_data/ follows. A data_name
// from dump.json names a file inside the dump's dump_tensor_data/ folder, and that file, links
// followed, lies inside the dump folder (the folder of dump.json): a hostile dump.json or a
// symbolic link cannot make numprobe read any other file. In the packed layout
// (packed_tensors.h) the data_name names an entry of the folder's container instead of a file of
// its own; ReadDataFile is the one place a reader turns a data_name into a tensor, in either
// layout.
#ifndef NUMPROBE_MSPROBE_DATA_FILE_H_
#define NUMPROBE_MSPROBE_DATA_FILE_H_

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string_view>

#include "numprobe/result.h"
#include "numprobe/tensor_file.h"

namespace numprobe::detail {

// OK when `name` is a plain file name (no separator, not "." or "..", no NUL, at most 255 bytes);
// kRejected "... is not a plain file name inside the dump" otherwise.
Status CheckDataFileName(std::string_view name);

// The path of data file `name` in `tensor_dir` (a dump's dump_tensor_data/). kRejected when the
// name is not plain or the file resolves outside the dump folder (tensor_dir's parent), kNotFound
// when it does not exist (a dangling link included).
Result<std::filesystem::path> ResolveDataFile(const std::filesystem::path& tensor_dir,
                                              std::string_view name);

struct PackedIndex;

// Where data file `name` of `tensor_dir` is: its own file (the files layout, found first) or an
// entry of the folder's packed container. `path` is the file, or tensor_dir/name for an entry
// (the path the files layout would have: readers name it so in messages and results).
struct DataFileRef {
  std::filesystem::path path;
  std::shared_ptr<const PackedIndex> packed;  // null: a file of its own
  size_t entry = 0;                           // in packed->entries
  uint64_t bytes = 0;                         // the file's size, or the entry's bytes
};

// kRejected as ResolveDataFile (and for a container that breaks the rule), kNotFound when neither
// a file nor a container entry has the name, the container's error when it cannot be read.
Result<DataFileRef> LocateDataFile(const std::filesystem::path& tensor_dir, std::string_view name);

// The tensors of a located data file: ReadTensorFile of the file, or the container entry as one
// unnamed tensor (format kPacked; kCorrupt when its bytes were cut short).
Result<TensorFile> ReadDataFile(const DataFileRef& ref, const ReadOptions& options = {});

// Both in one call.
Result<TensorFile> ReadDataFile(const std::filesystem::path& tensor_dir, std::string_view name,
                                const ReadOptions& options = {});

}  // namespace numprobe::detail

#endif  // NUMPROBE_MSPROBE_DATA_FILE_H_
