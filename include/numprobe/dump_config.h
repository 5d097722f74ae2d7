// DumpConfig: what to capture, read from msprobe's config.json (every key of every documented
// version, 8.x and v26: task, dump_path, rank, step, level, async_dump, extra_info, precision,
// risk_level, ... and the per-task section with scope, list, data_mode, summary_mode, ...), from
// MindSpore's dump_config.json (common_dump_settings / e2e_dump_settings), or from the closed-loop
// dialect (dump / overflow_check / compare / config_check sections; docs/config-dialect.md). Every
// key and value is validated when the config is parsed, so a typo fails before training starts: an
// unknown key or a bad value gives kInvalidArgument with a message naming the key (and the closest
// known key). A documented key numprobe does not honour is accepted with a warning in `warnings`
// saying what numprobe does instead (the front ends print them). The config is a plain value type.
#ifndef NUMPROBE_DUMP_CONFIG_H_
#define NUMPROBE_DUMP_CONFIG_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/result.h"

namespace numprobe {

enum class DumpTask : uint8_t { kStatistics, kTensor, kOverflowCheck };
// kDebug: only PrecisionDebugger.save() records (into debug.json).
enum class DumpLevel : uint8_t { kL0, kL1, kMix, kL2, kDebug };
enum class SummaryMode : uint8_t { kStatistics, kMd5 };
// Statistics precision: kLow reports them at the tensor's own precision (as torch computes
// them), kHigh in fp32 or better.
enum class StatsPrecision : uint8_t { kLow, kHigh };
// Which wrapped APIs are dumped at L1/mix when no scope/list is given (msprobe's risk_level).
enum class RiskLevel : uint8_t { kAll, kCore, kFocus };
enum class TensorFileFormat : uint8_t { kPt, kNpy };
// When tensor files reach the disk (numprobe's key tensor_durability): kStep flushes a step's
// files together at the step's end (one filesystem sync), kFile flushes each file as it is
// written (an fsync per file: slower, for those who want each file durable before the next).
enum class TensorDurability : uint8_t { kStep, kFile };
// How tensor data is laid out (numprobe's key dump_layout): kFiles is msprobe's, one file per
// tensor in dump_tensor_data/; kPacked puts a step's tensors into one container there
// (docs/capture.md), which numprobe's readers read transparently and msprobe's cannot.
enum class DumpLayout : uint8_t { kFiles, kPacked };

// The closed loop: what the config dialect with dump / overflow_check / compare / config_check
// sections (docs/config-dialect.md) asks for around the capture. The Dumper does the overflow
// check; the front ends compare, write report.html and check the configuration at stop().
struct ClosedLoopConfig {
  bool overflow_check = false;       // report the first NaN/Inf output, at the step it happens
  std::vector<int64_t> check_steps;  // steps checked (sorted, unique); empty = every step
  bool compare = false;              // compare dump_path against compare_base at stop()
  std::string compare_base;          // the baseline's dump tree
  std::vector<std::string> metrics;  // compare_metric_names.h names, in the order given
  bool config_check = false;         // snapshot this run's configuration and compare it at stop()
  std::string config_base;           // the baseline's config-check snapshot
};

struct DumpConfig {
  DumpTask task = DumpTask::kStatistics;
  std::string dump_path;
  std::vector<int64_t> ranks;  // sorted, unique; empty = every rank
  std::vector<int64_t> steps;  // sorted, unique; empty = every step
  DumpLevel level = DumpLevel::kL1;
  bool async_dump = false;
  bool extra_info = true;  // false: no stack.json / construct.json
  StatsPrecision precision = StatsPrecision::kLow;
  RiskLevel risk_level = RiskLevel::kFocus;
  bool is_deterministic = false;
  int64_t seed = 1234;
  TensorDurability tensor_durability = TensorDurability::kStep;
  DumpLayout dump_layout = DumpLayout::kFiles;

  // The task section.
  std::vector<std::string> scope;        // empty, or exactly two names bounding a range
  std::vector<std::string> list;         // names or substrings of names
  std::vector<std::string> tensor_list;  // statistics task: names that also get tensor files
  bool dump_forward = true;              // from data_mode
  bool dump_backward = true;
  bool dump_input = true;
  bool dump_output = true;
  SummaryMode summary_mode = SummaryMode::kStatistics;
  int64_t overflow_nums = 1;  // overflow_check: stop after this many; -1 = unlimited
  TensorFileFormat file_format = TensorFileFormat::kPt;
  // Incremental dump (docs/capture.md): with bench_path naming a golden dump (its dump tree, a
  // step or rank folder, or a dump.json), each record is judged live against the golden's entry of
  // the same name as compare judges it (statistics, or md5 checksums when both have them), tensor
  // files are written only for the leaves over their tolerance, of the first diff_nums entries
  // that have such leaves (-1 = every one), and stop_at_first ends the run at the first of them.
  std::string bench_path;
  int64_t diff_nums = 1;
  bool stop_at_first = false;

  // The closed loop, set by its dialect only (closed_loop_dialect); kept by Override.
  bool closed_loop_dialect = false;
  ClosedLoopConfig loop;

  // The task the config asked for (msprobe's name: "acc_check", "nan_check", ...); `task` is what
  // numprobe captures for it.
  std::string requested_task = "statistics";
  // One line per documented key that numprobe accepts but does not honour (or honours
  // differently), saying what numprobe does instead.
  std::vector<std::string> warnings;

  // The JSON the config was parsed from (Override edits it and parses it again, so that a new
  // task picks up its own section).
  std::string source_json = "{}";

  // Parses config.json text. kInvalidArgument naming the key for an unknown key, a value of the
  // wrong type or out of range, a missing dump_path, or an inconsistent combination.
  static Result<DumpConfig> Parse(std::string_view json_text);
  // Reads and parses the file at `path` (kNotFound / kIoError if it cannot be read; the message
  // then starts with the path).
  static Result<DumpConfig> Load(const std::filesystem::path& path);

  // Sets one top-level key (task, dump_path, level, step, rank, ...) from its JSON text, with the
  // same validation as Parse; used for PrecisionDebugger's keyword overrides. Re-validates the
  // whole config afterwards.
  Status Override(std::string_view key, std::string_view json_value);

  // The name written in dump.json's "task" / "level" fields.
  std::string_view task_name() const;
  std::string_view level_name() const;
  bool StepSelected(int64_t step) const;
  bool RankSelected(int64_t rank) const;
  // Checks the combinations that cannot work (an incremental overflow_check or async dump).
  Status Validate() const;
};

}  // namespace numprobe

#endif  // NUMPROBE_DUMP_CONFIG_H_
