// ReadTorch / WriteTorch on hand-made files: every rule of the .pt reader (record sizes, views,
// byte order, dtypes, devices, metadata bits, wrappers, names, the legacy stream) and every
// error path, with its code and a key phrase of its message.
#include "numprobe/torch_pt.h"

#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "numprobe/buffer.h"

#include "formats/zip.h"
#include "testing/temp_dir.h"
#include "unit/formats/pickle_builder.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;
using P = ::numprobe::testing::PickleBuilder;

struct Entry {
  std::string name;
  std::string data;
  bool deflate = false;
  uint32_t alignment = 64;
};

template <typename T>
std::string Raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

class TorchPt : public ::testing::Test {
 protected:
  fs::path Zip(const std::vector<Entry>& entries, const std::string& file = "t.pt") {
    const fs::path path = dir_ / file;
    auto w = ZipWriter::Create(path);
    EXPECT_TRUE(w.ok());
    for (const Entry& e : entries) {
      const auto bytes = std::as_bytes(std::span(e.data));
      Status s =
          e.deflate ? w->AddDeflated(e.name, bytes) : w->AddStored(e.name, bytes, e.alignment);
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
    EXPECT_TRUE(w->Finish().ok());
    return path;
  }
  // archive/data.pkl + archive/data/<key> records + archive/version.
  fs::path Torch(const std::string& pkl,
                 const std::vector<std::pair<std::string, std::string>>& records,
                 const std::string& prefix = "archive") {
    std::vector<Entry> entries = {{prefix + "/data.pkl", pkl}};
    for (const auto& [key, data] : records) entries.push_back({prefix + "/data/" + key, data});
    entries.push_back({prefix + "/version", "3\n"});
    return Zip(entries);
  }
  fs::path File(const std::string& bytes, const std::string& name = "legacy.pt") {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  static Result<TensorFile> Read(const fs::path& path, bool inert = false) {
    NUMPROBE_ASSIGN_OR_RETURN(auto buffer, Buffer::MapFile(path));
    ReadOptions options;
    options.inert_pickle = inert;
    return ReadTorch(buffer, options);
  }
  static std::string Bytes(const Tensor& t) {
    auto c = Tensor::CopyOf(t.view());
    EXPECT_TRUE(c.ok());
    return std::string(reinterpret_cast<const char*>(c->view().first()),
                       static_cast<size_t>(c->numel() * ItemSize(c->dtype())));
  }
  static void ExpectError(const Result<TensorFile>& r, ErrorCode code, std::string_view phrase) {
    ASSERT_FALSE(r.ok()) << "expected an error containing: " << phrase;
    EXPECT_EQ(r.error().code(), code) << r.error().ToString();
    EXPECT_NE(r.error().message().find(phrase), std::string::npos) << r.error().ToString();
  }

  test::TempDir temp_{"numprobe_pt"};
  const fs::path dir_ = temp_.path();
};

const std::vector<float> kSix = {1.5f, -2.0f, 3.25f, 0.0f, -0.0f, 1e30f};

TEST_F(TorchPt, StateDictNamesDevicesAndValues) {
  P p;
  p.proto(2).ordered_dict().op('(');
  p.bu("a").tensor_v2("FloatStorage", "0", 6, 0, {2, 3}, {3, 1}, "cuda:0");
  p.bu("b").tensor_v2("HalfStorage", "1", 2, 0, {2}, {1}, "npu:0");
  p.bu("c").tensor_v2("LongStorage", "2", 1, 0, {}, {}, "mps");
  p.bu("d").tensor_v2("BoolStorage", "3", 0, 0, {0}, {1}, "meta");
  p.op('u').stop();
  const std::vector<uint16_t> half = {0x3c00, 0xc000};
  const std::vector<int64_t> one = {-7};
  auto r = Read(Torch(p.str(), {{"0", Raw(kSix)}, {"1", Raw(half)}, {"2", Raw(one)}, {"3", ""}}));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->format, FileFormat::kTorch);
  ASSERT_EQ(r->tensors.size(), 4u);
  const std::vector<std::tuple<std::string, DType, std::string>> want = {
      {"a", DType::kF32, "cuda:0"},
      {"b", DType::kF16, "npu:0"},
      {"c", DType::kI64, "mps"},
      {"d", DType::kBool, "meta"}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(r->tensors[i].name, std::get<0>(want[i]));
    EXPECT_EQ(r->tensors[i].tensor.dtype(), std::get<1>(want[i]));
    EXPECT_EQ(r->tensors[i].device, std::get<2>(want[i]));
  }
  EXPECT_EQ(r->tensors[0].tensor.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Bytes(r->tensors[0].tensor), Raw(kSix));
  EXPECT_TRUE(r->tensors[0].tensor.storage()->is_mapped());  // zero-copy
  EXPECT_EQ(Bytes(r->tensors[1].tensor), Raw(half));
  EXPECT_EQ(Bytes(r->tensors[2].tensor), Raw(one));
  EXPECT_EQ(r->tensors[3].tensor.numel(), 0);
  EXPECT_TRUE(r->warnings.empty());
}

TEST_F(TorchPt, ArchiveFolderComesFromTheFirstEntry) {
  const std::string pkl = P().proto(2).tensor_v2("FloatStorage", "0", 6, 0, {6}, {1}).stop().str();
  auto r = Read(Torch(pkl, {{"0", Raw(kSix)}}, "my_model"));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->tensors[0].name, "");
  auto no_folder = Read(Zip({{"data.pkl", pkl}}));
  ExpectError(no_folder, ErrorCode::kCorrupt, "first zip entry 'data.pkl' has no archive folder");
  auto no_pkl = Read(Zip({{"archive/version", "3\n"}}));
  ExpectError(no_pkl, ErrorCode::kCorrupt, "zip has no 'archive/data.pkl'");
  auto script = Read(Zip({{"archive/constants.pkl", pkl}, {"archive/code/", ""}}));
  ExpectError(script, ErrorCode::kUnsupported, "TorchScript");
}

