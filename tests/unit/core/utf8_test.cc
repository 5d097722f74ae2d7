// core/utf8: the acceptance rules and the maximal subparts. The expected code points are what
// CPython 3.11 prints for bytes.decode("utf-8", "replace"), and the expected validity what
// bytes.decode("utf-8") and bytes.decode("utf-8", "surrogatepass") accept.
#include "core/utf8.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace numprobe::detail {
namespace {

struct Case {
  std::string_view bytes;
  std::vector<uint32_t> replaced;  // decode("utf-8", "replace")
  bool strict;                     // decode("utf-8") succeeds
  bool surrogatepass;              // decode("utf-8", "surrogatepass") succeeds
};

const std::vector<Case>& Cases() {
  static const std::vector<Case> kCases = {
      {"", {}, true, true},
      {"abc", {0x61, 0x62, 0x63}, true, true},
      {"\xc3\xa9", {0xe9}, true, true},
      {"\xe2\x82\xac", {0x20ac}, true, true},
      {"\xf0\x9f\x98\x80", {0x1f600}, true, true},
      {"\xf4\x8f\xbf\xbf", {0x10ffff}, true, true},
      {"\xed\x9f\xbf", {0xd7ff}, true, true},
      {"\x80", {0xfffd}, false, false},
      {"\xbf", {0xfffd}, false, false},
      {"\xff", {0xfffd}, false, false},
      // Overlong forms.
      {"\xc0\x80", {0xfffd, 0xfffd}, false, false},
      {"\xc1\xbf", {0xfffd, 0xfffd}, false, false},
      {"\xe0\x80\x80", {0xfffd, 0xfffd, 0xfffd}, false, false},
      {"\xe0\x9f\xbf", {0xfffd, 0xfffd, 0xfffd}, false, false},
      {"\xf0\x80\x80\x80", {0xfffd, 0xfffd, 0xfffd, 0xfffd}, false, false},
      {"\xf0\x8f\xbf\xbf", {0xfffd, 0xfffd, 0xfffd, 0xfffd}, false, false},
      // Surrogates: refused by the strict rule only.
      {"\xed\xa0\x80", {0xfffd, 0xfffd, 0xfffd}, false, true},
      {"\xed\xbf\xbf", {0xfffd, 0xfffd, 0xfffd}, false, true},
      // Past U+10FFFF, and lead bytes of the old 5- and 6-byte forms.
      {"\xf4\x90\x80\x80", {0xfffd, 0xfffd, 0xfffd, 0xfffd}, false, false},
      {"\xf5\x80\x80\x80", {0xfffd, 0xfffd, 0xfffd, 0xfffd}, false, false},
      {"\xf8\x88\x80\x80\x80", {0xfffd, 0xfffd, 0xfffd, 0xfffd, 0xfffd}, false, false},
      // Truncated sequences: the bytes so far are one maximal subpart.
      {"\xc2", {0xfffd}, false, false},
      {"\xe2\x82", {0xfffd}, false, false},
      {"\xf0\x9f\x98", {0xfffd}, false, false},
      {"a\xf0\x9f\x98"
       "b",
       {0x61, 0xfffd, 0x62},
       false,
       false},
      {"\xe2"
       "A",
       {0xfffd, 0x41},
       false,
       false},
      {"\xe2\x82\xac\x80\xe2", {0x20ac, 0xfffd, 0xfffd}, false, false},
  };
  return kCases;
}

std::string Hex(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
  return out;
}

TEST(Utf8Test, AcceptanceRulesMatchPython) {
  for (const Case& c : Cases()) {
    EXPECT_EQ(IsValidUtf8(c.bytes), c.strict) << Hex(c.bytes);
    EXPECT_EQ(IsValidUtf8(c.bytes, Utf8Rule::kStrict), c.strict) << Hex(c.bytes);
    EXPECT_EQ(IsValidUtf8(c.bytes, Utf8Rule::kSurrogatePass), c.surrogatepass) << Hex(c.bytes);
  }
}

TEST(Utf8Test, ReplaceSubstitutesMaximalSubpartsAsPython) {
  for (const Case& c : Cases()) {
    std::vector<uint32_t> got;
    for (size_t i = 0; i < c.bytes.size();) {
      got.push_back(NextCodePoint(c.bytes, &i, Utf8Rule::kStrict, Utf8Invalid::kReplace));
    }
    EXPECT_EQ(got, c.replaced) << Hex(c.bytes);
  }
}

TEST(Utf8Test, Latin1TakesIllFormedBytesOneByOne) {
  const std::string_view text =
      "\xc3\xa9\xe2\x82"
      "A\xed\xa0\x80";
  std::vector<uint32_t> got;
  for (size_t i = 0; i < text.size();) {
    got.push_back(NextCodePoint(text, &i, Utf8Rule::kStrict, Utf8Invalid::kLatin1));
  }
  EXPECT_EQ(got, (std::vector<uint32_t>{0xe9, 0xe2, 0x82, 0x41, 0xed, 0xa0, 0x80}));
}

TEST(Utf8Test, DecodeReportsLengthAndCode) {
  const Utf8Char euro = DecodeUtf8("\xe2\x82\xac!", 0);
  EXPECT_TRUE(euro.valid);
  EXPECT_EQ(euro.code, 0x20acu);
  EXPECT_EQ(euro.length, 3);
  const Utf8Char surrogate = DecodeUtf8("\xed\xa0\x80", 0, Utf8Rule::kSurrogatePass);
  EXPECT_TRUE(surrogate.valid);
  EXPECT_EQ(surrogate.code, 0xd800u);
  EXPECT_EQ(surrogate.length, 3);
  const Utf8Char cut = DecodeUtf8("x\xf0\x9f", 1);
  EXPECT_FALSE(cut.valid);
  EXPECT_EQ(cut.code, 0xf0u);  // the first byte of the subpart
  EXPECT_EQ(cut.length, 2);
}

// WellFormedUtf8Prefix's answer the slow way: DecodeUtf8 byte after byte.
Utf8Prefix PrefixByDecoding(std::string_view text, Utf8Rule rule) {
  for (size_t i = 0; i < text.size();) {
    const Utf8Char c = DecodeUtf8(text, i, rule);
    if (!c.valid) {
      const auto lead = static_cast<unsigned char>(text[i]);
      return {i, lead >= 0xc2 && lead <= 0xf4 && i + c.length == text.size()};
    }
    i += c.length;
  }
  return {text.size(), false};
}

TEST(Utf8Test, WellFormedPrefixFindsTheFirstIllFormedByteAtEveryAlignment) {
  // Each case after 0..17 ASCII bytes (the ASCII words of eight bytes fall on every position
  // around it), alone and followed by ASCII.
  for (const Case& c : Cases()) {
    for (size_t lead_in = 0; lead_in < 18; ++lead_in) {
      for (const std::string_view tail : {"", "z", "tail of ascii text"}) {
        const std::string text =
            std::string(lead_in, 'a') + std::string(c.bytes) + std::string(tail);
        for (const Utf8Rule rule : {Utf8Rule::kStrict, Utf8Rule::kSurrogatePass}) {
          const Utf8Prefix got = WellFormedUtf8Prefix(text, rule);
          const Utf8Prefix want = PrefixByDecoding(text, rule);
          ASSERT_EQ(got.length, want.length) << Hex(text);
          ASSERT_EQ(got.cut_short, want.cut_short) << Hex(text);
        }
        ASSERT_EQ(WellFormedUtf8Prefix(text).length == text.size(), c.strict) << Hex(text);
      }
    }
  }
}

TEST(Utf8Test, WellFormedPrefixTellsACutSequenceFromAnIllFormedOne) {
  const std::string ascii(40, 'a');
  // Cut short: the lead byte of a sequence, and then its right bytes, until the end.
  for (const std::string_view cut : {"\xc3", "\xe2\x82", "\xf0\x9f\x98", "\xf4\x8f", "\xe0\xa0"}) {
    const Utf8Prefix p = WellFormedUtf8Prefix(ascii + std::string(cut));
    EXPECT_EQ(p.length, ascii.size()) << Hex(cut);
    EXPECT_TRUE(p.cut_short) << Hex(cut);
  }
  // Ill-formed at the end whatever follows: no sequence starts so, or its second byte is wrong.
  for (const std::string_view bad :
       {"\xff", "\x80", "\xc0", "\xc1", "\xf5", "\xe0\x80", "\xf4\x90", "\xed\xa0", "\xc3("}) {
    const Utf8Prefix p = WellFormedUtf8Prefix(ascii + std::string(bad));
    EXPECT_EQ(p.length, ascii.size()) << Hex(bad);
    EXPECT_FALSE(p.cut_short) << Hex(bad);
  }
  EXPECT_TRUE(WellFormedUtf8Prefix(ascii + "\xed\xa0", Utf8Rule::kSurrogatePass).cut_short);
  const Utf8Prefix whole = WellFormedUtf8Prefix(ascii + "\xc3\xa9");
  EXPECT_EQ(whole.length, ascii.size() + 2);
  EXPECT_FALSE(whole.cut_short);
}

TEST(Utf8Test, EncodeRoundTripsEveryScalarValueAndSurrogates) {
  for (uint32_t cp = 0; cp <= kMaxCodePoint; ++cp) {
    std::string s;
    AppendUtf8(cp, &s);
    const bool surrogate = cp >= 0xd800 && cp <= 0xdfff;
    const Utf8Char back = DecodeUtf8(s, 0, Utf8Rule::kSurrogatePass);
    ASSERT_TRUE(back.valid) << cp;
    ASSERT_EQ(back.code, cp);
    ASSERT_EQ(back.length, s.size());
    ASSERT_EQ(IsValidUtf8(s), !surrogate) << cp;
  }
  std::string s;
  AppendUtf8(0x110000, &s);
  EXPECT_EQ(s, "\xef\xbf\xbd");  // U+FFFD
}

TEST(Utf8Test, PrefixLengthNeverCutsASequence) {
  EXPECT_EQ(Utf8PrefixLength("", 3), 0u);
  EXPECT_EQ(Utf8PrefixLength("abc", 3), 3u);
  EXPECT_EQ(Utf8PrefixLength("abcd", 3), 3u);
  EXPECT_EQ(Utf8PrefixLength("a\xe2\x82\xac", 2), 1u);  // inside the euro sign
  EXPECT_EQ(Utf8PrefixLength("a\xe2\x82\xac", 3), 1u);
  EXPECT_EQ(Utf8PrefixLength("a\xe2\x82\xac"
                             "b",
                             4),
            4u);
  EXPECT_EQ(Utf8PrefixLength("\x80\x80\x80\x80", 2), 0u);  // nothing but continuation bytes
}

}  // namespace
}  // namespace numprobe::detail
