// The .npy reader and writer: the header literal parser, descr mapping, every validation error
// (code and phrase), zero-copy versus copy decisions, and writer -> reader round trips for every
// dtype, including strided input views.
#include "numprobe/npy.h"

#include <bit>
#include <complex>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "core/checked.h"
#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

#define EXPECT_ERROR(status_expr, code_, phrase_)     \
  do {                                                \
    const Status st_ = (status_expr);                 \
    EXPECT_EQ(st_.code(), (code_)) << st_.ToString(); \
    EXPECT_THAT(st_.message(), HasSubstr(phrase_));   \
  } while (false)

// A .npy file: magic, version, length field, `dict` padded like numpy (unless `raw_header`),
// then `data`.
std::string MakeNpy(const std::string& dict, const std::string& data = "", int major = 1,
                    bool pad = true) {
  const size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  if (pad) {
    const size_t total = prefix + header.size() + 1;
    header.append(64 - total % 64, ' ');
    header += '\n';
  }
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < prefix - 8; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  return out + header + data;
}

std::shared_ptr<const Buffer> ToBuffer(const std::string& s) {
  return Buffer::CopyOf(std::as_bytes(std::span(s))).value();
}

Result<NpyHeader> Parse(const std::string& file, const NpyReadOptions& options = {}) {
  return ParseNpyHeader(std::as_bytes(std::span(file)), options);
}

Status ParseStatus(const std::string& file, const NpyReadOptions& options = {}) {
  auto h = Parse(file, options);
  return h.ok() ? Status::Ok() : h.error();
}

std::string Dict(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

template <typename T>
std::string Raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

TEST(NpyHeader, ParsesNumpysOwnHeader) {
  const std::string file = MakeNpy(Dict("<f4", "(2, 3)"), std::string(24, '\0'));
  auto h = Parse(file);
  ASSERT_TRUE(h.ok()) << h.error().ToString();
  EXPECT_EQ(h->major, 1);
  EXPECT_EQ(h->descr, "<f4");
  EXPECT_EQ(h->dtype, DType::kF32);
  EXPECT_FALSE(h->big_endian);
  EXPECT_FALSE(h->fortran_order);
  EXPECT_FALSE(h->dtype_assumed);
  EXPECT_EQ(h->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(h->data_offset, 128u);
  EXPECT_EQ(h->data_bytes, 24u);
}

TEST(NpyHeader, LiteralSyntaxVariants) {
  struct Case {
    std::string dict;
    std::vector<int64_t> shape;
    bool fortran;
  };
  const std::vector<Case> cases = {
      {"{'shape': (3,), 'fortran_order': True, 'descr': '<f4'}", {3}, true},
      {"{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (3,)}", {3}, false},
      {"{'descr':'<f4','fortran_order':False,'shape':(3L,),}", {3}, false},  // py2 long
      {"{u'descr': u'<f4', 'fortran_order': False, 'shape': (3,)}", {3}, false},
      {"  {\t'descr' : '<f4' ,\n 'fortran_order' : False , 'shape' : ( 3 , ) , }  ", {3}, false},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ()}", {}, false},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3)}", {0, 3}, false},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1,)}", {1, 1, 1, 1}, false},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (+3,)}", {3}, false},
  };
  for (const Case& c : cases) {
    auto numel = std::accumulate(c.shape.begin(), c.shape.end(), int64_t{1}, std::multiplies<>());
    auto h = Parse(MakeNpy(c.dict, std::string(static_cast<size_t>(numel) * 4, '\0')));
    ASSERT_TRUE(h.ok()) << c.dict << ": " << h.error().ToString();
    EXPECT_EQ(h->shape, c.shape) << c.dict;
    EXPECT_EQ(h->fortran_order, c.fortran) << c.dict;
  }
  // Unpadded header with no newline is still readable.
  EXPECT_TRUE(Parse(MakeNpy(Dict("|u1", "(1,)"), "x", 1, false)).ok());
}

