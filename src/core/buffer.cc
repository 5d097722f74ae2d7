#include "numprobe/buffer.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include <sys/mman.h>

#include "core/regular_file.h"

namespace numprobe {
namespace {

constexpr size_t kAlignment = 64;

std::string ErrnoText(int err) { return std::strerror(err); }

}  // namespace

Buffer::~Buffer() {
  if (data_ == nullptr) return;
  if (mapped_) {
    munmap(data_, size_);
  } else {
    std::free(data_);  // NOLINT(cppcoreguidelines-no-malloc): paired with aligned_alloc
  }
}

Result<std::shared_ptr<const Buffer>> Buffer::MapFile(const std::filesystem::path& path) {
  NUMPROBE_ASSIGN_OR_RETURN(const detail::RegularFile file, detail::OpenRegularFile(path));
  const auto size = static_cast<size_t>(file.size());
  if (size == 0) return std::shared_ptr<const Buffer>(new Buffer(nullptr, 0, true));
  void* addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd(), 0);
  const int err = errno;
  if (addr == MAP_FAILED) return Status::IoError(path.string() + ": cannot map: " + ErrnoText(err));
  return std::shared_ptr<const Buffer>(new Buffer(static_cast<std::byte*>(addr), size, true));
}

Result<std::shared_ptr<Buffer>> Buffer::AllocateUninitialized(size_t size) {
  if (size == 0) return std::shared_ptr<Buffer>(new Buffer(nullptr, 0, false));
  if (size > SIZE_MAX - kAlignment) return Status::OutOfRange("allocation size overflows");
  const size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
  // NOLINTNEXTLINE(cppcoreguidelines-no-malloc): aligned storage for SIMD kernels.
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr) {
    return Status::OutOfRange("cannot allocate " + std::to_string(size) + " bytes");
  }
  // The padding is never written by callers; zeroed so that no byte of a buffer is indeterminate.
  std::memset(static_cast<std::byte*>(p) + size, 0, rounded - size);
  return std::shared_ptr<Buffer>(new Buffer(static_cast<std::byte*>(p), size, false));
}

Result<std::shared_ptr<Buffer>> Buffer::Allocate(size_t size) {
  NUMPROBE_ASSIGN_OR_RETURN(auto buffer, AllocateUninitialized(size));
  if (size != 0) std::memset(buffer->mutable_data(), 0, size);
  return buffer;
}

Result<std::shared_ptr<Buffer>> Buffer::CopyOf(std::span<const std::byte> bytes) {
  NUMPROBE_ASSIGN_OR_RETURN(auto buffer, AllocateUninitialized(bytes.size()));
  if (!bytes.empty()) std::memcpy(buffer->mutable_data(), bytes.data(), bytes.size());
  return buffer;
}

}  // namespace numprobe
