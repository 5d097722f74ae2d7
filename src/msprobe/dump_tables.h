// The three in-memory tables behind a rank folder's JSON files, shared by the Dumper (which fills
// them as records arrive) and the journal reader (which replays records into them): entries of
// dump.json in first-seen order with dict-update merging, de-duplicated stacks, and construct.
#ifndef NUMPROBE_MSPROBE_DUMP_TABLES_H_
#define NUMPROBE_MSPROBE_DUMP_TABLES_H_

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "numprobe/json_value.h"

namespace numprobe::detail {

class EntryTable {
 public:
  // Merges `part` (an object) into entry `name`, creating it at the end if new.
  void Merge(std::string_view name, JsonValue part);
  size_t size() const { return entries_.size(); }
  // The position of entry `name`, or nullopt.
  std::optional<size_t> IndexOf(std::string_view name) const {
    const auto it = index_.find(std::string(name));
    return it == index_.end() ? std::nullopt : std::optional<size_t>(it->second);
  }
  void Clear();
  // {"task":..,"level":..,"framework":..,"dump_data_dir":..,"data":{...}}; `header` holds the
  // first four members.
  JsonValue ToDumpJson(const JsonValue& header) const;
  // ToJson(ToDumpJson(header), indent) without copying the entries: they are lent to the document
  // being serialized and taken back (a step's records would otherwise be copied at every write).
  std::string DumpJsonText(const JsonValue& header, int indent);

 private:
  std::vector<std::pair<std::string, JsonValue>> entries_;
  std::unordered_map<std::string, size_t> index_;
};

class StackTable {
 public:
  // Files `name` under its frames' group (a new one for frames not seen yet); returns the group's
  // index, in order of first appearance.
  size_t Add(std::string_view name, std::vector<std::string> frames);
  // Files `name` under group `group` (an index Add returned); false when there is no such group.
  bool AddToGroup(std::string_view name, size_t group);
  size_t group_count() const { return groups_.size(); }
  void Clear();
  // {"0": [[names...], [frames...]], ...}
  JsonValue ToJson() const;

 private:
  std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> groups_;
  std::unordered_map<std::string, size_t> index_;  // frames joined by '\0'
};

class ConstructTable {
 public:
  // Sets `name`'s parent; a name keeps its first position (Python dict semantics).
  void Add(std::string_view name, std::optional<std::string> parent);
  void Clear();
  const std::optional<std::string>* Find(std::string_view name) const;
  JsonValue ToJson() const;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> nodes_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace numprobe::detail

#endif  // NUMPROBE_MSPROBE_DUMP_TABLES_H_
