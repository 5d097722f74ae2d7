// core/atomic_file: the one atomic writer (and core/ordered_chunks, which writes large tables
// through it). A file appears under its final name only complete, nothing is left behind on
// failure, and a library that writes by file name gets the same guarantees through LibraryPath().
#include "core/atomic_file.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/csv.h"
#include "core/ordered_chunks.h"
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

// Small pieces are gathered in memory and large ones written straight through; the file must
// hold every byte in order whatever the mix, and Flush() must put the gathered bytes in the
// temporary file before Commit() (ReplaceFilesNotYetDurable writes every file before any rename).
TEST(AtomicOutputTest, GatheredSmallWritesAndLargeWritesKeepTheirOrder) {
  TempDir dir;
  const fs::path path = dir / "mixed.bin";
  auto out = AtomicOutput::Create(path);
  ASSERT_TRUE(out) << out.error().message();
  std::string expected;
  const auto put = [&](const std::string& piece) {
    ASSERT_TRUE(out->Write(piece).ok());
    expected += piece;
  };
  for (int i = 0; i < 10; ++i) put("header" + std::to_string(i));
  put(std::string(100 << 10, 'L'));  // above the gathering size
  for (int i = 0; i < 20; ++i) put(std::string(10 << 10, static_cast<char>('a' + i)));
  put("tail");
  EXPECT_EQ(out->offset(), expected.size());
  ASSERT_TRUE(out->Flush().ok());
  fs::path temporary;
  for (const auto& entry : fs::directory_iterator(dir.path())) temporary = entry.path();
  EXPECT_EQ(fs::file_size(temporary), expected.size());  // all in the file before Commit
  ASSERT_TRUE(out->Commit().ok());
  EXPECT_EQ(ReadFile(path), expected);
}

// A file larger than the writeback step (8 MiB) has its writeback started as it grows, also
// after the output was moved; what it holds is unchanged. (That the final fsync then has little
// left to wait for is a timing, measured by bench/large_stats_bench.py, not tested here.)
TEST(AtomicOutputTest, LargeFileWrittenBackAsItGrowsHoldsEveryByte) {
  TempDir dir;
  const fs::path path = dir / "large.bin";
  auto created = AtomicOutput::Create(path);
  ASSERT_TRUE(created) << created.error().message();
  std::optional<AtomicOutput> out(std::move(*created));
  std::string expected;
  for (int i = 0; expected.size() < (size_t{21} << 20); ++i) {
    // Pieces below and above the gathering size, none a divisor of the writeback step.
    const std::string piece(i % 3 == 0 ? (300 << 10) + i : (7 << 10) + i,
                            static_cast<char>('a' + i % 26));
    ASSERT_TRUE(out->Write(piece).ok());
    expected += piece;
    if (i == 40) {
      AtomicOutput moved(std::move(*out));
      out.reset();
      out.emplace(std::move(moved));
    }
  }
  ASSERT_TRUE(out->Commit().ok());
  EXPECT_TRUE(ReadFile(path) == expected);  // (not EXPECT_EQ: 21 MiB)
  EXPECT_EQ(fs::file_size(path), expected.size());
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

// A batch, made durable either way: every file in place with its content (new and replaced
// alike) as soon as it is replaced, no temporary left, and MakeDurable told each file and folder.
TEST(ReplaceFilesNotYetDurableTest, EveryFileOfTheBatchIsInPlace) {
  for (const BatchFlush flush : {BatchFlush::kEachFile, BatchFlush::kFilesystem}) {
    TempDir dir;
    dir.Write("b.json", "old b");
    fs::create_directory(dir / "sub");
    const std::vector<FileContent> files = {
        {dir / "a.json", "new a"}, {dir / "b.json", "new b"}, {dir / "sub" / "c.json", ""}};
    auto pending = ReplaceFilesNotYetDurable(files);
    ASSERT_TRUE(pending.ok()) << pending.error().message();
    EXPECT_EQ(ReadFile(dir / "a.json"), "new a");
    EXPECT_EQ(ReadFile(dir / "b.json"), "new b");
    EXPECT_EQ(ReadFile(dir / "sub" / "c.json"), "");
    EXPECT_EQ(dir.EntryCount(), 3u);  // a.json, b.json, sub: no temporary file
    EXPECT_EQ(pending->files,
              (std::vector<fs::path>{dir / "a.json", dir / "b.json", dir / "sub" / "c.json"}));
    EXPECT_EQ(pending->folders, (std::vector<fs::path>{dir.path(), dir / "sub"}));
    const std::vector<fs::path> also = {dir / "sub", dir.path()};
    EXPECT_TRUE(MakeDurable(*pending, flush, also).ok());
  }
}

// A file that is gone by the time of its sync is an error naming it, not a silent success.
TEST(ReplaceFilesNotYetDurableTest, AFileGoneBeforeItsSyncIsReported) {
  TempDir dir;
  const std::vector<FileContent> files = {{dir / "a.json", "a"}};
  auto pending = ReplaceFilesNotYetDurable(files);
  ASSERT_TRUE(pending.ok()) << pending.error().message();
  fs::remove(dir / "a.json");
  const Status st = MakeDurable(*pending, BatchFlush::kEachFile);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("a.json: cannot open to sync"), std::string::npos) << st.message();
  EXPECT_TRUE(MakeDurable(*pending, BatchFlush::kFilesystem).ok());  // the folder is still there
}

