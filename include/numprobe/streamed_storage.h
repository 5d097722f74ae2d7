// A tensor storage that is produced in order instead of held in memory: a deflated zip member
// (.pt storage, .npz array) that readers leave compressed when asked to
// (ReadOptions::stream_deflated_over). Statistics read it chunk by chunk (ComputeTensorStats in
// stats.h); a caller that needs the whole storage loads it under a memory limit.
#ifndef NUMPROBE_STREAMED_STORAGE_H_
#define NUMPROBE_STREAMED_STORAGE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "numprobe/buffer.h"
#include "numprobe/result.h"

namespace numprobe {

// One pass over a storage's bytes, first to last.
class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Fills `out` with the next bytes and returns how many: out.size(), or fewer only at the end
  // (0 once everything was read). Reaching the end verifies the stream (sizes; for zip members
  // the CRC-32, whose mismatch is reported by warning(), not as an error).
  virtual Result<size_t> Read(std::span<std::byte> out) = 0;
  // A non-fatal finding of the pass ("CRC-32 mismatch in zip entry ..."), "" when none; known
  // once Read has returned 0.
  virtual std::string warning() const { return {}; }
  // Reads and drops `n` bytes; kCorrupt when the stream ends first.
  Status Skip(uint64_t n);
  // Reads and drops what is left, so that the end-of-stream checks run.
  Status Drain();
};

class StreamedStorage {
 public:
  virtual ~StreamedStorage() = default;
  // Bytes of the storage.
  virtual uint64_t size() const = 0;
  // What it is, for messages: "zip entry 'archive/data/0' (deflated)".
  virtual std::string Describe() const = 0;
  // A new pass from the first byte.
  virtual Result<std::unique_ptr<ByteStream>> Open() const = 0;
  // The whole storage in memory, when size() <= max_bytes; kOutOfRange naming the storage, its
  // size and the limit otherwise (nothing is allocated then). `warning` (may be null) receives
  // the pass's warning.
  Result<std::shared_ptr<const Buffer>> Load(uint64_t max_bytes,
                                             std::string* warning = nullptr) const;
};

}  // namespace numprobe

#endif  // NUMPROBE_STREAMED_STORAGE_H_
