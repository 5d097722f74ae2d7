// .npz: WriteNpz -> ReadNpz round trips (stored and deflated), member naming, skipped members,
// errors carrying the member name, CRC warnings, and the copy/in-place decisions for members.
#include "numprobe/npz.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "numprobe/npy.h"

#include "formats/zip.h"
#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class NpzTest : public ::testing::Test {
 protected:
  Result<TensorFile> ReadPath(const fs::path& p) {
    NUMPROBE_ASSIGN_OR_RETURN(auto buf, Buffer::MapFile(p));
    return ReadNpz(buf, {});
  }

  test::TempDir temp_{"numprobe_npz_test"};
  const fs::path dir_ = temp_.path();
};

std::vector<std::string> Names(const TensorFile& f) {
  std::vector<std::string> out;
  for (const auto& t : f.tensors) out.push_back(t.name);
  return out;
}

TEST_F(NpzTest, RoundTripStoredAndDeflated) {
  std::vector<float> a(1000);
  std::iota(a.begin(), a.end(), -500.0f);
  const std::vector<int64_t> b = {1, -2, 3, -4, 5, -6};
  const uint16_t bf16[3] = {0x3f80, 0x7fc0, 0xff80};
  std::vector<double> base(12);
  std::iota(base.begin(), base.end(), 0.0);
  TensorView transposed;  // 3x4 viewed as its 4x3 transpose
  transposed.data = reinterpret_cast<const std::byte*>(base.data());
  transposed.dtype = DType::kF64;
  transposed.shape = {4, 3};
  transposed.strides = {1, 4};
  const std::vector<NamedView> views = {
      {"a", TensorView::Contiguous(a.data(), DType::kF32, {10, 100})},
      {"layer.0/b", TensorView::Contiguous(b.data(), DType::kI64, {2, 3})},
      {"bf", TensorView::Contiguous(bf16, DType::kBF16, {3})},
      {"t", transposed},
      {"scalar", TensorView::Contiguous(b.data(), DType::kI64, {})},
      {"empty", TensorView::Contiguous(b.data(), DType::kI64, {0, 4})},
  };
  for (bool compress : {false, true}) {
    const fs::path p = dir_ / (compress ? "c.npz" : "s.npz");
    ASSERT_TRUE(WriteNpz(p, views, compress).ok());
    auto f = ReadPath(p);
    ASSERT_TRUE(f.ok()) << f.error().ToString();
    EXPECT_EQ(f->format, FileFormat::kNpz);
    EXPECT_THAT(Names(*f), ElementsAre("a", "layer.0/b", "bf", "t", "scalar", "empty"));
    // The only warning: bf16 travels as '<V2'.
    EXPECT_THAT(
        f->warnings,
        ElementsAre("member 'bf.npy': descr '<V2' read as bfloat16 (ml_dtypes convention)"));
    const Tensor& ta = f->tensors[0].tensor;
    EXPECT_EQ(ta.dtype(), DType::kF32);
    EXPECT_EQ(ta.shape(), (std::vector<int64_t>{10, 100}));
    EXPECT_EQ(std::memcmp(ta.view().first(), a.data(), a.size() * 4), 0);
    EXPECT_EQ(std::memcmp(f->tensors[1].tensor.view().first(), b.data(), 48), 0);
    EXPECT_EQ(f->tensors[2].tensor.dtype(), DType::kBF16);
    EXPECT_EQ(std::memcmp(f->tensors[2].tensor.view().first(), bf16, 6), 0);
    const Tensor& tt = f->tensors[3].tensor;
    EXPECT_EQ(tt.shape(), (std::vector<int64_t>{4, 3}));
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 3; ++j) {
        double v = 0;
        std::memcpy(&v, tt.view().first() + (i * 3 + j) * 8, 8);
        EXPECT_EQ(v, base[j * 4 + i]);
      }
    }
    EXPECT_TRUE(f->tensors[4].tensor.shape().empty());
    EXPECT_EQ(f->tensors[5].tensor.numel(), 0);
  }
}

