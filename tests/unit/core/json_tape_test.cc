// The tape reader (json_tape.h) against StreamJson: the same values, the same errors.
#include "core/json_tape.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/json_value.h"

#include "core/json.h"
#include "testing/temp_dir.h"

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

// What StreamJsonFileTape and StreamJsonFileTapeOnTwoThreads deliver from a file: every callback
// (root members as "root:key"), in order, and the status. `fail_at` makes that member's callback
// fail.
struct FileRead {
  std::vector<std::pair<std::string, std::string>> calls;
  Status status;
};

FileRead ReadFile(const std::filesystem::path& path, bool two_threads,
                  const std::string& fail_at = "") {
  FileRead out;
  JsonTapeStreamSpec spec;
  spec.stream_path = {"data"};
  spec.on_member = [&](std::string_view key, const JsonTapeValue& value, uint64_t offset) {
    out.calls.emplace_back(std::string(key) + "@" + std::to_string(offset),
                           ToJson(ToJsonValue(value), -1));
    if (key == fail_at) return Status::Rejected("callback refused " + std::string(key));
    return Status::Ok();
  };
  spec.on_root_member = [&](std::string_view key, const JsonTapeValue& value) {
    out.calls.emplace_back("root:" + std::string(key), ToJson(ToJsonValue(value), -1));
    return Status::Ok();
  };
  out.status = two_threads ? StreamJsonFileTapeOnTwoThreads(path, spec, kPythonJson)
                           : StreamJsonFileTape(path, spec, kPythonJson);
  return out;
}

// A dump-like file of `entries` members (over many batches, some with long texts and repeated
// keys) between root members; `tail` replaces the end of the file.
std::string ManyMembers(int entries, const std::string& tail = "}, \"level\": \"L1\"}") {
  std::string json = R"({"task": "statistics", "data": {)";
  for (int i = 0; i < entries; ++i) {
    if (i > 0) json += ", ";
    json += "\"Functional.op." + std::to_string(i) + ".forward\": {\"input_args\": [{\"type\": " +
            "\"torch.Tensor\", \"Max\": " + std::to_string(i) + ".5, \"Min\": NaN}], " +
            "\"note\": \"" + std::string(static_cast<size_t>(i % 97 == 0 ? 70000 : i % 13), 'n') +
            "\"" + (i % 101 == 0 ? ", \"x\": 1, \"x\": 2" : "") + "}";
  }
  return json + tail;
}

TEST(JsonTapeTwoThreadsTest, DeliversWhatOneThreadDelivers) {
  test::TempDir dir;
  const auto path = dir.Write("dump.json", ManyMembers(3000));
  const FileRead one = ReadFile(path, false);
  const FileRead two = ReadFile(path, true);
  ASSERT_TRUE(one.status.ok()) << one.status.ToString();
  ASSERT_TRUE(two.status.ok()) << two.status.ToString();
  ASSERT_EQ(one.calls.size(), 3002u);
  EXPECT_EQ(one.calls.front().first, "root:task");
  EXPECT_EQ(one.calls.back().first, "root:level");
  EXPECT_EQ(two.calls, one.calls);
}

TEST(JsonTapeTwoThreadsTest, ACallbackErrorStopsTheCallbacksAndIsReturned) {
  test::TempDir dir;
  const auto path = dir.Write("dump.json", ManyMembers(3000));
  const FileRead one = ReadFile(path, false, "Functional.op.1500.forward");
  const FileRead two = ReadFile(path, true, "Functional.op.1500.forward");
  EXPECT_EQ(one.status.code(), ErrorCode::kRejected);
  EXPECT_EQ(two.status.ToString(), one.status.ToString());
  EXPECT_EQ(two.calls, one.calls);  // none after the failing one
  EXPECT_EQ(two.calls.size(), 1502u);
}

TEST(JsonTapeTwoThreadsTest, AParseErrorComesAfterEveryEarlierMember) {
  test::TempDir dir;
  const auto broken = dir.Write("broken.json", ManyMembers(2000, ", \"bad\": [1, }}"));
  const FileRead one = ReadFile(broken, false);
  const FileRead two = ReadFile(broken, true);
  EXPECT_FALSE(one.status.ok());
  EXPECT_EQ(two.status.ToString(), one.status.ToString());
  EXPECT_EQ(two.calls, one.calls);
  EXPECT_EQ(two.calls.size(), 2001u);
  // A callback error earlier in the file than a parse error is the one returned.
  const FileRead first = ReadFile(broken, true, "Functional.op.10.forward");
  EXPECT_EQ(first.status.code(), ErrorCode::kRejected);
  EXPECT_EQ(first.calls.size(), 12u);
}

}  // namespace
}  // namespace numprobe
