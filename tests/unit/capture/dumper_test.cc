// Dumper: dump tree layout, statistics at the tensor's precision, md5, filters, overflow_check,
// and crash safety through the journal.
#include "numprobe/dumper.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "numprobe/float_convert.h"

#include "core/json.h"
#include "msprobe/data_file.h"
#include "msprobe/dump_journal.h"
#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

class DumperTest : public ::testing::Test {
 protected:
  std::unique_ptr<Dumper> Open(const std::string& extra, std::optional<int64_t> rank = 0) {
    return OpenAt(root_, extra, rank);
  }
  // A Dumper writing to `dump_path`; `extra` adds config members after it (", \"task\": ...").
  static std::unique_ptr<Dumper> OpenAt(const fs::path& dump_path, const std::string& extra,
                                        std::optional<int64_t> rank = 0) {
    auto config = DumpConfig::Parse(R"({"dump_path": ")" + dump_path.string() + "\"" + extra + "}");
    EXPECT_TRUE(config.ok()) << config.error().ToString();
    DumperOptions options;
    options.rank = rank;
    auto d = Dumper::Open(*config, options);
    EXPECT_TRUE(d.ok());
    return std::move(d).value();
  }

  JsonValue ReadJson(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    auto v = ParseJson(s.str());
    EXPECT_TRUE(v.ok()) << p;
    return v.ok() ? *v : JsonValue();
  }

  test::TempDir temp_{"numprobe_dumper"};
  const fs::path root_ = temp_.path();
};

DumpValue F32(const std::vector<float>& v, std::vector<int64_t> shape, bool rg = false) {
  TensorArg a;
  a.view = TensorView::Contiguous(v.data(), DType::kF32, std::move(shape));
  a.requires_grad = rg;
  return DumpValue::Tensor(std::move(a));
}

TEST_F(DumperTest, WritesMsprobeLayoutAndLeafOrder) {
  auto d = Open("");
  std::vector<float> x = {1, -2, 3, 4};
  ASSERT_TRUE(d->Start().ok());
  ASSERT_TRUE(d->RecordForwardInputs("Functional.relu.0.forward",
                                     DumpValue::List({F32(x, {2, 2}, true)}),
                                     DumpValue::Dict({{"inplace", DumpValue::Bool(false)}}))
                  .ok());
  ASSERT_TRUE(d->RecordForwardOutputs("Functional.relu.0.forward",
                                      DumpValue::List({F32({1, 0, 3, 4}, {2, 2})}))
                  .ok());
  d->AddStack("Functional.relu.0.forward", {"File a.py, line 1, in f, \n relu(x)"});
  ASSERT_TRUE(d->Stop().ok());
  const fs::path dir = root_ / "step0" / "rank0";
  JsonValue dump = ReadJson(dir / "dump.json");
  EXPECT_EQ(dump.Find("task")->string_value(), "statistics");
  EXPECT_EQ(dump.Find("level")->string_value(), "L1");
  EXPECT_TRUE(dump.Find("dump_data_dir")->is_null());
  const JsonValue* entry = dump.Find("data")->Find("Functional.relu.0.forward");
  ASSERT_NE(entry, nullptr);
  const JsonValue& leaf = entry->Find("input_args")->array()[0];
  std::vector<std::string> keys;
  for (const auto& m : leaf.object()) keys.push_back(m.first);
  EXPECT_EQ(keys, (std::vector<std::string>{"type", "dtype", "shape", "Max", "Min", "Mean", "Norm",
                                            "requires_grad"}));
  EXPECT_EQ(leaf.Find("Max")->double_value(), 4.0);
  EXPECT_EQ(leaf.Find("Min")->double_value(), -2.0);
  EXPECT_EQ(leaf.Find("Mean")->double_value(), 1.5);
  EXPECT_EQ(leaf.Find("Norm")->double_value(), RoundToDType(DType::kF32, std::sqrt(30.0)));
  EXPECT_TRUE(leaf.Find("requires_grad")->bool_value());
  EXPECT_EQ(ToJson(*entry->Find("input_kwargs"), -1),
            R"({"inplace":{"type":"bool","value":false}})");
  EXPECT_TRUE(fs::exists(dir / "stack.json"));
  EXPECT_EQ(ToJson(ReadJson(dir / "construct.json"), -1), "{}");  // L1: no construct
}

// stop() then step(): the step's files are written once; a record between them writes them again.
TEST_F(DumperTest, StepAfterStopDoesNotRewriteUnchangedFiles) {
  auto d = Open("");
  std::vector<float> x = {1, 2};
  ASSERT_TRUE(d->Start().ok());
  ASSERT_TRUE(d->RecordForwardInputs("Functional.relu.0.forward", DumpValue::List({F32(x, {2})}),
                                     DumpValue::Dict({}))
                  .ok());
  ASSERT_TRUE(d->Stop().ok());
  const fs::path dump_json = root_ / "step0" / "rank0" / "dump.json";
  auto inode = [&] {
    struct stat st {};
    EXPECT_EQ(::stat(dump_json.c_str(), &st), 0);
    return st.st_ino;
  };
  const ino_t after_stop = inode();
  ASSERT_TRUE(d->Stop().ok());
  EXPECT_EQ(inode(), after_stop);  // nothing changed: not replaced
  ASSERT_TRUE(d->Start().ok());
  ASSERT_TRUE(
      d->RecordForwardOutputs("Functional.relu.0.forward", DumpValue::List({F32(x, {2})})).ok());
  ASSERT_TRUE(d->Step().ok());
  EXPECT_NE(inode(), after_stop);  // the new output was written
  const JsonValue dump = ReadJson(dump_json);
  const JsonValue* entry = dump.Find("data")->Find("Functional.relu.0.forward");
  ASSERT_NE(entry, nullptr);
  EXPECT_NE(entry->Find("output"), nullptr);
  EXPECT_NE(entry->Find("input_args"), nullptr);
}

// Start() writes no JSON file (a sync per step for nothing): until Stop() the journal holds the
// step, and readers rebuild it from there; Stop() then writes every file of the step.
TEST_F(DumperTest, JsonFilesAreFirstWrittenAtStopAndReadersUseTheJournalBefore) {
  auto d = Open(R"(, "level": "mix")");
  std::vector<float> x = {1, 2};
  ASSERT_TRUE(d->Start().ok());
  const fs::path dir = d->rank_dir();
  ASSERT_TRUE(fs::is_directory(dir));
  ASSERT_TRUE(d->RecordForwardInputs("Functional.relu.0.forward", DumpValue::List({F32(x, {2})}),
                                     DumpValue::Dict({}))
                  .ok());
  for (const char* name : {"dump.json", "stack.json", "construct.json"}) {
    EXPECT_FALSE(fs::exists(dir / name)) << name;
  }
  auto live = LoadDumpJson(dir);
  ASSERT_TRUE(live.ok()) << live.error().ToString();
  EXPECT_TRUE(live->from_journal);
  EXPECT_NE(live->text.find("\"Functional.relu.0.forward\": {"), std::string::npos);
  ASSERT_TRUE(d->Stop().ok());
  for (const char* name : {"dump.json", "stack.json", "construct.json"}) {
    EXPECT_TRUE(fs::is_regular_file(dir / name)) << name;
  }
  // Their sync runs in the background; once it is done, the journal says they are current.
  ASSERT_TRUE(d->Flush().ok());
  auto written = LoadDumpJson(dir);
  ASSERT_TRUE(written.ok());
  EXPECT_FALSE(written->from_journal);
  EXPECT_EQ(written->text, live->text);
}

