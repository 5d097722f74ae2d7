#include "numprobe/npy.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/atomic_file.h"
#include "core/checked.h"
#include "core/quoted.h"
#include "core/utf8.h"
#include "formats/npy_internal.h"

namespace numprobe {
namespace {

static_assert(std::endian::native == std::endian::little, "numprobe assumes a little-endian host");

constexpr std::string_view kMagic = "\x93NUMPY";
// numpy refuses headers over 10000 characters unless told otherwise (_MAX_HEADER_SIZE). Larger
// ones are accepted only in the 2.0/3.0 formats (numpy writes 2.0 exactly when the header needs
// it), up to ReadOptions::max_header_bytes, which also lowers the 1.0 cap when set below 10000.
constexpr uint64_t kNumpyMaxHeader = 10000;
// numpy 2 allows 64 dimensions (1.x: 32); more is how CVE-2021-33430 overflowed numpy itself.
constexpr size_t kMaxDims = 64;
constexpr int kMaxNesting = 16;
constexpr size_t kAlign = 64;
// numpy leaves this many spaces of room in the header so that a growing axis can be rewritten
// in place (GROWTH_AXIS_MAX_DIGITS); reproduced so that EncodeNpy matches np.save byte for byte.
constexpr size_t kGrowthAxisMaxDigits = 21;

// ------------------------------------------------------------------------------------------
// A parser for the Python literal subset numpy writes in the header: a dict of str keys whose
// values are str, int (with py2's "L" suffix), True/False/None, tuples and lists. Written by
// hand because it must never evaluate anything and must bound every size and depth.

struct PyValue {
  enum class Kind { kStr, kInt, kBool, kNone, kTuple, kList };
  Kind kind = Kind::kNone;
  std::string str;
  int64_t integer = 0;
  bool int_overflow = false;
  bool boolean = false;
  std::vector<PyValue> items;
};

class LiteralParser {
 public:
  explicit LiteralParser(std::string_view text) : text_(text) {}

