// UTF-8, decoded, validated and encoded in one place. Every reader and writer of text that must
// be UTF-8 (npy 3.0 headers, pickle strings, .pt tensor names, JSON strings, terminal output)
// uses these, with its acceptance rule and its handling of ill-formed bytes spelled out at the
// call site.
//
// Acceptance rules:
// - kStrict: RFC 3629 (Unicode's "well-formed UTF-8"): shortest form only, no surrogate code
//   points (U+D800..U+DFFF), nothing above U+10FFFF. The default.
// - kSurrogatePass: kStrict, except that surrogate code points encoded as three bytes
//   (ED A0..BF xx) are accepted, as Python's "surrogatepass" error handler does (pickle's
//   BINUNICODE strings, and so torch.save names, are decoded that way).
//
// Ill-formed bytes are reported as maximal subparts (Unicode's "U+FFFD substitution of maximal
// subparts", which Python's "replace" handler and browsers follow): the longest prefix of the
// bytes at a position that could still begin a well-formed sequence, and at least one byte.
// What a caller makes of them (refuse, U+FFFD, one \xNN per byte, ...) is its choice.
#ifndef NUMPROBE_CORE_UTF8_H_
#define NUMPROBE_CORE_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace numprobe::detail {

enum class Utf8Rule : uint8_t { kStrict, kSurrogatePass };

inline constexpr uint32_t kReplacementChar = 0xFFFD;
inline constexpr uint32_t kMaxCodePoint = 0x10FFFF;

// One step of decoding.
struct Utf8Char {
  uint32_t code = 0;   // the code point; for an ill-formed subpart, the value of its first byte
  uint8_t length = 1;  // bytes consumed: 1-4 when well-formed, 1-3 (the maximal subpart) when not
  bool valid = false;
};

// Decodes the sequence at text[i] (i < text.size()) under `rule`.
Utf8Char DecodeUtf8(std::string_view text, size_t i, Utf8Rule rule = Utf8Rule::kStrict);

// How much of `text` is well-formed under `rule`: the length of its longest well-formed prefix,
// and whether the bytes after it begin a sequence that `text` only cuts short (more bytes could
// still complete it: a reader of a stream waits for them before calling them ill-formed).
struct Utf8Prefix {
  size_t length = 0;
  bool cut_short = false;
};
Utf8Prefix WellFormedUtf8Prefix(std::string_view text, Utf8Rule rule = Utf8Rule::kStrict);

// True when all of `text` is well-formed under `rule` (the empty string is).
bool IsValidUtf8(std::string_view text, Utf8Rule rule = Utf8Rule::kStrict);

// What NextCodePoint makes of an ill-formed subpart.
enum class Utf8Invalid : uint8_t {
  kReplace,  // one U+FFFD per maximal subpart
  kLatin1,   // each byte of it as the code point of its value (U+0080..U+00FF), one at a time
};

// Decodes the code point at text[*i] (*i < text.size()) and advances *i past it.
uint32_t NextCodePoint(std::string_view text, size_t* i, Utf8Rule rule, Utf8Invalid invalid);

// Appends the encoding of `code` (<= U+10FFFF; a surrogate code point is written as its three
// bytes, as "surrogatepass" does; larger values are written as U+FFFD).
void AppendUtf8(uint32_t code, std::string* out);

// The length of the longest prefix of `text` of at most `max_bytes` bytes that does not cut a
// multi-byte sequence: a cut at max_bytes backs up over continuation bytes (10xxxxxx).
size_t Utf8PrefixLength(std::string_view text, size_t max_bytes);

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_UTF8_H_