// async_dump: leaves whose statistics are still on the device wait, with every record after them,
// until ResolvePending; then they are journaled and merged in record order.
// `with_data`: its data comes with ResolvePending too (host copies of md5 and tensor dumps).
DumpValue Pending(int64_t slot, std::vector<int64_t> shape, bool with_data = false) {
  TensorArg a;
  a.view.dtype = DType::kF32;
  a.view.shape = std::move(shape);
  a.view.strides = {1};
  a.pending_slot = slot;
  a.pending_data = with_data;
  return DumpValue::Tensor(std::move(a));
}

TEST_F(DumperTest, PendingDeviceStatisticsAreFilledInRecordOrder) {
  auto d = Open(R"(, "async_dump": true)");
  const fs::path dir = root_ / "step0" / "rank0";
  std::vector<float> host = {1, 2};
  ASSERT_TRUE(d->Start().ok());
  ASSERT_TRUE(d->RecordForward("Functional.a.0.forward", DumpValue::List({Pending(0, {2})}),
                               DumpValue::Dict({}), DumpValue::List({Pending(1, {2})}))
                  .ok());
  // A host tensor recorded after a pending one waits too, so that the order stays.
  ASSERT_TRUE(d->RecordForward("Functional.b.0.forward", DumpValue::List({F32(host, {2})}),
                               DumpValue::Dict({}), DumpValue::List({F32(host, {2})}))
                  .ok());
  EXPECT_EQ(d->pending_records(), 4);
  EXPECT_EQ(ReadDumpJournal(dir / "dump.json.journal")->records, 0);

  using V = std::vector<JsonValue>;
  ASSERT_TRUE(d->ResolvePending({{V{JsonValue::Double(3), JsonValue::Double(-1),
                                    JsonValue::Double(1), JsonValue::Double(3.1622776601683795)}},
                                 {V{JsonValue::Double(9), JsonValue::Double(0),
                                    JsonValue::Double(4), JsonValue::Double(9.5)}}})
                  .ok());
  EXPECT_EQ(d->pending_records(), 0);
  EXPECT_EQ(ReadDumpJournal(dir / "dump.json.journal")->records, 4);
  ASSERT_TRUE(d->Stop().ok());
  JsonValue dump = ReadJson(dir / "dump.json");
  std::vector<std::string> names;
  for (const auto& m : dump.Find("data")->object()) names.push_back(m.first);
  EXPECT_EQ(names, (std::vector<std::string>{"Functional.a.0.forward", "Functional.b.0.forward"}));
  const JsonValue* a = dump.Find("data")->Find("Functional.a.0.forward");
  EXPECT_EQ(ToJson(a->Find("input_args")->array()[0], -1),
            R"({"type":"torch.Tensor","dtype":"torch.float32","shape":[2],"Max":3.0,"Min":-1.0,)"
            R"("Mean":1.0,"Norm":3.1622776601683795,"requires_grad":false})");
  EXPECT_EQ(a->Find("output")->array()[0].Find("Norm")->double_value(), 9.5);
  EXPECT_EQ(dump.Find("data")
                ->Find("Functional.b.0.forward")
                ->Find("output")
                ->array()[0]
                .Find("Max")
                ->double_value(),
            2.0);
}

TEST_F(DumperTest, UnresolvedPendingStatisticsAreWrittenAsNullAndAMissingSlotIsAnError) {
  auto d = Open(R"(, "async_dump": true)");
  ASSERT_TRUE(d->Start().ok());
  ASSERT_TRUE(d->RecordForward("Functional.a.0.forward", DumpValue::List({Pending(0, {2})}),
                               DumpValue::Dict({}), DumpValue::List({Pending(1, {2})}))
                  .ok());
  Status st = d->ResolvePending({{{JsonValue::Int(1), JsonValue::Int(0)}}});  // slot 1 missing
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("slot 1"), std::string::npos) << st.message();
  ASSERT_TRUE(d->RecordForward("Functional.b.0.forward", DumpValue::List({Pending(0, {2})}),
                               DumpValue::Dict({}), DumpValue::List({}))
                  .ok());
  ASSERT_TRUE(d->Stop().ok());  // without ResolvePending
  const std::string text = ToJson(ReadJson(root_ / "step0" / "rank0" / "dump.json"), -1);
  EXPECT_EQ(text.find("pending_slot"), std::string::npos) << text;
  JsonValue dump = ReadJson(root_ / "step0" / "rank0" / "dump.json");
  const JsonValue& leaf =
      dump.Find("data")->Find("Functional.b.0.forward")->Find("input_args")->array()[0];
  EXPECT_TRUE(leaf.Find("Max")->is_null() && leaf.Find("Norm")->is_null());
}

// async_dump with data: the host copies arrive with the statistics; the files and md5s are made
// then, before the records are journaled, and equal those of a record made with the data.
TEST_F(DumperTest, PendingDataGetsItsFileAndMd5WhenResolved) {
  for (const char* layout : {"files", "packed"}) {
    SCOPED_TRACE(layout);
    std::filesystem::remove_all(root_);
    auto d = Open(std::string(R"(, "task": "tensor", "async_dump": true, "dump_layout": ")") +
                  layout + R"(", "tensor": {"summary_mode": "md5"})");
    const fs::path dir = root_ / "step0" / "rank0";
    std::vector<float> x = {1, -2, 3, 4};
    ASSERT_TRUE(d->Start().ok());
    ASSERT_TRUE(d->RecordForward("Functional.a.0.forward", DumpValue::List({Pending(0, {4}, true)}),
                                 DumpValue::Dict({}), DumpValue::List({F32(x, {4})}))
                    .ok());
    EXPECT_EQ(ReadDumpJournal(dir / "dump.json.journal")->records, 0);
    using V = std::vector<JsonValue>;
    PendingValues slot{V{JsonValue::Double(4), JsonValue::Double(-2), JsonValue::Double(1.5),
                         JsonValue::Double(5.477225575051661)},
                       TensorView::Contiguous(x.data(), DType::kF32, {4})};
    ASSERT_TRUE(d->ResolvePending({slot}).ok());
    x.assign(4, 0.0f);  // the view is read during the call only
    ASSERT_TRUE(d->Stop().ok());
    JsonValue dump = ReadJson(dir / "dump.json");
    const JsonValue* a = dump.Find("data")->Find("Functional.a.0.forward");
    const JsonValue& in = a->Find("input_args")->array()[0];
    const JsonValue& out = a->Find("output")->array()[0];
    EXPECT_EQ(in.Find("data_name")->string_value(), "Functional.a.0.forward.input.0.pt");
    EXPECT_EQ(in.Find("Max")->double_value(), 4.0);
    ASSERT_TRUE(in.Find("md5")->is_string() && out.Find("md5")->is_string());
    EXPECT_EQ(in.Find("md5")->string_value(), out.Find("md5")->string_value());  // same bytes
    auto file = detail::ReadDataFile(dir / "dump_tensor_data", "Functional.a.0.forward.input.0.pt");
    ASSERT_TRUE(file.ok()) << file.error().ToString();
    const TensorView& view = file->tensors.at(0).tensor.view();
    ASSERT_EQ(view.numel(), 4);
    std::vector<float> written(4);
    std::memcpy(written.data(), view.first(), sizeof(float) * 4);
    EXPECT_EQ(written, (std::vector<float>{1, -2, 3, 4}));
  }
}

