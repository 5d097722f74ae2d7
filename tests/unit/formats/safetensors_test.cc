// Tests of the safetensors reader and writer: round trips for every dtype (contiguous and strided
// inputs, 0-d, empty), byte-exact agreement with the reference writer, and every validation rule
// with its error code and a key phrase of its message.
#include "numprobe/safetensors.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "numprobe/buffer.h"
#include "numprobe/dtype.h"

#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// u64 LE length + header + data.
std::string MakeFile(std::string_view header, std::string_view data = {}) {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  out.append(header);
  out.append(data);
  return out;
}

std::string Zeros(size_t n) { return std::string(n, '\0'); }

Result<TensorFile> Parse(const std::string& bytes, const ReadOptions& options = {}) {
  auto buffer = Buffer::CopyOf(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
  if (!buffer) return buffer.error();
  return ReadSafetensors(*buffer, options);
}

void ExpectError(const std::string& bytes, ErrorCode code, const std::string& phrase,
                 const ReadOptions& options = {}) {
  auto result = Parse(bytes, options);
  ASSERT_FALSE(result.ok()) << "accepted a file that should fail with: " << phrase;
  EXPECT_EQ(result.error().code(), code) << result.error().ToString();
  EXPECT_THAT(result.error().message(), HasSubstr(phrase));
  EXPECT_EQ(result.error().message().find('\n'), std::string::npos) << "message is one line";
}

std::string ReadFileBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::byte> TensorBytes(const Tensor& t) {
  const auto* p = t.view().first();
  return {p, p + t.view().span_bytes()};
}

using test::TempDir;

Result<TensorFile> ReadBack(const fs::path& path) {
  auto buffer = Buffer::MapFile(path);
  if (!buffer) return buffer.error();
  return ReadSafetensors(*buffer, {});
}

// ---------------------------------------------------------------------------------------------
// Round trips

TEST(SafetensorsWriteRead, EveryDtypeRoundTripsZeroCopy) {
  TempDir dir;
  std::vector<std::vector<std::byte>> storage;
  std::vector<NamedView> views;
  for (const DTypeTraits& t : kDTypeTraits) {
    if (t.safetensors_name.empty()) continue;
    const size_t bytes = static_cast<size_t>(6 * (t.bits / 8));
    std::vector<std::byte> data(bytes);
    for (size_t i = 0; i < bytes; ++i) data[i] = std::byte(static_cast<uint8_t>(i * 7 + t.bits));
    storage.push_back(std::move(data));
    views.push_back(
        {std::string(t.name), TensorView::Contiguous(storage.back().data(), t.dtype, {2, 3})});
  }
  ASSERT_GE(views.size(), 18u);  // every dtype but c128
  const fs::path path = dir.path() / "all.safetensors";
  ASSERT_TRUE(WriteSafetensors(path, views).ok());
  auto buffer = Buffer::MapFile(path);
  ASSERT_TRUE(buffer.ok());
  auto file = ReadSafetensors(*buffer, {});
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  ASSERT_EQ(file->tensors.size(), views.size());
  for (size_t i = 0; i < views.size(); ++i) {
    SCOPED_TRACE(views[i].name);
    auto it = std::find_if(file->tensors.begin(), file->tensors.end(),
                           [&](const NamedTensor& t) { return t.name == views[i].name; });
    ASSERT_NE(it, file->tensors.end());
    EXPECT_EQ(it->tensor.dtype(), views[i].view.dtype);
    EXPECT_EQ(it->tensor.shape(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(TensorBytes(it->tensor), storage[i]);
    // The writer aligns every tensor, so the reader views the map in place.
    EXPECT_EQ(it->tensor.storage().get(), buffer->get());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(it->tensor.view().first()) %
                  static_cast<uintptr_t>(ItemSize(it->tensor.dtype())),
              0u);
  }
}

TEST(SafetensorsWriteRead, StridedInputIsWrittenInLogicalOrder) {
  TempDir dir;
  // A 3x4 row-major matrix; write its transpose (4x3, strides {1, 4}) and every second element
  // of its first row (strides {2}) with an offset.
  std::vector<float> m(12);
  for (int i = 0; i < 12; ++i) m[static_cast<size_t>(i)] = static_cast<float>(i) + 0.5f;
  TensorView transposed;
  transposed.data = reinterpret_cast<const std::byte*>(m.data());
  transposed.dtype = DType::kF32;
  transposed.shape = {4, 3};
  transposed.strides = {1, 4};
  TensorView every_second = transposed;
  every_second.shape = {2};
  every_second.strides = {2};
  every_second.byte_offset = 4;  // starts at m[1]
  const std::vector<NamedView> views = {{"t", transposed}, {"s", every_second}};
  const fs::path path = dir.path() / "strided.safetensors";
  ASSERT_TRUE(WriteSafetensors(path, views).ok());
  auto file = ReadBack(path);
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  ASSERT_EQ(file->tensors.size(), 2u);
  std::vector<float> t(12);
  std::vector<float> s(2);
  for (const NamedTensor& nt : file->tensors) {
    ASSERT_TRUE(nt.tensor.view().is_contiguous());
    auto& out = nt.name == "t" ? t : s;
    ASSERT_EQ(static_cast<size_t>(nt.tensor.view().span_bytes()), out.size() * 4);
    std::memcpy(out.data(), nt.tensor.view().first(), out.size() * 4);
  }
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 3; ++c) {
      EXPECT_EQ(t[static_cast<size_t>(r * 3 + c)], m[static_cast<size_t>(c * 4 + r)]);
    }
  }
  EXPECT_EQ(s, (std::vector<float>{1.5f, 3.5f}));
}