TEST_F(TorchPt, SharedStoragesAndViews) {
  P p;
  p.proto(2).op('}').op('(');
  p.bu("whole").tensor_v2("FloatStorage", "0", 6, 0, {6}, {1});
  p.bu("t").tensor_v2("FloatStorage", "0", 6, 0, {3, 2}, {1, 3});      // a transpose
  p.bu("slice").tensor_v2("FloatStorage", "0", 6, 1, {2}, {2});        // offset 1, step 2
  p.bu("bcast").tensor_v2("FloatStorage", "0", 6, 5, {4, 2}, {0, 0});  // stride 0
  p.op('u').stop();
  auto r = Read(Torch(p.str(), {{"0", Raw(kSix)}}));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->tensors.size(), 4u);
  for (const auto& t : r->tensors)
    EXPECT_EQ(t.tensor.view().data, r->tensors[0].tensor.view().data);
  EXPECT_EQ(Bytes(r->tensors[1].tensor),
            Raw(std::vector<float>{1.5f, 0.0f, -2.0f, -0.0f, 3.25f, 1e30f}));
  EXPECT_EQ(Bytes(r->tensors[2].tensor), Raw(std::vector<float>{-2.0f, 0.0f}));
  EXPECT_EQ(Bytes(r->tensors[3].tensor), Raw(std::vector<float>(8, 1e30f)));
}

TEST_F(TorchPt, DeflatedStoragesAreStreamedWhenAsked) {
  std::vector<float> values(20000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f - 7.0f;
  const std::string flags(3000, '\x01');
  P p;
  p.proto(2).op('}').op('(');
  p.bu("whole").tensor_v2("FloatStorage", "0", 20000, 0, {100, 200}, {200, 1});
  p.bu("tail").tensor_v2("FloatStorage", "0", 20000, 19990, {10}, {1});      // storage offset
  p.bu("t").tensor_v2("FloatStorage", "0", 20000, 0, {200, 100}, {1, 200});  // a transpose
  p.bu("flags").tensor_v2("BoolStorage", "1", 3000, 0, {3000}, {1});
  p.op('u').stop();
  const fs::path path = Zip({{"archive/data.pkl", p.str(), true},
                             {"archive/data/0", Raw(values), true},
                             {"archive/data/1", flags, true},
                             {"archive/version", "3\n", false}});
  auto eager = Read(path);
  ASSERT_TRUE(eager.ok()) << eager.error().ToString();
  ReadOptions options;
  options.stream_deflated_over = 1000;
  auto r = ReadTorch(Buffer::MapFile(path).value(), options);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->tensors.size(), 4u);
  EXPECT_TRUE(r->tensors[0].tensor.is_streamed());
  EXPECT_TRUE(r->tensors[1].tensor.is_streamed());
  EXPECT_TRUE(r->tensors[2].tensor.is_streamed());
  // A bool storage is loaded whole (bytes other than 0/1 are fixed up in memory).
  EXPECT_FALSE(r->tensors[3].tensor.is_streamed());
  EXPECT_EQ(r->tensors[0].tensor.streamed(), r->tensors[1].tensor.streamed());  // one storage
  EXPECT_EQ(r->tensors[1].tensor.view().byte_offset, 19990 * 4);
  for (size_t i = 0; i < 4; ++i) {
    auto whole = r->tensors[i].tensor.InMemory(uint64_t{1} << 20);
    ASSERT_TRUE(whole.ok()) << whole.error().ToString();
    EXPECT_EQ(Bytes(*whole), Bytes(eager->tensors[i].tensor)) << i;
  }
  auto refused = r->tensors[0].tensor.InMemory(79999);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("zip entry 'archive/data/0' (deflated, "),
            std::string::npos)
      << refused.error().message();
  EXPECT_NE(refused.error().message().find("80000 bytes, over the memory limit of 79999"),
            std::string::npos)
      << refused.error().message();
}

