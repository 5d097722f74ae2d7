// stack.json and construct.json, read streaming like dump.json.
#include <string>
#include <unordered_set>
#include <utility>

#include "numprobe/buffer.h"
#include "numprobe/dump.h"
#include "numprobe/json_value.h"

#include "core/json_stream.h"
#include "msprobe/dump_journal.h"

namespace numprobe {
namespace {

using detail::JNode;

// A list of strings; other elements (msprobe never writes them) are skipped.
std::vector<std::string> StringList(const JNode& n) {
  std::vector<std::string> out;
  if (n.is_string()) {
    out.push_back(n.text);  // a legacy stack written as one string
    return out;
  }
  if (!n.is_array()) return out;
  out.reserve(n.items.size());
  for (const JNode& item : n.items) {
    if (item.is_string()) out.push_back(item.text);
  }
  return out;
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

Result<StackMap> ParseStackJson(std::span<const char> bytes) {
  // msprobe's load_stack_json: the de-duplicated form is recognised by a truthy member "0" whose
  // value is [[apis], [lines]]; anything else is the legacy {api: lines}. The decision needs the
  // whole file, so members are kept in both readings until the end.
  StackMap shared;
  StackMap legacy;
  bool new_form = false;
  detail::JsonStreamSpec spec;
  spec.on_member = [&](std::string_view key, JNode&& value, uint64_t) -> Status {
    if (key == "0" && !value.items.empty()) new_form = true;
    if (value.is_array() && value.items.size() == 2 && value.items[0].is_array()) {
      std::vector<std::string> apis = StringList(value.items[0]);
      shared.AddShared(apis, StringList(value.items[1]));
    }
    legacy.Add(std::string(key), StringList(value));
    return Status::Ok();
  };
  NUMPROBE_RETURN_IF_ERROR(detail::StreamJson(bytes, spec));
  return new_form ? std::move(shared) : std::move(legacy);
}

Result<StackMap> ReadStackJson(const std::filesystem::path& path) {
  if (path.filename() == "stack.json") {
    NUMPROBE_ASSIGN_OR_RETURN(auto journal, ReadJournalIfNewer(path.parent_path()));
    if (journal.has_value()) return ParseStackJson(ToJson(journal->stack, 0));
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
  detail::JsonStreamSpec spec;
  spec.on_member = [&](std::string_view key, JNode&& value, uint64_t) -> Status {
    map.SetParent(std::string(key), value.is_string() ? value.text : std::string());
    return Status::Ok();
  };
  NUMPROBE_RETURN_IF_ERROR(detail::StreamJson(bytes, spec));
  return map;
}

Result<ConstructMap> ReadConstructJson(const std::filesystem::path& path) {
  if (path.filename() == "construct.json") {
    NUMPROBE_ASSIGN_OR_RETURN(auto journal, ReadJournalIfNewer(path.parent_path()));
    if (journal.has_value()) return ParseConstructJson(ToJson(journal->construct, 0));
  }
  NUMPROBE_ASSIGN_OR_RETURN(auto buffer, Map(path));
  if (buffer->size() == 0) return ConstructMap();
  auto map = ParseConstructJson(Chars(*buffer));
  if (!map) return map.error().WithContext(path.string());
  return map;
}

}  // namespace numprobe
