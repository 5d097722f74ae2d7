#include "formats/zip.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/atomic_file.h"
#include "core/checked.h"
#include "core/crc32.h"
#include "core/quoted.h"

#ifdef NUMPROBE_WITH_ZLIB
#include <zlib.h>
#endif

namespace numprobe {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEocdSig = 0x06054b50;
constexpr uint32_t kEocd64Sig = 0x06064b50;
constexpr uint32_t kLocator64Sig = 0x07064b50;
constexpr size_t kLocalSize = 30;
constexpr size_t kCentralSize = 46;
constexpr size_t kEocdSize = 22;
constexpr size_t kEocd64Size = 56;
constexpr size_t kLocator64Size = 20;
constexpr uint32_t kMax32 = 0xFFFFFFFF;
constexpr uint16_t kMax16 = 0xFFFF;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kTorchPadExtraId = 0x4246;  // "FB", little-endian
// Flag bits: 0 encrypted, 6 strong encryption, 13 encrypted central directory.
constexpr uint16_t kEncryptionFlags = 0x0001 | 0x0040 | 0x2000;
constexpr uint16_t kUtf8Flag = 0x0800;
constexpr uint16_t kMethodStored = 0;
constexpr uint16_t kMethodDeflate = 8;

uint16_t U16(const std::byte* p) {
  return static_cast<uint16_t>(std::to_integer<uint16_t>(p[0]) |
                               (std::to_integer<uint16_t>(p[1]) << 8));
}
uint32_t U32(const std::byte* p) { return U16(p) | (static_cast<uint32_t>(U16(p + 2)) << 16); }
uint64_t U64(const std::byte* p) { return U32(p) | (static_cast<uint64_t>(U32(p + 4)) << 32); }

std::string Quote(std::string_view name) { return detail::Quoted(name); }

// What is left of the memory budget must hold the `want` bytes an entry declares; the one
// message for an inflated and a streamed entry alike.
Status CheckInflateBudget(std::string_view name, uint64_t want, const ZipLimits& limits,
                          uint64_t inflated_total) {
  const uint64_t budget =
      limits.max_inflated_bytes > inflated_total ? limits.max_inflated_bytes - inflated_total : 0;
  if (want <= budget) return Status::Ok();
  return Status::OutOfRange("entry " + Quote(name) + " declares " + std::to_string(want) +
                            " inflated bytes, over the remaining budget of " +
                            std::to_string(budget) + " (max_inflated_bytes " +
                            std::to_string(limits.max_inflated_bytes) +
                            ": the memory limit, --max-memory in the CLI)");
}

std::string Hex(uint64_t v) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), kHex[v & 15]);
    v >>= 4;
  } while (v != 0);
  return "0x" + out;
}

// Unsafe names are refused outright: they are how archive members escape an extraction folder
// and how scanners are shown a different file than the loader reads.
Status CheckName(std::string_view name) {
  if (name.empty()) return Status::Corrupt("entry with an empty name");
  if (name.find('\0') != std::string_view::npos) {
    return Status::Rejected("entry name " + Quote(name) + " contains a NUL byte");
  }
  if (name.find('\\') != std::string_view::npos) {
    return Status::Rejected("entry name " + Quote(name) + " contains a backslash");
  }
  if (name.front() == '/' || (name.size() >= 2 && name[1] == ':' &&
                              (std::isalpha(static_cast<unsigned char>(name[0])) != 0))) {
    return Status::Rejected("entry name " + Quote(name) + " is an absolute path");
  }
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    if (name.substr(start, end - start) == "..") {
      return Status::Rejected("entry name " + Quote(name) + " contains a '..' component");
    }
    start = end + 1;
  }
  return Status::Ok();
}

struct Zip64Values {
  uint64_t uncompressed;
  uint64_t compressed;
  uint64_t local_header_offset;
};

// Replaces the 32-bit fields that hold 0xFFFFFFFF by their values from the zip64 extra field
// (id 1), which lists only those fields, in the order uncompressed, compressed, offset.
Status ApplyZip64Extra(std::span<const std::byte> extra, std::string_view name, Zip64Values* v) {
  const bool need_uncompressed = v->uncompressed == kMax32;
  const bool need_compressed = v->compressed == kMax32;
  const bool need_offset = v->local_header_offset == kMax32;
  if (!need_uncompressed && !need_compressed && !need_offset) return Status::Ok();
  size_t pos = 0;
  while (extra.size() - pos >= 4) {
    const uint16_t id = U16(extra.data() + pos);
    const uint16_t len = U16(extra.data() + pos + 2);
    if (len > extra.size() - pos - 4) {
      return Status::Corrupt("entry " + Quote(name) + ": extra field " + Hex(id) + " of " +
                             std::to_string(len) + " bytes overruns the extra area");
    }
    if (id == kZip64ExtraId) {
      const std::byte* p = extra.data() + pos + 4;
      size_t left = len;
      auto take = [&](uint64_t* out) {
        if (left < 8) return false;
        *out = U64(p);
        p += 8;
        left -= 8;
        return true;
      };
      if ((need_uncompressed && !take(&v->uncompressed)) ||
          (need_compressed && !take(&v->compressed)) ||
          (need_offset && !take(&v->local_header_offset))) {
        return Status::Corrupt("entry " + Quote(name) + ": zip64 extra field of " +
                               std::to_string(len) + " bytes lacks a needed value");
      }
      return Status::Ok();
    }
    pos += 4 + size_t{len};
  }
  return Status::Corrupt("entry " + Quote(name) +
                         ": a size or offset is 0xFFFFFFFF but there is no zip64 extra field");
}