TEST_F(DumperTest, PendingDataThatNeverCameLeavesNoFileName) {
  auto d = Open(R"(, "task": "tensor", "async_dump": true, "tensor": {"summary_mode": "md5"})");
  ASSERT_TRUE(d->Start().ok());
  ASSERT_TRUE(d->RecordForward("Functional.a.0.forward",
                               DumpValue::List({Pending(0, {2}, true), Pending(1, {2}, true)}),
                               DumpValue::Dict({}), DumpValue::List({}))
                  .ok());
  // Slot 0 comes without data (a meta tensor); slot 1 never comes (Stop without it).
  ASSERT_TRUE(d->ResolvePending({{{JsonValue::Int(1), JsonValue::Int(0)}}}).code() ==
              ErrorCode::kInvalidArgument);
  ASSERT_TRUE(d->Stop().ok());
  JsonValue dump = ReadJson(root_ / "step0" / "rank0" / "dump.json");
  const std::string text = ToJson(dump, -1);
  EXPECT_EQ(text.find("data_name"), std::string::npos) << text;
  EXPECT_EQ(text.find("pending"), std::string::npos) << text;
  const auto& args = dump.Find("data")->Find("Functional.a.0.forward")->Find("input_args")->array();
  EXPECT_EQ(args[0].Find("Max")->int_value(), 1);
  EXPECT_TRUE(args[0].Find("md5")->is_null() && args[1].Find("md5")->is_null());
  EXPECT_FALSE(fs::exists(root_ / "step0" / "rank0" / "dump_tensor_data" /
                          "Functional.a.0.forward.input.0.pt"));
}

TEST_F(DumperTest, Bf16StatisticsAreReportedAtBf16PrecisionAndIntsBoolsScalarsFollowMsprobe) {
  auto d = Open("");
  ASSERT_TRUE(d->Start().ok());
  std::vector<uint16_t> bf(3);
  for (int i = 0; i < 3; ++i)
    bf[static_cast<size_t>(i)] = F32ToBF16(0.1f * static_cast<float>(i + 1));
  TensorArg b;
  b.view = TensorView::Contiguous(bf.data(), DType::kBF16, {3});
  std::vector<int64_t> ints = {5, -7, 9};
  TensorArg i64;
  i64.view = TensorView::Contiguous(ints.data(), DType::kI64, {3});
  std::vector<uint8_t> bools = {1, 0};
  TensorArg bl;
  bl.view = TensorView::Contiguous(bools.data(), DType::kBool, {2});
  float scalar = 2.5f;
  TensorArg s;
  s.view = TensorView::Contiguous(&scalar, DType::kF32, {});
  ASSERT_TRUE(
      d->RecordForwardOutputs("Torch.x.0.forward",
                              DumpValue::List({DumpValue::Tensor(b), DumpValue::Tensor(i64),
                                               DumpValue::Tensor(bl), DumpValue::Tensor(s)}))
          .ok());
  ASSERT_TRUE(d->Stop().ok());
  JsonValue dump = ReadJson(root_ / "step0" / "rank0" / "dump.json");
  const auto& out = dump.Find("data")->Find("Torch.x.0.forward")->Find("output")->array();
  const double mean = out[0].Find("Mean")->double_value();
  EXPECT_EQ(mean, RoundToDType(DType::kBF16, mean));  // a bf16 value
  EXPECT_EQ(out[1].Find("Max")->kind(), JsonValue::Kind::kInt);
  EXPECT_EQ(out[1].Find("Min")->int_value(), -7);
  EXPECT_TRUE(out[1].Find("Mean")->is_null());
  EXPECT_TRUE(out[2].Find("Max")->bool_value());   // any
  EXPECT_FALSE(out[2].Find("Min")->bool_value());  // all
  for (const char* k : {"Max", "Min", "Mean", "Norm"})
    EXPECT_EQ(out[3].Find(k)->double_value(), 2.5);
}

TEST_F(DumperTest, SixtyFourBitIntegerExtremesAreExact) {
  auto d = Open("");
  ASSERT_TRUE(d->Start().ok());
  // INT64_MAX - 1 is no double; every u64 here is above INT64_MAX, the min included.
  std::vector<int64_t> ints = {std::numeric_limits<int64_t>::max() - 1, -3};
  TensorArg i64;
  i64.view = TensorView::Contiguous(ints.data(), DType::kI64, {2});
  std::vector<uint64_t> uints = {(uint64_t{1} << 63) + 4096, std::numeric_limits<uint64_t>::max()};
  TensorArg u64;
  u64.view = TensorView::Contiguous(uints.data(), DType::kU64, {2});
  ASSERT_TRUE(
      d->RecordForwardOutputs("Torch.x.0.forward",
                              DumpValue::List({DumpValue::Tensor(i64), DumpValue::Tensor(u64)}))
          .ok());
  ASSERT_TRUE(d->Stop().ok());
  JsonValue dump = ReadJson(root_ / "step0" / "rank0" / "dump.json");
  const auto& out = dump.Find("data")->Find("Torch.x.0.forward")->Find("output")->array();
  EXPECT_EQ(out[0].Find("Max")->int_value(), std::numeric_limits<int64_t>::max() - 1);
  EXPECT_EQ(out[0].Find("Min")->int_value(), -3);
  // Past int64 the value is a double (what JSON readers hold it as), never a negative int.
  EXPECT_EQ(out[1].Find("Max")->double_value(), 0x1p64);
  EXPECT_EQ(out[1].Find("Min")->double_value(), 0x1p63 + 4096);
}

TEST_F(DumperTest, NonFiniteStatisticsAreBareTokens) {
  auto d = Open("");
  ASSERT_TRUE(d->Start().ok());
  const float inf = std::numeric_limits<float>::infinity();
  ASSERT_TRUE(d->RecordForwardOutputs("Tensor.__mul__.0.forward",
                                      DumpValue::List({F32({inf, -inf, 1}, {3})}))
                  .ok());
  ASSERT_TRUE(d->Stop().ok());
  std::ifstream in(root_ / "step0" / "rank0" / "dump.json");
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_NE(s.str().find("\"Max\": Infinity,"), std::string::npos);
  EXPECT_NE(s.str().find("\"Min\": -Infinity,"), std::string::npos);
  EXPECT_NE(s.str().find("\"Mean\": NaN,"), std::string::npos);
}

// What the Python layer asks before it copies a device tensor to the host: only entries whose
// records use the data (a tensor_list names some of them) get a copy.
TEST_F(DumperTest, NeedsDataOnlyForEntriesThatUseIt) {
  EXPECT_FALSE(Open("")->NeedsData("Functional.relu.0.forward"));
  auto listed = Open(R"(, "statistics": {"tensor_list": ["relu"]})");
  EXPECT_TRUE(listed->NeedsData("Functional.relu.0.forward"));
  EXPECT_FALSE(listed->NeedsData("Functional.linear.0.forward"));
  listed.reset();
  EXPECT_TRUE(Open(R"(, "statistics": {"summary_mode": "md5"})")->NeedsData("Torch.add.0.forward"));
  EXPECT_TRUE(Open(R"(, "task": "tensor")")->NeedsData("Torch.add.0.forward"));
}

