// ZipArchive and ZipWriter: round trips through the writer, and hand-built archives that break
// one rule each (the reader must refuse them with the right code and a message naming the
// problem).
#include "formats/zip.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::span<const std::byte> Bytes(std::string_view s) { return std::as_bytes(std::span(s)); }

std::shared_ptr<const Buffer> ToBuffer(const std::string& s) {
  return Buffer::CopyOf(Bytes(s)).value();
}

std::string Str(std::span<const std::byte> b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

using test::TempDir;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void Put16(std::string* o, uint32_t v) {
  o->push_back(static_cast<char>(v & 0xFF));
  o->push_back(static_cast<char>((v >> 8) & 0xFF));
}
void Put32(std::string* o, uint32_t v) {
  Put16(o, v & 0xFFFF);
  Put16(o, v >> 16);
}
void Put64(std::string* o, uint64_t v) {
  Put32(o, static_cast<uint32_t>(v));
  Put32(o, static_cast<uint32_t>(v >> 32));
}

// One entry of a hand-built archive; every field the reader checks can be set independently.
struct RawEntry {
  std::string name;
  std::string payload;  // the bytes as stored (compressed for method 8)
  uint16_t method = 0;
  uint16_t flags = 0;
  uint16_t local_flags = 0;
  std::optional<std::string> local_name;
  std::optional<uint16_t> local_method;
  std::optional<uint64_t> uncompressed;  // declared; defaults to payload size
  std::optional<uint64_t> lho;           // central record's local header offset
  std::string local_extra;
  bool zip64_central = false;  // sizes and offset as 0xFFFFFFFF + zip64 extra
  uint32_t crc = 0;
};

struct RawOptions {
  bool zip64_eocd = false;
  std::optional<uint64_t> cd_offset;
  std::optional<uint64_t> cd_size;
  std::optional<uint64_t> count;
  std::string comment;
};

std::string BuildZip(const std::vector<RawEntry>& entries, const RawOptions& opt = {}) {
  std::string out;
  std::vector<uint64_t> offsets;
  for (const RawEntry& e : entries) {
    offsets.push_back(out.size());
    const std::string& lname = e.local_name ? *e.local_name : e.name;
    Put32(&out, 0x04034b50);
    Put16(&out, 20);
    Put16(&out, e.local_flags);
    Put16(&out, e.local_method ? *e.local_method : e.method);
    Put16(&out, 0);
    Put16(&out, 0x21);
    Put32(&out, e.crc);
    Put32(&out, 0);  // sizes left 0 as torch's miniz does: the reader must use the CD
    Put32(&out, 0);
    Put16(&out, static_cast<uint32_t>(lname.size()));
    Put16(&out, static_cast<uint32_t>(e.local_extra.size()));
    out += lname;
    out += e.local_extra;
    out += e.payload;
  }
  const uint64_t cd_offset = out.size();
  for (size_t i = 0; i < entries.size(); ++i) {
    const RawEntry& e = entries[i];
    const uint64_t usize = e.uncompressed ? *e.uncompressed : e.payload.size();
    const uint64_t lho = e.lho ? *e.lho : offsets[i];
    std::string extra;
    if (e.zip64_central) {
      Put16(&extra, 1);
      Put16(&extra, 24);
      Put64(&extra, usize);
      Put64(&extra, e.payload.size());
      Put64(&extra, lho);
    }
    Put32(&out, 0x02014b50);
    Put16(&out, 0x031e);
    Put16(&out, 0);  // version needed 0, as torch writes
    Put16(&out, e.flags);
    Put16(&out, e.method);
    Put16(&out, 0);
    Put16(&out, 0x21);
    Put32(&out, e.crc);
    Put32(&out, e.zip64_central ? 0xFFFFFFFF : static_cast<uint32_t>(e.payload.size()));
    Put32(&out, e.zip64_central ? 0xFFFFFFFF : static_cast<uint32_t>(usize));
    Put16(&out, static_cast<uint32_t>(e.name.size()));
    Put16(&out, static_cast<uint32_t>(extra.size()));
    Put16(&out, 0);
    Put16(&out, 0);
    Put16(&out, 0);
    Put32(&out, 0);
    Put32(&out, e.zip64_central ? 0xFFFFFFFF : static_cast<uint32_t>(lho));
    out += e.name;
    out += extra;
  }
  const uint64_t cd_size = opt.cd_size ? *opt.cd_size : out.size() - cd_offset;
  const uint64_t cdo = opt.cd_offset ? *opt.cd_offset : cd_offset;
  const uint64_t count = opt.count ? *opt.count : entries.size();
  if (opt.zip64_eocd) {
    const uint64_t rec = out.size();
    Put32(&out, 0x06064b50);
    Put64(&out, 44);
    Put16(&out, 45);
    Put16(&out, 45);
    Put32(&out, 0);
    Put32(&out, 0);
    Put64(&out, count);
    Put64(&out, count);
    Put64(&out, cd_size);
    Put64(&out, cdo);
    Put32(&out, 0x07064b50);
    Put32(&out, 0);
    Put64(&out, rec);
    Put32(&out, 1);
  }
  Put32(&out, 0x06054b50);
  Put16(&out, 0);
  Put16(&out, 0);
  Put16(&out, opt.zip64_eocd ? 0xFFFF : static_cast<uint32_t>(count));
  Put16(&out, opt.zip64_eocd ? 0xFFFF : static_cast<uint32_t>(count));
  Put32(&out, opt.zip64_eocd ? 0xFFFFFFFF : static_cast<uint32_t>(cd_size));
  Put32(&out, opt.zip64_eocd ? 0xFFFFFFFF : static_cast<uint32_t>(cdo));
  Put16(&out, static_cast<uint32_t>(opt.comment.size()));
  out += opt.comment;
  return out;
}

// A raw deflate stream of `data`, made by the writer and cut out of its archive.
std::string Deflate(const std::string& data) {
  TempDir dir;
  const fs::path p = dir.path() / "d.zip";
  auto w = ZipWriter::Create(p);
  EXPECT_TRUE(w.ok());
  EXPECT_TRUE(w->AddDeflated("x", Bytes(data)).ok());
  EXPECT_TRUE(w->Finish().ok());
  const std::string zip = ReadAll(p);
  auto a = ZipArchive::Open(ToBuffer(zip));
  EXPECT_TRUE(a.ok());
  const ZipEntry& e = a->entries().at(0);
  return zip.substr(e.data_offset, e.compressed_size);
}

Status OpenStatus(const std::string& zip, const ZipLimits& limits = {}) {
  auto a = ZipArchive::Open(ToBuffer(zip), limits);
  return a.ok() ? Status::Ok() : a.error();
}

#define EXPECT_ERROR(status_expr, code_, phrase_)     \
  do {                                                \
    const Status st_ = (status_expr);                 \
    EXPECT_EQ(st_.code(), (code_)) << st_.ToString(); \
    EXPECT_THAT(st_.message(), HasSubstr(phrase_));   \
  } while (false)

TEST(ZipWriter, RoundTripStoredDeflatedAndAligned) {
  TempDir dir;
  const fs::path p = dir.path() / "a.zip";
  const std::string small = "hello zip";
  std::string big(100000, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 7) % 13);
  {
    auto w = ZipWriter::Create(p);
    ASSERT_TRUE(w.ok()) << w.error().ToString();
    ASSERT_TRUE(w->AddStored("dir/small.txt", Bytes(small)).ok());
    ASSERT_TRUE(w->AddStored("dir/aligned.bin", Bytes(big), 64).ok());
    ASSERT_TRUE(w->AddDeflated("packed.bin", Bytes(big)).ok());
    ASSERT_TRUE(w->AddStored("empty", {}).ok());
    ASSERT_TRUE(w->AddDeflated("empty_packed", {}).ok());
    // Nothing exists under the final name until Finish().
    EXPECT_FALSE(fs::exists(p));
    ASSERT_TRUE(w->Finish().ok());
  }
  ASSERT_TRUE(fs::exists(p));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
  auto buffer = Buffer::MapFile(p);
  ASSERT_TRUE(buffer.ok());
  auto archive = ZipArchive::Open(*buffer);
  ASSERT_TRUE(archive.ok()) << archive.error().ToString();
  ASSERT_EQ(archive->entries().size(), 5u);
  EXPECT_EQ(archive->Find("missing"), nullptr);

  const ZipEntry* s = archive->Find("dir/small.txt");
  ASSERT_NE(s, nullptr);
  auto sd = archive->Read(*s);
  ASSERT_TRUE(sd.ok());
  EXPECT_EQ(Str(sd->bytes), small);
  // Stored entries are viewed in place, inside the file's buffer.
  EXPECT_EQ(sd->bytes.data(), (*buffer)->data() + s->data_offset);
  EXPECT_TRUE(ZipArchive::CrcMatches(*s, sd->bytes));

  const ZipEntry* al = archive->Find("dir/aligned.bin");
  ASSERT_NE(al, nullptr);
  EXPECT_EQ(al->data_offset % 64, 0u);
  auto ad = archive->Read(*al);
  ASSERT_TRUE(ad.ok());
  EXPECT_EQ(Str(ad->bytes), big);
  EXPECT_TRUE(ZipArchive::CrcMatches(*al, ad->bytes));

  const ZipEntry* d = archive->Find("packed.bin");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->method, 8);
  EXPECT_LT(d->compressed_size, big.size());
  auto dd = archive->Read(*d);
  ASSERT_TRUE(dd.ok()) << dd.error().ToString();
  EXPECT_EQ(Str(dd->bytes), big);
  EXPECT_TRUE(ZipArchive::CrcMatches(*d, dd->bytes));
  EXPECT_FALSE(ZipArchive::CrcMatches(*d, sd->bytes));

  for (const char* name : {"empty", "empty_packed"}) {
    auto ed = archive->Read(*archive->Find(name));
    ASSERT_TRUE(ed.ok()) << name << ": " << ed.error().ToString();
    EXPECT_TRUE(ed->bytes.empty());
  }
}

