// Streaming reads of the JSON files msprobe writes (dump.json, stack.json, construct.json,
// debug.json). RapidJSON's SAX reader walks the bytes once; only one member of the streamed object
// is held in memory at a time, as a small JNode tree. Numbers keep their text so that integers
// stay integers and floats can be re-read exactly as Python's json module reads them; the bare
// NaN, Infinity and -Infinity tokens Python writes are accepted.
#ifndef NUMPROBE_CORE_JSON_STREAM_H_
#define NUMPROBE_CORE_JSON_STREAM_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/status.h"

namespace numprobe::detail {

// One parsed JSON value. Objects keep their members in file order; a repeated key replaces the
// earlier value in place, as Python's json does. Numbers are read as Python's json reads them: a
// literal with a fraction, an exponent, NaN or Infinity is a float (correctly rounded), anything
// else an integer (with its digits kept when it does not fit 64 bits).
struct JNode {
  enum class Kind : uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  bool is_float = false;          // kNumber: a float literal
  bool big = false;               // kNumber: an integer beyond 64 bits (digits in `text`)
  double number = 0;              // kNumber, is_float
  int64_t integer = 0;            // kNumber, !is_float && !big
  std::string text;               // string value, or a big integer's digits
  std::vector<std::string> keys;  // object member names, parallel to items
  std::vector<JNode> items;       // array elements or object member values

  bool is_object() const { return kind == Kind::kObject; }
  bool is_array() const { return kind == Kind::kArray; }
  bool is_string() const { return kind == Kind::kString; }
  // The member named `key` of an object, or nullptr.
  const JNode* Find(std::string_view key) const;
};

// Limits for one streamed file.
inline constexpr int kMaxJsonDepth = 400;  // msprobe's own recursion limit

struct JsonStreamSpec {
  // Keys leading from the root object to the object whose members are streamed one at a time
  // ({"data"} for dump.json; empty = the root's own members).
  std::vector<std::string> stream_path;
  // Set to true when the streamed object was found (may be null).
  bool* reached_stream_object = nullptr;
  // Called for each streamed member, in file order.
  std::function<Status(std::string_view key, JNode&& value, uint64_t offset)> on_member;
  // Called for root members that are not on the stream path (may be empty).
  std::function<Status(std::string_view key, JNode&& value)> on_root_member;
};

// Parses `bytes`. Malformed or truncated JSON: kCorrupt "malformed JSON at byte N: <reason>";
// a root that is not an object: kCorrupt; nesting deeper than kMaxJsonDepth: kOutOfRange. Errors
// returned by the callbacks are passed through.
Status StreamJson(std::span<const char> bytes, const JsonStreamSpec& spec);

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_JSON_STREAM_H_