TEST(SafetensorsWriteRead, ZeroDimAndEmptyTensors) {
  TempDir dir;
  const double scalar = -2.25;
  const std::vector<NamedView> views = {
      {"scalar", TensorView::Contiguous(&scalar, DType::kF64, {})},
      {"empty", TensorView::Contiguous(nullptr, DType::kF32, {0})},
      {"empty3d", TensorView::Contiguous(nullptr, DType::kI16, {2, 0, 3})},
  };
  const fs::path path = dir.path() / "small.safetensors";
  ASSERT_TRUE(WriteSafetensors(path, views).ok());
  const std::string raw = ReadFileBytes(path);
  EXPECT_THAT(raw, HasSubstr(R"("scalar":{"dtype":"F64","shape":[],"data_offsets":[0,8]})"));
  EXPECT_THAT(raw, HasSubstr(R"("empty":{"dtype":"F32","shape":[0],"data_offsets":[8,8]})"));
  EXPECT_THAT(raw, HasSubstr(R"("empty3d":{"dtype":"I16","shape":[2,0,3],"data_offsets":[8,8]})"));
  auto file = ReadBack(path);
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  ASSERT_EQ(file->tensors.size(), 3u);
  // Data-offset order; the two empty tensors share offset 8 and keep header order.
  EXPECT_EQ(file->tensors[0].name, "scalar");
  EXPECT_EQ(file->tensors[1].name, "empty");
  EXPECT_EQ(file->tensors[2].name, "empty3d");
  EXPECT_TRUE(file->tensors[0].tensor.shape().empty());
  EXPECT_EQ(file->tensors[0].tensor.numel(), 1);
  double back = 0;
  std::memcpy(&back, file->tensors[0].tensor.view().first(), 8);
  EXPECT_EQ(back, scalar);
  EXPECT_EQ(file->tensors[1].tensor.numel(), 0);
  EXPECT_EQ(file->tensors[2].tensor.shape(), (std::vector<int64_t>{2, 0, 3}));
  EXPECT_EQ(file->tensors[2].tensor.numel(), 0);
}

TEST(SafetensorsWriteRead, MetadataComesFirstAndKeepsItsOrder) {
  TempDir dir;
  const int32_t v = 7;
  const std::vector<NamedView> views = {{"x", TensorView::Contiguous(&v, DType::kI32, {1})}};
  const std::vector<std::pair<std::string, std::string>> metadata = {
      {"format", "pt"}, {"note", "caf\xc3\xa9 \"quoted\"\n"}, {"a", ""}};
  const fs::path path = dir.path() / "meta.safetensors";
  ASSERT_TRUE(WriteSafetensors(path, views, metadata).ok());
  const std::string raw = ReadFileBytes(path);
  EXPECT_EQ(raw.substr(8, 16), R"({"__metadata__":)");
  auto file = ReadBack(path);
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  EXPECT_EQ(file->metadata, metadata);
  ASSERT_EQ(file->tensors.size(), 1u);
  EXPECT_EQ(file->format, FileFormat::kSafetensors);
}

TEST(SafetensorsWriteRead, ReplacesAnExistingFileAndLeavesNoTemporaryFile) {
  TempDir dir;
  const fs::path path = dir.path() / "w.safetensors";
  const float a = 1.0f;
  const float b[2] = {2.0f, 3.0f};
  const std::vector<NamedView> first = {{"a", TensorView::Contiguous(&a, DType::kF32, {})}};
  const std::vector<NamedView> second = {{"b", TensorView::Contiguous(b, DType::kF32, {2})}};
  ASSERT_TRUE(WriteSafetensors(path, first).ok());
  ASSERT_TRUE(WriteSafetensors(path, second).ok());
  auto file = ReadBack(path);
  ASSERT_TRUE(file.ok());
  ASSERT_EQ(file->tensors.size(), 1u);
  EXPECT_EQ(file->tensors[0].name, "b");
  EXPECT_EQ(dir.EntryCount(), 1u);
}

