// core/json_writer: AppendJsonWriterString writes the bytes JsonWriter::String writes, for every
// byte value and for texts that mix plain runs with escapes.
#include "core/json_writer.h"

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/stringbuffer.h>

namespace numprobe {
namespace {

std::string ByWriter(std::string_view s) {
  rapidjson::StringBuffer buffer;
  JsonWriter<rapidjson::StringBuffer> w(buffer, JsonFileKind::kResult);
  w.String(s);
  return {buffer.GetString(), buffer.GetSize()};
}

std::string Appended(std::string_view s) {
  std::string out;
  AppendJsonWriterString(s, &out);
  return out;
}

TEST(AppendJsonWriterString, EveryByteAsTheWriterWritesIt) {
  for (int b = 0; b < 256; ++b) {
    const std::string s(1, static_cast<char>(b));
    EXPECT_EQ(Appended(s), ByWriter(s)) << "byte " << b;
  }
}

TEST(AppendJsonWriterString, MixedTexts) {
  const std::vector<std::string> texts = {
      "",
      "Functional.conv2d.0.forward.input.0",
      "[\"error: The dtype of NPU and Bench are inconsistent.\"]",
      "a\\b\"c\nd\te\x01\x1f\x7f/\xc3\xa9",
      std::string("nul\0inside", 10),
      "\"\"\\\\",
  };
  for (const std::string& s : texts) EXPECT_EQ(Appended(s), ByWriter(s)) << s;
  EXPECT_EQ(Appended("\x01"), "\"\\u0001\"");
  EXPECT_EQ(Appended("\x1f"), "\"\\u001F\"");
}

TEST(JsonWriter, RawArrayKeepsTheSeparators) {
  rapidjson::StringBuffer buffer;
  JsonWriter<rapidjson::StringBuffer> w(buffer, JsonFileKind::kResult);
  w.StartArray();
  w.RawArray("[1,\"a\"]");
  w.RawArray("[]");
  w.String("b");
  w.EndArray();
  EXPECT_EQ(std::string(buffer.GetString(), buffer.GetSize()), "[[1,\"a\"],[],\"b\"]");
}

}  // namespace
}  // namespace numprobe