TEST(NpyHeader, RejectsBadLiterals) {
  const std::string data(12, '\0');
  auto bad = [&](const std::string& dict) { return ParseStatus(MakeNpy(dict, data)); };
  EXPECT_ERROR(bad("['descr']"), ErrorCode::kCorrupt, "expected '{'");
  EXPECT_ERROR(bad("{'descr': '<f4' 'fortran_order': False, 'shape': (3,)}"), ErrorCode::kCorrupt,
               "expected ',' or '}'");
  EXPECT_ERROR(bad("{'descr': '<f4, 'fortran_order': False, 'shape': (3,)}"), ErrorCode::kCorrupt,
               "bad header literal");
  EXPECT_ERROR(bad("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} x"),
               ErrorCode::kCorrupt, "unexpected text after the dict");
  EXPECT_ERROR(bad("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)"), ErrorCode::kCorrupt,
               "bad header literal");
  EXPECT_ERROR(bad("{'descr': '<f4', 'fortran_order': False, 'shape': (3.0,)}"),
               ErrorCode::kCorrupt, "malformed integer");
  EXPECT_ERROR(bad("{'descr': '<f4', 'fortran_order': False, 'shape': (0x3,)}"),
               ErrorCode::kCorrupt, "malformed integer");
  EXPECT_ERROR(bad("{'descr': '<f4', 'fortran_order': false, 'shape': (3,)}"), ErrorCode::kCorrupt,
               "unexpected character");
  EXPECT_ERROR(bad("{'descr': __import__('os'), 'fortran_order': False, 'shape': (3,)}"),
               ErrorCode::kCorrupt, "unexpected character");
  EXPECT_ERROR(bad("{3: '<f4', 'fortran_order': False, 'shape': (3,)}"), ErrorCode::kCorrupt,
               "dict key is not a string");
  EXPECT_ERROR(bad("{'descr': '<f4', 'fortran_order': False, 'shape': " + std::string(40, '(') +
                   "3" + std::string(40, ')') + "}"),
               ErrorCode::kOutOfRange, "nests deeper");
}

TEST(NpyHeader, RequiresExactlyTheThreeKeys) {
  const std::string data(12, '\0');
  auto bad = [&](const std::string& dict) { return ParseStatus(MakeNpy(dict, data)); };
  EXPECT_ERROR(bad("{'descr': '<f4', 'shape': (3,)}"), ErrorCode::kCorrupt,
               "lacks the key 'fortran_order'");
  EXPECT_ERROR(bad("{'fortran_order': False, 'shape': (3,)}"), ErrorCode::kCorrupt,
               "lacks the key 'descr'");
  EXPECT_ERROR(bad("{'descr': '<f4', 'fortran_order': False}"), ErrorCode::kCorrupt,
               "lacks the key 'shape'");
  EXPECT_ERROR(bad("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}"),
               ErrorCode::kCorrupt, "unexpected key 'x'");
  EXPECT_ERROR(bad("{'descr': '<f4', 'descr': '<i4', 'fortran_order': False, 'shape': (3,)}"),
               ErrorCode::kCorrupt, "repeats the key 'descr'");
  EXPECT_ERROR(bad("{'descr': '<f4', 'fortran_order': 1, 'shape': (3,)}"), ErrorCode::kCorrupt,
               "fortran_order is not a bool");
  EXPECT_ERROR(bad("{'descr': '<f4', 'fortran_order': False, 'shape': [3]}"), ErrorCode::kCorrupt,
               "shape is not a tuple");
  EXPECT_ERROR(bad("{'descr': '<f4', 'fortran_order': False, 'shape': (3)}"), ErrorCode::kCorrupt,
               "shape is not a tuple");
  EXPECT_ERROR(bad("{'descr': '<f4', 'fortran_order': False, 'shape': ('3',)}"),
               ErrorCode::kCorrupt, "non-integer");
  EXPECT_ERROR(bad("{'descr': 4, 'fortran_order': False, 'shape': (3,)}"), ErrorCode::kCorrupt,
               "descr is not a string");
}

