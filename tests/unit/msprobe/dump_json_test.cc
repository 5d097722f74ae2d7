// dump.json reading: msprobe's row flattening, value forms, and malformed input.
#include <cmath>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "numprobe/dump.h"

#include "core/json.h"
#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFixtures = NUMPROBE_FIXTURES_DIR "/msprobe";

Result<DumpFile> Parse(std::string_view text) {
  return ParseDumpJson(std::span<const char>(text.data(), text.size()));
}

const DumpRow* FindRow(const DumpFile& f, std::string_view name) {
  for (const DumpRow& r : f.rows) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

TEST(DumpJsonTest, FlattensArgsKwargsOutputsParametersInMsprobeOrder) {
  const std::string json = R"({"task": "statistics", "level": "mix", "framework": "pytorch",
    "dump_data_dir": null, "data": {
    "Module.fc.Linear.forward.0": {
      "input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 3],
                      "Max": 1.5, "Min": -1, "Mean": 0.25, "Norm": 2.0, "requires_grad": true},
                     [{"type": "int", "value": 1}, {"type": "int", "value": 2}]],
      "input_kwargs": {"alpha": {"type": "float", "value": -0.01}, "flag": null},
      "output": [{"type": "torch.Tensor", "dtype": "torch.bfloat16", "shape": [2, 4],
                  "Max": 3.0, "Min": 0.0, "Mean": 1e-05, "Norm": 4.0, "requires_grad": false}],
      "parameters": {"weight": {"type": "torch.Tensor", "dtype": "torch.float32",
                                "shape": [4, 3], "Max": 0.5, "Min": -0.5, "Mean": 0.0,
                                "Norm": 1.0, "requires_grad": true}}},
    "Module.fc.Linear.parameters_grad.0": {
      "weight": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4, 3],
                  "Max": 0.1, "Min": -0.1, "Mean": 0.0, "Norm": 0.2, "requires_grad": false}]}
  }})";
  auto f = Parse(json);
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  EXPECT_EQ(f->task, "statistics");
  EXPECT_EQ(f->framework, "pytorch");
  EXPECT_FALSE(f->dump_data_dir.has_value());
  ASSERT_EQ(f->entries.size(), 2u);
  std::vector<std::string> names;
  for (const DumpRow& r : f->rows) names.emplace_back(r.name);
  // Inputs (args, then kwargs), then parameters, then outputs; parameter grads keep no index.
  const std::vector<std::string> expected = {
      "Module.fc.Linear.forward.0.input.0",    "Module.fc.Linear.forward.0.input.1.0",
      "Module.fc.Linear.forward.0.input.1.1",  "Module.fc.Linear.forward.0.input.alpha",
      "Module.fc.Linear.forward.0.input.flag", "Module.fc.Linear.forward.0.parameters.weight",
      "Module.fc.Linear.forward.0.output.0",   "Module.fc.Linear.parameters_grad.0.weight"};
  EXPECT_EQ(names, expected);
  EXPECT_EQ(f->entries[0].row_count, 7u);
  EXPECT_EQ(f->entries[1].first_row, 7u);

  const DumpRow* in0 = FindRow(*f, "Module.fc.Linear.forward.0.input.0");
  ASSERT_NE(in0, nullptr);
  EXPECT_TRUE(in0->is_tensor);
  EXPECT_EQ(f->Text(in0->dtype), "torch.float32");
  EXPECT_EQ(f->Text(in0->shape), "[2, 3]");
  EXPECT_EQ(in0->requires_grad.kind(), PyValue::Kind::kStr);
  EXPECT_EQ(f->Text(in0->requires_grad.text_id()), "True");
  EXPECT_EQ(in0->stats[kStatMin].kind(), PyValue::Kind::kInt);  // -1 stays an int
  EXPECT_EQ(in0->stats[kStatMin].as_int(), -1);
  EXPECT_EQ(in0->stats[kStatMax].kind(), PyValue::Kind::kFloat);
  EXPECT_EQ(in0->stats[kStatMax].as_float(), 1.5);
  EXPECT_EQ(in0->md5, "00000000");  // CRC-32 of str('') for a tensor without "md5"
  EXPECT_FALSE(f->has_md5);

  const DumpRow* alpha = FindRow(*f, "Module.fc.Linear.forward.0.input.alpha");
  ASSERT_NE(alpha, nullptr);
  EXPECT_FALSE(alpha->is_tensor);
  EXPECT_EQ(f->Text(alpha->dtype), "<class 'float'>");
  EXPECT_EQ(f->Text(alpha->shape), "[]");
  EXPECT_EQ(alpha->stats[kStatNorm].as_float(), -0.01);
  EXPECT_TRUE(alpha->requires_grad.is_none());
  EXPECT_EQ(alpha->md5, "b313b92a");  // zlib.crc32(b'-0.01')

  const DumpRow* flag = FindRow(*f, "Module.fc.Linear.forward.0.input.flag");
  ASSERT_NE(flag, nullptr);
  EXPECT_EQ(f->Text(flag->dtype), "None");
  EXPECT_EQ(f->Text(flag->shape), "None");
  EXPECT_FALSE(flag->md5.has_value());

  const DumpRow* one = FindRow(*f, "Module.fc.Linear.forward.0.input.1.0");
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(f->Text(one->dtype), "<class 'int'>");
  EXPECT_EQ(one->md5, "83dcefb7");  // zlib.crc32(b'1')

  EXPECT_EQ(f->rows[6].state, RowState::kOutput);
  EXPECT_EQ(f->rows[5].state, RowState::kParameters);
  EXPECT_EQ(f->rows[7].state, RowState::kParametersGrad);
}