  // The top-level dict, as (key, value) pairs in file order.
  Result<std::vector<std::pair<std::string, PyValue>>> ParseDict() {
    SkipSpace();
    if (!Eat('{')) return Error("expected '{'");
    std::vector<std::pair<std::string, PyValue>> out;
    while (true) {
      SkipSpace();
      if (Eat('}')) break;
      PyValue key;
      NUMPROBE_RETURN_IF_ERROR(ParseValue(0, &key));
      if (key.kind != PyValue::Kind::kStr) return Error("dict key is not a string");
      SkipSpace();
      if (!Eat(':')) return Error("expected ':'");
      PyValue value;
      NUMPROBE_RETURN_IF_ERROR(ParseValue(0, &value));
      out.emplace_back(std::move(key.str), std::move(value));
      SkipSpace();
      if (Eat('}')) break;
      if (!Eat(',')) return Error("expected ',' or '}'");
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the dict");
    return out;
  }

 private:
  Status Error(std::string_view what) const {
    return Status::Corrupt("bad header literal at offset " + std::to_string(pos_) + ": " +
                           std::string(what));
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  bool Eat(char c) {
    if (Peek() != c || AtEnd()) return false;
    ++pos_;
    return true;
  }
  void SkipSpace() {
    while (!AtEnd() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                        text_[pos_] == '\r' || text_[pos_] == '\f' || text_[pos_] == '\v')) {
      ++pos_;
    }
  }
  bool EatWord(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    const size_t end = pos_ + word.size();
    if (end < text_.size() &&
        ((std::isalnum(static_cast<unsigned char>(text_[end])) != 0) || text_[end] == '_')) {
      return false;
    }
    pos_ = end;
    return true;
  }

  Status ParseValue(int depth, PyValue* out) {
    SkipSpace();
    if (AtEnd()) return Error("unexpected end of header");
    const char c = Peek();
    if (c == '\'' || c == '"') return ParseString(out);
    if ((c == 'u' || c == 'U') && pos_ + 1 < text_.size() &&
        (text_[pos_ + 1] == '\'' || text_[pos_ + 1] == '"')) {
      ++pos_;  // py2 unicode literal u'...'
      return ParseString(out);
    }
    if (c == '-' || c == '+' || (std::isdigit(static_cast<unsigned char>(c)) != 0))
      return ParseInt(out);
    if (EatWord("True")) {
      out->kind = PyValue::Kind::kBool;
      out->boolean = true;
      return Status::Ok();
    }
    if (EatWord("False")) {
      out->kind = PyValue::Kind::kBool;
      out->boolean = false;
      return Status::Ok();
    }
    if (EatWord("None")) {
      out->kind = PyValue::Kind::kNone;
      return Status::Ok();
    }
    if (c == '(' || c == '[') {
      if (depth >= kMaxNesting) {
        return Status::OutOfRange("header literal nests deeper than " +
                                  std::to_string(kMaxNesting) + " levels");
      }
      const char close = c == '(' ? ')' : ']';
      ++pos_;
      std::vector<PyValue> items;
      bool saw_comma = false;
      while (true) {
        SkipSpace();
        if (Eat(close)) break;
        PyValue item;
        NUMPROBE_RETURN_IF_ERROR(ParseValue(depth + 1, &item));
        items.push_back(std::move(item));
        SkipSpace();
        if (Eat(close)) break;
        if (!Eat(',')) return Error(std::string("expected ',' or '") + close + "'");
        saw_comma = true;
      }
      if (c == '(' && items.size() == 1 && !saw_comma) {
        *out = std::move(items[0]);  // "(x)" is x, not a tuple
        return Status::Ok();
      }
      out->kind = c == '(' ? PyValue::Kind::kTuple : PyValue::Kind::kList;
      out->items = std::move(items);
      return Status::Ok();
    }
    return Error("unexpected character");
  }

  Status ParseString(PyValue* out) {
    const char quote = text_[pos_++];
    std::string s;
    while (true) {
      if (AtEnd()) return Error("unterminated string");
      const char c = text_[pos_++];
      if (c == quote) break;
      if (c == '\n') return Error("newline inside a string");
      if (c == '\\') {
        if (AtEnd()) return Error("unterminated string");
        s += text_[pos_++];  // the escaped character itself; descrs never need more
        continue;
      }
      s += c;
    }
    out->kind = PyValue::Kind::kStr;
    out->str = std::move(s);
    return Status::Ok();
  }

  Status ParseInt(PyValue* out) {
    bool negative = false;
    if (Peek() == '-' || Peek() == '+') {
      negative = Peek() == '-';
      ++pos_;
    }
    if (std::isdigit(static_cast<unsigned char>(Peek())) == 0) return Error("expected a digit");
    // Accumulate as a negative number so that INT64_MIN parses; overflow is remembered.
    int64_t value = 0;
    bool overflow = false;
    while (std::isdigit(static_cast<unsigned char>(Peek())) != 0) {
      const int digit = text_[pos_++] - '0';
      int64_t next = 0;
      if (__builtin_mul_overflow(value, 10, &next) || __builtin_sub_overflow(next, digit, &next)) {
        overflow = true;
      } else {
        value = next;
      }
    }
    if (Peek() == 'L' || Peek() == 'l') ++pos_;  // py2 long
    if ((std::isalnum(static_cast<unsigned char>(Peek())) != 0) || Peek() == '_' || Peek() == '.') {
      return Error("malformed integer");
    }
    if (!negative) {
      if (value == INT64_MIN) {
        overflow = true;  // 2^63 has no positive int64 (found by fuzz_npy)
      } else {
        value = -value;
      }
    }
    out->kind = PyValue::Kind::kInt;
    out->integer = overflow ? 0 : value;
    out->int_overflow = overflow;
    return Status::Ok();
  }

  std::string_view text_;
  size_t pos_ = 0;
};

std::string QuoteText(std::string_view s) { return detail::Quoted(s, 80); }

struct DescrInfo {
  DType dtype;
  bool big_endian;
  bool assumed;
  std::string warning;
};

// Maps a descr string to a dtype: the standard numeric kinds, ml_dtypes' opaque spellings, and
// precise refusals for everything else.
Result<DescrInfo> ParseDescr(std::string_view descr, const NpyReadOptions& options) {
  const std::string quoted = QuoteText(descr);
  if (descr == "bfloat16") return DescrInfo{DType::kBF16, false, false, ""};
  std::string_view code = descr;
  bool big = false;
  if (!code.empty() && (code[0] == '<' || code[0] == '>' || code[0] == '|' || code[0] == '=')) {
    big = code[0] == '>';
    code.remove_prefix(1);
  }
  if (code.empty()) return Status::Unsupported("unknown descr " + quoted);
  const char kind = code[0];
  const std::string_view size = code.substr(1);
  if (kind == 'O')
    return Status::Rejected("object arrays (pickle) are not read (descr " + quoted + ")");
  if (kind == 'V') {
    if (size == "2") {
      if (options.void2_dtype && ItemSize(*options.void2_dtype) == 2) {
        return DescrInfo{*options.void2_dtype, big, true, ""};
      }
      return DescrInfo{DType::kBF16, big, true,
                       "descr " + quoted + " read as bfloat16 (ml_dtypes convention)"};
    }
    if (size == "1") {
      if (options.void1_dtype && ItemSize(*options.void1_dtype) == 1) {
        return DescrInfo{*options.void1_dtype, false, true, ""};
      }
      return DescrInfo{DType::kU8, false, true,
                       "descr " + quoted + " (opaque bytes, e.g. a float8 type) read as uint8"};
    }
    return Status::Unsupported("descr " + quoted + " (opaque void elements) is not supported");
  }
  if (kind == 'f' && size == "1") {
    // ml_dtypes writes float8_e5m2 as '<f1', which numpy itself cannot read back.
    return DescrInfo{DType::kF8E5M2, false, true,
                     "descr " + quoted + " read as float8_e5m2 (ml_dtypes convention)"};
  }
  if ((kind == 'f' && (size == "12" || size == "16")) ||
      (kind == 'c' && (size == "24" || size == "32")) || kind == 'g' || kind == 'G') {
    return Status::Unsupported("descr " + quoted + " (long double) is not supported");
  }
  if (kind == 'S' || kind == 'U' || kind == 'a') {
    return Status::Unsupported("descr " + quoted + " (strings) is not supported");
  }
  if (kind == 'M' || kind == 'm') {
    return Status::Unsupported("descr " + quoted + " (datetime) is not supported");
  }
  const auto dtype = DTypeFromNumpyCode(code);
  if (!dtype || ItemSize(*dtype) == 0) return Status::Unsupported("unknown descr " + quoted);
  return DescrInfo{*dtype, big && ItemSize(*dtype) > 1, false, ""};
}

// Column-major strides (first index fastest), with the same zero-dim rule as ContiguousStrides.
std::vector<int64_t> FortranStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    strides[i] = s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
  return strides;
}

void ByteSwapInPlace(std::byte* data, uint64_t bytes, int width) {
  for (uint64_t pos = 0; pos + static_cast<uint64_t>(width) <= bytes; pos += width) {
    std::reverse(data + pos, data + pos + width);
  }
}

// ParseNpyHeader, also returning the warning about an assumed dtype (empty if none).
// `bytes` holds the start of a .npy of `total` bytes (at least its header), or all of it when
// `total` is nullopt.
Result<NpyHeader> ParseHeader(std::span<const std::byte> bytes, const NpyReadOptions& options,
                              std::string* descr_warning,
                              std::optional<uint64_t> total = std::nullopt) {
  const uint64_t size = bytes.size();
  if (size < kMagic.size()) {
    return Status::Corrupt("file of " + std::to_string(size) +
                           " bytes is too short for the .npy magic");
  }
  if (std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0) {
    return Status::Corrupt("bad .npy magic (not a NumPy array file)");
  }
  if (size < 8) return Status::Corrupt("file truncated in the .npy format version");
  NpyHeader h;
  h.major = std::to_integer<int>(bytes[6]);
  h.minor = std::to_integer<int>(bytes[7]);
  if (h.major < 1 || h.major > 3 || h.minor != 0) {
    return Status::Unsupported("unsupported .npy format version " + std::to_string(h.major) + "." +
                               std::to_string(h.minor));
  }
  const uint64_t prefix = h.major == 1 ? 10 : 12;
  if (size < prefix) return Status::Corrupt("file truncated in the .npy header length field");
  uint64_t header_len =
      std::to_integer<uint64_t>(bytes[8]) | (std::to_integer<uint64_t>(bytes[9]) << 8);
  if (h.major >= 2) {
    header_len |=
        (std::to_integer<uint64_t>(bytes[10]) << 16) | (std::to_integer<uint64_t>(bytes[11]) << 24);
  }
  if (header_len > size - prefix) {
    return Status::Corrupt("header length " + std::to_string(header_len) + " exceeds file size " +
                           std::to_string(size));
  }
  const uint64_t cap = h.major == 1 ? std::min(kNumpyMaxHeader, options.base.max_header_bytes)
                                    : options.base.max_header_bytes;
  if (header_len > cap) {
    return Status::OutOfRange("header length " + std::to_string(header_len) +
                              " exceeds the cap of " + std::to_string(cap) + " for format " +
                              std::to_string(h.major) + ".0");
  }
  const std::string_view text(reinterpret_cast<const char*>(bytes.data() + prefix), header_len);
  if (h.major == 3 && !detail::IsValidUtf8(text)) {
    return Status::Corrupt("format 3.0 header is not valid UTF-8");
  }

  LiteralParser parser(text);
  NUMPROBE_ASSIGN_OR_RETURN(auto dict, parser.ParseDict());
  const PyValue* descr = nullptr;
  const PyValue* fortran = nullptr;
  const PyValue* shape = nullptr;
  for (const auto& [key, value] : dict) {
    const PyValue** slot = key == "descr"           ? &descr
                           : key == "fortran_order" ? &fortran
                           : key == "shape"         ? &shape
                                                    : nullptr;
    if (slot == nullptr) return Status::Corrupt("header has an unexpected key " + QuoteText(key));
    if (*slot != nullptr) return Status::Corrupt("header repeats the key " + QuoteText(key));
    *slot = &value;
  }
  if (descr == nullptr) return Status::Corrupt("header lacks the key 'descr'");
  if (fortran == nullptr) return Status::Corrupt("header lacks the key 'fortran_order'");
  if (shape == nullptr) return Status::Corrupt("header lacks the key 'shape'");

  if (descr->kind == PyValue::Kind::kList || descr->kind == PyValue::Kind::kTuple) {
    return Status::Unsupported("structured dtype (a list descr) is not supported");
  }
  if (descr->kind != PyValue::Kind::kStr) return Status::Corrupt("descr is not a string");
  h.descr = descr->str;
  NUMPROBE_ASSIGN_OR_RETURN(const DescrInfo info, ParseDescr(h.descr, options));
  h.dtype = info.dtype;
  h.big_endian = info.big_endian;
  h.dtype_assumed = info.assumed;
  *descr_warning = info.warning;

  if (fortran->kind != PyValue::Kind::kBool) return Status::Corrupt("fortran_order is not a bool");
  h.fortran_order = fortran->boolean;

  if (shape->kind != PyValue::Kind::kTuple) return Status::Corrupt("shape is not a tuple");
  if (shape->items.size() > kMaxDims) {
    return Status::OutOfRange("shape has " + std::to_string(shape->items.size()) +
                              " dimensions, more than " + std::to_string(kMaxDims));
  }
  for (const PyValue& d : shape->items) {
    if (d.kind != PyValue::Kind::kInt) return Status::Corrupt("shape holds a non-integer");
    if (d.int_overflow) return Status::OutOfRange("shape dimension overflows 64 bits");
    if (d.integer < 0) {
      return Status::Corrupt("negative dimension " + std::to_string(d.integer) + " in shape");
    }
    h.shape.push_back(d.integer);
  }
  const auto numel = CheckedNumel(h.shape);
  if (!numel) return Status::OutOfRange("shape product overflows 64 bits");
  const auto data_bytes = CheckedMul<uint64_t>(static_cast<uint64_t>(*numel), ItemSize(h.dtype));
  if (!data_bytes || *data_bytes > static_cast<uint64_t>(INT64_MAX)) {
    return Status::OutOfRange("array size in bytes overflows 64 bits");
  }
  h.data_offset = prefix + header_len;
  h.data_bytes = *data_bytes;
  const uint64_t have = total.value_or(size) - h.data_offset;
  if (h.data_bytes > have) {
    return Status::Corrupt("data truncated: need " + std::to_string(h.data_bytes) +
                           " bytes, have " + std::to_string(have));
  }
  return h;
}

}  // namespace

Result<NpyHeader> detail::ParseNpyHeaderPrefix(std::span<const std::byte> head, uint64_t total,
                                               const NpyReadOptions& options,
                                               std::string* descr_warning) {
  if (total < head.size()) return Status::InvalidArgument("npy prefix longer than its file");
  return ParseHeader(head, options, descr_warning, total);
}

Result<NpyHeader> ParseNpyHeader(std::span<const std::byte> bytes, const NpyReadOptions& options) {
  std::string warning;
  return ParseHeader(bytes, options, &warning);
}

Result<Tensor> ReadNpyArray(const std::shared_ptr<const Buffer>& owner,
                            std::span<const std::byte> bytes, const NpyReadOptions& options,
                            std::vector<std::string>* warnings) {
  std::string descr_warning;
  NUMPROBE_ASSIGN_OR_RETURN(const NpyHeader h, ParseHeader(bytes, options, &descr_warning));
  if (!descr_warning.empty() && warnings != nullptr) warnings->push_back(descr_warning);
  const uint64_t trailing = bytes.size() - h.data_offset - h.data_bytes;
  if (trailing > 0 && warnings != nullptr) {
    warnings->push_back(std::to_string(trailing) + " trailing bytes after the array data ignored");
  }

  const std::span<const std::byte> data = bytes.subspan(h.data_offset, h.data_bytes);
  const int item = ItemSize(h.dtype);
  const int swap_width = IsComplex(h.dtype) ? item / 2 : item;
  const auto address = reinterpret_cast<uintptr_t>(data.data());
  const bool aligned = address % static_cast<uintptr_t>(swap_width) == 0;
  bool bad_bools = false;
  if (h.dtype == DType::kBool) {
    bad_bools = std::any_of(data.begin(), data.end(),
                            [](std::byte b) { return std::to_integer<uint8_t>(b) > 1; });
  }
  const bool swap = h.big_endian && swap_width > 1;

  TensorView view;
  view.dtype = h.dtype;
  view.shape = h.shape;
  view.strides = h.fortran_order ? FortranStrides(h.shape) : ContiguousStrides(h.shape);
  NUMPROBE_RETURN_IF_ERROR(ValidateView(view.dtype, view.shape, view.strides, 0, h.data_bytes));
  if (!swap && aligned && !bad_bools && owner) {
    view.data = data.data();
    return Tensor(owner, std::move(view));
  }
  // A copy of the same layout (Fortran order stays a strided view of the copy), fixed up in
  // place: byte order, and bool bytes other than 0/1 (a C++ bool holding 2 is undefined).
  NUMPROBE_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> copy, Buffer::CopyOf(data));
  if (swap) ByteSwapInPlace(copy->mutable_data(), copy->size(), swap_width);
  if (bad_bools) {
    std::byte* p = copy->mutable_data();
    for (size_t i = 0; i < copy->size(); ++i)
      p[i] = p[i] != std::byte{0} ? std::byte{1} : std::byte{0};
  }
  view.data = copy->data();
  return Tensor(std::move(copy), std::move(view));
}

