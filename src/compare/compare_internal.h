// Pieces of the compare pipeline shared between its source files (not public API).
#ifndef NUMPROBE_COMPARE_COMPARE_INTERNAL_H_
#define NUMPROBE_COMPARE_COMPARE_INTERNAL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/compare.h"
#include "numprobe/dump.h"
#include "numprobe/dump_layout.h"
#include "numprobe/progress.h"

#include "core/huge_pages.h"

namespace numprobe::detail {

struct LoadedMapping;

// Err_message entries. The msprobe ones are its exact texts.
enum MessageId : uint8_t {
  kMsgInfNan,
  kMsgNormRelErr,
  kMsgOneThousandth,
  kMsgRequiresGrad,
  kMsgScalarParams,
  kMsgCrc32Differs,
  kMsgCrc32Unmatched,
  kMsgDtype,
  kMsgShape,
  kMsgNormRelWarn,
  kMsgCosineWarn,
  kMsgUnmatched,          // numprobe: no golden row
  kMsgDtypeIncomparable,  // numprobe: a golden row whose dtype cannot be compared
  kMsgCount,
};

// How msprobe's statistics-diff step classifies a value (CalcStatsDiff.classify).
enum class ValType : uint8_t { kNum, kNan, kInf, kNegInf, kDevice, kNA, kOther };

// A Max/Min/Mean/Norm value (or a scalar argument's value) as msprobe's table holds it. Its text
// (str(value): "1.5", "Nan", "inf", "None", "True", "N/A") is made only when asked for.
struct SummaryValue {
  ValType type = ValType::kNA;
  double number = 0;             // kNum
  bool is_float = false;         // a Python float (pandas' CSV writes inf as " inf")
  const PyValue* raw = nullptr;  // null for "N/A"
  const DumpFile* file = nullptr;

  std::string Text() const;
  // Text() == other.Text(), without building the texts where the values tell.
  bool SameText(const SummaryValue& other) const;
};
SummaryValue SummaryOf(const DumpFile& file, const PyValue& value);
SummaryValue SummaryNA();
// SummaryOf(file, value).Text() without classifying the value (the requires_grad cells).
std::string SummaryText(const DumpFile& file, const PyValue& value);

// The CSV text of a summary value.
std::string SummaryCsvText(const SummaryValue& v);
void AppendSummaryCsv(const SummaryValue& v, std::string* out);

// msprobe's dtype rule: equal, or both in {fp16, fp32, bf16} of the same framework's spelling.
bool DtypesComparable(std::string_view a, std::string_view b);

// The compare key of each row of a dump, or none. Most rows' keys are their own names: those are
// referred to, not copied (the keys of a large dump would otherwise hold a second copy of every
// row name); a key of its own (a renumbered backward call, a mapped name) is held here.
class RowKeys {
 public:
  RowKeys() = default;
  explicit RowKeys(const DumpFile* file)
      : file_(file), ref_(AdvisedVector(file->rows.size(), kNone)) {}

  size_t size() const { return ref_.size(); }
  bool has(size_t r) const { return ref_[r] != kNone; }
  std::string_view operator[](size_t r) const {
    return ref_[r] == kName ? std::string_view{file_->rows[r].name}
                            : std::string_view{owned_[static_cast<size_t>(ref_[r])]};
  }
  // Row r's key is its name.
  void SetName(size_t r) { ref_[r] = kName; }
  // Row r's key is `key` (referred to as the row's name when equal to it). Views of earlier keys
  // may move: take them once every key is set.
  void Set(size_t r, std::string key) {
    if (key == file_->rows[r].name) {
      ref_[r] = kName;
    } else if (ref_[r] != kNone && ref_[r] != kName) {
      owned_[static_cast<size_t>(ref_[r])] = std::move(key);
    } else {
      ref_[r] = owned_.size();
      owned_.push_back(std::move(key));
    }
  }

 private:
  static constexpr uint64_t kNone = UINT64_MAX;
  static constexpr uint64_t kName = UINT64_MAX - 1;
  const DumpFile* file_ = nullptr;
  std::vector<uint64_t> ref_;  // kNone, kName or an index into owned_
  std::vector<std::string> owned_;
};

// Compare keys of each row (msprobe's op_name_update): the row name with the backward call number
// of its entry replaced by the entry's rank among backward calls of the same API. None for rows
// of entries msprobe does not parse (a name without forward/backward/parameters_grad).
RowKeys CompareKeys(const DumpFile& file, bool renumber_backward, bool is_debug_file);

// msprobe's -am name rewrite of a MindSpore row or entry name into PyTorch's ("Functional.abs.0.
// forward" -> "Torch.abs.0.forward", "Mint." -> "Torch.", "MintFunctional." -> "Functional.").
std::string MsToPtApiKey(const std::string& name);

// Pairs the rows of table->target with table->golden per `mapping` (exact keys, -dm/-cm/-am,
// -fm), applies msprobe's dtype rule, then aligns what is left (mapping.align) and appends a
// CompareRow per target row msprobe parses. Both sides' keys are built on `pool` (may be null:
// one after the other), and with more than one thread the table is faulted in ahead on another.
void PairRows(CompareTable* table, const LoadedMapping& mapping, bool debug_files,
              ThreadPool* pool);

// CompareDumps with the mapping files already read (compare_trees.cc reads them once for every
// rank).
Result<CompareTable> CompareWithMapping(const DumpLocation& target, const DumpLocation& golden,
                                        const LoadedMapping& mapping, ThreadPool* pool,
                                        const ProgressCallback& progress, uint64_t max_memory);

// The statistics-mode cells (Max diff .. NormRelativeErr) of one row.
void FillStatisticsCells(const CompareTable& table, CompareRow* row);

// Tensor mode: reads the tensor files of every row and fills msprobe's six cells, the extras and
// the row error. Unreadable files make their rows "unsupported" and add a table warning; so does a
// file whose decompressed storages would exceed `max_memory` bytes (refused before allocating).
// Each finished pair is reported to `progress` (may be empty) as "tensor pairs".
void FillTensorCells(CompareTable* table, const DumpLocation& target, const DumpLocation& golden,
                     ThreadPool* pool, const ProgressCallback& progress, uint64_t max_memory);

// msprobe's pass/warning/error rules over one API's rows, table rows [begin, end) (an entry's
// rows, EntryEnd), then numprobe's "unmatched". They look at no other entry's rows.
void ApplyResultRules(CompareTable* table, size_t begin, size_t end);

// Text of the requires_grad cell ("True", "False", "N/A").
std::string RequiresGradText(const DumpFile& file, const DumpRow& row);

// msprobe's check_op_str_pattern_valid / table_value_is_valid: text that starts (or continues
// after ';') with + - = % @ (or their full-width forms) and is not a number would act as a
// formula in a spreadsheet.
bool LooksLikeFormula(std::string_view text);

}  // namespace numprobe::detail

#endif  // NUMPROBE_COMPARE_COMPARE_INTERNAL_H_
