// core/name_index: dense ids in first-insertion order, found again after the index grows, and
// names that share a hash tag told apart by their text.
#include "core/name_index.h"

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace numprobe::detail {
namespace {

TEST(NameIndex, IdsInInsertionOrderAcrossGrowth) {
  std::vector<std::string> names;
  NameIndex index;  // starts small: 10,000 names make it grow several times
  const auto name_of = [&](uint32_t id) { return std::string_view{names[id]}; };
  for (int i = 0; i < 10000; ++i) {
    const std::string name = "Functional.op" + std::to_string(i % 211) + "." +
                             std::to_string(i / 211) + ".forward.input.0";
    const auto [id, inserted] = index.Insert(name, name_of);
    ASSERT_TRUE(inserted) << name;
    ASSERT_EQ(id, static_cast<uint32_t>(i));
    names.push_back(name);
  }
  EXPECT_EQ(index.size(), 10000u);
  for (uint32_t i = 0; i < names.size(); ++i) {
    ASSERT_EQ(index.Find(names[i], name_of), i);
    const auto [id, inserted] = index.Insert(names[i], name_of);
    EXPECT_FALSE(inserted);
    EXPECT_EQ(id, i);
  }
  EXPECT_EQ(index.size(), 10000u);
  EXPECT_EQ(index.Find("Functional.op0.0.forward.input.1", name_of), NameIndex::kNone);
  EXPECT_EQ(index.Find("", name_of), NameIndex::kNone);
}

TEST(NameIndex, EmptyNameAndPrefixesAreDistinct) {
  const std::vector<std::string> names = {"", "a", "ab", "a.b", "a.b."};
  NameIndex index(names.size());
  const auto name_of = [&](uint32_t id) { return std::string_view{names[id]}; };
  for (const std::string& n : names) EXPECT_TRUE(index.Insert(n, name_of).second);
  for (uint32_t i = 0; i < names.size(); ++i) EXPECT_EQ(index.Find(names[i], name_of), i);
}

}  // namespace
}  // namespace numprobe::detail