TEST(ZipWriter, TorchStyleAlignmentPadsWithFBField) {
  TempDir dir;
  const fs::path p = dir.path() / "archive.pt";
  {
    auto w = ZipWriter::Create(p);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->AddStored("archive/data.pkl", Bytes(std::string("\x80\x02.", 3)), 64).ok());
    ASSERT_TRUE(w->Finish().ok());
  }
  const std::string zip = ReadAll(p);
  // As in formats.md: archive/data.pkl gets 30 + 16 + 18 = 64.
  EXPECT_EQ(zip.substr(46, 2), "FB");
  EXPECT_EQ(static_cast<unsigned char>(zip[48]), 14);
  EXPECT_EQ(zip.substr(50, 14), std::string(14, 'Z'));
  auto a = ZipArchive::Open(ToBuffer(zip));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->entries()[0].data_offset, 64u);
}

TEST(ZipWriter, RefusesUnsafeAndDuplicateNamesAndLeavesNoFileOnAbandon) {
  TempDir dir;
  const fs::path p = dir.path() / "b.zip";
  {
    auto w = ZipWriter::Create(p);
    ASSERT_TRUE(w.ok());
    EXPECT_ERROR(w->AddStored("../evil", Bytes("x")), ErrorCode::kRejected, "'..' component");
    EXPECT_ERROR(w->AddStored("/abs", Bytes("x")), ErrorCode::kRejected, "absolute");
    ASSERT_TRUE(w->AddStored("a", Bytes("x")).ok());
    EXPECT_ERROR(w->AddStored("a", Bytes("y")), ErrorCode::kInvalidArgument, "duplicate");
  }
  // Abandoned without Finish(): no final file and no temporary left behind.
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(ZipWriter, WritesZip64RecordsWhenTheEntryCountNeedsThem) {
  TempDir dir;
  const fs::path p = dir.path() / "many.zip";
  constexpr int kEntries = 70000;  // over the 16-bit count of the classic end record
  {
    auto w = ZipWriter::Create(p);
    ASSERT_TRUE(w.ok());
    for (int i = 0; i < kEntries; ++i) {
      ASSERT_TRUE(w->AddStored(std::to_string(i), Bytes(std::to_string(i * 3))).ok());
    }
    ASSERT_TRUE(w->Finish().ok());
  }
  const std::string zip = ReadAll(p);
  // Classic end record: counts saturated at 0xFFFF; the zip64 locator sits just before it.
  const size_t eocd = zip.size() - 22;
  EXPECT_EQ(zip.substr(eocd, 4), "PK\x05\x06");
  EXPECT_EQ(zip.substr(eocd + 10, 2), "\xff\xff");
  EXPECT_EQ(zip.substr(eocd - 20, 4), "PK\x06\x07");
  auto a = ZipArchive::Open(ToBuffer(zip));
  ASSERT_TRUE(a.ok()) << a.error().ToString();
  ASSERT_EQ(a->entries().size(), static_cast<size_t>(kEntries));
  const ZipEntry* last = a->Find("69999");
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(Str(a->Read(*last)->bytes), "209997");
}

TEST(ZipArchive, ReadsTorchStyleArchiveWithZeroLocalSizesAndZip64Records) {
  RawEntry pkl{.name = "archive/data.pkl",
               .payload = std::string("\x80\x02}q\x00.", 6),
               .flags = 0x0808,
               .local_flags = 0x0808};
  pkl.local_extra = std::string("FB\x02\x00ZZ", 6);
  RawEntry data{.name = "archive/data/0",
                .payload = std::string(16, '\x01'),
                .flags = 0x0808,
                .local_flags = 0x0808,
                .zip64_central = true};
  const std::string zip = BuildZip({pkl, data}, {.zip64_eocd = true});
  auto a = ZipArchive::Open(ToBuffer(zip));
  ASSERT_TRUE(a.ok()) << a.error().ToString();
  ASSERT_EQ(a->entries().size(), 2u);
  const ZipEntry& e0 = a->entries()[0];
  EXPECT_EQ(e0.data_offset, 30u + 16u + 6u);
  EXPECT_EQ(e0.uncompressed_size, 6u);
  const ZipEntry& e1 = a->entries()[1];
  EXPECT_EQ(e1.uncompressed_size, 16u);
  EXPECT_EQ(e1.local_header_offset, 30u + 16u + 6u + 6u);
  auto d = a->Read(e1);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(Str(d->bytes), std::string(16, '\x01'));
}

TEST(ZipArchive, EmptyArchiveAndComment) {
  auto a = ZipArchive::Open(ToBuffer(BuildZip({}, {.comment = "a comment"})));
  ASSERT_TRUE(a.ok()) << a.error().ToString();
  EXPECT_TRUE(a->entries().empty());
}

TEST(ZipArchive, RejectsStructuralDamage) {
  RawEntry e{.name = "a.npy", .payload = "0123456789"};
  const std::string good = BuildZip({e});
  ASSERT_TRUE(OpenStatus(good).ok());

  EXPECT_ERROR(OpenStatus("PK\x05\x06"), ErrorCode::kCorrupt, "too small");
  EXPECT_ERROR(OpenStatus(std::string(100, 'x')), ErrorCode::kCorrupt,
               "no zip end of central directory");
  // Every truncation of a valid archive fails cleanly.
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(OpenStatus(good.substr(0, n)).ok()) << "prefix of " << n << " bytes";
  }
  EXPECT_ERROR(OpenStatus(BuildZip({e}, {.cd_offset = 1u << 20})), ErrorCode::kCorrupt,
               "lies outside the file");
  EXPECT_ERROR(OpenStatus(BuildZip({e}, {.cd_size = 1000})), ErrorCode::kCorrupt,
               "lies outside the file");
  EXPECT_ERROR(OpenStatus(BuildZip({e}, {.count = 2})), ErrorCode::kCorrupt,
               "cannot hold 2 entries");
  EXPECT_ERROR(OpenStatus(BuildZip({e}, {.cd_size = 50})), ErrorCode::kCorrupt,
               "central directory truncated in entry 0");
  EXPECT_ERROR(OpenStatus(BuildZip({e}, {.count = 1000})), ErrorCode::kCorrupt,
               "cannot hold 1000 entries");
  EXPECT_ERROR(OpenStatus(BuildZip({e}, {.zip64_eocd = true, .count = uint64_t{1} << 40})),
               ErrorCode::kOutOfRange, "over the cap");
  ZipLimits few;
  few.max_entries = 1;
  EXPECT_ERROR(OpenStatus(BuildZip({e, RawEntry{.name = "b", .payload = "x"}}), few),
               ErrorCode::kOutOfRange, "2 entries, over the cap of 1");
  RawEntry far = e;
  far.lho = 5000;
  EXPECT_ERROR(OpenStatus(BuildZip({far})), ErrorCode::kCorrupt, "local header offset 5000");
  RawEntry shifted = e;
  shifted.lho = 1;
  EXPECT_ERROR(OpenStatus(BuildZip({shifted})), ErrorCode::kCorrupt, "no local header");
  RawEntry big = e;
  big.method = 8;  // stored entries must have equal sizes, checked first
  big.zip64_central = true;
  big.uncompressed = 10;
  std::string zip = BuildZip({big});
  // Patch the zip64 compressed size (extra at CD + 46 + name) to run past the file.
  const size_t cd = zip.find("PK\x01\x02");
  const size_t csize_pos = cd + 46 + e.name.size() + 4 + 8;
  zip[csize_pos + 5] = '\x01';
  EXPECT_ERROR(OpenStatus(zip), ErrorCode::kCorrupt, "extends past");
}