// The reference crate's own serialization tests (safetensors/src/tensor.rs): same bytes.
TEST(SafetensorsWrite, MatchesReferenceBytes) {
  TempDir dir;
  const float data[6] = {0, 1, 2, 3, 4, 5};
  const fs::path path = dir.path() / "ref.safetensors";
  {
    const std::vector<NamedView> views = {
        {"attn.0", TensorView::Contiguous(data, DType::kF32, {1, 2, 3})}};
    ASSERT_TRUE(WriteSafetensors(path, views).ok());
    const std::string header =
        R"({"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}})";
    const std::string want = MakeFile(header, std::string(reinterpret_cast<const char*>(data), 24));
    EXPECT_EQ(ReadFileBytes(path), want);  // 64-byte header: no padding
  }
  {
    const std::vector<NamedView> views = {
        {"attn0", TensorView::Contiguous(data, DType::kF32, {1, 1, 2, 3})}};
    ASSERT_TRUE(WriteSafetensors(path, views).ok());
    const std::string header =
        R"({"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}}       )";
    EXPECT_EQ(ReadFileBytes(path),
              MakeFile(header, std::string(reinterpret_cast<const char*>(data), 24)));
  }
  {
    ASSERT_TRUE(WriteSafetensors(path, {}).ok());
    EXPECT_EQ(ReadFileBytes(path), MakeFile("{}      "));
    ASSERT_TRUE(WriteSafetensors(path, {}, {{"framework", "pt"}}).ok());
    EXPECT_EQ(ReadFileBytes(path), MakeFile(R"({"__metadata__":{"framework":"pt"}}     )"));
  }
}

TEST(SafetensorsWrite, SortsByAlignmentThenNameAndPadsTheHeader) {
  TempDir dir;
  std::vector<std::byte> zeros(64);
  const std::vector<NamedView> views = {
      {"u8", TensorView::Contiguous(zeros.data(), DType::kU8, {3})},
      {"f32_b", TensorView::Contiguous(zeros.data(), DType::kF32, {1})},
      {"bf16", TensorView::Contiguous(zeros.data(), DType::kBF16, {1})},
      {"f64", TensorView::Contiguous(zeros.data(), DType::kF64, {1})},
      {"f32_a", TensorView::Contiguous(zeros.data(), DType::kF32, {1})},
      {"u64", TensorView::Contiguous(zeros.data(), DType::kU64, {1})},
      {"c64", TensorView::Contiguous(zeros.data(), DType::kC64, {1})},
      {"f16", TensorView::Contiguous(zeros.data(), DType::kF16, {1})},
      {"bool", TensorView::Contiguous(zeros.data(), DType::kBool, {1})},
  };
  const fs::path path = dir.path() / "order.safetensors";
  ASSERT_TRUE(WriteSafetensors(path, views).ok());
  const std::string raw = ReadFileBytes(path);
  uint64_t n = 0;
  std::memcpy(&n, raw.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  // Reference enum order, descending: U64 > F64 > C64 > F32 > BF16 > F16 > U8 > BOOL.
  std::vector<size_t> positions;
  for (const char* name : {"\"u64\"", "\"f64\"", "\"c64\"", "\"f32_a\"", "\"f32_b\"", "\"bf16\"",
                           "\"f16\"", "\"u8\"", "\"bool\""}) {
    positions.push_back(raw.find(name));
    ASSERT_NE(positions.back(), std::string::npos) << name;
  }
  EXPECT_TRUE(std::is_sorted(positions.begin(), positions.end()));
  auto buffer = Buffer::MapFile(path);
  ASSERT_TRUE(buffer.ok());
  auto file = ReadSafetensors(*buffer, {});
  ASSERT_TRUE(file.ok());
  std::vector<std::string> names;
  for (const auto& t : file->tensors) {
    names.push_back(t.name);
    EXPECT_EQ(t.tensor.storage().get(), buffer->get()) << t.name << " was copied";
  }
  EXPECT_EQ(names, (std::vector<std::string>{"u64", "f64", "c64", "f32_a", "f32_b", "bf16", "f16",
                                             "u8", "bool"}));
}

TEST(SafetensorsWrite, RefusesWhatItCannotWrite) {
  TempDir dir;
  const fs::path path = dir.path() / "bad.safetensors";
  const double c[2] = {1, 2};
  const float f = 0;
  struct Case {
    std::vector<NamedView> views;
    std::vector<std::pair<std::string, std::string>> metadata;
    ErrorCode code;
    const char* phrase;
  };
  const std::vector<Case> cases = {
      {{{"c", TensorView::Contiguous(c, DType::kC128, {1})}},
       {},
       ErrorCode::kUnsupported,
       "no dtype for c128"},
      {{{"a", TensorView::Contiguous(&f, DType::kF32, {})},
        {"a", TensorView::Contiguous(&f, DType::kF32, {})}},
       {},
       ErrorCode::kInvalidArgument,
       "duplicate tensor name 'a'"},
      {{{"__metadata__", TensorView::Contiguous(&f, DType::kF32, {})}},
       {},
       ErrorCode::kInvalidArgument,
       "cannot be named"},
      {{{"bad\xff", TensorView::Contiguous(&f, DType::kF32, {})}},
       {},
       ErrorCode::kInvalidArgument,
       "not valid UTF-8"},
      {{}, {{"k", "1"}, {"k", "2"}}, ErrorCode::kInvalidArgument, "duplicate __metadata__ key"},
      {{}, {{"k", "\xc0\xaf"}}, ErrorCode::kInvalidArgument, "not valid UTF-8"},
      {{{"neg", TensorView::Contiguous(&f, DType::kF32, {-1})}},
       {},
       ErrorCode::kInvalidArgument,
       "negative"},
  };
  for (const Case& c2 : cases) {
    SCOPED_TRACE(c2.phrase);
    const Status s = WriteSafetensors(path, c2.views, c2.metadata);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), c2.code) << s.ToString();
    EXPECT_THAT(s.message(), HasSubstr(c2.phrase));
    EXPECT_EQ(dir.EntryCount(), 0u) << "a failed write left a file behind";
  }
  const Status s = WriteSafetensors(dir.path() / "no_such_dir" / "x.safetensors", {});
  EXPECT_EQ(s.code(), ErrorCode::kIoError);
}

