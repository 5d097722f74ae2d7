// dump.json -> DumpFile: the flattening follows msprobe's compare (core/compare/utils.py read_op,
// op_item_parse and gen_op_item) so that row names, dtypes, shapes and values read as msprobe's.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "numprobe/dump.h"
#include "numprobe/memory_limit.h"
#include "numprobe/thread_pool.h"

#include "core/crc32.h"
#include "core/huge_pages.h"
#include "core/json.h"
#include "core/json_tape.h"
#include "core/name_index.h"
#include "core/py_format.h"
#include "core/sample_reserve.h"
#include "core/text_arena.h"
#include "core/text_file.h"
#include "msprobe/dump_journal.h"
#include "msprobe/entry_name.h"

namespace numprobe {

uint32_t DumpFile::Intern(std::string_view text) {
  auto it = text_ids_.find(text);
  if (it != text_ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(texts_.size());
  texts_.emplace_back(text);
  text_ids_.emplace(texts_.back(), id);
  return id;
}

DumpFile::DumpFile() = default;
DumpFile::~DumpFile() = default;
DumpFile::DumpFile(DumpFile&&) noexcept = default;
DumpFile& DumpFile::operator=(DumpFile&&) noexcept = default;

std::string_view DumpFile::Store(std::string_view text) {
  // The first block is small and later ones double (TextArena): a one-entry file, which an
  // incremental dump makes for every record it judges (DumpFileOfEntry), holds a few hundred
  // bytes of names, and a first block of 1 MiB was allocated and freed per record (through
  // malloc's consolidation and the heap's trimming: page faults on each).
  constexpr size_t kFirstBlockBytes = 4096;
  if (store_ == nullptr) store_ = std::make_shared<detail::TextArena>(kFirstBlockBytes);
  return store_->Store(text);
}

namespace {

// The flattening below reads a member of dump.json as a JsonValue (the journal) or as a tape (the
// file, json_tape.h); these give both the same shape.
const JsonValue::Array& Items(const JsonValue& n) { return n.array(); }
const JsonValue::Object& Members(const JsonValue& n) { return n.object(); }
std::string_view KeyOf(const JsonValue::Member& m) { return m.first; }
const JsonValue& ValueOf(const JsonValue::Member& m) { return m.second; }
JsonTapeValue::Children Items(const JsonTapeValue& n) { return n.children(); }
JsonTapeValue::Children Members(const JsonTapeValue& n) { return n.children(); }
std::string_view KeyOf(const JsonTapeValue& m) { return m.key(); }
const JsonTapeValue& ValueOf(const JsonTapeValue& m) { return m; }

// Python's truth value of a JSON value.
template <typename Node>
bool Truthy(const Node& n) {
  switch (n.kind()) {
    case JsonValue::Kind::kNull:
      return false;
    case JsonValue::Kind::kBool:
      return n.bool_value();
    case JsonValue::Kind::kDouble:
      return n.double_value() != 0 || std::isnan(n.double_value());
    case JsonValue::Kind::kInt:
      return n.int_value() != 0;
    case JsonValue::Kind::kBigInt:
      return true;
    case JsonValue::Kind::kString:
      return !n.string_value().empty();
    case JsonValue::Kind::kArray:
      return !Items(n).empty();
    case JsonValue::Kind::kObject:
      return !Members(n).empty();
  }
  return false;
}

template <typename Node>
std::string_view PyTypeName(const Node* n) {
  if (n == nullptr) return "NoneType";
  switch (n->kind()) {
    case JsonValue::Kind::kNull:
      return "NoneType";
    case JsonValue::Kind::kBool:
      return "bool";
    case JsonValue::Kind::kDouble:
      return "float";
    case JsonValue::Kind::kInt:
    case JsonValue::Kind::kBigInt:
      return "int";
    case JsonValue::Kind::kString:
      return "str";
    case JsonValue::Kind::kArray:
      return "list";
    case JsonValue::Kind::kObject:
      return "dict";
  }
  return "NoneType";
}

// The decimal digits of `v` (to_chars: no allocation, no format string to interpret; a large
// dump's shapes and row names are made of them).
template <typename Int>
void AppendInteger(Int v, std::string* out) {
  char digits[24];
  const auto end = std::to_chars(std::begin(digits), std::end(digits), v).ptr;
  out->append(std::begin(digits), end);
}

// Python's str(v) (as_repr = false) or repr(v) of the value a JSON value decodes to.
template <typename Node>
void AppendPy(const Node& n, bool as_repr, std::string* out) {
  switch (n.kind()) {
    case JsonValue::Kind::kNull:
      *out += "None";
      return;
    case JsonValue::Kind::kBool:
      *out += n.bool_value() ? "True" : "False";
      return;
    case JsonValue::Kind::kDouble: {
      char buffer[detail::kPyFloatReprBytes];
      *out += detail::FormatPyFloatRepr(n.double_value(), buffer);
      return;
    }
    case JsonValue::Kind::kBigInt:
      *out += n.big_int_digits();
      return;
    case JsonValue::Kind::kInt:
      AppendInteger(n.int_value(), out);  // "-0" is the int 0
      return;
    case JsonValue::Kind::kString:
      *out += as_repr ? detail::PyStrRepr(n.string_value()) : n.string_value();
      return;
    case JsonValue::Kind::kArray: {
      *out += '[';
      bool first = true;
      for (const auto& item : Items(n)) {
        if (!first) *out += ", ";
        first = false;
        AppendPy(item, true, out);
      }
      *out += ']';
      return;
    }
    case JsonValue::Kind::kObject: {
      *out += '{';
      bool first = true;
      for (const auto& member : Members(n)) {
        if (!first) *out += ", ";
        first = false;
        *out += detail::PyStrRepr(KeyOf(member));
        *out += ": ";
        AppendPy(ValueOf(member), true, out);
      }
      *out += '}';
      return;
    }
  }
}

template <typename Node>
std::string PyStr(const Node* n) {
  std::string out;
  if (n == nullptr) {
    out = "None";
  } else {
    AppendPy(*n, false, &out);
  }
  return out;
}

// np.shape(np.array(value)) printed as a Python tuple: "(3,)", "(2, 3)", "()".
template <typename Node>
std::string NumpyShapeText(const Node* n) {
  std::vector<size_t> dims;
  const Node* level = n;
  while (level != nullptr && level->is_array()) {
    const auto& items = Items(*level);
    const size_t len = items.size();
    dims.push_back(len);
    if (len == 0 || !items.front().is_array()) break;
    const size_t inner = Items(items.front()).size();
    bool regular = true;
    for (const auto& c : items) regular = regular && c.is_array() && Items(c).size() == inner;
    if (!regular) break;
    level = &items.front();
  }
  if (dims.empty()) return "()";
  if (dims.size() == 1) return fmt::format("({},)", dims[0]);
  return fmt::format("({})", fmt::join(dims, ", "));
}

// The members of an argument's object that the flattening reads, found in one pass over its
// members, the last of repeated keys winning as in Python's dict (a Find per field walked every
// member about ten times per row of a large dump).
template <typename Node>
struct LeafFields {
  const Node* type = nullptr;
  const Node* data_name = nullptr;
  const Node* requires_grad = nullptr;
  std::array<const Node*, 4> stats{};  // Max, Min, Mean, Norm
  const Node* md5 = nullptr;
  const Node* dtype = nullptr;
  const Node* value = nullptr;
  const Node* shape = nullptr;
  const Node* group_ranks = nullptr;
  const Node* class_type = nullptr;
  const Node* tensor = nullptr;
};

template <typename Node>
LeafFields<Node> FieldsOf(const Node& object) {
  LeafFields<Node> f;
  for (const auto& member : Members(object)) {
    const std::string_view key = KeyOf(member);
    const Node* v = &ValueOf(member);
    switch (key.size()) {  // compares only keys of the right length
      case 3:
        if (key == "Max") {
          f.stats[0] = v;
        } else if (key == "Min") {
          f.stats[1] = v;
        } else if (key == "md5") {
          f.md5 = v;
        }
        break;
      case 4:
        if (key == "type") {
          f.type = v;
        } else if (key == "Mean") {
          f.stats[2] = v;
        } else if (key == "Norm") {
          f.stats[3] = v;
        }
        break;
      case 5:
        if (key == "dtype") {
          f.dtype = v;
        } else if (key == "shape") {
          f.shape = v;
        } else if (key == "value") {
          f.value = v;
        }
        break;
      case 6:
        if (key == "tensor") f.tensor = v;
        break;
      case 9:
        if (key == "data_name") f.data_name = v;
        break;
      case 10:
        if (key == "class_type") f.class_type = v;
        break;
      case 11:
        if (key == "group_ranks") f.group_ranks = v;
        break;
      case 13:
        if (key == "requires_grad") f.requires_grad = v;
        break;
      default:
        break;
    }
  }
  return f;
}

class Flattener {
 public:
  explicit Flattener(DumpFile* file) : file_(file) {}

  // msprobe's read_op: the rows of entry `name` in file order (reordered by the caller).
  template <typename Node>
  void ReadOp(const Node& value, std::string_view name, std::vector<DumpRow>* rows) {
    rows_ = rows;
    path_.assign(name);
    const auto [last, second_last] = detail::LastTwoParts(name);
    if (last == "debug") {
      Parse(value, RowState::kDebug);
    } else if (last == "parameters_grad" || second_last == "parameters_grad") {
      Parse(value, RowState::kParametersGrad);
    } else if (value.is_object()) {
      static constexpr std::pair<std::string_view, std::string_view> kIo[] = {
          {"input_args", ".input"},
          {"input_kwargs", ".input"},
          {"input", ".input"},
          {"output", ".output"},
          {"parameters", ".parameters"}};
      for (const auto& [key, suffix] : kIo) {
        if (const Node* part = value.Find(key)) {
          const RowState state = key == "output"       ? RowState::kOutput
                                 : key == "parameters" ? RowState::kParameters
                                                       : RowState::kInput;
          path_.append(suffix);
          Parse(*part, state);
          path_.resize(name.size());
        }
      }
    }
  }

 private:
  // The rows of `node`, whose row name is path_ (restored on return): the names are built in one
  // reused buffer, with no string allocated per level or per row.
  template <typename Node>
  void Parse(const Node& node, RowState state) {
    const std::string& op_name = path_;
    if (node.is_null()) {
      rows_->push_back(DefaultRow(op_name, state));
      return;
    }
    const size_t length = path_.size();
    if (node.is_array()) {
      const bool grad = detail::HasPart(op_name, "parameters_grad");
      size_t i = 0;
      for (const auto& item : Items(node)) {
        if (!grad) {
          path_ += '.';
          AppendInteger(i, &path_);
        }
        Parse(item, state);
        path_.resize(length);
        ++i;
      }
      return;
    }
    if (!node.is_object() || Members(node).empty()) return;  // scalars and empty containers
    const LeafFields<Node> fields = FieldsOf(node);
    if (const Node* cls = fields.class_type;
        cls != nullptr && cls->is_string() && cls->string_value() == "torch.distributed.P2POp") {
      const Node* tensor = fields.tensor;
      if (tensor != nullptr && tensor->is_object()) {
        rows_->push_back(LeafRow(FieldsOf(*tensor), op_name, state));
      } else {
        rows_->push_back(DefaultRow(op_name, state));
      }
      return;
    }
    if (const Node* type = fields.type; type != nullptr && type->is_string()) {
      rows_->push_back(LeafRow(fields, op_name, state));
      return;
    }
    for (const auto& member : Members(node)) {
      path_ += '.';
      path_ += KeyOf(member);
      Parse(ValueOf(member), state);
      path_.resize(length);
    }
  }

  DumpRow DefaultRow(const std::string& op_name, RowState state) {
    DumpRow row;
    row.name = file_->Store(op_name);
    row.state = state;
    row.dtype = file_->Intern("None");
    row.shape = file_->Intern("None");
    return row;
  }

  // A JSON value as msprobe holds it; `bools_as_text` for fields gen_op_item passed through str().
  template <typename Node>
  PyValue PyValueOf(const Node* n, bool bools_as_text) {
    if (n == nullptr) return PyValue::None();
    switch (n->kind()) {
      case JsonValue::Kind::kNull:
        return PyValue::None();
      case JsonValue::Kind::kBool:
        if (bools_as_text) {
          return PyValue::Str(n->bool_value() ? InternLast("True", &last_true_)
                                              : InternLast("False", &last_false_));
        }
        return PyValue::Bool(n->bool_value());
      case JsonValue::Kind::kDouble:
        return PyValue::Float(n->double_value());
      case JsonValue::Kind::kBigInt:
        return PyValue::BigInt(file_->Intern(n->big_int_digits()));
      case JsonValue::Kind::kInt:
        return PyValue::Int(n->int_value());
      case JsonValue::Kind::kString:
        return PyValue::Str(file_->Intern(n->string_value()));
      case JsonValue::Kind::kArray:
      case JsonValue::Kind::kObject:
        return PyValue::Str(file_->Intern(PyStr(n)));
    }
    return PyValue::None();
  }

  template <typename Node>
  DumpRow LeafRow(const LeafFields<Node>& leaf, const std::string& op_name, RowState state) {
    DumpRow row;
    row.state = state;
    const Node* data_name = leaf.data_name;
    if (data_name != nullptr && Truthy(*data_name)) {
      row.data_name = data_name->is_string() ? file_->Store(data_name->string_value())
                                             : Store(PyStr(data_name));
    }
    if (row.data_name.empty()) {
      row.name = file_->Store(op_name);
    } else {
      const size_t dot = row.data_name.rfind('.');
      row.name = dot == std::string::npos ? row.data_name : row.data_name.substr(0, dot);
    }
    if (const Node* rg = leaf.requires_grad) row.requires_grad = PyValueOf(rg, true);
    for (size_t k = 0; k < 4; ++k) row.stats[k] = PyValueOf(leaf.stats[k], true);
    const Node* md5 = leaf.md5;
    if (md5 != nullptr && Truthy(*md5)) {
      row.md5 = md5->is_string() ? file_->Store(md5->string_value()) : Store(PyStr(md5));
    }

    const Node* dtype = leaf.dtype;
    const Node* value = leaf.value;
    if (dtype != nullptr && Truthy(*dtype)) {
      row.is_tensor = true;
      if (md5 != nullptr) file_->has_md5 = true;  // msprobe's md5 mode switch
      if (dtype->is_string()) {
        row.dtype = InternLast(dtype->string_value(), &last_dtype_);
      } else {
        row.dtype = file_->Intern(PyStr(dtype));
      }
      text_.clear();
      if (leaf.shape == nullptr) {
        text_ = "None";
      } else {
        AppendPy(*leaf.shape, false, &text_);
      }
      row.shape = InternLast(text_, &last_shape_);
    } else {
      const Node* type = leaf.type;
      const std::string type_text =
          type != nullptr && type->is_string() ? std::string(type->string_value()) : "";
      const std::string_view last = detail::LastTwoParts(op_name).first;
      if (type_text == "torch.Size") {
        row.dtype = file_->Intern(type_text);
        row.shape = file_->Intern(PyStr(value));
      } else if (type_text == "slice") {
        row.dtype = file_->Intern(type_text);
        row.shape = file_->Intern(NumpyShapeText(value));
      } else if (type_text == "ellipsis") {
        row.dtype = file_->Intern(type_text);
        row.shape = file_->Intern("[]");
        row.stats.fill(PyValueOf(value, false));
      } else if (last == "src" || last == "dst" || last == "group_src" || last == "group_dst") {
        row.dtype = file_->Intern(PyStr(type));
        row.shape = file_->Intern("[]");
        const std::string text = PyStr(value);
        row.stats.fill(PyValue::Str(file_->Intern(text)));
        row.md5 = Store(text);
      } else if (type_text == "torch.ProcessGroup") {
        const std::string ranks = PyStr(leaf.group_ranks);
        row.dtype = file_->Intern(type_text);
        row.shape = file_->Intern("[]");
        row.stats.fill(PyValue::Str(file_->Intern(ranks)));
        row.md5 = Store(ranks);
      } else {
        text_ = "<class '";
        text_ += PyTypeName(value);
        text_ += "'>";
        row.dtype = InternLast(text_, &last_dtype_);
        row.shape = InternLast("[]", &last_shape_);
        row.stats.fill(PyValueOf(value, false));
      }
    }
    if (!row.md5.has_value() || row.md5->empty()) {
      // CRC-32 of str(value), or of "" (0) for a leaf without one.
      if (value == nullptr) {
        row.md5 = std::string_view("00000000");
      } else {
        text_.clear();
        AppendPy(*value, false, &text_);
        // "{:08x}": eight lowercase hex digits, zero-padded.
        char hex[8];
        char digits[8];
        const char* end = std::to_chars(digits, digits + 8, detail::Crc32(text_), 16).ptr;
        const auto length = static_cast<size_t>(end - digits);
        std::fill_n(hex, 8 - length, '0');
        std::memcpy(hex + 8 - length, digits, length);
        row.md5 = file_->Store(std::string_view(hex, sizeof hex));
      }
    }
    return row;
  }

  std::string_view Store(const std::string& text) { return file_->Store(text); }

  // The last text interned through one LastText and its id: a dump's rows repeat a few dtypes
  // and shapes one after another, and each of them was a hash and a lookup in the file's table.
  struct LastText {
    std::string text;
    uint32_t id = 0;
    bool set = false;
  };
  uint32_t InternLast(std::string_view text, LastText* last) {
    if (!last->set || last->text != text) {
      last->id = file_->Intern(text);
      last->text.assign(text);
      last->set = true;
    }
    return last->id;
  }

  DumpFile* file_;
  std::string text_;  // a leaf's shape, class or str(value), built in place
  LastText last_dtype_;
  LastText last_shape_;
  LastText last_true_;
  LastText last_false_;
  std::vector<DumpRow>* rows_ = nullptr;
  std::string path_;  // the name of the row being read (Parse)
};

int ReorderRank(RowState state) {
  switch (state) {
    case RowState::kParameters:
      return 1;
    case RowState::kOutput:
      return 2;
    case RowState::kParametersGrad:
      return 3;
    default:
      return 0;
  }
}

template <typename Node>
std::string ScalarText(const Node& n) {
  if (n.is_string()) return std::string(n.string_value());
  return PyStr(&n);
}

// Collects dump.json's members into a DumpFile, from the streamed file or from the journal.
class DumpFileBuilder {
 public:
  DumpFileBuilder() : flattener_(&file_) {}

  // The size of the file being read, so that the row and entry vectors can be reserved once
  // (ReserveFromSample): moving a large file's rows again at each growth of the vectors took a
  // tenth of compare's time on hundreds of thousands of rows.
  void SetFileBytes(uint64_t file_bytes) { file_bytes_ = file_bytes; }

  // Each entry is handed to `visit` instead of kept (StreamDumpJson). A repeated entry then stops
  // the read: saw_repeat().
  void SetVisitor(const DumpEntryVisitor* visit) { visit_ = visit; }
  bool saw_repeat() const { return saw_repeat_; }

  // A member of the root object other than "data".
  template <typename Node>
  Status RootMember(std::string_view key, const Node& value) {
    if (key == "task") file_.task = ScalarText(value);
    if (key == "level") file_.level = ScalarText(value);
    if (key == "framework") file_.framework = ScalarText(value);
    if (key == "dump_data_dir" && !value.is_null()) file_.dump_data_dir = ScalarText(value);
    if (key == "data") return Status::Corrupt("\"data\" is not an object");
    return Status::Ok();
  }

  // An entry of "data". Its rows go straight into the file's rows (no second copy of them while
  // a large dump is read), or to the visitor; a repeated entry is set aside and put in place at
  // the end. Errors: the visitor's, or kRejected for a repeated entry while visiting.
  template <typename Node>
  Status Entry(std::string_view key, const Node& value, uint64_t offset) {
    if (file_.entries.size() == detail::kReserveSample) ReserveFromSample(offset);
    scratch_.clear();
    flattener_.ReadOp(value, key, &scratch_);
    const auto by_rank = [](const DumpRow& a, const DumpRow& b) {
      return ReorderRank(a.state) < ReorderRank(b.state);
    };
    // Most entries' rows come in order already (no parameters): they are left as they are, with
    // no sort buffer allocated and no row moved through it.
    if (!std::is_sorted(scratch_.begin(), scratch_.end(), by_rank)) {
      std::stable_sort(scratch_.begin(), scratch_.end(), by_rank);
    }
    // The index is keyed by the name the entry keeps (in the file's own memory).
    const auto entry_name = [this](uint32_t e) { return file_.entries[e].name; };
    const uint32_t found = entry_index_.Find(key, entry_name);
    if (found != detail::NameIndex::kNone) {
      if (visit_ != nullptr) {  // its first position was delivered with its first value
        saw_repeat_ = true;
        return Status::Rejected("an entry is repeated: read whole");
      }
      replaced_[found] = std::move(scratch_);  // a repeated entry: the last one wins
      scratch_ = {};
      return Status::Ok();
    }
    if (rows_read_ + scratch_.size() > UINT32_MAX) {
      too_many_rows_ = true;
      return Status::Ok();
    }
    const std::string_view name = file_.Store(key);
    entry_index_.Insert(name, entry_name);  // its id is its index in entries
    DumpEntry entry;
    entry.name = name;
    entry.offset = offset;
    entry.first_row = static_cast<uint32_t>(rows_read_);
    entry.row_count = static_cast<uint32_t>(scratch_.size());
    rows_read_ += scratch_.size();
    const auto index = static_cast<uint32_t>(file_.entries.size());
    file_.entries.push_back(entry);  // DumpEntry and DumpRow are trivially copyable
    for (DumpRow& r : scratch_) r.entry = index;
    if (visit_ != nullptr) return (*visit_)(file_, file_.entries.back(), scratch_);
    file_.rows.insert(file_.rows.end(), scratch_.begin(), scratch_.end());
    return Status::Ok();
  }

  Result<DumpFile> Finish() {
    if (too_many_rows_) return Status::OutOfRange("more than 2^32 rows in one dump.json");
    if (replaced_.empty()) return std::move(file_);
    // Rebuild the rows with each repeated entry's last rows in its first position.
    size_t total = 0;
    for (size_t e = 0; e < file_.entries.size(); ++e) {
      const auto it = replaced_.find(e);
      total += it != replaced_.end() ? it->second.size() : file_.entries[e].row_count;
    }
    if (total > UINT32_MAX) return Status::OutOfRange("more than 2^32 rows in one dump.json");
    std::vector<DumpRow> old = std::move(file_.rows);
    file_.rows.clear();
    file_.rows.reserve(total);
    for (size_t e = 0; e < file_.entries.size(); ++e) {
      DumpEntry& entry = file_.entries[e];
      const auto it = replaced_.find(e);
      const auto first = static_cast<uint32_t>(file_.rows.size());
      if (it != replaced_.end()) {
        for (DumpRow& r : it->second) {
          r.entry = static_cast<uint32_t>(e);
          file_.rows.push_back(r);
        }
      } else {
        for (uint32_t r = entry.first_row; r < entry.first_row + entry.row_count; ++r) {
          file_.rows.push_back(old[r]);
        }
      }
      entry.first_row = first;
      entry.row_count = static_cast<uint32_t>(file_.rows.size()) - first;
    }
    return std::move(file_);
  }

 private:
  // After the first kReserveSample entries, the rest of the file is assumed to hold rows and
  // entries at the same density (core/sample_reserve.h): both vectors are reserved once.
  void ReserveFromSample(uint64_t offset) {
    if (visit_ == nullptr) {  // a visited file keeps no rows
      file_.rows.reserve(
          detail::ReserveFromSample(file_.rows.size(), offset, file_bytes_, sizeof(DumpRow)));
    }
    file_.entries.reserve(
        detail::ReserveFromSample(file_.entries.size(), offset, file_bytes_, sizeof(DumpEntry)));
    // Huge pages for them (core/huge_pages.h): their first touch was 44% of a large compare's
    // page faults and 59% of a scan's. (An earlier measurement had the two-thread reader slower
    // with them, when a scan took 14 s; a 200,000-entry scan now takes 46,000 faults down to
    // 18,000 and 2.18 s to 1.97 s.)
    detail::AdviseHugePages(file_.rows);
    detail::AdviseHugePages(file_.entries);
  }

  DumpFile file_;
  uint64_t file_bytes_ = 0;
  const DumpEntryVisitor* visit_ = nullptr;
  bool saw_repeat_ = false;
  size_t rows_read_ = 0;  // rows of the entries so far (kept or visited)
  Flattener flattener_;
  detail::NameIndex entry_index_;                              // entries by name
  std::vector<DumpRow> scratch_;                               // the rows of the entry being read
  std::unordered_map<size_t, std::vector<DumpRow>> replaced_;  // repeated entries' last rows
  bool too_many_rows_ = false;
};

// The dump a journal recorded, read as dump.json would have been.
Result<DumpFile> DumpFileOfJournal(const RecoveredDump& recovered) {
  DumpFileBuilder builder;
  for (const auto& [key, value] : recovered.dump.object()) {
    if (key == "data") {
      for (const auto& [name, entry] : value.object()) {
        NUMPROBE_RETURN_IF_ERROR(builder.Entry(name, entry, 0));
      }
    } else {
      NUMPROBE_RETURN_IF_ERROR(builder.RootMember(key, value));
    }
  }
  NUMPROBE_ASSIGN_OR_RETURN(DumpFile file, builder.Finish());
  file.from_journal = true;
  file.journal_truncated_tail = recovered.truncated_tail;
  return file;
}

// Reads dump.json through `stream` (StreamJsonTape or StreamJsonFileTape with the spec it is
// given). A value that repeats a key is read as a JsonValue, which has Python's dict semantics.
// With `visit`, entries go to it (DumpFileBuilder::SetVisitor), and *saw_repeat says whether a
// repeated entry stopped the read.
template <typename StreamFn>
Result<DumpFile> ParseDumpJsonWith(const StreamFn& stream, uint64_t file_bytes,
                                   const DumpEntryVisitor* visit = nullptr,
                                   bool* saw_repeat = nullptr) {
  DumpFileBuilder builder;
  builder.SetFileBytes(file_bytes);
  builder.SetVisitor(visit);
  bool saw_data = false;
  JsonTapeStreamSpec spec;
  spec.stream_path = {"data"};
  spec.reached_stream_object = &saw_data;
  spec.on_root_member = [&](std::string_view key, const JsonTapeValue& value) -> Status {
    if (value.repeated_keys()) return builder.RootMember(key, ToJsonValue(value));
    return builder.RootMember(key, value);
  };
  spec.on_member = [&](std::string_view key, const JsonTapeValue& value,
                       uint64_t offset) -> Status {
    if (value.repeated_keys()) return builder.Entry(key, ToJsonValue(value), offset);
    return builder.Entry(key, value, offset);
  };
  const Status read = stream(spec);
  if (saw_repeat != nullptr) *saw_repeat = builder.saw_repeat();
  NUMPROBE_RETURN_IF_ERROR(read);
  if (!saw_data) return Status::Corrupt("no \"data\" object at the top level");
  return builder.Finish();
}

}  // namespace

Result<DumpFile> ParseDumpJson(std::span<const char> bytes) {
  // msprobe's files are Python's json: bare NaN/Infinity tokens.
  return ParseDumpJsonWith(
      [&](const JsonTapeStreamSpec& spec) { return StreamJsonTape(bytes, spec, kPythonJson); },
      bytes.size());
}

Result<DumpFile> DumpFileOfEntry(std::string_view task, std::string_view name,
                                 const JsonValue& entry) {
  DumpFileBuilder builder;
  NUMPROBE_RETURN_IF_ERROR(builder.RootMember("task", JsonValue::String(std::string(task))));
  NUMPROBE_RETURN_IF_ERROR(builder.Entry(name, entry, 0));
  return builder.Finish();
}

bool IsEmptyDumpJson(const std::filesystem::path& path) {
  constexpr uintmax_t kMaxSize = 4096;  // "{}" with some whitespace; anything larger has content
  auto text = detail::ReadTextFile(path, kMaxSize);
  if (!text) return false;
  std::string compact;
  for (char c : *text) {
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') compact.push_back(c);
  }
  return compact == "{}";
}

namespace {

// The journal beside dump.json at `path` when it is newer (a killed run), read into a DumpFile;
// nullopt when dump.json itself is to be read.
Result<std::optional<DumpFile>> ReadJournalInstead(const std::filesystem::path& path) {
  if (path.filename() != "dump.json") return std::optional<DumpFile>();
  NUMPROBE_ASSIGN_OR_RETURN(auto journal, ReadJournalIfNewer(path.parent_path()));
  if (!journal.has_value()) return std::optional<DumpFile>();
  auto file = DumpFileOfJournal(*journal);
  if (!file) {
    return file.error().WithContext((path.parent_path() / std::string(kDumpJournalName)).string());
  }
  return std::optional<DumpFile>(std::move(*file));
}

// dump.json itself, streamed (to `visit` when given); errors are prefixed with the path.
Result<DumpFile> ParseDumpJsonFile(const std::filesystem::path& path, const DumpEntryVisitor* visit,
                                   bool* saw_repeat) {
  // Read in pieces rather than mapped: a large dump.json's pages would otherwise stay resident
  // beside the model built from it.
  std::error_code size_error;
  const uintmax_t file_bytes = std::filesystem::file_size(path, size_error);
  // A large file read on its own (scan, inspect, report; not compare's two sides, read side by
  // side over the pool) is parsed on one thread and made into rows on another.
  constexpr uintmax_t kTwoThreadsFrom = uintmax_t{16} << 20;
  const bool two_threads = !size_error && file_bytes >= kTwoThreadsFrom &&
                           !ThreadPool::InParallelFor() && ThreadPool::Default().threads() > 1;
  auto file = ParseDumpJsonWith(
      [&](const JsonTapeStreamSpec& spec) {
        return two_threads ? StreamJsonFileTapeOnTwoThreads(path, spec, kPythonJson)
                           : StreamJsonFileTape(path, spec, kPythonJson);
      },
      size_error ? 0 : static_cast<uint64_t>(file_bytes), visit, saw_repeat);
  if (!file) return file.error().WithContext(path.string());
  return file;
}

// Every entry of `file` (read whole) to `visit`, in order.
Status VisitEntries(const DumpFile& file, const DumpEntryVisitor& visit) {
  for (const DumpEntry& entry : file.entries) {
    NUMPROBE_RETURN_IF_ERROR(
        visit(file, entry,
              std::span<const DumpRow>(file.rows).subspan(entry.first_row, entry.row_count)));
  }
  return Status::Ok();
}

}  // namespace

Result<DumpFile> ReadDumpJson(const std::filesystem::path& path) {
  // A killed run: the journal is read straight into the model.
  NUMPROBE_ASSIGN_OR_RETURN(auto journal, ReadJournalInstead(path));
  if (journal.has_value()) return std::move(*journal);
  return ParseDumpJsonFile(path, nullptr, nullptr);
}

Result<DumpFile> StreamDumpJson(const std::filesystem::path& path, const DumpEntryVisitor& visit,
                                const std::function<void()>& restart) {
  NUMPROBE_ASSIGN_OR_RETURN(auto journal, ReadJournalInstead(path));
  if (journal.has_value()) {  // a journal is read whole anyway (it is applied record by record)
    NUMPROBE_RETURN_IF_ERROR(VisitEntries(*journal, visit));
    return std::move(*journal);
  }
  bool saw_repeat = false;
  auto streamed = ParseDumpJsonFile(path, &visit, &saw_repeat);
  if (!saw_repeat) return streamed;
  if (restart) restart();
  NUMPROBE_ASSIGN_OR_RETURN(DumpFile whole, ParseDumpJsonFile(path, nullptr, nullptr));
  NUMPROBE_RETURN_IF_ERROR(VisitEntries(whole, visit));
  return whole;
}

}  // namespace numprobe