TEST(NpyHeader, MapsEveryDescr) {
  struct Case {
    const char* descr;
    DType dtype;
    bool big;
  };
  const Case cases[] = {
      {"|b1", DType::kBool, false}, {"|i1", DType::kI8, false},        {"|u1", DType::kU8, false},
      {"<i2", DType::kI16, false},  {">i2", DType::kI16, true},        {"<u2", DType::kU16, false},
      {"<i4", DType::kI32, false},  {">u4", DType::kU32, true},        {"<i8", DType::kI64, false},
      {"<u8", DType::kU64, false},  {"<f2", DType::kF16, false},       {">f2", DType::kF16, true},
      {"<f4", DType::kF32, false},  {">f8", DType::kF64, true},        {"<c8", DType::kC64, false},
      {">c16", DType::kC128, true}, {"=f4", DType::kF32, false},       {"f8", DType::kF64, false},
      {">i1", DType::kI8, false},   {"bfloat16", DType::kBF16, false},
  };
  for (const Case& c : cases) {
    const std::string data(16, '\0');
    auto h = Parse(MakeNpy(Dict(c.descr, "(1,)"), data));
    ASSERT_TRUE(h.ok()) << c.descr << ": " << h.error().ToString();
    EXPECT_EQ(h->dtype, c.dtype) << c.descr;
    EXPECT_EQ(h->big_endian, c.big) << c.descr;
    EXPECT_FALSE(h->dtype_assumed) << c.descr;
  }
}

TEST(NpyHeader, RefusesUnsupportedDescrsPrecisely) {
  auto bad = [](const std::string& descr) {
    return ParseStatus(MakeNpy(Dict(descr, "(1,)"), std::string(32, '\0')));
  };
  EXPECT_ERROR(bad("|O"), ErrorCode::kRejected, "object arrays (pickle) are not read");
  EXPECT_ERROR(bad("<f16"), ErrorCode::kUnsupported, "'<f16' (long double)");
  EXPECT_ERROR(bad("<c32"), ErrorCode::kUnsupported, "long double");
  EXPECT_ERROR(bad("<g"), ErrorCode::kUnsupported, "long double");
  EXPECT_ERROR(bad("|S5"), ErrorCode::kUnsupported, "'|S5' (strings)");
  EXPECT_ERROR(bad("<U5"), ErrorCode::kUnsupported, "'<U5' (strings)");
  EXPECT_ERROR(bad("<M8[ns]"), ErrorCode::kUnsupported, "'<M8[ns]' (datetime)");
  EXPECT_ERROR(bad("<m8[s]"), ErrorCode::kUnsupported, "datetime");
  EXPECT_ERROR(bad("|V8"), ErrorCode::kUnsupported, "'|V8' (opaque void");
  EXPECT_ERROR(bad("<f3"), ErrorCode::kUnsupported, "unknown descr '<f3'");
  EXPECT_ERROR(bad("<x4"), ErrorCode::kUnsupported, "unknown descr");
  EXPECT_ERROR(bad("<"), ErrorCode::kUnsupported, "unknown descr");
  EXPECT_ERROR(bad(""), ErrorCode::kUnsupported, "unknown descr");
  EXPECT_ERROR(
      ParseStatus(MakeNpy("{'descr': [('a', '<f4'), ('b', '<i8', (2,))], 'fortran_order': False, "
                          "'shape': (1,)}",
                          std::string(32, '\0'))),
      ErrorCode::kUnsupported, "structured dtype");
}

