// The capture's background tensor writer: a SIGKILL mid-step leaves a journal that names only
// complete files, records keep their order behind queued files, tensor_durability is validated,
// the step end's sync runs in the background with the written marker after it, and a process
// that learns its rank late renames the folders it wrote.
#include <csignal>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "numprobe/dumper.h"
#include "numprobe/tensor_file.h"

#include "msprobe/data_file.h"
#include "msprobe/dump_journal.h"
#include "msprobe/packed_tensors.h"
#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

constexpr int kRecords = 24;
constexpr int64_t kElements = int64_t{1} << 20;  // 4 MB per tensor: the writer falls behind

std::unique_ptr<Dumper> OpenTensorDumper(const fs::path& root, const std::string& extra = "") {
  auto config = DumpConfig::Parse(R"({"task": "tensor", "dump_path": ")" + root.string() + "\"" +
                                  extra + "}");
  EXPECT_TRUE(config.ok()) << config.error().ToString();
  DumperOptions options;
  options.rank = 0;
  auto d = Dumper::Open(*config, options);
  EXPECT_TRUE(d.ok());
  return std::move(d).value();
}

// Records kRecords outputs, the i-th a tensor filled with i, each followed by a record without
// files (which must stay behind it in the journal).
void RecordMany(Dumper* d) {
  std::vector<float> values(static_cast<size_t>(kElements));
  for (int i = 0; i < kRecords; ++i) {
    std::fill(values.begin(), values.end(), static_cast<float>(i));
    TensorArg t;
    t.view = TensorView::Contiguous(values.data(), DType::kF32, {kElements});
    const std::string name = "Functional.linear." + std::to_string(i) + ".forward";
    ASSERT_TRUE(
        d->RecordForwardOutputs(name, DumpValue::List({DumpValue::Tensor(std::move(t))})).ok());
    const std::string plain = "Functional.size." + std::to_string(i) + ".forward";
    ASSERT_TRUE(d->RecordForwardOutputs(plain, DumpValue::List({DumpValue::Int(i)})).ok());
  }
}

// RecordMany with async_dump: each tensor is recorded pending (its data still "on the device"),
// then ResolvePending brings every statistic and host copy at once, as a step's end does.
void RecordManyPendingThenResolve(Dumper* d) {
  std::vector<PendingValues> slots(kRecords);
  std::vector<std::vector<float>> hosts(kRecords);
  for (int i = 0; i < kRecords; ++i) {
    TensorArg t;
    t.view.dtype = DType::kF32;
    t.view.shape = {kElements};
    t.view.strides = {1};
    t.pending_slot = i;
    t.pending_data = true;
    const std::string name = "Functional.linear." + std::to_string(i) + ".forward";
    ASSERT_TRUE(
        d->RecordForwardOutputs(name, DumpValue::List({DumpValue::Tensor(std::move(t))})).ok());
    const std::string plain = "Functional.size." + std::to_string(i) + ".forward";
    ASSERT_TRUE(d->RecordForwardOutputs(plain, DumpValue::List({DumpValue::Int(i)})).ok());
    auto& host = hosts[static_cast<size_t>(i)];
    host.assign(static_cast<size_t>(kElements), static_cast<float>(i));
    const double v = i;
    slots[static_cast<size_t>(i)] = {
        {JsonValue::Double(v), JsonValue::Double(v), JsonValue::Double(v), JsonValue::Double(v)},
        TensorView::Contiguous(host.data(), DType::kF32, {kElements})};
  }
  ASSERT_TRUE(d->ResolvePending(slots).ok());
}

// Every data_name under `v`.
void CollectDataNames(const JsonValue& v, std::vector<std::string>* out) {
  if (v.is_array()) {
    for (const JsonValue& item : v.array()) CollectDataNames(item, out);
  } else if (v.is_object()) {
    if (const JsonValue* name = v.Find("data_name")) out->push_back(name->string_value());
    for (const auto& member : v.object()) CollectDataNames(member.second, out);
  }
}