TEST(ZipArchive, RejectsUnsafeEntries) {
  const std::string payload = "0123456789";
  auto one = [&](RawEntry e) {
    if (e.payload.empty()) e.payload = payload;
    return OpenStatus(BuildZip({e}));
  };
  EXPECT_ERROR(one({.name = "../x.npy"}), ErrorCode::kRejected, "'..' component");
  EXPECT_ERROR(one({.name = "a/../../x.npy"}), ErrorCode::kRejected, "'..' component");
  EXPECT_ERROR(one({.name = "a/.."}), ErrorCode::kRejected, "'..' component");
  EXPECT_ERROR(one({.name = "/etc/passwd"}), ErrorCode::kRejected, "absolute path");
  EXPECT_ERROR(one({.name = "C:x.npy"}), ErrorCode::kRejected, "absolute path");
  EXPECT_ERROR(one({.name = "a\\b.npy"}), ErrorCode::kRejected, "backslash");
  EXPECT_ERROR(one({.name = std::string("a\0b", 3)}), ErrorCode::kRejected, "NUL");
  EXPECT_ERROR(one({.name = ""}), ErrorCode::kCorrupt, "empty name");
  // A name with ".." inside a component is fine.
  EXPECT_TRUE(one({.name = "a..b/c..npy"}).ok());
  EXPECT_ERROR(one({.name = "a", .flags = 1, .local_flags = 1}), ErrorCode::kRejected, "encrypted");
  EXPECT_ERROR(one({.name = "a", .local_flags = 1}), ErrorCode::kRejected, "encrypted");
  EXPECT_ERROR(one({.name = "a", .method = 12}), ErrorCode::kUnsupported, "compression method 12");
  EXPECT_ERROR(one({.name = "a", .local_name = "b"}), ErrorCode::kCorrupt,
               "local header name 'b' differs");
  EXPECT_ERROR(one({.name = "a", .local_method = 8}), ErrorCode::kCorrupt,
               "local header method 8 differs");
  EXPECT_ERROR(one({.name = "a", .uncompressed = 99}), ErrorCode::kCorrupt,
               "stored entry 'a' has compressed size 10 but uncompressed size 99");

  RawEntry a{.name = "same", .payload = payload};
  EXPECT_ERROR(OpenStatus(BuildZip({a, a})), ErrorCode::kRejected, "duplicate entry name 'same'");

  // Overlapping entries: o's data contains a complete local header of "b", and b's central
  // record points there, so the two entries share bytes.
  std::string b_local;
  Put32(&b_local, 0x04034b50);
  Put16(&b_local, 20);
  for (int i = 0; i < 4; ++i) Put16(&b_local, i == 3 ? 0x21 : 0);
  for (int i = 0; i < 3; ++i) Put32(&b_local, 0);
  Put16(&b_local, 1);
  Put16(&b_local, 0);
  b_local += "by";
  RawEntry outer{.name = "o", .payload = "xxxx" + b_local};
  RawEntry inner{.name = "b", .payload = "y", .lho = 30 + 1 + 4};
  std::vector<RawEntry> both = {outer, inner};
  EXPECT_ERROR(OpenStatus(BuildZip(both)), ErrorCode::kRejected, "overlap");
}

