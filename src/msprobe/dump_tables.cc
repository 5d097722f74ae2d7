#include "msprobe/dump_tables.h"

namespace numprobe::detail {

void EntryTable::Merge(std::string_view name, JsonValue part) {
  std::string key(name);
  auto it = index_.find(key);
  if (it == index_.end()) {
    index_.emplace(key, entries_.size());
    JsonValue value = JsonValue::MakeObject();
    value.Update(std::move(part));
    entries_.emplace_back(std::move(key), std::move(value));
    return;
  }
  entries_[it->second].second.Update(std::move(part));
}

void EntryTable::Clear() {
  entries_.clear();
  index_.clear();
}

JsonValue EntryTable::ToDumpJson(const JsonValue& header) const {
  JsonValue out = header;
  JsonValue::Object data;
  data.reserve(entries_.size());
  for (const auto& [name, value] : entries_) data.emplace_back(name, value);
  out.Set("data", JsonValue::MakeObject(std::move(data)));
  return out;
}

std::string EntryTable::DumpJsonText(const JsonValue& header, int indent) {
  JsonValue out = header;
  out.Set("data", JsonValue::MakeObject(std::move(entries_)));
  std::string text = ToJson(out, indent);
  entries_ = std::move(out.Find("data")->object());
  return text;
}

size_t StackTable::Add(std::string_view name, std::vector<std::string> frames) {
  std::string key;
  for (const std::string& f : frames) {
    key += f;
    key.push_back('\0');
  }
  auto it = index_.find(key);
  if (it == index_.end()) {
    index_.emplace(std::move(key), groups_.size());
    groups_.emplace_back(std::vector<std::string>{std::string(name)}, std::move(frames));
    return groups_.size() - 1;
  }
  groups_[it->second].first.emplace_back(name);
  return it->second;
}

bool StackTable::AddToGroup(std::string_view name, size_t group) {
  if (group >= groups_.size()) return false;
  groups_[group].first.emplace_back(name);
  return true;
}

void StackTable::Clear() {
  groups_.clear();
  index_.clear();
}

JsonValue StackTable::ToJson() const {
  JsonValue::Object out;
  out.reserve(groups_.size());
  for (size_t i = 0; i < groups_.size(); ++i) {
    JsonValue::Array names;
    for (const std::string& n : groups_[i].first) names.push_back(JsonValue::String(n));
    JsonValue::Array frames;
    for (const std::string& f : groups_[i].second) frames.push_back(JsonValue::String(f));
    out.emplace_back(std::to_string(i),
                     JsonValue::MakeArray({JsonValue::MakeArray(std::move(names)),
                                           JsonValue::MakeArray(std::move(frames))}));
  }
  return JsonValue::MakeObject(std::move(out));
}

void ConstructTable::Add(std::string_view name, std::optional<std::string> parent) {
  std::string key(name);
  auto it = index_.find(key);
  if (it != index_.end()) {
    nodes_[it->second].second = std::move(parent);
    return;
  }
  index_.emplace(key, nodes_.size());
  nodes_.emplace_back(std::move(key), std::move(parent));
}

void ConstructTable::Clear() {
  nodes_.clear();
  index_.clear();
}

const std::optional<std::string>* ConstructTable::Find(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &nodes_[it->second].second;
}

JsonValue ConstructTable::ToJson() const {
  JsonValue::Object out;
  out.reserve(nodes_.size());
  for (const auto& [name, parent] : nodes_) {
    out.emplace_back(name, parent ? JsonValue::String(*parent) : JsonValue());
  }
  return JsonValue::MakeObject(std::move(out));
}

}  // namespace numprobe::detail