// Rows whose dtype and shape texts alternate (the reader remembers the last text it interned):
// each row keeps its own, and the CRC-32 of a value keeps its leading zeros.
TEST(DumpJsonTest, AlternatingTextsAndZeroPaddedCrcs) {
  const std::string json = R"({"task": "statistics", "level": "L1", "data": {
    "Functional.add.0.forward": {
      "input_args": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [2, 3],
                      "Max": 1, "Min": 0, "Mean": 0.5, "Norm": 1, "requires_grad": false},
                     {"type": "int", "value": 665},
                     {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4],
                      "Max": 1, "Min": 0, "Mean": 0.5, "Norm": 1, "requires_grad": true},
                     {"type": "int", "value": 33},
                     {"type": "torch.Tensor", "dtype": "torch.float16", "shape": [2, 3],
                      "Max": 1, "Min": 0, "Mean": 0.5, "Norm": 1, "requires_grad": false},
                     {"type": "float", "value": 2.5},
                     {"type": "torch.Tensor", "dtype": "torch.float16", "shape": [],
                      "Max": 1, "Min": 0, "Mean": 0.5, "Norm": 1, "requires_grad": true}],
      "input_kwargs": {}, "output": []}}})";
  auto f = Parse(json);
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  ASSERT_EQ(f->rows.size(), 7u);
  const std::vector<std::string_view> dtypes = {"torch.float16", "<class 'int'>", "torch.float32",
                                                "<class 'int'>", "torch.float16", "<class 'float'>",
                                                "torch.float16"};
  const std::vector<std::string_view> shapes = {"[2, 3]", "[]", "[4]", "[]", "[2, 3]", "[]", "[]"};
  const std::vector<std::string_view> grads = {"False", "", "True", "", "False", "", "True"};
  for (size_t i = 0; i < f->rows.size(); ++i) {
    const DumpRow& r = f->rows[i];
    EXPECT_EQ(f->Text(r.dtype), dtypes[i]) << i;
    EXPECT_EQ(f->Text(r.shape), shapes[i]) << i;
    if (grads[i].empty()) {
      EXPECT_TRUE(r.requires_grad.is_none()) << i;
    } else {
      EXPECT_EQ(f->Text(r.requires_grad.text_id()), grads[i]) << i;
    }
  }
  EXPECT_EQ(f->rows[0].dtype, f->rows[4].dtype);  // equal texts, one id
  EXPECT_EQ(f->rows[0].shape, f->rows[4].shape);
  EXPECT_EQ(f->rows[1].md5, "00081566");  // zlib.crc32(b'665')
  EXPECT_EQ(f->rows[3].md5, "0a6216d9");  // zlib.crc32(b'33')
  EXPECT_EQ(f->rows[5].md5, "851a25e3");  // zlib.crc32(b'2.5')
}