// ---------------------------------------------------------------------------------------------
// Reading files the writer would not produce

TEST(SafetensorsRead, LeadingWhitespaceUnknownFieldsAndNullMetadata) {
  const std::string header =
      " \n\t\r{\"__metadata__\": null, \"w\": {\"extra\": {\"deep\": [1, [2, {\"x\": null}]]}, "
      "\"dtype\": \"I8\", \"data_offsets\": [0, 2], \"shape\": [2], \"more\": true}}";
  auto file = Parse(MakeFile(header, "\x01\x02"));
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  ASSERT_EQ(file->tensors.size(), 1u);
  EXPECT_EQ(file->tensors[0].tensor.dtype(), DType::kI8);
  EXPECT_TRUE(file->metadata.empty());
}

TEST(SafetensorsRead, ReportsTensorsInDataOffsetOrder) {
  const std::string header = R"({"b":{"dtype":"U8","shape":[1],"data_offsets":[2,3]},)"
                             R"("c":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                             R"("a":{"dtype":"U8","shape":[1],"data_offsets":[3,4]}})";
  auto file = Parse(MakeFile(header, "\x0a\x0b\x0c\x0d"));
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  ASSERT_EQ(file->tensors.size(), 3u);
  EXPECT_EQ(file->tensors[0].name, "c");
  EXPECT_EQ(file->tensors[1].name, "b");
  EXPECT_EQ(file->tensors[2].name, "a");
  EXPECT_EQ(static_cast<uint8_t>(*file->tensors[1].tensor.view().first()), 0x0c);
}

