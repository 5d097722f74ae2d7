// TextArena: copies of texts in blocks that never move, for the millions of short names a large
// dump refers to (string_views into the arena, valid until it is reset or destroyed) without a
// heap allocation per name. The one home of this idea: a DumpFile's row names, scan's headroom
// texts, and the JSON readers' batches of strings (which Reset() and refill it, so that a warm
// reader allocates nothing).
#ifndef NUMPROBE_CORE_TEXT_ARENA_H_
#define NUMPROBE_CORE_TEXT_ARENA_H_

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace numprobe::detail {

class TextArena {
 public:
  // Texts share blocks of `block_bytes`; a longer text gets a block of its own size.
  explicit TextArena(size_t block_bytes = size_t{1} << 20) : block_bytes_(block_bytes) {}
  TextArena(const TextArena&) = delete;
  TextArena& operator=(const TextArena&) = delete;
  // A moved-from arena is left empty, so that it never writes into blocks another arena owns.
  TextArena(TextArena&& other) noexcept
      : block_bytes_(other.block_bytes_),
        blocks_(std::exchange(other.blocks_, {})),
        current_(std::exchange(other.current_, 0)),
        used_(std::exchange(other.used_, 0)) {}
  TextArena& operator=(TextArena&& other) noexcept {
    block_bytes_ = other.block_bytes_;
    blocks_ = std::exchange(other.blocks_, {});
    current_ = std::exchange(other.current_, 0);
    used_ = std::exchange(other.used_, 0);
    return *this;
  }
  ~TextArena() = default;

  // A copy of `text`, valid until Reset() or the arena's end.
  std::string_view Store(std::string_view text) {
    if (text.empty()) return {};
    // Blocks are filled in order. A text that does not fit in the rest of the current block
    // moves on to the next block with room (after Reset(), the blocks kept from before), and
    // a new block is made only past the last one: a reused arena allocates only when it holds
    // more than ever before.
    while (current_ < blocks_.size() && used_ + text.size() > blocks_[current_].size) {
      ++current_;
      used_ = 0;
    }
    if (current_ == blocks_.size()) {
      const size_t size = std::max(block_bytes_, text.size());
      blocks_.push_back({std::make_unique_for_overwrite<char[]>(size), size});
      used_ = 0;
    }
    char* at = blocks_[current_].bytes.get() + used_;
    std::memcpy(at, text.data(), text.size());
    used_ += text.size();
    return {at, text.size()};
  }

  // Forgets every text stored (their views dangle from now on) and keeps the blocks for the
  // texts stored next.
  void Reset() {
    current_ = 0;
    used_ = 0;
  }

 private:
  struct Block {
    std::unique_ptr<char[]> bytes;
    size_t size = 0;
  };

  size_t block_bytes_;
  std::vector<Block> blocks_;
  size_t current_ = 0;  // the block being filled
  size_t used_ = 0;     // bytes used in it
};

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_TEXT_ARENA_H_
