// Python's text forms, reproduced exactly: msprobe writes its compare tables through pandas, so
// every number, string and list in them is Python's repr()/str() of a value. numprobe's tables
// must read byte for byte the same, so these follow CPython's rules (float_repr_style 'short',
// round(), str.__repr__, json.dumps of a list of strings).
#ifndef NUMPROBE_CORE_PY_FORMAT_H_
#define NUMPROBE_CORE_PY_FORMAT_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/utf8.h"

namespace numprobe::detail {

// repr(float(v)): the shortest digits that round-trip, fixed notation for 1e-4 <= |v| < 1e16
// ("0.0001", "2.0"), scientific otherwise ("1e-05", "1.5e+16"); "inf", "-inf", "nan".
std::string PyFloatRepr(double v);
void AppendPyFloatRepr(double v, std::string* out);
// The same text written into `buffer` (no allocation, for writers that gather a row's bytes).
inline constexpr size_t kPyFloatReprBytes = 32;  // "-1.7976931348623157e+308" is 24
std::string_view FormatPyFloatRepr(double v, char (&buffer)[kPyFloatReprBytes]);
// fmt's "{}" of a double, which is that repr without the ".0" after a whole number ("2", "-0").
std::string_view FormatShortestFloat(double v, char (&buffer)[kPyFloatReprBytes]);
// str(numpy.float32(v)): float32's shortest digits, laid out as repr does but with the form
// chosen by the value ("0.0010000467"; a float32 just under 1e-4 is "1e-04").
std::string PyFloat32Repr(float v);

// round(v, digits) for digits >= 0: the correctly rounded decimal (ties to even on the exact
// binary value), read back as a double.
double PyRound(double v, int digits);

// float('{:.12f}'.format(v)): msprobe's format_value for tensor metrics.
double PyFormatValue12(double v);

// repr(s) of a Python str (single quotes unless s has a ' and no ").
std::string PyStrRepr(std::string_view s);

// str(list) of a list of str: "['a', 'b']".
std::string PyStrListRepr(const std::vector<std::string>& items);

// json.dumps(s) of a str with ensure_ascii (the default): in double quotes, '"', '\\', \n, \r,
// \t, \b and \f escaped by name, every other character outside ' '..'~' as \uXXXX (UTF-16
// surrogate pairs above U+FFFF). `s` is read as strict UTF-8; json.dumps never sees bytes that
// are not (a Python str is text), so what they become is the caller's `invalid`.
struct JsonStringStyle {
  Utf8Invalid invalid = Utf8Invalid::kReplace;
  // json.dumps writes DEL (U+007F) as \u007f. JsonValue's writer has always written it as the
  // raw byte; kept so until that output is allowed to change (both are the same JSON text).
  bool escape_del = true;
};
void AppendJsonString(std::string_view s, std::string* out, JsonStringStyle style = {});

// json.dumps(list of str) with the default separators and ensure_ascii: '["a", "b"]'. Bytes that
// are not UTF-8 are written one \u00XX each (Utf8Invalid::kLatin1).
std::string JsonStringList(const std::vector<std::string>& items);

// True when `text` parses completely as a Python float literal (what pandas.to_numeric accepts
// for a finite number); stores the value.
bool ParsePyNumber(std::string_view text, double* value);

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_PY_FORMAT_H_
