// MindSpore kernel-level (graph mode) dumps: MindSpore's native dump (MINDSPORE_DUMP_CONFIG) and
// msprobe's MindSpore L2 dump write rank_{id}/{net}/{graph_id}/{iteration}/ folders holding
//   {op_type}.{op_name}.{task_id}.{stream_id}.{timestamp}.{input|output}.{slot}.{format}[.{dtype}].npy
// files and/or a statistic.csv (header variants: the columns are found by name; "Nan Count" and
// "NaN Count" both read; an ACL one with "Input/Output" and "Format" columns too), plus an
// optional mapping.csv (long names replaced by numbers). This reads them as msprobe's MindSpore
// graph compare does (msprobe/mindspore/compare/ms_graph_compare.py): a folder's .npy files win
// over its statistic.csv; a tensor's compare key is op_name.task_id.io.slot, taken from the file
// name with msprobe's pattern; repeats of a key pair in timestamp order.
#ifndef NUMPROBE_APP_MINDSPORE_DUMP_H_
#define NUMPROBE_APP_MINDSPORE_DUMP_H_

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "numprobe/result.h"

namespace numprobe {

class ThreadPool;

// One lowest-level folder of the tree: the rank (from rank_{id}) and the iteration (its name).
struct GraphDumpFolder {
  int64_t rank = -1;
  int64_t step = -1;
  std::filesystem::path dir;
};

// True when `root` (a folder) holds a MindSpore graph dump: a lowest-level folder under a
// rank_{id} folder with a statistic.csv or .npy files named as MindSpore names them.
bool IsMindSporeGraphDump(const std::filesystem::path& root);

// The tree's lowest-level folders with a rank and a step, by (rank, step) then path (a step may
// span several graph folders). kNotFound when there is none; kOutOfRange past 64 levels.
Result<std::vector<GraphDumpFolder>> FindGraphDumpFolders(const std::filesystem::path& root);

enum class GraphDumpMode : uint8_t { kNpy, kStatistic };

// One input or output slot of one kernel execution.
struct GraphTensor {
  std::string op_type;
  std::string op_name;
  std::string task_id;
  std::string stream_id;
  int64_t timestamp = 0;
  std::string io;              // msprobe's input_output_index ("input", "output", "input.0", ...)
  std::string slot;            // msprobe's slot field
  std::string compare_key;     // op_name.task_id.io.slot
  std::filesystem::path file;  // the .npy (npy mode) or the statistic.csv (statistic mode)
  // statistic.csv's columns (statistic mode); NaN when the column is absent or empty.
  std::string dtype;  // "float32"
  std::string shape;  // as written: "(2,3)"
  double max = 0, min = 0, mean = 0, norm = 0;
  bool has_minmax = false;  // Max Value and Min Value were written
  std::optional<int64_t> nan_count, pos_inf_count, neg_inf_count;
};

struct GraphDumpData {
  GraphDumpMode mode = GraphDumpMode::kNpy;
  std::vector<GraphTensor> tensors;  // in the folders' order, each folder's in file order
  std::vector<std::string> warnings;
};

// Reads the folders of one (rank, step). kCorrupt naming the file for a statistic.csv that is
// not one (too few columns, a bad timestamp); kInvalidArgument when folders mix npy and
// statistic modes; kNotFound when none holds either.
Result<GraphDumpData> ReadGraphDump(const std::vector<std::filesystem::path>& dirs);

// msprobe's graph compare table of one (rank, step): its columns (ms_graph_compare's RowData:
// NPU/Bench Name, Dtype, Tensor Shape, max/min/mean/l2norm, "Accuracy Reached or Not",
// Err_message, then the npy metrics or the statistics differences and the CSV file columns) and
// its rows, target order (by timestamp) then golden-only rows.
struct GraphCompareTable {
  int64_t rank = -1;
  int64_t step = -1;
  GraphDumpMode mode = GraphDumpMode::kNpy;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // CSV texts
  std::vector<std::string> warnings;
  int64_t not_reached = 0;   // rows whose "Accuracy Reached or Not" is "No"
  int64_t with_message = 0;  // rows with an Err_message (unpaired, shapes differ, NaN/Inf, ...)
};

// Compares every (rank, step) present on both sides; a (rank, step) on one side only is named in
// `missing`. Errors as ReadGraphDump (prefixed with the side).
Result<std::vector<GraphCompareTable>> CompareGraphDumps(const std::filesystem::path& target,
                                                         const std::filesystem::path& golden,
                                                         std::vector<std::string>* missing,
                                                         ThreadPool* pool = nullptr);

// compare_result_{rank}_{step}_{ts}.csv, or .xlsx: the name of a table's file.
std::string GraphCompareFileName(const GraphCompareTable& table, const std::string& timestamp,
                                 bool xlsx);
// compare_result_{rank}_{step}_{ts}.csv (pandas' quoting). kIoError when it cannot be written.
Status WriteGraphCompareCsv(const GraphCompareTable& table, const std::filesystem::path& path);
// The same table as compare_result_{rank}_{step}_{ts}.xlsx, as msprobe's --xlsx writes it (numbers
// as numbers, no highlighting). kUnsupported in a build without libxlsxwriter.
Status WriteGraphCompareXlsx(const GraphCompareTable& table, const std::filesystem::path& path);

// Finiteness of a graph dump, per (rank, step): the tensors with NaN/Inf (from statistic.csv's
// Max/Min and NaN/Inf counts, or the .npy data), and the first anomaly in execution (timestamp)
// order: the first kernel whose inputs are all finite and an output is not.
struct GraphScanFinding {
  int64_t rank = -1;
  int64_t step = -1;
  std::string op;      // op_type.op_name
  std::string tensor;  // compare key
  int64_t timestamp = 0;
};
struct GraphScanReport {
  GraphDumpMode mode = GraphDumpMode::kNpy;
  int64_t folders = 0;
  int64_t tensors = 0;
  int64_t kernels = 0;                      // distinct (op_name, task_id, timestamp) executions
  std::vector<GraphScanFinding> nonfinite;  // every tensor with NaN/Inf, in order
  std::optional<GraphScanFinding> first_anomaly;  // across ranks: the earliest step, then time
  std::vector<std::string> warnings;
};
Result<GraphScanReport> ScanGraphDump(const std::filesystem::path& root,
                                      ThreadPool* pool = nullptr);

}  // namespace numprobe

#endif  // NUMPROBE_APP_MINDSPORE_DUMP_H_