// The entries of a recovered journal, in order, and checks that each file a record names is
// complete: it reads back with the recorded shape and the recorded values.
std::vector<std::string> CheckJournalNamesCompleteFiles(const fs::path& rank_dir) {
  auto recovered = ReadDumpJournal(rank_dir / "dump.json.journal");
  EXPECT_TRUE(recovered.ok()) << recovered.error().ToString();
  if (!recovered.ok()) return {};
  std::vector<std::string> order;
  for (const auto& [name, entry] : recovered->dump.Find("data")->object()) {
    order.push_back(name);
    std::vector<std::string> files;
    CollectDataNames(entry, &files);
    if (name.rfind("Functional.linear.", 0) != 0) {
      EXPECT_TRUE(files.empty()) << name;
      continue;
    }
    EXPECT_EQ(files.size(), 1U) << name;
    for (const std::string& f : files) {
      // Its own file, or its entry of the packed container (dump_layout "packed").
      auto file = detail::ReadDataFile(rank_dir / "dump_tensor_data", f);
      EXPECT_TRUE(file.ok()) << f << ": " << (file.ok() ? "" : file.error().ToString());
      if (!file.ok()) continue;
      const TensorView& view = file->tensors.at(0).tensor.view();
      EXPECT_EQ(view.numel(), kElements) << f;
      const int index = std::stoi(name.substr(std::string("Functional.linear.").size()));
      float first = 0;
      float last = 0;
      std::memcpy(&first, view.first(), sizeof(float));
      std::memcpy(&last, view.first() + (kElements - 1) * 4, sizeof(float));
      EXPECT_EQ(first, static_cast<float>(index)) << f;
      EXPECT_EQ(last, static_cast<float>(index)) << f;
    }
  }
  return order;
}

// Runs `body` in a child process that SIGKILLs itself right after; returns once it is dead.
void RunAndKill(const std::function<void()>& body) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    body();
    ::raise(SIGKILL);
    ::_exit(0);  // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
}

class TensorWriterTest : public ::testing::TestWithParam<const char*> {
 protected:
  test::TempDir temp_{"numprobe_tensor_writer"};
  const fs::path root_ = temp_.path();
};

TEST_P(TensorWriterTest, SigkillMidStepLeavesAJournalThatNamesOnlyCompleteFiles) {
  const std::string extra = GetParam();
  RunAndKill([&] {
    auto d = OpenTensorDumper(root_, extra);
    if (!d->Start().ok()) ::_exit(2);
    RecordMany(d.get());
  });
  const fs::path rank_dir = root_ / "step0" / "rank0";
  const std::vector<std::string> order = CheckJournalNamesCompleteFiles(rank_dir);
  // The journal keeps the recording order: linear.i, size.i, linear.i+1, ...
  for (size_t k = 0; k < order.size(); ++k) {
    const std::string expected = (k % 2 == 0 ? "Functional.linear." : "Functional.size.") +
                                 std::to_string(k / 2) + ".forward";
    EXPECT_EQ(order[k], expected);
  }
  // No file under its final name is cut short (an unfinished one keeps its temporary name).
  for (const auto& f : fs::directory_iterator(rank_dir / "dump_tensor_data")) {
    if (f.path().filename().string().find(".numprobe-tmp.") != std::string::npos) continue;
    if (f.path().filename() == detail::kPackedDataName ||
        f.path().filename() == detail::kPackedIndexName) {
      continue;  // the packed container: checked entry by entry below
    }
    auto file = ReadTensorFile(f.path());
    EXPECT_TRUE(file.ok()) << f.path();
  }
  // In the packed layout no entry of the index is cut short, journaled or not.
  if (fs::exists(rank_dir / "dump_tensor_data" / detail::kPackedIndexName)) {
    EXPECT_NE(extra.find("packed"), std::string::npos);
    auto index = detail::ReadPackedIndex(rank_dir / "dump_tensor_data");
    ASSERT_TRUE(index.ok()) << index.error().ToString();
    EXPECT_GE((*index)->entries.size(), order.size() / 2);
    for (size_t i = 0; i < (*index)->entries.size(); ++i) {
      auto tensor = detail::PackedTensor(*index, i);
      EXPECT_TRUE(tensor.ok()) << (*index)->entries[i].name;
    }
  } else {
    EXPECT_EQ(extra.find("packed"), std::string::npos);
  }
}

