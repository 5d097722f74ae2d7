// The data-file rule shared by compare, scan and serve: plain names, links that stay inside the
// dump folder.
#include "msprobe/data_file.h"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace numprobe::detail {
namespace {

namespace fs = std::filesystem;

TEST(DataFileTest, OnlyPlainNamesAreAccepted) {
  for (const char* name : {"../x.pt", "/etc/passwd", "a/b.pt", "..", ".", "a\\b.pt", ""}) {
    const Status s = CheckDataFileName(name);
    EXPECT_EQ(s.code(), ErrorCode::kRejected) << name;
    EXPECT_NE(s.message().find("not a plain file name"), std::string::npos) << name;
  }
  EXPECT_EQ(CheckDataFileName(std::string("a\0b.pt", 6)).code(), ErrorCode::kRejected);
  EXPECT_EQ(CheckDataFileName(std::string(256, 'a')).code(), ErrorCode::kRejected);
  EXPECT_TRUE(CheckDataFileName("Functional.conv2d.0.forward.output.0.pt").ok());
}

TEST(DataFileTest, LinksMustResolveInsideTheDumpFolder) {
  const test::TempDir temp("numprobe_data_file");
  const fs::path dump = temp / "dump";
  const fs::path tensors = dump / "dump_tensor_data";
  temp.Write("dump/dump_tensor_data/a.pt", "a");
  temp.Write("dump/other.pt", "o");
  temp.Write("outside.pt", "x");
  fs::create_symlink(temp / "outside.pt", tensors / "out.pt");
  fs::create_symlink("../other.pt", tensors / "in.pt");
  fs::create_symlink(temp / "missing.pt", tensors / "dangling.pt");

  auto a = ResolveDataFile(tensors, "a.pt");
  ASSERT_TRUE(a.ok()) << a.error().message();
  EXPECT_EQ(*a, tensors / "a.pt");
  EXPECT_TRUE(ResolveDataFile(tensors, "in.pt").ok());  // a link that stays in the dump

  auto out = ResolveDataFile(tensors, "out.pt");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code(), ErrorCode::kRejected);
  EXPECT_NE(out.error().message().find("outside the dump folder"), std::string::npos);

  EXPECT_EQ(ResolveDataFile(tensors, "dangling.pt").error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(ResolveDataFile(tensors, "absent.pt").error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(ResolveDataFile(tensors, "../outside.pt").error().code(), ErrorCode::kRejected);

  // The dump reached through a link of its own still holds its files.
  fs::create_symlink(dump, temp / "dump_link");
  EXPECT_TRUE(ResolveDataFile(temp / "dump_link" / "dump_tensor_data", "a.pt").ok());
}

}  // namespace
}  // namespace numprobe::detail