TEST_F(TorchPt, BigEndianRecordsAreSwappedCopies) {
  // f32 {1.5, -2} and c64 {(1, -1)} stored big-endian.
  const std::string f32be("\x3f\xc0\x00\x00\xc0\x00\x00\x00", 8);
  const std::string c64be("\x3f\x80\x00\x00\xbf\x80\x00\x00", 8);
  P p;
  p.proto(2).op('(');
  p.tensor_v2("FloatStorage", "0", 2, 0, {2}, {1});
  p.tensor_v2("ComplexFloatStorage", "1", 1, 0, {1}, {1});
  p.tensor_v2("BoolStorage", "2", 2, 0, {2}, {1});
  p.op('l').stop();
  auto r = Read(Zip({{"archive/data.pkl", p.str()},
                     {"archive/byteorder", "big"},
                     {"archive/data/0", f32be},
                     {"archive/data/1", c64be},
                     {"archive/data/2", std::string("\x01\x00", 2)}}));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(Bytes(r->tensors[0].tensor), Raw(std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(Bytes(r->tensors[1].tensor), Raw(std::vector<float>{1.0f, -1.0f}));
  EXPECT_EQ(Bytes(r->tensors[2].tensor), std::string("\x01\x00", 2));
  EXPECT_FALSE(r->tensors[0].tensor.storage()->is_mapped());
  EXPECT_TRUE(r->tensors[2].tensor.storage()->is_mapped());  // one-byte elements need no swap
  auto bad = Read(Zip({{"archive/data.pkl", p.str()}, {"archive/byteorder", "middle"}}));
  ExpectError(bad, ErrorCode::kCorrupt, "byteorder record says 'middle'");
}

TEST_F(TorchPt, NewDTypesThroughRebuildTensorV3) {
  P p;
  p.proto(2).op('}').op('(');
  p.bu("e4m3").tensor_v3("float8_e4m3fn", "0", 4, 0, {2, 2}, {2, 1});
  p.bu("e5m2").tensor_v3("float8_e5m2", "1", 3, 1, {2}, {1});
  p.bu("u16").tensor_v3("uint16", "2", 6, 0, {3}, {1});
  p.bu("bytes").tensor_v2("UntypedStorage", "2", 6, 0, {6}, {1});  // the same bytes as uint8
  p.op('u').stop();
  auto r = Read(Torch(p.str(), {{"0", "\x38\x40\xb8\x7f"},
                                {"1", std::string("\x00\x3c\xc0", 3)},
                                {"2", std::string("\x01\x00\xff\xff\x00\x80", 6)}}));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->tensors.size(), 4u);
  EXPECT_EQ(r->tensors[0].tensor.dtype(), DType::kF8E4M3FN);
  EXPECT_EQ(Bytes(r->tensors[0].tensor), "\x38\x40\xb8\x7f");
  EXPECT_EQ(r->tensors[1].tensor.dtype(), DType::kF8E5M2);
  EXPECT_EQ(Bytes(r->tensors[1].tensor), "\x3c\xc0");
  EXPECT_EQ(r->tensors[2].tensor.dtype(), DType::kU16);
  EXPECT_EQ(Bytes(r->tensors[2].tensor), Raw(std::vector<uint16_t>{1, 0xffff, 0x8000}));
  EXPECT_EQ(r->tensors[3].tensor.dtype(), DType::kU8);
  EXPECT_EQ(r->tensors[3].tensor.numel(), 6);

  const std::string c32 = P().proto(2).tensor_v3("complex32", "0", 4, 0, {1}, {1}).stop().str();
  ExpectError(Read(Torch(c32, {{"0", "abcd"}})), ErrorCode::kUnsupported,
              "dtype torch.complex32 is not supported");
  // An UntypedStorage whose byte count is not a whole number of elements.
  const std::string odd = P().proto(2).tensor_v3("uint16", "0", 3, 0, {1}, {1}).stop().str();
  ExpectError(Read(Torch(odd, {{"0", "abc"}})), ErrorCode::kCorrupt, "not a whole number of u16");
}

TEST_F(TorchPt, ConjugateAndNegativeBitsAreRefused) {
  auto meta = [](std::string_view key, bool value) {
    return P().op('}').bu(key).op(value ? 0x88 : 0x89).op('s').str();
  };
  auto file = [&](const std::string& m) {
    return Torch(P().proto(2).tensor_v2("FloatStorage", "0", 6, 0, {6}, {1}, "cpu", m).stop().str(),
                 {{"0", Raw(kSix)}});
  };
  ExpectError(Read(file(meta("conj", true))), ErrorCode::kUnsupported, "conjugate bit");
  ExpectError(Read(file(meta("neg", true))), ErrorCode::kUnsupported, "negative bit");
  ExpectError(Read(file(meta("zeta", true))), ErrorCode::kUnsupported, "metadata 'zeta'");
  auto clear = Read(file(meta("conj", false)));
  ASSERT_TRUE(clear.ok()) << clear.error().ToString();
  EXPECT_EQ(Bytes(clear->tensors[0].tensor), Raw(kSix));
}

TEST_F(TorchPt, StorageRecordChecks) {
  const std::string six = P().proto(2).tensor_v2("FloatStorage", "0", 6, 0, {6}, {1}).stop().str();
  ExpectError(Read(Torch(six, {{"0", Raw(kSix).substr(0, 20)}})), ErrorCode::kCorrupt,
              "storage '0' (torch.FloatStorage, 6 elements) does not match record "
              "'archive/data/0' of 20 bytes");
  ExpectError(Read(Torch(six, {})), ErrorCode::kCorrupt,
              "storage '0' has no record 'archive/data/0'");
  const std::string huge =
      P().proto(2).tensor_v2("DoubleStorage", "0", int64_t{1} << 62, 0, {1}, {1}).stop().str();
  ExpectError(Read(Torch(huge, {{"0", Raw(kSix)}})), ErrorCode::kCorrupt, "does not match record");
  P two;
  two.proto(2).op('(').tensor_v2("FloatStorage", "0", 6, 0, {6}, {1});
  two.tensor_v2("HalfStorage", "0", 12, 0, {12}, {1}).op('l').stop();
  ExpectError(
      Read(Torch(two.str(), {{"0", Raw(kSix)}})), ErrorCode::kCorrupt,
      "storage '0' is declared as both torch.FloatStorage of 6 and torch.HalfStorage of 12");
}

TEST_F(TorchPt, ViewsMustStayInsideTheirStorage) {
  auto view = [&](int64_t offset, std::vector<int64_t> shape, std::vector<int64_t> stride) {
    return Read(
        Torch(P().proto(2).tensor_v2("FloatStorage", "0", 6, offset, shape, stride).stop().str(),
              {{"0", Raw(kSix)}}));
  };
  ExpectError(view(3, {4}, {1}), ErrorCode::kOutOfRange,
              "tensor: view of storage '0': view needs 28 bytes but storage has 24");
  ExpectError(view(0, {2, 2}, {5, 1}), ErrorCode::kOutOfRange, "view needs 28 bytes");
  ExpectError(view(0, {2, 3}, {3}), ErrorCode::kCorrupt, "shape has 2 dims but strides 1");
  ExpectError(view(0, {int64_t{1} << 40, int64_t{1} << 40}, {1, 1}), ErrorCode::kOutOfRange,
              "overflows");
  ExpectError(view(int64_t{1} << 62, {1}, {1}), ErrorCode::kOutOfRange, "overflows");
  // Broadcast bombs: 6 stored floats seen as 2^40 elements.
  ExpectError(view(0, {int64_t{1} << 20, int64_t{1} << 20}, {0, 0}), ErrorCode::kOutOfRange,
              "has 1099511627776 elements over 6 stored ones");
  auto broadcast = view(0, {1000, 6}, {0, 1});  // a legitimate expand()
  ASSERT_TRUE(broadcast.ok()) << broadcast.error().ToString();
  auto empty = view(100, {0, 5}, {5, 1});  // an empty view addresses nothing
  ASSERT_TRUE(empty.ok()) << empty.error().ToString();
  EXPECT_EQ(empty->tensors[0].tensor.numel(), 0);
}

TEST_F(TorchPt, MalformedRebuildArguments) {
  auto read = [&](const std::string& pkl) { return Read(Torch(pkl, {{"0", Raw(kSix)}})); };
  P few;
  few.proto(2).global("torch._utils", "_rebuild_tensor_v2").op('(').k(0).op('t').op('R').stop();
  ExpectError(read(few.str()), ErrorCode::kCorrupt, "_rebuild_tensor_v2 needs 6 or 7 arguments");
  P no_storage;
  no_storage.proto(2).global("torch._utils", "_rebuild_tensor_v2").op('(').k(0).k(0).ints({1});
  no_storage.ints({1}).op(0x89).ordered_dict().op('t').op('R').stop();
  ExpectError(read(no_storage.str()), ErrorCode::kCorrupt, "_rebuild_tensor_v2: the storage is 0");
  P neg_dim;
  neg_dim.proto(2).global("torch._utils", "_rebuild_tensor_v2").op('(');
  neg_dim.storage("FloatStorage", "0", "cpu", 6).k(0).op('(').op('J').le(0xffffffff, 4).op('t');
  neg_dim.ints({1}).op(0x89).ordered_dict().op('t').op('R').stop();
  ExpectError(read(neg_dim.str()), ErrorCode::kCorrupt, "tensor size holds -1");
  P bad_pid;
  bad_pid.proto(2).global("torch._utils", "_rebuild_tensor_v2").op('(');
  bad_pid.bu("module").k(1).op(0x86).op('Q').k(0).ints({1}).ints({1}).op(0x89);
  bad_pid.ordered_dict().op('t').op('R').stop();
  ExpectError(read(bad_pid.str()), ErrorCode::kCorrupt, "the first item is not 'storage'");
  P bad_type;
  bad_type.proto(2).global("torch._utils", "_rebuild_tensor_v2").op('(');
  bad_type.op('(').bu("storage").global("torch", "float32").bu("0").bu("cpu").k(6).op('t').op('Q');
  bad_type.k(0).ints({1}).ints({1}).op(0x89).ordered_dict().op('t').op('R').stop();
  ExpectError(read(bad_type.str()), ErrorCode::kCorrupt,
              "the storage type is not a torch storage class");
  P dims;
  dims.proto(2)
      .tensor_v2("FloatStorage", "0", 6, 0, std::vector<int64_t>(65, 1),
                 std::vector<int64_t>(65, 1))
      .stop();
  ExpectError(read(dims.str()), ErrorCode::kUnsupported, "tensor with 65 dims");
}

TEST_F(TorchPt, ParameterAndSubclassWrappers) {
  auto inner = [](P& p) { p.tensor_v2("FloatStorage", "0", 6, 0, {6}, {1}); };
  P p;
  p.proto(2).op('(');
  p.global("torch._utils", "_rebuild_parameter").op('(');
  inner(p);
  p.op(0x88).ordered_dict().op('t').op('R');
  p.global("torch._utils", "_rebuild_parameter_with_state").op('(');
  inner(p);
  p.op(0x89).ordered_dict().op('}').op('t').op('R');
  // _rebuild_from_type_v2(_rebuild_tensor_v2, torch.Tensor, (args...), {})
  p.global("torch._tensor", "_rebuild_from_type_v2").op('(');
  p.global("torch._utils", "_rebuild_tensor_v2").global("torch", "Tensor").op('(');
  p.storage("FloatStorage", "0", "cpu", 6).k(1).ints({2}).ints({1}).op(0x89).ordered_dict().op('t');
  p.op('}').op('t').op('R');
  // Parameter(tensor, False) via NEWOBJ, then BUILD with plain state.
  p.global("torch.nn.parameter", "Parameter").op('(');
  inner(p);
  p.op(0x89).op('t').op(0x81).op('}').op('b');
  p.op('l').stop();
  auto r = Read(Torch(p.str(), {{"0", Raw(kSix)}}));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->tensors.size(), 4u);
  EXPECT_EQ(r->tensors[0].name, "0");
  EXPECT_EQ(r->tensors[3].name, "3");
  EXPECT_EQ(Bytes(r->tensors[2].tensor), Raw(std::vector<float>{-2.0f, 3.25f}));

  P with_state;
  with_state.proto(2).global("torch._tensor", "_rebuild_from_type_v2").op('(');
  with_state.global("torch._utils", "_rebuild_tensor_v2").global("torch", "Tensor").op('(');
  with_state.storage("FloatStorage", "0", "cpu", 6)
      .k(0)
      .ints({6})
      .ints({1})
      .op(0x89)
      .ordered_dict();
  with_state.op('t').op('}').bu("attr").k(1).op('s').op('t').op('R').stop();
  ExpectError(Read(Torch(with_state.str(), {{"0", Raw(kSix)}})), ErrorCode::kUnsupported,
              "tensor with Python attributes");
  P set_state;  // legacy Tensor.set_ state: BUILD with (storage, ...)
  set_state.proto(2);
  inner(set_state);
  set_state.op('(').storage("FloatStorage", "0", "cpu", 6).k(0).op('t').op('b').stop();
  ExpectError(Read(Torch(set_state.str(), {{"0", Raw(kSix)}})), ErrorCode::kUnsupported,
              "Tensor.set_");
}