// The live judgement of an incremental dump reads each record through DumpFileOfEntry; the rows
// must be the ones dump.json's reader gives for the same entry, or the capture and a later compare
// would judge different rows.
TEST(DumpJsonTest, OneEntryFromAValueFlattensAsTheFileReaderDoes) {
  const std::string entry = R"({
    "input_args": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [2, 3],
                    "Max": NaN, "Min": -Infinity, "Mean": 0.1, "Norm": 2, "requires_grad": true,
                    "data_name": "Functional.linear.0.forward.input.0.pt"},
                   [{"type": "int", "value": 1}, null]],
    "input_kwargs": {"alpha": {"type": "float", "value": -0.01}, "flag": null},
    "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [],
                "Max": 3.0, "Min": 0.0, "Mean": 1e-05, "Norm": 4.0, "md5": "0badc0de"}],
    "parameters": {"weight": {"type": "torch.Tensor", "dtype": "torch.float32",
                              "shape": [4, 3], "Max": 0.5, "Min": -0.5, "Mean": 0.0,
                              "Norm": 1.0, "requires_grad": true}}})";
  const std::string name = "Functional.linear.0.forward";
  auto from_text = Parse(R"({"task": "tensor", "data": {")" + name + R"(": )" + entry + "}}");
  ASSERT_TRUE(from_text.ok()) << from_text.error().ToString();
  auto value = ParseJson(entry, kPythonJson);
  ASSERT_TRUE(value.ok()) << value.error().ToString();
  auto from_value = DumpFileOfEntry("tensor", name, *value);
  ASSERT_TRUE(from_value.ok()) << from_value.error().ToString();

  const DumpFile& a = *from_text;
  const DumpFile& b = *from_value;
  EXPECT_EQ(b.task, "tensor");
  EXPECT_EQ(a.has_md5, b.has_md5);
  ASSERT_EQ(a.rows.size(), 7u);
  ASSERT_EQ(b.rows.size(), a.rows.size());
  for (size_t i = 0; i < a.rows.size(); ++i) {
    const DumpRow& x = a.rows[i];
    const DumpRow& y = b.rows[i];
    SCOPED_TRACE(x.name);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.data_name, y.data_name);
    EXPECT_EQ(x.state, y.state);
    EXPECT_EQ(x.is_tensor, y.is_tensor);
    EXPECT_EQ(a.Text(x.dtype), b.Text(y.dtype));
    EXPECT_EQ(a.Text(x.shape), b.Text(y.shape));
    EXPECT_EQ(x.md5, y.md5);
    for (size_t s = 0; s < x.stats.size(); ++s) {
      ASSERT_EQ(x.stats[s].kind(), y.stats[s].kind());
      if (x.stats[s].kind() == PyValue::Kind::kFloat) {
        const double p = x.stats[s].as_float(), q = y.stats[s].as_float();
        EXPECT_TRUE(p == q || (std::isnan(p) && std::isnan(q))) << p << " vs " << q;
      }
    }
  }
}

TEST(DumpJsonTest, NamesLiveInTheFileAndSurviveItsMoves) {
  // Row and entry names view the file's own memory: they must stay valid when the file moves
  // (into a Result, a shared_ptr, another DumpFile), for short names and for a name too long to
  // share a block with others.
  const std::string long_name = "Functional.op." + std::string(300000, 'x') + ".0.forward";
  const std::string json = R"({"task": "statistics", "data": {"Functional.relu.0.forward": )"
                           R"({"input_args": [{"type": "torch.Tensor", "dtype": "torch.float32",)"
                           R"( "shape": [2], "Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": 1.0}]},)"
                           R"( ")" +
                           long_name + R"(": {"output": [{"type": "int", "value": 3}]}}})";
  auto parsed = Parse(json);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  DumpFile moved = std::move(*parsed);
  DumpFile file;
  file = std::move(moved);
  ASSERT_EQ(file.entries.size(), 2u);
  ASSERT_EQ(file.rows.size(), 2u);
  EXPECT_EQ(file.entries[0].name, "Functional.relu.0.forward");
  EXPECT_EQ(file.rows[0].name, "Functional.relu.0.forward.input.0");
  EXPECT_EQ(file.entries[1].name, long_name);
  EXPECT_EQ(file.rows[1].name, long_name + ".output.0");
  EXPECT_EQ(file.rows[1].md5, std::optional<std::string_view>("6dd28e9b"));
  // A text stored after the moves goes into the file's own memory, not the moved-from one's.
  // NOLINTNEXTLINE(bugprone-use-after-move,clang-analyzer-cplusplus.Move): what this test checks
  EXPECT_EQ(moved.Store("abc"), "abc");
  EXPECT_EQ(file.Store("def"), "def");
  EXPECT_EQ(file.rows[0].name, "Functional.relu.0.forward.input.0");
}

