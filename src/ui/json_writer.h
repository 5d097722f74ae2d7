// The rapidjson writer of the UI's JSON (the API's answers and the report's embedded data): NaN
// and +-Inf are written as the strings "nan", "inf" and "-inf", since JSON has no such numbers and
// the browser's JSON.parse rejects the bare tokens; string_view helpers for keys and values.
#ifndef NUMPROBE_UI_JSON_WRITER_H_
#define NUMPROBE_UI_JSON_WRITER_H_

#include <cmath>
#include <string>
#include <string_view>

#include <rapidjson/writer.h>

namespace numprobe::ui {

template <typename Stream>
class UiJsonWriter : public rapidjson::Writer<Stream> {
  using Base = rapidjson::Writer<Stream>;

 public:
  explicit UiJsonWriter(Stream& stream) : Base(stream) {}

  // Hides Writer::Double: Value::Accept and the callers below reach this one.
  bool Double(double d) {
    if (std::isnan(d)) return Base::String("nan");
    if (std::isinf(d)) return Base::String(d > 0 ? "inf" : "-inf");
    return Base::Double(d);
  }
  bool Str(std::string_view s) {
    return Base::String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  }
  bool KeyStr(std::string_view s) {
    return Base::Key(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  }
  // A complete JSON object written elsewhere.
  bool Raw(const std::string& json) {
    return Base::RawValue(json.data(), json.size(), rapidjson::kObjectType);
  }
};

}  // namespace numprobe::ui

#endif  // NUMPROBE_UI_JSON_WRITER_H_
