// .pt files written by real torch.save (gen_torch.py, torch 1.13.1) must read back bit for bit,
// under the names torch.load shows; every .pt of the msprobe fixtures must load with the dtype and
// shape its dump.json records; and files written by WriteTorch must load in real torch.load with
// identical values (checked by running /usr/bin/python3 check_torch_roundtrip.py).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include "numprobe/buffer.h"
#include "numprobe/torch_pt.h"

#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

fs::path GoldenDir() {
  const char* env = std::getenv("NUMPROBE_GOLDEN_DIR");
  return fs::path(env != nullptr ? env : NUMPROBE_GOLDEN_DIR) / "torch";
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Result<TensorFile> Load(const fs::path& path, bool inert = false) {
  NUMPROBE_ASSIGN_OR_RETURN(auto buffer, Buffer::MapFile(path));
  ReadOptions options;
  options.inert_pickle = inert;
  return ReadTorch(buffer, options);
}

// The tensor's elements in C order.
std::string ContiguousBytes(const Tensor& t) {
  auto copy = Tensor::CopyOf(t.view());
  EXPECT_TRUE(copy.ok());
  if (!copy.ok()) return {};
  const auto n = static_cast<size_t>(copy->numel() * ItemSize(copy->dtype()));
  return std::string(reinterpret_cast<const char*>(copy->view().first()), n);
}

std::vector<int64_t> Shape(const rapidjson::Value& v) {
  std::vector<int64_t> out;
  for (const auto& d : v.GetArray()) out.push_back(d.GetInt64());
  return out;
}

class TorchGolden : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string text = ReadAll(GoldenDir() / "expected.json");
    ASSERT_FALSE(text.empty()) << "no golden data in " << GoldenDir() << " (run golden.generate)";
    doc_.Parse(text.c_str());
    ASSERT_FALSE(doc_.HasParseError());
  }
  rapidjson::Document doc_;
};

TEST_F(TorchGolden, EveryFileReadsBitForBit) {
  int files = 0;
  int tensors = 0;
  for (const auto& f : doc_["files"].GetArray()) {
    const std::string name = f["file"].GetString();
    SCOPED_TRACE(name);
    const bool inert = f["inert"].GetBool();
    auto file = Load(GoldenDir() / name, inert);
    ASSERT_TRUE(file.ok()) << file.error().ToString();
    EXPECT_EQ(file->format, FileFormat::kTorch);
    const std::string raw = ReadAll(GoldenDir() / (name + ".raw"));
    const auto& want = f["tensors"].GetArray();
    ASSERT_EQ(file->tensors.size(), want.Size());
    for (rapidjson::SizeType i = 0; i < want.Size(); ++i) {
      const NamedTensor& got = file->tensors[i];
      const auto& w = want[i];
      SCOPED_TRACE(got.name);
      EXPECT_EQ(got.name, w["name"].GetString());
      EXPECT_EQ(TorchDTypeString(got.tensor.dtype()),
                std::string("torch.") + w["dtype"].GetString());
      EXPECT_EQ(got.tensor.shape(), Shape(w["shape"]));
      EXPECT_EQ(got.device, w["device"].GetString());
      const std::string expected = raw.substr(w["offset"].GetUint64(), w["nbytes"].GetUint64());
      EXPECT_EQ(ContiguousBytes(got.tensor), expected) << "values differ";
      ++tensors;
    }
    if (inert) {
      ASSERT_FALSE(file->warnings.empty());
      EXPECT_NE(file->warnings[0].find("inert pickle"), std::string::npos) << file->warnings[0];
      EXPECT_NE(file->warnings[0].find("Net"), std::string::npos) << file->warnings[0];
    }
    if (f.HasMember("strict_error")) {
      auto strict = Load(GoldenDir() / name, false);
      ASSERT_FALSE(strict.ok());
      EXPECT_EQ(strict.error().code(), ErrorCode::kRejected);
      EXPECT_NE(strict.error().message().find(f["strict_error"].GetString()), std::string::npos)
          << strict.error().ToString();
    }
    ++files;
  }
  EXPECT_EQ(files, 17);
  EXPECT_GE(tensors, 100);
}

TEST_F(TorchGolden, ZipTensorsViewTheMapAndShareStorages) {
  auto file = Load(GoldenDir() / "shared.pt");
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  ASSERT_EQ(file->tensors.size(), 3u);
  const Tensor& base = file->tensors[0].tensor;
  const Tensor& view = file->tensors[1].tensor;
  EXPECT_TRUE(base.storage()->is_mapped());       // zero-copy
  EXPECT_EQ(base.view().data, view.view().data);  // one storage
  EXPECT_EQ(view.view().byte_offset, 2 * 4);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(base.view().data) % 64, 0u);  // torch aligns to 64

  auto views = Load(GoldenDir() / "views.pt");
  ASSERT_TRUE(views.ok()) << views.error().ToString();
  const TensorView& t = views->tensors[0].tensor.view();  // m.t()
  EXPECT_EQ(t.strides, (std::vector<int64_t>{1, 5}));
  const TensorView& e = views->tensors[3].tensor.view();  // expand: stride 0
  EXPECT_EQ(e.strides, (std::vector<int64_t>{0, 1}));
}