TEST(DumpJsonTest, TensorModeRowsTakeTheirNameFromDataName) {
  const std::string json = R"({"task": "tensor", "dump_data_dir": "x/dump_tensor_data", "data": {
    "Functional.add.0.forward": {
      "input_args": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [3],
                      "Max": 1, "Min": 0, "Mean": 0.5, "Norm": 1.2, "requires_grad": false,
                      "data_name": "Functional.add.0.forward.input.0.pt"}],
      "input_kwargs": {"other": {"type": "torch.Tensor", "dtype": "torch.float16",
                      "shape": [3], "data_name": "Functional.add.0.forward.kwargs.other.pt"},
                       "alpha": {"type": "int", "value": 2}},
      "output": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [3],
                  "data_name": "Functional.add.0.forward.output.0.pt"}]}}})";
  auto f = Parse(json);
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  ASSERT_EQ(f->rows.size(), 4u);
  EXPECT_EQ(f->rows[0].name, "Functional.add.0.forward.input.0");
  EXPECT_EQ(f->rows[1].name, "Functional.add.0.forward.kwargs.other");
  EXPECT_EQ(f->rows[1].state, RowState::kInput);
  EXPECT_EQ(f->rows[1].data_name, "Functional.add.0.forward.kwargs.other.pt");
  EXPECT_EQ(f->rows[2].name, "Functional.add.0.forward.input.alpha");
  EXPECT_TRUE(f->rows[2].data_name.empty());
  EXPECT_EQ(f->rows[3].name, "Functional.add.0.forward.output.0");
  EXPECT_EQ(f->dump_data_dir.value_or(""), "x/dump_tensor_data");
  // A tensor without Max..Norm has None statistics.
  EXPECT_TRUE(f->rows[1].stats[kStatMax].is_none());
}

TEST(DumpJsonTest, ReadsBareNanAndInfinityTokens) {
  auto f = ReadDumpJson(std::string(kFixtures) + "/dump_statistics_nan/step0/proc18393/dump.json");
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  bool saw_nan = false;
  bool saw_pos_inf = false;
  bool saw_neg_inf = false;
  for (const DumpRow& r : f->rows) {
    for (const PyValue& v : r.stats) {
      if (v.kind() != PyValue::Kind::kFloat) continue;
      saw_nan |= std::isnan(v.as_float());
      saw_pos_inf |= std::isinf(v.as_float()) && v.as_float() > 0;
      saw_neg_inf |= std::isinf(v.as_float()) && v.as_float() < 0;
    }
  }
  EXPECT_TRUE(saw_nan);
  EXPECT_TRUE(saw_pos_inf);
  EXPECT_TRUE(saw_neg_inf);
  const DumpRow* mul = FindRow(*f, "Tensor.__mul__.0.forward.output.0");
  ASSERT_NE(mul, nullptr);
  EXPECT_TRUE(std::isinf(mul->stats[kStatMax].as_float()) ||
              std::isnan(mul->stats[kStatMax].as_float()));
}

TEST(DumpJsonTest, ReadsTheMsprobeFixtureLikeMsprobe) {
  auto f = ReadDumpJson(std::string(kFixtures) + "/dump_statistics_bf16/step0/proc17032/dump.json");
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  EXPECT_EQ(f->entries.size(), 18u);
  EXPECT_EQ(f->rows.size(), 65u);  // the 65 rows of msprobe's compare_statistics CSV
  const DumpRow* inplace = FindRow(*f, "Functional.relu.0.forward.input.inplace");
  ASSERT_NE(inplace, nullptr);
  EXPECT_EQ(f->Text(inplace->dtype), "<class 'bool'>");
  EXPECT_EQ(inplace->stats[kStatMax].kind(), PyValue::Kind::kBool);
  const DumpRow* none = FindRow(*f, "Functional.conv2d.0.backward.output.0");
  ASSERT_NE(none, nullptr);
  EXPECT_EQ(f->Text(none->dtype), "None");
  const DumpRow* target = FindRow(*f, "Functional.cross_entropy.0.forward.input.1");
  ASSERT_NE(target, nullptr);
  EXPECT_EQ(target->stats[kStatMax].kind(), PyValue::Kind::kInt);
  EXPECT_TRUE(target->stats[kStatMean].is_none());
}

