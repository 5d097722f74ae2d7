// JsonValue: Python-identical serialization (msprobe writes its files with json.dumps) and
// parsing of the NaN/Infinity tokens.
#include "numprobe/json_value.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include <gtest/gtest.h>

#include "core/json.h"

namespace numprobe {
namespace {

TEST(PythonFloatReprTest, MatchesPythonRepr) {
  // Expected strings are Python 3.11's repr() of the same doubles.
  EXPECT_EQ(PythonFloatRepr(2.558138370513916), "2.558138370513916");
  EXPECT_EQ(PythonFloatRepr(1e-05), "1e-05");
  EXPECT_EQ(PythonFloatRepr(1e16), "1e+16");
  EXPECT_EQ(PythonFloatRepr(1e15), "1000000000000000.0");
  EXPECT_EQ(PythonFloatRepr(0.0001), "0.0001");
  EXPECT_EQ(PythonFloatRepr(123456789012345678.0), "1.2345678901234568e+17");
  EXPECT_EQ(PythonFloatRepr(-0.0), "-0.0");
  EXPECT_EQ(PythonFloatRepr(1.0), "1.0");
  EXPECT_EQ(PythonFloatRepr(0.1), "0.1");
  EXPECT_EQ(PythonFloatRepr(5e-324), "5e-324");
  EXPECT_EQ(PythonFloatRepr(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(PythonFloatRepr(100.0), "100.0");
  EXPECT_EQ(PythonFloatRepr(1.5e-7), "1.5e-07");
  EXPECT_EQ(PythonFloatRepr(12345.678), "12345.678");
  EXPECT_EQ(PythonFloatRepr(-0.02500000037252903), "-0.02500000037252903");
}

TEST(JsonWriterTest, IndentOneMatchesJsonDumps) {
  JsonValue v = JsonValue::MakeObject();
  v.Set("a", JsonValue::MakeArray({JsonValue::Int(1),
                                   JsonValue::MakeObject({{"b", JsonValue::MakeArray()}}),
                                   JsonValue::MakeObject()}));
  v.Set("c", JsonValue::String("\xc3\xa9\n\"x\xf0\x9f\x98\x80"));
  v.Set("d", JsonValue::Double(std::nan("")));
  v.Set("e", JsonValue::MakeArray({JsonValue::Double(std::numeric_limits<double>::infinity()),
                                   JsonValue::Double(-std::numeric_limits<double>::infinity())}));
  v.Set("f", JsonValue());
  v.Set("g", JsonValue::Bool(true));
  // Python: json.dumps({...}, indent=1) of the same object.
  const char* expected =
      "{\n \"a\": [\n  1,\n  {\n   \"b\": []\n  },\n  {}\n ],\n"
      " \"c\": \"\\u00e9\\n\\\"x\\ud83d\\ude00\",\n \"d\": NaN,\n"
      " \"e\": [\n  Infinity,\n  -Infinity\n ],\n \"f\": null,\n \"g\": true\n}";
  EXPECT_EQ(ToJson(v, 1), expected);
  EXPECT_EQ(ToJson(v.object()[0].second, -1), "[1,{\"b\":[]},{}]");
}

TEST(JsonWriterTest, SetReplacesInPlaceAndUpdateMerges) {
  JsonValue v = JsonValue::MakeObject({{"x", JsonValue::Int(1)}, {"y", JsonValue::Int(2)}});
  v.Set("x", JsonValue::Int(3));
  v.Update(JsonValue::MakeObject({{"z", JsonValue::Int(4)}, {"y", JsonValue::Int(5)}}));
  EXPECT_EQ(ToJson(v, -1), "{\"x\":3,\"y\":5,\"z\":4}");
}

TEST(JsonParseTest, ReadsNonFiniteTokensAndKeepsIntegers) {
  auto v = ParseJson(R"({"Max": Infinity, "Min": -Infinity, "Mean": NaN, "n": 8, "f": 8.0})");
  ASSERT_TRUE(v.ok()) << v.error().ToString();
  EXPECT_TRUE(std::isinf(v->Find("Max")->double_value()));
  EXPECT_LT(v->Find("Min")->double_value(), 0);
  EXPECT_TRUE(std::isnan(v->Find("Mean")->double_value()));
  EXPECT_EQ(v->Find("n")->kind(), JsonValue::Kind::kInt);
  EXPECT_EQ(v->Find("f")->kind(), JsonValue::Kind::kDouble);
  EXPECT_EQ(ToJson(*v, -1), R"({"Max":Infinity,"Min":-Infinity,"Mean":NaN,"n":8,"f":8.0})");
}

TEST(JsonParseTest, RejectsMalformedAndTooDeep) {
  auto bad = ParseJson("{\"a\": [1, 2}");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(bad.error().message().find("offset"), std::string::npos);
  std::string deep(1000, '[');
  deep += std::string(1000, ']');
  auto too_deep = ParseJson(deep);
  ASSERT_FALSE(too_deep.ok());
  EXPECT_EQ(too_deep.error().code(), ErrorCode::kOutOfRange);
}

// The fixture dump.json files were written by Python's json.dump(indent=1): parsing and writing
// them back must reproduce them byte for byte.
TEST(JsonRoundTripTest, FixtureDumpJsonIsReproducedExactly) {
  for (const char* rel : {"/msprobe/dump_statistics_base/step0/proc17026/dump.json",
                          "/msprobe/dump_statistics_bf16/step0/proc17032/dump.json",
                          "/msprobe/dump_statistics_nan/step0/proc18393/dump.json",
                          "/msprobe/dump_statistics_base/step0/proc17026/stack.json",
                          "/msprobe/dump_statistics_base/step0/proc17026/construct.json"}) {
    std::ifstream in(std::string(NUMPROBE_FIXTURES_DIR) + rel, std::ios::binary);
    ASSERT_TRUE(in) << rel;
    std::stringstream text;
    text << in.rdbuf();
    auto v = ParseJson(text.str());
    ASSERT_TRUE(v.ok()) << rel << ": " << v.error().ToString();
    EXPECT_EQ(ToJson(*v, 1), text.str()) << rel;
  }
}

}  // namespace
}  // namespace numprobe
