// TextArena: copies of texts in large blocks that never move, for the millions of short names a
// large dump's results refer to (string_views into the arena, valid as long as it lives) without
// a heap allocation per name.
#ifndef NUMPROBE_CORE_TEXT_ARENA_H_
#define NUMPROBE_CORE_TEXT_ARENA_H_

#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

namespace numprobe::detail {

class TextArena {
 public:
  TextArena() = default;
  TextArena(const TextArena&) = delete;
  TextArena& operator=(const TextArena&) = delete;

  // A copy of `text` that lives as long as the arena.
  std::string_view Store(std::string_view text) {
    if (text.empty()) return {};
    // Texts share 1 MiB blocks; one larger than a quarter of a block gets a block of its own, so
    // that the shared block's tail is not given up for it.
    constexpr size_t kBlock = size_t{1} << 20;
    char* at = nullptr;
    if (text.size() > kBlock / 4) {
      blocks_.push_back(std::make_unique_for_overwrite<char[]>(text.size()));
      at = blocks_.back().get();
    } else {
      if (text.size() > left_) {
        blocks_.push_back(std::make_unique_for_overwrite<char[]>(kBlock));
        free_ = blocks_.back().get();
        left_ = kBlock;
      }
      at = free_;
      free_ += text.size();
      left_ -= text.size();
    }
    std::memcpy(at, text.data(), text.size());
    return {at, text.size()};
  }

 private:
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* free_ = nullptr;  // the unused tail of the last shared block
  size_t left_ = 0;
};

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_TEXT_ARENA_H_