// Locates the end of central directory record: the last signature within the final 64 KiB + 22
// bytes whose comment ends inside the file.
Result<size_t> FindEocd(std::span<const std::byte> file) {
  if (file.size() < kEocdSize) {
    return Status::Corrupt("file of " + std::to_string(file.size()) +
                           " bytes is too small for a zip end record");
  }
  const size_t last = file.size() - kEocdSize;
  const size_t first = last > size_t{kMax16} ? last - kMax16 : 0;
  for (size_t pos = last + 1; pos-- > first;) {
    if (U32(file.data() + pos) != kEocdSig) continue;
    const uint16_t comment = U16(file.data() + pos + 20);
    if (comment <= file.size() - pos - kEocdSize) return pos;
  }
  return Status::Corrupt("no zip end of central directory record in the last 64 KiB");
}

}  // namespace

Result<ZipArchive> ZipArchive::Open(std::shared_ptr<const Buffer> file, const ZipLimits& limits) {
  if (!file) return Status::InvalidArgument("no buffer");
  const std::span<const std::byte> bytes = file->bytes();
  const uint64_t size = bytes.size();
  NUMPROBE_ASSIGN_OR_RETURN(const size_t eocd, FindEocd(bytes));
  const std::byte* e = bytes.data() + eocd;
  uint64_t disk = U16(e + 4);
  uint64_t cd_disk = U16(e + 6);
  uint64_t disk_entries = U16(e + 8);
  uint64_t count = U16(e + 10);
  uint64_t cd_size = U32(e + 12);
  uint64_t cd_offset = U32(e + 16);
  uint64_t cd_limit = eocd;  // the central directory ends before this

  if (eocd >= kLocator64Size && U32(bytes.data() + eocd - kLocator64Size) == kLocator64Sig) {
    const std::byte* loc = bytes.data() + eocd - kLocator64Size;
    const uint64_t rec = U64(loc + 8);
    if (U32(loc + 4) != 0 || U32(loc + 16) > 1) {
      return Status::Unsupported("multi-disk zip archives are not read");
    }
    if (!RangeInside(rec, kEocd64Size, eocd - kLocator64Size)) {
      return Status::Corrupt("zip64 end record offset " + std::to_string(rec) +
                             " lies outside the file (size " + std::to_string(size) + ")");
    }
    const std::byte* z = bytes.data() + rec;
    if (U32(z) != kEocd64Sig) {
      return Status::Corrupt("no zip64 end record at offset " + std::to_string(rec));
    }
    disk = U32(z + 16);
    cd_disk = U32(z + 20);
    disk_entries = U64(z + 24);
    count = U64(z + 32);
    cd_size = U64(z + 40);
    cd_offset = U64(z + 48);
    cd_limit = rec;
  }
  if (disk != 0 || cd_disk != 0 || disk_entries != count) {
    return Status::Unsupported("multi-disk zip archives are not read");
  }
  if (count > limits.max_entries) {
    return Status::OutOfRange("zip declares " + std::to_string(count) +
                              " entries, over the cap of " + std::to_string(limits.max_entries));
  }
  if (!RangeInside(cd_offset, cd_size, cd_limit)) {
    return Status::Corrupt("central directory (offset " + std::to_string(cd_offset) + ", size " +
                           std::to_string(cd_size) + ") lies outside the file (size " +
                           std::to_string(size) + ")");
  }
  // Each record takes at least 46 bytes: bounds the count before anything is reserved.
  if (count > cd_size / kCentralSize) {
    return Status::Corrupt("central directory of " + std::to_string(cd_size) +
                           " bytes cannot hold " + std::to_string(count) + " entries");
  }

  ZipArchive archive;
  archive.file_ = std::move(file);
  archive.limits_ = limits;
  archive.entries_.reserve(count);
  std::unordered_set<std::string> names;
  names.reserve(count);
  const std::byte* cd = bytes.data() + cd_offset;
  uint64_t pos = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (cd_size - pos < kCentralSize) {
      return Status::Corrupt("central directory truncated at entry " + std::to_string(i) +
                             " (offset " + std::to_string(cd_offset + pos) + ")");
    }
    const std::byte* h = cd + pos;
    if (U32(h) != kCentralSig) {
      return Status::Corrupt("bad central directory signature at offset " +
                             std::to_string(cd_offset + pos) + " (entry " + std::to_string(i) +
                             ")");
    }
    const uint16_t name_len = U16(h + 28);
    const uint16_t extra_len = U16(h + 30);
    const uint16_t comment_len = U16(h + 32);
    const uint64_t record = kCentralSize + uint64_t{name_len} + extra_len + comment_len;
    if (record > cd_size - pos) {
      return Status::Corrupt("central directory truncated in entry " + std::to_string(i) +
                             " (offset " + std::to_string(cd_offset + pos) + ")");
    }
    ZipEntry entry;
    entry.name.assign(reinterpret_cast<const char*>(h + kCentralSize), name_len);
    entry.flags = U16(h + 8);
    entry.method = U16(h + 10);
    entry.crc32 = U32(h + 16);
    Zip64Values v{U32(h + 24), U32(h + 20), U32(h + 42)};
    NUMPROBE_RETURN_IF_ERROR(CheckName(entry.name));
    NUMPROBE_RETURN_IF_ERROR(ApplyZip64Extra(
        std::span<const std::byte>(h + kCentralSize + name_len, extra_len), entry.name, &v));
    entry.uncompressed_size = v.uncompressed;
    entry.compressed_size = v.compressed;
    entry.local_header_offset = v.local_header_offset;
    pos += record;

    if ((entry.flags & kEncryptionFlags) != 0) {
      return Status::Rejected("entry " + Quote(entry.name) + " is encrypted");
    }
    if (entry.method != kMethodStored && entry.method != kMethodDeflate) {
      return Status::Unsupported("entry " + Quote(entry.name) + " uses compression method " +
                                 std::to_string(entry.method) +
                                 " (only stored and deflate are read)");
    }
    if (entry.method == kMethodStored && entry.compressed_size != entry.uncompressed_size) {
      return Status::Corrupt("stored entry " + Quote(entry.name) + " has compressed size " +
                             std::to_string(entry.compressed_size) + " but uncompressed size " +
                             std::to_string(entry.uncompressed_size));
    }
    if (!names.insert(entry.name).second) {
      return Status::Rejected("duplicate entry name " + Quote(entry.name));
    }

    // The local header: its name and method must agree with the central record; its extra field
    // (torch's "FB" padding lives only here) decides where the data starts.
    const uint64_t lho = entry.local_header_offset;
    if (!RangeInside(lho, kLocalSize, cd_offset)) {
      return Status::Corrupt("entry " + Quote(entry.name) + ": local header offset " +
                             std::to_string(lho) + " lies outside the entry area (size " +
                             std::to_string(cd_offset) + ")");
    }
    const std::byte* l = bytes.data() + lho;
    if (U32(l) != kLocalSig) {
      return Status::Corrupt("entry " + Quote(entry.name) + ": no local header at offset " +
                             std::to_string(lho));
    }
    const uint16_t local_flags = U16(l + 6);
    const uint16_t local_method = U16(l + 8);
    const uint16_t local_name_len = U16(l + 26);
    const uint16_t local_extra_len = U16(l + 28);
    const uint64_t header_end = lho + kLocalSize + local_name_len + local_extra_len;
    if (header_end > cd_offset) {
      return Status::Corrupt("entry " + Quote(entry.name) + ": local header at offset " +
                             std::to_string(lho) + " runs into the central directory");
    }
    const std::string_view local_name(reinterpret_cast<const char*>(l + kLocalSize),
                                      local_name_len);
    if (local_name != entry.name) {
      return Status::Corrupt("entry " + Quote(entry.name) + ": local header name " +
                             Quote(local_name) + " differs from the central directory");
    }
    if ((local_flags & kEncryptionFlags) != 0) {
      return Status::Rejected("entry " + Quote(entry.name) + " is encrypted (local header)");
    }
    if (local_method != entry.method) {
      return Status::Corrupt(
          "entry " + Quote(entry.name) + ": local header method " + std::to_string(local_method) +
          " differs from the central directory's " + std::to_string(entry.method));
    }
    entry.data_offset = header_end;
    if (!RangeInside(entry.data_offset, entry.compressed_size, cd_offset)) {
      return Status::Corrupt(
          "entry " + Quote(entry.name) + ": data at offset " + std::to_string(entry.data_offset) +
          " of " + std::to_string(entry.compressed_size) +
          " bytes extends past the entry area (size " + std::to_string(cd_offset) + ")");
    }
    archive.entries_.push_back(std::move(entry));
  }

  // No two entries may share bytes: overlapping entries are how one deflate stream is inflated
  // many times over (Fifield's zip bomb) and how two readers are shown different contents.
  std::vector<const ZipEntry*> by_offset;
  by_offset.reserve(archive.entries_.size());
  for (const ZipEntry& entry : archive.entries_) by_offset.push_back(&entry);
  std::sort(by_offset.begin(), by_offset.end(), [](const ZipEntry* a, const ZipEntry* b) {
    return a->local_header_offset < b->local_header_offset;
  });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const ZipEntry& prev = *by_offset[i - 1];
    const ZipEntry& next = *by_offset[i];
    if (prev.data_offset + prev.compressed_size > next.local_header_offset) {
      return Status::Rejected("entries " + Quote(prev.name) + " and " + Quote(next.name) +
                              " overlap (offsets " + std::to_string(prev.local_header_offset) +
                              " and " + std::to_string(next.local_header_offset) + ")");
    }
  }
  return archive;
}

