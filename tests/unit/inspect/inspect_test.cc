#include "numprobe/app/inspect.h"

#include <gtest/gtest.h>

#include <string>

#include "testing/dump_builder.h"
#include "testing/temp_dir.h"

namespace numprobe {
namespace {

using test::DumpHeader;
using test::ForwardEntry;
using test::TempDir;
using test::TensorLeaf;
using test::WriteDump;

TEST(InspectTest, NamesADumpByItsFolder) {
  TempDir dir("inspect");
  const auto rank = WriteDump(dir / "step0" / "rank0", DumpHeader{},
                              {ForwardEntry("Functional.relu.0.forward",
                                            TensorLeaf("torch.float32", {2}, 1, 0, 0.5, 1),
                                            TensorLeaf("torch.float32", {2}, 1, 0, 0.5, 1))});
  auto report = Inspect(dir.path());
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  ASSERT_EQ(report->dumps.size(), 1u);
  EXPECT_EQ(report->dumps[0].path, rank.string());
  EXPECT_EQ(report->dumps[0].source, "dump.json");
  EXPECT_EQ(report->dumps[0].tensor_rows, 2u);
  EXPECT_TRUE(report->ok());
  const std::string text = InspectText(*report);
  EXPECT_NE(text.find(rank.string() + ": "), std::string::npos) << text;
  EXPECT_EQ(text.find("dump.json: "), std::string::npos) << text;

  // Given the dump.json itself, the dump is still named by its folder.
  auto direct = Inspect(rank / "dump.json");
  ASSERT_TRUE(direct.ok());
  ASSERT_EQ(direct->dumps.size(), 1u);
  EXPECT_EQ(direct->dumps[0].path, rank.string());
}

TEST(InspectTest, UnreadableFilesAreCountedNotFatal) {
  TempDir dir("inspect");
  dir.Write("broken.npy", "not an npy file");
  auto report = Inspect(dir.path());
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->candidates, 1u);
  EXPECT_EQ(report->failed, 1u);
  EXPECT_FALSE(report->ok());
  ASSERT_FALSE(report->messages.empty());
  EXPECT_TRUE(report->messages.back().is_error());
}

TEST(InspectTest, MissingPathIsNotFound) {
  TempDir dir("inspect");
  auto report = Inspect(dir / "absent");
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace numprobe
