// DumpBytes (what a unit of work reads) and the framing of the records processes send to
// process 0: every item exactly once, any order over processes, and broken frames refused.
#include "cluster/dump_bytes.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/dump_layout.h"

#include "testing/temp_dir.h"

namespace numprobe::detail {
namespace {

TEST(DumpBytes, CountsTheDumpFilesAndTheTensorFilesWhenAsked) {
  test::TempDir temp{"numprobe_dump_bytes"};
  temp.Write("rank0/dump.json", std::string(100, 'd'));
  temp.Write("rank0/stack.json", std::string(10, 's'));
  temp.Write("rank0/dump_tensor_data/a.pt", std::string(1000, 'a'));
  temp.Write("rank0/dump_tensor_data/sub/b.npy", std::string(500, 'b'));
  const auto location = LocateDump(temp.path() / "rank0");
  ASSERT_TRUE(location.has_value());
  EXPECT_EQ(DumpBytes(*location, false), 110u);
  EXPECT_EQ(DumpBytes(*location, true), 1610u);
  DumpLocation gone = *location;
  gone.dump_json = temp.path() / "missing.json";
  gone.tensor_dir = temp.path() / "missing";
  EXPECT_EQ(DumpBytes(gone, true), 10u);  // what cannot be sized counts nothing
}

TEST(Records, EveryItemOnceFromAnyProcess) {
  const std::string p0 = FrameRecords({{2, "two"}, {0, ""}});
  const std::string p1 = FrameRecords({});
  const std::string p2 = FrameRecords({{1, std::string("o\0ne", 4)}});
  std::vector<std::string> items(3);
  ASSERT_TRUE(UnframeRecords({p0, p1, p2}, &items).ok());
  EXPECT_EQ(items, (std::vector<std::string>{"", std::string("o\0ne", 4), "two"}));
}

TEST(Records, BrokenFramesAreRefused) {
  const std::string good = FrameRecords({{0, "zero"}, {1, "one"}});
  std::vector<std::string> items(2);
  // Truncated anywhere.
  for (size_t n = 1; n < good.size(); ++n) {
    EXPECT_FALSE(UnframeRecords({good.substr(0, n)}, &items).ok()) << n;
  }
  // An item twice, an item missing, an item out of range.
  EXPECT_FALSE(UnframeRecords({good, FrameRecords({{1, "again"}})}, &items).ok());
  EXPECT_FALSE(UnframeRecords({FrameRecords({{0, "zero"}})}, &items).ok());
  EXPECT_FALSE(UnframeRecords({good + FrameRecords({{2, "x"}})}, &items).ok());
  const Status s = UnframeRecords({FrameRecords({{0, "zero"}}), FrameRecords({{0, "z"}})}, &items);
  EXPECT_NE(s.message().find("MPI process 1"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace numprobe::detail
