// Data files are opened without blocking and must be regular files: a FIFO, a device or a folder
// put where a tensor file or a dump's JSON is expected is refused at once.
#include "core/regular_file.h"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "numprobe/buffer.h"

#include "core/text_file.h"
#include "testing/temp_dir.h"

namespace numprobe::detail {
namespace {

namespace fs = std::filesystem;

TEST(RegularFileTest, AFifoIsRefusedWithoutBlocking) {
  const test::TempDir temp("numprobe_fifo");
  const fs::path fifo = temp / "x.pt";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Without O_NONBLOCK each of these would wait forever for a writer.
  for (const Status& s : {OpenRegularFile(fifo).error(), ReadTextFile(fifo, 1024).error(),
                          Buffer::MapFile(fifo).error()}) {
    EXPECT_EQ(s.code(), ErrorCode::kIoError);
    EXPECT_NE(s.message().find("not a regular file"), std::string::npos) << s.message();
  }
}

TEST(RegularFileTest, FoldersAndDevicesAreRefusedAndFilesRead) {
  const test::TempDir temp("numprobe_regular");
  EXPECT_NE(OpenRegularFile(temp.path()).error().message().find("not a regular file"),
            std::string::npos);
  EXPECT_NE(OpenRegularFile("/dev/zero").error().message().find("not a regular file"),
            std::string::npos);
  EXPECT_EQ(OpenRegularFile(temp / "absent").error().code(), ErrorCode::kNotFound);
  const fs::path file = temp.Write("a.json", "{\"a\": 1}");
  auto opened = OpenRegularFile(file);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(opened->size(), 8u);
  auto text = ReadTextFile(file, 8);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "{\"a\": 1}");
  EXPECT_EQ(ReadTextFile(file, 7).error().code(), ErrorCode::kOutOfRange);
}

TEST(RegularFileTest, WritingInPlaceRefusesWhatIsNotAFile) {
  const test::TempDir temp("numprobe_write");
  const fs::path fifo = temp / "journal";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);  // without O_NONBLOCK: waits for a reader forever
  for (const fs::path& p : {fifo, temp.path(), fs::path("/dev/null")}) {
    const Status s = OpenRegularFileForWriting(p, WriteMode::kTruncate).error();
    EXPECT_EQ(s.code(), ErrorCode::kIoError) << p;
    EXPECT_NE(s.message().find("not a regular file"), std::string::npos) << s.message();
  }
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST(RegularFileTest, WritingInPlaceTruncatesOrAppendsThroughLinks) {
  const test::TempDir temp("numprobe_write");
  const fs::path file = temp.Write("table.csv", "a\n");
  fs::create_symlink(file, temp / "link.csv");
  {
    auto opened = OpenRegularFileForWriting(temp / "link.csv", WriteMode::kAppend);
    ASSERT_TRUE(opened.ok()) << opened.error().message();
    EXPECT_EQ(opened->size(), 2u);
    ASSERT_EQ(::write(opened->fd(), "b\n", 2), 2);
  }
  EXPECT_EQ(test::ReadFile(file), "a\nb\n");
  EXPECT_TRUE(fs::is_symlink(temp / "link.csv"));
  {
    auto opened = OpenRegularFileForWriting(file, WriteMode::kTruncate);
    ASSERT_TRUE(opened.ok());
    EXPECT_EQ(opened->size(), 0u);
  }
  EXPECT_EQ(test::ReadFile(file), "");
  auto created = OpenRegularFileForWriting(temp / "new.csv", WriteMode::kTruncate);
  ASSERT_TRUE(created.ok());
  EXPECT_TRUE(fs::is_regular_file(temp / "new.csv"));
}

}  // namespace
}  // namespace numprobe::detail