const ZipEntry* ZipArchive::Find(std::string_view name) const {
  for (const ZipEntry& entry : entries_) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

Result<ZipData> ZipArchive::Read(const ZipEntry& entry) {
  // Re-checked here because the caller may hand in an entry it built itself.
  if (!RangeInside(entry.data_offset, entry.compressed_size, file_->size())) {
    return Status::Corrupt("entry " + Quote(entry.name) +
                           ": data extends past the end of the file");
  }
  const std::span<const std::byte> packed =
      file_->bytes().subspan(entry.data_offset, entry.compressed_size);
  if (entry.method == kMethodStored) {
    if (entry.uncompressed_size != entry.compressed_size) {
      return Status::Corrupt("stored entry " + Quote(entry.name) + " has inconsistent sizes");
    }
    return ZipData{file_, packed};
  }
  if (entry.method != kMethodDeflate) {
    return Status::Unsupported("entry " + Quote(entry.name) + " uses compression method " +
                               std::to_string(entry.method));
  }
#ifdef NUMPROBE_WITH_ZLIB
  const uint64_t want = entry.uncompressed_size;
  // The declared size is checked against every cap before the output buffer is allocated; the
  // stream is then stopped the moment it tries to produce more than it declared.
  NUMPROBE_RETURN_IF_ERROR(CheckInflateBudget(entry.name, want, limits_, inflated_total_));
  const auto ratio_cap =
      CheckedMul<uint64_t>(std::max<uint64_t>(entry.compressed_size, 1), limits_.max_ratio);
  if (ratio_cap && want > *ratio_cap) {
    return Status::OutOfRange("entry " + Quote(entry.name) + " declares " + std::to_string(want) +
                              " bytes from " + std::to_string(entry.compressed_size) +
                              " compressed, over the compression ratio cap of " +
                              std::to_string(limits_.max_ratio));
  }
  if (want > std::numeric_limits<size_t>::max()) {
    return Status::OutOfRange("entry " + Quote(entry.name) + " is too large for this machine");
  }
  // Returned only when inflate produced exactly `want` bytes, so every byte is written.
  NUMPROBE_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> out,
                            Buffer::AllocateUninitialized(static_cast<size_t>(want)));

  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) return Status::Internal("inflateInit2 failed");
  struct Closer {
    z_stream* zs;
    ~Closer() { inflateEnd(zs); }
  } closer{&zs};
  constexpr uint64_t kChunk = uint64_t{1} << 30;  // z_stream counts are 32-bit
  const std::byte* in = packed.data();
  uint64_t in_left = packed.size();
  std::byte* dst = out->mutable_data();
  uint64_t out_left = want;
  std::byte overflow_probe[1];
  while (true) {
    if (zs.avail_in == 0 && in_left > 0) {
      const uint64_t n = std::min(in_left, kChunk);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in));  // zlib does not write
      zs.avail_in = static_cast<uInt>(n);
      in += n;
      in_left -= n;
    }
    bool probing = false;
    if (zs.avail_out == 0) {
      if (out_left > 0) {
        const uint64_t n = std::min(out_left, kChunk);
        zs.next_out = reinterpret_cast<Bytef*>(dst);
        zs.avail_out = static_cast<uInt>(n);
        dst += n;
        out_left -= n;
      } else {
        // The declared size is reached: one spare byte shows whether the stream wants more.
        zs.next_out = reinterpret_cast<Bytef*>(overflow_probe);
        zs.avail_out = 1;
        probing = true;
      }
    }
    const int rc = inflate(&zs, Z_NO_FLUSH);
    if (probing && zs.avail_out == 0) {
      return Status::OutOfRange("entry " + Quote(entry.name) +
                                " inflates to more than its declared " + std::to_string(want) +
                                " bytes");
    }
    if (probing) zs.avail_out = 0;  // the probe byte is not part of the output
    if (rc == Z_STREAM_END) {
      const uint64_t produced = want - out_left - zs.avail_out;
      if (produced != want) {
        return Status::Corrupt("entry " + Quote(entry.name) + " inflates to " +
                               std::to_string(produced) + " bytes but declares " +
                               std::to_string(want));
      }
      break;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0 && in_left == 0) {
      return Status::Corrupt("entry " + Quote(entry.name) + ": deflate stream is truncated");
    }
    if (rc == Z_BUF_ERROR && zs.avail_in != 0 && zs.avail_out != 0) {
      // zlib made no progress with room on both sides: never loop on it.
      return Status::Corrupt("entry " + Quote(entry.name) + ": deflate stream makes no progress");
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return Status::Corrupt("entry " + Quote(entry.name) + ": bad deflate data (" +
                             (zs.msg != nullptr ? std::string(zs.msg) : std::to_string(rc)) + ")");
    }
  }
  inflated_total_ += want;
  const std::span<const std::byte> view = out->bytes();
  return ZipData{std::move(out), view};
