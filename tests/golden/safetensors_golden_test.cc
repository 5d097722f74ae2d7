// Golden tests of the safetensors reader and writer against files written by the spec from real
// numpy/torch arrays (gen_safetensors.py): names, file order, dtypes, shapes and bytes must match
// expected.json. Each file is then written back with WriteSafetensors and checked by an
// independent Python parser (check_safetensors.py) against the spec, the reference writer's
// layout, and the original's contents.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sys/wait.h>
#include <unistd.h>

#include "numprobe/buffer.h"
#include "numprobe/safetensors.h"

#include "testing/temp_dir.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

constexpr char kPython[] = "/usr/bin/python3";  // the interpreter the project's tests use

fs::path GoldenDir() {
  const char* env = std::getenv("NUMPROBE_GOLDEN_DIR");
  return fs::path(env != nullptr ? env : NUMPROBE_GOLDEN_DIR) / "safetensors";
}

rapidjson::Document LoadExpected() {
  std::ifstream in(GoldenDir() / "expected.json", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  return doc;
}

std::string Fnv1a64(const Tensor& t) {
  uint64_t h = 0xCBF29CE484222325ull;
  const std::byte* p = t.view().first();
  for (int64_t i = 0; i < t.view().span_bytes(); ++i) {
    h ^= static_cast<uint8_t>(p[i]);
    h *= 0x100000001B3ull;
  }
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(h));
  return text;
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

struct CommandResult {
  int exit_code = -1;
  std::string output;
};

CommandResult RunChecker(const fs::path& written, const fs::path& original) {
  const std::string script =
      (fs::path(NUMPROBE_SOURCE_DIR) / "tests" / "golden" / "check_safetensors.py").string();
  const std::string command = std::string(kPython) + " " + ShellQuote(script) + " " +
                              ShellQuote(written.string()) + " " + ShellQuote(original.string()) +
                              " 2>&1";
  CommandResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char chunk[4096];
  size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof(chunk), pipe)) > 0) result.output.append(chunk, n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

using test::TempDir;

class SafetensorsGolden : public ::testing::Test {
 protected:
  void SetUp() override {
    expected_ = LoadExpected();
    ASSERT_FALSE(expected_.HasParseError())
        << "run tests/golden/generate_all.py first: " << (GoldenDir() / "expected.json").string();
    ASSERT_TRUE(expected_.IsObject());
    ASSERT_GE(expected_.MemberCount(), 7u);
  }
  rapidjson::Document expected_;
};

TEST_F(SafetensorsGolden, ReadsEveryFileAsNumpyWroteIt) {
  for (const auto& file : expected_.GetObject()) {
    const std::string name = file.name.GetString();
    SCOPED_TRACE(name);
    auto buffer = Buffer::MapFile(GoldenDir() / name);
    ASSERT_TRUE(buffer.ok()) << buffer.error().ToString();
    auto read = ReadSafetensors(*buffer, {});
    ASSERT_TRUE(read.ok()) << read.error().ToString();
    const auto& want_tensors = file.value["tensors"].GetArray();
    ASSERT_EQ(read->tensors.size(), want_tensors.Size());
    for (rapidjson::SizeType i = 0; i < want_tensors.Size(); ++i) {
      const auto& want = want_tensors[i];
      const NamedTensor& got = read->tensors[i];
      SCOPED_TRACE(want["name"].GetString());
      EXPECT_EQ(got.name, want["name"].GetString());  // file (data-offset) order
      EXPECT_EQ(Name(got.tensor.dtype()), want["dtype"].GetString());
      std::vector<int64_t> shape;
      for (const auto& d : want["shape"].GetArray()) shape.push_back(d.GetInt64());
      EXPECT_EQ(got.tensor.shape(), shape);
      EXPECT_EQ(Fnv1a64(got.tensor), want["fnv1a64"].GetString());
      const bool aligned = reinterpret_cast<uintptr_t>(got.tensor.view().first()) %
                               static_cast<uintptr_t>(ItemSize(got.tensor.dtype())) ==
                           0;
      EXPECT_TRUE(aligned || got.tensor.numel() == 0);
    }
    std::vector<std::pair<std::string, std::string>> want_metadata;
    for (const auto& m : file.value["metadata"].GetObject()) {
      want_metadata.emplace_back(m.name.GetString(), m.value.GetString());
    }
    EXPECT_EQ(read->metadata, want_metadata);
  }
}

TEST_F(SafetensorsGolden, PaddedFilesAreViewedInPlaceUnalignedDataIsCopied) {
  for (const char* name : {"all_dtypes.safetensors", "large.safetensors", "unaligned.safetensors",
                           "leading_whitespace.safetensors"}) {
    SCOPED_TRACE(name);
    auto buffer = Buffer::MapFile(GoldenDir() / name);
    ASSERT_TRUE(buffer.ok());
    auto read = ReadSafetensors(*buffer, {});
    ASSERT_TRUE(read.ok()) << read.error().ToString();
    int copied = 0;
    for (const NamedTensor& t : read->tensors) {
      if (t.tensor.storage().get() != buffer->get()) ++copied;
    }
    if (std::string_view(name) == "unaligned.safetensors") {
      EXPECT_EQ(copied, 4);  // everything but the leading u8 tensor sits at an odd offset
    } else {
      EXPECT_EQ(copied, 0);
    }
  }
}

TEST_F(SafetensorsGolden, WrittenFilesPassAnIndependentSpecCheck) {
  TempDir dir;
  for (const auto& file : expected_.GetObject()) {
    const std::string name = file.name.GetString();
    SCOPED_TRACE(name);
    const fs::path original = GoldenDir() / name;
    auto buffer = Buffer::MapFile(original);
    ASSERT_TRUE(buffer.ok());
    auto read = ReadSafetensors(*buffer, {});
    ASSERT_TRUE(read.ok()) << read.error().ToString();
    std::vector<NamedView> views;
    for (const NamedTensor& t : read->tensors) views.push_back({t.name, t.tensor.view()});
    const fs::path written = dir.path() / name;
    const Status status = WriteSafetensors(written, views, read->metadata);
    ASSERT_TRUE(status.ok()) << status.ToString();
    const CommandResult check = RunChecker(written, original);
    EXPECT_EQ(check.exit_code, 0) << check.output;
  }
}

// The checker is a real check: files outside the writer's layout, or with other contents, fail.
TEST_F(SafetensorsGolden, SpecCheckerRejectsWhatItShould) {
  TempDir dir;
  const fs::path unaligned = GoldenDir() / "unaligned.safetensors";
  const CommandResult layout = RunChecker(unaligned, unaligned);
  EXPECT_EQ(layout.exit_code, 1) << layout.output;
  EXPECT_NE(layout.output.find("not a multiple of 8"), std::string::npos) << layout.output;
  EXPECT_NE(layout.output.find("is not 4-aligned"), std::string::npos) << layout.output;
  EXPECT_NE(layout.output.find("reference writer's is"), std::string::npos) << layout.output;

  // A written file whose last data byte is changed.
  const fs::path original = GoldenDir() / "metadata.safetensors";
  auto buffer = Buffer::MapFile(original);
  ASSERT_TRUE(buffer.ok());
  auto read = ReadSafetensors(*buffer, {});
  ASSERT_TRUE(read.ok());
  std::vector<NamedView> views;
  for (const NamedTensor& t : read->tensors) views.push_back({t.name, t.tensor.view()});
  const fs::path written = dir.path() / "changed.safetensors";
  ASSERT_TRUE(WriteSafetensors(written, views, read->metadata).ok());
  {
    std::fstream f(written, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-1, std::ios::end);
    const int last = f.get();
    f.seekp(-1, std::ios::end);
    f.put(static_cast<char>(last ^ 0x40));
  }
  const CommandResult changed = RunChecker(written, original);
  EXPECT_EQ(changed.exit_code, 1) << changed.output;
  EXPECT_NE(changed.output.find("bytes differ from the original"), std::string::npos)
      << changed.output;

  // Metadata dropped.
  ASSERT_TRUE(WriteSafetensors(written, views).ok());
  const CommandResult no_metadata = RunChecker(written, original);
  EXPECT_EQ(no_metadata.exit_code, 1) << no_metadata.output;
  EXPECT_NE(no_metadata.output.find("metadata"), std::string::npos) << no_metadata.output;
}

}  // namespace
}  // namespace numprobe
