// msprobe dumps: the model of one dump.json (or debug.json) and its stack.json and construct.json.
// dump.json is read streaming (one entry in memory at a time while parsing) into a compact model:
// entries in file order, each flattened into the rows msprobe's compare works on
// ("{entry}.input.0", "{entry}.output.0", "{entry}.parameters.weight", ...), with each leaf's
// dtype, shape, Max/Min/Mean/Norm, requires_grad, data_name and md5 as msprobe reads them.
// A DumpFile owns all its memory; rows refer to interned strings by index and to their names in
// the file's own text memory (string_views valid for the file's lifetime, moves included), so
// that a row of a large statistics dump is a small fixed record with no allocation of its own.
#ifndef NUMPROBE_DUMP_H_
#define NUMPROBE_DUMP_H_

#include <array>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "numprobe/enum_names.h"
#include "numprobe/json_value.h"
#include "numprobe/result.h"

namespace numprobe {

namespace detail {
class TextArena;  // core/text_arena.h: where a DumpFile's row names live
}  // namespace detail

// A scalar as Python's json module and msprobe's compare hold it. Text (strings, integers beyond
// 64 bits, the repr of lists and dicts) lives in the owning DumpFile's string table.
class PyValue {
 public:
  enum class Kind : uint8_t { kNone, kBool, kInt, kBigInt, kFloat, kStr };

  PyValue() = default;
  static PyValue None() { return {}; }
  static PyValue Bool(bool b) { return {Kind::kBool, b ? 1U : 0U}; }
  static PyValue Int(int64_t i) { return {Kind::kInt, static_cast<uint64_t>(i)}; }
  static PyValue BigInt(uint32_t text_id) { return {Kind::kBigInt, text_id}; }
  static PyValue Float(double f) { return {Kind::kFloat, std::bit_cast<uint64_t>(f)}; }
  static PyValue Str(uint32_t text_id) { return {Kind::kStr, text_id}; }

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool as_bool() const { return bits() != 0; }
  int64_t as_int() const { return static_cast<int64_t>(bits()); }
  double as_float() const {  // kFloat's value, or an int or a bool as a float
    if (kind_ == Kind::kInt) return static_cast<double>(as_int());
    if (kind_ == Kind::kBool) return bits() != 0 ? 1.0 : 0.0;
    return std::bit_cast<double>(bits());
  }
  uint32_t text_id() const { return low_; }  // kBigInt and kStr

 private:
  // The 64 bits held as two halves: 12 bytes rather than 16 in each of a row's five values.
  PyValue(Kind kind, uint64_t bits)
      : kind_(kind), low_(static_cast<uint32_t>(bits)), high_(static_cast<uint32_t>(bits >> 32)) {}
  uint64_t bits() const { return (static_cast<uint64_t>(high_) << 32) | low_; }
  Kind kind_ = Kind::kNone;
  uint32_t low_ = 0;
  uint32_t high_ = 0;
};

// Which part of an API call a row belongs to (msprobe's "state"). Keyword arguments are inputs.
enum class RowState : uint8_t { kInput, kOutput, kParameters, kParametersGrad, kDebug };
inline constexpr EnumNameEntry<RowState> kRowStateNames[] = {
    {RowState::kInput, "input"},
    {RowState::kOutput, "output"},
    {RowState::kParameters, "parameters"},
    {RowState::kParametersGrad, "parameters_grad"},
    {RowState::kDebug, "debug"}};
constexpr const auto& EnumNameTable(RowState /*unused*/) { return kRowStateNames; }

inline constexpr int kStatMax = 0;
inline constexpr int kStatMin = 1;
inline constexpr int kStatMean = 2;
inline constexpr int kStatNorm = 3;

// One leaf of an entry: a tensor, a non-tensor value (an int, a slice, a dtype, ...) or null.
// Its texts live in the owning DumpFile (DumpFile::Store), or are literals.
struct DumpRow {
  std::string_view name;       // msprobe's row name: data_name without extension when present
  std::string_view data_name;  // tensor file name; empty when there is none (msprobe's "-1")
  std::optional<std::string_view>
      md5;                // "md5" as dumped, or CRC-32 of str(value) as msprobe makes it
  uint32_t entry = 0;     // index into DumpFile::entries
  uint32_t dtype = 0;     // text id: "torch.float32", "<class 'int'>", "None"
  uint32_t shape = 0;     // text id: "[4, 1, 8, 8]", "[]", "None"
  PyValue requires_grad;  // None, or the text "True"/"False"
  std::array<PyValue, 4>
      stats;  // Max, Min, Mean, Norm (kStat*); a value's own value if not a tensor
  RowState state = RowState::kInput;
  bool is_tensor = false;  // the leaf named a dtype of its own
};

struct DumpEntry {
  // "Functional.conv2d.0.forward", "Module.fc1.Linear.forward.0", in the owning DumpFile
  std::string_view name;
  uint32_t first_row = 0;  // rows [first_row, first_row + row_count) of DumpFile::rows
  uint32_t row_count = 0;
  uint64_t offset = 0;  // byte offset of the entry's value in the file (for messages)
};

class DumpFile {
 public:
  DumpFile();
  ~DumpFile();
  // Rows and entries view the file's own text memory: a DumpFile moves, and is never copied.
  DumpFile(DumpFile&&) noexcept;
  DumpFile& operator=(DumpFile&&) noexcept;
  DumpFile(const DumpFile&) = delete;
  DumpFile& operator=(const DumpFile&) = delete;