TEST_P(TensorWriterTest, ACompleteStepHasEveryFileAndRecordInOrder) {
  {
    auto d = OpenTensorDumper(root_, GetParam());
    ASSERT_TRUE(d->Start().ok());
    RecordMany(d.get());
    ASSERT_TRUE(d->Stop().ok());
  }
  const std::vector<std::string> order = CheckJournalNamesCompleteFiles(root_ / "step0" / "rank0");
  ASSERT_EQ(order.size(), static_cast<size_t>(2 * kRecords));
  EXPECT_EQ(order[1], "Functional.size.0.forward");
  EXPECT_EQ(order.back(), "Functional.size." + std::to_string(kRecords - 1) + ".forward");
}

// The step end's sync runs on the writer's thread after Stop() returns: the JSON files are in
// place at once, and the journal's written marker follows the sync, unless something was
// recorded after the files were written (they would then not hold it).
TEST_P(TensorWriterTest, TheWrittenMarkerFollowsTheBackgroundSyncOfAnUnchangedStep) {
  auto d = OpenTensorDumper(root_, GetParam());
  ASSERT_TRUE(d->Start().ok());
  RecordMany(d.get());
  ASSERT_TRUE(d->Stop().ok());
  const fs::path rank_dir = root_ / "step0" / "rank0";
  EXPECT_TRUE(fs::is_regular_file(rank_dir / "dump.json"));
  ASSERT_TRUE(d->Start().ok());  // the same step, resumed
  ASSERT_TRUE(
      d->RecordForwardOutputs("Functional.size.99.forward", DumpValue::List({DumpValue::Int(99)}))
          .ok());
  ASSERT_TRUE(d->Flush().ok());
  auto resumed = LoadDumpJson(rank_dir);
  ASSERT_TRUE(resumed.ok()) << resumed.error().ToString();
  EXPECT_TRUE(resumed->from_journal);  // dump.json lacks the last record
  EXPECT_NE(resumed->text.find("Functional.size.99.forward"), std::string::npos);

  ASSERT_TRUE(d->Stop().ok());
  ASSERT_TRUE(d->Step().ok());  // nothing new since Stop(): no second write, no wait
  ASSERT_TRUE(d->Flush().ok());
  auto current = LoadDumpJson(rank_dir);
  ASSERT_TRUE(current.ok()) << current.error().ToString();
  EXPECT_FALSE(current->from_journal);
  EXPECT_EQ(current->text, resumed->text);
  auto journal = ReadDumpJournal(rank_dir / "dump.json.journal");
  ASSERT_TRUE(journal.ok()) << journal.error().ToString();
  EXPECT_TRUE(journal->dump_json_current);
  EXPECT_EQ(journal->records, 2 * kRecords + 1);
}

// A SIGKILL right after Stop(), its sync possibly unfinished: the step reads back whole, from
// dump.json or from the journal.
TEST_P(TensorWriterTest, SigkillRightAfterStopLosesNothing) {
  const std::string extra = GetParam();
  RunAndKill([&] {
    auto d = OpenTensorDumper(root_, extra);
    if (!d->Start().ok()) ::_exit(2);
    RecordMany(d.get());
    if (!d->Stop().ok()) ::_exit(2);
  });
  const fs::path rank_dir = root_ / "step0" / "rank0";
  EXPECT_EQ(CheckJournalNamesCompleteFiles(rank_dir).size(), static_cast<size_t>(2 * kRecords));
  auto loaded = LoadDumpJson(rank_dir);
  ASSERT_TRUE(loaded.ok()) << loaded.error().ToString();
  for (int i = 0; i < kRecords; ++i) {
    EXPECT_NE(loaded->text.find("Functional.linear." + std::to_string(i) + ".forward"),
              std::string::npos);
  }
}

