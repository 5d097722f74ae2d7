// Golden .npy/.npz files written by real numpy (gen_npy.py): every file must read with the
// dtype, shape and C-order little-endian bytes numpy reports in expected.json. Then every tensor
// is written back with WriteNpy / WriteNpz and check_npy_written.py verifies with numpy that the
// files load with identical values (and that .npy bytes equal np.save's).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include "numprobe/npy.h"
#include "numprobe/npz.h"

#include "formats/zip.h"
#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

fs::path GoldenDir() {
  const char* env = std::getenv("NUMPROBE_GOLDEN_DIR");
  return fs::path(env != nullptr && *env != '\0' ? env : NUMPROBE_GOLDEN_DIR) / "npy";
}

std::string Hex(const Tensor& t) {
  auto copy = Tensor::CopyOf(t.view());
  EXPECT_TRUE(copy.ok());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  const auto* p = copy->view().first();
  const size_t n = static_cast<size_t>(t.numel()) * static_cast<size_t>(ItemSize(t.dtype()));
  for (size_t i = 0; i < n; ++i) {
    const auto b = std::to_integer<unsigned>(p[i]);
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

class NpyGolden : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ifstream in(GoldenDir() / "expected.json");
    ASSERT_TRUE(in) << "no golden data in " << GoldenDir() << " (run golden.generate)";
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    doc_.Parse(text.c_str());
    ASSERT_FALSE(doc_.HasParseError());
    ASSERT_TRUE(doc_.HasMember("files"));
  }

  static Result<TensorFile> Read(const fs::path& path) {
    NUMPROBE_ASSIGN_OR_RETURN(auto buffer, Buffer::MapFile(path));
    if (path.extension() == ".npz") return ReadNpz(buffer, {});
    return ReadNpy(buffer, {});
  }

  rapidjson::Document doc_;
};

TEST_F(NpyGolden, EveryFileReadsAsNumpyWroteIt) {
  int files = 0;
  for (const auto& file : doc_["files"].GetObject()) {
    const std::string name = file.name.GetString();
    SCOPED_TRACE(name);
    auto result = Read(GoldenDir() / name);
    ASSERT_TRUE(result.ok()) << result.error().ToString();
    const auto& want = file.value["tensors"].GetArray();
    ASSERT_EQ(result->tensors.size(), want.Size());
    const std::string format = file.value["format"].GetString();
    EXPECT_EQ(result->format, format == "npz" ? FileFormat::kNpz : FileFormat::kNpy);
    for (rapidjson::SizeType i = 0; i < want.Size(); ++i) {
      const NamedTensor& got = result->tensors[i];
      SCOPED_TRACE(got.name);
      EXPECT_EQ(got.name, want[i]["name"].GetString());
      EXPECT_EQ(Name(got.tensor.dtype()), want[i]["dtype"].GetString());
      std::vector<int64_t> shape;
      for (const auto& d : want[i]["shape"].GetArray()) shape.push_back(d.GetInt64());
      EXPECT_EQ(got.tensor.shape(), shape);
      EXPECT_EQ(Hex(got.tensor), want[i]["c_hex"].GetString());
    }
    if (name.rfind("bf16", 0) == 0) {
      ASSERT_EQ(result->warnings.size(), 1u);
      EXPECT_THAT(result->warnings[0], HasSubstr("V2' read as bfloat16 (ml_dtypes convention)"));
    } else {
      EXPECT_TRUE(result->warnings.empty()) << result->warnings[0];
    }
    ++files;
  }
  EXPECT_GE(files, 50);
}

TEST_F(NpyGolden, LittleEndianAlignedFilesAreViewedInPlace) {
  auto buffer = Buffer::MapFile(GoldenDir() / "f8.npy").value();
  auto f = ReadNpy(buffer, {}).value();
  EXPECT_EQ(f.tensors[0].tensor.storage(), buffer);
  auto fortran = Buffer::MapFile(GoldenDir() / "fortran_f8.npy").value();
  auto g = ReadNpy(fortran, {}).value();
  EXPECT_EQ(g.tensors[0].tensor.storage(), fortran);
  EXPECT_EQ(g.tensors[0].tensor.view().strides, (std::vector<int64_t>{1, 2, 6}));
}

TEST_F(NpyGolden, WrittenFilesLoadInNumpyWithIdenticalValues) {
  const test::TempDir temp("numprobe_npy_golden");
  const fs::path& out = temp.path();
  for (const auto& file : doc_["files"].GetObject()) {
    const std::string name = file.name.GetString();
    SCOPED_TRACE(name);
    auto result = Read(GoldenDir() / name);
    ASSERT_TRUE(result.ok());
    if (name.size() > 4 && name.substr(name.size() - 4) == ".npy") {
      ASSERT_TRUE(WriteNpy(out / name, result->tensors[0].tensor.view()).ok());
      continue;
    }
    std::vector<NamedView> views;
    for (const auto& t : result->tensors) views.push_back({t.name, t.tensor.view()});
    const std::string stem = name.substr(0, name.size() - 4);
    ASSERT_TRUE(WriteNpz(out / (stem + ".npz"), views, false).ok());
    ASSERT_TRUE(WriteNpz(out / (stem + "_c.npz"), views, true).ok());
  }
  const std::string command = "/usr/bin/python3 '" NUMPROBE_SOURCE_DIR
                              "/tests/golden/check_npy_written.py' --golden '" +
                              GoldenDir().string() + "' --written '" + out.string() + "'";
  const int rc = std::system(command.c_str());
  EXPECT_EQ(rc, 0) << command;
}

TEST(ZipGolden, ArchivesWrittenByZipWriterReadInPythonZipfile) {
  const test::TempDir temp("numprobe_zip_golden");
  const fs::path& out = temp.path();
  auto bytes = [](std::string_view s) { return std::as_bytes(std::span(s)); };
  {
    auto w = ZipWriter::Create(out / "mixed.zip");
    ASSERT_TRUE(w.ok());
    std::string ramp;
    for (int i = 0; i < 4 * 256; ++i) ramp += static_cast<char>(i % 256);
    std::string abc;
    for (int i = 0; i < 10000; ++i) abc += "abc";
    ASSERT_TRUE(w->AddStored("stored.txt", bytes("hello stored")).ok());
    ASSERT_TRUE(w->AddStored("aligned.bin", bytes(ramp), 64).ok());
    ASSERT_TRUE(w->AddDeflated("deflated.bin", bytes(abc)).ok());
    ASSERT_TRUE(w->AddStored("dir/\xc3\xbcn\xc3\xaf.txt", bytes("unicode")).ok());
    ASSERT_TRUE(w->Finish().ok());
  }
  {
    auto w = ZipWriter::Create(out / "many.zip");
    ASSERT_TRUE(w.ok());
    for (int i = 0; i < 70000; ++i) {
      ASSERT_TRUE(w->AddStored(std::to_string(i), bytes(std::to_string(3 * i))).ok());
    }
    ASSERT_TRUE(w->Finish().ok());
  }
  const std::string command = "/usr/bin/python3 '" NUMPROBE_SOURCE_DIR
                              "/tests/golden/check_zip_written.py' '" +
                              out.string() + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

}  // namespace
}  // namespace numprobe