TEST(NpyHeader, OpaqueDescrsAreAssumedOrSupplied) {
  const std::string file = MakeNpy(Dict("<V2", "(2,)"), std::string(4, '\0'));
  auto h = Parse(file);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->dtype, DType::kBF16);
  EXPECT_TRUE(h->dtype_assumed);
  NpyReadOptions f16;
  f16.void2_dtype = DType::kF16;
  auto h2 = Parse(file, f16);
  ASSERT_TRUE(h2.ok());
  EXPECT_EQ(h2->dtype, DType::kF16);

  std::vector<std::string> warnings;
  auto t = ReadNpyArray(ToBuffer(file), ToBuffer(file)->bytes(), {}, &warnings);
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "descr '<V2' read as bfloat16 (ml_dtypes convention)");
  warnings.clear();
  auto buf = ToBuffer(file);
  ASSERT_TRUE(ReadNpyArray(buf, buf->bytes(), f16, &warnings).ok());
  EXPECT_TRUE(warnings.empty());

  const std::string v1 = MakeNpy(Dict("|V1", "(2,)"), "ab");
  auto u8 = Parse(v1);
  ASSERT_TRUE(u8.ok());
  EXPECT_EQ(u8->dtype, DType::kU8);
  NpyReadOptions fp8;
  fp8.void1_dtype = DType::kF8E4M3FN;
  EXPECT_EQ(Parse(v1, fp8)->dtype, DType::kF8E4M3FN);
  EXPECT_EQ(Parse(MakeNpy(Dict("<f1", "(2,)"), "ab"))->dtype, DType::kF8E5M2);
}

TEST(NpyHeader, ValidatesShapeAndSizes) {
  auto bad = [](const std::string& shape, const std::string& data = "") {
    return ParseStatus(MakeNpy(Dict("<f8", shape), data));
  };
  EXPECT_ERROR(bad("(-1,)"), ErrorCode::kCorrupt, "negative dimension -1");
  EXPECT_ERROR(bad("(3, -2)"), ErrorCode::kCorrupt, "negative dimension -2");
  EXPECT_ERROR(bad("(4294967296, 4294967296)"), ErrorCode::kOutOfRange, "shape product overflows");
  EXPECT_ERROR(bad("(0, 4294967296, 4294967296)"), ErrorCode::kOutOfRange,
               "shape product overflows");
  EXPECT_ERROR(bad("(99999999999999999999,)"), ErrorCode::kOutOfRange, "overflows 64 bits");
  EXPECT_ERROR(bad("(9223372036854775808,)"), ErrorCode::kOutOfRange, "dimension overflows");
  EXPECT_ERROR(bad("(-9223372036854775808,)"), ErrorCode::kCorrupt,
               "negative dimension -9223372036854775808");
  EXPECT_ERROR(bad("(9223372036854775807,)"), ErrorCode::kOutOfRange, "size in bytes overflows");
  // numel fits int64 but numel * 8 does not.
  EXPECT_ERROR(bad("(2305843009213693952,)"), ErrorCode::kOutOfRange, "size in bytes overflows");
  std::string dims = "(";
  for (int i = 0; i < 65; ++i) dims += "1, ";
  EXPECT_ERROR(bad(dims + ")"), ErrorCode::kOutOfRange, "65 dimensions, more than 64");
  EXPECT_ERROR(bad("(3,)", std::string(23, 'x')), ErrorCode::kCorrupt,
               "data truncated: need 24 bytes, have 23");
  EXPECT_ERROR(bad("(1000000000000,)"), ErrorCode::kCorrupt,
               "data truncated: need 8000000000000 bytes, have 0");
  EXPECT_TRUE(bad("(0, 3)").ok());
  EXPECT_TRUE(bad("()", std::string(8, 'x')).ok());
}

TEST(NpyHeader, TruncationAtEverySectionBoundary) {
  const std::string good = MakeNpy(Dict("<f4", "(2,)"), std::string(8, '\0'));
  ASSERT_TRUE(ParseStatus(good).ok());
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(ParseStatus(good.substr(0, n)).ok()) << n;
  }
  EXPECT_ERROR(ParseStatus(good.substr(0, 3)), ErrorCode::kCorrupt, "too short for the .npy magic");
  EXPECT_ERROR(ParseStatus(good.substr(0, 7)), ErrorCode::kCorrupt, "format version");
  EXPECT_ERROR(ParseStatus(good.substr(0, 9)), ErrorCode::kCorrupt, "header length field");
  EXPECT_ERROR(ParseStatus(good.substr(0, 40)), ErrorCode::kCorrupt,
               "header length 118 exceeds file size 40");
  EXPECT_ERROR(ParseStatus(good.substr(0, 133)), ErrorCode::kCorrupt,
               "data truncated: need 8 bytes, have 5");
  EXPECT_ERROR(ParseStatus("\x93NUMPZ\x01\x00"), ErrorCode::kCorrupt, "bad .npy magic");
}

