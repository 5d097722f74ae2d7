// The one JSON writer of numprobe, and the one place that says how each kind of file spells the
// numbers JSON lacks (NaN, +inf, -inf). Every JSON output is written either by JsonWriter below (a
// thin class over RapidJSON's Writer / PrettyWriter) or, for the files msprobe and Python's json
// write, by JsonValue's serializer (ToJson / AppendJson in numprobe/json_value.h, which reproduces
// json.dumps byte for byte).
//
// | file kind           | files                                                  | NaN / +inf / -inf        |
// |---------------------|--------------------------------------------------------|--------------------------|
// | kMsprobe            | dump.json, stack.json, construct.json, debug.json,     | bare NaN, Infinity,      |
// |                     | the capture journal (JsonValue's serializer), and the  | -Infinity (Python's json)|
// |                     | dump entries copied into anomaly_analyze_*.json        |                          |
// | kResult             | numprobe's own results: divergence_*.json,             | "NaN", "Infinity",       |
// |                     | diff_analyze_*.json, scan_*.json, inspect --json,      | "-Infinity" (strings: any|
// |                     | compare_result_*.json, config-check's JSON, the        | JSON parser reads them)  |
// |                     | safetensors header, precheck_*.json,                   |                          |
// |                     | precheck_compare_*.json and the precheck plan's JSON   |                          |
// | kUi                 | serve's API answers and report.html's embedded data    | "nan", "inf", "-inf" (as |
// |                     |                                                        | the compare CSV spells   |
// |                     |                                                        | them; JSON.parse rejects |
// |                     |                                                        | bare tokens)             |
// | kDiff               | diff_*.json                                            | null: loses which of the |
// |                     |                                                        | three it was (kept as    |
// |                     |                                                        | released; see issue 11)  |
//
// The compare JSON twin, config-check's files and the safetensors header never hold a
// non-finite number (the twin's cells are texts or Python reprs of finite numbers), so their kind
// only matters if that changes.
#ifndef NUMPROBE_CORE_JSON_WRITER_H_
#define NUMPROBE_CORE_JSON_WRITER_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include <rapidjson/prettywriter.h>
#include <rapidjson/writer.h>

#include "numprobe/json_value.h"

namespace numprobe {

enum class JsonFileKind : uint8_t { kMsprobe, kResult, kUi, kDiff };

// `s` as a JSON string exactly as JsonWriter::String writes it (RapidJSON's escapes: \" \\ \b \f
// \n \r \t, other control bytes as \u00XX in upper-case hex, every other byte as it is), for
// a caller that assembles a large raw value (RawArray) faster than value by value.
inline void AppendJsonWriterString(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out->push_back('"');
  size_t plain = 0;  // start of the bytes not yet appended
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out->append(s.substr(plain, i - plain));
    plain = i + 1;
    out->push_back('\\');
    static constexpr std::string_view kShort("\"\\\b\f\n\r\t", 7);  // written as \ and ...
    static constexpr std::string_view kShortAs = "\"\\bfnrt";      // ... its letter
    const size_t k = kShort.find(static_cast<char>(c));
    if (k != std::string_view::npos) {
      out->push_back(kShortAs[k]);
    } else {
      out->append("u00");
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
    }
  }
  out->append(s.substr(plain));
  out->push_back('"');
}

// JsonWriter<Stream> writes compact JSON to a RapidJSON output stream (StringBuffer,
// FileWriteStream, or any class with Put/Flush); JsonWriter<Stream, true> writes RapidJSON's pretty
// form (4-space indent). With kValidateUtf8, String and Key refuse (return false) text that is not
// UTF-8. Every call returns false when the value could not be written.
template <typename Stream, bool kPretty = false, bool kValidateUtf8 = false>
class JsonWriter {
  static constexpr unsigned kFlags =
      kValidateUtf8 ? rapidjson::kWriteValidateEncodingFlag : rapidjson::kWriteDefaultFlags;
  using Base =
      std::conditional_t<kPretty,
                         rapidjson::PrettyWriter<Stream, rapidjson::UTF8<>, rapidjson::UTF8<>,
                                                 rapidjson::CrtAllocator, kFlags>,
                         rapidjson::Writer<Stream, rapidjson::UTF8<>, rapidjson::UTF8<>,
                                           rapidjson::CrtAllocator, kFlags>>;