TEST(DumpJsonTest, LaterDuplicateEntryReplacesEarlierInPlace) {
  auto f = Parse(R"({"data": {"A.a.0.forward": {"output": [{"type": "int", "value": 1}]},
                              "B.b.0.forward": {"output": [{"type": "int", "value": 2}]},
                              "A.a.0.forward": {"output": [{"type": "int", "value": 3}]}}})");
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  ASSERT_EQ(f->entries.size(), 2u);
  EXPECT_EQ(f->entries[0].name, "A.a.0.forward");
  EXPECT_EQ(f->rows[0].stats[0].as_int(), 3);
}

TEST(DumpJsonTest, RepeatedKeysInAnEntryReadAsPythonsDict) {
  // json.load keeps a repeated key's first position and its last value.
  auto f = Parse(R"({"data": {"A.a.0.forward": {"input_kwargs": {
      "x": {"type": "int", "value": 1}, "y": {"type": "int", "value": 2},
      "x": {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 1.0,
            "Min": 0.0, "Mean": 0.5, "Norm": 1.0, "Max": 7.0}}}}})");
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  ASSERT_EQ(f->rows.size(), 2u);
  EXPECT_EQ(f->rows[0].name, "A.a.0.forward.input.x");
  EXPECT_TRUE(f->rows[0].is_tensor);
  EXPECT_EQ(f->rows[0].stats[kStatMax].as_float(), 7.0);
  EXPECT_EQ(f->rows[1].name, "A.a.0.forward.input.y");
}

TEST(DumpJsonTest, SpecialValuesGetMsprobesDtypeAndShape) {
  auto f = Parse(R"({"data": {"Tensor.__getitem__.0.forward": {"input_args": [
      {"type": "slice", "value": [0, 4, null]}, {"type": "torch.Size", "value": [2, 3]},
      {"type": "ellipsis", "value": "..."}, {"type": "str", "value": "mean"},
      {"type": "int", "value": 123456789012345678901234567890}]}}})");
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  ASSERT_EQ(f->rows.size(), 5u);
  EXPECT_EQ(f->Text(f->rows[0].dtype), "slice");
  EXPECT_EQ(f->Text(f->rows[0].shape), "(3,)");
  EXPECT_EQ(f->Text(f->rows[1].dtype), "torch.Size");
  EXPECT_EQ(f->Text(f->rows[1].shape), "[2, 3]");
  EXPECT_EQ(f->Text(f->rows[2].dtype), "ellipsis");
  EXPECT_EQ(f->Text(f->rows[3].dtype), "<class 'str'>");
  EXPECT_EQ(f->Text(f->rows[3].stats[0].text_id()), "mean");
  EXPECT_EQ(f->rows[4].stats[0].kind(), PyValue::Kind::kBigInt);
  EXPECT_EQ(f->Text(f->rows[4].stats[0].text_id()), "123456789012345678901234567890");
}

TEST(DumpJsonTest, TruncatedFileIsCorruptWithByteOffset) {
  const std::string json = R"({"task": "statistics", "data": {"A.a.0.forward": {"output": [)";
  auto f = Parse(json);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(f.error().message().find("malformed JSON at byte " + std::to_string(json.size())),
            std::string::npos)
      << f.error().message();
}

TEST(DumpJsonTest, GarbageAfterTheRootIsCorrupt) {
  auto f = Parse(R"({"data": {}} x)");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(f.error().message().find("at byte 13"), std::string::npos) << f.error().message();
}

TEST(DumpJsonTest, RootMustBeAnObjectWithData) {
  auto list = Parse("[1, 2]");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.error().code(), ErrorCode::kCorrupt);
  EXPECT_NE(list.error().message().find("root is not an object"), std::string::npos);
  auto no_data = Parse(R"({"task": "statistics"})");
  ASSERT_FALSE(no_data.ok());
  EXPECT_NE(no_data.error().message().find("no \"data\" object"), std::string::npos);
  auto bad_data = Parse(R"({"data": [1]})");
  ASSERT_FALSE(bad_data.ok());
  EXPECT_NE(bad_data.error().message().find("\"data\" is not an object"), std::string::npos);
  auto empty = Parse("");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code(), ErrorCode::kCorrupt);
}

