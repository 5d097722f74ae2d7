// DetectFormat and ReadTensorFile's dispatch over files as real writers make them, with and without
// their extension: numpy (np.save, np.savez_compressed) and torch.save (legacy stream) bytes
// embedded below, a torch.save zip from the msprobe fixtures, and numprobe's safetensors and
// MindSpore writers (byte-compatible with the reference writers, see their own tests).
#include "numprobe/tensor_file.h"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "numprobe/safetensors.h"
#ifdef NUMPROBE_WITH_PROTOBUF
#include "numprobe/ckpt.h"

#include "testing/temp_dir.h"
#endif

namespace numprobe {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  }
  return out;
}

// np.save(f, np.array([1.5, -2.0, 3.25], dtype=np.float32)) with numpy 1.24.
const std::string kNumpyNpy = FromHex(
    "934e554d5059010076007b276465736372273a20273c6634272c2027666f727472616e5f6f72646572273a2046616c"
    "73"
    "652c20277368617065273a2028332c292c207d20202020202020202020202020202020202020202020202020202020"
    "20"
    "202020202020202020202020202020202020202020202020202020202020200a0000c03f000000c000005040");

// np.savez_compressed(f, x=np.array([1, 2, 3], dtype=np.int32)) with numpy 1.24.
const std::string kNumpyNpz = FromHex(
    "504b030414000000080000002100ebc02b044d0000008c00000005001400782e6e7079010010008c00000000000000"
    "4d"
    "000000000000009bec17ea1b10c9c850c650ad9e925a9c5ca46ea5a06e9369a2aea3a09e965f54529498179f5f9492"
    "0a"
    "12774bcc294e058a17672416a402f91ac63a9a3a0ab50a14002e46060606262066066200504b010214031400000008"
    "00"
    "00002100ebc02b044d0000008c000000050000000000000000000000800100000000782e6e7079504b050600000000"
    "01"
    "00010033000000840000000000");

// torch.save({"w": torch.tensor([1.5, -2.0, 3.25])}, f, _use_new_zipfile_serialization=False) with
// torch 1.13.1: the legacy stream (pickled magic number, protocol, sys info, object, storages).
const std::string kTorchLegacy = FromHex(
    "80028a0a6cfc9c46f9206aa850192e80024de9032e80027d710028581000000070726f746f636f6c5f76657273696f"
    "6e"
    "71014de903580d0000006c6974746c655f656e6469616e710288580a000000747970655f73697a657371037d710428"
    "58"
    "0500000073686f727471054b025803000000696e7471064b0458040000006c6f6e6771074b0475752e80027d710058"
    "01"
    "00000077710163746f7263682e5f7574696c730a5f72656275696c645f74656e736f725f76320a7102282858070000"
    "00"
    "73746f72616765710363746f7263680a466c6f617453746f726167650a710458080000003432393834343030710558"
    "03"
    "00000063707571064b034e747107514b004b038571084b018571098963636f6c6c656374696f6e730a4f7264657265"
    "64"
    "446963740a710a2952710b74710c52710d732e80025d7100580800000034323938343430307101612e030000000000"
    "00"
    "000000c03f000000c000005040");

// A torch.save zip written by msprobe (torch 2.x): a bare f32 tensor of shape [10].
const fs::path kTorchZipFixture = fs::path(NUMPROBE_FIXTURES_DIR) /
                                  "msprobe/dump_tensor_base/step0/proc17038/dump_tensor_data/"
                                  "Module.fc1.Linear.forward.0.parameters.bias.pt";

std::span<const std::byte> Bytes(const std::string& s) { return std::as_bytes(std::span(s)); }

// The first bytes of a file, as a caller that reads only a head would pass them.
std::span<const std::byte> Head(const std::string& s, size_t n = 64) {
  return Bytes(s).first(std::min(n, s.size()));
}

std::string FileBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  std::vector<T> out(static_cast<size_t>(t.numel()));
  EXPECT_TRUE(t.view().is_contiguous());
  if (!out.empty()) std::memcpy(out.data(), t.view().first(), out.size() * sizeof(T));
  return out;
}