TEST_F(DumperTest, Md5IsCrc32OfTheBytes) {
  auto d = Open(R"(, "statistics": {"summary_mode": "md5"})");
  ASSERT_TRUE(d->Start().ok());
  // zlib.crc32(b"123456789") == 0xcbf43926, the CRC-32 check value.
  std::vector<uint8_t> bytes = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  TensorArg a;
  a.view = TensorView::Contiguous(bytes.data(), DType::kU8, {9});
  ASSERT_TRUE(
      d->RecordForwardOutputs("Torch.y.0.forward", DumpValue::List({DumpValue::Tensor(a)})).ok());
  ASSERT_TRUE(d->Stop().ok());
  JsonValue dump = ReadJson(root_ / "step0" / "rank0" / "dump.json");
  const JsonValue& leaf = dump.Find("data")->Find("Torch.y.0.forward")->Find("output")->array()[0];
  EXPECT_EQ(leaf.Find("md5")->string_value(), "cbf43926");
  EXPECT_EQ(leaf.object().back().first, "md5");
}

TEST_F(DumperTest, StepFilterScopeAndDataMode) {
  auto d =
      Open(R"(, "step": [1], "statistics": {"scope": ["Torch.b.0.forward", "Torch.c.0.forward"],
                    "data_mode": ["forward", "output"]})",
           std::nullopt);
  std::vector<float> x = {1};
  for (int step = 0; step < 2; ++step) {
    ASSERT_TRUE(d->Start().ok());
    for (const char* n :
         {"Torch.a.0.forward", "Torch.b.0.forward", "Torch.c.0.forward", "Torch.e.0.forward"}) {
      ASSERT_TRUE(d->RecordForward(n, DumpValue::List({F32(x, {1})}), DumpValue::Dict({}),
                                   DumpValue::List({F32(x, {1})}))
                      .ok());
    }
    ASSERT_TRUE(d->RecordBackward("Torch.b.0.backward", DumpValue::List({F32(x, {1})}),
                                  DumpValue::List({F32(x, {1})}))
                    .ok());
    ASSERT_TRUE(d->Step().ok());
  }
  EXPECT_FALSE(fs::exists(root_ / "step0"));  // step 0 not selected: nothing written
  const fs::path dir = root_ / "step1" / ("proc" + std::to_string(::getpid()));
  JsonValue dump = ReadJson(dir / "dump.json");
  std::vector<std::string> names;
  for (const auto& m : dump.Find("data")->object()) {
    names.push_back(m.first);
    std::vector<std::string> parts;
    for (const auto& p : m.second.object()) parts.push_back(p.first);
    EXPECT_EQ(parts, std::vector<std::string>{"output"}) << m.first;  // forward outputs only
  }
  EXPECT_EQ(names, (std::vector<std::string>{"Torch.b.0.forward", "Torch.c.0.forward"}));
}

TEST_F(DumperTest, ListSelectsByNameAndEverythingInsideAListedModule) {
  auto d = Open(R"(, "level": "mix", "statistics": {"list": ["relu", "Module.fc1"]})");
  std::vector<float> x = {1};
  const DumpValue t = DumpValue::List({F32(x, {1})});
  const DumpValue none = DumpValue::Dict({});
  ASSERT_TRUE(d->Start().ok());
  ASSERT_TRUE(d->RecordForward("Functional.conv2d.0.forward", t, none, t).ok());
  ASSERT_TRUE(d->RecordForward("Functional.relu.0.forward", t, none, t).ok());
  d->Enter("Module.fc1.Linear.forward.0");
  ASSERT_TRUE(d->RecordForward("Functional.linear.0.forward", t, none, t).ok());
  ASSERT_TRUE(d->RecordForward("Module.fc1.Linear.forward.0", t, none, t).ok());
  ASSERT_TRUE(d->RecordForward("Functional.linear.1.forward", t, none, t).ok());
  ASSERT_TRUE(d->RecordBackward("Functional.linear.0.backward", t, t).ok());
  ASSERT_TRUE(d->RecordBackward("Functional.conv2d.0.backward", t, t).ok());
  ASSERT_TRUE(
      d->RecordParameterGrad("Module.fc1.Linear.parameters_grad.0", "weight", F32(x, {1})).ok());
  ASSERT_TRUE(d->Stop().ok());
  JsonValue dump = ReadJson(root_ / "step0" / "rank0" / "dump.json");
  std::vector<std::string> names;
  for (const auto& m : dump.Find("data")->object()) names.push_back(m.first);
  EXPECT_EQ(names,
            (std::vector<std::string>{"Functional.relu.0.forward", "Functional.linear.0.forward",
                                      "Module.fc1.Linear.forward.0", "Functional.linear.0.backward",
                                      "Module.fc1.Linear.parameters_grad.0"}));
}

TEST_F(DumperTest, OverflowCheckKeepsOnlyOverflowingOpsAndStopsAfterOverflowNums) {
  auto d = Open(R"(, "task": "overflow_check", "overflow_check": {"overflow_nums": 1})");
  const float inf = std::numeric_limits<float>::infinity();
  ASSERT_TRUE(d->Start().ok());
  d->AddStack("Tensor.__mul__.0.forward", {"File /site-packages/torch/x.py, line 1, in f, \n a",
                                           "File train.py, line 9, in forward, \n q * scale"});
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, float>>{{"Torch.ok.0.forward", 1.0f},
                                                  {"Tensor.__mul__.0.forward", inf},
                                                  {"Torch.later.0.forward", inf}}) {
    ASSERT_TRUE(
        d->RecordForwardInputs(name, DumpValue::List({F32({1, 2}, {2})}), DumpValue::Dict({}))
            .ok());
    ASSERT_TRUE(d->RecordForwardOutputs(name, DumpValue::List({F32({value, 2}, {2})})).ok());
  }
  EXPECT_FALSE(d->active());  // overflow_nums reached
  auto report = d->TakeOverflowReport();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->name, "Tensor.__mul__.0.forward");
  EXPECT_NE(report->report.find("output.0: torch.float32 [2] Max=Infinity"), std::string::npos)
      << report->report;
  EXPECT_NE(report->report.find("source: File train.py, line 9"), std::string::npos)
      << report->report;
  EXPECT_FALSE(d->TakeOverflowReport().has_value());
  ASSERT_TRUE(d->Stop().ok());
  JsonValue dump = ReadJson(root_ / "step0" / "rank0" / "dump.json");
  ASSERT_EQ(dump.Find("data")->object().size(), 1u);
  const JsonValue& e = dump.Find("data")->object()[0].second;
  EXPECT_NE(e.Find("input_args"), nullptr);
  EXPECT_NE(e.Find("output"), nullptr);
}

