// core/huge_pages: the advice reaches the kernel for the whole 2 MiB pages inside a range (the
// mapping's VmFlags in /proc/self/smaps gain "hg"), and ranges too small to hold one are left as
// they are; a range faulted in ahead is resident afterwards, with its bytes as they were.
#include "core/huge_pages.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

namespace numprobe::detail {
namespace {

constexpr uintptr_t kHugePage = uintptr_t{2} << 20;

// The VmFlags of the mapping that starts at `start`; empty when no mapping starts there.
std::string VmFlagsOfMappingAt(uintptr_t start) {
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
    if (in_mapping && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return {};
}

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

TEST(HugePages, ARangeFaultedInAheadIsResidentWithItsBytesUnchanged) {
  constexpr size_t kBytes = 8 << 20;
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  Mapping m(kBytes);
  ASSERT_NE(m.data(), nullptr);
  Mapping probe(page);
  ASSERT_NE(probe.data(), nullptr);
  if (::madvise(probe.data(), page, MADV_POPULATE_WRITE) != 0) {
    GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux 5.14)";
  }
  // Residency per page, by mincore: the mapping's own smaps entry may have merged with a
  // neighbour (the prefault thread's cached stack has the same flags).
  const auto resident_pages = [&] {
    std::vector<unsigned char> in_core(kBytes / page);
    EXPECT_EQ(::mincore(m.data(), kBytes, in_core.data()), 0);
    return std::count_if(in_core.begin(), in_core.end(), [](unsigned char c) { return c & 1; });
  };
  ::madvise(m.data(), kBytes, MADV_NOHUGEPAGE);  // faulted in 4 KiB at a time, countable
  m.data()[100] = 'x';                           // one page resident before, with a byte of its own
  ASSERT_EQ(resident_pages(), 1);
  {
    std::jthread prefault = PrefaultInBackground(m.data() + 1, kBytes - 1);
    ASSERT_TRUE(prefault.joinable());
  }
  // Every page but the partial first one was faulted in; the first one was already.
  EXPECT_EQ(resident_pages(), static_cast<std::ptrdiff_t>(kBytes / page));
  EXPECT_EQ(m.data()[100], 'x');
  EXPECT_EQ(m.data()[kBytes - 1], 0);
  // Nothing to fault in: no thread.
  EXPECT_FALSE(PrefaultInBackground(nullptr, kBytes).joinable());
  EXPECT_FALSE(PrefaultInBackground(m.data() + 1, 100).joinable());
}

}  // namespace
}  // namespace numprobe::detail
