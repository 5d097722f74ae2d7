// core/atomic_file: the one atomic writer. A file appears under its final name only complete,
// nothing is left behind on failure, and a library that writes by file name gets the same
// guarantees through LibraryPath().
#include "core/atomic_file.h"

#include <cstdio>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace numprobe::detail {
namespace {

namespace fs = std::filesystem;
using test::ReadFile;
using test::TempDir;

TEST(AtomicOutputTest, CommitPutsTheWholeFileInPlace) {
  TempDir dir;
  const fs::path path = dir / "out.txt";
  auto out = AtomicOutput::Create(path);
  ASSERT_TRUE(out) << out.error().message();
  ASSERT_TRUE(out->Write("hello ").ok());
  ASSERT_TRUE(out->Write("world").ok());
  EXPECT_EQ(out->offset(), 11u);
  EXPECT_FALSE(fs::exists(path));   // nothing under the final name before Commit
  EXPECT_EQ(dir.EntryCount(), 1u);  // the temporary file
  ASSERT_TRUE(out->Commit().ok());
  EXPECT_EQ(ReadFile(path), "hello world");
  EXPECT_EQ(dir.EntryCount(), 1u);
  EXPECT_FALSE(out->Write("more").ok());
  EXPECT_FALSE(out->Commit().ok());
}

TEST(AtomicOutputTest, AbandonedOutputLeavesTheOldFileAndNoTemporary) {
  TempDir dir;
  const fs::path path = dir.Write("out.txt", "old");
  {
    auto out = AtomicOutput::Create(path);
    ASSERT_TRUE(out);
    ASSERT_TRUE(out->Write("new, but never committed").ok());
  }
  EXPECT_EQ(ReadFile(path), "old");
  EXPECT_EQ(dir.EntryCount(), 1u);
}

TEST(AtomicOutputTest, CommitReplacesAnExistingFile) {
  TempDir dir;
  const fs::path path = dir.Write("out.txt", "old contents");
  ASSERT_TRUE(WriteFileAtomically(path, "new").ok());
  EXPECT_EQ(ReadFile(path), "new");
  EXPECT_EQ(dir.EntryCount(), 1u);
}

TEST(AtomicOutputTest, EmptyContentMakesAnEmptyFile) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomically(dir / "empty", "").ok());
  EXPECT_TRUE(fs::exists(dir / "empty"));
  EXPECT_EQ(fs::file_size(dir / "empty"), 0u);
}

TEST(AtomicOutputTest, MissingFolderIsAnIoError) {
  TempDir dir;
  const Status st = WriteFileAtomically(dir / "no" / "such" / "out.txt", "x");
  EXPECT_EQ(st.code(), ErrorCode::kIoError);
  EXPECT_EQ(dir.EntryCount(), 0u);
}

// What libxlsxwriter does: fopen(name, "wb") and write.
void WriteByName(const std::string& name, const std::string& text) {
  std::FILE* f = std::fopen(name.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(text.data(), 1, text.size(), f), text.size());
  ASSERT_EQ(std::fclose(f), 0);
}

TEST(AtomicOutputTest, LibraryWritesByNameIntoTheTemporaryFile) {
  TempDir dir;
  const fs::path path = dir / "book.xlsx";
  auto out = AtomicOutput::Create(path);
  ASSERT_TRUE(out);
  const std::string name = out->LibraryPath();
  EXPECT_EQ(fs::path(name).parent_path(), dir.path());  // beside the target: rename stays atomic
  WriteByName(name, "PK written by a library");
  EXPECT_FALSE(fs::exists(path));
  ASSERT_TRUE(out->Commit().ok());
  EXPECT_EQ(ReadFile(path), "PK written by a library");
  EXPECT_EQ(dir.EntryCount(), 1u);
}

TEST(AtomicOutputTest, LibraryThatReplacesTheTemporaryFileIsCommittedToo) {
  TempDir dir;
  const fs::path path = dir / "book.xlsx";
  auto out = AtomicOutput::Create(path);
  ASSERT_TRUE(out);
  const std::string name = out->LibraryPath();
  WriteByName((dir / "elsewhere").string(), "replaced");
  fs::rename(dir / "elsewhere", name);
  ASSERT_TRUE(out->Commit().ok());
  EXPECT_EQ(ReadFile(path), "replaced");
  EXPECT_EQ(dir.EntryCount(), 1u);
}

TEST(AtomicOutputTest, LibraryThatRemovedItsFileFailsTheCommit) {
  TempDir dir;
  const fs::path path = dir / "book.xlsx";
  auto out = AtomicOutput::Create(path);
  ASSERT_TRUE(out);
  fs::remove(out->LibraryPath());
  const Status st = out->Commit();
  EXPECT_EQ(st.code(), ErrorCode::kIoError);
  EXPECT_FALSE(fs::exists(path));
}

TEST(AtomicOutputTest, AbandonedLibraryOutputIsRemoved) {
  TempDir dir;
  {
    auto out = AtomicOutput::Create(dir / "book.xlsx");
    ASSERT_TRUE(out);
    WriteByName(out->LibraryPath(), "half a workbook");
  }
  EXPECT_EQ(dir.EntryCount(), 0u);
}

}  // namespace
}  // namespace numprobe::detail
