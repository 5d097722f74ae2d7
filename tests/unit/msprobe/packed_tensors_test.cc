// The packed layout's container (packed_tensors.h) and the one lookup every reader uses
// (ReadDataFile): round trip, what a crash can leave, and broken or hostile indexes.
#include "msprobe/packed_tensors.h"

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/atomic_file.h"
#include "msprobe/data_file.h"
#include "testing/temp_dir.h"

namespace numprobe::detail {
namespace {

namespace fs = std::filesystem;

std::vector<float> Iota(size_t n, float start) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

TensorView ViewOf(const std::vector<float>& v, std::vector<int64_t> shape) {
  return TensorView::Contiguous(reinterpret_cast<const std::byte*>(v.data()), DType::kF32,
                                std::move(shape));
}

std::vector<float> ValuesOf(const Tensor& t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  std::memcpy(out.data(), t.view().first(), out.size() * sizeof(float));
  return out;
}

struct PackedFixture : ::testing::Test {
  test::TempDir temp{"numprobe_packed"};
  fs::path tensors = temp / "dump" / "dump_tensor_data";
  void SetUp() override { fs::create_directories(tensors); }
  void WriteIndex(const std::string& lines) {
    temp.Write("dump/dump_tensor_data/packed.index", lines);
  }
  void WriteData(size_t bytes) {
    temp.Write("dump/dump_tensor_data/packed.data", std::string(bytes, '\0'));
  }
  Status IndexError() {
    auto index = ReadPackedIndex(tensors);
    return index ? Status::Ok() : index.error();
  }
};

TEST_F(PackedFixture, WrittenTensorsReadBackByTheirDataNames) {
  const auto a = Iota(6, 1);
  const auto b = Iota(3, -5);
  {
    PackedTensorWriter writer;
    ASSERT_TRUE(writer
                    .Append(tensors, "Functional.linear.0.forward.input.0.pt", ViewOf(a, {2, 3}),
                            FileSync::kDeferred)
                    .ok());
    ASSERT_TRUE(writer
                    .Append(tensors, "Functional.linear.0.forward.output.0.pt", ViewOf(b, {3}),
                            FileSync::kNow)
                    .ok());
  }
  auto located = LocateDataFile(tensors, "Functional.linear.0.forward.output.0.pt");
  ASSERT_TRUE(located.ok()) << located.error().message();
  EXPECT_NE(located->packed, nullptr);
  EXPECT_EQ(located->bytes, 12u);
  EXPECT_EQ(located->path, tensors / "Functional.linear.0.forward.output.0.pt");
  auto file = ReadDataFile(tensors, "Functional.linear.0.forward.input.0.pt");
  ASSERT_TRUE(file.ok()) << file.error().message();
  ASSERT_EQ(file->tensors.size(), 1u);
  EXPECT_EQ(file->format, FileFormat::kPacked);
  EXPECT_EQ(file->tensors[0].tensor.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ValuesOf(file->tensors[0].tensor), a);
  auto second = ReadDataFile(tensors, "Functional.linear.0.forward.output.0.pt");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(ValuesOf(second->tensors[0].tensor), b);
  // A name neither a file nor an entry: missing, as a missing file is.
  auto absent = ReadDataFile(tensors, "Functional.relu.0.forward.output.0.pt");
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(ReadDataFile(tensors, "../x.pt").error().code(), ErrorCode::kRejected);
}

TEST_F(PackedFixture, DeferredTensorsPastTheWritebackStepReadBackWhole) {
  // Three tensors of 3 MiB each: the container's writeback is started after the second
  // (kWritebackEvery), in the middle of the appends; every byte still reads back.
  constexpr size_t kFloats = size_t{3} << 18;
  static_assert(2 * kFloats * sizeof(float) >= kWritebackEvery);
  std::vector<std::vector<float>> values;
  {
    PackedTensorWriter writer;
    for (int i = 0; i < 3; ++i) {
      values.push_back(Iota(kFloats, static_cast<float>(i * 1000)));
      const std::string name = "Functional.linear." + std::to_string(i) + ".forward.input.0.pt";
      ASSERT_TRUE(
          writer
              .Append(tensors, name, ViewOf(values.back(), {int64_t{kFloats}}), FileSync::kDeferred)
              .ok());
    }
  }
  EXPECT_EQ(fs::file_size(tensors / "packed.data"), 3 * kFloats * sizeof(float));
  for (int i = 0; i < 3; ++i) {
    auto file =
        ReadDataFile(tensors, "Functional.linear." + std::to_string(i) + ".forward.input.0.pt");
    ASSERT_TRUE(file.ok()) << file.error().message();
    EXPECT_EQ(ValuesOf(file->tensors[0].tensor), values[static_cast<size_t>(i)]) << i;
  }
}

TEST_F(PackedFixture, ARenamedFolderIsContinuedAndANewOneStarted) {
  const auto a = Iota(4, 0);
  PackedTensorWriter writer;
  ASSERT_TRUE(writer.Append(tensors, "a.pt", ViewOf(a, {4}), FileSync::kDeferred).ok());
  const fs::path moved = temp / "moved" / "dump_tensor_data";
  fs::create_directories(moved.parent_path());
  fs::rename(tensors, moved);  // SetRank renames proc{pid} to rank{R}
  ASSERT_TRUE(writer.Append(moved, "b.pt", ViewOf(a, {2, 2}), FileSync::kDeferred).ok());
  writer.Close();
  auto index = ReadPackedIndex(moved);
  ASSERT_TRUE(index.ok()) << index.error().message();
  ASSERT_EQ((*index)->entries.size(), 2u);
  EXPECT_EQ((*index)->entries[1].begin, 16u);
  RemovePackedContainer(moved);
  EXPECT_FALSE(fs::exists(moved / kPackedIndexName));
}

TEST_F(PackedFixture, ARepeatIsASecondNameOfTheEarlierBytes) {
  const auto a = Iota(4, 1);
  const auto b = Iota(2, 9);
  PackedTensorWriter writer;
  ASSERT_TRUE(writer.Append(tensors, "a.pt", ViewOf(a, {2, 2}), FileSync::kDeferred).ok());
  ASSERT_TRUE(writer.Append(tensors, "b.pt", ViewOf(b, {2}), FileSync::kDeferred).ok());
  ASSERT_TRUE(writer.AppendRepeat(tensors, "c.pt", "a.pt", FileSync::kNow).ok());
  ASSERT_TRUE(writer.Append(tensors, "d.pt", ViewOf(b, {2}), FileSync::kDeferred).ok());
  // An earlier name this writer never appended is an error, and writes nothing.
  const Status unknown = writer.AppendRepeat(tensors, "e.pt", "z.pt", FileSync::kDeferred);
  EXPECT_EQ(unknown.code(), ErrorCode::kInternal);
  EXPECT_NE(unknown.message().find("z.pt"), std::string::npos) << unknown.message();
  // An empty tensor's repeat names an empty range behind the end: it overlaps nothing.
  ASSERT_TRUE(writer.Append(tensors, "f.pt", ViewOf(b, {0}), FileSync::kDeferred).ok());
  ASSERT_TRUE(writer.Append(tensors, "g.pt", ViewOf(a, {4}), FileSync::kDeferred).ok());
  ASSERT_TRUE(writer.AppendRepeat(tensors, "h.pt", "f.pt", FileSync::kDeferred).ok());
  writer.Close();
  EXPECT_EQ(fs::file_size(tensors / "packed.data"), (4 + 2 + 2 + 4) * sizeof(float));
  auto index = ReadPackedIndex(tensors);
  ASSERT_TRUE(index.ok()) << index.error().message();
  ASSERT_EQ((*index)->entries.size(), 7u);
  EXPECT_EQ(ReadDataFile(tensors, "h.pt")->tensors[0].tensor.numel(), 0);
  EXPECT_EQ((*index)->entries[2].begin, 0u);
  EXPECT_EQ((*index)->entries[2].end, 16u);
  auto c = ReadDataFile(tensors, "c.pt");
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->tensors[0].tensor.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(ValuesOf(c->tensors[0].tensor), a);
  auto d = ReadDataFile(tensors, "d.pt");
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(ValuesOf(d->tensors[0].tensor), b);
  EXPECT_EQ(ReadDataFile(tensors, "e.pt").error().code(), ErrorCode::kNotFound);
}

TEST_F(PackedFixture, ACrashTailIsIgnoredAndACutTensorIsAnErrorNotAShorterTensor) {
  // After a SIGKILL: bytes of a tensor whose index line was never written, and a last line cut
  // short. Neither is referenced; the complete entry reads.
  WriteIndex(
      "{\"numprobe_packed\": 1}\n"
      "{\"name\": \"a.pt\", \"dtype\": \"f32\", \"shape\": [2], \"offsets\": [0, 8]}\n"
      "{\"name\": \"b.pt\", \"dtype\": \"f3");
  WriteData(20);
  auto index = ReadPackedIndex(tensors);
  ASSERT_TRUE(index.ok()) << index.error().message();
  EXPECT_TRUE((*index)->torn_tail);
  EXPECT_EQ((*index)->entries.size(), 1u);
  EXPECT_TRUE(ReadDataFile(tensors, "a.pt").ok());
  EXPECT_EQ(ReadDataFile(tensors, "b.pt").error().code(), ErrorCode::kNotFound);

  // The data file cut short under an index line (a disk that lost the tail): an error naming it.
  WriteIndex(
      "{\"numprobe_packed\": 1}\n"
      "{\"name\": \"a.pt\", \"dtype\": \"f32\", \"shape\": [2], \"offsets\": [0, 8]}\n"
      "{\"name\": \"b.pt\", \"dtype\": \"f32\", \"shape\": [4], \"offsets\": [8, 24]}\n");
  WriteData(20);
  auto cut = ReadDataFile(tensors, "b.pt");
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(cut.error().message().find("cut short"), std::string::npos);
  EXPECT_TRUE(ReadDataFile(tensors, "a.pt").ok());
}

TEST_F(PackedFixture, BrokenIndexesAreRefusedWithTheLine) {
  WriteData(64);
  const std::string head = "{\"numprobe_packed\": 1}\n";
  struct Case {
    std::string lines;
    ErrorCode code;
    const char* phrase;
  };
  const std::vector<Case> cases = {
      {"", ErrorCode::kCorrupt, "empty packed index"},
      {"{\"numprobe_packed\": 2}\n", ErrorCode::kCorrupt, "not a numprobe packed index"},
      {head + "[1]\n", ErrorCode::kCorrupt, "line 2: not a JSON object"},
      {head + "{\"name\": \"a.pt\", \"dtype\": \"q9\", \"shape\": [1], \"offsets\": [0, 4]}\n",
       ErrorCode::kCorrupt, "unknown dtype"},
      {head + "{\"name\": \"a.pt\", \"dtype\": \"f32\", \"shape\": [2], \"offsets\": [0, 4]}\n",
       ErrorCode::kCorrupt, "needs 8"},
      {head + "{\"name\": \"a.pt\", \"dtype\": \"f32\", \"shape\": [1], \"offsets\": [8, 4]}\n",
       ErrorCode::kCorrupt, "before begin"},
      {head + "{\"name\": \"a.pt\", \"dtype\": \"f32\", \"shape\": [2], \"offsets\": [0, 8]}\n" +
           "{\"name\": \"b.pt\", \"dtype\": \"f32\", \"shape\": [1], \"offsets\": [4, 8]}\n",
       ErrorCode::kCorrupt, "overlaps"},
      {head + "{\"name\": \"a.pt\", \"dtype\": \"f32\", \"shape\": [1], \"offsets\": [4, 8]}\n",
       ErrorCode::kCorrupt, "leaving a hole"},
      // A repeat names an earlier entry's whole range, not a part of it.
      {head + "{\"name\": \"a.pt\", \"dtype\": \"f32\", \"shape\": [2], \"offsets\": [0, 8]}\n" +
           "{\"name\": \"b.pt\", \"dtype\": \"f32\", \"shape\": [1], \"offsets\": [0, 4]}\n",
       ErrorCode::kCorrupt, "overlaps"},
      {head + "{\"name\": \"../../etc/passwd\", \"dtype\": \"u8\", \"shape\": [1], "
              "\"offsets\": [0, 1]}\n",
       ErrorCode::kRejected, "not a plain file name"},
      {head + "{\"name\": \"a.pt\", \"dtype\": \"f32\", \"shape\": [4611686018427387904, 8], "
              "\"offsets\": [0, 4]}\n",
       ErrorCode::kCorrupt, "overflows"},
      {head + "{\"name\": \"a.pt\", \"dtype\": \"f32\", \"shape\": [-1], \"offsets\": [0, 4]}\n",
       ErrorCode::kCorrupt, "non-negative"},
  };
  for (const Case& c : cases) {
    WriteIndex(c.lines);
    const Status s = IndexError();
    EXPECT_EQ(s.code(), c.code) << c.lines << " -> " << s.message();
    EXPECT_NE(s.message().find(c.phrase), std::string::npos) << s.message();
  }
}

TEST_F(PackedFixture, TheContainerFollowsTheDataFileRule) {
  temp.Write("outside.data", std::string(8, '\0'));
  WriteIndex(
      "{\"numprobe_packed\": 1}\n"
      "{\"name\": \"a.pt\", \"dtype\": \"f32\", \"shape\": [2], \"offsets\": [0, 8]}\n");
  fs::create_symlink(temp / "outside.data", tensors / kPackedDataName);
  auto read = ReadDataFile(tensors, "a.pt");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code(), ErrorCode::kRejected);
  EXPECT_NE(read.error().message().find("outside the dump folder"), std::string::npos);
}

TEST_F(PackedFixture, AFileOfItsOwnIsFoundBeforeTheContainer) {
  WriteIndex(
      "{\"numprobe_packed\": 1}\n"
      "{\"name\": \"a.pt\", \"dtype\": \"f32\", \"shape\": [2], \"offsets\": [0, 8]}\n");
  WriteData(8);
  temp.Write("dump/dump_tensor_data/a.pt", "not a tensor");
  auto located = LocateDataFile(tensors, "a.pt");
  ASSERT_TRUE(located.ok());
  EXPECT_EQ(located->packed, nullptr);
}

}  // namespace
}  // namespace numprobe::detail
