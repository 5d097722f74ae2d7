// stack.json and construct.json, read streaming like dump.json.
#include <string>
#include <unordered_set>
#include <utility>

#include "numprobe/buffer.h"
#include "numprobe/dump.h"
#include "numprobe/json_value.h"

#include "core/json.h"
#include "msprobe/dump_journal.h"

namespace numprobe {
namespace {

// A list of strings; other elements (msprobe never writes them) are skipped.
std::vector<std::string> StringList(const JsonValue& n) {
  std::vector<std::string> out;
  if (n.is_string()) {
    out.push_back(n.string_value());  // a legacy stack written as one string
    return out;
  }
  if (!n.is_array()) return out;
  out.reserve(n.array().size());
  for (const JsonValue& item : n.array()) {
    if (item.is_string()) out.push_back(item.string_value());
  }
  return out;
}

// Python's truth value of a container (stack.json's values are lists).
bool NonEmpty(const JsonValue& v) {
  if (v.is_array()) return !v.array().empty();
  if (v.is_object()) return !v.object().empty();
  return false;
}


Result<std::shared_ptr<const Buffer>> Map(const std::filesystem::path& path) {
  auto buffer = Buffer::MapFile(path);
  if (!buffer) return buffer.error().WithContext(path.string());
  return std::shared_ptr<const Buffer>(*buffer);
}

std::span<const char> Chars(const Buffer& buffer) {
  return {reinterpret_cast<const char*>(buffer.data()), buffer.size()};
}

}  // namespace

const std::vector<std::string>* StackMap::Find(std::string_view api) const {
  const auto it = by_api_.find(std::string(api));
  return it == by_api_.end() ? nullptr : &stacks_[it->second];
}

void StackMap::Add(const std::string& api, std::vector<std::string> lines) {
  by_api_[api] = static_cast<uint32_t>(stacks_.size());
  stacks_.push_back(std::move(lines));
}

void StackMap::AddShared(const std::vector<std::string>& apis, std::vector<std::string> lines) {
  const auto id = static_cast<uint32_t>(stacks_.size());
  stacks_.push_back(std::move(lines));
  for (const std::string& api : apis) by_api_[api] = id;
}

namespace {

// msprobe's load_stack_json: the de-duplicated form is recognised by a truthy member "0" whose
// value is [[apis], [lines]]; anything else is the legacy {api: lines}. The decision needs the
// whole file, so members are kept in both readings until the end.
class StackReader {
 public:
  void Member(std::string_view key, const JsonValue& value) {
    if (key == "0" && NonEmpty(value)) new_form_ = true;
    if (value.is_array() && value.array().size() == 2 && value.array()[0].is_array()) {
      shared_.AddShared(StringList(value.array()[0]), StringList(value.array()[1]));
    }
    legacy_.Add(std::string(key), StringList(value));
  }
  StackMap Take() { return new_form_ ? std::move(shared_) : std::move(legacy_); }

 private:
  StackMap shared_;
  StackMap legacy_;
  bool new_form_ = false;
};

}  // namespace

Result<StackMap> ParseStackJson(std::span<const char> bytes) {
  StackReader reader;
  JsonStreamSpec spec;
  spec.on_member = [&](std::string_view key, JsonValue&& value, uint64_t) -> Status {
    reader.Member(key, value);
    return Status::Ok();
  };
  NUMPROBE_RETURN_IF_ERROR(StreamJson(bytes, spec, kPythonJson));
  return reader.Take();
}

Result<StackMap> ReadStackJson(const std::filesystem::path& path) {
  if (path.filename() == "stack.json") {
    NUMPROBE_ASSIGN_OR_RETURN(auto journal, ReadJournalIfNewer(path.parent_path()));
    if (journal.has_value()) {
      // A killed run: the journal's table is read as the file would have been.
      StackReader reader;
      for (const auto& [key, value] : journal->stack.object()) reader.Member(key, value);
      return reader.Take();
    }
  }
  NUMPROBE_ASSIGN_OR_RETURN(auto buffer, Map(path));
  if (buffer->size() == 0) return StackMap();  // extra_info: false leaves it empty
  auto stack = ParseStackJson(Chars(*buffer));
  if (!stack) return stack.error().WithContext(path.string());
  return stack;
}

std::vector<std::string> ConstructMap::ModulePath(std::string_view node) const {
  std::vector<std::string> path;
  std::unordered_set<std::string> seen;
  std::string current(node);
  while (true) {
    const auto it = parent_.find(current);
    if (it == parent_.end() || it->second.empty()) break;
    if (!seen.insert(it->second).second) break;  // a cycle in a hostile file
    path.push_back(it->second);
    current = it->second;
  }
  return {path.rbegin(), path.rend()};
}

const std::string* ConstructMap::Parent(std::string_view node) const {
  const auto it = parent_.find(std::string(node));
  return it == parent_.end() ? nullptr : &it->second;
}

Result<ConstructMap> ParseConstructJson(std::span<const char> bytes) {
  ConstructMap map;
  JsonStreamSpec spec;
  spec.on_member = [&](std::string_view key, JsonValue&& value, uint64_t) -> Status {
    map.SetParent(std::string(key), value.is_string() ? value.string_value() : std::string());
    return Status::Ok();
  };
  NUMPROBE_RETURN_IF_ERROR(StreamJson(bytes, spec, kPythonJson));
  return map;
}

Result<ConstructMap> ReadConstructJson(const std::filesystem::path& path) {
  if (path.filename() == "construct.json") {
    NUMPROBE_ASSIGN_OR_RETURN(auto journal, ReadJournalIfNewer(path.parent_path()));
    if (journal.has_value()) {
      // A killed run: the journal's table is read as the file would have been.
      ConstructMap map;
      for (const auto& [key, value] : journal->construct.object()) {
        map.SetParent(key, value.is_string() ? value.string_value() : std::string());
      }
      return map;
    }
  }
  NUMPROBE_ASSIGN_OR_RETURN(auto buffer, Map(path));
  if (buffer->size() == 0) return ConstructMap();
  auto map = ParseConstructJson(Chars(*buffer));
  if (!map) return map.error().WithContext(path.string());
  return map;
}

}  // namespace numprobe