TEST(ZipArchive, InflatesWithinCapsAndStopsBombs) {
  const std::string zeros(1 << 20, '\0');
  const std::string packed = Deflate(zeros);
  ASSERT_LT(packed.size(), zeros.size() / 100);
  RawEntry ok{.name = "z", .payload = packed, .method = 8, .uncompressed = zeros.size()};
  {
    auto a = ZipArchive::Open(ToBuffer(BuildZip({ok})));
    ASSERT_TRUE(a.ok());
    auto d = a->Read(a->entries()[0]);
    ASSERT_TRUE(d.ok()) << d.error().ToString();
    EXPECT_EQ(d->bytes.size(), zeros.size());
    EXPECT_EQ(Str(d->bytes), zeros);
  }
  auto read_status = [](const std::string& zip, const ZipLimits& limits) {
    auto a = ZipArchive::Open(ToBuffer(zip), limits);
    if (!a.ok()) return a.error();
    auto d = a->Read(a->entries()[0]);
    return d.ok() ? Status::Ok() : d.error();
  };
  // A small member declaring a huge size: refused before anything is allocated.
  RawEntry huge = ok;
  huge.zip64_central = true;
  huge.uncompressed = uint64_t{1} << 50;
  EXPECT_ERROR(read_status(BuildZip({huge}), {}), ErrorCode::kOutOfRange, "over the remaining");
  ZipLimits ratio;
  ratio.max_ratio = 10;
  EXPECT_ERROR(read_status(BuildZip({ok}), ratio), ErrorCode::kOutOfRange, "compression ratio");
  ZipLimits budget;
  budget.max_inflated_bytes = 1000;
  EXPECT_ERROR(read_status(BuildZip({ok}), budget), ErrorCode::kOutOfRange,
               "max_inflated_bytes 1000");
  // A member lying about its size: stops as soon as the stream goes past the declaration.
  RawEntry liar = ok;
  liar.uncompressed = 4096;
  EXPECT_ERROR(read_status(BuildZip({liar}), {}), ErrorCode::kOutOfRange,
               "inflates to more than its declared 4096 bytes");
  RawEntry shortfall = ok;
  shortfall.uncompressed = zeros.size() + 1;
  EXPECT_ERROR(read_status(BuildZip({shortfall}), {}), ErrorCode::kCorrupt, "but declares 1048577");
  ZipLimits loose;
  loose.max_ratio = 1 << 20;
  RawEntry cut = ok;
  cut.payload = packed.substr(0, packed.size() / 2);
  EXPECT_ERROR(read_status(BuildZip({cut}), loose), ErrorCode::kCorrupt, "truncated");
  RawEntry garbage = ok;
  garbage.payload = std::string(64, '\xff');
  EXPECT_ERROR(read_status(BuildZip({garbage}), loose), ErrorCode::kCorrupt, "bad deflate data");

  // The per-archive budget counts every member read so far.
  ZipLimits two;
  two.max_inflated_bytes = zeros.size() + 10;
  RawEntry second = ok;
  second.name = "y";
  auto a = ZipArchive::Open(ToBuffer(BuildZip({ok, second})), two);
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->Read(a->entries()[0]).ok());
  EXPECT_ERROR(a->Read(a->entries()[1]).error(), ErrorCode::kOutOfRange, "remaining budget of 10");
}

TEST(ZipArchive, CrcMismatchIsDetected) {
  RawEntry e{.name = "a", .payload = "abc", .crc = 0x352441c2};  // crc32("abc")
  auto a = ZipArchive::Open(ToBuffer(BuildZip({e})));
  ASSERT_TRUE(a.ok());
  auto d = a->Read(a->entries()[0]);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(ZipArchive::CrcMatches(a->entries()[0], d->bytes));
  EXPECT_FALSE(ZipArchive::CrcMatches(a->entries()[0], Bytes("abd")));
}

}  // namespace
}  // namespace numprobe
