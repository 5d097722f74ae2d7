// A JSON value recorded flat: one token per value, in document order, its text in a reused arena.
// StreamJsonTape delivers each streamed member as a tape instead of a JsonValue tree: reading a
// large dump.json member by member then allocates nothing per value once the tape has grown to
// the largest member (a JsonValue tree allocated every key, string and container, which was most
// of compare's reading time on large statistics dumps). Values and numbers read as json.h says.
#ifndef NUMPROBE_CORE_JSON_TAPE_H_
#define NUMPROBE_CORE_JSON_TAPE_H_

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/json_value.h"

#include "core/json.h"

namespace numprobe {

// One value of a tape. A container's items or members follow it directly, each spanning its own
// subtree; a member carries its key. Valid while the callback it was given to runs.
class JsonTapeValue {
 public:
  class Children;

  JsonValue::Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == JsonValue::Kind::kNull; }
  bool is_object() const { return kind_ == JsonValue::Kind::kObject; }
  bool is_array() const { return kind_ == JsonValue::Kind::kArray; }
  bool is_string() const { return kind_ == JsonValue::Kind::kString; }
  // Each by its kind (the two share their bytes).
  bool bool_value() const { return integer_ != 0; }
  int64_t int_value() const { return integer_; }
  double double_value() const { return number_; }
  std::string_view string_value() const { return text_; }
  std::string_view big_int_digits() const { return text_; }
  std::string_view key() const { return key_; }  // a member's key ("" for an item or the root)

  // Items of an array, members of an object (empty for a scalar).
  Children children() const;
  // The member `key` of an object, or nullptr (also when this is not an object).
  const JsonTapeValue* Find(std::string_view key) const;
  // Some object in this value repeats a key. Python's dict keeps the first position and the last
  // value; a tape keeps both members, so a reader that needs dict semantics converts such a value
  // with ToJsonValue.
  bool repeated_keys() const { return repeated_keys_; }

  const JsonTapeValue* next() const { return this + span_; }

 private:
  friend class JsonTapeBuilder;
  friend class JsonTapeBatch;
  JsonValue::Kind kind_ = JsonValue::Kind::kNull;
  bool repeated_keys_ = false;
  uint32_t span_ = 1;   // tokens in this subtree, itself included
  uint32_t count_ = 0;  // items or members
  // A bool or int, or a double, by kind_: one member of the two, so that a token (copied for
  // every value of a large dump) is 56 bytes, not 64.
  union {
    int64_t integer_ = 0;
    double number_;
  };
  std::string_view text_;
  std::string_view key_;
};

static_assert(sizeof(JsonTapeValue) <= 56);

class JsonTapeValue::Children {
 public:
  class Iterator {
   public:
    explicit Iterator(const JsonTapeValue* at) : at_(at) {}
    const JsonTapeValue& operator*() const { return *at_; }
    Iterator& operator++() {
      at_ = at_->next();
      return *this;
    }
    bool operator!=(const Iterator& other) const { return at_ != other.at_; }

   private:
    const JsonTapeValue* at_;
  };
  Children(const JsonTapeValue* first, const JsonTapeValue* end, size_t count)
      : first_(first), end_(end), count_(count) {}
  Iterator begin() const { return Iterator(first_); }
  Iterator end() const { return Iterator(end_); }
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  const JsonTapeValue& front() const { return *first_; }

 private:
  const JsonTapeValue* first_;
  const JsonTapeValue* end_;
  size_t count_;
};

inline JsonTapeValue::Children JsonTapeValue::children() const {
  return Children(this + 1, next(), count_);
}

// The same value as a JsonValue (repeated keys as Python's dict has them).
JsonValue ToJsonValue(const JsonTapeValue& value);

// StreamJson's spec with tape values.
struct JsonTapeStreamSpec {
  std::vector<std::string> stream_path;
  bool* reached_stream_object = nullptr;
  std::function<Status(std::string_view key, const JsonTapeValue& value, uint64_t offset)>
      on_member;
  std::function<Status(std::string_view key, const JsonTapeValue& value)> on_root_member;
};

// StreamJson and StreamJsonFile (same errors, same limits) delivering tapes.
Status StreamJsonTape(std::span<const char> bytes, const JsonTapeStreamSpec& spec,
                      const JsonReadOptions& options = {});
Status StreamJsonFileTape(const std::filesystem::path& path, const JsonTapeStreamSpec& spec,
                          const JsonReadOptions& options = {});

// StreamJsonFileTape on two threads: this one parses, a second one runs the callbacks (both
// kinds, in document order, a few hundred members behind the parser on copies of their tapes).
// For a large file read by one caller: parsing and what the callbacks build from the tapes take
// about as long as each other. The same results and errors as StreamJsonFileTape: a callback's
// error wins over a parse error later in the file.
Status StreamJsonFileTapeOnTwoThreads(const std::filesystem::path& path,
                                      const JsonTapeStreamSpec& spec,
                                      const JsonReadOptions& options = {});

}  // namespace numprobe

#endif  // NUMPROBE_CORE_JSON_TAPE_H_