TEST_F(TorchPt, NestedContainersFlattenWithDots) {
  // {'state': {0: {'exp_avg': t, 'step': 3}}, 'param_groups': [{'params': [0, 1], 'lr': 0.1}],
  //  'pair': (t, t), (1, 'a'): t, None: t, 2.5: t, True: t}
  P p;
  p.proto(2).op('}').op('(');
  p.bu("state").op('}').k(0).op('}').bu("exp_avg");
  p.tensor_v2("FloatStorage", "0", 6, 0, {6}, {1}).op('q').op(0).op('s');  // memo 0 = the tensor
  p.bu("step").k(3).op('s').op('s');
  p.bu("param_groups").op(']').op('}').bu("params").op(']').op('(').k(0).k(1).op('e').op('s');
  p.bu("lr").op('G').raw(std::string("\x3f\xb9\x99\x99\x99\x99\x99\x9a", 8)).op('s').op('a');
  p.bu("pair").op('h').op(0).op('h').op(0).op(0x86);
  p.k(1).bu("a").op(0x86).op('h').op(0);
  p.op('N').op('h').op(0);
  p.op('G').raw(std::string("\x40\x04\0\0\0\0\0\0", 8)).op('h').op(0);
  p.op(0x88).op('h').op(0);
  p.op('u').stop();
  const std::string s = p.str();
  auto r = Read(Torch(s, {{"0", Raw(kSix)}}));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  std::vector<std::string> names;
  for (const auto& t : r->tensors) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"state.0.exp_avg", "pair.0", "pair.1", "(1, 'a')",
                                             "None", "2.5", "True"}));
}

