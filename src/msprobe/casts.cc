// casts.json, numprobe's side record of narrowing casts: written by the Dumper, read back by the
// first-divergence analysis (format: include/numprobe/casts.h, docs/casts.md).
#include "numprobe/casts.h"

#include <system_error>

#include "core/json.h"
#include "core/text_file.h"
#include "msprobe/dump_journal.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

// A step records a handful of casts per op at most; a larger file is not one numprobe wrote.
constexpr uintmax_t kMaxCastsBytes = uintmax_t{256} << 20;

Status Malformed(size_t index, std::string_view what) {
  return Status::Corrupt("cast " + std::to_string(index) + ": " + std::string(what));
}

std::optional<double> Number(const JsonValue* v) {
  if (v == nullptr) return std::nullopt;
  if (v->kind() == JsonValue::Kind::kDouble) return v->double_value();
  if (v->kind() == JsonValue::Kind::kInt) return static_cast<double>(v->int_value());
  return std::nullopt;
}

Result<CastTensor> ParseLeaf(const JsonValue* leaf, std::string_view which) {
  if (leaf == nullptr || !leaf->is_object()) {
    return Status::Corrupt(std::string(which) + " is not a tensor leaf");
  }
  CastTensor t;
  const JsonValue* dtype = leaf->Find("dtype");
  if (dtype == nullptr || dtype->kind() != JsonValue::Kind::kString) {
    return Status::Corrupt(std::string(which) + " has no dtype");
  }
  t.dtype = dtype->string_value();
  if (const JsonValue* shape = leaf->Find("shape"); shape != nullptr && shape->is_array()) {
    for (const JsonValue& d : shape->array()) {
      if (d.kind() != JsonValue::Kind::kInt) {
        return Status::Corrupt(std::string(which) + " shape holds a non-integer");
      }
      t.shape.push_back(d.int_value());
    }
  }
  static constexpr const char* kStatKeys[4] = {"Max", "Min", "Mean", "Norm"};
  for (size_t k = 0; k < 4; ++k) t.stats[k] = Number(leaf->Find(kStatKeys[k]));
  return t;
}

Result<CastRecord> FromJson(const JsonValue& doc) {
  if (!doc.is_object()) return Status::Corrupt("not a JSON object");
  const JsonValue* version = doc.Find("numprobe_casts");
  if (version == nullptr || version->kind() != JsonValue::Kind::kInt) {
    return Status::Corrupt("no \"numprobe_casts\" version");
  }
  if (version->int_value() != kCastsFormatVersion) {
    return Status::Corrupt("unknown \"numprobe_casts\" version " +
                           std::to_string(version->int_value()));
  }
  const JsonValue* casts = doc.Find("casts");
  if (casts == nullptr || !casts->is_array()) return Status::Corrupt("no \"casts\" list");
  CastRecord record;
  record.casts.reserve(casts->array().size());
  for (const JsonValue& item : casts->array()) {
    auto note = ParseCastNote(item);
    if (!note) return Malformed(record.casts.size(), note.error().message());
    record.casts.push_back(std::move(*note));
  }
  return record;
}

}  // namespace

JsonValue CastNoteJson(std::string_view name, int64_t entries_before, JsonValue input,
                       JsonValue output, const std::vector<std::string>& stack) {
  JsonValue::Array frames;
  frames.reserve(stack.size());
  for (const std::string& f : stack) frames.push_back(JsonValue::String(f));
  return JsonValue::MakeObject({{"name", JsonValue::String(std::string(name))},
                                {"entries_before", JsonValue::Int(entries_before)},
                                {"input", std::move(input)},
                                {"output", std::move(output)},
                                {"stack", JsonValue::MakeArray(std::move(frames))}});
}

JsonValue CastRecordJson(JsonValue::Array casts) {
  return JsonValue::MakeObject({{"numprobe_casts", JsonValue::Int(kCastsFormatVersion)},
                                {"casts", JsonValue::MakeArray(std::move(casts))}});
}

Result<CastNote> ParseCastNote(const JsonValue& value) {
  if (!value.is_object()) return Status::Corrupt("not an object");
  CastNote note;
  const JsonValue* name = value.Find("name");
  if (name == nullptr || name->kind() != JsonValue::Kind::kString) {
    return Status::Corrupt("no name");
  }
  note.name = name->string_value();
  const JsonValue* before = value.Find("entries_before");
  if (before == nullptr || before->kind() != JsonValue::Kind::kInt || before->int_value() < 0) {
    return Status::Corrupt("no entries_before count");
  }
  note.entries_before = before->int_value();
  NUMPROBE_ASSIGN_OR_RETURN(note.input, ParseLeaf(value.Find("input"), "input"));
  NUMPROBE_ASSIGN_OR_RETURN(note.output, ParseLeaf(value.Find("output"), "output"));
  if (const JsonValue* stack = value.Find("stack"); stack != nullptr && stack->is_array()) {
    for (const JsonValue& f : stack->array()) {
      if (f.kind() != JsonValue::Kind::kString) return Status::Corrupt("a stack frame is not text");
      note.stack.push_back(f.string_value());
    }
  }
  return note;
}

Result<CastRecord> ParseCastsJson(std::string_view text) {
  NUMPROBE_ASSIGN_OR_RETURN(JsonValue doc, ParseJson(text));
  return FromJson(doc);
}

Result<std::optional<CastRecord>> ReadCasts(const std::filesystem::path& rank_dir) {
  const fs::path path = rank_dir / std::string(kCastsFileName);
  NUMPROBE_ASSIGN_OR_RETURN(auto journal, ReadJournalIfNewer(rank_dir));
  if (journal.has_value() && journal->casts.has_value()) {
    auto record = FromJson(CastRecordJson(journal->casts->array()));
    if (!record)
      return record.error().WithContext((rank_dir / std::string(kDumpJournalName)).string());
    return std::optional<CastRecord>(std::move(*record));
  }
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::optional<CastRecord>();
  NUMPROBE_ASSIGN_OR_RETURN(std::string text, detail::ReadTextFile(path, kMaxCastsBytes));
  auto record = ParseCastsJson(text);
  if (!record) return record.error().WithContext(path.string());
  return std::optional<CastRecord>(std::move(*record));
}

}  // namespace numprobe