class TensorFileTest : public ::testing::Test {
 protected:
  fs::path Write(const std::string& name, const std::string& bytes) const {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  // Safetensors from numprobe's writer: two f32 tensors and one metadata entry.
  std::string SafetensorsBytes() const {
    const std::vector<float> w = {0.5F, -1.0F, 2.0F, 4.0F};
    const std::vector<float> b = {3.0F};
    const NamedView views[] = {{"w", TensorView::Contiguous(w.data(), DType::kF32, {2, 2})},
                               {"b", TensorView::Contiguous(b.data(), DType::kF32, {1})}};
    const fs::path path = dir_ / "writer.safetensors";
    EXPECT_TRUE(WriteSafetensors(path, views, {{"format", "pt"}}).ok());
    std::string bytes = FileBytes(path);
    fs::remove(path);
    return bytes;
  }

#ifdef NUMPROBE_WITH_PROTOBUF
  // A MindSpore checkpoint from numprobe's writer: an i32 tensor of 40 elements, so that the
  // first record (160 bytes of content) is longer than a 64-byte head, then a scalar.
  std::string CkptBytes(bool with_crc) const {
    std::vector<int32_t> big(40);
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<int32_t>(i) * 7 - 100;
    const float scalar = 0.25F;
    const NamedView views[] = {
        {"layer.weight", TensorView::Contiguous(big.data(), DType::kI32, {4, 10})},
        {"lr", TensorView::Contiguous(&scalar, DType::kF32, {})}};
    const fs::path path = dir_ / "writer.ckpt";
    EXPECT_TRUE(WriteMindSporeCkpt(path, views, with_crc).ok());
    std::string bytes = FileBytes(path);
    fs::remove(path);
    return bytes;
  }
#endif

  test::TempDir temp_{"numprobe_tensor_file"};
  const fs::path dir_ = temp_.path();
};

TEST_F(TensorFileTest, DetectsMagicFormatsWhateverTheExtension) {
  const std::string torch_zip = FileBytes(kTorchZipFixture);
  ASSERT_GT(torch_zip.size(), 64U) << kTorchZipFixture;
  struct Case {
    const char* what;
    const std::string* bytes;
    FileFormat expected;
  };
  const Case cases[] = {
      {"np.save", &kNumpyNpy, FileFormat::kNpy},
      {"torch.save zip", &torch_zip, FileFormat::kTorch},
      {"torch.save legacy", &kTorchLegacy, FileFormat::kTorch},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    for (const char* name : {"f", "f.npy", "f.pt", "f.dat", "f.safetensors", "f.ckpt"}) {
      SCOPED_TRACE(name);
      EXPECT_EQ(DetectFormat(Head(*c.bytes), name), c.expected);
      EXPECT_EQ(DetectFormat(Bytes(*c.bytes), name), c.expected);
    }
  }
}

TEST_F(TensorFileTest, ZipIsTorchUnlessNamedNpzUntilTheReaderLooksInside) {
  // A zip's members decide (ReadTensorBuffer classifies it); the head alone gives a provisional
  // answer from the extension.
  EXPECT_EQ(DetectFormat(Head(kNumpyNpz), "f.npz"), FileFormat::kNpz);
  EXPECT_EQ(DetectFormat(Head(kNumpyNpz), "f.NPZ"), FileFormat::kNpz);
  EXPECT_EQ(DetectFormat(Head(kNumpyNpz), "f"), FileFormat::kTorch);
  EXPECT_EQ(DetectFormat(Head(kNumpyNpz), "f.pt"), FileFormat::kTorch);
  // An empty zip (np.savez with no arrays) starts with the end-of-central-directory record.
  EXPECT_EQ(DetectFormat(Bytes(std::string("PK\x05\x06", 4) + std::string(18, '\0')), "e.npz"),
            FileFormat::kNpz);
}

TEST_F(TensorFileTest, DetectsSafetensorsByExtensionOrByTheHeaderStart) {
  const std::string bytes = SafetensorsBytes();
  ASSERT_EQ(bytes[8], '{');
  for (const char* name : {"f.safetensors", "f", "f.dat"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(DetectFormat(Head(bytes), name), FileFormat::kSafetensors);
    EXPECT_EQ(DetectFormat(Head(bytes, 9), name), FileFormat::kSafetensors);
  }
  // Extensions outrank the byte-8 guess.
  EXPECT_EQ(DetectFormat(Head(bytes), "f.pt"), FileFormat::kTorch);
  EXPECT_EQ(DetectFormat(Head(bytes), "f.ckpt"), FileFormat::kMindSporeCkpt);
}

TEST_F(TensorFileTest, SafetensorsWhoseFirstByteIs0x0AStaysSafetensors) {
  // A header of 266 bytes (not padded to 8, as some writers leave it): the length field starts
  // with 0x0A like a checkpoint; the safetensors check comes first.
  std::string header = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
  header.append(266 - header.size(), ' ');
  std::string bytes("\x0a\x01\0\0\0\0\0\0", 8);
  bytes += header + "\x07";
  EXPECT_EQ(DetectFormat(Bytes(bytes), "f"), FileFormat::kSafetensors);
  const fs::path path = Write("unpadded", bytes);
  auto file = ReadTensorFile(path);
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  EXPECT_EQ(file->format, FileFormat::kSafetensors);
  ASSERT_EQ(file->tensors.size(), 1U);
  EXPECT_EQ(Values<uint8_t>(file->tensors[0].tensor), std::vector<uint8_t>{7});
}

TEST_F(TensorFileTest, UnknownBytesNeedAKnownExtension) {
  const std::string text = "hello, not a tensor file\n";
  EXPECT_EQ(DetectFormat(Bytes(text), "notes.txt"), FileFormat::kUnknown);
  EXPECT_EQ(DetectFormat(Bytes(text), "notes"), FileFormat::kUnknown);
  EXPECT_EQ(DetectFormat({}, "f"), FileFormat::kUnknown);
  EXPECT_EQ(DetectFormat({}, "f.npy"), FileFormat::kNpy);
  EXPECT_EQ(DetectFormat({}, "f.npz"), FileFormat::kNpz);
  EXPECT_EQ(DetectFormat({}, "f.safetensors"), FileFormat::kSafetensors);
  EXPECT_EQ(DetectFormat({}, "f.pth"), FileFormat::kTorch);
  EXPECT_EQ(DetectFormat({}, "f.bin"), FileFormat::kTorch);
  EXPECT_EQ(DetectFormat({}, "f.ckpt"), FileFormat::kMindSporeCkpt);
}

#ifdef NUMPROBE_WITH_PROTOBUF

TEST_F(TensorFileTest, DetectsACheckpointWithoutExtensionByATrialParse) {
  for (const bool with_crc : {false, true}) {
    SCOPED_TRACE(with_crc ? "with crc_num" : "without crc_num");
    const std::string bytes = CkptBytes(with_crc);
    ASSERT_EQ(bytes[0], '\x0a');
    ASSERT_GT(bytes.size(), 200U);
    // The extension decides alone, from any head.
    EXPECT_EQ(DetectFormat(Head(bytes), "f.ckpt"), FileFormat::kMindSporeCkpt);
    EXPECT_EQ(DetectFormat(Head(bytes), "F.CKPT"), FileFormat::kMindSporeCkpt);
    // Without it, the first record must be there in full to be parsed.
    EXPECT_EQ(DetectFormat(Bytes(bytes), "f"), FileFormat::kMindSporeCkpt);
    EXPECT_EQ(DetectFormat(Bytes(bytes), "f.dat"), FileFormat::kMindSporeCkpt);
    // A head that holds the first record but not the whole file is enough; a 64-byte head that
    // ends inside it is not.
    EXPECT_EQ(DetectFormat(Head(bytes, bytes.size() - 1), "f"), FileFormat::kMindSporeCkpt);
    EXPECT_EQ(DetectFormat(Head(bytes), "f"), FileFormat::kUnknown);
    // Other extensions outrank the trial parse.
    EXPECT_EQ(DetectFormat(Bytes(bytes), "f.pt"), FileFormat::kTorch);
  }
}

TEST_F(TensorFileTest, TrialParseRefusesWhatTheCheckpointReaderRefuses) {
  // A value record holding `inner` (Checkpoint.value = field 1, length-delimited).
  const auto value = [](const std::string& inner) {
    return std::string("\x0a", 1) + static_cast<char>(inner.size()) + inner;
  };
  const std::string tag = std::string("\x0a\x01", 2) + "w";  // Value.tag = "w"
  // TensorProto: dims [2], tensor_type "UInt8", tensor_content {1, 2}.
  const std::string tensor = std::string("\x08\x02\x12\x05", 4) + "UInt8" + "\x1a\x02\x01\x02";
  const std::string good = value(tag + "\x12" + static_cast<char>(tensor.size()) + tensor);
  EXPECT_EQ(DetectFormat(Bytes(good), "f"), FileFormat::kMindSporeCkpt);
  // A MapTensor value parses in full and is a checkpoint the reader does not support.
  EXPECT_EQ(DetectFormat(Bytes(value(tag + std::string("\x1a\x00", 2))), "f"),
            FileFormat::kMindSporeCkpt);

  std::string longer = good;  // declares one byte more than there is
  longer[1] = static_cast<char>(good.size() - 1);
  struct Case {
    const char* what;
    std::string bytes;
  };
  const Case refused[] = {
      {"text starting with a newline", "\nhello world\n"},
      {"two newlines", "\n\n\n\n"},
      {"value without a tensor", value(tag)},
      {"value without a tag",
       value(std::string("\x12", 1) + static_cast<char>(tensor.size()) + tensor)},
      {"truncated record", good.substr(0, good.size() - 1)},
      {"record longer than the input", longer},
      {"malformed length", std::string("\x0a\xff\xff\xff\xff\xff\xff", 7)},
      {"lone 0x0a", std::string("\x0a", 1)},
  };
  for (const Case& c : refused) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(DetectFormat(Bytes(c.bytes), "f"), FileFormat::kUnknown);
  }
}

#endif  // NUMPROBE_WITH_PROTOBUF

TEST_F(TensorFileTest, ReadTensorFileDispatchesWithAndWithoutExtension) {
  struct Case {
    const char* name;  // with its extension; also written without it
    std::string bytes;
    FileFormat format;
  };
  std::vector<Case> cases = {
      {"a.npy", kNumpyNpy, FileFormat::kNpy},
      {"c.npz", kNumpyNpz, FileFormat::kNpz},
      {"legacy.pt", kTorchLegacy, FileFormat::kTorch},
      {"zip.pt", FileBytes(kTorchZipFixture), FileFormat::kTorch},
      {"w.safetensors", SafetensorsBytes(), FileFormat::kSafetensors},
#ifdef NUMPROBE_WITH_PROTOBUF
      {"m.ckpt", CkptBytes(true), FileFormat::kMindSporeCkpt},
#endif
  };
  for (const Case& c : cases) {
    for (const bool with_extension : {true, false}) {
      const std::string name =
          with_extension ? c.name : "noext_" + fs::path(c.name).stem().string();
      SCOPED_TRACE(name);
      auto file = ReadTensorFile(Write(name, c.bytes));
      ASSERT_TRUE(file.ok()) << file.error().ToString();
      EXPECT_EQ(file->format, c.format);
      switch (c.format) {
        case FileFormat::kNpy:
          ASSERT_EQ(file->tensors.size(), 1U);
          EXPECT_EQ(file->tensors[0].name, "");
          EXPECT_EQ(Values<float>(file->tensors[0].tensor), (std::vector<float>{1.5F, -2, 3.25F}));
          break;
        case FileFormat::kNpz:
          ASSERT_EQ(file->tensors.size(), 1U);
          EXPECT_EQ(file->tensors[0].name, "x");
          EXPECT_EQ(Values<int32_t>(file->tensors[0].tensor), (std::vector<int32_t>{1, 2, 3}));
          break;
        case FileFormat::kTorch:
          ASSERT_EQ(file->tensors.size(), 1U);
          EXPECT_EQ(file->tensors[0].tensor.dtype(), DType::kF32);
          if (std::string_view(c.name) == "legacy.pt") {
            EXPECT_EQ(file->tensors[0].name, "w");
            EXPECT_EQ(Values<float>(file->tensors[0].tensor),
                      (std::vector<float>{1.5F, -2, 3.25F}));
          } else {
            EXPECT_EQ(file->tensors[0].tensor.shape(), std::vector<int64_t>{10});
          }
          break;
        case FileFormat::kSafetensors:
          ASSERT_EQ(file->tensors.size(), 2U);
          EXPECT_EQ(file->tensors[0].name, "b");
          EXPECT_EQ(file->tensors[1].name, "w");
          EXPECT_EQ(Values<float>(file->tensors[1].tensor), (std::vector<float>{0.5F, -1, 2, 4}));
          EXPECT_EQ(file->metadata,
                    (std::vector<std::pair<std::string, std::string>>{{"format", "pt"}}));
          break;
        case FileFormat::kMindSporeCkpt: {
          ASSERT_EQ(file->tensors.size(), 2U);
          EXPECT_EQ(file->tensors[0].name, "layer.weight");
          EXPECT_EQ(file->tensors[0].tensor.shape(), (std::vector<int64_t>{4, 10}));
          const std::vector<int32_t> v = Values<int32_t>(file->tensors[0].tensor);
          ASSERT_EQ(v.size(), 40U);
          EXPECT_EQ(v[0], -100);
          EXPECT_EQ(v[39], 39 * 7 - 100);
          EXPECT_EQ(file->tensors[1].name, "lr");
          EXPECT_EQ(Values<float>(file->tensors[1].tensor), std::vector<float>{0.25F});
          break;
        }
        case FileFormat::kUnknown:
        case FileFormat::kPacked:  // never detected from a file's bytes
          FAIL();
      }
    }
  }
}

TEST_F(TensorFileTest, ReadTensorFileRefusesUnknownBytesNamingTheFile) {
  const fs::path path = Write("notes", "\nhello, not a tensor file\n");
  auto file = ReadTensorFile(path);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.error().code(), ErrorCode::kUnsupported);
  EXPECT_THAT(file.error().message(), HasSubstr("unrecognised file format"));
  EXPECT_THAT(file.error().message(), HasSubstr(path.string()));
}

}  // namespace
}  // namespace numprobe
