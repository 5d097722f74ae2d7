// MindSpore .ckpt: files from numprobe's writer (serialized by the generated protobuf code) read
// back for every type, and hand-made byte-level files for each quirk and each error. Every valid
// hand-made file is also parsed by the generated parser, and the streaming walk must agree.
#include "numprobe/ckpt.h"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "numprobe/tensor_file.h"

#include "formats/ckpt_internal.h"
#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// --- Raw protobuf bytes, built by hand --------------------------------------------------------

std::string Varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s += static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  s += static_cast<char>(v);
  return s;
}
std::string Key(int field, int wire) { return Varint(static_cast<uint64_t>(field) << 3 | wire); }
std::string Len(int field, std::string_view payload) {
  return Key(field, 2) + Varint(payload.size()) + std::string(payload);
}
std::string VarintField(int field, uint64_t v) { return Key(field, 0) + Varint(v); }

// TensorProto with unpacked dims (as proto2 MindSpore writes them).
std::string TensorMsg(const std::vector<int64_t>& dims, std::string_view type,
                      std::string_view content) {
  std::string s;
  for (int64_t d : dims) s += VarintField(1, static_cast<uint64_t>(d));
  return s + Len(2, type) + Len(3, content);
}
// A top-level Checkpoint.value record holding `tensor_msg`.
std::string ValueRecord(std::string_view tag, std::string_view tensor_msg) {
  return Len(1, Len(1, tag) + Len(2, tensor_msg));
}
std::string Record(std::string_view tag, const std::vector<int64_t>& dims, std::string_view type,
                   std::string_view content) {
  return ValueRecord(tag, TensorMsg(dims, type, content));
}

template <typename T>
std::string Raw(std::initializer_list<T> values) {
  std::string s(values.size() * sizeof(T), '\0');
  std::memcpy(s.data(), std::data(values), s.size());
  return s;
}