#else
  return Status::Unsupported("entry " + Quote(entry.name) +
                             " is deflated and zlib support was not built (NUMPROBE_WITH_ZLIB)");
#endif
}

#ifdef NUMPROBE_WITH_ZLIB
namespace {

// One inflating pass over a deflated entry, delivering bytes [skip, skip + length) of it.
class InflatePass final : public ByteStream {
 public:
  InflatePass(std::shared_ptr<const Buffer> file, ZipEntry entry, uint64_t skip, uint64_t length)
      : file_(std::move(file)), entry_(std::move(entry)), skip_(skip), length_(length) {
    const std::span<const std::byte> packed =
        file_->bytes().subspan(entry_.data_offset, entry_.compressed_size);
    in_ = packed.data();
    in_left_ = packed.size();
  }
  ~InflatePass() override {
    if (open_) inflateEnd(&zs_);
  }
  InflatePass(const InflatePass&) = delete;
  InflatePass& operator=(const InflatePass&) = delete;

  Status Init() {
    if (inflateInit2(&zs_, -MAX_WBITS) != Z_OK) return Status::Internal("inflateInit2 failed");
    open_ = true;
    return Status::Ok();
  }

  Result<size_t> Read(std::span<std::byte> out) override {
    if (skip_ > 0) {
      std::vector<std::byte> scratch(static_cast<size_t>(std::min<uint64_t>(skip_, kBlock)));
      while (skip_ > 0) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(skip_, scratch.size()));
        NUMPROBE_ASSIGN_OR_RETURN(const size_t got, Inflate(std::span(scratch.data(), n)));
        if (got == 0) return Status::Corrupt("entry " + Quote(entry_.name) + " ends early");
        skip_ -= got;
      }
    }
    const size_t want = static_cast<size_t>(std::min<uint64_t>(out.size(), length_));
    size_t done = 0;
    while (done < want) {
      NUMPROBE_ASSIGN_OR_RETURN(const size_t got, Inflate(out.subspan(done, want - done)));
      if (got == 0) break;
      done += got;
    }
    length_ -= done;
    if (done < out.size()) {
      // The window is delivered (or the entry ended): inflate what follows, verifying the end.
      std::vector<std::byte> scratch;
      while (!ended_) {
        if (scratch.empty()) scratch.resize(kBlock);
        NUMPROBE_ASSIGN_OR_RETURN(const size_t got, Inflate(scratch));
        (void)got;
      }
      if (length_ > 0) {
        return Status::Corrupt("entry " + Quote(entry_.name) + " ends " + std::to_string(length_) +
                               " bytes before the data it should hold");
      }
    }
    return done;
  }

  std::string warning() const override {
    if (!ended_ || crc_ == entry_.crc32) return {};
    return "CRC-32 mismatch in zip entry " + Quote(entry_.name) + " (the data may be damaged)";
  }

 private:
  static constexpr uint64_t kBlock = uint64_t{1} << 20;
  static constexpr uint64_t kInChunk = uint64_t{1} << 30;  // z_stream counts are 32-bit

  // Inflates up to out.size() bytes into out; 0 only at the end of the stream, which is then
  // verified (produced == declared).
  Result<size_t> Inflate(std::span<std::byte> out) {
    if (ended_) return size_t{0};
    const uint64_t want = entry_.uncompressed_size;
    const bool probing = produced_ == want;  // one spare byte shows whether it wants more
    std::byte probe[1];
    const size_t room =
        probing ? 1
                : static_cast<size_t>(std::min<uint64_t>({out.size(), want - produced_, kInChunk}));
    zs_.next_out = reinterpret_cast<Bytef*>(probing ? probe : out.data());
    zs_.avail_out = static_cast<uInt>(room);
    while (zs_.avail_out > 0) {
      if (zs_.avail_in == 0 && in_left_ > 0) {
        const uint64_t n = std::min(in_left_, kInChunk);
        zs_.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in_));  // zlib only reads
        zs_.avail_in = static_cast<uInt>(n);
        in_ += n;
        in_left_ -= n;
      }
      const uInt before = zs_.avail_out;
      const int rc = inflate(&zs_, Z_NO_FLUSH);
      if (probing && zs_.avail_out == 0) {
        return Status::OutOfRange("entry " + Quote(entry_.name) +
                                  " inflates to more than its declared " + std::to_string(want) +
                                  " bytes");
      }
      if (rc == Z_STREAM_END) {
        ended_ = true;
        break;
      }
      if (rc == Z_BUF_ERROR && zs_.avail_in == 0 && in_left_ == 0) {
        return Status::Corrupt("entry " + Quote(entry_.name) + ": deflate stream is truncated");
      }
      if (rc == Z_BUF_ERROR && zs_.avail_in != 0 && zs_.avail_out == before) {
        return Status::Corrupt("entry " + Quote(entry_.name) +
                               ": deflate stream makes no progress");
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return Status::Corrupt("entry " + Quote(entry_.name) + ": bad deflate data (" +
                               (zs_.msg != nullptr ? std::string(zs_.msg) : std::to_string(rc)) +
                               ")");
      }
    }
    const size_t got = probing ? 0 : room - zs_.avail_out;
    produced_ += got;
    crc_ = detail::Crc32(std::span<const std::byte>(out.data(), got), crc_);
    if (ended_ && produced_ != want) {
      return Status::Corrupt("entry " + Quote(entry_.name) + " inflates to " +
                             std::to_string(produced_) + " bytes but declares " +
                             std::to_string(want));
    }
    if (!ended_ && got == 0 && !probing) {
      return Status::Corrupt("entry " + Quote(entry_.name) + ": deflate stream makes no progress");
    }
    return got;
  }

  std::shared_ptr<const Buffer> file_;
  ZipEntry entry_;
  uint64_t skip_;
  uint64_t length_;
  const std::byte* in_ = nullptr;
  uint64_t in_left_ = 0;
  z_stream zs_{};
  bool open_ = false;
  bool ended_ = false;
  uint64_t produced_ = 0;
  uint32_t crc_ = 0;
};

