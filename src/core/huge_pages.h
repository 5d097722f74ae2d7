// Transparent huge pages for the large tables that are filled once (a big dump's rows, a compare's
// table). Debian leaves THP to madvise (/sys/kernel/mm/transparent_hugepage/enabled reads
// "madvise"), so a 200 MB table is faulted in 4 KiB at a time: 120,000 page faults, 15% of a
// 200,000-entry compare's time on a VM where each fault is a trap to the hypervisor. Advised
// ranges fault in 2 MiB at a time; and a range that one thread is about to fill can be faulted in
// ahead by another, on a core that is idle meanwhile.
#ifndef NUMPROBE_CORE_HUGE_PAGES_H_
#define NUMPROBE_CORE_HUGE_PAGES_H_

#include <cstddef>
#include <thread>
#include <vector>

namespace numprobe::detail {

// The size of a transparent huge page on x86-64 and arm64 (4 KiB base pages).
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// Advises huge pages for the whole 2 MiB pages inside [data, data + bytes). Only an advice: a
// range too small to hold one, a system without THP or a refusal leave things as they were.
void AdviseHugePages(const void* data, size_t bytes);

// The same for a vector's reserved storage, after reserve() and before it is filled.
template <typename T>
void AdviseHugePages(const std::vector<T>& v) {
  AdviseHugePages(v.data(), v.capacity() * sizeof(T));
}

// A vector of `n` copies of `value`, advised before they are written: for a large table built
// filled (a dump's per-row index), whose 4 KiB faults would otherwise come at its first write.
template <typename T>
std::vector<T> AdvisedVector(size_t n, const T& value) {
  std::vector<T> v;
  v.reserve(n);
  AdviseHugePages(v);
  v.assign(n, value);
  return v;
}

// Faults in [data, data + bytes) for writing on a thread of its own (MADV_POPULATE_WRITE, Linux
// 5.14), so that the thread that fills the range later finds its pages there. Only an advice:
// the contents are not touched, and a kernel without it does nothing. Join the thread before the
// range is freed.
std::jthread PrefaultInBackground(const void* data, size_t bytes);

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_HUGE_PAGES_H_
