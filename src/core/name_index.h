// NameIndex: names to dense ids (0, 1, 2, ... in first-insertion order) for tables of millions of
// names (a large dump's keys in compare's pairing). One flat open-addressing array of (hash bits,
// id) rather than a heap node per name: lookups cost one probe on average, and the memory goes
// back to the system when the index goes. It does not hold the names: the caller keeps them and
// passes `name_of(id)`, which must return the name inserted with `id`.
#ifndef NUMPROBE_CORE_NAME_INDEX_H_
#define NUMPROBE_CORE_NAME_INDEX_H_

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/huge_pages.h"

namespace numprobe::detail {

class NameIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // Sized for `expected` names without growing.
  explicit NameIndex(size_t expected = 0) { Resize(Capacity(expected)); }

  size_t size() const { return size_; }

  // The id of `name`, inserting it as the next id when new (second: true when inserted).
  template <class NameOf>
  std::pair<uint32_t, bool> Insert(std::string_view name, const NameOf& name_of) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Grow(name_of);
    const uint64_t h = Hash(name);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.id == kNone) {
        s = {Tag(h), static_cast<uint32_t>(size_)};
        return {static_cast<uint32_t>(size_++), true};
      }
      if (s.tag == Tag(h) && name_of(s.id) == name) return {s.id, false};
    }
  }

  // The id of `name`, or kNone.
  template <class NameOf>
  uint32_t Find(std::string_view name, const NameOf& name_of) const {
    const uint64_t h = Hash(name);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.id == kNone) return kNone;
      if (s.tag == Tag(h) && name_of(s.id) == name) return s.id;
    }
  }

 private:
  struct Slot {
    uint32_t tag = 0;  // high bits of the hash: most mismatches never look at the name
    uint32_t id = kNone;
  };

  static uint64_t Hash(std::string_view name) { return std::hash<std::string_view>{}(name); }
  static uint32_t Tag(uint64_t h) { return static_cast<uint32_t>(h >> 32); }
  // A power of two with room for `n` names at a load of at most 3/4.
  static size_t Capacity(size_t n) { return std::bit_ceil(std::max<size_t>(16, n * 4 / 3 + 1)); }

  void Resize(size_t capacity) {
    slots_ = AdvisedVector(capacity, Slot{});  // a million names' table is 16 MiB
    mask_ = capacity - 1;
  }

  template <class NameOf>
  void Grow(const NameOf& name_of) {
    Resize(slots_.size() * 2);
    for (uint32_t id = 0; id < size_; ++id) {
      const uint64_t h = Hash(name_of(id));
      size_t i = h & mask_;
      while (slots_[i].id != kNone) i = (i + 1) & mask_;
      slots_[i] = {Tag(h), id};
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_NAME_INDEX_H_