TEST_F(TorchPt, CyclesAndSharingAreWalkedOnce) {
  // l = [t]; l.append(l); {'x': l, 'y': l}: the list is expanded once, under 'x'.
  P p;
  p.proto(2).op('}').op('(').bu("x").op(']').op('q').op(1);
  p.tensor_v2("FloatStorage", "0", 6, 0, {6}, {1}).op('a').op('h').op(1).op('a');
  p.bu("y").op('h').op(1).op('u').stop();
  auto r = Read(Torch(p.str(), {{"0", Raw(kSix)}}));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->tensors.size(), 1u);
  EXPECT_EQ(r->tensors[0].name, "x.0");
}

TEST_F(TorchPt, DeepNestingIsCapped) {
  P p;
  p.proto(2);
  for (int i = 0; i < 1100; ++i) p.op(']');
  for (int i = 0; i < 1099; ++i) p.op('a');
  p.stop();
  ExpectError(Read(Torch(p.str(), {})), ErrorCode::kOutOfRange,
              "containers nested deeper than 1000");
}

TEST_F(TorchPt, BareStorageBecomesAFlatTensor) {
  const std::string pkl = P().proto(2).storage("IntStorage", "0", "cpu", 3).stop().str();
  auto r = Read(Torch(pkl, {{"0", Raw(std::vector<int32_t>{4, -5, 6})}}));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->tensors.size(), 1u);
  EXPECT_EQ(r->tensors[0].tensor.dtype(), DType::kI32);
  EXPECT_EQ(r->tensors[0].tensor.shape(), (std::vector<int64_t>{3}));
}

TEST_F(TorchPt, CrcMismatchIsAWarning) {
  const std::string pkl = P().proto(2).tensor_v2("FloatStorage", "0", 6, 0, {6}, {1}).stop().str();
  const fs::path path = Torch(pkl, {{"0", Raw(kSix)}});
  // Flip one byte of the record (its CRC in the central directory stays the original's).
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const size_t at = bytes.find(Raw(kSix));
  ASSERT_NE(at, std::string::npos);
  bytes[at] = static_cast<char>(bytes[at] ^ 1);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  auto r = Read(path);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0], "CRC-32 mismatch in zip entry 'archive/data/0'");
}

TEST_F(TorchPt, BoolBytesOtherThanZeroOrOneAreNormalized) {
  const std::string pkl = P().proto(2).tensor_v2("BoolStorage", "0", 3, 0, {3}, {1}).stop().str();
  auto r = Read(Torch(pkl, {{"0", std::string("\x00\x02\x01", 3)}}));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(Bytes(r->tensors[0].tensor), std::string("\x00\x01\x01", 3));
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("bytes other than 0 and 1"), std::string::npos);
}

TEST_F(TorchPt, MisalignedAndDeflatedRecordsAreCopied) {
  const std::vector<double> values = {1.0, -2.0, 3.5};
  for (int pad = 0; pad < 8; ++pad) {
    P p;
    p.proto(2);
    for (int i = 0; i < pad; ++i) p.op('N').op('0');  // shifts where the next entry lands
    p.tensor_v2("DoubleStorage", "0", 3, 0, {3}, {1}).stop();
    const fs::path path =
        Zip({{"archive/data.pkl", p.str(), false, 0}, {"archive/data/0", Raw(values), false, 0}});
    auto buffer = Buffer::MapFile(path);
    ASSERT_TRUE(buffer.ok());
    auto archive = ZipArchive::Open(*buffer);
    ASSERT_TRUE(archive.ok());
    if (archive->Find("archive/data/0")->data_offset % 8 == 0) continue;
    auto r = Read(path);
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    EXPECT_EQ(Bytes(r->tensors[0].tensor), Raw(values));
    EXPECT_FALSE(r->tensors[0].tensor.storage()->is_mapped());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(r->tensors[0].tensor.view().data) % 8, 0u);
    break;
  }
  const std::string pkl = P().proto(2).tensor_v2("DoubleStorage", "0", 3, 0, {3}, {1}).stop().str();
  auto deflated =
      Read(Zip({{"archive/data.pkl", pkl, true}, {"archive/data/0", Raw(values), true}}));
  ASSERT_TRUE(deflated.ok()) << deflated.error().ToString();
  EXPECT_EQ(Bytes(deflated->tensors[0].tensor), Raw(values));
}

