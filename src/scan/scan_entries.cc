// Copies chosen entries of dump.json's "data" object out as JSON text, in one streaming pass
// (RapidJSON SAX): the communication ops whose arguments name peers and groups, and the anomalous
// ops whose arguments go verbatim into msprobe's anomaly_analyze file. Numbers are copied as
// written, including Python's bare NaN/Infinity tokens.
#include <string>

#include <fmt/format.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "scan/scan_internal.h"

namespace numprobe::detail {
namespace {

using TextWriter = rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>,
                                     rapidjson::CrtAllocator, rapidjson::kWriteNanAndInfFlag>;

class Extractor : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Extractor> {
 public:
  // Copies the members named in `names` of the root object (in_data = false) or of the root's
  // "data" object (in_data = true).
  Extractor(const std::unordered_set<std::string>& names, bool in_data,
            std::unordered_map<std::string, std::string>* out)
      : names_(names), target_depth_(in_data ? 2 : 1), out_(out), writer_(buffer_) {}

  bool Null() {
    return Scalar([&] { return writer_.Null(); });
  }
  bool Bool(bool b) {
    return Scalar([&] { return writer_.Bool(b); });
  }
  bool RawNumber(const char* str, rapidjson::SizeType length, bool) {
    return Scalar([&] { return writer_.RawValue(str, length, rapidjson::kNumberType); });
  }
  bool String(const char* str, rapidjson::SizeType length, bool) {
    return Scalar([&] { return writer_.String(str, length); });
  }
  bool Key(const char* str, rapidjson::SizeType length, bool) {
    if (capture_depth_ > 0) return writer_.Key(str, length);
    if (depth_ <= target_depth_) key_.assign(str, length);
    return true;
  }
  bool StartObject() { return Open(true); }
  bool StartArray() { return Open(false); }
  bool EndObject(rapidjson::SizeType) { return Close(true); }
  bool EndArray(rapidjson::SizeType) { return Close(false); }

 private:
  bool Wanted() const { return in_target_ && depth_ == target_depth_ && names_.count(key_) > 0; }

  void Begin() {
    buffer_.Clear();
    writer_.Reset(buffer_);
  }

  void Store() { (*out_)[key_] = std::string(buffer_.GetString(), buffer_.GetSize()); }

  template <typename Write>
  bool Scalar(Write write) {
    if (capture_depth_ > 0) return write();
    if (Wanted()) {
      Begin();
      if (!write()) return false;
      Store();
    }
    return true;
  }

  bool Open(bool object) {
    if (capture_depth_ > 0 || Wanted()) {
      if (capture_depth_ == 0) Begin();
      ++capture_depth_;
      return object ? writer_.StartObject() : writer_.StartArray();
    }
    if (object && ((target_depth_ == 1 && depth_ == 0) ||
                   (target_depth_ == 2 && depth_ == 1 && key_ == "data"))) {
      in_target_ = true;
    }
    ++depth_;
    return true;
  }

  bool Close(bool object) {
    if (capture_depth_ > 0) {
      const bool ok = object ? writer_.EndObject() : writer_.EndArray();
      if (--capture_depth_ == 0) Store();
      return ok;
    }
    --depth_;
    if (depth_ < target_depth_) in_target_ = false;
    return true;
  }

  const std::unordered_set<std::string>& names_;
  const int target_depth_;
  std::unordered_map<std::string, std::string>* out_;
  rapidjson::StringBuffer buffer_;
  TextWriter writer_;
  int depth_ = 0;          // open containers outside a captured value
  int capture_depth_ = 0;  // open containers inside the value being copied
  bool in_target_ = false;
  std::string key_;
};

Result<std::unordered_map<std::string, std::string>> Extract(
    std::span<const char> bytes, const std::unordered_set<std::string>& names, bool in_data) {
  std::unordered_map<std::string, std::string> out;
  if (names.empty()) return out;
  Extractor handler(names, in_data, &out);
  rapidjson::MemoryStream stream(bytes.data(), bytes.size());
  rapidjson::Reader reader;
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseNanAndInfFlag |
                              rapidjson::kParseNumbersAsStringsFlag |
                              rapidjson::kParseValidateEncodingFlag;
  const rapidjson::ParseResult result = reader.Parse<kFlags>(stream, handler);
  if (result.IsError()) {
    return Status::Corrupt(fmt::format("malformed JSON at byte {}: {}", result.Offset(),
                                       rapidjson::GetParseError_En(result.Code())));
  }
  return out;
}

}  // namespace

Result<std::unordered_map<std::string, std::string>> ExtractEntries(
    std::span<const char> bytes, const std::unordered_set<std::string>& names) {
  return Extract(bytes, names, true);
}

Result<std::unordered_map<std::string, std::string>> ExtractMembers(
    std::string_view object_json, const std::unordered_set<std::string>& names) {
  return Extract(std::span<const char>(object_json.data(), object_json.size()), names, false);
}

}  // namespace numprobe::detail