TEST(NpyHeader, VersionsAndHeaderCaps) {
  const std::string data(8, '\0');
  for (int major : {1, 2, 3}) {
    auto h = Parse(MakeNpy(Dict("<f4", "(2,)"), data, major));
    ASSERT_TRUE(h.ok()) << major;
    EXPECT_EQ(h->major, major);
    EXPECT_EQ(h->data_offset, 128u);
  }
  std::string v4 = MakeNpy(Dict("<f4", "(2,)"), data, 2);
  v4[6] = 4;
  EXPECT_ERROR(ParseStatus(v4), ErrorCode::kUnsupported, "format version 4.0");
  std::string v11 = MakeNpy(Dict("<f4", "(2,)"), data);
  v11[7] = 1;
  EXPECT_ERROR(ParseStatus(v11), ErrorCode::kUnsupported, "format version 1.1");

  // numpy's 10000-character cap applies to 1.0 headers; 2.0/3.0 headers may be larger up to
  // max_header_bytes.
  const std::string long_dict = Dict("<f4", "(2,)") + std::string(20000, ' ');
  EXPECT_ERROR(ParseStatus(MakeNpy(long_dict, data, 1)), ErrorCode::kOutOfRange,
               "exceeds the cap of 10000");
  EXPECT_TRUE(ParseStatus(MakeNpy(long_dict, data, 2)).ok());
  NpyReadOptions small;
  small.base.max_header_bytes = 5000;
  EXPECT_ERROR(ParseStatus(MakeNpy(long_dict, data, 2), small), ErrorCode::kOutOfRange,
               "exceeds the cap of 5000");
  EXPECT_ERROR(ParseStatus(MakeNpy(Dict("<f4", "(2,)") + std::string(6000, ' '), data, 1), small),
               ErrorCode::kOutOfRange, "exceeds the cap of 5000");
  // A 2.0 length field claiming 4 GiB in a tiny file.
  std::string huge = MakeNpy(Dict("<f4", "(2,)"), data, 2);
  huge[8] = huge[9] = huge[10] = huge[11] = '\xff';
  EXPECT_ERROR(ParseStatus(huge), ErrorCode::kCorrupt,
               "header length 4294967295 exceeds file size");

  // 3.0 headers are UTF-8 (a non-ASCII space inside the padding would be legal UTF-8 but not a
  // valid literal; invalid UTF-8 is caught before parsing).
  EXPECT_ERROR(ParseStatus(MakeNpy(Dict("<f4", "(2,)") + "\xff", data, 3)), ErrorCode::kCorrupt,
               "not valid UTF-8");
  EXPECT_ERROR(ParseStatus(MakeNpy(Dict("<f4", "(2,)") + "\xc0\x80", data, 3)), ErrorCode::kCorrupt,
               "not valid UTF-8");
  EXPECT_ERROR(ParseStatus(MakeNpy(Dict("<f4", "(2,)") + "\xed\xa0\x80", data, 3)),
               ErrorCode::kCorrupt, "not valid UTF-8");
  // Latin-1 in a 1.0 header is not a UTF-8 problem, only a literal one.
  EXPECT_ERROR(ParseStatus(MakeNpy(Dict("<f4", "(2,)") + "\xff", data, 1)), ErrorCode::kCorrupt,
               "bad header literal");
}

