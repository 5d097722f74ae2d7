// The tape reader (json_tape.h) against StreamJson: the same values, the same errors.
#include "core/json_tape.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/json_value.h"

#include "core/json.h"

namespace numprobe {
namespace {

std::span<const char> Bytes(std::string_view text) { return {text.data(), text.size()}; }

// Each streamed member (key, compact JSON, repeated_keys) as both readers deliver it.
struct Members {
  std::vector<std::pair<std::string, std::string>> values;
  std::vector<bool> repeated;  // tape only
  Status status;
};

Members ReadWithValues(std::string_view text) {
  Members out;
  JsonStreamSpec spec;
  spec.stream_path = {"data"};
  spec.on_member = [&](std::string_view key, JsonValue&& value, uint64_t) {
    out.values.emplace_back(std::string(key), ToJson(value, -1));
    return Status::Ok();
  };
  out.status = StreamJson(Bytes(text), spec, kPythonJson);
  return out;
}

Members ReadWithTape(std::string_view text) {
  Members out;
  JsonTapeStreamSpec spec;
  spec.stream_path = {"data"};
  spec.on_member = [&](std::string_view key, const JsonTapeValue& value, uint64_t) {
    out.values.emplace_back(std::string(key), ToJson(ToJsonValue(value), -1));
    out.repeated.push_back(value.repeated_keys());
    return Status::Ok();
  };
  out.status = StreamJsonTape(Bytes(text), spec, kPythonJson);
  return out;
}

TEST(JsonTapeTest, DeliversTheValuesStreamJsonDelivers) {
  std::string many_keys;
  for (int i = 0; i < 40; ++i)
    many_keys += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
  const std::string long_text(200000, 'x');  // longer than one arena chunk
  const std::string json = R"({"task": "statistics", "data": {
      "a": {"input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 3],
            "Max": 1.5, "Min": -Infinity, "Mean": NaN, "Norm": 12345678901234567890123,
            "requires_grad": true, "md5": null}, [], {}, [[1, 2], [3]]], "s": "\u00e9\n"},
      "b": 5, "c": "text", "d": null, "e": [], "f": {},
      "g": {"x": 1, "y": {"x": 2, "x": 3}, "x": 4},
      "h": {)" + many_keys +
                           R"("k7": "again"},
      "i": ")" + long_text +
                           R"(", "j": [")" + long_text + R"(", ")" + long_text + R"("]}})";
  const Members values = ReadWithValues(json);
  const Members tape = ReadWithTape(json);
  ASSERT_TRUE(values.status.ok()) << values.status.ToString();
  ASSERT_TRUE(tape.status.ok()) << tape.status.ToString();
  EXPECT_EQ(tape.values, values.values);
  EXPECT_EQ(tape.repeated, (std::vector<bool>{false, false, false, false, false, false, true, true,
                                              false, false}));
}

TEST(JsonTapeTest, FindTakesTheLastOfRepeatedKeysAndChildrenAreInOrder) {
  JsonTapeStreamSpec spec;
  spec.stream_path = {};
  std::vector<std::string> seen;
  spec.on_member = [&](std::string_view, const JsonTapeValue& v, uint64_t) {
    EXPECT_TRUE(v.is_object());
    EXPECT_EQ(v.children().size(), 3u);
    const JsonTapeValue* a = v.Find("a");
    EXPECT_NE(a, nullptr);
    if (a != nullptr) {
      EXPECT_EQ(a->int_value(), 3);
    }
    EXPECT_EQ(v.Find("missing"), nullptr);
    for (const JsonTapeValue& m : v.children()) seen.emplace_back(m.key());
    return Status::Ok();
  };
  ASSERT_TRUE(StreamJsonTape(Bytes(R"({"m": {"a": 1, "b": [1, [2]], "a": 3}})"), spec).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "a"}));
}

TEST(JsonTapeTest, ErrorsAreStreamJsonsErrors) {
  std::string deep = R"({"data": {"a": )";
  for (int i = 0; i < 1000; ++i) deep += '[';
  for (int i = 0; i < 1000; ++i) deep += ']';
  deep += "}}";
  for (const std::string& bad : {deep, std::string(R"({"data": {"a": [1, }})"), std::string("[1]"),
                                 std::string(R"({"data": {"a": NaN}})")}) {
    const Members values = ReadWithValues(bad);
    const Members tape = ReadWithTape(bad);
    EXPECT_EQ(tape.status.ToString(), values.status.ToString()) << bad.substr(0, 40);
  }
  EXPECT_FALSE(ReadWithTape(deep).status.ok());
}

}  // namespace
}  // namespace numprobe
