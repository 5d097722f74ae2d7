// The first worksheet of an .xlsx workbook: xl/workbook.xml names the sheets, its relationships
// (xl/_rels/workbook.xml.rels) give the first one's part, xl/sharedStrings.xml the shared texts.
#include "merge/xlsx_reader.h"

#include <charconv>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

#include <expat.h>

#include "numprobe/buffer.h"

#include "formats/zip.h"

namespace numprobe::merge_detail {
namespace {

constexpr size_t kMaxColumns = 16384;           // Excel's limit
constexpr size_t kMaxCells = size_t{64} << 20;  // a merge input far above msprobe's sizes
constexpr size_t kMaxSharedStrings = size_t{16} << 20;

// The local name of a qualified XML name ("x:row" -> "row").
std::string_view Local(const XML_Char* name) {
  std::string_view n(name);
  const size_t colon = n.rfind(':');
  return colon == std::string_view::npos ? n : n.substr(colon + 1);
}

const XML_Char* Attr(const XML_Char** attrs, std::string_view want) {
  for (size_t i = 0; attrs[i] != nullptr; i += 2) {
    if (Local(attrs[i]) == want) return attrs[i + 1];
  }
  return nullptr;
}

// A SAX pass over one XML part. Handlers get `this`; a DTD stops the parse.
class XmlPass {
 public:
  virtual ~XmlPass() = default;
  virtual void Start(std::string_view name, const XML_Char** attrs) = 0;
  virtual void End(std::string_view name) = 0;
  virtual void Text(std::string_view text) = 0;

  Status Run(std::span<const std::byte> bytes, const std::string& where) {
    XML_Parser p = XML_ParserCreate(nullptr);
    if (p == nullptr) return Status::Internal("cannot create an XML parser");
    XML_SetUserData(p, this);
    XML_SetElementHandler(
        p,
        [](void* self, const XML_Char* name, const XML_Char** attrs) {
          static_cast<XmlPass*>(self)->Start(Local(name), attrs);
        },
        [](void* self, const XML_Char* name) { static_cast<XmlPass*>(self)->End(Local(name)); });
    XML_SetCharacterDataHandler(p, [](void* self, const XML_Char* s, int len) {
      static_cast<XmlPass*>(self)->Text(std::string_view(s, static_cast<size_t>(len)));
    });
    parser_ = p;
    XML_SetStartDoctypeDeclHandler(
        p, [](void* self, const XML_Char*, const XML_Char*, const XML_Char*, int) {
          auto* pass = static_cast<XmlPass*>(self);
          pass->doctype_ = true;
          XML_StopParser(pass->parser_, XML_FALSE);
        });
    Status status;
    if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
      status = Status::OutOfRange(where + ": XML part too large");
    } else if (XML_Parse(p, reinterpret_cast<const char*>(bytes.data()),
                         static_cast<int>(bytes.size()), XML_TRUE) == XML_STATUS_ERROR) {
      status = doctype_ ? Status::Rejected(where + ": XML with a DTD is not read")
               : !error_.ok()
                   ? error_
                   : Status::Corrupt(where + ": " + XML_ErrorString(XML_GetErrorCode(p)) +
                                     " at line " + std::to_string(XML_GetCurrentLineNumber(p)));
    }
    if (status.ok() && !error_.ok()) status = error_;
    XML_ParserFree(p);
    parser_ = nullptr;
    return status;
  }

 protected:
  void Fail(Status s) {
    if (error_.ok()) error_ = std::move(s);
    if (parser_ != nullptr) XML_StopParser(parser_, XML_FALSE);
  }

