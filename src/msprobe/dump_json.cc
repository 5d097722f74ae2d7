// dump.json -> DumpFile: the flattening follows msprobe's compare (core/compare/utils.py read_op,
// op_item_parse and gen_op_item) so that row names, dtypes, shapes and values read as msprobe's.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "numprobe/buffer.h"
#include "numprobe/dump.h"

#include "core/json_stream.h"
#include "core/py_format.h"
#include "core/text_file.h"
#include "msprobe/dump_journal.h"
#include "msprobe/entry_name.h"

#ifdef NUMPROBE_WITH_ZLIB
#include <zlib.h>
#endif

namespace numprobe {

PyValue PyValue::Float(double f) { return {Kind::kFloat, 0, std::bit_cast<uint64_t>(f)}; }

double PyValue::as_float() const {
  if (kind_ == Kind::kInt) return static_cast<double>(as_int());
  if (kind_ == Kind::kBool) return bits_ != 0 ? 1.0 : 0.0;
  return std::bit_cast<double>(bits_);
}

uint32_t DumpFile::Intern(std::string_view text) {
  auto it = text_ids_.find(text);
  if (it != text_ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(texts_.size());
  texts_.emplace_back(text);
  text_ids_.emplace(texts_.back(), id);
  return id;
}

namespace {

using detail::JNode;

uint32_t Crc32(std::string_view text) {
#ifdef NUMPROBE_WITH_ZLIB
  return static_cast<uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(text.data()), static_cast<uInt>(text.size())));
#else
  // zlib is optional in this build; the reflected CRC-32 (poly 0xEDB88320) zlib computes.
  uint32_t crc = 0xffffffffu;
  for (const char ch : text) {
    crc ^= static_cast<unsigned char>(ch);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
#endif
}

// Python's truth value of a JSON value.
bool Truthy(const JNode& n) {
  switch (n.kind) {
    case JNode::Kind::kNull:
      return false;
    case JNode::Kind::kBool:
      return n.boolean;
    case JNode::Kind::kNumber:
      if (n.is_float) return n.number != 0 || std::isnan(n.number);
      return n.big || n.integer != 0;
    case JNode::Kind::kString:
      return !n.text.empty();
    case JNode::Kind::kArray:
    case JNode::Kind::kObject:
      return !n.items.empty();
  }
  return false;
}

std::string_view PyTypeName(const JNode* n) {
  if (n == nullptr) return "NoneType";
  switch (n->kind) {
    case JNode::Kind::kNull:
      return "NoneType";
    case JNode::Kind::kBool:
      return "bool";
    case JNode::Kind::kNumber:
      return n->is_float ? "float" : "int";
    case JNode::Kind::kString:
      return "str";
    case JNode::Kind::kArray:
      return "list";
    case JNode::Kind::kObject:
      return "dict";
  }
  return "NoneType";
}

// Python's str(v) (as_repr = false) or repr(v) of the value a JSON node decodes to.
void AppendPy(const JNode& n, bool as_repr, std::string* out) {
  switch (n.kind) {
    case JNode::Kind::kNull:
      *out += "None";
      return;
    case JNode::Kind::kBool:
      *out += n.boolean ? "True" : "False";
      return;
    case JNode::Kind::kNumber:
      if (n.is_float) {
        *out += detail::PyFloatRepr(n.number);
      } else if (n.big) {
        *out += n.text;
      } else {
        *out += std::to_string(n.integer);  // "-0" is the int 0
      }
      return;
    case JNode::Kind::kString:
      *out += as_repr ? detail::PyStrRepr(n.text) : n.text;
      return;
    case JNode::Kind::kArray:
      *out += '[';
      for (size_t i = 0; i < n.items.size(); ++i) {
        if (i > 0) *out += ", ";
        AppendPy(n.items[i], true, out);
      }
      *out += ']';
      return;
    case JNode::Kind::kObject:
      *out += '{';
      for (size_t i = 0; i < n.items.size(); ++i) {
        if (i > 0) *out += ", ";
        *out += detail::PyStrRepr(n.keys[i]);
        *out += ": ";
        AppendPy(n.items[i], true, out);
      }
      *out += '}';
      return;
  }
}

std::string PyStr(const JNode* n) {
  std::string out;
  if (n == nullptr) {
    out = "None";
  } else {
    AppendPy(*n, false, &out);
  }
  return out;
}

// np.shape(np.array(value)) printed as a Python tuple: "(3,)", "(2, 3)", "()".
std::string NumpyShapeText(const JNode* n) {
  std::vector<size_t> dims;
  const JNode* level = n;
  while (level != nullptr && level->is_array()) {
    const size_t len = level->items.size();
    dims.push_back(len);
    if (len == 0 || !level->items[0].is_array()) break;
    const size_t inner = level->items[0].items.size();
    const bool regular = std::all_of(level->items.begin(), level->items.end(), [&](const JNode& c) {
      return c.is_array() && c.items.size() == inner;
    });
    if (!regular) break;
    level = &level->items[0];
  }
  if (dims.empty()) return "()";
  if (dims.size() == 1) return fmt::format("({},)", dims[0]);
  return fmt::format("({})", fmt::join(dims, ", "));
}

class Flattener {
 public:
  explicit Flattener(DumpFile* file) : file_(file) {}

  // msprobe's read_op: the rows of entry `name` in file order (reordered by the caller).
  void ReadOp(const JNode& value, const std::string& name, std::vector<DumpRow>* rows) {
    rows_ = rows;
    const auto [last, second_last] = detail::LastTwoParts(name);
    if (last == "debug") {
      Parse(value, name, RowState::kDebug);
    } else if (last == "parameters_grad" || second_last == "parameters_grad") {
      Parse(value, name, RowState::kParametersGrad);
    } else if (value.is_object()) {
      static constexpr std::pair<std::string_view, std::string_view> kIo[] = {
          {"input_args", ".input"},
          {"input_kwargs", ".input"},
          {"input", ".input"},
          {"output", ".output"},
          {"parameters", ".parameters"}};
      for (const auto& [key, suffix] : kIo) {
        if (const JNode* part = value.Find(key)) {
          const RowState state = key == "output"       ? RowState::kOutput
                                 : key == "parameters" ? RowState::kParameters
                                                       : RowState::kInput;
          Parse(*part, name + std::string(suffix), state);
        }
      }
    }
  }

 private:
  void Parse(const JNode& node, const std::string& op_name, RowState state) {
    if (node.kind == JNode::Kind::kNull) {
      rows_->push_back(DefaultRow(op_name, state));
      return;
    }
    if (node.is_array()) {
      const bool grad = detail::HasPart(op_name, "parameters_grad");
      for (size_t i = 0; i < node.items.size(); ++i) {
        Parse(node.items[i], grad ? op_name : op_name + "." + std::to_string(i), state);
      }
      return;
    }
    if (!node.is_object() || node.items.empty()) return;  // scalars and empty containers
    if (const JNode* cls = node.Find("class_type");
        cls != nullptr && cls->is_string() && cls->text == "torch.distributed.P2POp") {
      const JNode* tensor = node.Find("tensor");
      if (tensor != nullptr && tensor->is_object()) {
        rows_->push_back(LeafRow(*tensor, op_name, state));
      } else {
        rows_->push_back(DefaultRow(op_name, state));
      }
      return;
    }
    if (const JNode* type = node.Find("type"); type != nullptr && type->is_string()) {
      rows_->push_back(LeafRow(node, op_name, state));
      return;
    }
    for (size_t i = 0; i < node.items.size(); ++i) {
      Parse(node.items[i], op_name + "." + node.keys[i], state);
    }
  }

  DumpRow DefaultRow(const std::string& op_name, RowState state) {
    DumpRow row;
    row.name = op_name;
    row.state = state;
    row.dtype = file_->Intern("None");
    row.shape = file_->Intern("None");
    return row;
  }

  // A JSON value as msprobe holds it; `bools_as_text` for fields gen_op_item passed through str().
  PyValue ValueOf(const JNode* n, bool bools_as_text) {
    if (n == nullptr) return PyValue::None();
    switch (n->kind) {
      case JNode::Kind::kNull:
        return PyValue::None();
      case JNode::Kind::kBool:
        if (bools_as_text) return PyValue::Str(file_->Intern(n->boolean ? "True" : "False"));
        return PyValue::Bool(n->boolean);
      case JNode::Kind::kNumber:
        if (n->is_float) return PyValue::Float(n->number);
        if (n->big) return PyValue::BigInt(file_->Intern(n->text));
        return PyValue::Int(n->integer);
      case JNode::Kind::kString:
        return PyValue::Str(file_->Intern(n->text));
      case JNode::Kind::kArray:
      case JNode::Kind::kObject:
        return PyValue::Str(file_->Intern(PyStr(n)));
    }
    return PyValue::None();
  }

  DumpRow LeafRow(const JNode& leaf, const std::string& op_name, RowState state) {
    DumpRow row;
    row.state = state;
    const JNode* data_name = leaf.Find("data_name");
    if (data_name != nullptr && Truthy(*data_name)) row.data_name = PyStr(data_name);
    if (row.data_name.empty()) {
      row.name = op_name;
    } else {
      const size_t dot = row.data_name.rfind('.');
      row.name = dot == std::string::npos ? row.data_name : row.data_name.substr(0, dot);
    }
    if (const JNode* rg = leaf.Find("requires_grad")) row.requires_grad = ValueOf(rg, true);
    static constexpr std::string_view kStatKeys[4] = {"Max", "Min", "Mean", "Norm"};
    for (int k = 0; k < 4; ++k) row.stats[k] = ValueOf(leaf.Find(kStatKeys[k]), true);
    const JNode* md5 = leaf.Find("md5");
    if (md5 != nullptr && Truthy(*md5)) row.md5 = PyStr(md5);

    const JNode* dtype = leaf.Find("dtype");
    const JNode* value = leaf.Find("value");
    if (dtype != nullptr && Truthy(*dtype)) {
      row.is_tensor = true;
      if (md5 != nullptr) file_->has_md5 = true;  // msprobe's md5 mode switch
      row.dtype = file_->Intern(dtype->is_string() ? std::string_view{dtype->text} : PyStr(dtype));
      row.shape = file_->Intern(PyStr(leaf.Find("shape")));
    } else {
      const JNode* type = leaf.Find("type");
      const std::string type_text = type != nullptr && type->is_string() ? type->text : "";
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
        row.stats.fill(ValueOf(value, false));
      } else if (last == "src" || last == "dst" || last == "group_src" || last == "group_dst") {
        row.dtype = file_->Intern(PyStr(type));
        row.shape = file_->Intern("[]");
        row.stats.fill(PyValue::Str(file_->Intern(PyStr(value))));
        row.md5 = PyStr(value);
      } else if (type_text == "torch.ProcessGroup") {
        const std::string ranks = PyStr(leaf.Find("group_ranks"));
        row.dtype = file_->Intern(type_text);
        row.shape = file_->Intern("[]");
        row.stats.fill(PyValue::Str(file_->Intern(ranks)));
        row.md5 = ranks;
      } else {
        row.dtype = file_->Intern(fmt::format("<class '{}'>", PyTypeName(value)));
        row.shape = file_->Intern("[]");
        row.stats.fill(ValueOf(value, false));
      }
    }
    if (!row.md5.has_value() || row.md5->empty()) {
      // CRC-32 of str(value), or of "" (0) for a leaf without one.
      row.md5 =
          value == nullptr ? std::string("00000000") : fmt::format("{:08x}", Crc32(PyStr(value)));
    }
    return row;
  }

  DumpFile* file_;
  std::vector<DumpRow>* rows_ = nullptr;
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

std::string ScalarText(const JNode& n) {
  if (n.kind == JNode::Kind::kString) return n.text;
  return PyStr(&n);
}

}  // namespace

Result<DumpFile> ParseDumpJson(std::span<const char> bytes) {
  DumpFile file;
  Flattener flattener(&file);
  std::unordered_map<std::string, size_t> entry_index;
  std::vector<std::vector<DumpRow>> entry_rows;  // rows per entry until the end (duplicates)
  bool saw_data = false;
  detail::JsonStreamSpec spec;
  spec.stream_path = {"data"};
  spec.reached_stream_object = &saw_data;
  spec.on_root_member = [&](std::string_view key, JNode&& value) -> Status {
    if (key == "task") file.task = ScalarText(value);
    if (key == "level") file.level = ScalarText(value);
    if (key == "framework") file.framework = ScalarText(value);
    if (key == "dump_data_dir" && value.kind != JNode::Kind::kNull) {
      file.dump_data_dir = ScalarText(value);
    }
    if (key == "data") return Status::Corrupt("\"data\" is not an object");
    return Status::Ok();
  };
  spec.on_member = [&](std::string_view key, JNode&& value, uint64_t offset) -> Status {
    std::string name(key);
    std::vector<DumpRow> rows;
    flattener.ReadOp(value, name, &rows);
    std::stable_sort(rows.begin(), rows.end(), [](const DumpRow& a, const DumpRow& b) {
      return ReorderRank(a.state) < ReorderRank(b.state);
    });
    auto [it, inserted] = entry_index.try_emplace(name, file.entries.size());
    if (inserted) {
      DumpEntry entry;
      entry.name = std::move(name);
      entry.offset = offset;
      file.entries.push_back(std::move(entry));
      entry_rows.push_back(std::move(rows));
    } else {
      entry_rows[it->second] =
          std::move(rows);  // a repeated entry: the last one wins, as in Python
    }
    return Status::Ok();
  };
  NUMPROBE_RETURN_IF_ERROR(detail::StreamJson(bytes, spec));
  if (!saw_data) return Status::Corrupt("no \"data\" object at the top level");
  size_t total = 0;
  for (const auto& rows : entry_rows) total += rows.size();
  if (total > UINT32_MAX) return Status::OutOfRange("more than 2^32 rows in one dump.json");
  file.rows.reserve(total);
  for (size_t e = 0; e < entry_rows.size(); ++e) {
    file.entries[e].first_row = static_cast<uint32_t>(file.rows.size());
    file.entries[e].row_count = static_cast<uint32_t>(entry_rows[e].size());
    for (DumpRow& r : entry_rows[e]) {
      r.entry = static_cast<uint32_t>(e);
      file.rows.push_back(std::move(r));
    }
    std::vector<DumpRow>().swap(entry_rows[e]);
  }
  return file;
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

Result<DumpFile> ReadDumpJson(const std::filesystem::path& path) {
  if (path.filename() == "dump.json" && HasDumpJournal(path.parent_path())) {
    NUMPROBE_ASSIGN_OR_RETURN(DumpJsonText text, LoadDumpJson(path.parent_path()));
    if (text.from_journal) {
      auto file = ParseDumpJson(text.text);
      if (!file) {
        return file.error().WithContext(
            (path.parent_path() / std::string(kDumpJournalName)).string());
      }
      file->from_journal = true;
      file->journal_truncated_tail = text.truncated_tail;
      return file;
    }
  }
  auto buffer = Buffer::MapFile(path);
  if (!buffer) return buffer.error().WithContext(path.string());
  const auto bytes = (*buffer)->bytes();
  auto file = ParseDumpJson(
      std::span<const char>(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  if (!file) return file.error().WithContext(path.string());
  return file;
}

}  // namespace numprobe