 public:
  JsonWriter(Stream& stream, JsonFileKind kind) : w_(stream), kind_(kind) {}

  // Starts over on `stream` (a writer reused for several documents).
  void Reset(Stream& stream) { w_.Reset(stream); }
  // The pretty form's indent (RapidJSON's default: 4 spaces).
  void SetIndent(char c, unsigned count) requires kPretty { w_.SetIndent(c, count); }

  bool Null() { return w_.Null(); }
  bool Bool(bool b) { return w_.Bool(b); }
  bool Int(int v) { return w_.Int(v); }
  bool Uint(unsigned v) { return w_.Uint(v); }
  bool Int64(int64_t v) { return w_.Int64(v); }
  bool Uint64(uint64_t v) { return w_.Uint64(v); }
  // A finite number as RapidJSON writes it (shortest round trip); NaN and +-inf as the file
  // kind spells them (the table above).
  bool Double(double v) {
    if (std::isfinite(v)) return w_.Double(v);
    const bool nan = std::isnan(v);
    const bool negative = !nan && v < 0;
    switch (kind_) {
      case JsonFileKind::kMsprobe:
        return RawNumber(nan ? "NaN" : (negative ? "-Infinity" : "Infinity"));
      case JsonFileKind::kResult:
        return String(nan ? "NaN" : (negative ? "-Infinity" : "Infinity"));
      case JsonFileKind::kUi:
        return String(nan ? "nan" : (negative ? "-inf" : "inf"));
      case JsonFileKind::kDiff:
        return Null();
    }
    return Null();
  }
  bool String(std::string_view s) {
    return w_.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  }
  bool Key(std::string_view s) {
    return w_.Key(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  }
  bool StartObject() { return w_.StartObject(); }
  bool EndObject() { return w_.EndObject(); }
  bool StartArray() { return w_.StartArray(); }
  bool EndArray() { return w_.EndArray(); }
  // A number already in JSON's grammar (or a bare NaN/Infinity token), written as it stands.
  bool RawNumber(std::string_view literal) {
    return w_.RawValue(literal.data(), literal.size(), rapidjson::kNumberType);
  }
  // A complete JSON object written elsewhere.
  bool RawObject(std::string_view json) {
    return w_.RawValue(json.data(), json.size(), rapidjson::kObjectType);
  }
  // A complete JSON array written elsewhere (strings in it by AppendJsonWriterString).
  bool RawArray(std::string_view json) {
    return w_.RawValue(json.data(), json.size(), rapidjson::kArrayType);
  }
  // A JsonValue (big integers as their digits).
  bool Value(const JsonValue& v) {
    switch (v.kind()) {
      case JsonValue::Kind::kNull:
        return Null();
      case JsonValue::Kind::kBool:
        return Bool(v.bool_value());
      case JsonValue::Kind::kInt:
        return Int64(v.int_value());
      case JsonValue::Kind::kBigInt:
        return RawNumber(v.big_int_digits());
      case JsonValue::Kind::kDouble:
        return Double(v.double_value());
      case JsonValue::Kind::kString:
        return String(v.string_value());
      case JsonValue::Kind::kArray:
        if (!StartArray()) return false;
        for (const JsonValue& item : v.array()) {
          if (!Value(item)) return false;
        }
        return EndArray();
      case JsonValue::Kind::kObject:
        if (!StartObject()) return false;
        for (const auto& [key, member] : v.object()) {
          if (!Key(key) || !Value(member)) return false;
        }
        return EndObject();
    }
    return false;
  }

 private:
  Base w_;
  JsonFileKind kind_;
};

}  // namespace numprobe

#endif  // NUMPROBE_CORE_JSON_WRITER_H_
