// The packed layout of a dump's tensors (capture key dump_layout: "packed"): instead of one file
// per tensor, a step's tensors go into one container in dump_tensor_data/, read back by every
// reader through ReadDataFile (data_file.h), so dump.json and its data_names are unchanged.
//
// The container is two append-only files, written by the capture's background writer only:
//   packed.data   the tensors' bytes, C order, one after the other (no header, no padding)
//   packed.index  JSON lines: {"numprobe_packed": 1} first, then one line per tensor,
//                 {"name": DATA_NAME, "dtype": "f32", "shape": [2, 3], "offsets": [BEGIN, END]}
//                 (numprobe's dtype names; BEGIN/END are byte offsets into packed.data)
// A tensor recorded again in the step (same dtype, shape and bytes) is not appended again: its
// line repeats the offsets of the earlier line, so each entry either extends packed.data or
// names exactly the range of an earlier entry.
// Why not safetensors: its JSON header comes first and its size is known only at the end, so
// making a container safetensors at the step's end means writing every byte twice (or reserving
// a guessed header area). An index that grows with the data needs neither, and it is what makes
// the container crash safe: a tensor's bytes are written before its index line, and the journal
// record that names the tensor after both (tensor_file_writer.h), so after a SIGKILL every tensor
// the journal names has its index line and its bytes. What a crash can leave is a tail: bytes
// without an index line (ignored) or a last line cut short (ignored, reported). An index line
// whose bytes lie past the end of packed.data (the data file cut short) makes that tensor an
// error when it is read, never a silently shorter tensor. Durability is the step's, as for files:
// both files are made durable at the step's end (tensor_durability "step") or flushed per tensor
// ("file").
#ifndef NUMPROBE_MSPROBE_PACKED_TENSORS_H_
#define NUMPROBE_MSPROBE_PACKED_TENSORS_H_

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "numprobe/buffer.h"
#include "numprobe/file_sync.h"
#include "numprobe/result.h"
#include "numprobe/tensor.h"

namespace numprobe::detail {

inline constexpr std::string_view kPackedDataName = "packed.data";
inline constexpr std::string_view kPackedIndexName = "packed.index";
// Index lines longer than this are refused (a name is at most 255 bytes, a shape 64 dims).
inline constexpr size_t kMaxPackedIndexLine = 8192;

// One tensor of a container.
struct PackedEntry {
  std::string name;  // the data_name dump.json gives it
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // byte offsets into packed.data
  uint64_t end = 0;
  bool truncated = false;  // its bytes go past the end of packed.data
};

// A container's index, checked, with packed.data mapped.
struct PackedIndex {
  std::filesystem::path tensor_dir;
  std::vector<PackedEntry> entries;                 // in index order
  std::unordered_map<std::string, size_t> by_name;  // the last entry of a name (a rewrite wins)
  std::shared_ptr<const Buffer> data;               // packed.data
  bool torn_tail = false;                           // the last line was cut short (ignored)
};

// Parses an index's text (`data_bytes`: the size of packed.data; `index_path` names it in
// messages). The checks of ReadPackedIndex below; `data` and `tensor_dir` are left empty.
Result<PackedIndex> ParsePackedIndex(std::string_view text, uint64_t data_bytes,
                                     const std::filesystem::path& index_path);

// Reads the container in `tensor_dir`. kNotFound when the folder has no packed.index; kRejected
// when either file resolves outside the dump folder or an entry's name is not a plain file name;
// kCorrupt (naming the file and the line) for a malformed line, an unknown dtype, offsets that do
// not match dtype x shape, or entries that overlap or leave a hole (an entry that repeats an
// earlier entry's exact range is neither).
Result<std::shared_ptr<const PackedIndex>> ReadPackedIndex(const std::filesystem::path& tensor_dir);

// The same through a small cache keyed by the files' identity (path, sizes, modification times),
// so that readers looking up many tensors of one container parse its index once.
Result<std::shared_ptr<const PackedIndex>> CachedPackedIndex(
    const std::filesystem::path& tensor_dir);

// The tensor of `entry` (index.entries[i]): a view of the mapping, or an aligned copy. kCorrupt
// when it is truncated.
Result<Tensor> PackedTensor(const std::shared_ptr<const PackedIndex>& index, size_t i);

// The capture's side: appends tensors to the container of one folder at a time. Not thread-safe
// (the background writer's thread alone uses it).
class PackedTensorWriter {
 public:
  PackedTensorWriter() = default;
  ~PackedTensorWriter() { Close(); }
  PackedTensorWriter(const PackedTensorWriter&) = delete;
  PackedTensorWriter& operator=(const PackedTensorWriter&) = delete;

  // Appends `view` (contiguous) as `name` to the container in `tensor_dir`, opening it when the
  // folder is not the one open (a renamed folder's container is continued, a new one started).
  // With FileSync::kNow the bytes and then the index line are flushed before it returns.
  Status Append(const std::filesystem::path& tensor_dir, std::string_view name,
                const TensorView& view, FileSync sync);
  // Adds `name` to the container in `tensor_dir` as a second name of the bytes appended as
  // `earlier` (same dtype and shape): an index line only. kInternal when this writer has not
  // appended `earlier` to that container.
  Status AppendRepeat(const std::filesystem::path& tensor_dir, std::string_view name,
                      std::string_view earlier, FileSync sync);
  void Close();

 private:
  // Where an appended tensor's bytes lie, and what they hold (AppendRepeat).
  struct Appended {
    DType dtype = DType::kF32;
    std::vector<int64_t> shape;
    uint64_t begin = 0;
    uint64_t end = 0;
  };
  Status Open(const std::filesystem::path& tensor_dir);
  // Appends the index line that gives `range` the name `name`, then remembers it.
  Status AppendIndexLine(std::string_view name, Appended range, FileSync sync);

  std::filesystem::path dir_;
  int data_fd_ = -1;
  int index_fd_ = -1;
  uint64_t end_ = 0;
  uint64_t writeback_from_ = 0;  // container bytes whose writeback is not started yet
  std::unordered_map<std::string, Appended> appended_;  // by name, in the open container
};

// Removes a container left in `tensor_dir` by an earlier run (a new step starts afresh).
void RemovePackedContainer(const std::filesystem::path& tensor_dir);

}  // namespace numprobe::detail

#endif  // NUMPROBE_MSPROBE_PACKED_TENSORS_H_