// async_dump: the files of resolved records are queued before their journal lines, so a SIGKILL
// while they are written leaves the same guarantee as a synchronous dump.
TEST_P(TensorWriterTest, SigkillAfterResolvingPendingDataNamesOnlyCompleteFiles) {
  const std::string extra = std::string(GetParam()) + R"(, "async_dump": true)";
  RunAndKill([&] {
    auto d = OpenTensorDumper(root_, extra);
    if (!d->Start().ok()) ::_exit(2);
    RecordManyPendingThenResolve(d.get());
  });
  const std::vector<std::string> order = CheckJournalNamesCompleteFiles(root_ / "step0" / "rank0");
  for (size_t k = 0; k < order.size(); ++k) {
    const std::string expected = (k % 2 == 0 ? "Functional.linear." : "Functional.size.") +
                                 std::to_string(k / 2) + ".forward";
    EXPECT_EQ(order[k], expected);
  }
  // And a step that ends normally has every file and record.
  fs::remove_all(root_);
  {
    auto d = OpenTensorDumper(root_, extra);
    ASSERT_TRUE(d->Start().ok());
    RecordManyPendingThenResolve(d.get());
    ASSERT_TRUE(d->Stop().ok());
  }
  EXPECT_EQ(CheckJournalNamesCompleteFiles(root_ / "step0" / "rank0").size(),
            static_cast<size_t>(2 * kRecords));
}

INSTANTIATE_TEST_SUITE_P(
    Durability, TensorWriterTest,
    ::testing::Values("", R"(, "tensor_durability": "file")",
                      R"(, "tensor": {"file_format": "npy"})", R"(, "dump_layout": "packed")",
                      R"(, "dump_layout": "packed", "tensor_durability": "file")"));

TEST(DumpLayoutConfig, AcceptsFilesAndPackedAndNamesTheKeyOtherwise) {
  auto files = DumpConfig::Parse(R"({"dump_path": "d", "dump_layout": "files"})");
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(files->dump_layout, DumpLayout::kFiles);
  auto packed = DumpConfig::Parse(R"({"dump_path": "d", "dump_layout": "packed"})");
  ASSERT_TRUE(packed.ok());
  EXPECT_EQ(packed->dump_layout, DumpLayout::kPacked);
  auto defaulted = DumpConfig::Parse(R"({"dump_path": "d"})");
  ASSERT_TRUE(defaulted.ok());
  EXPECT_EQ(defaulted->dump_layout, DumpLayout::kFiles);
  auto bad = DumpConfig::Parse(R"({"dump_path": "d", "dump_layout": "zip"})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("dump_layout"), std::string::npos);
}

TEST(TensorDurabilityConfig, AcceptsStepAndFileAndNamesTheKeyOtherwise) {
  auto step = DumpConfig::Parse(R"({"dump_path": "d", "tensor_durability": "step"})");
  ASSERT_TRUE(step.ok());
  EXPECT_EQ(step->tensor_durability, TensorDurability::kStep);
  auto file = DumpConfig::Parse(R"({"dump_path": "d", "tensor_durability": "file"})");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->tensor_durability, TensorDurability::kFile);
  auto defaulted = DumpConfig::Parse(R"({"dump_path": "d"})");
  ASSERT_TRUE(defaulted.ok());
  EXPECT_EQ(defaulted->tensor_durability, TensorDurability::kStep);
  auto bad = DumpConfig::Parse(R"({"dump_path": "d", "tensor_durability": "always"})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("tensor_durability"), std::string::npos);
}

TEST(SetRankLate, RenamesTheProcFoldersOfEarlierStepsAndTheCurrentOne) {
  test::TempDir temp{"numprobe_rank_late"};
  auto config = DumpConfig::Parse(R"({"dump_path": ")" + temp.path().string() + "\"}");
  ASSERT_TRUE(config.ok());
  DumperOptions options;
  options.pid = 4242;
  auto d = Dumper::Open(*config, options);
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE((*d)->Start().ok());
  ASSERT_TRUE(
      (*d)->RecordForwardOutputs("Functional.size.0.forward", DumpValue::List({DumpValue::Int(1)}))
          .ok());
  ASSERT_TRUE((*d)->Step().ok());
  ASSERT_TRUE((*d)->Start().ok());
  ASSERT_TRUE((*d)->SetRank(3).ok());
  ASSERT_TRUE((*d)->Stop().ok());
  for (const char* step : {"step0", "step1"}) {
    EXPECT_TRUE(fs::exists(temp.path() / step / "rank3" / "dump.json")) << step;
    EXPECT_FALSE(fs::exists(temp.path() / step / "proc4242")) << step;
  }
}

}  // namespace
}  // namespace numprobe
