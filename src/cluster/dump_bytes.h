// What a process reads for one unit of work: the sizes that byte_shares.h balances, and the
// records a process sends to process 0, framed by their unit index.
#ifndef NUMPROBE_CLUSTER_DUMP_BYTES_H_
#define NUMPROBE_CLUSTER_DUMP_BYTES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "numprobe/dump_layout.h"
#include "numprobe/result.h"

namespace numprobe::detail {

// The bytes of one rank's dump: dump.json, stack.json and construct.json, and with
// `tensor_files` the files under dump_tensor_data/. A file that cannot be sized counts nothing
// (reading it reports the error).
uint64_t DumpBytes(const DumpLocation& location, bool tensor_files);

// Records of some of `items` work items as one text: for each, its item index and its length
// (8 bytes each, little-endian), then its bytes.
std::string FrameRecords(const std::vector<std::pair<size_t, std::string>>& records);
// Unframes the texts of every process into `by_item` (sized to the number of items): each item
// must come exactly once over all texts. kInternal (naming the process) otherwise.
Status UnframeRecords(const std::vector<std::string>& texts, std::vector<std::string>* by_item);

}  // namespace numprobe::detail

#endif  // NUMPROBE_CLUSTER_DUMP_BYTES_H_