// A file of the batch that cannot be written (a folder at its path) fails the batch before any
// file is renamed: every file keeps its previous content and no temporary is left.
TEST(ReplaceFilesNotYetDurableTest, ARefusedFileLeavesEveryFileAsItWas) {
  TempDir dir;
  dir.Write("a.json", "old a");
  fs::create_directory(dir / "b.json");
  const std::vector<FileContent> files = {{dir / "a.json", "new a"}, {dir / "b.json", "new b"}};
  const auto st = ReplaceFilesNotYetDurable(files);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("not a regular file"), std::string::npos)
      << st.error().message();
  EXPECT_EQ(ReadFile(dir / "a.json"), "old a");
  EXPECT_TRUE(fs::is_directory(dir / "b.json"));
  EXPECT_EQ(dir.EntryCount(), 2u);
}

// A table of several MiB written through WriteChunksInOrder over a pool of 3 threads, into an
// AtomicOutput: the same bytes as AppendCsvLine over the whole table in turn, whatever the pool;
// nothing appears before Commit.
TEST(OrderedChunksTest, LargeTableMatchesTheWholeTableFormattedAtOnce) {
  constexpr int kRows = 60000;
  constexpr int kChunk = 1000;
  auto format_row = [](int i, std::string* out) {
    const std::vector<std::string> cells = {
        std::to_string(i), "Functional.linear." + std::to_string(i) + ".forward.input.0",
        i % 7 == 0 ? "a, \"quoted\" cell" : "torch.float32",
        std::string(static_cast<size_t>(i % 50), 'x')};
    AppendCsvLine(cells, out);
  };
  std::string expected;
  for (int i = 0; i < kRows; ++i) format_row(i, &expected);
  ASSERT_GT(expected.size(), size_t{3} << 20);
  ThreadPool pool(3);
  for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
    SCOPED_TRACE(p == nullptr ? "no pool" : "3 threads");
    TempDir dir;
    const fs::path path = dir / "table.csv";
    auto file = AtomicOutput::Create(path);
    ASSERT_TRUE(file) << file.error().message();
    const Status written = WriteChunksInOrder<std::string>(
        p, kRows / kChunk,
        [&](int64_t c, std::string* out) {
          for (int i = static_cast<int>(c) * kChunk; i < (static_cast<int>(c) + 1) * kChunk; ++i) {
            format_row(i, out);
          }
        },
        [&](const std::string& text) { return file->Write(text); });
    ASSERT_TRUE(written.ok()) << written.ToString();
    EXPECT_FALSE(fs::exists(path));
    ASSERT_TRUE(file->Commit().ok());
    EXPECT_EQ(ReadFile(path), expected);
    EXPECT_EQ(dir.EntryCount(), 1u);
  }
}