TEST_F(DumperTest, JournalRebuildsEverythingWhenDumpJsonIsMissingOrOlder) {
  std::vector<float> x = {1, 2};
  fs::path dir;
  {
    auto d = Open(R"(, "level": "mix")");
    ASSERT_TRUE(d->Start().ok());
    ASSERT_TRUE(d->RecordForward("Module.a.A.forward.0", DumpValue::List({F32(x, {2})}),
                                 DumpValue::Dict({}), DumpValue::List({F32(x, {2})}))
                    .ok());
    d->AddConstruct("Module.a.A.forward.0", std::nullopt);
    ASSERT_TRUE(d->Stop().ok());
    ASSERT_TRUE(d->Flush().ok());
    dir = d->rank_dir();
    auto current = LoadDumpJson(dir);
    ASSERT_TRUE(current.ok());
    EXPECT_FALSE(current->from_journal);
    ASSERT_TRUE(d->Start().ok());
    ASSERT_TRUE(d->RecordForwardInputs("Functional.b.0.forward", DumpValue::List({F32(x, {2})}),
                                       DumpValue::Dict({}))
                    .ok());
    // Simulate a crash: the Dumper is never stopped; its journal already holds the record.
    std::ifstream in(dir / "dump.json.journal");
    std::stringstream s;
    s << in.rdbuf();
    std::string content = s.str();
    // The live journal is a mapping grown in steps: its unused tail is zero bytes.
    ASSERT_NE(content.find('\0'), std::string::npos);
    std::ofstream(root_ / "journal_raw", std::ios::binary) << content;
    // A kill in the middle of copying a line leaves it cut, followed by zeros.
    content.resize(content.find('\0'));
    std::ofstream(root_ / "journal_copy", std::ios::binary)
        << content << R"({"k":"d","n":"cut)" << std::string(64, '\0');
  }
  auto raw = ReadDumpJournal(root_ / "journal_raw");
  ASSERT_TRUE(raw.ok()) << raw.error().ToString();
  EXPECT_EQ(raw->records, 3);
  EXPECT_FALSE(raw->truncated_tail);
  fs::copy_file(root_ / "journal_copy", dir / "dump.json.journal",
                fs::copy_options::overwrite_existing);
  auto loaded = LoadDumpJson(dir);
  ASSERT_TRUE(loaded.ok()) << loaded.error().ToString();
  EXPECT_TRUE(loaded->from_journal);
  EXPECT_TRUE(loaded->truncated_tail);
  EXPECT_NE(loaded->text.find("\"Functional.b.0.forward\": {"), std::string::npos);
  EXPECT_NE(loaded->text.find("\"Module.a.A.forward.0\": {"), std::string::npos);
  auto recovered = ReadDumpJournal(dir / "dump.json.journal");
  ASSERT_TRUE(recovered.ok());
  EXPECT_EQ(recovered->records, 3);  // inputs and outputs of A, inputs of b
  EXPECT_EQ(ToJson(recovered->construct, -1), R"({"Module.a.A.forward.0":null})");
  fs::remove(dir / "dump.json");
  auto no_dump = LoadDumpJson(dir);
  ASSERT_TRUE(no_dump.ok());
  EXPECT_TRUE(no_dump->from_journal);
}

TEST_F(DumperTest, CorruptJournalLineIsReportedWithItsNumber) {
  fs::create_directories(root_);
  std::ofstream(root_ / "dump.json.journal")
      << "{\"k\":\"h\",\"task\":\"statistics\"}\nnot json\n{\"k\":\"w\"}\n";
  auto r = ReadDumpJournal(root_ / "dump.json.journal");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(r.error().message().find("journal line 2"), std::string::npos);
}

// A finished dump's readers learn from the journal's last line alone that dump.json is current:
// its earlier lines are not parsed (a damaged one is not reported), while a marker that is not a
// whole last line sends them to the full read.
TEST_F(DumperTest, JournalEndingInTheWrittenMarkerIsNotParsed) {
  fs::create_directories(root_);
  std::ofstream(root_ / "dump.json") << R"({"task": "statistics", "level": "L1", "data": {}})";
  std::ofstream(root_ / "dump.json.journal")
      << "{\"k\":\"h\",\"task\":\"statistics\"}\nnot json\n{\"k\":\"w\"}\n";
  auto current = LoadDumpJson(root_);
  ASSERT_TRUE(current.ok()) << current.error().ToString();
  EXPECT_FALSE(current->from_journal);
  EXPECT_NE(current->text.find("\"level\": \"L1\""), std::string::npos);

  for (const char* tail : {"not json\nx{\"k\":\"w\"}\n", "not json\n{\"k\":\"w\"}",
                           "not json\n{\"k\":\"w\"}\n{\"k\":\"g\",\"n\":\"a\",\"v\":1}\n"}) {
    std::ofstream(root_ / "dump.json.journal") << "{\"k\":\"h\",\"task\":\"statistics\"}\n" << tail;
    auto parsed = LoadDumpJson(root_);
    ASSERT_FALSE(parsed.ok()) << tail;
    EXPECT_NE(parsed.error().message().find("journal line 2"), std::string::npos) << tail;
  }
}

std::string ReadText(const fs::path& p);

// The background sync's marker: appended, open or closed, only to an unchanged journal.
TEST_F(DumperTest, TheWrittenMarkerGoesOnlyToAnUnchangedJournal) {
  fs::create_directories(root_);
  const fs::path path = root_ / "dump.json.journal";
  DumpJournalWriter journal;
  ASSERT_TRUE(journal.Open(path).ok());
  ASSERT_TRUE(journal.AppendHeader(JsonValue::MakeObject()).ok());
  const uint64_t written_at = journal.size();
  ASSERT_TRUE(journal.AppendDebug("a", JsonValue::Int(1)).ok());
  ASSERT_TRUE(journal.AppendWrittenIfUnchanged(path, written_at).ok());  // changed: none
  ASSERT_TRUE(journal.AppendWrittenIfUnchanged(path, journal.size()).ok());
  const uint64_t marked_at = journal.size();
  EXPECT_GT(marked_at, written_at);
  ASSERT_TRUE(journal.AppendDebug("b", JsonValue::Int(2)).ok());
  const uint64_t closed_at = journal.size();
  journal.Close();
  ASSERT_TRUE(journal.AppendWrittenIfUnchanged(path, marked_at).ok());  // changed: none
  EXPECT_EQ(fs::file_size(path), closed_at);
  ASSERT_TRUE(journal.AppendWrittenIfUnchanged(path, closed_at).ok());  // through the file
  auto read = ReadDumpJournal(path);
  ASSERT_TRUE(read.ok()) << read.error().ToString();
  EXPECT_TRUE(read->dump_json_current);
  EXPECT_EQ(ReadText(path).substr(closed_at), "{\"k\":\"w\"}\n");
  // The one appended while open, after "a"; none after the header alone.
  EXPECT_EQ(ReadText(path).find("{\"k\":\"w\"}\n"), marked_at - 10);
}

// Cut() leaves the journal at its length while open (the capture cuts it before a step's sync):
// records and the written marker still append after it, and Close() keeps the length.
TEST_F(DumperTest, ACutJournalIsItsLengthAndStillTakesRecords) {
  fs::create_directories(root_);
  const fs::path path = root_ / "dump.json.journal";
  DumpJournalWriter journal;
  ASSERT_TRUE(journal.Open(path).ok());
  ASSERT_TRUE(journal.AppendHeader(JsonValue::MakeObject()).ok());
  ASSERT_TRUE(journal.AppendDebug("a", JsonValue::Int(1)).ok());
  EXPECT_GT(fs::file_size(path), journal.size());  // mapped: grown ahead of its records
  ASSERT_TRUE(journal.Cut().ok());
  const uint64_t cut_at = journal.size();
  EXPECT_EQ(fs::file_size(path), cut_at);
  ASSERT_TRUE(journal.Cut().ok());  // twice: nothing changes
  EXPECT_EQ(fs::file_size(path), cut_at);
  // The marker goes through the file, without growing it.
  ASSERT_TRUE(journal.AppendWrittenIfUnchanged(path, cut_at).ok());
  const uint64_t marked_at = journal.size();
  EXPECT_EQ(marked_at, cut_at + 10);
  EXPECT_EQ(fs::file_size(path), marked_at);
  auto marked = ReadDumpJournal(path);
  ASSERT_TRUE(marked.ok()) << marked.error().ToString();
  EXPECT_TRUE(marked->dump_json_current);
  // A record after the cut maps the file again, after the marker.
  ASSERT_TRUE(journal.AppendDebug("b", JsonValue::Int(2)).ok());
  const uint64_t closed_at = journal.size();
  EXPECT_GT(closed_at, marked_at);
  journal.Close();
  EXPECT_EQ(fs::file_size(path), closed_at);
  auto read = ReadDumpJournal(path);
  ASSERT_TRUE(read.ok()) << read.error().ToString();
  EXPECT_FALSE(read->dump_json_current);  // "b" came after the marker
  EXPECT_EQ(read->debug.Find("a")->int_value(), 1);
  EXPECT_EQ(read->debug.Find("b")->int_value(), 2);
}

