// A zip container reader and writer shared by .npz and torch .pt files. Written by hand (on top of
// zlib for deflate) because the security rules need what general zip libraries do not expose:
// entries are found through the central directory (ZIP64 included), each data offset is taken
// from its local header and cross-checked against the central record, entries may not overlap,
// names may not be absolute or contain "..", declared sizes are capped before anything is
// allocated, and STORED entries are used in place from the memory map (no copy).
#ifndef NUMPROBE_FORMATS_ZIP_H_
#define NUMPROBE_FORMATS_ZIP_H_

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/buffer.h"
#include "numprobe/file_sync.h"
#include "numprobe/result.h"
#include "numprobe/streamed_storage.h"

namespace numprobe {

struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // 0 stored, 8 deflate
  uint16_t flags = 0;
  uint32_t crc32 = 0;  // from the central directory
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t local_header_offset = 0;
  uint64_t data_offset = 0;  // first data byte: local header + 30 + name + extra
};

struct ZipLimits {
  uint64_t max_entries = 1 << 20;
  uint64_t max_inflated_bytes = uint64_t{16} << 30;  // per archive, total
  uint64_t max_ratio = 1024;                         // inflated / compressed, per entry
};

// Bytes of one entry: in place inside the archive's buffer (stored) or a new buffer (inflated).
struct ZipData {
  std::shared_ptr<const Buffer> owner;
  std::span<const std::byte> bytes;
};

class ZipArchive {
 public:
  // Parses the central directory of `file` and validates every entry. kCorrupt with the entry
  // name and offset on any inconsistency; kRejected for unsafe names, encryption, overlap.
  static Result<ZipArchive> Open(std::shared_ptr<const Buffer> file, const ZipLimits& limits = {});

  const std::vector<ZipEntry>& entries() const { return entries_; }
  // nullptr if absent.
  const ZipEntry* Find(std::string_view name) const;
  // The uncompressed bytes of `entry`. Deflated entries are inflated with the limits checked as
  // bytes come out (a bomb stops at the cap, not after).
  Result<ZipData> Read(const ZipEntry& entry);
  // A deflated `entry` left compressed: each pass inflates it again in small blocks, so its size
  // costs time, not memory (the inflated budget does not apply; the ratio cap and the declared
  // size still do, checked here and as bytes come out). The passes deliver the `length` bytes
  // (all that follow when nullopt) after the first `skip`, then inflate the rest to the end and
  // compare the CRC-32 (a mismatch is the stream's warning). Keeps the archive's file alive.
  Result<std::shared_ptr<const StreamedStorage>> Streamed(
      const ZipEntry& entry, uint64_t skip = 0, std::optional<uint64_t> length = {}) const;
  // True when the CRC-32 of `bytes` equals the entry's recorded CRC.
  static bool CrcMatches(const ZipEntry& entry, std::span<const std::byte> bytes);

  const std::shared_ptr<const Buffer>& file() const { return file_; }

 private:
  ZipArchive() = default;
  std::shared_ptr<const Buffer> file_;
  std::vector<ZipEntry> entries_;
  ZipLimits limits_;
  uint64_t inflated_total_ = 0;
};

// Writes a zip file: stored or deflated entries, ZIP64 records when needed. The file is written
// to a temporary name beside `path` and renamed into place by Finish(), so a crash never leaves a
// half-written archive under the final name.
class ZipWriter {
 public:
  ~ZipWriter();
  ZipWriter(ZipWriter&&) noexcept;
  ZipWriter& operator=(ZipWriter&&) noexcept;

  static Result<ZipWriter> Create(const std::filesystem::path& path,
                                  FileSync sync = FileSync::kNow);
  // `alignment` > 0 pads the local header's extra field (torch's "FB" field) so that the data
  // starts at a multiple of it, as torch.save does with 64.
  Status AddStored(std::string_view name, std::span<const std::byte> data, uint32_t alignment = 0);
  Status AddDeflated(std::string_view name, std::span<const std::byte> data);
  // Writes the central directory and renames the file into place.
  Status Finish();

 private:
  ZipWriter() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace numprobe

#endif  // NUMPROBE_FORMATS_ZIP_H_