  std::string task;  // "statistics", "tensor", ... ("" when absent)
  std::string level;
  std::string framework;  // "pytorch", "mindspore", ...
  std::optional<std::string> dump_data_dir;
  bool has_md5 = false;  // a tensor leaf carries "md5": msprobe compares in md5 mode
  // Rebuilt from dump.json.journal (dump_journal.h): the run stopped before dump.json was
  // (re)written, e.g. it was killed. journal_truncated_tail: its last record was cut short.
  bool from_journal = false;
  bool journal_truncated_tail = false;
  std::vector<DumpEntry> entries;  // in file order (the order the run executed them)
  // Rows of each entry in msprobe's order: inputs, parameters, outputs, parameter gradients.
  std::vector<DumpRow> rows;

  const std::string& Text(uint32_t id) const { return texts_[id]; }
  // Interns `text` and returns its id (equal texts share one id).
  uint32_t Intern(std::string_view text);
  size_t text_count() const { return texts_.size(); }
  // Copies `text` into memory the file owns (in large blocks, never moved) and returns the copy:
  // the names of rows and entries, valid as long as the file, wherever it is moved.
  std::string_view Store(std::string_view text);
  // Store's memory, shared: the views Store returned (rows' and entries' names) stay valid for
  // as long as this pointer is held, past the file's end. Null when nothing was stored.
  std::shared_ptr<const detail::TextArena> stored_texts() const { return store_; }

 private:
  // Store's memory (core/text_arena.h), made on first use: a moved-from file owns none.
  std::shared_ptr<detail::TextArena> store_;