// A journal is first mapped at about the size the writer's previous one reached (Grow): a step
// that records far more than the last one, or far less, still keeps every record, and the file
// of a smaller step is mapped smaller than the first step's 1 MiB.
TEST_F(DumperTest, AJournalSizedByTheLastOneKeepsEveryRecordOfALargerOrSmallerStep) {
  fs::create_directories(root_);
  DumpJournalWriter journal;
  const std::string value(1000, 'x');
  const auto write_step = [&](const fs::path& path, int records) -> uint64_t {
    EXPECT_TRUE(journal.Open(path).ok());
    EXPECT_TRUE(journal.AppendHeader(JsonValue::MakeObject()).ok());
    for (int i = 0; i < records; ++i) {
      EXPECT_TRUE(journal.AppendDebug("r" + std::to_string(i), JsonValue::String(value)).ok());
    }
    const uint64_t mapped = fs::file_size(path);  // grown ahead of its records
    const uint64_t length = journal.size();
    journal.Close();
    EXPECT_EQ(fs::file_size(path), length);  // cut to its records
    auto read = ReadDumpJournal(path);
    EXPECT_TRUE(read.ok()) << read.error().ToString();
    if (read.ok()) {
      EXPECT_EQ(read->debug.object().size(), static_cast<size_t>(records)) << path;
      const JsonValue* last = read->debug.Find("r" + std::to_string(records - 1));
      EXPECT_TRUE(last != nullptr && last->string_value() == value) << path;
    }
    return mapped;
  };
  const uint64_t first = write_step(root_ / "step0.journal", 100);    // ~100 KB in 1 MiB
  const uint64_t larger = write_step(root_ / "step1.journal", 3000);  // ~3 MB: grown past it
  const uint64_t smaller = write_step(root_ / "step2.journal", 20);   // ~20 KB
  const uint64_t sized = write_step(root_ / "step3.journal", 20);
  EXPECT_EQ(first, uint64_t{1} << 20);
  EXPECT_GE(larger, uint64_t{3000} * 1000);
  EXPECT_EQ(smaller, uint64_t{4} << 20);  // sized by the 3 MB step before it
  EXPECT_EQ(sized, uint64_t{64} << 10);   // sized by the 20 KB step before it
}

std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  return text.substr(0, text.find('\0'));  // a live journal's mapping ends in zeros
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// A stack handed over as a shared pointer (the Python capture's per-call-site cache) is journaled
// in full once per step and referenced after that; stack.json and the journal's rebuild of it are
// those of the same stacks handed over as vectors.
TEST_F(DumperTest, SharedStacksAreJournaledOnceAndGiveTheSameStackJson) {
  using Frames = std::vector<std::string>;
  const auto p = std::make_shared<const Frames>(Frames{"File a.py, line 1, in f, \n x(\"q\")"});
  const auto q = std::make_shared<const Frames>(Frames{"File b.py, line 2, in g, \n y", "z"});
  auto shared = Open("");
  auto plain = Open("", 1);  // rank 1: its own folder
  const std::vector<std::pair<std::string, std::shared_ptr<const Frames>>> calls = {
      {"A.0.forward", p}, {"A.1.forward", p}, {"B.0.forward", q}, {"A.2.forward", p}};
  for (Dumper* d : {shared.get(), plain.get()}) ASSERT_TRUE(d->Start().ok());
  for (const auto& [name, frames] : calls) {
    shared->AddStack(name, frames);
    plain->AddStack(name, *frames);
  }
  // A vector equal to a shared stack: written in full (as before), filed under the same group.
  shared->AddStack("C.0.forward", Frames(*q));
  plain->AddStack("C.0.forward", Frames(*q));
  shared->AddStack("B.1.forward", q);
  plain->AddStack("B.1.forward", *q);
  const std::string journal = ReadText(shared->rank_dir() / "dump.json.journal");
  EXPECT_EQ(Count(journal, R"("k":"s")"), 6u);
  // Each shared stack once in full, and the vector's.
  EXPECT_EQ(Count(journal, R"("f":[)"), 3u) << journal;
  EXPECT_EQ(Count(journal, R"("g":)"), 3u) << journal;
  auto rebuilt = ReadDumpJournal(shared->rank_dir() / "dump.json.journal");  // before Stop
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.error().ToString();
  for (Dumper* d : {shared.get(), plain.get()}) ASSERT_TRUE(d->Stop().ok());
  const std::string stack_json = ReadText(shared->rank_dir() / "stack.json");
  EXPECT_EQ(stack_json, ReadText(plain->rank_dir() / "stack.json"));
  EXPECT_EQ(ToJson(rebuilt->stack, -1), ToJson(ReadJson(shared->rank_dir() / "stack.json"), -1));
  EXPECT_NE(stack_json.find("A.2.forward"), std::string::npos);
  // The next step's journal starts afresh: the first record at a stack writes it in full.
  ASSERT_TRUE(shared->Step().ok());
  ASSERT_TRUE(shared->Start().ok());
  shared->AddStack("A.0.forward", p);
  EXPECT_EQ(Count(ReadText(shared->rank_dir() / "dump.json.journal"), R"("f":[)"), 1u);
}

TEST_F(DumperTest, StackReferenceToNoEarlierStackIsCorrupt) {
  fs::create_directories(root_);
  std::ofstream(root_ / "dump.json.journal")
      << "{\"k\":\"h\",\"task\":\"statistics\"}\n{\"k\":\"s\",\"n\":\"a\",\"f\":[\"x\"]}\n"
      << "{\"k\":\"s\",\"n\":\"b\",\"g\":0}\n{\"k\":\"s\",\"n\":\"c\",\"g\":1}\n";
  auto r = ReadDumpJournal(root_ / "dump.json.journal");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(r.error().message().find("journal line 4"), std::string::npos) << r.error().message();
}

TEST_F(DumperTest, TensorTaskWritesPtFilesNamedLikeMsprobe) {
  auto d = Open(R"(, "task": "tensor")");
  std::vector<float> x = {1, 2, 3};
  ASSERT_TRUE(d->Start().ok());
  ASSERT_TRUE(d->RecordForwardInputs("Tensor.add_.0.forward",
                                     DumpValue::List({F32(x, {3}), F32(x, {3})}),
                                     DumpValue::Dict({{"other", F32(x, {3})}}))
                  .ok());
  ASSERT_TRUE(
      d->RecordParameterGrad("Module.fc1.Linear.parameters_grad.0", "weight", F32(x, {3})).ok());
  ASSERT_TRUE(d->Stop().ok());
  const fs::path data = root_ / "step0" / "rank0" / "dump_tensor_data";
  for (const char* f :
       {"Tensor.add_.0.forward.input.0.pt", "Tensor.add_.0.forward.input.1.pt",
        "Tensor.add_.0.forward.kwargs.other.pt", "Module.fc1.Linear.parameters_grad.0.weight.pt"}) {
    EXPECT_TRUE(fs::exists(data / f)) << f;
  }
}