TEST_F(TorchPt, RejectedGlobalsNameTheRecord) {
  const std::string pkl =
      P().proto(2).global("os", "system").bu("touch X").op(0x85).op('R').stop().str();
  ExpectError(Read(Torch(pkl, {})), ErrorCode::kRejected,
              "archive/data.pkl: global 'os.system' is not allowed (opcode GLOBAL at offset 2)");
  const std::string q = P().proto(2).global("torch._utils", "_rebuild_qtensor").stop().str();
  ExpectError(Read(Torch(q, {})), ErrorCode::kUnsupported,
              "torch._utils._rebuild_qtensor (quantized tensor) is not supported");
}

TEST_F(TorchPt, InertModeFindsTensorsInOpaqueObjects) {
  // A whole-module pickle in miniature: __main__.Net NEWOBJ + BUILD {'_parameters': {'w': t},
  // '_modules': {'sub': Sub with '_buffers' {'b': t2}}, '_hooks': {}, 'extra': t3}.
  P p;
  p.proto(2).global("__main__", "Net").op(')').op(0x81).op('}').op('(');
  p.bu("_parameters").ordered_dict().bu("w").tensor_v2("FloatStorage", "0", 6, 0, {6}, {1}).op('s');
  p.bu("_modules").ordered_dict().bu("sub");
  p.global("__main__", "Sub").op(')').op(0x81).op('}').bu("_buffers").op('}').bu("b");
  p.tensor_v2("FloatStorage", "0", 6, 2, {2}, {1}).op('s').op('s').op('b').op('s');
  p.bu("_hooks").op('}').bu("extra").tensor_v2("FloatStorage", "0", 6, 5, {1}, {1});
  p.op('u').op('b').stop();
  const fs::path path = Torch(p.str(), {{"0", Raw(kSix)}});
  ExpectError(Read(path), ErrorCode::kRejected, "global '__main__.Net' is not allowed");
  auto r = Read(path, /*inert=*/true);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  std::vector<std::string> names;
  for (const auto& t : r->tensors) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"w", "sub.b", "extra"}));
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0],
            "inert pickle: objects of 2 classes were kept opaque (not constructed): __main__.Net, "
            "__main__.Sub");
}

TEST_F(TorchPt, PickleSizeIsCapped) {
  const std::string pkl = P().proto(2).bu(std::string(5000, 'x')).stop().str();
  auto buffer = Buffer::MapFile(Torch(pkl, {}));
  ASSERT_TRUE(buffer.ok());
  ReadOptions options;
  options.max_header_bytes = 1000;
  auto r = ReadTorch(*buffer, options);
  ExpectError(r, ErrorCode::kOutOfRange,
              "'archive/data.pkl' of 5008 bytes exceeds the limit of 1000");
}

TEST_F(TorchPt, NotATorchFile) {
  ExpectError(Read(File("hello world", "x.pt")), ErrorCode::kCorrupt, "not a torch.save file");
  std::string tar(600, '\0');
  tar.replace(257, 5, "ustar");
  ExpectError(Read(File(tar, "old.pt")), ErrorCode::kUnsupported, "tar format");
}

// ----- legacy stream -----

struct LegacyParts {
  std::string sys_little = "\x88";  // NEWTRUE
  std::string object;
  std::vector<std::string> keys;
  std::string data;
};