// CRC-32 (zlib polynomial), bit by bit: an oracle independent of the library's zlib call.
uint32_t Crc32(std::string_view bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (char c : bytes) {
    crc ^= static_cast<uint8_t>(c);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}
std::string CrcTrailer(uint32_t crc) {
  std::string s = "crc_num";
  s += std::string(6, '\0');
  for (int shift = 24; shift >= 0; shift -= 8) s += static_cast<char>((crc >> shift) & 0xFF);
  return s;
}

std::shared_ptr<const Buffer> BufferOf(std::string_view bytes) {
  auto buffer = Buffer::CopyOf(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
  EXPECT_TRUE(buffer.ok());
  return std::move(buffer).value();
}

Result<TensorFile> ReadBytes(std::string_view bytes) {
  return ReadMindSporeCkpt(BufferOf(bytes), ReadOptions{});
}

std::string TensorBytes(const Tensor& t) {
  const auto size = static_cast<size_t>(t.numel()) * static_cast<size_t>(ItemSize(t.dtype()));
  return std::string(reinterpret_cast<const char*>(t.view().first()), size);
}

std::span<const std::byte> AsBytes(std::string_view s) {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

// The streaming walk and the generated parser must see the same values.
void ExpectWalkMatchesGeneratedParser(std::string_view bytes) {
  auto walked = detail::DecodeCkptValues(AsBytes(bytes));
  auto reference = detail::DecodeCkptValuesReference(AsBytes(bytes));
  ASSERT_TRUE(walked.ok()) << walked.error().ToString();
  ASSERT_TRUE(reference.ok()) << reference.error().ToString();
  EXPECT_TRUE(detail::SameCkptValues(*walked, *reference));
}

#define EXPECT_CKPT_ERROR(result, error_code, phrase)                     \
  do {                                                                    \
    const auto& r_ = (result);                                            \
    ASSERT_FALSE(r_.ok()) << "expected an error containing " << (phrase); \
    EXPECT_EQ(r_.error().code(), (error_code)) << r_.error().ToString();  \
    EXPECT_THAT(r_.error().message(), HasSubstr(phrase));                 \
  } while (false)

class CkptTest : public ::testing::Test {
 protected:
  std::string FileBytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  fs::path WriteRaw(const std::string& name, std::string_view bytes) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path;
  }

  test::TempDir temp_{"numprobe_ckpt"};
  const fs::path dir_ = temp_.path();
};

// --- Writer -> reader -------------------------------------------------------------------------

TEST_F(CkptTest, EveryMindSporeTypeRoundTrips) {
  std::vector<std::vector<uint8_t>> storage;
  std::vector<NamedView> views;
  for (const DTypeTraits& traits : kDTypeTraits) {
    if (traits.mindspore_name.empty()) continue;
    const size_t bytes = 6 * static_cast<size_t>(traits.bits / 8);
    std::vector<uint8_t> data(bytes);
    for (size_t i = 0; i < bytes; ++i) {
      data[i] = static_cast<uint8_t>(i * 37 + static_cast<size_t>(traits.dtype) * 11 + 1);
    }
    if (traits.dtype == DType::kBool) {
      for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<uint8_t>(i % 2);
    }
    storage.push_back(std::move(data));
    views.push_back({"param." + std::string(traits.name),
                     TensorView::Contiguous(storage.back().data(), traits.dtype, {2, 3})});
  }
  // bf16, bool and every integer width are among them.
  ASSERT_EQ(views.size(), 15u);
  for (bool with_crc : {false, true}) {
    const fs::path path = dir_ / (with_crc ? "crc.ckpt" : "plain.ckpt");
    ASSERT_TRUE(WriteMindSporeCkpt(path, views, with_crc).ok());
    auto file = ReadTensorFile(path);
    ASSERT_TRUE(file.ok()) << file.error().ToString();
    EXPECT_EQ(file->format, FileFormat::kMindSporeCkpt);
    EXPECT_TRUE(file->warnings.empty());
    ASSERT_EQ(file->tensors.size(), views.size());
    for (size_t i = 0; i < views.size(); ++i) {
      const NamedTensor& got = file->tensors[i];
      EXPECT_EQ(got.name, views[i].name);
      EXPECT_EQ(got.tensor.dtype(), views[i].view.dtype) << got.name;
      EXPECT_EQ(got.tensor.shape(), (std::vector<int64_t>{2, 3})) << got.name;
      EXPECT_EQ(TensorBytes(got.tensor),
                std::string(reinterpret_cast<const char*>(storage[i].data()), storage[i].size()))
          << got.name;
    }
    const std::string bytes = FileBytes(path);
    if (with_crc) {
      ASSERT_GT(bytes.size(), 17u);
      EXPECT_EQ(bytes.substr(bytes.size() - 17),
                CrcTrailer(Crc32(std::string_view(bytes).substr(0, bytes.size() - 17))));
      ExpectWalkMatchesGeneratedParser(std::string_view(bytes).substr(0, bytes.size() - 17));
    } else {
      ExpectWalkMatchesGeneratedParser(bytes);
    }
  }
}

TEST_F(CkptTest, WriterEmitsMindSporeWireBytes) {
  const std::vector<float> weights = {1, 2, 3, 4, 5, 6};
  const NamedView view{"fc.weight", TensorView::Contiguous(weights.data(), DType::kF32, {2, 3})};
  const fs::path path = dir_ / "w.ckpt";
  ASSERT_TRUE(WriteMindSporeCkpt(path, {&view, 1}).ok());
  // formats.md §4: 0A len{ 0A len "fc.weight" 12 len{ 08 02 08 03 12 07 "Float32" 1A 18 ... } }
  const std::string content(reinterpret_cast<const char*>(weights.data()), 24);
  const std::string tensor = std::string(
                                 "\x08\x02\x08\x03\x12\x07"
                                 "Float32\x1a\x18",
                                 15) +
                             content;
  const std::string value = std::string(
                                "\x0a\x09"
                                "fc.weight\x12",
                                12) +
                            static_cast<char>(tensor.size()) + tensor;
  const std::string expected = std::string("\x0a", 1) + static_cast<char>(value.size()) + value;
  EXPECT_EQ(FileBytes(path), expected);
  // Temp file + rename: nothing else is left in the folder.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(CkptTest, WriterSplitsLargeTensorsIntoConsecutiveValues) {
  std::vector<int32_t> data(10);
  for (int i = 0; i < 10; ++i) data[static_cast<size_t>(i)] = i * 1000 - 3;
  const std::vector<uint8_t> small = {7, 8, 9};
  const NamedView views[] = {
      {"big", TensorView::Contiguous(data.data(), DType::kI32, {2, 5})},
      {"small", TensorView::Contiguous(small.data(), DType::kU8, {3})},
  };
  const fs::path path = dir_ / "split.ckpt";
  // 40 bytes in slices of 7: five values of 7 bytes and one of 5, slicing through elements.
  ASSERT_TRUE(detail::WriteMindSporeCkptSliced(path, views, true, 7).ok());
  const std::string bytes = FileBytes(path);
  const std::string_view records = std::string_view(bytes).substr(0, bytes.size() - 17);
  auto raw = detail::DecodeCkptValues(AsBytes(records));
  ASSERT_TRUE(raw.ok()) << raw.error().ToString();
  ASSERT_EQ(raw->size(), 7u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ((*raw)[i].tag, "big");
    EXPECT_EQ((*raw)[i].dims, (std::vector<int64_t>{2, 5}));  // full dims in every part
    EXPECT_EQ((*raw)[i].content.size(), i < 5 ? 7u : 5u);
  }
  EXPECT_EQ((*raw)[6].tag, "small");
  ExpectWalkMatchesGeneratedParser(records);

  auto file = ReadTensorFile(path);
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  ASSERT_EQ(file->tensors.size(), 2u);
  EXPECT_EQ(file->tensors[0].tensor.shape(), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(TensorBytes(file->tensors[0].tensor),
            std::string(reinterpret_cast<const char*>(data.data()), 40));
  EXPECT_EQ(TensorBytes(file->tensors[1].tensor), "\x07\x08\x09");
}

TEST_F(CkptTest, WriterScalarsEmptyAndStridedTensors) {
  const double scalar = 2.5;
  const std::vector<int16_t> matrix = {1, 2, 3, 4, 5, 6};  // 2x3, written transposed
  TensorView transposed = TensorView::Contiguous(matrix.data(), DType::kI16, {3, 2});
  transposed.strides = {1, 3};
  const NamedView views[] = {
      {"lr", TensorView::Contiguous(&scalar, DType::kF64, {})},
      {"empty", TensorView::Contiguous(matrix.data(), DType::kF16, {0})},
      {"empty2d", TensorView::Contiguous(matrix.data(), DType::kBF16, {2, 0})},
      {"t", transposed},
  };
  const fs::path path = dir_ / "s.ckpt";
  ASSERT_TRUE(WriteMindSporeCkpt(path, views).ok());
  const std::string bytes = FileBytes(path);
  auto raw = detail::DecodeCkptValues(AsBytes(bytes));
  ASSERT_TRUE(raw.ok());
  ASSERT_EQ(raw->size(), 4u);
  EXPECT_TRUE((*raw)[0].dims.empty());  // new writers: a scalar has no dims
  EXPECT_EQ((*raw)[1].dims, (std::vector<int64_t>{0}));
  EXPECT_TRUE((*raw)[1].content.empty());

  auto file = ReadTensorFile(path);
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  ASSERT_EQ(file->tensors.size(), 4u);
  EXPECT_TRUE(file->tensors[0].tensor.shape().empty());
  EXPECT_EQ(TensorBytes(file->tensors[0].tensor), Raw<double>({2.5}));
  EXPECT_EQ(file->tensors[1].tensor.shape(), (std::vector<int64_t>{0}));
  EXPECT_EQ(file->tensors[2].tensor.shape(), (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(file->tensors[3].tensor.shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(TensorBytes(file->tensors[3].tensor), Raw<int16_t>({1, 4, 2, 5, 3, 6}));
}

TEST_F(CkptTest, WriterRefusesBadInput) {
  const float x = 1;
  const uint8_t f8 = 0x38;
  const NamedView good{"x", TensorView::Contiguous(&x, DType::kF32, {})};
  const fs::path path = dir_ / "bad.ckpt";
  EXPECT_EQ(WriteMindSporeCkpt(path, {}).code(), ErrorCode::kInvalidArgument);
  const NamedView twice[] = {good, good};
  const Status duplicate = WriteMindSporeCkpt(path, twice);
  EXPECT_EQ(duplicate.code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(duplicate.message(), HasSubstr("duplicate tensor name 'x'"));
  const NamedView fp8{"q", TensorView::Contiguous(&f8, DType::kF8E4M3FN, {})};
  const Status no_type = WriteMindSporeCkpt(path, {&fp8, 1});
  EXPECT_EQ(no_type.code(), ErrorCode::kUnsupported);
  EXPECT_THAT(no_type.message(), HasSubstr("f8_e4m3fn"));
  const NamedView bad_name{"a\xff", TensorView::Contiguous(&x, DType::kF32, {})};
  EXPECT_EQ(WriteMindSporeCkpt(path, {&bad_name, 1}).code(), ErrorCode::kInvalidArgument);
  const Status no_dir = WriteMindSporeCkpt(dir_ / "missing" / "x.ckpt", {&good, 1});
  EXPECT_EQ(no_dir.code(), ErrorCode::kIoError);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 0);
}

TEST_F(CkptTest, WriterReplacesExistingFile) {
  const float a = 1, b = 2;
  const NamedView first{"a", TensorView::Contiguous(&a, DType::kF32, {})};
  const NamedView second{"b", TensorView::Contiguous(&b, DType::kF32, {})};
  const fs::path path = dir_ / "r.ckpt";
  ASSERT_TRUE(WriteMindSporeCkpt(path, {&first, 1}).ok());
  ASSERT_TRUE(WriteMindSporeCkpt(path, {&second, 1}).ok());
  auto file = ReadTensorFile(path);
  ASSERT_TRUE(file.ok());
  ASSERT_EQ(file->tensors.size(), 1u);
  EXPECT_EQ(file->tensors[0].name, "b");
}

// --- Hand-made files --------------------------------------------------------------------------

TEST_F(CkptTest, SplitTensorAcrossConsecutiveValuesIsJoined) {
  const std::string all = Raw<float>({1.5f, -2, 3, 4, 5, 6});
  // Three parts with the full dims, cut inside elements as MindSpore's byte slicing does.
  const std::string bytes = Record("w", {2, 3}, "Float32", all.substr(0, 10)) +
                            Record("w", {2, 3}, "Float32", all.substr(10, 9)) +
                            Record("w", {2, 3}, "Float32", all.substr(19)) +
                            Record("b", {1}, "Float32", Raw<float>({9}));
  ExpectWalkMatchesGeneratedParser(bytes);
  auto file = ReadBytes(bytes);
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  ASSERT_EQ(file->tensors.size(), 2u);
  EXPECT_EQ(file->tensors[0].name, "w");
  EXPECT_EQ(file->tensors[0].tensor.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(TensorBytes(file->tensors[0].tensor), all);
  EXPECT_EQ(file->tensors[1].name, "b");
}

TEST_F(CkptTest, SplitPartsMustAgreeAndBeConsecutive) {
  const std::string four = Raw<float>({1, 2});
  EXPECT_CKPT_ERROR(
      ReadBytes(Record("w", {2}, "Float32", four) + Record("b", {}, "Float32", "abcd") +
                Record("w", {2}, "Float32", four)),
      ErrorCode::kCorrupt, "must be consecutive");
  EXPECT_CKPT_ERROR(
      ReadBytes(Record("w", {4}, "Float32", four) + Record("w", {2, 2}, "Float32", four)),
      ErrorCode::kCorrupt, "part 1 of a split tensor");
  EXPECT_CKPT_ERROR(ReadBytes(Record("w", {4}, "Float32", four) + Record("w", {4}, "Int32", four)),
                    ErrorCode::kCorrupt, "part 1 of a split tensor");
}

TEST_F(CkptTest, CrcTrailerIsVerified) {
  const std::string records = Record("a", {2}, "Int32", Raw<int32_t>({1, -1})) +
                              Record("b", {}, "Float64", Raw<double>({0.5}));
  auto good = ReadBytes(records + CrcTrailer(Crc32(records)));
  ASSERT_TRUE(good.ok()) << good.error().ToString();
  ASSERT_EQ(good->tensors.size(), 2u);
  EXPECT_EQ(TensorBytes(good->tensors[1].tensor), Raw<double>({0.5}));

  const fs::path path = WriteRaw("crc.ckpt", records + CrcTrailer(Crc32(records) ^ 1));
  auto bad = ReadTensorFile(path);
  EXPECT_CKPT_ERROR(bad, ErrorCode::kCorrupt, "the file is damaged");
  EXPECT_THAT(bad.error().message(), HasSubstr("crc_num"));
  EXPECT_THAT(bad.error().message(), HasSubstr(path.string()));  // ReadTensorFile adds the path

  std::string wide = CrcTrailer(Crc32(records));
  wide[7] = '\x01';  // a high byte of the 10-byte number
  EXPECT_CKPT_ERROR(ReadBytes(records + wide), ErrorCode::kCorrupt, "wider than 32 bits");
  EXPECT_CKPT_ERROR(ReadBytes(CrcTrailer(0)), ErrorCode::kCorrupt, "no values before");
}

TEST_F(CkptTest, ScalarsWithEmptyDimsAndOldDimsZero) {
  const std::string bytes = Record("new", {}, "Float32", Raw<float>({0.25f})) +
                            Record("old", {0}, "Int64", Raw<int64_t>({42})) +
                            Record("empty", {0}, "Float16", "");
  ExpectWalkMatchesGeneratedParser(bytes);
  auto file = ReadBytes(bytes);
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  ASSERT_EQ(file->tensors.size(), 3u);
  EXPECT_TRUE(file->tensors[0].tensor.shape().empty());
  EXPECT_EQ(file->tensors[0].tensor.numel(), 1);
  EXPECT_TRUE(file->tensors[1].tensor.shape().empty());
  EXPECT_EQ(TensorBytes(file->tensors[1].tensor), Raw<int64_t>({42}));
  EXPECT_EQ(file->tensors[2].tensor.shape(), (std::vector<int64_t>{0}));  // a real empty tensor

  EXPECT_CKPT_ERROR(ReadBytes(Record("two", {0}, "Int64", Raw<int64_t>({1, 2}))),
                    ErrorCode::kCorrupt,
                    "dims [0] of Int64 need 0 bytes (8 for a scalar) but tensor_content has 16");
}

TEST_F(CkptTest, BothUnsignedSpellings) {
  const std::string bytes = Record("new8", {2}, "UInt8", "\x01\x02") +
                            Record("old8", {2}, "Uint8", "\x03\x04") +
                            Record("old16", {1}, "Uint16", Raw<uint16_t>({65535})) +
                            Record("old32", {1}, "Uint32", Raw<uint32_t>({7})) +
                            Record("old64", {1}, "Uint64", Raw<uint64_t>({8})) +
                            Record("new64", {1}, "UInt64", Raw<uint64_t>({9}));
  auto file = ReadBytes(bytes);
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  ASSERT_EQ(file->tensors.size(), 6u);
  const DType want[] = {DType::kU8, DType::kU8, DType::kU16, DType::kU32, DType::kU64, DType::kU64};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(file->tensors[i].tensor.dtype(), want[i]) << i;
  EXPECT_EQ(TensorBytes(file->tensors[1].tensor), "\x03\x04");
  EXPECT_EQ(TensorBytes(file->tensors[2].tensor), Raw<uint16_t>({65535}));
}

TEST_F(CkptTest, StrValuesBecomeMetadata) {
  // numpy '<U8' of "héllo ✓" (7 characters padded to 8 with NUL), UTF-32LE.
  const std::string text = Raw<uint32_t>({'h', 0xE9, 'l', 'l', 'o', ' ', 0x2713, 0});
  const std::string bytes =
      Record("epoch_num", {}, "Int32", Raw<int32_t>({3})) + Record("note", {0}, "str", text);
  ExpectWalkMatchesGeneratedParser(bytes);
  auto file = ReadBytes(bytes);
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  ASSERT_EQ(file->tensors.size(), 1u);
  EXPECT_EQ(file->tensors[0].name, "epoch_num");
  ASSERT_EQ(file->metadata.size(), 1u);
  EXPECT_EQ(file->metadata[0].first, "note");
  EXPECT_EQ(file->metadata[0].second, "h\xc3\xa9llo \xe2\x9c\x93");

  EXPECT_CKPT_ERROR(ReadBytes(Record("s", {0}, "str", "abc")), ErrorCode::kCorrupt, "not UTF-32");
  EXPECT_CKPT_ERROR(ReadBytes(Record("s", {0}, "str", Raw<uint32_t>({0xD800}))),
                    ErrorCode::kCorrupt, "invalid code point 0xD800");
  EXPECT_CKPT_ERROR(ReadBytes(Record("s", {2}, "str", Raw<uint32_t>({'a', 'b'}))),
                    ErrorCode::kUnsupported, "array of strings");
}

TEST_F(CkptTest, UnknownFieldsAreSkipped) {
  const std::string content = Raw<int16_t>({-5, 6});
  // Unknown fields of every wire type at all three levels, including a nested group.
  const std::string tensor = Key(7, 5) + std::string("\x01\x02\x03\x04", 4) +
                             TensorMsg({2}, "Int16", content) + Key(8, 3) + VarintField(1, 300) +
                             Len(2, "x") + Key(8, 4) + Key(9, 1) + std::string(8, '\x7f');
  const std::string value =
      VarintField(5, 1) + Len(1, "w") + Len(9, "old model_type") + Len(2, tensor);
  const std::string bytes = Len(1, value) + VarintField(4, 99) + Len(6, "unknown top-level") +
                            Record("z", {}, "Bool", "\x01");
  ExpectWalkMatchesGeneratedParser(bytes);
  auto file = ReadBytes(bytes);
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  ASSERT_EQ(file->tensors.size(), 2u);
  EXPECT_EQ(file->tensors[0].name, "w");
  EXPECT_EQ(TensorBytes(file->tensors[0].tensor), content);
  EXPECT_EQ(file->tensors[1].tensor.dtype(), DType::kBool);
}

TEST_F(CkptTest, PackedDimsAndProtobufMergeRules) {
  const std::string content = Raw<uint8_t>({1, 2, 3, 4, 5, 6});
  const std::string packed = Len(1, Varint(2) + Varint(3)) + Len(2, "UInt8") + Len(3, content);
  // A tensor field given twice in one value merges (dims append, strings: last wins), a repeated
  // tag field keeps the last: what the generated parser does.
  const std::string merged =
      Len(1, "first") + Len(2, VarintField(1, 3) + Len(2, "Int8") + Len(3, "x")) + Len(1, "m") +
      Len(2, VarintField(1, 2) + Len(2, "UInt8") + Len(3, content));
  const std::string bytes = ValueRecord("p", packed) + Len(1, merged);
  ExpectWalkMatchesGeneratedParser(bytes);
  auto file = ReadBytes(bytes);
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  ASSERT_EQ(file->tensors.size(), 2u);
  EXPECT_EQ(file->tensors[0].tensor.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(file->tensors[1].name, "m");
  EXPECT_EQ(file->tensors[1].tensor.shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(file->tensors[1].tensor.dtype(), DType::kU8);
}

TEST_F(CkptTest, AlignedSingleValuesViewTheFile) {
  // The first content starts at offset 20 (4-byte aligned in a 64-byte aligned buffer), the
  // second at 45.
  const std::string bytes =
      Record("a", {1}, "Float32", Raw<float>({1})) + Record("cd", {1}, "Float32", Raw<float>({2}));
  const auto buffer = BufferOf(bytes);
  auto file = ReadMindSporeCkpt(buffer, ReadOptions{});
  ASSERT_TRUE(file.ok());
  ASSERT_EQ(file->tensors.size(), 2u);
  const std::byte* first = file->tensors[0].tensor.view().first();
  ASSERT_EQ(reinterpret_cast<uintptr_t>(first) % 4, 0u);
  EXPECT_EQ(file->tensors[0].tensor.storage(), buffer);  // no copy
  // The second record's content sits at an odd offset: copied into its own aligned buffer.
  EXPECT_NE(file->tensors[1].tensor.storage(), buffer);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(file->tensors[1].tensor.view().first()) % 4, 0u);
  EXPECT_EQ(TensorBytes(file->tensors[1].tensor), Raw<float>({2}));
}

TEST_F(CkptTest, BoolBytesAreSanitized) {
  auto file = ReadBytes(Record("mask", {4}, "Bool", std::string("\x00\x01\x02\xff", 4)));
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(TensorBytes(file->tensors[0].tensor), std::string("\x00\x01\x01\x01", 4));
  ASSERT_EQ(file->warnings.size(), 1u);
  EXPECT_THAT(file->warnings[0], HasSubstr("2 bool bytes other than 0 and 1"));
}

TEST_F(CkptTest, ReadTensorFileDispatchesOnCkptExtension) {
  const std::string bytes = Record("x", {3}, "Int8", "\x01\x02\x03");
  const fs::path path = WriteRaw("model.CKPT", bytes);
  auto file = ReadTensorFile(path);
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  EXPECT_EQ(file->format, FileFormat::kMindSporeCkpt);
  ASSERT_EQ(file->tensors.size(), 1u);
  EXPECT_EQ(file->tensors[0].tensor.dtype(), DType::kI8);
}

// --- Errors -----------------------------------------------------------------------------------

TEST_F(CkptTest, EncryptedAndForeignFilesAreRefused) {
  // AES-GCM output: int32 LE magic 0x7F3A5ED8, a 16-byte tag, cipher text.
  std::string gcm("\xd8\x5e\x3a\x7f", 4);
  gcm += std::string(60, '\x5a');
  EXPECT_CKPT_ERROR(ReadBytes(gcm), ErrorCode::kRejected,
                    "file looks encrypted or is not a MindSpore checkpoint");
  EXPECT_CKPT_ERROR(ReadBytes(std::string("\xda\x5e\x3a\x7f", 4) + "xxxx"), ErrorCode::kRejected,
                    "SM4-CBC");
  EXPECT_CKPT_ERROR(ReadBytes("\x93NUMPY random bytes"), ErrorCode::kCorrupt,
                    "file looks encrypted or is not a MindSpore checkpoint");
  EXPECT_CKPT_ERROR(ReadBytes(""), ErrorCode::kCorrupt, "empty file");
}

TEST_F(CkptTest, MissingRequiredFields) {
  EXPECT_CKPT_ERROR(ReadBytes(Len(1, Len(2, TensorMsg({1}, "Int8", "a")))), ErrorCode::kCorrupt,
                    "missing required field tag");
  EXPECT_CKPT_ERROR(ReadBytes(ValueRecord("t", VarintField(1, 1) + Len(3, "a"))),
                    ErrorCode::kCorrupt, "'t'): tensor is missing required field tensor_type");
  EXPECT_CKPT_ERROR(ReadBytes(ValueRecord("t", Len(2, "Int8"))), ErrorCode::kCorrupt,
                    "missing required field tensor_content");
  EXPECT_CKPT_ERROR(ReadBytes(Len(1, Len(1, "lonely"))), ErrorCode::kCorrupt,
                    "value has no tensor");
  // A tag with the wrong wire type is an unknown field to protobuf, so the tag is missing.
  EXPECT_CKPT_ERROR(ReadBytes(Len(1, VarintField(1, 7) + Len(2, TensorMsg({}, "Int8", "a")))),
                    ErrorCode::kCorrupt, "missing required field tag");
  // The generated parser agrees that these files are invalid.
  EXPECT_FALSE(detail::DecodeCkptValuesReference(AsBytes(ValueRecord("t", Len(2, "Int8")))).ok());
}

TEST_F(CkptTest, UnsupportedTypesNameTheTag) {
  EXPECT_CKPT_ERROR(ReadBytes(Record("q.weight", {2}, "Int4", "\x12")), ErrorCode::kUnsupported,
                    "'q.weight'): tensor_type Int4");
  EXPECT_CKPT_ERROR(ReadBytes(Record("x", {1}, "Float8", "\x12")), ErrorCode::kUnsupported,
                    "unknown tensor_type 'Float8'");
  const std::string map = Len(3, Len(1, TensorMsg({1}, "int64", Raw<int64_t>({1}))));
  EXPECT_CKPT_ERROR(ReadBytes(Len(1, map + Len(1, "emb.table"))), ErrorCode::kUnsupported,
                    "'emb.table'): MapTensor");
}

TEST_F(CkptTest, BadDimsAndSizes) {
  EXPECT_CKPT_ERROR(ReadBytes(Record("n", {2, -3}, "Float32", "")), ErrorCode::kCorrupt,
                    "negative dim -3 at index 1");
  EXPECT_CKPT_ERROR(ReadBytes(Record("o", {int64_t{1} << 40, int64_t{1} << 40}, "Float32", "")),
                    ErrorCode::kOutOfRange, "overflow 64 bits");
  EXPECT_CKPT_ERROR(ReadBytes(Record("o", {int64_t{1} << 62}, "Float32", "")),
                    ErrorCode::kOutOfRange, "overflow 64 bits");
  EXPECT_CKPT_ERROR(
      ReadBytes(Record("fc.weight", {2, 3}, "Float32", std::string(20, 'x'))), ErrorCode::kCorrupt,
      "('fc.weight'): dims [2, 3] of Float32 need 24 bytes but tensor_content has 20");
  std::string many;
  for (int i = 0; i < 65; ++i) many += VarintField(1, 1);
  EXPECT_CKPT_ERROR(ReadBytes(ValueRecord("d", many + Len(2, "Int8") + Len(3, "a"))),
                    ErrorCode::kOutOfRange, "more than 64 dims");
}

TEST_F(CkptTest, TruncatedAndOversizedLengths) {
  const std::string good = Record("w", {2}, "Float32", Raw<float>({1, 2}));
  for (size_t cut = 1; cut < good.size(); ++cut) {
    auto r = ReadBytes(good.substr(0, cut));
    ASSERT_FALSE(r.ok()) << "cut at " << cut;
    EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt) << r.error().ToString();
  }
  EXPECT_CKPT_ERROR(ReadBytes(good.substr(0, 10)), ErrorCode::kCorrupt,
                    "value 0 at offset 0: length 26 exceeds the 8 bytes left in the file");
  // A 1 GiB tensor_content declared inside a small value: refused before any allocation.
  const std::string huge =
      Len(1, "t") + Len(2, Len(2, "Int8") + Key(3, 2) + Varint(uint64_t{1} << 30));
  EXPECT_CKPT_ERROR(ReadBytes(Len(1, huge)), ErrorCode::kCorrupt,
                    "tensor_content length 1073741824");
  const std::string record_10gb = Key(1, 2) + Varint(uint64_t{10} << 30) + "x";
  EXPECT_CKPT_ERROR(ReadBytes(record_10gb), ErrorCode::kCorrupt, "length 10737418240 exceeds");
}

TEST_F(CkptTest, VarintCutByTheEndOfAMessage) {
  // The last byte of the value (0x87) starts a tag whose varint the value's end cuts: an error,
  // not the end of the value (a fuzzer found the walk and the generated parser disagreeing).
  const std::string cut_tag = Len(1, Len(1, "w") + VarintField(15, 1) + "\x87");
  EXPECT_CKPT_ERROR(ReadBytes(cut_tag), ErrorCode::kCorrupt, "malformed field tag");
  EXPECT_FALSE(detail::DecodeCkptValuesReference(AsBytes(cut_tag)).ok());
  const std::string cut_in_tensor = ValueRecord("w", TensorMsg({1}, "Int8", "a") + "\x92");
  EXPECT_CKPT_ERROR(ReadBytes(cut_in_tensor), ErrorCode::kCorrupt, "malformed field tag in tensor");
  const std::string cut_dim = ValueRecord("w", Len(2, "Int8") + Len(3, "a") + Len(1, "\x81"));
  EXPECT_CKPT_ERROR(ReadBytes(cut_dim), ErrorCode::kCorrupt, "malformed packed dim");
}

// The walk must accept exactly what the generated parser accepts, at the edges where
// CodedInputStream alone is more lenient: long tags and lengths, field 0, group depth.
void ExpectSameVerdictAsGeneratedParser(std::string_view bytes, const std::string& what) {
  auto walked = detail::DecodeCkptValues(AsBytes(bytes));
  auto reference = detail::DecodeCkptValuesReference(AsBytes(bytes));
  EXPECT_EQ(walked.ok(), reference.ok())
      << what << ": walk " << (walked.ok() ? "OK" : walked.error().ToString()) << ", generated "
      << (reference.ok() ? "OK" : reference.error().ToString());
  if (walked.ok() && reference.ok()) {
    EXPECT_TRUE(detail::SameCkptValues(*walked, *reference)) << what;
  }
}

TEST_F(CkptTest, WireEdgesMatchTheGeneratedParser) {
  const std::string tensor = TensorMsg({1}, "Int8", "a");
  // Where an unknown field `field` goes: top level, in the value, in the tensor, in a maptensor
  // and in a maptensor's tensor (a maptensor that a later tensor field replaces, as protobuf's
  // oneof does, so that only the wire format decides).
  auto at_level = [&](int level, const std::string& field) {
    const std::string map_tensor = TensorMsg({1}, "int64", Raw<int64_t>({7}));
    switch (level) {
      case 0:
        return Record("w", {1}, "Int8", "a") + field;
      case 1:
        return Len(1, Len(1, "w") + field + Len(2, tensor));
      case 2:
        return ValueRecord("w", tensor + field);
      case 3:
        return Len(1, Len(1, "w") + Len(3, field + Len(1, map_tensor)) + Len(2, tensor));
      default:
        return Len(1, Len(1, "w") + Len(3, Len(1, map_tensor + field)) + Len(2, tensor));
    }
  };
  int accepted = 0;
  int refused = 0;
  for (int level = 0; level < 5; ++level) {
    for (int depth = 26; depth <= 36; ++depth) {
      std::string groups;
      for (int i = 0; i < depth; ++i) groups += Key(20 + i, 3);
      for (int i = depth - 1; i >= 0; --i) groups += Key(20 + i, 4);
      const std::string bytes = at_level(level, groups);
      ExpectSameVerdictAsGeneratedParser(bytes, fmt::format("level {} depth {}", level, depth));
      (detail::DecodeCkptValues(AsBytes(bytes)).ok() ? accepted : refused)++;
    }
    const std::vector<std::pair<std::string, std::string>> fields = {
        {"6-byte tag", "\x80\x80\x80\x80\x80\x08" + Varint(1)},
        {"5-byte tag with high bits", "\xf8\xff\xff\xff\x7f" + Varint(1)},
        {"5-byte tag", "\xf8\xff\xff\xff\x07" + Varint(1)},
        {"field 0", Key(0, 0) + Varint(1)},
        {"wire type 6", Key(9, 6) + Varint(1)},
        {"wire type 7", Key(9, 7) + Varint(1)},
        {"6-byte length", Key(9, 2) + "\x81\x80\x80\x80\x80\x00" + "x"},
        {"5-byte length", Key(9, 2) + "\x81\x80\x80\x80\x00" + "x"},
        {"length of 4 GiB + 1", Key(9, 2) + Varint((uint64_t{1} << 32) + 1) + "x"},
        {"mismatched end group", Key(9, 3) + Key(10, 4)},
        {"stray end group", Key(9, 4)},
        {"10-byte varint", Key(9, 0) + std::string(9, '\xff') + "\x7f"},
        {"11-byte varint", Key(9, 0) + std::string(10, '\xff') + "\x01"},
    };
    for (const auto& [what, field] : fields) {
      ExpectSameVerdictAsGeneratedParser(at_level(level, field),
                                         fmt::format("level {}: {}", level, what));
    }
  }
  EXPECT_GT(accepted, 0);  // the depth sweep crosses the limit at every level
  EXPECT_GT(refused, 0);
  // A maptensor replaced by a tensor is read as the tensor; a broken one is still an error.
  const std::string replaced =
      Len(1, Len(1, "w") + Len(3, Len(1, TensorMsg({1}, "int64", "12345678"))) + Len(2, tensor));
  ExpectWalkMatchesGeneratedParser(replaced);
  EXPECT_TRUE(ReadBytes(replaced).ok());
  EXPECT_CKPT_ERROR(ReadBytes(Len(1, Len(1, "w") + Len(3, "\x6d") + Len(2, tensor))),
                    ErrorCode::kCorrupt, "unknown field 13");
  // The tensor's own fields with overlong encodings.
  ExpectSameVerdictAsGeneratedParser(
      ValueRecord("w", Key(1, 0) + Varint(1) + Key(2, 2) + "\x84\x80\x80\x80\x80\x00" + "Int8" +
                           Len(3, "a")),
      "6-byte tensor_type length");
  ExpectSameVerdictAsGeneratedParser(
      ValueRecord("w", Key(1, 2) + "\x81\x00" + Varint(1) + Len(2, "Int8") + Len(3, "a")),
      "2-byte packed dims length");
  ExpectSameVerdictAsGeneratedParser(
      Key(1, 2) + "\x8e\x80\x80\x80\x80\x00" + Len(1, "w") + Len(2, tensor),
      "6-byte record length");
}

TEST_F(CkptTest, NestingIsBounded) {
  std::string groups;
  for (int i = 0; i < 100000; ++i) groups += Key(13, 3);
  const std::string value = Len(1, "g") + groups;
  EXPECT_CKPT_ERROR(ReadBytes(Len(1, value)), ErrorCode::kCorrupt, "too deeply nested");
  EXPECT_CKPT_ERROR(ReadBytes(Record("a", {}, "Int8", "x") + groups), ErrorCode::kCorrupt,
                    "too deeply nested");
  EXPECT_CKPT_ERROR(ReadBytes(Record("a", {}, "Int8", "x") + Key(3, 4)), ErrorCode::kCorrupt,
                    "end-group");
}

}  // namespace
}  // namespace numprobe
