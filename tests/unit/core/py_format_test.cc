// Python text forms used in compare tables. Expected strings were printed by CPython 3.11.
#include "core/py_format.h"

#include <cmath>
#include <limits>
#include <string>

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

TEST(PyFormatTest, JsonStringListEscapesLikeJsonDumps) {
  EXPECT_EQ(JsonStringList({}), "[]");
  EXPECT_EQ(JsonStringList({"error: x", "caf\xc3\xa9", "q\""}),
            "[\"error: x\", \"caf\\u00e9\", \"q\\\"\"]");
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
