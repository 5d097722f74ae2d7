#include "core/huge_pages.h"

#include <cstdint>

#include <sys/mman.h>
#include <unistd.h>

namespace numprobe::detail {

void AdviseHugePages(const void* data, size_t bytes) {
  constexpr uintptr_t kHugePage = kHugePageBytes;
  const auto begin = reinterpret_cast<uintptr_t>(data);
  if (data == nullptr || bytes < kHugePage || begin > UINTPTR_MAX - bytes) return;
  const uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t last = (begin + bytes) & ~(kHugePage - 1);
  if (last <= first) return;
  // The result is ignored on purpose: EINVAL where the kernel has no THP changes nothing.
  // The address is reached from `data` (not cast from the integer), so the pointer keeps its
  // origin.
  char* at = const_cast<char*>(static_cast<const char*>(data)) + (first - begin);
  (void)::madvise(at, last - first, MADV_HUGEPAGE);
}

std::jthread PrefaultInBackground(const void* data, size_t bytes) {
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(data);
  if (data == nullptr || bytes < page || begin > UINTPTR_MAX - bytes) return {};
  const uintptr_t first = (begin + page - 1) & ~(page - 1);
  const uintptr_t last = (begin + bytes) & ~(page - 1);
  if (last <= first) return {};
  char* at = const_cast<char*>(static_cast<const char*>(data)) + (first - begin);
  return std::jthread([at, size = last - first] {
    (void)::madvise(at, size, MADV_POPULATE_WRITE);  // EINVAL on an older kernel: nothing done
  });
}

}  // namespace numprobe::detail
