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
#include <new>
#include <string_view>
#include <utility>
#include <vector>

#include "core/huge_pages.h"

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
      // Each new block twice the last, up to kLargestBlock: a large dump's names (hundreds of
      // MB) come in blocks that huge pages can back (NewBlock), a small one's in one block.
      const size_t grown =
          blocks_.empty()
              ? block_bytes_
              : std::max(block_bytes_, std::min(kLargestBlock, blocks_.back().size * 2));
      blocks_.push_back(NewBlock(std::max(grown, text.size())));
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
  static constexpr size_t kLargestBlock = size_t{8} << 20;

  // Frees a block with the alignment NewBlock gave it.
  struct FreeBlock {
    std::align_val_t alignment;
    void operator()(char* p) const { ::operator delete[](p, alignment); }
  };
  struct Block {
    std::unique_ptr<char[], FreeBlock> bytes;
    size_t size = 0;
  };

  // A block of `size` bytes (not zeroed). One of a huge page or more is aligned to one and
  // advised for them: on a VM where each 4 KiB fault traps to the hypervisor, the names of a
  // 200,000-entry dump took a fifth of its scan's 4 KiB faults.
  static Block NewBlock(size_t size) {
    const std::align_val_t alignment{size >= kHugePageBytes ? kHugePageBytes
                                                            : alignof(std::max_align_t)};
    char* bytes = static_cast<char*>(::operator new[](size, alignment));
    if (size >= kHugePageBytes) AdviseHugePages(bytes, size);
    return {std::unique_ptr<char[], FreeBlock>(bytes, FreeBlock{alignment}), size};
  }

  size_t block_bytes_;
  std::vector<Block> blocks_;
  size_t current_ = 0;  // the block being filled
  size_t used_ = 0;     // bytes used in it
};

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_TEXT_ARENA_H_
