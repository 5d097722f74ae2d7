// core/huge_pages: the advice reaches the kernel for the whole 2 MiB pages inside a range (the
// mapping's VmFlags in /proc/self/smaps gain "hg"), and ranges too small to hold one are left as
// they are; a range faulted in ahead is resident afterwards, with its bytes as they were.
#include "core/huge_pages.h"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <sys/mman.h>

namespace numprobe::detail {
namespace {

constexpr uintptr_t kHugePage = uintptr_t{2} << 20;

// The line of /proc/self/smaps that begins with `field` ("VmFlags:", "Rss:") for the mapping that
// starts at `start`; empty when no mapping starts there.
std::string SmapsLineOfMappingAt(uintptr_t start, const std::string& field) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_mapping = false;
  while (std::getline(smaps, line)) {
    uintptr_t from = 0;
    uintptr_t to = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> from >> dash >> to && dash == '-') {
      in_mapping = from == start;
      continue;
    }
    if (in_mapping && line.rfind(field, 0) == 0) return line;
  }
  return {};
}
std::string VmFlagsOfMappingAt(uintptr_t start) { return SmapsLineOfMappingAt(start, "VmFlags:"); }

class Mapping {
 public:
  explicit Mapping(size_t bytes) : bytes_(bytes) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    data_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
  }
  ~Mapping() {
    if (data_ != nullptr) ::munmap(data_, bytes_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  char* data() const { return data_; }

 private:
  char* data_ = nullptr;
  size_t bytes_;
};

uintptr_t RoundUp(uintptr_t v) { return (v + kHugePage - 1) & ~(kHugePage - 1); }

TEST(HugePages, TheWholeHugePagesInsideARangeAreAdvised) {
  Mapping m(8 * kHugePage);
  ASSERT_NE(m.data(), nullptr);
  // A kernel built without THP refuses the advice for everyone: nothing to check there.
  const auto base = reinterpret_cast<uintptr_t>(m.data());
  const uintptr_t first = RoundUp(base + 100);
  if (::madvise(m.data() + (first - base), kHugePage, MADV_NOHUGEPAGE) != 0) {
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  }
  AdviseHugePages(m.data() + 100, 6 * kHugePage);
  const std::string flags = VmFlagsOfMappingAt(first);
  ASSERT_FALSE(flags.empty()) << "no mapping starts at the first whole huge page";
  EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;
  EXPECT_EQ(flags.find(" nh"), std::string::npos) << flags;
  // The bytes stay usable as they were.
  m.data()[100] = 'x';
  EXPECT_EQ(m.data()[100], 'x');
}

TEST(HugePages, ARangeHoldingNoWholeHugePageIsLeftAlone) {
  Mapping m(4 * kHugePage);
  ASSERT_NE(m.data(), nullptr);
  const auto base = reinterpret_cast<uintptr_t>(m.data());
  const uintptr_t first = RoundUp(base);
  // 2 MiB that straddle a huge page boundary: no whole huge page inside.
  char* straddling = m.data() + (first - base) + kHugePage / 2;
  AdviseHugePages(straddling, kHugePage);
  AdviseHugePages(nullptr, 8 * kHugePage);
  AdviseHugePages(m.data(), 0);
  // An advice would have split the mapping at a huge page boundary, with "hg" on the new part.
  for (const uintptr_t at :
       {reinterpret_cast<uintptr_t>(m.data()), first, first + kHugePage, first + 2 * kHugePage}) {
    EXPECT_EQ(VmFlagsOfMappingAt(at).find(" hg"), std::string::npos) << at;
  }
  EXPECT_FALSE(VmFlagsOfMappingAt(reinterpret_cast<uintptr_t>(m.data())).empty());
}

}  // namespace
}  // namespace numprobe::detail
