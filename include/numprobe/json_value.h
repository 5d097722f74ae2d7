// JsonValue: numprobe's one JSON document model (core/json.h reads every JSON file into it). Objects
// keep insertion order; numbers keep the distinction Python's json makes: an int (kInt, or kBigInt
// with its digits when it does not fit 64 bits) or a float (kDouble). Used to build msprobe's
// dump.json, stack.json and construct.json and to read them, the capture journal and the configs.
// Serialization reproduces Python's json.dumps byte for byte (msprobe writes its files with it):
// floats as Python's repr (shortest round trip, "1e-05", "1.0"), non-finite numbers as the bare
// tokens NaN / Infinity / -Infinity, non-ASCII as \uXXXX, and `indent` like json.dumps(indent=N).
// Values own their children; copying a value copies the whole tree.
#ifndef NUMPROBE_JSON_VALUE_H_
#define NUMPROBE_JSON_VALUE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "numprobe/result.h"

namespace numprobe {

class JsonValue {
 public:
  enum class Kind : uint8_t { kNull, kBool, kInt, kDouble, kString, kArray, kObject, kBigInt };
  using Array = std::vector<JsonValue>;
  using Member = std::pair<std::string, JsonValue>;
  using Object = std::vector<Member>;

  JsonValue() = default;  // null
  static JsonValue Bool(bool value) { return Make<bool>(value); }
  static JsonValue Int(int64_t value) { return Make<int64_t>(value); }
  static JsonValue Double(double value) { return Make<double>(value); }
  static JsonValue String(std::string value) { return Make<std::string>(std::move(value)); }
  // An integer beyond 64 bits, as its decimal digits ("-123456789012345678901").
  static JsonValue BigInt(std::string digits) { return Make<BigDigits>(BigDigits{std::move(digits)}); }
  static JsonValue MakeArray(Array items = {}) { return Make<Array>(std::move(items)); }
  static JsonValue MakeObject(Object members = {}) { return Make<Object>(std::move(members)); }

  Kind kind() const { return static_cast<Kind>(storage_.index()); }
  bool is_null() const { return kind() == Kind::kNull; }
  bool is_object() const { return kind() == Kind::kObject; }
  bool is_array() const { return kind() == Kind::kArray; }
  bool is_string() const { return kind() == Kind::kString; }
  bool is_number() const {
    return kind() == Kind::kInt || kind() == Kind::kDouble || kind() == Kind::kBigInt;
  }

  // Accessors; calling one of the wrong kind is a bug (std::get aborts through bad_variant_access).
  bool bool_value() const { return std::get<bool>(storage_); }
  int64_t int_value() const { return std::get<int64_t>(storage_); }
  double double_value() const { return std::get<double>(storage_); }
  const std::string& string_value() const { return std::get<std::string>(storage_); }
  const std::string& big_int_digits() const { return std::get<BigDigits>(storage_).digits; }
  // Any number as a double (a big integer correctly rounded, possibly to +-inf).
  double number_value() const;
  Array& array() { return std::get<Array>(storage_); }
  const Array& array() const { return std::get<Array>(storage_); }
  Object& object() { return std::get<Object>(storage_); }
  const Object& object() const { return std::get<Object>(storage_); }

  // Object helpers. Find returns nullptr when absent (or when this is not an object).
  const JsonValue* Find(std::string_view key) const;
  JsonValue* Find(std::string_view key);
  // Replaces the value of `key` in place, or appends it (Python's d[key] = value).
  void Set(std::string key, JsonValue value);
  // Python's dict.update: every member of `other` (an object) is Set on this object.
  void Update(JsonValue other);

 private:
  struct BigDigits {
    std::string digits;
  };
  using Storage =
      std::variant<std::monostate, bool, int64_t, double, std::string, Array, Object, BigDigits>;
  template <typename T, typename V>
  static JsonValue Make(V&& value) {
    JsonValue out;
    out.storage_.emplace<T>(std::forward<V>(value));
    return out;
  }
  Storage storage_;
};

// Python's repr() of a float: "2.558138370513916", "1e-05", "1e+16", "-0.0", "nan", "inf".
std::string PythonFloatRepr(double value);

// Appends `value` as json.dumps(value, indent=indent) writes it; indent < 0 is the compact form
// json.dumps(value, separators=(",", ":")) used for journal lines.
void AppendJson(const JsonValue& value, int indent, std::string* out);
std::string ToJson(const JsonValue& value, int indent);

}  // namespace numprobe

#endif  // NUMPROBE_JSON_VALUE_H_