TEST(DumpJsonTest, DeepNestingIsRefused) {
  std::string json = R"({"data": {"A.a.0.forward": {"output": )";
  for (int i = 0; i < 5000; ++i) json += '[';
  for (int i = 0; i < 5000; ++i) json += ']';
  json += "}}}";
  auto f = Parse(json);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().code(), ErrorCode::kOutOfRange);
  EXPECT_NE(f.error().message().find("nested deeper than 400"), std::string::npos);
}

TEST(DumpJsonTest, InvalidUtf8IsCorrupt) {
  const std::string json = "{\"data\": {\"A\xff.a.0.forward\": {}}}";
  auto f = Parse(json);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().code(), ErrorCode::kCorrupt);
}

TEST(DumpJsonTest, ReadDumpJsonNamesTheFile) {
  auto f = ReadDumpJson("/nonexistent/dir/dump.json");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().message().find("/nonexistent/dir/dump.json"), std::string::npos);
}

// What StreamDumpJson's visitor saw of each entry: its name, index and rows' (name, Max).
struct Visited {
  std::string entry;
  size_t index = 0;
  uint32_t first_row = 0;
  std::vector<std::pair<std::string, int64_t>> rows;
  bool operator==(const Visited&) const = default;
};

std::vector<Visited> VisitAll(const fs::path& path, int* restarts, Result<DumpFile>* file) {
  std::vector<Visited> seen;
  *file = StreamDumpJson(
      path,
      [&](const DumpFile& f, const DumpEntry& entry, std::span<const DumpRow> rows) {
        Visited v;
        v.entry = entry.name;
        v.index = static_cast<size_t>(&entry - f.entries.data());
        v.first_row = entry.first_row;
        for (const DumpRow& r : rows) {
          EXPECT_EQ(r.entry, v.index);
          v.rows.emplace_back(r.name, r.stats[kStatMax].as_int());
        }
        seen.push_back(std::move(v));
        return Status::Ok();
      },
      [&] {
        ++*restarts;
        seen.clear();
      });
  return seen;
}

std::vector<Visited> RowsOf(const DumpFile& f) {
  std::vector<Visited> out;
  for (size_t e = 0; e < f.entries.size(); ++e) {
    const DumpEntry& entry = f.entries[e];
    Visited v;
    v.entry = entry.name;
    v.index = e;
    v.first_row = entry.first_row;
    for (uint32_t r = entry.first_row; r < entry.first_row + entry.row_count; ++r) {
      v.rows.emplace_back(f.rows[r].name, f.rows[r].stats[kStatMax].as_int());
    }
    out.push_back(std::move(v));
  }
  return out;
}

TEST(StreamDumpJsonTest, VisitsEveryEntryAsReadDumpJsonHoldsIt) {
  const std::string path =
      std::string(kFixtures) + "/dump_statistics_bf16/step0/proc17032/dump.json";
  auto whole = ReadDumpJson(path);
  ASSERT_TRUE(whole.ok()) << whole.error().ToString();
  int restarts = 0;
  Result<DumpFile> streamed = Status::Internal("not read");
  const std::vector<Visited> seen = VisitAll(path, &restarts, &streamed);
  ASSERT_TRUE(streamed.ok()) << streamed.error().ToString();
  EXPECT_EQ(restarts, 0);
  EXPECT_EQ(seen, RowsOf(*whole));
  EXPECT_EQ(seen.size(), 18U);
  EXPECT_TRUE(streamed->rows.empty());  // the rows were the visitor's only
  EXPECT_EQ(streamed->entries.size(), 18U);
  EXPECT_EQ(streamed->task, whole->task);
  EXPECT_EQ(streamed->has_md5, whole->has_md5);
}

