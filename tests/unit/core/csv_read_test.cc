// The CSV reader (libcsv underneath): the dialect pandas, MindSpore and Python's csv.writer write,
// read field for field, spaces kept, blank lines skipped, an unclosed quoted field an error; and
// whatever core/csv.h writes reads back as the same cells, with either line end.
#include "core/csv_read.h"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/csv.h"

namespace numprobe::detail {
namespace {

using Records = std::vector<std::vector<std::string>>;

Records Parsed(std::string_view text) {
  auto r = ParseCsv(text);
  EXPECT_TRUE(r.ok()) << r.error().ToString();
  return r.ok() ? *r : Records{};
}

TEST(CsvReadTest, RecordsAndFields) {
  EXPECT_EQ(Parsed("a,b\n1,2\n"), (Records{{"a", "b"}, {"1", "2"}}));
  EXPECT_EQ(Parsed("a,b\r\n1,2\r\n"), (Records{{"a", "b"}, {"1", "2"}}));
  EXPECT_EQ(Parsed("a\rb"), (Records{{"a"}, {"b"}}));
  EXPECT_EQ(Parsed("a,b"), (Records{{"a", "b"}}));  // no line end after the last record
  EXPECT_EQ(Parsed(""), Records{});
  EXPECT_EQ(Parsed("\n\r\n\n"), Records{});
}

TEST(CsvReadTest, EmptyFieldsAndBlankLines) {
  EXPECT_EQ(Parsed("a,\n"), (Records{{"a", ""}}));  // a trailing comma: a last empty field
  EXPECT_EQ(Parsed("a,"), (Records{{"a", ""}}));
  EXPECT_EQ(Parsed(",,\n"), (Records{{"", "", ""}}));
  EXPECT_EQ(Parsed(",\n"), (Records{{"", ""}}));
  EXPECT_EQ(Parsed("a\n\n\nb\n"), (Records{{"a"}, {"b"}}));
  EXPECT_EQ(Parsed("\"\"\n"), (Records{{""}}));
  EXPECT_EQ(Parsed("a,\"\"\n"), (Records{{"a", ""}}));
}

TEST(CsvReadTest, SpacesAreData) {
  // msprobe writes " " for an empty cell; pandas keeps spaces around values.
  EXPECT_EQ(Parsed(" a , b \n"), (Records{{" a ", " b "}}));
  EXPECT_EQ(Parsed("x, ,y\n"), (Records{{"x", " ", "y"}}));
  EXPECT_EQ(Parsed("  \n"), (Records{{"  "}}));
  EXPECT_EQ(Parsed("\ta\t,b\n"), (Records{{"\ta\t", "b"}}));
}

TEST(CsvReadTest, QuotedFields) {
  EXPECT_EQ(Parsed("\"x,y\",\"he said \"\"hi\"\"\",\"l1\nl2\"\n"),
            (Records{{"x,y", "he said \"hi\"", "l1\nl2"}}));
  EXPECT_EQ(Parsed("\"a\r\nb\"\r\nc\r\n"), (Records{{"a\r\nb"}, {"c"}}));
  EXPECT_EQ(Parsed("\"a\"\"\"\n"), (Records{{"a\""}}));
  // A quote inside an unquoted field is a character, as pandas reads it.
  EXPECT_EQ(Parsed("ab\"c,d\n"), (Records{{"ab\"c", "d"}}));
  EXPECT_EQ(Parsed(" \"a\"\n"), (Records{{" \"a\""}}));
  const std::string nul("a\0b,c", 5);
  EXPECT_EQ(Parsed(nul), (Records{{std::string("a\0b", 3), "c"}}));
}

TEST(CsvReadTest, AnUnclosedQuotedFieldIsAnError) {
  for (const char* text : {"\"", "\"abc", "a,\"b\n", "a,b\n\"x\ny\n", "\"a\"\"\n"}) {
    const auto r = ParseCsv(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt) << text;
    EXPECT_NE(r.error().message().find("not closed"), std::string::npos);
  }
}

// pandas quotes a field only for a comma, a quote or a line break; tabs, spaces and UTF-8 bytes
// (high bit set, so signed chars) pass as they are.
TEST(CsvWriteTest, QuotesOnlyWhatPandasQuotes) {
  EXPECT_EQ(CsvField(""), "");
  EXPECT_EQ(CsvField("plain text\t"), "plain text\t");
  EXPECT_EQ(CsvField("\xE5\x90\x8D\xFF"), "\xE5\x90\x8D\xFF");
  EXPECT_EQ(CsvField("[8, 1024]"), "\"[8, 1024]\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField("cr\r"), "\"cr\r\"");
  EXPECT_EQ(CsvField(std::string_view("nul\0,", 5)), std::string("\"nul\0,\"", 7));
  EXPECT_EQ(CsvLine({"a", "b,c", ""}), "a,\"b,c\",\n");
}

TEST(CsvReadTest, WhatTheWriterWritesReadsBack) {
  std::mt19937 rng(5);
  const std::string alphabet = "ab ,\"\r\n\t\xC3\xA9";
  for (const char* line_end : {"\n", "\r\n"}) {
    for (int trial = 0; trial < 500; ++trial) {
      Records records(1 + rng() % 4);
      const size_t width = 1 + rng() % 5;
      std::string text;
      for (auto& record : records) {
        for (size_t f = 0; f < width; ++f) {
          std::string field;
          for (size_t n = rng() % 6; n > 0; --n) field += alphabet[rng() % alphabet.size()];
          record.push_back(field);
        }
        // A record of one empty field is a blank line to every reader; the writers never
        // write one.
        if (width == 1 && record[0].empty()) record[0] = "x";
        AppendCsvLine(record, &text, line_end);
      }
      EXPECT_EQ(Parsed(text), records) << text;
    }
  }
}

}  // namespace
}  // namespace numprobe::detail