TEST(NpyRead, AlignedLittleEndianIsViewedInPlace) {
  const std::vector<float> values = {1.5f, -2.0f, 0.0f, 3.25f, 7.0f, -0.5f};
  auto buf = ToBuffer(MakeNpy(Dict("<f4", "(2, 3)"), Raw(values)));
  std::vector<std::string> warnings;
  auto t = ReadNpyArray(buf, buf->bytes(), {}, &warnings);
  ASSERT_TRUE(t.ok()) << t.error().ToString();
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(t->storage(), buf);
  EXPECT_EQ(t->view().first(), buf->data() + 128);
  EXPECT_TRUE(t->view().is_contiguous());
  EXPECT_EQ(std::memcmp(t->view().first(), values.data(), 24), 0);
}

TEST(NpyRead, FortranOrderIsAColumnMajorView) {
  // a = [[1, 2, 3], [4, 5, 6]] stored column by column.
  const std::vector<int32_t> column_major = {1, 4, 2, 5, 3, 6};
  auto buf = ToBuffer(MakeNpy(Dict("<i4", "(2, 3)", true), Raw(column_major)));
  auto t = ReadNpyArray(buf, buf->bytes(), {}, nullptr);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->storage(), buf);  // no copy
  EXPECT_EQ(t->view().strides, (std::vector<int64_t>{1, 2}));
  auto c = Tensor::CopyOf(t->view());
  ASSERT_TRUE(c.ok());
  std::vector<int32_t> row_major(6);
  std::memcpy(row_major.data(), c->view().first(), 24);
  EXPECT_EQ(row_major, (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
}

TEST(NpyRead, BigEndianIsCopiedAndSwapped) {
  auto be = [](auto v) {
    auto bits = std::bit_cast<std::array<char, sizeof(v)>>(v);
    std::reverse(bits.begin(), bits.end());
    return std::string(bits.begin(), bits.end());
  };
  auto buf = ToBuffer(MakeNpy(Dict(">f8", "(2,)"), be(1.5) + be(-3.0)));
  auto t = ReadNpyArray(buf, buf->bytes(), {}, nullptr);
  ASSERT_TRUE(t.ok());
  EXPECT_NE(t->storage(), buf);
  double got[2];
  std::memcpy(got, t->view().first(), 16);
  EXPECT_EQ(got[0], 1.5);
  EXPECT_EQ(got[1], -3.0);

  // complex: each half swapped on its own.
  auto cbuf = ToBuffer(MakeNpy(Dict(">c8", "(1,)"), be(2.5f) + be(-7.0f)));
  auto c = ReadNpyArray(cbuf, cbuf->bytes(), {}, nullptr);
  ASSERT_TRUE(c.ok());
  float parts[2];
  std::memcpy(parts, c->view().first(), 8);
  EXPECT_EQ(parts[0], 2.5f);
  EXPECT_EQ(parts[1], -7.0f);

  auto ibuf = ToBuffer(MakeNpy(Dict(">u2", "(2,)"), std::string("\x01\x02\xff\x00", 4)));
  auto i = ReadNpyArray(ibuf, ibuf->bytes(), {}, nullptr);
  ASSERT_TRUE(i.ok());
  uint16_t u[2];
  std::memcpy(u, i->view().first(), 4);
  EXPECT_EQ(u[0], 0x0102);
  EXPECT_EQ(u[1], 0xff00);
}

TEST(NpyRead, UnalignedDataIsCopied) {
  const std::vector<double> values = {1.0, 2.0};
  const std::string file = MakeNpy(Dict("<f8", "(2,)"), Raw(values));
  auto buf = ToBuffer("x" + file);
  auto t = ReadNpyArray(buf, buf->bytes().subspan(1), {}, nullptr);
  ASSERT_TRUE(t.ok());
  EXPECT_NE(t->storage(), buf);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->view().first()) % alignof(double), 0u);
  EXPECT_EQ(std::memcmp(t->view().first(), values.data(), 16), 0);
  // One-byte types never need alignment.
  auto b = ToBuffer("x" + MakeNpy(Dict("|u1", "(2,)"), "ab"));
  auto u = ReadNpyArray(b, b->bytes().subspan(1), {}, nullptr);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->storage(), b);
}