TEST(StreamDumpJsonTest, ARepeatedEntryRestartsAndDeliversItsLastValueInItsFirstPosition) {
  const test::TempDir dir("numprobe_stream_dump");
  const fs::path path = dir.Write("dump.json", R"({"task": "statistics", "data": {
      "A.a.0.forward": {"output": [{"type": "int", "value": 1}]},
      "B.b.0.forward": {"output": [{"type": "int", "value": 2}]},
      "A.a.0.forward": {"output": [{"type": "int", "value": 3}, {"type": "int", "value": 4}]},
      "C.c.0.forward": {"output": [{"type": "int", "value": 5}]}}})");
  int restarts = 0;
  Result<DumpFile> streamed = Status::Internal("not read");
  const std::vector<Visited> seen = VisitAll(path, &restarts, &streamed);
  ASSERT_TRUE(streamed.ok()) << streamed.error().ToString();
  EXPECT_EQ(restarts, 1);
  const std::vector<Visited> want = {
      {"A.a.0.forward", 0, 0, {{"A.a.0.forward.output.0", 3}, {"A.a.0.forward.output.1", 4}}},
      {"B.b.0.forward", 1, 2, {{"B.b.0.forward.output.0", 2}}},
      {"C.c.0.forward", 2, 3, {{"C.c.0.forward.output.0", 5}}}};
  EXPECT_EQ(seen, want);
}

TEST(StreamDumpJsonTest, TheVisitorsErrorStopsTheRead) {
  const test::TempDir dir("numprobe_stream_dump");
  const fs::path path = dir.Write("dump.json", R"({"data": {
      "A.a.0.forward": {"output": [{"type": "int", "value": 1}]},
      "B.b.0.forward": {"output": [{"type": "int", "value": 2}]}}})");
  int visits = 0;
  auto streamed = StreamDumpJson(
      path,
      [&](const DumpFile&, const DumpEntry&, std::span<const DumpRow>) {
        ++visits;
        return Status::Rejected("enough");
      },
      nullptr);
  ASSERT_FALSE(streamed.ok());
  EXPECT_EQ(streamed.error().code(), ErrorCode::kRejected);
  EXPECT_EQ(visits, 1);
  // A read error is ReadDumpJson's.
  EXPECT_EQ(StreamDumpJson(dir / "none.json", nullptr, nullptr).error().code(),
            ReadDumpJson(dir / "none.json").error().code());
}

TEST(StackJsonTest, ReadsBothForms) {
  const std::string v26 = R"({"0": [["A.a.0.forward", "B.b.0.forward"], ["File x, line 1", "y"]],
                              "1": [["C.c.0.forward"], ["z"]]})";
  auto s = ParseStackJson(std::span<const char>(v26.data(), v26.size()));
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  ASSERT_NE(s->Find("B.b.0.forward"), nullptr);
  EXPECT_EQ(s->Find("B.b.0.forward")->size(), 2u);
  EXPECT_EQ((*s->Find("C.c.0.forward"))[0], "z");
  EXPECT_EQ(s->Find("D.d.0.forward"), nullptr);

  const std::string legacy = R"({"A.a.0.forward": ["File x, line 1", "y"]})";
  auto l = ParseStackJson(std::span<const char>(legacy.data(), legacy.size()));
  ASSERT_TRUE(l.ok()) << l.error().ToString();
  ASSERT_NE(l->Find("A.a.0.forward"), nullptr);
  EXPECT_EQ((*l->Find("A.a.0.forward"))[1], "y");

  auto fixture =
      ReadStackJson(std::string(kFixtures) + "/dump_statistics_bf16/step0/proc17032/stack.json");
  ASSERT_TRUE(fixture.ok()) << fixture.error().ToString();
  ASSERT_NE(fixture->Find("Functional.conv2d.0.forward"), nullptr);
  EXPECT_EQ(fixture->Find("Functional.conv2d.0.forward")->size(), 7u);
}

TEST(ConstructJsonTest, ModulePathFollowsParents) {
  const std::string json = R"({"Functional.linear.0.forward": "Module.layer.Linear.forward.0",
      "Module.layer.Linear.forward.0": "Module.block.Block.forward.0",
      "Module.block.Block.forward.0": null, "X": "Y", "Y": "X"})";
  auto c = ParseConstructJson(std::span<const char>(json.data(), json.size()));
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  const std::vector<std::string> expected = {"Module.block.Block.forward.0",
                                             "Module.layer.Linear.forward.0"};
  EXPECT_EQ(c->ModulePath("Functional.linear.0.forward"), expected);
  EXPECT_TRUE(c->ModulePath("Module.block.Block.forward.0").empty());
  EXPECT_LE(c->ModulePath("X").size(), 2u);  // a cycle terminates
}

}  // namespace
}  // namespace numprobe
