// core/text_arena: stored texts keep their bytes while more are stored (blocks never move), a
// text longer than a block gets one of its own, a move leaves the source empty, Reset() reuses
// the blocks instead of allocating more, and a large arena's blocks grow to huge-page size.
#include "core/text_arena.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace numprobe::detail {
namespace {

std::string NameOf(int i) { return "Functional.op" + std::to_string(i) + ".0.forward.input.0"; }

TEST(TextArena, StoredTextsKeepTheirBytesAcrossManyBlocks) {
  TextArena arena(/*block_bytes=*/256);  // small blocks: the texts below fill hundreds of them
  std::vector<std::string_view> stored;
  stored.reserve(5000);
  for (int i = 0; i < 5000; ++i) stored.push_back(arena.Store(NameOf(i)));
  for (int i = 0; i < 5000; ++i) ASSERT_EQ(stored[static_cast<size_t>(i)], NameOf(i)) << i;
  EXPECT_TRUE(arena.Store("").empty());
}

TEST(TextArena, ATextLongerThanABlockIsStoredWhole) {
  TextArena arena(/*block_bytes=*/64);
  const std::string_view before = arena.Store("short");
  const std::string long_text(1000, 'x');
  const std::string_view stored = arena.Store(long_text);
  const std::string_view after = arena.Store("after");
  EXPECT_EQ(stored, long_text);
  EXPECT_EQ(before, "short");
  EXPECT_EQ(after, "after");
}

TEST(TextArena, AMovedArenaKeepsItsTextsAndTheSourceStartsAfresh) {
  TextArena source(/*block_bytes=*/64);
  const std::string_view kept = source.Store("kept by the new owner");
  TextArena owner = std::move(source);
  // The moved-from arena makes new blocks of its own instead of writing into the owner's.
  const std::string_view fresh = source.Store("written by the moved-from arena");  // NOLINT
  EXPECT_EQ(kept, "kept by the new owner");
  EXPECT_EQ(fresh, "written by the moved-from arena");
  EXPECT_EQ(owner.Store("more"), "more");
  EXPECT_EQ(kept, "kept by the new owner");
}

TEST(TextArena, ResetReusesTheBlocksItHas) {
  TextArena arena(/*block_bytes=*/128);
  std::vector<const char*> first_pass;
  first_pass.reserve(100);
  for (int i = 0; i < 100; ++i) first_pass.push_back(arena.Store(NameOf(i)).data());
  arena.Reset();
  // The same texts again land at the same places: nothing was allocated for them.
  for (int i = 0; i < 100; ++i) {
    const std::string_view again = arena.Store(NameOf(i));
    ASSERT_EQ(again.data(), first_pass[static_cast<size_t>(i)]) << i;
    ASSERT_EQ(again, NameOf(i));
  }
}

TEST(TextArena, ALargeArenasBlocksGrowAndStartOnHugePages) {
  TextArena arena(/*block_bytes=*/size_t{1} << 20);
  const std::string chunk(100 << 10, 'n');  // 100 KiB
  std::vector<std::string_view> stored;
  stored.reserve(390);
  for (int i = 0; i < 390; ++i) stored.push_back(arena.Store(chunk));
  // A text that does not follow the previous one starts a block; blocks double from 1 MiB to
  // 8 MiB, and each of 2 MiB or more starts on a 2 MiB boundary.
  std::vector<const char*> block_starts = {stored.front().data()};
  for (size_t i = 1; i < stored.size(); ++i) {
    if (stored[i].data() != stored[i - 1].data() + chunk.size()) {
      block_starts.push_back(stored[i].data());
    }
  }
  // 10 chunks fit in the 1 MiB block, 20 in the 2 MiB one, 40 in the 4 MiB one and 81 in each
  // 8 MiB one: 390 chunks take 7 blocks.
  ASSERT_EQ(block_starts.size(), 7U);
  for (size_t b = 1; b < block_starts.size(); ++b) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block_starts[b]) % (uintptr_t{2} << 20), 0U) << b;
  }
  for (const std::string_view text : stored) ASSERT_EQ(text, chunk);
}

}  // namespace
}  // namespace numprobe::detail