// A thread that has formatted a chunk does not wait for the chunk before it to be written: while
// chunk 0 is slow to format, the other threads format the chunks after it, as many as
// ChunksAhead allows and no more. Texts given to format are empty (reused ones are cleared).
TEST(OrderedChunksTest, FinishedChunksDoNotWaitForTheirTurn) {
  ThreadPool pool(3);
  const int64_t ahead = ChunksAhead(pool);
  std::atomic<int64_t> formatted_while_first_ran{0};
  std::atomic<int64_t> highest{-1};
  std::atomic<bool> first_done{false};
  std::atomic<bool> given_dirty{false};
  std::vector<int64_t> written;
  const Status s = WriteChunksInOrder<std::string>(
      &pool, 40,
      [&](int64_t c, std::string* out) {
        if (!out->empty()) given_dirty = true;
        if (c == 0) {
          // Long enough for the other threads to format every chunk the window allows.
          for (int i = 0; i < 200 && formatted_while_first_ran < ahead - 1; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          first_done = true;
        } else if (!first_done) {
          ++formatted_while_first_ran;
          int64_t h = highest;
          while (c > h && !highest.compare_exchange_weak(h, c)) {
          }
        }
        *out = std::to_string(c) + ";";
      },
      [&](const std::string& text) {
        written.push_back(std::stoll(text));
        return Status::Ok();
      });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(formatted_while_first_ran.load(), ahead - 1);  // chunks 1 .. ahead - 1
  EXPECT_EQ(highest.load(), ahead - 1);                    // and none beyond the window
  EXPECT_FALSE(given_dirty.load());
  ASSERT_EQ(written.size(), 40u);
  for (int64_t c = 0; c < 40; ++c) EXPECT_EQ(written[static_cast<size_t>(c)], c);
}

// The first write error is returned, and no chunk after it is written.
TEST(OrderedChunksTest, FirstWriteErrorStopsLaterWrites) {
  ThreadPool pool(3);
  std::vector<int64_t> written;
  const Status s = WriteChunksInOrder<int64_t>(
      &pool, 50, [](int64_t c, int64_t* out) { *out = c; },
      [&](const int64_t& c) {
        if (c == 20) return Status::IoError("disk full at chunk 20");
        written.push_back(c);
        return Status::Ok();
      });
  EXPECT_EQ(s.code(), ErrorCode::kIoError);
  EXPECT_NE(s.message().find("chunk 20"), std::string::npos);
  ASSERT_EQ(written.size(), 20u);
  for (int64_t c = 0; c < 20; ++c) EXPECT_EQ(written[static_cast<size_t>(c)], c);
}

TEST(AtomicOutputTest, AbandonedOutputLeavesNothing) {
  TempDir dir;
  {
    auto file = AtomicOutput::Create(dir / "table.csv");
    ASSERT_TRUE(file);
    ASSERT_TRUE(file->Write(std::string(size_t{1} << 17, 'a')).ok());
  }
  EXPECT_EQ(dir.EntryCount(), 0u);
}

TEST(AtomicOutputTest, CommitReplacesAnExistingFile) {
  TempDir dir;
  const fs::path path = dir.Write("out.txt", "old contents");
  ASSERT_TRUE(WriteFileAtomically(path, "new").ok());
  EXPECT_EQ(ReadFile(path), "new");
  EXPECT_EQ(dir.EntryCount(), 1u);
}

// CreateAsLinkTo: the final name becomes the existing file (one inode, no byte copied), replacing
// what was there as Commit() replaces it; no temporary is left.
TEST(AtomicOutputTest, CreateAsLinkToMakesTheNameAHardLinkToTheFile) {
  TempDir dir;
  const fs::path first = dir.Write("a.pt", "tensor bytes");
  const fs::path second = dir.Write("b.pt", "an old run's bytes");
  ASSERT_TRUE(AtomicOutput::CreateAsLinkTo(second, first, FileSync::kDeferred).ok());
  EXPECT_EQ(ReadFile(second), "tensor bytes");
  struct stat a {};
  struct stat b {};
  ASSERT_EQ(::stat(first.c_str(), &a), 0);
  ASSERT_EQ(::stat(second.c_str(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
  EXPECT_EQ(b.st_nlink, 2u);
  EXPECT_EQ(dir.EntryCount(), 2u);  // a.pt and b.pt, no temporary
  // Linking a name to the file it already is changes nothing and leaves nothing behind.
  ASSERT_TRUE(AtomicOutput::CreateAsLinkTo(second, first, FileSync::kNow).ok());
  EXPECT_EQ(ReadFile(second), "tensor bytes");
  EXPECT_EQ(dir.EntryCount(), 2u);
}

// A new name (a step's folder starts empty) is linked where it is, in one step: the name holds
// the file at once, and nothing else appears in the folder.
TEST(AtomicOutputTest, CreateAsLinkToANewNameLinksItInPlace) {
  TempDir dir;
  const fs::path first = dir.Write("a.pt", "tensor bytes");
  for (const FileSync sync : {FileSync::kDeferred, FileSync::kNow}) {
    const fs::path name = dir / (sync == FileSync::kNow ? "now.pt" : "deferred.pt");
    ASSERT_TRUE(AtomicOutput::CreateAsLinkTo(name, first, sync).ok());
    EXPECT_EQ(ReadFile(name), "tensor bytes");
    struct stat a {};
    struct stat b {};
    ASSERT_EQ(::stat(first.c_str(), &a), 0);
    ASSERT_EQ(::lstat(name.c_str(), &b), 0);
    EXPECT_TRUE(S_ISREG(b.st_mode));
    EXPECT_EQ(a.st_ino, b.st_ino);
  }
  EXPECT_EQ(dir.EntryCount(), 3u);  // a.pt and its two names, no temporary
}

TEST(AtomicOutputTest, CreateAsLinkToAMissingOrNonRegularFileFailsAndLeavesNothing) {
  TempDir dir;
  const Status missing = AtomicOutput::CreateAsLinkTo(dir / "b.pt", dir / "no_such.pt");
  EXPECT_EQ(missing.code(), ErrorCode::kIoError);
  EXPECT_NE(missing.message().find("no_such.pt"), std::string::npos) << missing.message();
  fs::create_directory(dir / "folder");
  const Status folder = AtomicOutput::CreateAsLinkTo(dir / "c.pt", dir / "folder");
  EXPECT_NE(folder.message().find("not a regular file"), std::string::npos) << folder.message();
  EXPECT_FALSE(fs::exists(dir / "b.pt"));
  EXPECT_FALSE(fs::exists(dir / "c.pt"));
  EXPECT_EQ(dir.EntryCount(), 1u);  // the folder alone
}

// The link's name gets Create()'s checks: a FIFO there is refused, not replaced.
TEST(AtomicOutputTest, CreateAsLinkToRefusesToReplaceANonRegularFile) {
  TempDir dir;
  const fs::path first = dir.Write("a.pt", "tensor bytes");
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  const Status st = AtomicOutput::CreateAsLinkTo(dir / "fifo", first);
  EXPECT_EQ(st.code(), ErrorCode::kIoError);
  EXPECT_NE(st.message().find("not a regular file"), std::string::npos) << st.message();
  struct stat fifo {};
  ASSERT_EQ(::lstat((dir / "fifo").c_str(), &fifo), 0);
  EXPECT_TRUE(S_ISFIFO(fifo.st_mode));
  EXPECT_EQ(dir.EntryCount(), 2u);  // a.pt and the FIFO, no temporary
}

// Across filesystems link(2) fails (EXDEV): the name gets a copy of the bytes, a file of its own.
TEST(AtomicOutputTest, CreateAsLinkToCopiesWhereNoLinkCanBeMade) {
  TempDir dir;
  const fs::path shm = "/dev/shm";
  struct stat here {};
  struct stat there {};
  if (::stat(dir.path().c_str(), &here) != 0 || ::stat(shm.c_str(), &there) != 0 ||
      here.st_dev == there.st_dev || ::access(shm.c_str(), W_OK) != 0) {
    GTEST_SKIP() << "needs a writable /dev/shm on another filesystem than the test's folder";
  }
  const fs::path source = shm / ("numprobe_link_test." + std::to_string(::getpid()));
  {
    std::ofstream f(source, std::ios::binary);
    f << "tensor bytes";
  }
  const Status st = AtomicOutput::CreateAsLinkTo(dir / "b.pt", source, FileSync::kNow);
  struct stat copy {};
  struct stat original {};
  const bool stated =
      ::stat((dir / "b.pt").c_str(), &copy) == 0 && ::stat(source.c_str(), &original) == 0;
  fs::remove(source);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_TRUE(stated);
  EXPECT_EQ(ReadFile(dir / "b.pt"), "tensor bytes");
  EXPECT_EQ(copy.st_nlink, 1u);
  EXPECT_NE(copy.st_dev, original.st_dev);
  EXPECT_EQ(dir.EntryCount(), 1u);  // b.pt, no temporary
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

// Issue 17 point 5: only a regular file is replaced; a symbolic link is written through.

TEST(AtomicOutputTest, TemporaryNameIsHiddenAndCarriesThePid) {
  TempDir dir;
  auto out = AtomicOutput::Create(dir / "out.txt");
  ASSERT_TRUE(out);
  const std::string name = fs::path(out->LibraryPath()).filename().string();
  const std::string prefix = ".out.txt.numprobe-tmp." + std::to_string(::getpid()) + ".";
  EXPECT_EQ(name.substr(0, prefix.size()), prefix) << name;
  EXPECT_EQ(name.size(), prefix.size() + 6) << name;
}

TEST(AtomicOutputTest, DirectoryAtThePathIsRefused) {
  TempDir dir;
  fs::create_directory(dir / "out");
  const Status st = WriteFileAtomically(dir / "out", "x");
  EXPECT_EQ(st.code(), ErrorCode::kIoError);
  EXPECT_NE(st.message().find("not a regular file (a directory)"), std::string::npos)
      << st.message();
  EXPECT_TRUE(fs::is_directory(dir / "out"));
  EXPECT_EQ(dir.EntryCount(), 1u);  // no temporary file left
}

TEST(AtomicOutputTest, FifoAtThePathIsRefusedAndStaysAFifo) {
  TempDir dir;
  const fs::path fifo = dir / "out.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Status st = WriteFileAtomically(fifo, "x");
  EXPECT_EQ(st.code(), ErrorCode::kIoError);
  EXPECT_NE(st.message().find("not a regular file (a FIFO)"), std::string::npos) << st.message();
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_EQ(dir.EntryCount(), 1u);
}

TEST(AtomicOutputTest, DeviceAtThePathIsRefused) {
  const Status st = WriteFileAtomically("/dev/null", "x");
  EXPECT_EQ(st.code(), ErrorCode::kIoError);
  EXPECT_NE(st.message().find("not a regular file (a character device)"), std::string::npos)
      << st.message();
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST(AtomicOutputTest, SymbolicLinkIsWrittenThroughToItsFile) {
  TempDir dir;
  const fs::path real = dir.Write("real/result.txt", "old");
  const fs::path link = dir / "link.txt";
  fs::create_symlink(real, link);
  ASSERT_TRUE(WriteFileAtomically(link, "new").ok());
  EXPECT_TRUE(fs::is_symlink(link));  // the link stays
  EXPECT_EQ(fs::read_symlink(link), real);
  EXPECT_EQ(ReadFile(real), "new");
  EXPECT_EQ(dir.EntryCount(), 2u);  // real/ and link.txt: the temporary went beside the file
  EXPECT_EQ(std::distance(fs::directory_iterator(dir / "real"), fs::directory_iterator()), 1);
}

TEST(AtomicOutputTest, DanglingOrNonFileSymbolicLinksAreRefused) {
  TempDir dir;
  fs::create_symlink(dir / "missing", dir / "dangling");
  Status st = WriteFileAtomically(dir / "dangling", "x");
  EXPECT_EQ(st.code(), ErrorCode::kIoError);
  EXPECT_FALSE(fs::exists(dir / "missing"));
  fs::create_directory(dir / "folder");
  fs::create_symlink(dir / "folder", dir / "to_folder");
  st = WriteFileAtomically(dir / "to_folder", "x");
  EXPECT_EQ(st.code(), ErrorCode::kIoError);
  EXPECT_NE(st.message().find("not a regular file"), std::string::npos) << st.message();
  fs::create_symlink("/dev/null", dir / "to_null");
  EXPECT_EQ(WriteFileAtomically(dir / "to_null", "x").code(), ErrorCode::kIoError);
  EXPECT_TRUE(fs::is_symlink(dir / "to_null"));
  EXPECT_TRUE(fs::is_empty(dir / "folder"));
}

TEST(AtomicOutputTest, SomethingPutAtThePathBeforeCommitIsNotReplaced) {
  TempDir dir;
  auto out = AtomicOutput::Create(dir / "out");
  ASSERT_TRUE(out);
  ASSERT_EQ(::mkfifo((dir / "out").c_str(), 0600), 0);  // rename(2) would replace a FIFO
  EXPECT_EQ(out->Commit().code(), ErrorCode::kIoError);
  EXPECT_TRUE(fs::is_fifo(dir / "out"));
}

// A pid that belonged to a process that has exited.
pid_t DeadPid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

TEST(AtomicOutputTest, StaleTemporariesOfDeadProcessesAreRemoved) {
  TempDir dir;
  const std::string dead = std::to_string(DeadPid());
  const std::string live = std::to_string(::getppid());
  dir.Write(".out.txt.numprobe-tmp." + dead + ".abc123", "left by a killed run");
  dir.Write(".other.csv.numprobe-tmp." + dead + ".zzzzzz", "also");
  dir.Write(".out.txt.numprobe-tmp." + live + ".abc123", "a run still writing");
  dir.Write("out.txt.numprobe-tmp." + dead + ".abc123", "not hidden: not ours");
  dir.Write(".out.txt.numprobe-tmp.notapid.abc123", "not ours");
  dir.Write("keep.txt", "the user's");
  EXPECT_EQ(RemoveStaleAtomicTemporaries(dir.path()), 2u);
  EXPECT_EQ(dir.EntryCount(), 4u);
  EXPECT_TRUE(fs::exists(dir / (".out.txt.numprobe-tmp." + live + ".abc123")));
}

TEST(AtomicOutputTest, FirstOutputIntoAFolderCleansIt) {
  TempDir dir;
  const std::string dead = std::to_string(DeadPid());
  dir.Write(".report.html.numprobe-tmp." + dead + ".q1w2e3", "half a report");
  ASSERT_TRUE(WriteFileAtomically(dir / "report.html", "whole").ok());
  EXPECT_EQ(dir.EntryCount(), 1u);
  EXPECT_EQ(ReadFile(dir / "report.html"), "whole");
}

}  // namespace
}  // namespace numprobe::detail