 private:
  XML_Parser parser_ = nullptr;
  bool doctype_ = false;
  Status error_;
};

// workbook.xml: the r:id of the first <sheet>.
class WorkbookPass : public XmlPass {
 public:
  std::string first_rid;
  void Start(std::string_view name, const XML_Char** attrs) override {
    if (name == "sheet" && first_rid.empty()) {
      if (const XML_Char* id = Attr(attrs, "id")) first_rid = id;
    }
  }
  void End(std::string_view) override {}
  void Text(std::string_view) override {}
};

// workbook.xml.rels: the target of one relationship id.
class RelsPass : public XmlPass {
 public:
  explicit RelsPass(std::string id) : id_(std::move(id)) {}
  std::string target;
  void Start(std::string_view name, const XML_Char** attrs) override {
    if (name != "Relationship") return;
    const XML_Char* id = Attr(attrs, "Id");
    const XML_Char* t = Attr(attrs, "Target");
    if (id != nullptr && t != nullptr && id_ == id) target = t;
  }
  void End(std::string_view) override {}
  void Text(std::string_view) override {}

 private:
  std::string id_;
};

// sharedStrings.xml: each <si>'s text (the <t> runs of rich text joined; phonetic runs skipped).
class SharedStringsPass : public XmlPass {
 public:
  std::vector<std::string> strings;
  void Start(std::string_view name, const XML_Char**) override {
    if (name == "si") {
      current_.clear();
      in_si_ = true;
    } else if (name == "rPh") {
      in_phonetic_ = true;
    } else if (name == "t" && in_si_ && !in_phonetic_) {
      in_t_ = true;
    }
  }
  void End(std::string_view name) override {
    if (name == "t") {
      in_t_ = false;
    } else if (name == "rPh") {
      in_phonetic_ = false;
    } else if (name == "si") {
      in_si_ = false;
      if (strings.size() >= kMaxSharedStrings) {
        Fail(Status::OutOfRange("more than " + std::to_string(kMaxSharedStrings) +
                                " shared strings"));
        return;
      }
      strings.push_back(std::move(current_));
      current_.clear();
    }
  }
  void Text(std::string_view text) override {
    if (in_t_) current_.append(text);
  }

 private:
  std::string current_;
  bool in_si_ = false, in_t_ = false, in_phonetic_ = false;
};

// "BC12" -> column 54 (0-based); nullopt for a malformed reference.
std::optional<size_t> ColumnOf(std::string_view ref) {
  size_t col = 0;
  size_t i = 0;
  while (i < ref.size() && ref[i] >= 'A' && ref[i] <= 'Z') {
    col = col * 26 + static_cast<size_t>(ref[i] - 'A' + 1);
    if (col > kMaxColumns) return std::nullopt;
    ++i;
  }
  if (i == 0) return std::nullopt;
  return col - 1;
}

// A worksheet: <row><c r="A1" t="s|str|inlineStr|b|n|e"><v>..</v> or <is><t>..</t></is></c>.
class SheetPass : public XmlPass {
 public:
  explicit SheetPass(const std::vector<std::string>* shared) : shared_(shared) {}
  XlsxGrid grid;

  void Start(std::string_view name, const XML_Char** attrs) override {
    if (name == "row") {
      grid.emplace_back();
      next_col_ = 0;
    } else if (name == "c" && !grid.empty()) {
      const XML_Char* ref = Attr(attrs, "r");
      const XML_Char* type = Attr(attrs, "t");
      type_ = type != nullptr ? type : "n";
      col_ = next_col_;
      if (ref != nullptr) {
        const auto c = ColumnOf(ref);
        if (!c.has_value()) {
          Fail(Status::Corrupt(std::string("bad cell reference '") + ref + "'"));
          return;
        }
        col_ = *c;
      }
      next_col_ = col_ + 1;
      value_.clear();
      in_cell_ = true;
    } else if ((name == "v" || name == "t") && in_cell_) {
      in_value_ = true;
    }
  }

  void End(std::string_view name) override {
    if (name == "v" || name == "t") {
      in_value_ = false;
    } else if (name == "c" && in_cell_) {
      in_cell_ = false;
      Store();
    }
  }

  void Text(std::string_view text) override {
    if (in_value_) value_.append(text);
  }