TEST_F(TorchGolden, LegacyFormatIsDetectedAndRead) {
  auto file = Load(GoldenDir() / "legacy.pt");
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  bool legacy = false;
  for (const auto& [k, v] : file->metadata) legacy |= k == "torch.save format" && v == "legacy";
  EXPECT_TRUE(legacy);
}

// ----- msprobe fixtures -----

void CollectDataNames(const rapidjson::Value& v,
                      std::map<std::string, const rapidjson::Value*>* out) {
  if (v.IsObject()) {
    if (v.HasMember("data_name") && v["data_name"].IsString())
      out->emplace(v["data_name"].GetString(), &v);
    for (const auto& m : v.GetObject()) CollectDataNames(m.value, out);
  } else if (v.IsArray()) {
    for (const auto& e : v.GetArray()) CollectDataNames(e, out);
  }
}

double ElementAsDouble(const Tensor& t, int64_t i) {
  const std::byte* p = t.view().first() + i * ItemSize(t.dtype());
  switch (t.dtype()) {
    case DType::kF32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case DType::kBF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      const uint32_t bits = static_cast<uint32_t>(h) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case DType::kI64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    default:
      ADD_FAILURE() << "unexpected dtype " << Name(t.dtype());
      return 0;
  }
}

TEST(MsprobeFixtures, EveryPtFileLoadsAsItsDumpSays) {
  int checked = 0;
  const fs::path root = fs::path(NUMPROBE_FIXTURES_DIR) / "msprobe";
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.path().filename() != "dump.json") continue;
    const fs::path data_dir = entry.path().parent_path() / "dump_tensor_data";
    if (!fs::exists(data_dir)) continue;
    rapidjson::Document doc;
    const std::string text = ReadAll(entry.path());
    doc.Parse<rapidjson::kParseFullPrecisionFlag>(text.c_str());
    ASSERT_FALSE(doc.HasParseError()) << entry.path();
    std::map<std::string, const rapidjson::Value*> by_name;
    CollectDataNames(doc, &by_name);
    for (const auto& pt : fs::directory_iterator(data_dir)) {
      SCOPED_TRACE(pt.path().string());
      auto file = Load(pt.path());
      ASSERT_TRUE(file.ok()) << file.error().ToString();
      ASSERT_EQ(file->tensors.size(), 1u);
      const NamedTensor& t = file->tensors[0];
      EXPECT_EQ(t.name, "");
      EXPECT_EQ(t.device, "cpu");
      auto it = by_name.find(pt.path().filename().string());
      ASSERT_NE(it, by_name.end()) << "no dump.json entry";
      const rapidjson::Value& meta = *it->second;
      EXPECT_EQ(TorchDTypeString(t.tensor.dtype()), meta["dtype"].GetString());
      EXPECT_EQ(t.tensor.shape(), Shape(meta["shape"]));
      // msprobe's Max/Min are the tensor's own extremes, exactly representable in a double.
      if (meta.HasMember("Max") && meta["Max"].IsNumber() && t.tensor.numel() > 0 &&
          t.tensor.view().is_contiguous()) {
        double mx = -INFINITY;
        double mn = INFINITY;
        for (int64_t i = 0; i < t.tensor.numel(); ++i) {
          const double v = ElementAsDouble(t.tensor, i);
          mx = std::max(mx, v);
          mn = std::min(mn, v);
        }
        EXPECT_EQ(mx, meta["Max"].GetDouble());
        EXPECT_EQ(mn, meta["Min"].GetDouble());
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 100);
}

// ----- WriteTorch -> torch.load -----

struct Written {
  std::string name;
  Tensor tensor;  // contiguous, what the file must hold
};

// Deterministic, varied element bytes (including NaN and inf patterns for the float types).
Tensor Pattern(DType dtype, std::vector<int64_t> shape, uint32_t seed) {
  auto t = Tensor::Zeros(dtype, std::move(shape));
  EXPECT_TRUE(t.ok());
  std::byte* d = t->mutable_data();
  const auto n = static_cast<size_t>(t->numel() * ItemSize(dtype));
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    d[i] = static_cast<std::byte>(x >> 24);
  }
  if (dtype == DType::kBool) {
    for (size_t i = 0; i < n; ++i) d[i] = static_cast<std::byte>(std::to_integer<int>(d[i]) & 1);
  }
  return std::move(*t);
}