TEST_F(NpzTest, StoredMembersAreCopiedOnlyWhenUnaligned) {
  // The writer does not pad, so the first member's array data starts at 30 + len("x.npy") + 128
  // = 163: unaligned for f64, which must be copied; u8 needs no alignment and stays in place.
  const std::vector<double> d = {1, 2};
  const std::vector<uint8_t> u = {1, 2, 3};
  const fs::path p = dir_ / "a.npz";
  const std::vector<NamedView> views = {
      {"x", TensorView::Contiguous(d.data(), DType::kF64, {2})},
      {"y", TensorView::Contiguous(u.data(), DType::kU8, {3})},
  };
  ASSERT_TRUE(WriteNpz(p, views, false).ok());
  auto buf = Buffer::MapFile(p).value();
  auto f = ReadNpz(buf, {});
  ASSERT_TRUE(f.ok());
  EXPECT_NE(f->tensors[0].tensor.storage(), buf);
  EXPECT_EQ(f->tensors[1].tensor.storage(), buf);
  EXPECT_EQ(std::memcmp(f->tensors[0].tensor.view().first(), d.data(), 16), 0);
}

TEST_F(NpzTest, SkipsNonNpyMembersAndNamesTheBadMember) {
  const fs::path p = dir_ / "mixed.npz";
  const std::vector<float> v = {1, 2};
  auto npy = EncodeNpy(TensorView::Contiguous(v.data(), DType::kF32, {2})).value();
  {
    auto w = ZipWriter::Create(p).value();
    ASSERT_TRUE(w.AddStored("readme.txt", std::as_bytes(std::span(std::string_view("hi")))).ok());
    ASSERT_TRUE(w.AddStored("v.npy", npy).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  auto f = ReadPath(p);
  ASSERT_TRUE(f.ok());
  EXPECT_THAT(Names(*f), ElementsAre("v"));
  EXPECT_THAT(f->warnings, ElementsAre("member 'readme.txt' is not a .npy array; skipped"));

  const fs::path bad = dir_ / "bad.npz";
  {
    auto w = ZipWriter::Create(bad).value();
    ASSERT_TRUE(w.AddStored("ok.npy", npy).ok());
    auto cut = std::span<const std::byte>(npy).first(npy.size() - 1);
    ASSERT_TRUE(w.AddDeflated("cut.npy", cut).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  auto g = ReadPath(bad);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(g.error().message(), "member 'cut.npy': data truncated: need 8 bytes, have 7");
}

TEST_F(NpzTest, CrcMismatchIsAWarningAndZipErrorsPassThrough) {
  const fs::path p = dir_ / "crc.npz";
  const std::vector<int32_t> v = {7, 8, 9};
  const std::vector<NamedView> views = {{"v", TensorView::Contiguous(v.data(), DType::kI32, {3})}};
  ASSERT_TRUE(WriteNpz(p, views, true).ok());
  std::string bytes;
  {
    std::ifstream in(p, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto clean = ReadNpz(Buffer::CopyOf(std::as_bytes(std::span(bytes))).value(), {});
  ASSERT_TRUE(clean.ok());
  EXPECT_TRUE(clean->warnings.empty());
  // Flip a bit of the CRC recorded in the central directory (offset 16 of the record).
  const size_t cd = bytes.find("PK\x01\x02");
  bytes[cd + 16] = static_cast<char>(bytes[cd + 16] ^ 1);
  auto f = ReadNpz(Buffer::CopyOf(std::as_bytes(std::span(bytes))).value(), {});
  ASSERT_TRUE(f.ok());
  EXPECT_THAT(f->warnings,
              ElementsAre("member 'v.npy': CRC-32 mismatch (the data may be damaged)"));
  EXPECT_EQ(std::memcmp(f->tensors[0].tensor.view().first(), v.data(), 12), 0);

  auto empty = ReadNpz(Buffer::CopyOf({}).value(), {});
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.error().message(), HasSubstr("too small for a zip end record"));

  // The inflation cap of ReadOptions reaches the zip reader.
  std::vector<float> big(100000, 0.0f);
  const fs::path c = dir_ / "big.npz";
  const std::vector<NamedView> bigv = {
      {"z", TensorView::Contiguous(big.data(), DType::kF32, {100000})}};
  ASSERT_TRUE(WriteNpz(c, bigv, true).ok());
  ReadOptions tight;
  tight.max_inflated_bytes = 1000;
  auto capped = ReadNpz(Buffer::MapFile(c).value(), tight);
  ASSERT_FALSE(capped.ok());
  EXPECT_EQ(capped.error().code(), ErrorCode::kOutOfRange);
  EXPECT_THAT(capped.error().message(), HasSubstr("entry 'z.npy' declares"));
}

// The bytes of `t`'s elements in C order, read through a streamed pass when it is streamed.
std::string ElementBytes(const Tensor& t, std::vector<std::string>* warnings = nullptr) {
  std::string warning;
  auto whole = t.InMemory(uint64_t{1} << 30, &warning);
  EXPECT_TRUE(whole.ok()) << whole.error().ToString();
  if (!whole.ok()) return {};
  if (warnings != nullptr && !warning.empty()) warnings->push_back(warning);
  auto copy = Tensor::CopyOf(whole->view());
  EXPECT_TRUE(copy.ok());
  return std::string(reinterpret_cast<const char*>(copy->view().first()),
                     static_cast<size_t>(copy->numel() * ItemSize(copy->dtype())));
}

TEST_F(NpzTest, LargeDeflatedMembersAreStreamedWhenAsked) {
  std::vector<float> a(70000);
  std::iota(a.begin(), a.end(), -500.0f);
  std::vector<int64_t> b(3000);
  std::iota(b.begin(), b.end(), -7);
  std::vector<uint8_t> flags(5000, 1);
  const std::vector<NamedView> views = {
      {"a", TensorView::Contiguous(a.data(), DType::kF32, {700, 100})},
      {"b", TensorView::Contiguous(b.data(), DType::kI64, {3000})},
      {"flags", TensorView::Contiguous(flags.data(), DType::kBool, {5000})},
      {"small", TensorView::Contiguous(b.data(), DType::kI64, {2})},
  };
  const fs::path p = dir_ / "streamed.npz";
  ASSERT_TRUE(WriteNpz(p, views, true).ok());
  auto eager = ReadPath(p);
  ASSERT_TRUE(eager.ok());
  ReadOptions options;
  options.stream_deflated_over = 1000;
  auto f = ReadNpz(Buffer::MapFile(p).value(), options);
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  ASSERT_EQ(f->tensors.size(), 4U);
  EXPECT_TRUE(f->warnings.empty());
  EXPECT_TRUE(f->tensors[0].tensor.is_streamed());
  EXPECT_TRUE(f->tensors[1].tensor.is_streamed());
  EXPECT_FALSE(f->tensors[2].tensor.is_streamed());  // bool: bytes other than 0/1 need fixing
  EXPECT_FALSE(f->tensors[3].tensor.is_streamed());  // under the threshold
  EXPECT_EQ(f->tensors[0].tensor.view().data, nullptr);
  EXPECT_EQ(f->tensors[0].tensor.shape(), (std::vector<int64_t>{700, 100}));
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(f->tensors[i].name, eager->tensors[i].name);
    EXPECT_EQ(f->tensors[i].tensor.dtype(), eager->tensors[i].tensor.dtype());
    EXPECT_EQ(ElementBytes(f->tensors[i].tensor), ElementBytes(eager->tensors[i].tensor)) << i;
  }
  // Loading a streamed storage whole is bounded by the limit given, with a clear message.
  auto refused = f->tensors[0].tensor.InMemory(1000);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kOutOfRange);
  EXPECT_THAT(refused.error().message(), HasSubstr("zip entry 'a.npy' (bytes "));
  EXPECT_THAT(refused.error().message(),
              HasSubstr("inflates to 280000 bytes, over the memory limit of 1000"));
}

TEST_F(NpzTest, AStreamedMemberIsVerifiedAtTheEndOfEachPass) {
  std::vector<float> a(50000);
  std::iota(a.begin(), a.end(), 1.0f);
  const std::vector<NamedView> views = {
      {"a", TensorView::Contiguous(a.data(), DType::kF32, {50000})}};
  const fs::path p = dir_ / "verify.npz";
  ASSERT_TRUE(WriteNpz(p, views, true).ok());
  std::string bytes;
  {
    std::ifstream in(p, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ReadOptions options;
  options.stream_deflated_over = 1;
  auto read = [&](const std::string& file) {
    return ReadNpz(Buffer::CopyOf(std::as_bytes(std::span(file))).value(), options);
  };
  // A CRC mismatch: the reader cannot know it yet; each pass ends with the warning.
  std::string crc = bytes;
  const size_t cd = crc.find("PK\x01\x02");
  crc[cd + 16] = static_cast<char>(crc[cd + 16] ^ 1);
  auto f = read(crc);
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  EXPECT_TRUE(f->warnings.empty());
  std::vector<std::string> warnings;
  EXPECT_EQ(ElementBytes(f->tensors[0].tensor, &warnings),
            std::string(reinterpret_cast<const char*>(a.data()), a.size() * 4));
  EXPECT_THAT(warnings, ElementsAre("CRC-32 mismatch in zip entry 'a.npy' (the data may be "
                                    "damaged)"));

  // Damaged deflate data past the header: the pass fails (never garbage, never a hang).
  auto archive = ZipArchive::Open(Buffer::CopyOf(std::as_bytes(std::span(bytes))).value());
  ASSERT_TRUE(archive.ok());
  const ZipEntry& e = archive->entries()[0];
  std::string bad = bytes;
  for (uint64_t k = e.compressed_size / 2; k < e.compressed_size; ++k) {
    bad[e.data_offset + k] = static_cast<char>(0xff);
  }
  auto damaged = read(bad);
  if (damaged.ok()) {
    auto pass = damaged->tensors[0].tensor.InMemory(uint64_t{1} << 30);
    ASSERT_FALSE(pass.ok());
    EXPECT_THAT(pass.error().message(), HasSubstr("entry 'a.npy'"));
  }

  // A member that inflates to fewer bytes than it declares: an error at the end of the pass.
  // (The declared size is patched in both headers; the local one is at offset 22.)
  std::string shorter = bytes;
  const uint32_t declared = static_cast<uint32_t>(e.uncompressed_size + 16);
  std::memcpy(&shorter[cd + 24], &declared, 4);
  std::memcpy(&shorter[e.local_header_offset + 22], &declared, 4);
  auto s = read(shorter);
  if (s.ok()) {
    ASSERT_TRUE(s->tensors[0].tensor.is_streamed());
    auto pass = s->tensors[0].tensor.InMemory(uint64_t{1} << 30);
    ASSERT_FALSE(pass.ok());
    EXPECT_THAT(pass.error().message(), HasSubstr("inflates to"));
  } else {
    EXPECT_THAT(s.error().message(), HasSubstr("a.npy"));
  }
  // One that inflates to more: stopped at the declared size.
  std::string longer = bytes;
  const uint32_t less = static_cast<uint32_t>(e.uncompressed_size - 16);
  std::memcpy(&longer[cd + 24], &less, 4);
  std::memcpy(&longer[e.local_header_offset + 22], &less, 4);
  auto l = read(longer);
  if (l.ok()) {
    auto pass = l->tensors[0].tensor.InMemory(uint64_t{1} << 30);
    ASSERT_FALSE(pass.ok());
    EXPECT_THAT(pass.error().message(), HasSubstr("more than its declared"));
  } else {
    EXPECT_THAT(l.error().message(), HasSubstr("data truncated"));
  }
}

TEST_F(NpzTest, WriterRefusesUnsafeOrDuplicateNames) {
  const float v = 1;
  const std::vector<NamedView> dup = {{"a", TensorView::Contiguous(&v, DType::kF32, {})},
                                      {"a", TensorView::Contiguous(&v, DType::kF32, {})}};
  EXPECT_EQ(WriteNpz(dir_ / "d.npz", dup, false).code(), ErrorCode::kInvalidArgument);
  const std::vector<NamedView> evil = {{"../a", TensorView::Contiguous(&v, DType::kF32, {})}};
  EXPECT_EQ(WriteNpz(dir_ / "e.npz", evil, false).code(), ErrorCode::kRejected);
  EXPECT_TRUE(fs::is_empty(dir_));
}

}  // namespace
}  // namespace numprobe