// The values a dump's tensor file holds, read back as numprobe's readers read them.
std::vector<float> ReadF32(const fs::path& tensor_dir, const std::string& name) {
  auto file = detail::ReadDataFile(tensor_dir, name);
  EXPECT_TRUE(file.ok()) << name << ": " << (file.ok() ? "" : file.error().ToString());
  if (!file.ok()) return {};
  const TensorView& view = file->tensors.at(0).tensor.view();
  std::vector<float> values(static_cast<size_t>(view.numel()));
  std::memcpy(values.data(), view.first(), values.size() * sizeof(float));
  return values;
}

ino_t Inode(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_ino;
}

// A tensor recorded again in the step (an op's output that is the next op's input) is a hard
// link to its first file; the same bytes under another shape or dtype, other bytes, a name given
// new bytes, and the next step's folder all get files of their own, each read back exactly.
TEST_F(DumperTest, TensorRecordedAgainInTheStepIsAHardLinkToItsFirstFile) {
  auto d = Open(R"(, "task": "tensor")");
  std::vector<float> x = {1, 2, 3, 4};
  std::vector<float> y = {1, 2, 3, 5};
  for (int step = 0; step < 2; ++step) {
    ASSERT_TRUE(d->Start().ok());
    ASSERT_TRUE(d->RecordForward("Functional.a.0.forward", DumpValue::List({F32(y, {4})}),
                                 DumpValue::Dict({}), DumpValue::List({F32(x, {4})}))
                    .ok());
    ASSERT_TRUE(d->RecordForward("Functional.b.0.forward",
                                 DumpValue::List({F32(x, {4}), F32(x, {2, 2})}),
                                 DumpValue::Dict({}), DumpValue::List({F32(y, {4})}))
                    .ok());
    ASSERT_TRUE(d->Step().ok());
  }
  const fs::path step0 = root_ / "step0" / "rank0" / "dump_tensor_data";
  const fs::path step1 = root_ / "step1" / "rank0" / "dump_tensor_data";
  const std::string a_out = "Functional.a.0.forward.output.0.pt";
  const std::string a_in = "Functional.a.0.forward.input.0.pt";
  const std::string b_in = "Functional.b.0.forward.input.0.pt";
  const std::string b_in_2x2 = "Functional.b.0.forward.input.1.pt";
  const std::string b_out = "Functional.b.0.forward.output.0.pt";
  EXPECT_EQ(Inode(step0 / b_in), Inode(step0 / a_out));      // x, recorded again
  EXPECT_EQ(Inode(step0 / b_out), Inode(step0 / a_in));      // y, recorded again
  EXPECT_NE(Inode(step0 / a_out), Inode(step0 / a_in));      // other bytes
  EXPECT_NE(Inode(step0 / b_in_2x2), Inode(step0 / a_out));  // x's bytes, another shape
  EXPECT_NE(Inode(step1 / a_out), Inode(step0 / a_out));     // each step's folder its own
  EXPECT_EQ(Inode(step1 / b_in), Inode(step1 / a_out));
  for (const fs::path& dir : {step0, step1}) {
    EXPECT_EQ(ReadF32(dir, b_in), x);
    EXPECT_EQ(ReadF32(dir, b_out), y);
    EXPECT_EQ(ReadF32(dir, b_in_2x2), x);
    auto shaped = detail::ReadDataFile(dir, b_in_2x2);
    ASSERT_TRUE(shaped.ok());
    EXPECT_EQ(shaped->tensors.at(0).tensor.view().shape, (std::vector<int64_t>{2, 2}));
  }
  // No temporary name is left beside them.
  for (const auto& e : fs::directory_iterator(step0)) {
    EXPECT_NE(e.path().filename().string()[0], '.') << e.path();
  }
}

// The tensor task takes a repeated tensor's statistics from its first record (the content key
// it queues files by): every leaf's statistics are still the ones the statistics task computes,
// for a repeat seen through a transposed (strided) view, for the same shape with other bytes,
// for the same bytes under another shape, and for a repeated tensor holding a NaN.
TEST_F(DumperTest, ARepeatedTensorsStatisticsAreTheStatisticsTasksOnes) {
  // x in C order, and the same values stored transposed: t^T over that storage is x.
  const std::vector<float> x = {0.1F, -2.5F, 3.25F, 7.0F, -0.3F, 1e-3F};
  const std::vector<float> xt = {0.1F, 7.0F, -2.5F, -0.3F, 3.25F, 1e-3F};
  const std::vector<float> y = {0.1F, -2.5F, 3.25F, 7.0F, -0.3F, 2e-3F};
  const std::vector<float> nan = {1.0F, std::nanf(""), -4.0F, 2.0F, 0.5F, 3.0F};
  TensorArg strided;
  strided.view = TensorView::Contiguous(xt.data(), DType::kF32, {2, 3});
  strided.view.strides = {1, 2};
  std::map<std::string, JsonValue> data;
  for (const char* task : {"tensor", "statistics"}) {
    const fs::path root = root_ / task;
    auto config = DumpConfig::Parse(R"({"dump_path": ")" + root.string() + R"(", "task": ")" +
                                    task + R"("})");
    ASSERT_TRUE(config.ok()) << config.error().ToString();
    DumperOptions options;
    options.rank = 0;
    auto d = Dumper::Open(*config, options);
    ASSERT_TRUE(d.ok());
    ASSERT_TRUE((*d)->Start().ok());
    ASSERT_TRUE((*d)->RecordForward("Functional.a.0.forward", DumpValue::List({F32(nan, {2, 3})}),
                                    DumpValue::Dict({}), DumpValue::List({F32(x, {2, 3})}))
                    .ok());
    ASSERT_TRUE((*d)->RecordForward("Functional.b.0.forward",
                                    DumpValue::List({DumpValue::Tensor(strided), F32(x, {3, 2})}),
                                    DumpValue::Dict({}),
                                    DumpValue::List({F32(y, {2, 3}), F32(nan, {2, 3})}))
                    .ok());
    ASSERT_TRUE((*d)->Stop().ok());
    data[task] = *ReadJson(root / "step0" / "rank0" / "dump.json").Find("data");
  }
  const auto leaf = [&](const char* task, const char* entry, const char* part, size_t i) {
    return data[task].Find(entry)->Find(part)->array().at(i);
  };
  for (const auto& [entry, part, i] : std::vector<std::tuple<const char*, const char*, size_t>>{
           {"Functional.a.0.forward", "input_args", 0},
           {"Functional.a.0.forward", "output", 0},
           {"Functional.b.0.forward", "input_args", 0},
           {"Functional.b.0.forward", "input_args", 1},
           {"Functional.b.0.forward", "output", 0},
           {"Functional.b.0.forward", "output", 1}}) {
    for (const char* stat : {"Max", "Min", "Mean", "Norm"}) {
      EXPECT_EQ(ToJson(*leaf("tensor", entry, part, i).Find(stat), -1),
                ToJson(*leaf("statistics", entry, part, i).Find(stat), -1))
          << entry << " " << part << "." << i << " " << stat;
    }
  }
  // The repeats were repeats (one file each), and y's statistics are its own.
  const fs::path files = root_ / "tensor" / "step0" / "rank0" / "dump_tensor_data";
  EXPECT_EQ(Inode(files / "Functional.b.0.forward.input.0.pt"),
            Inode(files / "Functional.a.0.forward.output.0.pt"));
  EXPECT_EQ(Inode(files / "Functional.b.0.forward.output.1.pt"),
            Inode(files / "Functional.a.0.forward.input.0.pt"));
  EXPECT_NE(ToJson(*leaf("tensor", "Functional.b.0.forward", "output", 0).Find("Mean"), -1),
            ToJson(*leaf("tensor", "Functional.a.0.forward", "output", 0).Find("Mean"), -1));
}