TEST(SafetensorsRead, UnalignedDataIsCopiedAlignedDataIsViewed) {
  // Buffer::CopyOf is 64-byte aligned, so the data starts at address % 8 == (8 + N) % 8.
  std::string header = R"({"h":{"dtype":"F16","shape":[1],"data_offsets":[0,2]},)"
                       R"("f":{"dtype":"F32","shape":[2],"data_offsets":[2,10]},)"
                       R"("u":{"dtype":"U8","shape":[1],"data_offsets":[10,11]}})";
  while ((8 + header.size()) % 8 != 0) header += ' ';
  const float values[2] = {1.5f, -3.0f};
  std::string data("\x00\x3c", 2);
  data.append(reinterpret_cast<const char*>(values), 8);
  data.push_back('\x07');
  const std::string bytes = MakeFile(header, data);
  auto buffer = Buffer::CopyOf(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
  ASSERT_TRUE(buffer.ok());
  std::shared_ptr<const Buffer> file_buffer = *buffer;
  auto file = ReadSafetensors(file_buffer, {});
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  ASSERT_EQ(file->tensors.size(), 3u);
  const Tensor& h = file->tensors[0].tensor;
  const Tensor& f = file->tensors[1].tensor;
  const Tensor& u = file->tensors[2].tensor;
  EXPECT_EQ(h.storage(), file_buffer);  // offset 0: aligned
  EXPECT_NE(f.storage(), file_buffer);  // offset 2: a copy
  EXPECT_EQ(reinterpret_cast<uintptr_t>(f.view().first()) % 4, 0u);
  float back[2];
  std::memcpy(back, f.view().first(), 8);
  EXPECT_EQ(back[0], 1.5f);
  EXPECT_EQ(back[1], -3.0f);
  EXPECT_EQ(u.storage(), file_buffer);  // bytes are always aligned
}

TEST(SafetensorsRead, EmptyFileOfTensorsAndEmptyTensorAtTheEnd) {
  auto none = Parse(MakeFile("{}"));
  ASSERT_TRUE(none.ok()) << none.error().ToString();
  EXPECT_TRUE(none->tensors.empty());
  const std::string header = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                             R"("z":{"dtype":"F64","shape":[0,5],"data_offsets":[1,1]}})";
  auto file = Parse(MakeFile(header, "\x01"));
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  ASSERT_EQ(file->tensors.size(), 2u);
  EXPECT_EQ(file->tensors[1].tensor.numel(), 0);
}

TEST(SafetensorsRead, UnsupportedSpecDtypesAreNamed) {
  for (const char* dtype : {"F8_E8M0", "F4", "F6_E2M3", "F6_E3M2"}) {
    SCOPED_TRACE(dtype);
    const int count = 8;  // whole bytes for every width
    const int bytes = std::string_view(dtype) == "F4"        ? 4
                      : std::string_view(dtype) == "F8_E8M0" ? 8
                                                             : 6;
    const std::string header = "{\"q\":{\"dtype\":\"" + std::string(dtype) + "\",\"shape\":[" +
                               std::to_string(count) + "],\"data_offsets\":[0," +
                               std::to_string(bytes) + "]}}";
    ExpectError(MakeFile(header, Zeros(static_cast<size_t>(bytes))), ErrorCode::kUnsupported,
                std::string("dtype ") + dtype + " is valid safetensors but numprobe cannot");
  }
  // A sub-byte dtype still goes through every size rule first.
  ExpectError(MakeFile(R"({"q":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})", Zeros(2)),
              ErrorCode::kCorrupt, "12 bits, not a whole number of bytes");
  ExpectError(MakeFile(R"({"q":{"dtype":"F6_E3M2","shape":[4],"data_offsets":[0,4]}})", Zeros(4)),
              ErrorCode::kCorrupt, "hold 4 bytes but F6_E3M2 [4] needs 3");
}

TEST(SafetensorsRead, EverySupportedDtypeName) {
  struct Name {
    const char* st;
    DType dtype;
  };
  const Name names[] = {
      {"BOOL", DType::kBool},
      {"U8", DType::kU8},
      {"I8", DType::kI8},
      {"U16", DType::kU16},
      {"I16", DType::kI16},
      {"F16", DType::kF16},
      {"BF16", DType::kBF16},
      {"U32", DType::kU32},
      {"I32", DType::kI32},
      {"F32", DType::kF32},
      {"C64", DType::kC64},
      {"F64", DType::kF64},
      {"U64", DType::kU64},
      {"I64", DType::kI64},
      {"F8_E4M3", DType::kF8E4M3FN},
      {"F8_E5M2", DType::kF8E5M2},
      {"F8_E4M3FNUZ", DType::kF8E4M3FNUZ},
      {"F8_E5M2FNUZ", DType::kF8E5M2FNUZ},
  };
  for (const Name& n : names) {
    SCOPED_TRACE(n.st);
    const int item = ItemSize(n.dtype);
    const std::string header = std::string("{\"t\":{\"dtype\":\"") + n.st +
                               "\",\"shape\":[3],\"data_offsets\":[0," + std::to_string(3 * item) +
                               "]}}";
    auto file = Parse(MakeFile(header, Zeros(static_cast<size_t>(3 * item))));
    ASSERT_TRUE(file.ok()) << file.error().ToString();
    EXPECT_EQ(file->tensors.at(0).tensor.dtype(), n.dtype);
  }
}

// ---------------------------------------------------------------------------------------------
// Validation rules, each with its code and phrase

const char kOneTensor[] = R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";

TEST(SafetensorsValidate, LengthField) {
  ExpectError(std::string("\x08\x00\x00", 3), ErrorCode::kCorrupt,
              "file is 3 bytes, too short for the 8-byte header length");
  ExpectError(Zeros(0), ErrorCode::kCorrupt, "file is 0 bytes");
  std::string bytes = MakeFile(kOneTensor, Zeros(8));
  const uint64_t too_long = bytes.size();  // 8 + N > size
  std::memcpy(bytes.data(), &too_long, 8);
  ExpectError(bytes, ErrorCode::kCorrupt,
              "header length " + std::to_string(too_long) + " exceeds file size " +
                  std::to_string(bytes.size()));
  for (const uint64_t huge : {uint64_t{100'000'001}, ~uint64_t{0}, ~uint64_t{0} - 7}) {
    std::memcpy(bytes.data(), &huge, 8);
    ExpectError(bytes, ErrorCode::kOutOfRange,
                "header length " + std::to_string(huge) + " exceeds the cap of 100000000 bytes");
  }
  ReadOptions small;
  small.max_header_bytes = 16;
  ExpectError(MakeFile(kOneTensor, Zeros(8)), ErrorCode::kOutOfRange, "exceeds the cap of 16 bytes",
              small);
}

TEST(SafetensorsValidate, HeaderText) {
  ExpectError(MakeFile(std::string("{\"t\0\":1}", 8)), ErrorCode::kCorrupt,
              "header contains a NUL byte at file offset 11");
  ExpectError(MakeFile("{\"t\xff\":{}}"), ErrorCode::kCorrupt,
              "header is not valid UTF-8 at file offset 11");
  ExpectError(MakeFile("{\"\xc0\xaf\":{}}"), ErrorCode::kCorrupt, "not valid UTF-8");  // overlong
  ExpectError(MakeFile("{\"\xed\xa0\x80\":{}}"), ErrorCode::kCorrupt,
              "not valid UTF-8");                                                  // surrogate
  ExpectError(MakeFile("{\"t\xe2\x82"), ErrorCode::kCorrupt, "not valid UTF-8");   // cut sequence
  ExpectError(MakeFile("\xef\xbb\xbf{}"), ErrorCode::kCorrupt, "not valid JSON");  // BOM
  ExpectError(MakeFile(R"({"t":{"dtype":"F32","shape":[2],"data_offs)"), ErrorCode::kCorrupt,
              "header is not valid JSON");
  ExpectError(MakeFile(R"({} {})"), ErrorCode::kCorrupt, "not valid JSON");
  ExpectError(MakeFile(""), ErrorCode::kCorrupt, "not valid JSON");
  ExpectError(MakeFile(R"({"a\ud800":{}})"), ErrorCode::kCorrupt, "not valid JSON");
  ExpectError(MakeFile(R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},})"),
              ErrorCode::kCorrupt, "not valid JSON");  // trailing comma
  ExpectError(MakeFile("[1, 2]"), ErrorCode::kCorrupt, "header is an array, not a JSON object");
  ExpectError(MakeFile("\"x\""), ErrorCode::kCorrupt, "header is a string, not a JSON object");
  ExpectError(MakeFile("7"), ErrorCode::kCorrupt, "not a JSON object");
}