TEST(NpyRead, BoolBytesAreNormalisedInACopy) {
  auto clean = ToBuffer(MakeNpy(Dict("|b1", "(4,)"), std::string("\x00\x01\x01\x00", 4)));
  auto c = ReadNpyArray(clean, clean->bytes(), {}, nullptr);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->storage(), clean);
  auto dirty = ToBuffer(MakeNpy(Dict("|b1", "(4,)"), std::string("\x00\x02\xff\x01", 4)));
  auto d = ReadNpyArray(dirty, dirty->bytes(), {}, nullptr);
  ASSERT_TRUE(d.ok());
  EXPECT_NE(d->storage(), dirty);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(d->view().first()), 4),
            std::string("\x00\x01\x01\x01", 4));
}

TEST(NpyRead, TrailingBytesWarnAndReadNpyNamesTheArrayEmpty) {
  auto buf = ToBuffer(MakeNpy(Dict("|u1", "(2,)"), "abXYZ"));
  auto f = ReadNpy(buf, {});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->format, FileFormat::kNpy);
  ASSERT_EQ(f->tensors.size(), 1u);
  EXPECT_EQ(f->tensors[0].name, "");
  ASSERT_EQ(f->warnings.size(), 1u);
  EXPECT_EQ(f->warnings[0], "3 trailing bytes after the array data ignored");
}

// Random bytes valid for `dtype` (bools 0/1).
std::vector<std::byte> RandomBytes(DType dtype, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> out(n * static_cast<size_t>(ItemSize(dtype)));
  for (auto& b : out) b = static_cast<std::byte>(rng() & (dtype == DType::kBool ? 1 : 0xFF));
  return out;
}

TEST(NpyWrite, RoundTripEveryDtypeAndShape) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {5}, {2, 3}, {0, 3}, {2, 1, 3, 2}};
  for (int d = 0; d < kDTypeCount; ++d) {
    const auto dtype = static_cast<DType>(d);
    for (const auto& shape : shapes) {
      const auto numel = CheckedNumel(shape).value();
      const auto bytes = RandomBytes(dtype, static_cast<size_t>(numel), 7u * d + 1);
      const TensorView view = TensorView::Contiguous(bytes.data(), dtype, shape);
      auto encoded = EncodeNpy(view);
      ASSERT_TRUE(encoded.ok()) << Name(dtype);
      auto buf = Buffer::CopyOf(*encoded).value();
      NpyReadOptions options;
      if (ItemSize(dtype) == 2) options.void2_dtype = dtype;
      if (ItemSize(dtype) == 1) options.void1_dtype = dtype;
      auto h = ParseNpyHeader(buf->bytes(), options);
      ASSERT_TRUE(h.ok()) << Name(dtype) << ": " << h.error().ToString();
      EXPECT_EQ(h->data_offset % 64, 0u);
      EXPECT_EQ(h->major, 1);
      auto t = ReadNpyArray(buf, buf->bytes(), options, nullptr);
      ASSERT_TRUE(t.ok());
      EXPECT_EQ(t->dtype(), dtype) << Name(dtype);
      EXPECT_EQ(t->shape(), shape);
      EXPECT_EQ(t->storage(), buf);
      ASSERT_EQ(buf->size() - h->data_offset, bytes.size());
      if (!bytes.empty()) {
        EXPECT_EQ(std::memcmp(t->view().first(), bytes.data(), bytes.size()), 0) << Name(dtype);
      }
    }
  }
}

