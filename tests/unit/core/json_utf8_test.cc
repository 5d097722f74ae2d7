// Every JSON reader refuses input that is not UTF-8, at the first ill-formed byte, as RapidJSON's
// own check did; the file readers check it window by window (64 KiB), so sequences that straddle a
// window's end are the cases to get right. A syntax error before the ill-formed byte is still
// reported as it is.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "numprobe/json_value.h"

#include "core/json.h"
#include "core/json_tape.h"
#include "testing/temp_dir.h"

namespace numprobe {
namespace {

constexpr size_t kWindow = size_t{1} << 16;  // the file readers' window

// Every reader's verdict on `text`: the status's text, and the streamed members' values.
struct Verdicts {
  std::vector<std::pair<std::string, std::string>> by_reader;  // (reader, status or values)
};

std::string Streamed(const std::function<Status(JsonStreamSpec&)>& read) {
  std::string values;
  JsonStreamSpec spec;
  spec.stream_path = {"data"};
  spec.on_member = [&](std::string_view key, JsonValue&& value, uint64_t) {
    values += std::string(key) + "=" + ToJson(value, -1) + ";";
    return Status::Ok();
  };
  const Status s = read(spec);
  return s.ok() ? values : s.ToString();
}

std::string StreamedTape(const std::function<Status(JsonTapeStreamSpec&)>& read) {
  std::string values;
  JsonTapeStreamSpec spec;
  spec.stream_path = {"data"};
  spec.on_member = [&](std::string_view key, const JsonTapeValue& value, uint64_t) {
    values += std::string(key) + "=" + ToJson(ToJsonValue(value), -1) + ";";
    return Status::Ok();
  };
  const Status s = read(spec);
  return s.ok() ? values : s.ToString();
}

// The readers of a streamed dump-like document, from memory and from a file.
std::vector<std::pair<std::string, std::string>> ReadEveryWay(const std::string& text) {
  test::TempDir dir("numprobe_json_utf8");
  const std::filesystem::path file = dir.Write("doc.json", text);
  const std::span<const char> bytes(text.data(), text.size());
  return {
      {"StreamJson", Streamed([&](JsonStreamSpec& s) { return StreamJson(bytes, s); })},
      {"StreamJsonFile", Streamed([&](JsonStreamSpec& s) { return StreamJsonFile(file, s); })},
      {"StreamJsonTape",
       StreamedTape([&](JsonTapeStreamSpec& s) { return StreamJsonTape(bytes, s); })},
      {"StreamJsonFileTape",
       StreamedTape([&](JsonTapeStreamSpec& s) { return StreamJsonFileTape(file, s); })},
      {"StreamJsonFileTapeOnTwoThreads", StreamedTape([&](JsonTapeStreamSpec& s) {
         return StreamJsonFileTapeOnTwoThreads(file, s);
       })},
  };
}

constexpr std::string_view kHead = R"({"data": {"k": ")";

// {"data": {"k": "<padding><bytes>"}} with `bytes` starting at byte `at`.
std::string DocumentWithBytesAt(size_t at, std::string_view bytes, std::string_view after = "") {
  std::string text = std::string(kHead) + std::string(at - kHead.size(), 'p');
  text += bytes;
  text += after;
  text += R"("}})";
  return text;
}

