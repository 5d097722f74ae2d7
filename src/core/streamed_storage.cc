#include "numprobe/streamed_storage.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace numprobe {
namespace {

constexpr size_t kSkipBlock = size_t{1} << 20;

}  // namespace

Status ByteStream::Skip(uint64_t n) {
  std::vector<std::byte> scratch(static_cast<size_t>(std::min<uint64_t>(n, kSkipBlock)));
  while (n > 0) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(n, scratch.size()));
    NUMPROBE_ASSIGN_OR_RETURN(const size_t got, Read(std::span(scratch.data(), want)));
    if (got == 0) return Status::Corrupt("stream ends before the bytes it was to skip");
    n -= got;
  }
  return Status::Ok();
}

Status ByteStream::Drain() {
  std::vector<std::byte> scratch(kSkipBlock);
  while (true) {
    NUMPROBE_ASSIGN_OR_RETURN(const size_t got, Read(scratch));
    if (got == 0) return Status::Ok();
  }
}

Result<std::shared_ptr<const Buffer>> StreamedStorage::Load(uint64_t max_bytes,
                                                            std::string* warning) const {
  const uint64_t want = size();
  if (want > max_bytes) {
    return Status::OutOfRange(fmt::format(
        "{} inflates to {} bytes, over the memory limit of {} (--max-memory in the CLI); this "
        "use needs the whole tensor in memory",
        Describe(), want, max_bytes));
  }
  if (want > SIZE_MAX) return Status::OutOfRange(Describe() + " is too large for this machine");
  NUMPROBE_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> out,
                            Buffer::Allocate(static_cast<size_t>(want)));
  NUMPROBE_ASSIGN_OR_RETURN(std::unique_ptr<ByteStream> stream, Open());
  size_t done = 0;
  while (done < out->size()) {
    NUMPROBE_ASSIGN_OR_RETURN(
        const size_t got, stream->Read(std::span(out->mutable_data() + done, out->size() - done)));
    if (got == 0) return Status::Corrupt(Describe() + " ends before its declared size");
    done += got;
  }
  NUMPROBE_RETURN_IF_ERROR(stream->Drain());
  if (warning != nullptr) *warning = stream->warning();
  return std::shared_ptr<const Buffer>(std::move(out));
}

}  // namespace numprobe