TEST(SafetensorsValidate, Entries) {
  struct Case {
    std::string header;
    ErrorCode code;
    std::string phrase;
  };
  const std::vector<Case> cases = {
      {R"({"t":[1]})", ErrorCode::kCorrupt, "tensor 't': entry is an array, not an object"},
      {R"({"t":{"dtype":5,"shape":[2],"data_offsets":[0,8]}})", ErrorCode::kCorrupt,
       "dtype is a number, not a string"},
      {R"({"t":{"dtype":"Q8","shape":[2],"data_offsets":[0,8]}})", ErrorCode::kCorrupt,
       "tensor 't': unknown dtype 'Q8'"},
      {R"({"t":{"dtype":"f32","shape":[2],"data_offsets":[0,8]}})", ErrorCode::kCorrupt,
       "unknown dtype 'f32'"},
      {R"({"t":{"dtype":"F32","shape":2,"data_offsets":[0,8]}})", ErrorCode::kCorrupt,
       "shape is a number, not an array"},
      {R"({"t":{"dtype":"F32","shape":["2"],"data_offsets":[0,8]}})", ErrorCode::kCorrupt,
       "shape element is a string"},
      {R"({"t":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", ErrorCode::kCorrupt,
       "negative dimension -2"},
      {R"({"t":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}})", ErrorCode::kCorrupt,
       "shape element is a fractional or out-of-range number"},
      {R"({"t":{"dtype":"F32","shape":[18446744073709551616],"data_offsets":[0,8]}})",
       ErrorCode::kCorrupt, "out-of-range number"},
      {R"({"t":{"dtype":"F32","shape":[281474976710656],"data_offsets":[0,8]}})",
       ErrorCode::kOutOfRange, "dimension 281474976710656 exceeds the limit 2^48-1"},
      {R"({"t":{"dtype":"U8","shape":[140737488355328,140737488355328],"data_offsets":[0,8]}})",
       ErrorCode::kOutOfRange, "shape [140737488355328, 140737488355328] overflows 64 bits"},
      // Empty, but the other dims still overflow.
      {R"({"t":{"dtype":"U8","shape":[0,140737488355328,140737488355328],"data_offsets":[0,0]}})",
       ErrorCode::kOutOfRange, "overflows 64 bits"},
      {R"({"t":{"dtype":"F64","shape":[2147483648,2147483648],"data_offsets":[0,8]}})",
       ErrorCode::kOutOfRange, "is more than 2^64 bits"},
      {R"({"t":{"dtype":"F32","shape":[2],"data_offsets":"0,8"}})", ErrorCode::kCorrupt,
       "data_offsets is a string, not an array of two integers"},
      {R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[8]}})", ErrorCode::kCorrupt,
       "data_offsets has 1 element, not 2"},
      {R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8,8]}})", ErrorCode::kCorrupt,
       "data_offsets has more than 2 elements"},
      {R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[-1,8]}})", ErrorCode::kCorrupt,
       "negative data_offsets value -1"},
      {R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,null]}})", ErrorCode::kCorrupt,
       "data_offsets element is null"},
      {R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", ErrorCode::kCorrupt,
       "data_offsets end 0 is before begin 8"},
      {R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", ErrorCode::kCorrupt,
       "tensor 't': data_offsets [0, 8] hold 8 bytes but F32 [3] needs 12"},
      {R"({"t":{"shape":[2],"data_offsets":[0,8]}})", ErrorCode::kCorrupt,
       "tensor 't' lacks \"dtype\""},
      {R"({"t":{"dtype":"F32","data_offsets":[0,8]}})", ErrorCode::kCorrupt, "lacks \"shape\""},
      {R"({"t":{"dtype":"F32","shape":[2]}})", ErrorCode::kCorrupt, "lacks \"data_offsets\""},
      {R"({"t":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
       ErrorCode::kCorrupt, "tensor 't': duplicate key 'dtype'"},
      {R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
       ErrorCode::kCorrupt, "duplicate tensor name 't'"},
      {R"({"t":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,2],"data_offsets":[0,8]}})",
       ErrorCode::kOutOfRange, "more than 64 dimensions"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.header);
    ExpectError(MakeFile(c.header, Zeros(8)), c.code, c.phrase);
  }
}