std::string Hex(const std::string& bytes) {
  std::string out;
  char buf[3];
  for (unsigned char c : bytes) {
    std::snprintf(buf, sizeof(buf), "%02x", c);
    out += buf;
  }
  return out;
}

TEST(TorchRoundTrip, WriteTorchFilesLoadInRealTorch) {
  const test::TempDir temp("numprobe_torch_rt");
  const fs::path& dir = temp.path();

  // Every dtype torch 1.13 has, plus a strided view, a 0-d and an empty tensor.
  std::vector<Written> dict;
  uint32_t seed = 1;
  for (DType d : {DType::kF64, DType::kF32, DType::kF16, DType::kBF16, DType::kI64, DType::kI32,
                  DType::kI16, DType::kI8, DType::kU8, DType::kBool, DType::kC64, DType::kC128}) {
    dict.push_back({std::string(Name(d)), Pattern(d, {3, 5}, seed++)});
  }
  dict.push_back({"scalar", Pattern(DType::kF32, {}, seed++)});
  dict.push_back({"empty", Pattern(DType::kI64, {0, 4}, seed++)});
  Tensor big = Pattern(DType::kF32, {300, 7}, seed++);

  std::vector<NamedView> views;
  for (const Written& w : dict) views.push_back({w.name, w.tensor.view()});
  // A transposed, offset view of `big`: rows 10.. of the transpose, every other column.
  TensorView strided = big.view();
  strided.shape = {7, 50};
  strided.strides = {1, 14};
  strided.byte_offset = 3 * 7 * 4;
  ASSERT_FALSE(strided.is_contiguous());
  views.push_back({"strided.view", strided});
  auto strided_copy = Tensor::CopyOf(strided);
  ASSERT_TRUE(strided_copy.ok());
  dict.push_back({"strided.view", std::move(*strided_copy)});

  const fs::path state_dict = dir / "state_dict.pt";
  ASSERT_TRUE(WriteTorch(state_dict, views).ok());
  const fs::path bare = dir / "bare.pt";
  Tensor bare_tensor = Pattern(DType::kBF16, {4, 4}, 99);
  const std::vector<NamedView> bare_views = {{"", bare_tensor.view()}};
  ASSERT_TRUE(WriteTorch(bare, bare_views).ok());

  // numprobe reads its own files back exactly.
  auto back = Load(state_dict);
  ASSERT_TRUE(back.ok()) << back.error().ToString();
  ASSERT_EQ(back->tensors.size(), dict.size());
  for (size_t i = 0; i < dict.size(); ++i) {
    EXPECT_EQ(back->tensors[i].name, dict[i].name);
    EXPECT_EQ(ContiguousBytes(back->tensors[i].tensor), ContiguousBytes(dict[i].tensor));
  }
  for (const auto& [k, v] : back->metadata) {
    if (k == "archive folder") {
      EXPECT_EQ(v, "state_dict");  // named after the file, as torch does
    }
  }

  // The manifest for the Python side.
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  auto write_file = [&](const fs::path& path, bool is_bare, const std::vector<Written>& tensors) {
    w.StartObject();
    w.Key("file");
    w.String(path.string().c_str());
    w.Key("bare");
    w.Bool(is_bare);
    w.Key("tensors");
    w.StartArray();
    for (const Written& t : tensors) {
      w.StartObject();
      w.Key("name");
      w.String(t.name.c_str());
      w.Key("dtype");
      w.String(std::string(Traits(t.tensor.dtype()).torch_name).c_str());
      w.Key("shape");
      w.StartArray();
      for (int64_t d : t.tensor.shape()) w.Int64(d);
      w.EndArray();
      w.Key("hex");
      w.String(Hex(ContiguousBytes(t.tensor)).c_str());
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  };
  w.StartObject();
  w.Key("files");
  w.StartArray();
  write_file(state_dict, false, dict);
  std::vector<Written> bare_list;
  bare_list.push_back({"", bare_tensor});
  write_file(bare, true, bare_list);
  w.EndArray();
  w.EndObject();
  const fs::path manifest = dir / "manifest.json";
  std::ofstream(manifest) << sb.GetString();

  const std::string cmd = "/usr/bin/python3 " + std::string(NUMPROBE_SOURCE_DIR) +
                          "/tests/golden/check_torch_roundtrip.py " + manifest.string() + " 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[512];
  while (std::fgets(buf, sizeof(buf), pipe) != nullptr) output += buf;
  const int status = ::pclose(pipe);
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("checked " + std::to_string(dict.size() + 1) + " tensors in 2 files"),
            std::string::npos)
      << output;
}

}  // namespace
}  // namespace numprobe