class InflatedEntry final : public StreamedStorage {
 public:
  InflatedEntry(std::shared_ptr<const Buffer> file, ZipEntry entry, uint64_t skip, uint64_t length)
      : file_(std::move(file)), entry_(std::move(entry)), skip_(skip), length_(length) {}

  uint64_t size() const override { return length_; }

  std::string Describe() const override {
    std::string out = "zip entry " + Quote(entry_.name);
    if (skip_ > 0 || length_ != entry_.uncompressed_size) {
      out += " (bytes " + std::to_string(skip_) + " to " + std::to_string(skip_ + length_) + ")";
    }
    return out + " (deflated, " + std::to_string(entry_.compressed_size) + " bytes)";
  }

  Result<std::unique_ptr<ByteStream>> Open() const override {
    auto pass = std::make_unique<InflatePass>(file_, entry_, skip_, length_);
    NUMPROBE_RETURN_IF_ERROR(pass->Init());
    return std::unique_ptr<ByteStream>(std::move(pass));
  }

 private:
  std::shared_ptr<const Buffer> file_;
  ZipEntry entry_;
  uint64_t skip_;
  uint64_t length_;
};

}  // namespace
#endif

Result<std::shared_ptr<const StreamedStorage>> ZipArchive::Streamed(
    const ZipEntry& entry, uint64_t skip, std::optional<uint64_t> length) const {
  if (!RangeInside(entry.data_offset, entry.compressed_size, file_->size())) {
    return Status::Corrupt("entry " + Quote(entry.name) +
                           ": data extends past the end of the file");
  }
  if (entry.method != kMethodDeflate) {
    return Status::InvalidArgument("entry " + Quote(entry.name) + " is not deflated");
  }
  const uint64_t want = entry.uncompressed_size;
  if (skip > want || (length.has_value() && *length > want - skip)) {
    return Status::OutOfRange("entry " + Quote(entry.name) + " of " + std::to_string(want) +
                              " bytes has no bytes " + std::to_string(skip) + " to " +
                              std::to_string(skip + length.value_or(0)));
  }
  const auto ratio_cap =
      CheckedMul<uint64_t>(std::max<uint64_t>(entry.compressed_size, 1), limits_.max_ratio);
  if (ratio_cap && want > *ratio_cap) {
    // Refused as Read refuses it (the memory budget named first when it is exceeded too), so a
    // bomb gets the same message whether it would be streamed or inflated.
    NUMPROBE_RETURN_IF_ERROR(CheckInflateBudget(entry.name, want, limits_, inflated_total_));
    return Status::OutOfRange("entry " + Quote(entry.name) + " declares " + std::to_string(want) +
                              " bytes from " + std::to_string(entry.compressed_size) +
                              " compressed, over the compression ratio cap of " +
                              std::to_string(limits_.max_ratio));
  }
#ifdef NUMPROBE_WITH_ZLIB
  return std::shared_ptr<const StreamedStorage>(
      std::make_shared<InflatedEntry>(file_, entry, skip, length.value_or(want - skip)));
#else
  return Status::Unsupported("entry " + Quote(entry.name) +
                             " is deflated and zlib support was not built (NUMPROBE_WITH_ZLIB)");
#endif
}