TEST(NpyWrite, DescrsAndExactHeaderLayout) {
  const float one = 1.0f;
  auto enc = EncodeNpy(TensorView::Contiguous(&one, DType::kF32, {1}));
  ASSERT_TRUE(enc.ok());
  const std::string s(reinterpret_cast<const char*>(enc->data()), enc->size());
  // np.save's bytes for np.array([1], np.float32): the dict, 20 growth spaces, padding to 64.
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }";
  std::string want = std::string("\x93NUMPY\x01\x00", 8) + "v" + std::string(1, '\0') + dict +
                     std::string(20, ' ');
  want.append(127 - want.size(), ' ');
  want += '\n';
  ASSERT_EQ(want.size(), 128u);
  EXPECT_EQ(s.substr(0, 128), want);

  auto descr_of = [](DType dtype) {
    const std::byte zero[16] = {};
    auto e = EncodeNpy(TensorView::Contiguous(zero, dtype, {1}));
    auto h = ParseNpyHeader(*e, {});
    return h.ok() ? h->descr : h.error().ToString();
  };
  EXPECT_EQ(descr_of(DType::kBF16), "<V2");
  EXPECT_EQ(descr_of(DType::kF8E4M3FN), "|V1");
  EXPECT_EQ(descr_of(DType::kF8E5M2FNUZ), "|V1");
  EXPECT_EQ(descr_of(DType::kBool), "|b1");
  EXPECT_EQ(descr_of(DType::kI8), "|i1");
  EXPECT_EQ(descr_of(DType::kU8), "|u1");
  EXPECT_EQ(descr_of(DType::kC128), "<c16");
  EXPECT_EQ(descr_of(DType::kU16), "<u2");
}

TEST(NpyWrite, StridedViewsAreWrittenInCOrder) {
  // A 4x6 int16 matrix; write its transpose and a stepped slice.
  std::vector<int16_t> base(24);
  std::iota(base.begin(), base.end(), 0);
  TensorView t;
  t.data = reinterpret_cast<const std::byte*>(base.data());
  t.dtype = DType::kI16;
  t.shape = {6, 4};
  t.strides = {1, 6};
  auto enc = EncodeNpy(t);
  ASSERT_TRUE(enc.ok());
  auto buf = Buffer::CopyOf(*enc).value();
  auto r = ReadNpyArray(buf, buf->bytes(), {}, nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->view().is_contiguous());
  std::vector<int16_t> got(24);
  std::memcpy(got.data(), r->view().first(), 48);
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 4; ++j) EXPECT_EQ(got[i * 4 + j], base[j * 6 + i]);
  }

  TensorView slice;  // rows 1 and 3, columns 0, 2, 4 (byte offset to row 1)
  slice.data = reinterpret_cast<const std::byte*>(base.data());
  slice.dtype = DType::kI16;
  slice.shape = {2, 3};
  slice.strides = {12, 2};
  slice.byte_offset = 6 * 2;
  auto enc2 = EncodeNpy(slice);
  ASSERT_TRUE(enc2.ok());
  auto buf2 = Buffer::CopyOf(*enc2).value();
  auto r2 = ReadNpyArray(buf2, buf2->bytes(), {}, nullptr);
  ASSERT_TRUE(r2.ok());
  std::vector<int16_t> got2(6);
  std::memcpy(got2.data(), r2->view().first(), 12);
  EXPECT_EQ(got2, (std::vector<int16_t>{6, 8, 10, 18, 20, 22}));
}

TEST(NpyWrite, WriteNpyGoesThroughATemporaryFile) {
  const test::TempDir temp("numprobe_npy_test");
  const fs::path& dir = temp.path();
  const std::vector<double> values = {1, 2, 3};
  const fs::path p = dir / "x.npy";
  ASSERT_TRUE(WriteNpy(p, TensorView::Contiguous(values.data(), DType::kF64, {3})).ok());
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  auto buf = Buffer::MapFile(p);
  ASSERT_TRUE(buf.ok());
  auto f = ReadNpy(*buf, {});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(std::memcmp(f->tensors[0].tensor.view().first(), values.data(), 24), 0);
  EXPECT_EQ(
      WriteNpy(dir / "missing" / "x.npy", TensorView::Contiguous(values.data(), DType::kF64, {3}))
          .code(),
      ErrorCode::kIoError);
}

}  // namespace
}  // namespace numprobe