std::string Legacy(const LegacyParts& parts) {
  std::string out("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 15);
  out += P().proto(2).op('M').le(1001, 2).stop().str();
  P sys_info;
  sys_info.proto(2).op('}').bu("protocol_version").op('M').le(1001, 2).op('s');
  sys_info.bu("little_endian").raw(parts.sys_little).op('s').stop();
  out += sys_info.str();
  out += parts.object;
  P keys;
  keys.proto(2).op(']').op('(');
  for (const auto& k : parts.keys) keys.bu(k);
  out += keys.op('e').stop().str();
  return out + parts.data;
}

// A legacy persistent id: ('storage', type, key, 'cpu', numel, view_metadata).
P& LegacyTensor(P& p, std::string_view type, std::string_view key, int64_t numel, int64_t offset,
                std::vector<int64_t> shape, std::vector<int64_t> stride,
                std::string_view view = {}) {
  p.global("torch._utils", "_rebuild_tensor_v2").op('(');
  p.op('(').bu("storage").global("torch", type).bu(key).bu("cpu").i(numel);
  if (view.empty()) {
    p.op('N');
  } else {
    p.raw(view);
  }
  p.op('t').op('Q').i(offset).ints(shape).ints(stride).op(0x89).ordered_dict().op('t').op('R');
  return p;
}

std::string Count(int64_t n) { return P().le(static_cast<uint64_t>(n), 8).str(); }

TEST_F(TorchPt, LegacyStream) {
  P obj;
  obj.proto(2).op('}').op('(').bu("w");
  LegacyTensor(obj, "FloatStorage", "140", 6, 0, {2, 3}, {3, 1});
  obj.bu("v");  // a storage view: elements 2..5 of the root
  LegacyTensor(obj, "FloatStorage", "140", 6, 1, {2}, {1}, P().bu("141").k(2).k(3).op(0x87).str());
  obj.bu("i");
  LegacyTensor(obj, "LongStorage", "77", 2, 0, {2}, {1});
  obj.op('u').stop();
  LegacyParts parts;
  parts.object = obj.str();
  parts.keys = {"140", "77"};
  parts.data = Count(6) + Raw(kSix) + Count(2) + Raw(std::vector<int64_t>{5, -6});
  auto r = Read(File(Legacy(parts)));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->tensors.size(), 3u);
  EXPECT_EQ(r->tensors[0].name, "w");
  EXPECT_EQ(Bytes(r->tensors[0].tensor), Raw(kSix));
  EXPECT_EQ(Bytes(r->tensors[1].tensor),
            Raw(std::vector<float>{0.0f, -0.0f}));  // view 2 + offset 1
  EXPECT_EQ(Bytes(r->tensors[2].tensor), Raw(std::vector<int64_t>{5, -6}));

  // little_endian False: the data is big-endian.
  LegacyParts be = parts;
  be.sys_little = "\x89";
  std::string swapped = Raw(kSix);
  for (size_t i = 0; i < swapped.size(); i += 4)
    std::reverse(swapped.begin() + i, swapped.begin() + i + 4);
  std::string swapped_i = Raw(std::vector<int64_t>{5, -6});
  for (size_t i = 0; i < swapped_i.size(); i += 8)
    std::reverse(swapped_i.begin() + i, swapped_i.begin() + i + 8);
  be.data = Count(6) + swapped + Count(2) + swapped_i;
  auto rb = Read(File(Legacy(be), "be.pt"));
  ASSERT_TRUE(rb.ok()) << rb.error().ToString();
  EXPECT_EQ(Bytes(rb->tensors[0].tensor), Raw(kSix));
  EXPECT_EQ(Bytes(rb->tensors[2].tensor), Raw(std::vector<int64_t>{5, -6}));

  LegacyParts lying = parts;
  lying.data = Count(7) + Raw(kSix) + Count(2) + Raw(std::vector<int64_t>{5, -6});
  ExpectError(Read(File(Legacy(lying), "lying.pt")), ErrorCode::kCorrupt,
              "storage '140' record says 7 elements but the pickle declares 6");
  LegacyParts short_data = parts;
  short_data.data = Count(6) + Raw(kSix) + Count(2) + "abc";
  ExpectError(Read(File(Legacy(short_data), "short.pt")), ErrorCode::kCorrupt,
              "storage '77' of 2 elements extends past the end of the file");
  LegacyParts no_count = parts;
  no_count.data = Count(6) + Raw(kSix) + "abc";
  ExpectError(Read(File(Legacy(no_count), "nocount.pt")), ErrorCode::kCorrupt, "no element count");
  LegacyParts extra_key = parts;
  extra_key.keys = {"140", "77", "9"};
  ExpectError(Read(File(Legacy(extra_key), "key.pt")), ErrorCode::kCorrupt,
              "storage key '9' is not used by the object");
  LegacyParts missing = parts;
  missing.keys = {"140"};
  missing.data = Count(6) + Raw(kSix);
  ExpectError(Read(File(Legacy(missing), "missing.pt")), ErrorCode::kCorrupt,
              "storage '77' has no data");
  LegacyParts twice = parts;
  twice.keys = {"140", "140"};
  ExpectError(Read(File(Legacy(twice), "twice.pt")), ErrorCode::kCorrupt, "listed twice");
}

TEST_F(TorchPt, LegacyViewPastItsRoot) {
  P obj;
  obj.proto(2);
  LegacyTensor(obj, "FloatStorage", "1", 6, 0, {4}, {1}, P().bu("2").k(4).k(4).op(0x87).str());
  obj.stop();
  LegacyParts parts;
  parts.object = obj.str();
  parts.keys = {"1"};
  parts.data = Count(6) + Raw(kSix);
  ExpectError(Read(File(Legacy(parts))), ErrorCode::kOutOfRange,
              "storage view '2' (offset 4, size 4) extends past its storage '1' of 24 bytes");
}