bool ZipArchive::CrcMatches(const ZipEntry& entry, std::span<const std::byte> bytes) {
  return detail::Crc32(bytes) == entry.crc32;
}

// ---------------------------------------------------------------------------------------------
// Writer

namespace {

void Put16(std::string* out, uint16_t v) {
  out->push_back(static_cast<char>(v & 0xFF));
  out->push_back(static_cast<char>(v >> 8));
}
void Put32(std::string* out, uint32_t v) {
  Put16(out, static_cast<uint16_t>(v & 0xFFFF));
  Put16(out, static_cast<uint16_t>(v >> 16));
}
void Put64(std::string* out, uint64_t v) {
  Put32(out, static_cast<uint32_t>(v & kMax32));
  Put32(out, static_cast<uint32_t>(v >> 32));
}

// 1980-01-01 00:00:00, the earliest DOS time: written archives are byte-for-byte reproducible.
constexpr uint16_t kDosTime = 0;
constexpr uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;
constexpr uint16_t kVersionPlain = 20;
constexpr uint16_t kVersionZip64 = 45;
constexpr uint16_t kMadeByUnix = 3 << 8;
constexpr uint32_t kRegularFileMode = 0100644u << 16;

}  // namespace

struct ZipWriter::Impl {
  struct Record {
    std::string name;
    uint16_t flags;
    uint16_t method;
    uint32_t crc;
    uint64_t compressed;
    uint64_t uncompressed;
    uint64_t offset;
  };
  detail::AtomicOutput out;
  std::vector<Record> records;
  std::unordered_set<std::string> names;
  bool finished = false;