 private:
  void Store() {
    if (++cells_ > kMaxCells) {
      Fail(Status::OutOfRange("more than " + std::to_string(kMaxCells) + " cells"));
      return;
    }
    std::vector<XlsxCell>& row = grid.back();
    if (row.size() <= col_) row.resize(col_ + 1);
    XlsxCell& cell = row[col_];
    if (type_ == "s") {
      size_t index = 0;
      const auto res = std::from_chars(value_.data(), value_.data() + value_.size(), index);
      if (res.ec != std::errc() || index >= shared_->size()) {
        Fail(Status::Corrupt("shared string index '" + value_ + "' out of range"));
        return;
      }
      cell.kind = XlsxCell::Kind::kText;
      cell.text = (*shared_)[index];
    } else if (type_ == "str" || type_ == "inlineStr" || type_ == "e") {
      cell.kind = XlsxCell::Kind::kText;
      cell.text = value_;
    } else if (type_ == "b") {
      cell.kind = XlsxCell::Kind::kBool;
      cell.number = value_ == "1" ? 1 : 0;
      cell.text = value_ == "1" ? "True" : "False";
    } else if (!value_.empty()) {
      double v = 0;
      const auto res = std::from_chars(value_.data(), value_.data() + value_.size(), v);
      if (res.ec != std::errc() || res.ptr != value_.data() + value_.size()) {
        Fail(Status::Corrupt("number cell holds '" + value_ + "'"));
        return;
      }
      cell.kind = XlsxCell::Kind::kNumber;
      cell.number = v;
      cell.text = value_;
    }
  }

  const std::vector<std::string>* shared_;
  size_t next_col_ = 0, col_ = 0, cells_ = 0;
  std::string type_, value_;
  bool in_cell_ = false, in_value_ = false;
};

}  // namespace

Result<XlsxGrid> ReadXlsxFirstSheet(const std::filesystem::path& path) {
  const std::string where = path.string();
  NUMPROBE_ASSIGN_OR_RETURN(auto buffer, Buffer::MapFile(path));
  auto zip = ZipArchive::Open(buffer);
  if (!zip) return zip.error().WithContext(where);
  auto part = [&](std::string_view name) -> Result<ZipData> {
    const ZipEntry* e = zip->Find(name);
    if (e == nullptr) return Status::Corrupt(where + ": no " + std::string(name));
    auto data = zip->Read(*e);
    if (!data) return data.error().WithContext(where + ": " + std::string(name));
    return data;
  };
  std::string sheet_part = "xl/worksheets/sheet1.xml";
  if (zip->Find("xl/workbook.xml") != nullptr && zip->Find("xl/_rels/workbook.xml.rels")) {
    NUMPROBE_ASSIGN_OR_RETURN(ZipData wb, part("xl/workbook.xml"));
    WorkbookPass workbook;
    NUMPROBE_RETURN_IF_ERROR(workbook.Run(wb.bytes, where + ": xl/workbook.xml"));
    NUMPROBE_ASSIGN_OR_RETURN(ZipData rels_data, part("xl/_rels/workbook.xml.rels"));
    RelsPass rels(workbook.first_rid);
    NUMPROBE_RETURN_IF_ERROR(rels.Run(rels_data.bytes, where + ": xl/_rels/workbook.xml.rels"));
    if (!rels.target.empty()) {
      // Targets are relative to xl/ (or absolute from the package root).
      sheet_part = rels.target.front() == '/' ? rels.target.substr(1) : "xl/" + rels.target;
    }
  }
  SharedStringsPass shared;
  if (zip->Find("xl/sharedStrings.xml") != nullptr) {
    NUMPROBE_ASSIGN_OR_RETURN(ZipData ss, part("xl/sharedStrings.xml"));
    NUMPROBE_RETURN_IF_ERROR(shared.Run(ss.bytes, where + ": xl/sharedStrings.xml"));
  }
  NUMPROBE_ASSIGN_OR_RETURN(ZipData sheet_data, part(sheet_part));
  SheetPass sheet(&shared.strings);
  NUMPROBE_RETURN_IF_ERROR(sheet.Run(sheet_data.bytes, where + ": " + sheet_part));
  size_t width = 0;
  for (const auto& row : sheet.grid) width = std::max(width, row.size());
  for (auto& row : sheet.grid) row.resize(width);
  return std::move(sheet.grid);
}

}  // namespace numprobe::merge_detail
