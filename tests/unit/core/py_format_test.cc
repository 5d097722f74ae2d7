// Python text forms used in compare tables. Expected strings were printed by CPython 3.11.
#include "core/py_format.h"

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace numprobe::detail {
namespace {

TEST(PyFormatTest, FloatReprMatchesCPython) {
  const std::pair<double, const char*> cases[] = {
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {1.0, "1.0"},
      {2.5, "2.5"},
      {1e-05, "1e-05"},
      {0.0001, "0.0001"},
      {0.00012345, "0.00012345"},
      {1e16, "1e+16"},
      {1e15, "1000000000000000.0"},
      {123456789012345678.0, "1.2345678901234568e+17"},
      {1.5e-7, "1.5e-07"},
      {1e100, "1e+100"},
      {5e-324, "5e-324"},
      {-0.0033020973205568627, "-0.0033020973205568627"},
      {0.17802363176950517, "0.17802363176950517"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {0.1, "0.1"},
      {1.0 / 3.0, "0.3333333333333333"},
      {100.0, "100.0"},
      {12345.678, "12345.678"},
  };
  for (const auto& [value, text] : cases) EXPECT_EQ(PyFloatRepr(value), text) << text;
  EXPECT_EQ(PyFloatRepr(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(PyFloatRepr(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(PyFloatRepr(std::nan("")), "nan");
}

// FormatShortestFloat is fmt's "{}" of a double (scan's CSV numbers), made from the repr: fmt
// itself is the reference, over random bit patterns, whole numbers, powers of ten and the edges.
TEST(PyFormatTest, ShortestFloatIsFmtsDefaultForm) {
  const double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> values = {0.0,
                                -0.0,
                                1.0,
                                -2.0,
                                100.0,
                                1e15,
                                1e16,
                                1e17,
                                1e-4,
                                1e-5,
                                0.5,
                                123.456,
                                5e-324,
                                1e308,
                                -1e-300,
                                kInf,
                                -kInf,
                                9007199254740993.0,
                                1.7976931348623157e308};
  for (int e = -320; e <= 308; ++e) {
    const double p = std::pow(10.0, e);
    values.insert(values.end(), {p, std::nextafter(p, 0.0), std::nextafter(p, HUGE_VAL)});
  }
  std::mt19937_64 bits(20261206);
  for (int i = 0; i < 200000; ++i) {
    const double v = std::bit_cast<double>(bits());
    if (!std::isnan(v)) values.push_back(v);
    values.push_back(std::round(static_cast<double>(bits() % 2000000) - 1e6));
  }
  for (const double v : values) {
    char buffer[kPyFloatReprBytes];
    ASSERT_EQ(FormatShortestFloat(v, buffer), fmt::format("{}", v)) << PyFloatRepr(v);
  }
  char buffer[kPyFloatReprBytes];
  EXPECT_EQ(FormatShortestFloat(std::nan(""), buffer), "nan");
}

TEST(PyFormatTest, RoundAndFormatValueAreCorrectlyRounded) {
  EXPECT_EQ(PyFloatRepr(PyRound(0.9999964999999, 6)), "0.999996");
  EXPECT_EQ(PyFloatRepr(PyRound(0.1234565, 6)), "0.123456");
  EXPECT_EQ(PyFloatRepr(PyRound(2.675, 2)), "2.67");  // 2.675 is 2.67499999... in binary
  EXPECT_EQ(PyFloatRepr(PyFormatValue12(5.4836273188e-06)), "5.483627e-06");
  EXPECT_EQ(PyFloatRepr(PyFormatValue12(0.7395817637441234)), "0.739581763744");
}

TEST(PyFormatTest, StrReprPicksQuotesAndEscapes) {
  EXPECT_EQ(PyStrRepr("it's"), "\"it's\"");
  EXPECT_EQ(PyStrRepr("a\"b"), "'a\"b'");
  EXPECT_EQ(PyStrRepr("both ' and \""), "'both \\' and \"'");
  EXPECT_EQ(PyStrRepr("tab\there\n\\"), "'tab\\there\\n\\\\'");
  EXPECT_EQ(PyStrRepr("\x01"), "'\\x01'");
  EXPECT_EQ(PyStrListRepr({"a.pt", "-1"}), "['a.pt', '-1']");
}

std::string JsonString(std::string_view s, JsonStringStyle style = {}) {
  std::string out;
  AppendJsonString(s, &out, style);
  return out;
}

TEST(PyFormatTest, JsonStringEscapesLikeJsonDumps) {
  // CPython 3.11's json.dumps of the same str.
  EXPECT_EQ(JsonString(""), "\"\"");
  EXPECT_EQ(JsonString("plain"), "\"plain\"");
  EXPECT_EQ(JsonString("q\"b\\s"), "\"q\\\"b\\\\s\"");
  EXPECT_EQ(JsonString("\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
  EXPECT_EQ(JsonString(std::string_view("\x00\x01\x1f", 3)), "\"\\u0000\\u0001\\u001f\"");
  EXPECT_EQ(JsonString("a\x7f"
                       "b"),
            "\"a\\u007fb\"");
  EXPECT_EQ(JsonString("caf\xc3\xa9"), "\"caf\\u00e9\"");
  EXPECT_EQ(JsonString("\xe2\x82\xac"), "\"\\u20ac\"");
  EXPECT_EQ(JsonString("\xf0\x9f\x98\x80"), "\"\\ud83d\\ude00\"");
  EXPECT_EQ(JsonString("\xf4\x8f\xbf\xbf"), "\"\\udbff\\udfff\"");
  EXPECT_EQ(JsonString("\xed\x9f\xbf\xee\x80\x80"), "\"\\ud7ff\\ue000\"");
}

TEST(PyFormatTest, JsonStringBytesThatAreNotUtf8AreTheCallersChoice) {
  // json.dumps never sees them; replace (maximal subparts) or one \u00XX per byte.
  const std::string_view bad =
      "a\xe2\x82"
      "b\xed\xa0\x80\xc0\xaf";
  EXPECT_EQ(JsonString(bad, {.invalid = Utf8Invalid::kReplace}),
            "\"a\\ufffdb\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"");
  EXPECT_EQ(JsonString(bad, {.invalid = Utf8Invalid::kLatin1}),
            "\"a\\u00e2\\u0082b\\u00ed\\u00a0\\u0080\\u00c0\\u00af\"");
  // JsonValue's writer keeps DEL as a raw byte (see JsonStringStyle).
  EXPECT_EQ(JsonString("a\x7f", {.escape_del = false}), "\"a\x7f\"");
}

TEST(PyFormatTest, JsonStringListEscapesLikeJsonDumps) {
  EXPECT_EQ(JsonStringList({}), "[]");
  EXPECT_EQ(JsonStringList({"error: x", "caf\xc3\xa9", "q\""}),
            "[\"error: x\", \"caf\\u00e9\", \"q\\\"\"]");
  EXPECT_EQ(JsonStringList({"\xff"}), "[\"\\u00ff\"]");
}

TEST(PyFormatTest, ParsePyNumberAcceptsOnlyPlainNumbers) {
  double v = 0;
  EXPECT_TRUE(ParsePyNumber("1.5e3", &v));
  EXPECT_EQ(v, 1500.0);
  EXPECT_TRUE(ParsePyNumber(" -2 ", &v));
  EXPECT_EQ(v, -2.0);
  EXPECT_FALSE(ParsePyNumber("0x10", &v));
  EXPECT_FALSE(ParsePyNumber("nan", &v));
  EXPECT_FALSE(ParsePyNumber("True", &v));
  EXPECT_FALSE(ParsePyNumber("", &v));
  EXPECT_FALSE(ParsePyNumber("1.5abc", &v));
}

}  // namespace
}  // namespace numprobe::detail
