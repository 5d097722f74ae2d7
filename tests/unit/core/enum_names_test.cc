// Enum names from one table per enum (enum_names.h), and the verdict shared by compare, diff,
// config-check and the UI (verdict.h): names both ways, fallbacks, shared names, severity.
#include "numprobe/enum_names.h"

#include <optional>
#include <string_view>

#include <gtest/gtest.h>

#include "numprobe/status.h"
#include "numprobe/verdict.h"

namespace numprobe {
namespace {

// An enum of the test's own, in an anonymous namespace, whose table is found the same way.
enum class Fruit : uint8_t { kApple, kPear, kQuince, kMedlar };
constexpr EnumNameEntry<Fruit> kFruitNames[] = {
    {Fruit::kApple, "apple"},
    {Fruit::kPear, "pear"},
    {Fruit::kQuince, "pome"},
    {Fruit::kMedlar, "pome"}};  // two values share a name: "pome" parses as kQuince
constexpr const auto& EnumNameTable(Fruit /*unused*/) { return kFruitNames; }

// A second naming of the same enum.
constexpr EnumNameEntry<Fruit> kFruitColours[] = {{Fruit::kApple, "red"}, {Fruit::kPear, "green"}};

TEST(EnumNamesTest, NamesComeFromTheEnumsTable) {
  EXPECT_EQ(EnumName(Fruit::kApple), "apple");
  EXPECT_EQ(EnumName(Fruit::kPear), "pear");
  EXPECT_EQ(EnumName(Fruit::kMedlar), "pome");
  EXPECT_EQ(EnumName(static_cast<Fruit>(9)), "");  // not in the table
  static_assert(EnumName(Fruit::kQuince) == "pome");
}

TEST(EnumNamesTest, ParsingUsesTheSameTable) {
  EXPECT_EQ(EnumFromName<Fruit>("apple"), Fruit::kApple);
  EXPECT_EQ(EnumFromName<Fruit>("pear"), Fruit::kPear);
  EXPECT_EQ(EnumFromName<Fruit>("pome"), Fruit::kQuince);  // the first of the values named so
  EXPECT_EQ(EnumFromName<Fruit>("Apple"), std::nullopt);   // names are exact
  EXPECT_EQ(EnumFromName<Fruit>(""), std::nullopt);
  for (const auto& [value, name] : kFruitNames) {
    EXPECT_EQ(EnumName(*EnumFromName<Fruit>(name)), name);
  }
}

TEST(EnumNamesTest, ASecondTableNamesTheSameEnumOtherwise) {
  EXPECT_EQ(NameIn(kFruitColours, Fruit::kPear), "green");
  EXPECT_EQ(NameIn(kFruitColours, Fruit::kQuince), "");
  EXPECT_EQ(NameIn(kFruitColours, Fruit::kQuince, "brown"), "brown");
  EXPECT_EQ(FromNameIn<Fruit>(kFruitColours, "red"), Fruit::kApple);
  EXPECT_EQ(FromNameIn<Fruit>(kFruitColours, "apple"), std::nullopt);
}

TEST(EnumNamesTest, ErrorCodesKeepTheirFallback) {
  EXPECT_EQ(EnumName(ErrorCode::kIoError), "I/O error");
  EXPECT_EQ(EnumFromName<ErrorCode>("corrupt"), ErrorCode::kCorrupt);
  EXPECT_EQ(ErrorCodeName(static_cast<ErrorCode>(99)), "unknown");
}

TEST(VerdictTest, NamesRoundTrip) {
  for (const auto& [value, name] : kVerdictNames) {
    EXPECT_EQ(EnumName(value), name);
    EXPECT_EQ(EnumFromName<Verdict>(name), value);
  }
  EXPECT_EQ(EnumName(Verdict::kUnmatched), "unmatched");
  EXPECT_EQ(EnumFromName<Verdict>("fail"), std::nullopt);
}

TEST(VerdictTest, NumbersAreThoseReportHtmlStores) {
  // web/src/backend.js indexes ['pass', 'unmatched', 'warning', 'error', 'none'] by them.
  EXPECT_EQ(static_cast<int>(Verdict::kPass), 0);
  EXPECT_EQ(static_cast<int>(Verdict::kUnmatched), 1);
  EXPECT_EQ(static_cast<int>(Verdict::kWarning), 2);
  EXPECT_EQ(static_cast<int>(Verdict::kError), 3);
  EXPECT_EQ(static_cast<int>(Verdict::kNone), 4);
}

TEST(VerdictTest, SeverityRunsFromNoVerdictToError) {
  EXPECT_LT(Severity(Verdict::kNone), Severity(Verdict::kPass));
  EXPECT_LT(Severity(Verdict::kPass), Severity(Verdict::kUnmatched));
  EXPECT_LT(Severity(Verdict::kUnmatched), Severity(Verdict::kWarning));
  EXPECT_LT(Severity(Verdict::kWarning), Severity(Verdict::kError));
  EXPECT_EQ(Worse(Verdict::kNone, Verdict::kPass), Verdict::kPass);
  EXPECT_EQ(Worse(Verdict::kPass, Verdict::kNone), Verdict::kPass);
  EXPECT_EQ(Worse(Verdict::kError, Verdict::kWarning), Verdict::kError);
  EXPECT_EQ(Worse(Verdict::kWarning, Verdict::kUnmatched), Verdict::kWarning);
  EXPECT_EQ(Worse(Verdict::kNone, Verdict::kNone), Verdict::kNone);
  static_assert(Worse(Verdict::kPass, Verdict::kError) == Verdict::kError);
}

}  // namespace
}  // namespace numprobe