TEST(SafetensorsValidate, Metadata) {
  ExpectError(MakeFile(R"({"__metadata__":{"a":1}})"), ErrorCode::kCorrupt,
              "__metadata__ value of 'a' is a number, not a string");
  ExpectError(MakeFile(R"({"__metadata__":{"a":{"b":"c"}}})"), ErrorCode::kCorrupt,
              "value of 'a' is an object, not a string");
  ExpectError(MakeFile(R"({"__metadata__":["a"]})"), ErrorCode::kCorrupt,
              "__metadata__ is an array, not an object of strings");
  ExpectError(MakeFile(R"({"__metadata__":{"a":"1","a":"2"}})"), ErrorCode::kCorrupt,
              "duplicate __metadata__ key 'a'");
  ExpectError(MakeFile(R"({"__metadata__":{},"__metadata__":{}})"), ErrorCode::kCorrupt,
              "duplicate key '__metadata__'");
}

TEST(SafetensorsValidate, Tiling) {
  const std::string a8 = R"("a":{"dtype":"F32","shape":[2],"data_offsets":)";
  const std::string b8 = R"("b":{"dtype":"F32","shape":[2],"data_offsets":)";
  ExpectError(MakeFile("{" + a8 + "[0,8]}," + b8 + "[4,12]}}", Zeros(12)), ErrorCode::kCorrupt,
              "tensor 'b' data_offsets [4, 12] overlap tensor 'a' [0, 8]");
  ExpectError(MakeFile("{" + a8 + "[0,8]}," + b8 + "[0,8]}}", Zeros(8)), ErrorCode::kCorrupt,
              "overlap tensor 'a' [0, 8]");
  ExpectError(MakeFile("{" + a8 + "[0,8]}," + b8 + "[12,20]}}", Zeros(20)), ErrorCode::kCorrupt,
              "hole of 4 bytes between tensor 'a' (ends at 8) and tensor 'b' (begins at 12)");
  ExpectError(MakeFile("{" + a8 + "[4,12]}}", Zeros(12)), ErrorCode::kCorrupt,
              "data_offsets do not start at 0: the first tensor 'a' begins at 4");
  ExpectError(MakeFile(kOneTensor, Zeros(11)), ErrorCode::kCorrupt,
              "3 trailing bytes after the tensor data: tensors end at data offset 8 but the file "
              "holds 11 data bytes");
  ExpectError(MakeFile("{}", Zeros(1)), ErrorCode::kCorrupt, "1 trailing bytes");
  ExpectError(MakeFile(kOneTensor, Zeros(5)), ErrorCode::kCorrupt,
              "file truncated: tensor data needs 8 bytes after the header but only 5 are present");
  // An empty tensor inside another one's bytes is an overlap too.
  ExpectError(MakeFile("{" + a8 +
                           "[0,8]},\"e\":{\"dtype\":\"U8\",\"shape\":[0],"
                           "\"data_offsets\":[4,4]}}",
                       Zeros(8)),
              ErrorCode::kCorrupt, "tensor 'e' data_offsets [4, 4] overlap tensor 'a'");
}