  explicit Impl(detail::AtomicOutput o) : out(std::move(o)) {}

  Status Add(std::string_view name, uint16_t method, uint32_t crc, uint64_t uncompressed,
             std::span<const std::byte> payload, uint32_t alignment) {
    if (finished) return Status::InvalidArgument("zip writer already finished");
    NUMPROBE_RETURN_IF_ERROR(CheckName(name).WithContext("cannot write zip entry"));
    if (name.size() > kMax16) return Status::InvalidArgument("zip entry name too long");
    if (names.count(std::string(name)) != 0) {
      return Status::InvalidArgument("duplicate zip entry name " + Quote(name));
    }
    const uint64_t offset = out.offset();
    const bool ascii = std::all_of(name.begin(), name.end(),
                                   [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    const uint16_t flags = ascii ? 0 : kUtf8Flag;
    const bool zip64_sizes = payload.size() >= kMax32 || uncompressed >= kMax32;
    std::string h;
    Put32(&h, kLocalSig);
    Put16(&h, zip64_sizes ? kVersionZip64 : kVersionPlain);
    Put16(&h, flags);
    Put16(&h, method);
    Put16(&h, kDosTime);
    Put16(&h, kDosDate);
    Put32(&h, crc);
    Put32(&h, zip64_sizes ? kMax32 : static_cast<uint32_t>(payload.size()));
    Put32(&h, zip64_sizes ? kMax32 : static_cast<uint32_t>(uncompressed));
    Put16(&h, static_cast<uint16_t>(name.size()));
    std::string extra;
    if (zip64_sizes) {
      Put16(&extra, kZip64ExtraId);
      Put16(&extra, 16);
      Put64(&extra, uncompressed);
      Put64(&extra, payload.size());
    }
    if (alignment > 0) {
      // torch's layout: "FB", u16 length, then 'Z' padding up to the next multiple.
      const uint64_t start = offset + kLocalSize + name.size() + extra.size() + 4;
      const uint64_t pad = (alignment - start % alignment) % alignment;
      if (pad > kMax16 - extra.size() - 4) return Status::InvalidArgument("alignment too large");
      Put16(&extra, kTorchPadExtraId);
      Put16(&extra, static_cast<uint16_t>(pad));
      extra.append(pad, 'Z');
    }
    Put16(&h, static_cast<uint16_t>(extra.size()));
    h.append(name);
    h.append(extra);
    NUMPROBE_RETURN_IF_ERROR(out.Write(h));
    NUMPROBE_RETURN_IF_ERROR(out.Write(payload));
    records.push_back(
        {std::string(name), flags, method, crc, payload.size(), uncompressed, offset});
    names.insert(std::string(name));
    return Status::Ok();
  }

  Status Finish() {
    if (finished) return Status::InvalidArgument("zip writer already finished");
    finished = true;
    const uint64_t cd_offset = out.offset();
    std::string cd;
    for (const Record& r : records) {
      std::string extra;
      const bool big_u = r.uncompressed >= kMax32;
      const bool big_c = r.compressed >= kMax32;
      const bool big_o = r.offset >= kMax32;
      if (big_u || big_c || big_o) {
        Put16(&extra, kZip64ExtraId);
        Put16(&extra, static_cast<uint16_t>(8 * (static_cast<int>(big_u) + static_cast<int>(big_c) +
                                                 static_cast<int>(big_o))));
        if (big_u) Put64(&extra, r.uncompressed);
        if (big_c) Put64(&extra, r.compressed);
        if (big_o) Put64(&extra, r.offset);
      }
      const uint16_t version = extra.empty() ? kVersionPlain : kVersionZip64;
      Put32(&cd, kCentralSig);
      Put16(&cd, kMadeByUnix | version);
      Put16(&cd, version);
      Put16(&cd, r.flags);
      Put16(&cd, r.method);
      Put16(&cd, kDosTime);
      Put16(&cd, kDosDate);
      Put32(&cd, r.crc);
      Put32(&cd, big_c ? kMax32 : static_cast<uint32_t>(r.compressed));
      Put32(&cd, big_u ? kMax32 : static_cast<uint32_t>(r.uncompressed));
      Put16(&cd, static_cast<uint16_t>(r.name.size()));
      Put16(&cd, static_cast<uint16_t>(extra.size()));
      Put16(&cd, 0);  // comment
      Put16(&cd, 0);  // disk
      Put16(&cd, 0);  // internal attributes
      Put32(&cd, kRegularFileMode);
      Put32(&cd, big_o ? kMax32 : static_cast<uint32_t>(r.offset));
      cd.append(r.name);
      cd.append(extra);
    }
    const uint64_t count = records.size();
    const uint64_t cd_size = cd.size();
    const bool zip64 = count >= kMax16 || cd_size >= kMax32 || cd_offset >= kMax32;
    if (zip64) {
      const uint64_t rec_offset = cd_offset + cd_size;
      Put32(&cd, kEocd64Sig);
      Put64(&cd, kEocd64Size - 12);  // size of the rest of the record
      Put16(&cd, kMadeByUnix | kVersionZip64);
      Put16(&cd, kVersionZip64);
      Put32(&cd, 0);
      Put32(&cd, 0);
      Put64(&cd, count);
      Put64(&cd, count);
      Put64(&cd, cd_size);
      Put64(&cd, cd_offset);
      Put32(&cd, kLocator64Sig);
      Put32(&cd, 0);
      Put64(&cd, rec_offset);
      Put32(&cd, 1);
    }
    Put32(&cd, kEocdSig);
    Put16(&cd, 0);
    Put16(&cd, 0);
    Put16(&cd, static_cast<uint16_t>(std::min<uint64_t>(count, kMax16)));
    Put16(&cd, static_cast<uint16_t>(std::min<uint64_t>(count, kMax16)));
    Put32(&cd, static_cast<uint32_t>(std::min<uint64_t>(cd_size, kMax32)));
    Put32(&cd, static_cast<uint32_t>(std::min<uint64_t>(cd_offset, kMax32)));
    Put16(&cd, 0);
    NUMPROBE_RETURN_IF_ERROR(out.Write(cd));
    return out.Commit();
  }
};

ZipWriter::~ZipWriter() = default;
ZipWriter::ZipWriter(ZipWriter&&) noexcept = default;
ZipWriter& ZipWriter::operator=(ZipWriter&&) noexcept = default;

Result<ZipWriter> ZipWriter::Create(const std::filesystem::path& path, FileSync sync) {
  NUMPROBE_ASSIGN_OR_RETURN(detail::AtomicOutput out, detail::AtomicOutput::Create(path, sync));
  ZipWriter writer;
  writer.impl_ = std::make_unique<Impl>(std::move(out));
  return writer;
}

Status ZipWriter::AddStored(std::string_view name, std::span<const std::byte> data,
                            uint32_t alignment) {
  if (!impl_) return Status::InvalidArgument("zip writer moved from");
  return impl_->Add(name, kMethodStored, detail::Crc32(data), data.size(), data, alignment);
}

Status ZipWriter::AddDeflated(std::string_view name, std::span<const std::byte> data) {
  if (!impl_) return Status::InvalidArgument("zip writer moved from");
#ifdef NUMPROBE_WITH_ZLIB
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    return Status::Internal("deflateInit2 failed");
  }
  struct Closer {
    z_stream* zs;
    ~Closer() { deflateEnd(zs); }
  } closer{&zs};
  std::vector<std::byte> packed(deflateBound(&zs, data.size()) + 64);
  constexpr size_t kChunk = size_t{1} << 30;
  size_t in_pos = 0;
  size_t out_pos = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (zs.avail_in == 0 && in_pos < data.size()) {
      const size_t n = std::min(kChunk, data.size() - in_pos);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(data.data() + in_pos));
      zs.avail_in = static_cast<uInt>(n);
      in_pos += n;
    }
    if (zs.avail_out == 0) {
      if (out_pos == packed.size()) packed.resize(packed.size() * 2);
      const size_t n = std::min(kChunk, packed.size() - out_pos);
      zs.next_out = reinterpret_cast<Bytef*>(packed.data() + out_pos);
      zs.avail_out = static_cast<uInt>(n);
      out_pos += n;
    }
    rc = deflate(&zs, in_pos == data.size() ? Z_FINISH : Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
      return Status::Internal("deflate failed: " + std::to_string(rc));
    }
  }
  packed.resize(out_pos - zs.avail_out);
  return impl_->Add(name, kMethodDeflate, detail::Crc32(data), data.size(), packed, 0);
#else
  (void)name;
  (void)data;
  return Status::Unsupported("deflate needs zlib support (NUMPROBE_WITH_ZLIB)");
#endif
}

Status ZipWriter::Finish() {
  if (!impl_) return Status::InvalidArgument("zip writer moved from");
  return impl_->Finish();
}

}  // namespace numprobe