  // Looked up by string_view without building a string (C++20 heterogeneous lookup).
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::vector<std::string> texts_;
  std::unordered_map<std::string, uint32_t, TextHash, std::equal_to<>> text_ids_;
};

// Parses dump.json bytes. Malformed or truncated JSON: kCorrupt naming the byte offset; nesting
// deeper than 400 levels: kOutOfRange; a root without a "data" object: kCorrupt.
Result<DumpFile> ParseDumpJson(std::span<const char> bytes);
// The one-entry dump a capture's record makes: entry `name` of a dump.json whose task is `task`,
// flattened into rows as ParseDumpJson would flatten it, without the text in between (the live
// judgement of an incremental dump reads every record through it).
Result<DumpFile> DumpFileOfEntry(std::string_view task, std::string_view name,
                                 const JsonValue& entry);
// Maps and parses the file at `path`; errors are prefixed with the path.
// A path named dump.json whose folder holds a capture journal newer than it (or a dump.json that
// does not exist beside a journal) is read from the journal instead, as are stack.json and
// construct.json below: a run killed mid-step is read back whole.
Result<DumpFile> ReadDumpJson(const std::filesystem::path& path);

// One entry of dump.json as StreamDumpJson delivers it: `file` is the dump read so far (header,
// entries up to this one, texts; no rows), `entry` its last entry, and `rows` the entry's rows as
// ReadDumpJson would hold them (DumpRow::entry set). `rows` is valid during the call only; the
// texts that the rows and the entry view live in the file, valid as long as the file that
// StreamDumpJson returns.
using DumpEntryVisitor = std::function<Status(const DumpFile& file, const DumpEntry& entry,
                                              std::span<const DumpRow> rows)>;

// ReadDumpJson without holding the rows: `visit` sees each entry in file order as it is read (on
// another thread than the caller's for a large file), and the file returned holds everything but
// the rows. A reader that reduces each entry to a few facts (scan) then needs memory for those
// facts, not for the dump. A dump.json that repeats an entry cannot be delivered in one pass
// (Python's dict keeps the first position and the last value): `restart` is then called, and
// every entry is delivered again from the start, from the file read whole. Errors: ReadDumpJson's,
// and the first error `visit` returns (which stops the read).
Result<DumpFile> StreamDumpJson(const std::filesystem::path& path, const DumpEntryVisitor& visit,
                                const std::function<void()>& restart);

// True when `path` holds an empty JSON object `{}` (whitespace aside): msprobe writes that for a
// rank that recorded nothing, and its compare skips such a rank with a warning.
bool IsEmptyDumpJson(const std::filesystem::path& path);

// stack.json in either form: v26's de-duplicated {"0": [[apis...], [lines...]], ...} or the
// legacy {api: [lines...]}.
class StackMap {
 public:
  // The stack lines recorded for entry `api`, or nullptr.
  const std::vector<std::string>* Find(std::string_view api) const;
  void Add(const std::string& api, std::vector<std::string> lines);
  void AddShared(const std::vector<std::string>& apis, std::vector<std::string> lines);
  size_t size() const { return by_api_.size(); }

 private:
  std::vector<std::vector<std::string>> stacks_;
  std::unordered_map<std::string, uint32_t> by_api_;
};

Result<StackMap> ParseStackJson(std::span<const char> bytes);
Result<StackMap> ReadStackJson(const std::filesystem::path& path);

// construct.json: each node's parent module ({node: parent | "" | null}).
class ConstructMap {
 public:
  // The enclosing modules of `node`, outermost first (empty when unknown). Cycles are cut.
  std::vector<std::string> ModulePath(std::string_view node) const;
  // The parent recorded for `node` ("" for a top-level node), or nullptr when the node is absent.
  const std::string* Parent(std::string_view node) const;
  void SetParent(const std::string& node, std::string parent) { parent_[node] = std::move(parent); }
  size_t size() const { return parent_.size(); }

 private:
  std::unordered_map<std::string, std::string> parent_;
};

Result<ConstructMap> ParseConstructJson(std::span<const char> bytes);
Result<ConstructMap> ReadConstructJson(const std::filesystem::path& path);

// The capture journal: dump.json.journal beside dump.json, appended record by record while a run
// is captured, so that a run killed mid-step loses nothing it recorded. The readers above fall
// back to it by themselves; these give the files it rebuilds as text.
inline constexpr std::string_view kDumpJournalName = "dump.json.journal";

struct DumpJsonText {
  std::string text;           // dump.json's content, as msprobe writes it (indent 1)
  bool from_journal = false;  // rebuilt from the journal
  bool truncated_tail = false;
};

// dump.json of the rank folder `rank_dir`: the file itself, or the journal's reconstruction when
// dump.json is missing or the journal holds records written after it. kNotFound if neither exists.
Result<DumpJsonText> LoadDumpJson(const std::filesystem::path& rank_dir);

// Everything a journal holds, as the JSON documents it rebuilds (json.dumps' formatting).
struct JournalText {
  std::string dump;       // dump.json: {"task", "level", "framework", "dump_data_dir", "data"}
  std::string stack;      // stack.json
  std::string construct;  // construct.json
  std::string debug;      // debug.json's "data" (PrecisionDebugger.save); "null" when none
  int64_t records = 0;    // data lines applied
  bool dump_json_current = false;  // dump.json already holds everything
  bool truncated_tail = false;     // the last line was cut short (skipped)
};
// Reads the journal file at `path`. kNotFound if absent; kCorrupt naming a malformed line.
Result<JournalText> ReadDumpJournalText(const std::filesystem::path& path);

}  // namespace numprobe

#endif  // NUMPROBE_DUMP_H_