TEST_F(TorchPt, LegacyHeaderChecks) {
  std::string bad_magic = Legacy({});
  bad_magic[5] = 0x00;
  ExpectError(Read(File(bad_magic)), ErrorCode::kCorrupt, "legacy magic number is missing");
  std::string version("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 15);
  version += P().proto(2).op('M').le(1000, 2).stop().str();
  ExpectError(Read(File(version, "v.pt")), ErrorCode::kUnsupported,
              "legacy torch.save protocol version 1000");
  std::string truncated("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 15);
  ExpectError(Read(File(truncated, "t.pt")), ErrorCode::kCorrupt,
              "protocol version pickle at offset 15");
}

// ----- writer -----

TEST_F(TorchPt, WriterRoundTripsEveryDType) {
  std::vector<Tensor> tensors;
  std::vector<NamedView> views;
  for (int d = 0; d < kDTypeCount; ++d) {
    const auto dtype = static_cast<DType>(d);
    auto t = Tensor::Zeros(dtype, {2, 3});
    ASSERT_TRUE(t.ok());
    std::byte* p = t->mutable_data();
    for (int64_t i = 0; i < 6 * ItemSize(dtype); ++i) {
      p[i] = static_cast<std::byte>(dtype == DType::kBool ? (i % 3 == 0) : (i * 37 + d) & 0xff);
    }
    tensors.push_back(std::move(*t));
  }
  for (int d = 0; d < kDTypeCount; ++d)
    views.push_back({std::string(Name(static_cast<DType>(d))), tensors[d].view()});
  TensorView transposed = tensors[1].view();  // f32 2x3 as 3x2
  transposed.shape = {3, 2};
  transposed.strides = {1, 3};
  views.push_back({"f32.t", transposed});
  const fs::path path = dir_ / "all.pt";
  ASSERT_TRUE(WriteTorch(path, views).ok());
  auto r = Read(path);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->tensors.size(), views.size());
  for (size_t i = 0; i < views.size(); ++i) {
    EXPECT_EQ(r->tensors[i].name, views[i].name);
    EXPECT_EQ(r->tensors[i].tensor.dtype(), views[i].view.dtype);
    EXPECT_EQ(r->tensors[i].tensor.shape(), views[i].view.shape);
    EXPECT_EQ(r->tensors[i].device, "cpu");
    auto want = Tensor::CopyOf(views[i].view);
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(Bytes(r->tensors[i].tensor), Bytes(*want)) << views[i].name;
    EXPECT_TRUE(r->tensors[i].tensor.view().is_contiguous());
  }
  // torch's layout: data records aligned to 64, v3 + UntypedStorage for types torch 1.13 lacks.
  auto buffer = Buffer::MapFile(path);
  ASSERT_TRUE(buffer.ok());
  auto archive = ZipArchive::Open(*buffer);
  ASSERT_TRUE(archive.ok());
  EXPECT_EQ(archive->entries().front().name, "all/data.pkl");
  for (const ZipEntry& e : archive->entries()) EXPECT_EQ(e.data_offset % 64, 0u) << e.name;
  ASSERT_NE(archive->Find("all/byteorder"), nullptr);
  ASSERT_NE(archive->Find("all/version"), nullptr);
  auto pkl = archive->Read(*archive->Find("all/data.pkl"));
  ASSERT_TRUE(pkl.ok());
  const std::string text(reinterpret_cast<const char*>(pkl->bytes.data()), pkl->bytes.size());
  EXPECT_NE(text.find("_rebuild_tensor_v3"), std::string::npos);
  EXPECT_NE(text.find("UntypedStorage"), std::string::npos);
  EXPECT_NE(text.find("float8_e4m3fn"), std::string::npos);
  EXPECT_NE(text.find("BFloat16Storage"), std::string::npos);
}

TEST_F(TorchPt, WriterBareTensorAndArgumentChecks) {
  const std::vector<float> v = {1, 2, 3};
  const TensorView view = TensorView::Contiguous(v.data(), DType::kF32, {3});
  const fs::path bare = dir_ / "my model.pt";  // not a plain name: the folder is "archive"
  ASSERT_TRUE(WriteTorch(bare, std::vector<NamedView>{{"", view}}).ok());
  auto r = Read(bare);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->tensors.size(), 1u);
  EXPECT_EQ(r->tensors[0].name, "");
  bool folder = false;
  for (const auto& [k, val] : r->metadata) folder |= k == "archive folder" && val == "archive";
  EXPECT_TRUE(folder);

  auto s = WriteTorch(dir_ / "dup.pt", std::vector<NamedView>{{"a", view}, {"a", view}});
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("duplicate tensor name 'a'"), std::string::npos);
  s = WriteTorch(dir_ / "empty.pt", std::vector<NamedView>{{"", view}, {"b", view}});
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  s = WriteTorch(dir_ / "utf.pt", std::vector<NamedView>{{"\xff", view}});
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(dir_ / "dup.pt"));
}

// Names are pickled as str, which torch.load decodes with Python's "surrogatepass" handler: the
// writer takes exactly what that accepts, so every file it writes can be read back.
TEST_F(TorchPt, WriterTakesNamesThatSurrogatepassDecodes) {
  const std::vector<float> v = {1};
  const TensorView view = TensorView::Contiguous(v.data(), DType::kF32, {1});
  for (const std::string name : {"\xc0\xaf", "\xe0\x80\xaf", "\xf4\x90\x80\x80", "\xe2\x82"}) {
    const Status s = WriteTorch(dir_ / "bad.pt", std::vector<NamedView>{{name, view}});
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.ToString();
  }
  EXPECT_FALSE(fs::exists(dir_ / "bad.pt"));
  const std::string surrogate = "w\xed\xa0\x80";  // "w\ud800": str.encode("utf-8", "surrogatepass")
  ASSERT_TRUE(WriteTorch(dir_ / "lone.pt", std::vector<NamedView>{{surrogate, view}}).ok());
  auto r = Read(dir_ / "lone.pt");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_EQ(r->tensors.size(), 1u);
  EXPECT_EQ(r->tensors[0].name, surrogate);
}

// The hostile corpus (tests/hostile/pt, made by make_hostile_pt.py) straight through ReadTorch:
// every file must be refused with its manifest phrase, and nothing may appear on disk. (The
// hostile.pt ctest runs the same files through `numprobe inspect`.)
TEST(TorchPtHostile, EveryCaseIsRefusedWithItsPhrase) {
  const fs::path dir = fs::path(NUMPROBE_SOURCE_DIR) / "tests/hostile/pt";
  std::ifstream manifest(dir / "manifest.tsv");
  ASSERT_TRUE(manifest.good());
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  int cases = 0;
  std::string line;
  while (std::getline(manifest, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t t1 = line.find('\t');
    const size_t t2 = line.find('\t', t1 + 1);
    const size_t t3 = line.find('\t', t2 + 1);
    const std::string file = line.substr(0, t1);
    const std::string phrase = line.substr(t2 + 1, t3 == std::string::npos ? t3 : t3 - t2 - 1);
    SCOPED_TRACE(file);
    auto buffer = Buffer::MapFile(dir / file);
    ASSERT_TRUE(buffer.ok());
    auto r = ReadTorch(*buffer, ReadOptions{});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(lower(r.error().message()).find(lower(phrase)), std::string::npos)
        << r.error().ToString();
    EXPECT_NE(r.error().code(), ErrorCode::kInternal);
    ++cases;
  }
  EXPECT_GE(cases, 60);
  EXPECT_FALSE(fs::exists("CANARY"));
}

}  // namespace
}  // namespace numprobe