TEST(SafetensorsValidate, NestingOfIgnoredFields) {
  auto nested = [](int depth) {
    return R"({"t":{"x":)" + std::string(static_cast<size_t>(depth), '[') +
           std::string(static_cast<size_t>(depth), ']') +
           R"(,"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
  };
  auto ok = Parse(MakeFile(nested(100), "\x01"));
  EXPECT_TRUE(ok.ok()) << ok.error().ToString();
  ExpectError(MakeFile(nested(200), "\x01"), ErrorCode::kCorrupt,
              "header JSON nests deeper than 128 levels");
  // Deep nesting never recurses: a million levels fail fast without a stack overflow.
  ExpectError(MakeFile(nested(1'000'000), "\x01"), ErrorCode::kCorrupt, "nests deeper");
}

TEST(SafetensorsValidate, NamesInMessagesStayOnOneLine) {
  const std::string header =
      "{\"bad\\nname\\\\'\":{\"dtype\":\"Q\",\"shape\":[],"
      "\"data_offsets\":[0,0]}}";
  auto result = Parse(MakeFile(header));
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.error().message(), HasSubstr("tensor 'bad\\x0aname\\x5c\\x27'"));
  EXPECT_THAT(result.error().message(), Not(HasSubstr("\n")));
  // Long names are cut.
  const std::string long_name(1000, 'n');
  auto cut = Parse(MakeFile("{\"" + long_name +
                            "\":{\"dtype\":\"Q\",\"shape\":[],"
                            "\"data_offsets\":[0,0]}}"));
  ASSERT_FALSE(cut.ok());
  EXPECT_LT(cut.error().message().size(), 200u);
  EXPECT_THAT(cut.error().message(), HasSubstr("...'"));
}

// Randomised: headers listing valid tensors in any order, with any data, always read back the
// same tensors in offset order; and every truncation of such a file is refused.
TEST(SafetensorsRead, ShuffledHeadersAndEveryTruncation) {
  std::mt19937 rng(1234);
  const char* dtypes[] = {"U8", "F16", "F32", "F64", "BOOL", "I64"};
  const int sizes[] = {1, 2, 4, 8, 1, 8};
  for (int round = 0; round < 20; ++round) {
    const int count = 1 + static_cast<int>(rng() % 6);
    std::vector<std::string> members;
    std::string data;
    for (int i = 0; i < count; ++i) {
      const size_t d = rng() % 6;
      const int elems = static_cast<int>(rng() % 4);
      const size_t begin = data.size();
      for (int k = 0; k < elems * sizes[d]; ++k) data.push_back(static_cast<char>(rng()));
      members.push_back("\"t" + std::to_string(i) + "\":{\"dtype\":\"" + dtypes[d] +
                        "\",\"shape\":[" + std::to_string(elems) + "],\"data_offsets\":[" +
                        std::to_string(begin) + "," + std::to_string(data.size()) + "]}");
    }
    std::shuffle(members.begin(), members.end(), rng);
    std::string header = "{";
    for (size_t i = 0; i < members.size(); ++i) header += (i ? "," : "") + members[i];
    header += "}";
    const std::string bytes = MakeFile(header, data);
    auto file = Parse(bytes);
    ASSERT_TRUE(file.ok()) << file.error().ToString();
    ASSERT_EQ(static_cast<int>(file->tensors.size()), count);
    std::string joined;
    for (const auto& t : file->tensors) {
      const auto b = TensorBytes(t.tensor);
      joined.append(reinterpret_cast<const char*>(b.data()), b.size());
    }
    EXPECT_EQ(joined, data);
    for (size_t cut = 0; cut < bytes.size(); ++cut) {
      EXPECT_FALSE(Parse(bytes.substr(0, cut)).ok()) << "truncated at " << cut;
    }
  }
}

}  // namespace
}  // namespace numprobe