TEST(JsonUtf8Test, SequencesAcrossTheWindowsEndAreRead) {
  for (const std::string_view sequence :
       {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf"}) {
    for (size_t at = kWindow - 4; at <= kWindow + 1; ++at) {
      const std::string text = DocumentWithBytesAt(at, sequence);
      const std::string want =
          "k=" +
          ToJson(JsonValue::String(std::string(at - kHead.size(), 'p') + std::string(sequence)),
                 -1) +
          ";";
      for (const auto& [reader, got] : ReadEveryWay(text)) {
        // (not ASSERT_EQ: the texts are 64 KiB long)
        ASSERT_TRUE(got == want) << reader << " at " << at << ": " << got.substr(0, 80);
      }
    }
  }
}

TEST(JsonUtf8Test, TheFirstIllFormedByteIsReportedWhereItIs) {
  // Ill-formed sequences, and sequences cut by the end of the string, on both sides of the end
  // of the first window.
  for (const std::string_view bad :
       {"\xff", "\x80", "\xc3(", "\xe2\x82\"", "\xf0\x9f\x98", "\xed\xa0\x80", "\xc0\xaf"}) {
    for (size_t at = kWindow - 4; at <= kWindow + 1; ++at) {
      const std::string text = DocumentWithBytesAt(at, bad, "more");
      const std::string want =
          fmt::format("corrupt: malformed JSON at byte {}: not valid UTF-8", at);
      for (const auto& [reader, got] : ReadEveryWay(text)) {
        ASSERT_EQ(got, want) << reader << " at " << at;
      }
    }
  }
}

TEST(JsonUtf8Test, ASyntaxErrorBeforeTheIllFormedByteIsReportedAsItIs) {
  const std::string text = R"({"data": {"k": [1, }, "s": ")" + std::string("\xff") + R"("}})";
  for (const auto& [reader, got] : ReadEveryWay(text)) {
    EXPECT_NE(got.find("malformed JSON at byte 19: "), std::string::npos) << reader << ": " << got;
    EXPECT_EQ(got.find("UTF-8"), std::string::npos) << reader << ": " << got;
  }
}

TEST(JsonUtf8Test, IllFormedBytesAfterTheDocumentAreRefused) {
  // The input ends at the ill-formed byte, which leaves a complete document before it: still an
  // error, as the bytes were.
  for (const std::string_view tail : {"\xff", " \xc3", "\xe2\x82"}) {
    const std::string text = R"({"data": {"k": 1}})" + std::string(tail);
    const size_t at = text.find_first_not_of(" ", 18);
    for (const auto& [reader, got] : ReadEveryWay(text)) {
      EXPECT_EQ(got, fmt::format("corrupt: malformed JSON at byte {}: not valid UTF-8", at))
          << reader;
    }
  }
}

TEST(JsonUtf8Test, WholeDocumentReadersRefuseIllFormedBytesToo) {
  const std::string text = "{\"a\": \"x\xe2\x28\xa1\"}";
  const auto parsed = ParseJson(text);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().ToString(), "corrupt: malformed JSON at byte offset 8: not valid UTF-8");
  JsonSyntaxError syntax;
  EXPECT_FALSE(ParseJson(text, {.syntax_error = &syntax}).ok());
  EXPECT_EQ(syntax.offset, 8u);
  EXPECT_EQ(syntax.reason, "not valid UTF-8");
  // A syntax error first is reported as such.
  EXPECT_EQ(ParseJson("{\"a\" 1, \"b\": \"\xff\"}").error().ToString(),
            "corrupt: malformed JSON at byte offset 5: Missing a colon after a name of object "
            "member.");
  const auto fine = ParseJson("{\"a\": \"\xc3\xa9\"}");
  ASSERT_TRUE(fine.ok());
  EXPECT_EQ(fine->object().front().second.string_value(), "\xc3\xa9");
}

TEST(JsonUtf8Test, FileReaderOfEventsRefusesWhatIsNotARegularFile) {
  test::TempDir dir("numprobe_json_utf8");
  const std::filesystem::path fifo = dir / "fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  class Ignore final : public JsonEvents {
    bool Null() override { return true; }
    bool Bool(bool) override { return true; }
    bool Number(std::string_view) override { return true; }
    bool String(std::string_view) override { return true; }
    bool Key(std::string_view) override { return true; }
    bool StartObject() override { return true; }
    bool EndObject() override { return true; }
    bool StartArray() override { return true; }
    bool EndArray() override { return true; }
  } events;
  const Status s = ParseJsonFileEvents(fifo, events);  // would block in open() on a FIFO
  EXPECT_NE(s.ToString().find("not a regular file"), std::string::npos) << s.ToString();
  const std::filesystem::path file = dir.Write("doc.json", "[1, \"\xc3\xa9\", {\"x\": \xff}]");
  EXPECT_EQ(ParseJsonFileEvents(file, events).ToString(),
            "corrupt: malformed JSON at byte 16: not valid UTF-8");
}

}  // namespace
}  // namespace numprobe