// Every Read* reader has this signature; the tensors it returns share ownership of `file`.
// NOLINTNEXTLINE(performance-unnecessary-value-param)
Result<TensorFile> ReadNpy(std::shared_ptr<const Buffer> file, const ReadOptions& options) {
  if (!file) return Status::InvalidArgument("no buffer");
  NpyReadOptions npy_options;
  npy_options.base = options;
  TensorFile out;
  out.format = FileFormat::kNpy;
  NUMPROBE_ASSIGN_OR_RETURN(Tensor tensor,
                            ReadNpyArray(file, file->bytes(), npy_options, &out.warnings));
  out.tensors.push_back(NamedTensor{"", std::move(tensor), ""});
  return out;
}

namespace {

// The descr written for `dtype`: numpy's own where numpy has the type, ml_dtypes' '<V2' for
// bfloat16, and '|V1' for the float8 types.
std::string WriteDescr(DType dtype) {
  if (dtype == DType::kBF16) return "<V2";
  if (IsFloat8(dtype)) return "|V1";
  const std::string_view code = Traits(dtype).numpy_descr;
  return std::string(ItemSize(dtype) == 1 ? "|" : "<") + std::string(code);
}

Result<std::string> NpyHeaderBytes(const TensorView& view) {
  for (int64_t d : view.shape) {
    if (d < 0) return Status::InvalidArgument("negative dimension in the view to write");
  }
  // np.save's layout: sorted keys, repr() of each value, room for a growing axis, then spaces
  // and '\n' up to a multiple of 64 bytes.
  std::string shape = "(";
  for (size_t i = 0; i < view.shape.size(); ++i) {
    if (i > 0) shape += ", ";
    shape += std::to_string(view.shape[i]);
  }
  if (view.shape.size() == 1) shape += ",";
  shape += ")";
  std::string dict = "{'descr': '" + WriteDescr(view.dtype) +
                     "', 'fortran_order': False, 'shape': " + shape + ", }";
  if (!view.shape.empty()) {
    const size_t digits = std::to_string(view.shape[0]).size();
    dict.append(kGrowthAxisMaxDigits - std::min(digits, kGrowthAxisMaxDigits), ' ');
  }
  int major = 1;
  size_t prefix = 10;
  size_t total = prefix + dict.size() + 1;
  size_t pad = kAlign - total % kAlign;
  if (dict.size() + 1 + pad > 0xFFFF) {
    major = 2;
    prefix = 12;
    total = prefix + dict.size() + 1;
    pad = kAlign - total % kAlign;
  }
  const uint64_t header_len = dict.size() + 1 + pad;
  std::string out(kMagic);
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>((header_len >> (8 * i)) & 0xFF);
  out += dict;
  out.append(pad, ' ');
  out += '\n';
  return out;
}

// The view's elements in C order: in place when already contiguous, else a copy.
Result<std::pair<std::span<const std::byte>, Tensor>> ElementsInCOrder(const TensorView& view) {
  if (view.strides.size() != view.shape.size()) {
    return Status::InvalidArgument("view has " + std::to_string(view.shape.size()) + " dims but " +
                                   std::to_string(view.strides.size()) + " strides");
  }
  const auto numel = CheckedNumel(view.shape);
  if (!numel) return Status::OutOfRange("shape product overflows 64 bits");
  if (*numel == 0) return std::pair{std::span<const std::byte>(), Tensor()};
  if (view.is_contiguous()) {
    const auto bytes = static_cast<size_t>(*numel) * static_cast<size_t>(ItemSize(view.dtype));
    return std::pair{std::span<const std::byte>(view.first(), bytes), Tensor()};
  }
  NUMPROBE_ASSIGN_OR_RETURN(Tensor copy, Tensor::CopyOf(view));
  const auto bytes = static_cast<size_t>(*numel) * static_cast<size_t>(ItemSize(view.dtype));
  const std::span<const std::byte> span(copy.view().first(), bytes);
  return std::pair{span, std::move(copy)};
}

}  // namespace

Result<std::vector<std::byte>> EncodeNpy(const TensorView& view) {
  NUMPROBE_ASSIGN_OR_RETURN(const std::string header, NpyHeaderBytes(view));
  NUMPROBE_ASSIGN_OR_RETURN(auto data, ElementsInCOrder(view));
  std::vector<std::byte> out(header.size() + data.first.size());
  std::memcpy(out.data(), header.data(), header.size());
  if (!data.first.empty())
    std::memcpy(out.data() + header.size(), data.first.data(), data.first.size());
  return out;
}

Status WriteNpy(const std::filesystem::path& path, const TensorView& view, FileSync sync) {
  NUMPROBE_ASSIGN_OR_RETURN(const std::string header, NpyHeaderBytes(view));
  NUMPROBE_ASSIGN_OR_RETURN(auto data, ElementsInCOrder(view));
  NUMPROBE_ASSIGN_OR_RETURN(detail::AtomicOutput out, detail::AtomicOutput::Create(path, sync));
  NUMPROBE_RETURN_IF_ERROR(out.Write(header));
  NUMPROBE_RETURN_IF_ERROR(out.Write(data.first));
  return out.Commit();
}

}  // namespace numprobe