// A name recorded again with other bytes holds the new ones, and a later tensor with the old
// bytes is not linked to it: it links to nothing that no longer holds them.
TEST_F(DumperTest, ANameGivenNewBytesIsNoLongerALinkTargetForTheOldOnes) {
  auto d = Open(R"(, "task": "tensor")");
  std::vector<float> x = {1, 2};
  std::vector<float> y = {3, 4};
  ASSERT_TRUE(d->Start().ok());
  ASSERT_TRUE(
      d->RecordForwardOutputs("Functional.a.0.forward", DumpValue::List({F32(x, {2})})).ok());
  ASSERT_TRUE(
      d->RecordForwardOutputs("Functional.a.0.forward", DumpValue::List({F32(y, {2})})).ok());
  ASSERT_TRUE(
      d->RecordForwardOutputs("Functional.c.0.forward", DumpValue::List({F32(x, {2})})).ok());
  ASSERT_TRUE(d->Stop().ok());
  const fs::path dir = root_ / "step0" / "rank0" / "dump_tensor_data";
  EXPECT_EQ(ReadF32(dir, "Functional.a.0.forward.output.0.pt"), y);
  EXPECT_EQ(ReadF32(dir, "Functional.c.0.forward.output.0.pt"), x);
}

// The packed layout keeps one entry per name, with its own bytes.
// In the packed layout a repeat is an index line naming the first recording's bytes: x is
// stored once, y once, and every name reads back what was recorded under it.
TEST_F(DumperTest, PackedLayoutStoresARepeatedTensorOnceAndReadsEveryNameBack) {
  auto d = Open(R"(, "task": "tensor", "dump_layout": "packed")");
  std::vector<float> x = {1, 2, 3, 4};
  std::vector<float> y = {5, 6, 7, 8};
  ASSERT_TRUE(d->Start().ok());
  ASSERT_TRUE(d->RecordForward("Functional.a.0.forward", DumpValue::List({F32(x, {4})}),
                               DumpValue::Dict({}), DumpValue::List({F32(x, {4})}))
                  .ok());
  ASSERT_TRUE(d->RecordForward("Functional.b.0.forward", DumpValue::List({F32(x, {4})}),
                               DumpValue::Dict({}), DumpValue::List({F32(y, {4})}))
                  .ok());
  ASSERT_TRUE(d->Stop().ok());
  const fs::path dir = root_ / "step0" / "rank0" / "dump_tensor_data";
  EXPECT_EQ(fs::file_size(dir / "packed.data"), size_t{2} * 4 * sizeof(float));
  EXPECT_EQ(ReadF32(dir, "Functional.a.0.forward.input.0.pt"), x);
  EXPECT_EQ(ReadF32(dir, "Functional.a.0.forward.output.0.pt"), x);
  EXPECT_EQ(ReadF32(dir, "Functional.b.0.forward.input.0.pt"), x);
  EXPECT_EQ(ReadF32(dir, "Functional.b.0.forward.output.0.pt"), y);
}

// An incremental dump judges each step against its golden's own step. The next step's golden is
// parsed on the writer's thread during the step before (OpenGolden); a golden that cannot be read
// still fails the Start() of the step that needs it, naming the file.
TEST_F(DumperTest, AnIncrementalDumpJudgesEachStepAgainstItsGoldensOwnStep) {
  const fs::path golden = root_ / "golden";
  const std::vector<std::vector<float>> values = {{1, 2, 3}, {10, 20, 30}, {-4, 5, 6}, {7, 8, 9}};
  const auto record = [](Dumper& d, const std::vector<float>& v) {
    ASSERT_TRUE(d.Start().ok());
    ASSERT_TRUE(d.RecordForwardOutputs("Torch.add.0.forward", DumpValue::List({F32(v, {3})})).ok());
  };
  {
    auto g = OpenAt(golden, R"(, "task": "statistics")");
    for (const std::vector<float>& v : values) {
      record(*g, v);
      ASSERT_TRUE(g->Step().ok());
    }
    ASSERT_TRUE(g->Close().ok());
  }
  auto t = OpenAt(root_ / "target", R"(, "task": "statistics", "statistics": {"bench_path": ")" +
                                        golden.string() + R"(", "diff_nums": -1})");
  const auto over_after = [&](const std::vector<float>& v) {
    record(*t, v);
    EXPECT_TRUE(t->Step().ok());
    return t->incremental_summary()->tensors_over;
  };
  EXPECT_EQ(over_after(values[0]), 0);
  EXPECT_EQ(over_after(values[1]), 0);  // step 1 against golden step 1, not step 0
  // Golden step 3 becomes unreadable before step 2 opens, i.e. before its parse is queued.
  const fs::path step3 = golden / "step3" / "rank0";
  fs::remove(step3 / std::string(kDumpJournalName));
  std::ofstream(step3 / "dump.json", std::ios::trunc) << R"({"task": "statistics", "data": {)";
  EXPECT_EQ(over_after(values[1]), 1);  // step 2 holds step 1's values: over its own golden
  EXPECT_EQ(t->incremental_summary()->first_divergence, "Torch.add.0.forward");
  EXPECT_EQ(t->incremental_summary()->first_divergence_step, 2);
  const Status opened = t->Start();
  EXPECT_FALSE(opened.ok());
  EXPECT_NE(opened.ToString().find((step3 / "dump.json").string()), std::string::npos)
      << opened.ToString();
  EXPECT_TRUE(t->Close().ok());
}

// A bench_path naming one dump.json is every step's golden: it is read once, at the first step.
TEST_F(DumperTest, AnIncrementalDumpAgainstOneDumpJsonReadsItOnce) {
  const fs::path golden = root_ / "golden";
  const std::vector<float> v = {1, 2, 3};
  {
    auto g = OpenAt(golden, R"(, "task": "statistics")");
    ASSERT_TRUE(g->Start().ok());
    ASSERT_TRUE(
        g->RecordForwardOutputs("Torch.add.0.forward", DumpValue::List({F32(v, {3})})).ok());
    ASSERT_TRUE(g->Close().ok());
  }
  const fs::path dump_json = golden / "step0" / "rank0" / "dump.json";
  auto t = OpenAt(root_ / "target", R"(, "task": "statistics", "statistics": {"bench_path": ")" +
                                        dump_json.string() + R"(", "diff_nums": -1})");
  for (int step = 0; step < 3; ++step) {
    ASSERT_TRUE(t->Start().ok()) << "step " << step;
    ASSERT_TRUE(
        t->RecordForwardOutputs("Torch.add.0.forward", DumpValue::List({F32(v, {3})})).ok());
    ASSERT_TRUE(t->Step().ok());
    // Unreadable from now on: the steps after the first judge against what it read.
    std::ofstream(dump_json, std::ios::trunc) << "{";
  }
  EXPECT_EQ(t->incremental_summary()->tensors_judged, 3);
  EXPECT_EQ(t->incremental_summary()->tensors_over, 0);
  EXPECT_EQ(t->incremental_summary()->bench, dump_json.string());
  EXPECT_TRUE(t->Close().ok());
}

}  // namespace
}  // namespace numprobe
