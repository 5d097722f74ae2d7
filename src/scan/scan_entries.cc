// Copies chosen entries of dump.json's "data" object out as JSON text, in one streaming pass:
// the communication ops whose arguments name peers and groups, and the anomalous ops whose
// arguments go verbatim into msprobe's anomaly_analyze file. Numbers are copied as written,
// including Python's bare NaN/Infinity tokens.
#include <string>

#include <rapidjson/stringbuffer.h>

#include "core/json.h"
#include "core/json_writer.h"
#include "scan/scan_internal.h"

namespace numprobe::detail {
namespace {

using TextWriter = JsonWriter<rapidjson::StringBuffer>;

class Extractor final : public JsonEvents {
 public:
  // Copies the members named in `names` of the root object (in_data = false) or of the root's
  // "data" object (in_data = true).
  Extractor(const std::unordered_set<std::string>& names, bool in_data,
            std::unordered_map<std::string, std::string>* out)
      : names_(names),
        target_depth_(in_data ? 2 : 1),
        out_(out),
        writer_(buffer_, JsonFileKind::kMsprobe) {}

  bool Null() override {
    return Scalar([&] { return writer_.Null(); });
  }
  bool Bool(bool b) override {
    return Scalar([&] { return writer_.Bool(b); });
  }
  bool Number(std::string_view literal) override {
    return Scalar([&] { return writer_.RawNumber(literal); });
  }
  bool String(std::string_view s) override {
    return Scalar([&] { return writer_.String(s); });
  }
  bool Key(std::string_view key) override {
    if (capture_depth_ > 0) return writer_.Key(key);
    if (depth_ <= target_depth_) key_.assign(key);
    return true;
  }
  bool StartObject() override { return Open(true); }
  bool StartArray() override { return Open(false); }
  bool EndObject() override { return Close(true); }
  bool EndArray() override { return Close(false); }

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
  // dump.json is Python's json: bare NaN/Infinity tokens.
  NUMPROBE_RETURN_IF_ERROR(StreamJsonEvents(
      bytes, handler, kPythonJson));
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
