// Reading the capture journal back into dump.json / stack.json / construct.json.
#include "msprobe/dump_journal.h"

#include <fstream>
#include <sstream>

#include "msprobe/dump_tables.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

Result<std::string> ReadWholeFile(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::NotFound(path.string() + ": not found");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path.string() + ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IoError(path.string() + ": read failed");
  return text.str();
}

const std::string* StringMember(const JsonValue& v, std::string_view key) {
  const JsonValue* m = v.Find(key);
  return (m != nullptr && m->kind() == JsonValue::Kind::kString) ? &m->string_value() : nullptr;
}

}  // namespace

Result<RecoveredDump> ReadDumpJournal(const std::filesystem::path& path) {
  NUMPROBE_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  // A journal whose writer died still has the zero-filled tail of its last growth step.
  if (const size_t nul = text.find('\0'); nul != std::string::npos) text.resize(nul);
  RecoveredDump out;
  detail::EntryTable entries;
  detail::StackTable stacks;
  detail::ConstructTable construct;
  JsonValue header = JsonValue::MakeObject({{"task", JsonValue()},
                                            {"level", JsonValue()},
                                            {"framework", JsonValue()},
                                            {"dump_data_dir", JsonValue()}});
  JsonValue debug = JsonValue::MakeObject();
  size_t pos = 0;
  int64_t line_no = 0;
  bool last_was_write_marker = false;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    const bool complete = end != std::string::npos;
    if (!complete) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = complete ? end + 1 : end;
    ++line_no;
    if (line.empty()) continue;
    auto parsed = ParseJson(line);
    if (!parsed || !parsed->is_object()) {
      // Only the last line may be cut short by a crash; anything earlier is damage.
      if (!complete) {
        out.truncated_tail = true;
        break;
      }
      return Status::Corrupt("journal line " + std::to_string(line_no) + " is not a JSON object" +
                             (parsed ? std::string() : ": " + parsed.error().message()));
    }
    if (!complete) {
      // A final line without its newline was not finished either (the writer ends every line).
      out.truncated_tail = true;
      break;
    }
    JsonValue& rec = *parsed;
    const std::string* kind = StringMember(rec, "k");
    if (kind == nullptr) {
      return Status::Corrupt("journal line " + std::to_string(line_no) + " has no record kind");
    }
    last_was_write_marker = false;
    if (*kind == "h") {
      for (const char* key : {"task", "level", "framework", "dump_data_dir"}) {
        if (const JsonValue* v = rec.Find(key)) header.Set(key, *v);
      }
    } else if (*kind == "d") {
      const std::string* name = StringMember(rec, "n");
      JsonValue* part = rec.Find("v");
      if (name == nullptr || part == nullptr || !part->is_object()) {
        return Status::Corrupt("journal line " + std::to_string(line_no) +
                               ": malformed data record");
      }
      entries.Merge(*name, std::move(*part));
      ++out.records;
    } else if (*kind == "s") {
      const std::string* name = StringMember(rec, "n");
      const JsonValue* frames = rec.Find("f");
      if (name == nullptr || frames == nullptr || !frames->is_array()) {
        return Status::Corrupt("journal line " + std::to_string(line_no) +
                               ": malformed stack record");
      }
      std::vector<std::string> f;
      for (const JsonValue& item : frames->array()) {
        if (item.kind() != JsonValue::Kind::kString) {
          return Status::Corrupt("journal line " + std::to_string(line_no) +
                                 ": stack frame is not a string");
        }
        f.push_back(item.string_value());
      }
      stacks.Add(*name, std::move(f));
    } else if (*kind == "c") {
      const std::string* name = StringMember(rec, "n");
      if (name == nullptr) {
        return Status::Corrupt("journal line " + std::to_string(line_no) +
                               ": malformed construct record");
      }
      const std::string* parent = StringMember(rec, "p");
      construct.Add(*name, parent != nullptr ? std::optional<std::string>(*parent) : std::nullopt);
    } else if (*kind == "g") {
      const std::string* name = StringMember(rec, "n");
      JsonValue* value = rec.Find("v");
      if (name == nullptr || value == nullptr) {
        return Status::Corrupt("journal line " + std::to_string(line_no) +
                               ": malformed debug record");
      }
      debug.Set(*name, std::move(*value));
    } else if (*kind == "w") {
      last_was_write_marker = true;
    } else {
      return Status::Corrupt("journal line " + std::to_string(line_no) + ": unknown record kind '" +
                             *kind + "'");
    }
  }
  out.dump_json_current = last_was_write_marker;
  out.dump = entries.ToDumpJson(header);
  out.stack = stacks.ToJson();
  out.construct = construct.ToJson();
  out.debug = std::move(debug);
  return out;
}

bool HasDumpJournal(const std::filesystem::path& rank_dir) {
  std::error_code ec;
  return fs::is_regular_file(rank_dir / std::string(kDumpJournalName), ec);
}

Result<std::optional<RecoveredDump>> ReadJournalIfNewer(const std::filesystem::path& rank_dir) {
  if (!HasDumpJournal(rank_dir)) return std::optional<RecoveredDump>();
  const fs::path journal = rank_dir / std::string(kDumpJournalName);
  auto recovered = ReadDumpJournal(journal);
  if (!recovered) return recovered.error().WithContext(journal.string());
  std::error_code ec;
  if (fs::exists(rank_dir / "dump.json", ec) && recovered->dump_json_current) {
    return std::optional<RecoveredDump>();
  }
  return std::optional<RecoveredDump>(std::move(*recovered));
}

Result<DumpJsonText> LoadDumpJson(const std::filesystem::path& rank_dir) {
  const fs::path dump_json = rank_dir / "dump.json";
  std::error_code ec;
  if (!fs::exists(dump_json, ec) && !HasDumpJournal(rank_dir)) {
    return Status::NotFound(rank_dir.string() + ": no dump.json and no " +
                            std::string(kDumpJournalName));
  }
  DumpJsonText out;
  NUMPROBE_ASSIGN_OR_RETURN(auto recovered, ReadJournalIfNewer(rank_dir));
  if (recovered.has_value()) {
    out.text = ToJson(recovered->dump, 1);
    out.from_journal = true;
    out.truncated_tail = recovered->truncated_tail;
    return out;
  }
  NUMPROBE_ASSIGN_OR_RETURN(out.text, ReadWholeFile(dump_json));
  return out;
}

Result<JournalText> ReadDumpJournalText(const std::filesystem::path& path) {
  NUMPROBE_ASSIGN_OR_RETURN(RecoveredDump recovered, ReadDumpJournal(path));
  JournalText out;
  out.dump = ToJson(recovered.dump, 1);
  out.stack = ToJson(recovered.stack, 1);
  out.construct = ToJson(recovered.construct, 1);
  out.debug = ToJson(recovered.debug, 1);
  out.records = recovered.records;
  out.dump_json_current = recovered.dump_json_current;
  out.truncated_tail = recovered.truncated_tail;
  return out;
}

}  // namespace numprobe
