// Rank/step folder numbers (msprobe/folder_number.h): the one parser used by the layout
// discovery, scan, compare's result files and the UI.
#include "msprobe/folder_number.h"

#include <gtest/gtest.h>

namespace numprobe::detail {
namespace {

TEST(FolderNumberTest, ReadsTheNumberAfterThePrefix) {
  EXPECT_EQ(FolderNumber("rank12", "rank"), 12);
  EXPECT_EQ(FolderNumber("rank0", "rank"), 0);
  EXPECT_EQ(FolderNumber("proc345", "proc"), 345);
  EXPECT_EQ(FolderNumber("step3", "step"), 3);
}

TEST(FolderNumberTest, RefusesWhatMsprobeDoesNotWrite) {
  EXPECT_FALSE(FolderNumber("rank", "rank").has_value());  // the bare prefix
  EXPECT_FALSE(FolderNumber("proc123", "rank").has_value());
  EXPECT_FALSE(FolderNumber("rank07", "rank").has_value());  // a leading zero
  EXPECT_FALSE(FolderNumber("rank1x", "rank").has_value());
  EXPECT_FALSE(FolderNumber("rank-1", "rank").has_value());
  EXPECT_FALSE(FolderNumber("rank1234567890123456", "rank").has_value());  // too long to fit
}

TEST(FolderNumberTest, ScopeStepIsTheLastFolders) {
  EXPECT_EQ(ScopeStep("graph/step7"), 7);
  EXPECT_EQ(ScopeStep("step0"), 0);
  EXPECT_FALSE(ScopeStep("").has_value());
  EXPECT_FALSE(ScopeStep("step3/rank0").has_value());
}

}  // namespace
}  // namespace numprobe::detail
