// The restricted pickle interpreter (see pickle.h). Written by hand: no C++ library unpickles
// with an allowlist, without executing, and with the bounds this project needs.
//
// Semantics follow CPython's C unpickler (Modules/_pickle.c): MARK sets a fence that ordinary
// pops may not cross, POP may pop a MARK, the memo is a map, STOP pops the top value and ignores
// what is left. Dict keys and set items are compared as Python compares them (1 == 1.0 == True,
// identity first), through one hash index shared by all containers.
#include "formats/pickle.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "core/checked.h"
#include "core/quoted.h"
#include "core/utf8.h"

namespace numprobe::pickle {
namespace {

// Opcode bytes (CPython Lib/pickletools.py).
enum Op : uint8_t {
  kMark = '(',
  kStop = '.',
  kPop = '0',
  kPopMark = '1',
  kDup = '2',
  kFloat = 'F',
  kInt = 'I',
  kBinInt = 'J',
  kBinInt1 = 'K',
  kLong = 'L',
  kBinInt2 = 'M',
  kNone = 'N',
  kPersId = 'P',
  kBinPersId = 'Q',
  kReduce = 'R',
  kString = 'S',
  kBinString = 'T',
  kShortBinString = 'U',
  kUnicode = 'V',
  kBinUnicode = 'X',
  kAppend = 'a',
  kBuild = 'b',
  kGlobalOp = 'c',
  kDict = 'd',
  kEmptyDict = '}',
  kAppends = 'e',
  kGet = 'g',
  kBinGet = 'h',
  kInst = 'i',
  kLongBinGet = 'j',
  kList = 'l',
  kEmptyList = ']',
  kObj = 'o',
  kPut = 'p',
  kBinPut = 'q',
  kLongBinPut = 'r',
  kSetItem = 's',
  kTuple = 't',
  kEmptyTuple = ')',
  kSetItems = 'u',
  kBinFloat = 'G',
  kProto = 0x80,
  kNewObj = 0x81,
  kExt1 = 0x82,
  kExt2 = 0x83,
  kExt4 = 0x84,
  kTuple1 = 0x85,
  kTuple2 = 0x86,
  kTuple3 = 0x87,
  kNewTrue = 0x88,
  kNewFalse = 0x89,
  kLong1 = 0x8a,
  kLong4 = 0x8b,
  kBinBytes = 'B',
  kShortBinBytes = 'C',
  kShortBinUnicode = 0x8c,
  kBinUnicode8 = 0x8d,
  kBinBytes8 = 0x8e,
  kEmptySet = 0x8f,
  kAddItems = 0x90,
  kFrozenSetOp = 0x91,
  kNewObjEx = 0x92,
  kStackGlobal = 0x93,
  kMemoize = 0x94,
  kFrame = 0x95,
  kByteArray8 = 0x96,
  kNextBuffer = 0x97,
  kReadOnlyBuffer = 0x98,
};

// The opcodes' names, as pickletools spells them.
constexpr EnumNameEntry<Op> kOpNames[] = {{kMark, "MARK"},
                                          {kStop, "STOP"},
                                          {kPop, "POP"},
                                          {kPopMark, "POP_MARK"},
                                          {kDup, "DUP"},
                                          {kFloat, "FLOAT"},
                                          {kInt, "INT"},
                                          {kBinInt, "BININT"},
                                          {kBinInt1, "BININT1"},
                                          {kLong, "LONG"},
                                          {kBinInt2, "BININT2"},
                                          {kNone, "NONE"},
                                          {kPersId, "PERSID"},
                                          {kBinPersId, "BINPERSID"},
                                          {kReduce, "REDUCE"},
                                          {kString, "STRING"},
                                          {kBinString, "BINSTRING"},
                                          {kShortBinString, "SHORT_BINSTRING"},
                                          {kUnicode, "UNICODE"},
                                          {kBinUnicode, "BINUNICODE"},
                                          {kAppend, "APPEND"},
                                          {kBuild, "BUILD"},
                                          {kGlobalOp, "GLOBAL"},
                                          {kDict, "DICT"},
                                          {kEmptyDict, "EMPTY_DICT"},
                                          {kAppends, "APPENDS"},
                                          {kGet, "GET"},
                                          {kBinGet, "BINGET"},
                                          {kInst, "INST"},
                                          {kLongBinGet, "LONG_BINGET"},
                                          {kList, "LIST"},
                                          {kEmptyList, "EMPTY_LIST"},
                                          {kObj, "OBJ"},
                                          {kPut, "PUT"},
                                          {kBinPut, "BINPUT"},
                                          {kLongBinPut, "LONG_BINPUT"},
                                          {kSetItem, "SETITEM"},
                                          {kTuple, "TUPLE"},
                                          {kEmptyTuple, "EMPTY_TUPLE"},
                                          {kSetItems, "SETITEMS"},
                                          {kBinFloat, "BINFLOAT"},
                                          {kProto, "PROTO"},
                                          {kNewObj, "NEWOBJ"},
                                          {kExt1, "EXT1"},
                                          {kExt2, "EXT2"},
                                          {kExt4, "EXT4"},
                                          {kTuple1, "TUPLE1"},
                                          {kTuple2, "TUPLE2"},
                                          {kTuple3, "TUPLE3"},
                                          {kNewTrue, "NEWTRUE"},
                                          {kNewFalse, "NEWFALSE"},
                                          {kLong1, "LONG1"},
                                          {kLong4, "LONG4"},
                                          {kBinBytes, "BINBYTES"},
                                          {kShortBinBytes, "SHORT_BINBYTES"},
                                          {kShortBinUnicode, "SHORT_BINUNICODE"},
                                          {kBinUnicode8, "BINUNICODE8"},
                                          {kBinBytes8, "BINBYTES8"},
                                          {kEmptySet, "EMPTY_SET"},
                                          {kAddItems, "ADDITEMS"},
                                          {kFrozenSetOp, "FROZENSET"},
                                          {kNewObjEx, "NEWOBJ_EX"},
                                          {kStackGlobal, "STACK_GLOBAL"},
                                          {kMemoize, "MEMOIZE"},
                                          {kFrame, "FRAME"},
                                          {kByteArray8, "BYTEARRAY8"},
                                          {kNextBuffer, "NEXT_BUFFER"},
                                          {kReadOnlyBuffer, "READONLY_BUFFER"}};

// nullptr for a byte that is no opcode.
const char* OpName(uint8_t op) {
  const std::string_view name = NameIn(kOpNames, static_cast<Op>(op));
  return name.empty() ? nullptr : name.data();  // the names are string literals
}

// The legacy torch.save magic number 0x1950a86a20f9469cfc6c as LONG1 bytes (little-endian).
constexpr std::array<uint8_t, 10> kLegacyMagic = {0x6c, 0xfc, 0x9c, 0x46, 0xf9,
                                                  0x20, 0x6a, 0xa8, 0x50, 0x19};

// Text from a file, made safe for a one-line message (detail::Quoted without its quotes).
std::string Printable(std::string_view s, size_t max_len = 120) {
  const std::string quoted = detail::Quoted(s, max_len);
  return quoted.substr(1, quoted.size() - 2);
}

// Python's pickle decodes str with the "surrogatepass" handler: surrogate code points pass.
constexpr detail::Utf8Rule kStrRule = detail::Utf8Rule::kSurrogatePass;

uint64_t Mix(uint64_t x) {  // splitmix64 finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

uint64_t HashBytes(std::string_view s) {  // FNV-1a, then mixed
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return Mix(h);
}

// Tags keep equal bytes of different kinds apart in the hash (str 'a' != bytes b'a').
constexpr uint64_t kTagStr = 0x1111;
constexpr uint64_t kTagBytes = 0x2222;
constexpr uint64_t kTagBig = 0x3333;
constexpr uint64_t kTagIdentity = 0x4444;
constexpr uint64_t kTagNone = 0x5555;
constexpr uint64_t kTagFloat = 0x6666;

struct GlobalInfo {
  enum Verdict { kAllowed, kUnsupported, kDenied, kUnknown } verdict = kUnknown;
  Global id = Global::kUnknown;
  int dtype = -1;
  std::string_view why;  // kUnsupported: what it is
};

// Modules and builtins that no model needs and that a payload uses to run code: rejected even in
// inert mode, where nothing would run anyway, because a file naming them is not a model.
bool Denied(std::string_view module, std::string_view name) {
  static constexpr std::string_view kModules[] = {
      "os",       "posix",     "nt",    "sys",    "subprocess",      "_posixsubprocess", "shutil",
      "socket",   "importlib", "runpy", "pty",    "ctypes",          "marshal",          "pickle",
      "_pickle",  "pdb",       "code",  "codeop", "multiprocessing", "webbrowser",       "signal",
      "platform", "commands",  "popen2"};
  const std::string_view top = module.substr(0, module.find('.'));
  for (std::string_view m : kModules) {
    if (top == m) return true;
  }
  if (module == "builtins") {
    static constexpr std::string_view kNames[] = {
        "eval",       "exec", "compile", "getattr", "setattr", "delattr",
        "__import__", "open", "globals", "locals",  "vars",    "input",
        "breakpoint", "exit", "quit",    "help",    "execfile"};
    for (std::string_view n : kNames) {
      if (name == n) return true;
    }
  }
  return false;
}

// The dtype names torch has that numprobe cannot hold: allowed as values, refused when a tensor
// uses them.
bool KnownTorchDTypeName(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      "complex32", "chalf",   "qint8",   "quint8", "qint32", "quint4x2",       "quint2x4",
      "bits1x8",   "bits2x4", "bits4x2", "bits8",  "bits16", "float8_e8m0fnu", "float4_e2m1fn_x2",
      "uint1",     "uint2",   "uint3",   "uint4",  "uint5",  "uint6",          "uint7",
      "int1",      "int2",    "int3",    "int4",   "int5",   "int6",           "int7"};
  for (std::string_view n : kNames) {
    if (name == n) return true;
  }
  return false;
}

GlobalInfo ResolveGlobal(std::string_view module, std::string_view name) {
  GlobalInfo g;
  auto allow = [&](Global id, int dtype = -1) {
    g.verdict = GlobalInfo::kAllowed;
    g.id = id;
    g.dtype = dtype;
    return g;
  };
  auto unsupported = [&](std::string_view why) {
    g.verdict = GlobalInfo::kUnsupported;
    g.why = why;
    return g;
  };
  if (module == "__builtin__") module = "builtins";        // protocol < 3 writes Python 2 names
  if (module == "torch.tensor") module = "torch._tensor";  // renamed in torch 1.8
  if (module == "torch._utils") {
    if (name == "_rebuild_tensor_v2") return allow(Global::kRebuildTensorV2);
    if (name == "_rebuild_tensor_v3") return allow(Global::kRebuildTensorV3);
    if (name == "_rebuild_parameter") return allow(Global::kRebuildParameter);
    if (name == "_rebuild_parameter_with_state") return allow(Global::kRebuildParameterWithState);
    if (name == "_rebuild_qtensor") return unsupported("quantized tensor");
    if (name == "_rebuild_sparse_tensor") return unsupported("sparse tensor");
    if (name == "_rebuild_sparse_csr_tensor") return unsupported("sparse CSR tensor");
    if (name == "_rebuild_nested_tensor") return unsupported("nested tensor");
    if (name == "_rebuild_meta_tensor_no_storage") return unsupported("meta tensor without data");
    if (name == "_rebuild_wrapper_subclass") return unsupported("tensor wrapper subclass");
    if (name == "_rebuild_device_tensor_from_numpy") return unsupported("device tensor via numpy");
    if (name == "_rebuild_xla_tensor" || name == "_rebuild_mlc_tensor") {
      return unsupported("device tensor");
    }
    if (name == "_rebuild_tensor") return unsupported("legacy tensor rebuild");
  }
  if (module == "torch._tensor" &&
      (name == "_rebuild_from_type_v2" || name == "_rebuild_from_type")) {
    return allow(Global::kRebuildFromType);
  }
  if (module == "torch" || module == "torch.cuda") {
    if (name == "UntypedStorage" || name == "_UntypedStorage")
      return allow(Global::kUntypedStorage);
    if (name.size() > 7 && name.substr(name.size() - 7) == "Storage") {
      if (auto d = DTypeFromTorchStorage(name)) {
        return allow(Global::kTypedStorage, static_cast<int>(*d));
      }
      if (name.substr(0, 1) == "Q") return unsupported("quantized storage");
      if (name == "ComplexHalfStorage") return unsupported("complex32 storage");
    }
  }
  if (module == "torch") {
    if (name == "Size") return allow(Global::kSize);
    if (name == "device") return allow(Global::kDevice);
    if (name == "Tensor") return allow(Global::kTensorClass);
    if (auto d = DTypeFromTorchName(name)) return allow(Global::kDType, static_cast<int>(*d));
    if (KnownTorchDTypeName(name)) return allow(Global::kDType);
  }
  if (module == "torch.nn.parameter" && name == "Parameter") return allow(Global::kParameterClass);
  if (module == "collections" && name == "OrderedDict") return allow(Global::kOrderedDict);
  if (module == "_codecs" && name == "encode") return allow(Global::kCodecsEncode);
  if (module == "builtins") {
    if (name == "set") return allow(Global::kSet);
    if (name == "frozenset") return allow(Global::kFrozenSet);
    if (name == "bytearray") return allow(Global::kByteArray);
    if (name == "complex") return allow(Global::kComplex);
  }
  if (Denied(module, name)) g.verdict = GlobalInfo::kDenied;
  return g;
}

bool IsClassGlobal(Global id) {
  switch (id) {
    case Global::kOrderedDict:
    case Global::kSet:
    case Global::kFrozenSet:
    case Global::kByteArray:
    case Global::kComplex:
    case Global::kParameterClass:
    case Global::kSize:
    case Global::kDevice:
      return true;
    default:
      return false;
  }
}

bool IsCallableGlobal(Global id) {
  switch (id) {
    case Global::kRebuildTensorV2:
    case Global::kRebuildTensorV3:
    case Global::kRebuildParameter:
    case Global::kRebuildParameterWithState:
    case Global::kRebuildFromType:
    case Global::kCodecsEncode:
      return true;
    default:
      return IsClassGlobal(id);
  }
}

}  // namespace

std::string_view Pickle::text(Ref r) const {
  const Node& n = nodes_[r];
  switch (n.kind) {
    case Kind::kStr:
    case Kind::kBytes:
    case Kind::kBigInt:
    case Kind::kGlobal:
      return strings_[n.extra].bytes;
    default:
      return {};
  }
}

std::span<const Ref> Pickle::items(Ref r) const {
  const Node& n = nodes_[r];
  switch (n.kind) {
    case Kind::kTuple:
    case Kind::kList:
    case Kind::kDict:
    case Kind::kSet:
    case Kind::kFrozenSet:
      return lists_[n.extra].refs;
    default:
      return {};
  }
}

std::optional<DType> Pickle::global_dtype(Ref r) const {
  const Node& n = nodes_[r];
  if (n.kind != Kind::kGlobal || n.dtype == 0xFF) return std::nullopt;
  return static_cast<DType>(n.dtype);
}

Ref Pickle::Part(Ref r, size_t i) const {
  const Node& n = nodes_[r];
  if (n.kind != Kind::kCall && n.kind != Kind::kObject) return kNoRef;
  const auto& refs = lists_[n.extra].refs;
  return i < refs.size() ? refs[i] : kNoRef;
}

std::string Pickle::Describe(Ref r) const {
  if (r >= nodes_.size()) return "nothing";
  const Node& n = nodes_[r];
  switch (n.kind) {
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return n.flags != 0 ? "True" : "False";
    case Kind::kInt:
      return std::to_string(n.i);
    case Kind::kBigInt:
      return "a big int";
    case Kind::kFloat: {
      std::string s = fmt::format("{}", n.f);  // shortest round trip, as repr()
      if (s.find_first_of(".en") == std::string::npos) s += ".0";
      return s;
    }
    case Kind::kStr:
      return fmt::format("'{}'", Printable(text(r), 60));
    case Kind::kBytes:
      return fmt::format("b'{}'", Printable(text(r), 60));
    case Kind::kGlobal:
      return Printable(text(r), 80);
    case Kind::kCall:
      return fmt::format("a call of {}", Printable(text(callable(r)), 80));
    case Kind::kObject:
      return "an opaque object";
    case Kind::kPersistentId:
      return "a persistent id";
    default:
      break;
  }
  const auto n_items = items(r).size() / (n.kind == Kind::kDict ? 2 : 1);
  return fmt::format("{} of {} item{}", EnumName(n.kind), n_items, n_items == 1 ? "" : "s");
}

// The interpreter. One Machine runs one pickle.
class Machine {
 public:
  Machine(std::span<const std::byte> data, const Options& options)
      : data_(data),
        options_(options),
        limits_(options.limits),
        index_(16, SlotHash{this}, SlotEq{this}) {
    // A pickle's strings come from its bytes; conversions (bytearray(), encode()) may copy them,
    // so allow twice the input plus slack before calling it an amplification attack.
    string_budget_ = 2 * static_cast<uint64_t>(data.size()) + (1 << 16);
  }

  Result<Pickle> Run();

 private:
  using Node = Pickle::Node;
  using Items = Pickle::Items;

  struct Slot {
    Ref container;
    Ref key;
  };
  struct SlotHash {
    const Machine* m;
    size_t operator()(const Slot& s) const {
      return static_cast<size_t>(Mix(m->KeyHash(s.key) ^ Mix(s.container + 0x9e37ull)));
    }
  };
  struct SlotEq {
    const Machine* m;
    bool operator()(const Slot& a, const Slot& b) const {
      return a.container == b.container && m->KeysEqual(a.key, b.key, 0);
    }
  };

  // ----- errors -----
  std::string Where() const {
    return fmt::format(" (opcode {} at offset {})", OpName(op_), op_offset_);
  }
  Status Corrupt(std::string_view what) const {
    return Status::Corrupt(std::string(what) + Where());
  }
  Status Rejected(std::string_view what) const {
    return Status::Rejected(std::string(what) + Where());
  }
  Status Unsupported(std::string_view what) const {
    return Status::Unsupported(std::string(what) + Where());
  }
  Status OutOfRange(std::string_view what) const {
    return Status::OutOfRange(std::string(what) + Where());
  }

  // ----- input -----
  size_t Left() const { return data_.size() - pos_; }
  Status Need(uint64_t n) const {
    if (n > Left()) {
      return Corrupt(fmt::format("pickle truncated: needs {} more bytes, {} left", n, Left()));
    }
    return Status::Ok();
  }
  uint8_t U8() { return static_cast<uint8_t>(data_[pos_++]); }
  uint64_t LittleEndian(size_t n) {
    uint64_t v = 0;
    for (size_t k = 0; k < n; ++k)
      v |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_ + k])) << (8 * k);
    pos_ += n;
    return v;
  }
  std::string_view Bytes(size_t n) {
    std::string_view s(reinterpret_cast<const char*>(data_.data()) + pos_, n);
    pos_ += n;
    return s;
  }
  // A protocol-0 operand: the bytes up to the next newline (consumed, not returned).
  Result<std::string_view> Line() {
    const size_t limit = static_cast<size_t>(std::min<uint64_t>(Left(), limits_.max_line + 1));
    const auto* begin = reinterpret_cast<const char*>(data_.data()) + pos_;
    const void* nl = std::memchr(begin, '\n', limit);
    if (nl == nullptr) {
      if (limit < Left())
        return OutOfRange(fmt::format("line longer than {} bytes", limits_.max_line));
      return Corrupt("pickle truncated: line without a newline");
    }
    const auto len = static_cast<size_t>(static_cast<const char*>(nl) - begin);
    pos_ += len + 1;
    return std::string_view(begin, len);
  }
  // Length operand of `width` bytes (signed when `is_signed`), checked against the input left.
  Result<uint64_t> Length(size_t width, bool is_signed) {
    NUMPROBE_RETURN_IF_ERROR(Need(width));
    uint64_t n = LittleEndian(width);
    if (is_signed && width == 4 && (n & 0x80000000u) != 0) {
      return Corrupt(fmt::format("negative length {}", static_cast<int32_t>(n)));
    }
    if (n > Left()) {
      return Corrupt(fmt::format("truncated: length {} exceeds the {} bytes left", n, Left()));
    }
    return n;
  }

  // ----- stack -----
  size_t Fence() const { return marks_.empty() ? 0 : marks_.back(); }
  Status Push(Ref r) {
    if (stack_.size() >= limits_.max_stack) {
      return OutOfRange(fmt::format("stack deeper than {} values", limits_.max_stack));
    }
    stack_.push_back(r);
    return Status::Ok();
  }
  Result<Ref> Pop() {
    if (stack_.size() <= Fence()) return Corrupt("stack underflow");
    const Ref r = stack_.back();
    stack_.pop_back();
    return r;
  }
  Result<Ref> Top() const {
    if (stack_.size() <= Fence()) return Corrupt("stack underflow");
    return stack_.back();
  }
  // Pops everything above the last MARK and the MARK itself.
  Result<std::vector<Ref>> PopMark() {
    if (marks_.empty()) return Corrupt("no MARK on the stack (MARK underflow)");
    const size_t m = marks_.back();
    marks_.pop_back();
    std::vector<Ref> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return items;
  }

  // ----- values -----
  Result<Ref> Add(Node n) {
    if (p_.nodes_.size() >= limits_.max_values) {
      return OutOfRange(fmt::format("pickle builds more than {} values", limits_.max_values));
    }
    p_.nodes_.push_back(n);
    return static_cast<Ref>(p_.nodes_.size() - 1);
  }
  Result<Ref> NewInt(int64_t v) {
    if (v >= 0 && v < 256) return static_cast<Ref>(kSmallInts + v);  // interned, immutable
    Node n;
    n.kind = Kind::kInt;
    n.i = v;
    return Add(n);
  }
  Result<Ref> NewFloat(double v) {
    Node n;
    n.kind = Kind::kFloat;
    n.f = v;
    return Add(n);
  }
  Result<Ref> NewText(Kind kind, std::string bytes, bool flag = false) {
    if (bytes.size() > string_budget_) {
      return OutOfRange("strings exceed twice the pickle's size (amplification)");
    }
    string_budget_ -= bytes.size();
    Node n;
    n.kind = kind;
    n.flags = flag ? 1 : 0;
    n.extra = static_cast<uint32_t>(p_.strings_.size());
    NUMPROBE_ASSIGN_OR_RETURN(Ref r, Add(n));
    const uint64_t h = HashBytes(bytes);
    p_.strings_.push_back({std::move(bytes), h});
    return r;
  }
  Result<Ref> NewStr(std::string_view utf8) {
    if (!detail::IsValidUtf8(utf8, kStrRule)) return Corrupt("string is not valid UTF-8");
    return NewText(Kind::kStr, std::string(utf8));
  }
  Status ChargeItems(uint64_t n) {
    items_total_ += n;
    if (items_total_ > limits_.max_items) {
      return OutOfRange(fmt::format("containers hold more than {} items", limits_.max_items));
    }
    return Status::Ok();
  }
  // A container; tuples and frozensets also get their hash, size and depth for use as keys.
  Result<Ref> NewContainer(Kind kind, std::vector<Ref> refs, uint8_t flags = 0) {
    NUMPROBE_RETURN_IF_ERROR(ChargeItems(refs.size()));
    Node n;
    n.kind = kind;
    n.flags = flags;
    n.extra = static_cast<uint32_t>(p_.lists_.size());
    NUMPROBE_ASSIGN_OR_RETURN(Ref r, Add(n));
    Items items;
    items.refs = std::move(refs);
    p_.lists_.push_back(std::move(items));
    if (kind == Kind::kTuple) Summarize(r);
    return r;
  }
  // Container items of `r` (mutable, for APPEND & co.).
  std::vector<Ref>& RefsOf(Ref r) { return p_.lists_[p_.nodes_[r].extra].refs; }
  Items& ItemsOf(Ref r) { return p_.lists_[p_.nodes_[r].extra]; }
  const Items& ItemsOf(Ref r) const { return p_.lists_[p_.nodes_[r].extra]; }
  Kind KindOf(Ref r) const { return p_.nodes_[r].kind; }

  // Hash, size and depth of an immutable tuple or frozenset, from its items (already summarized,
  // since items exist before their container).
  void Summarize(Ref r) {
    Items& it = ItemsOf(r);
    const bool is_set = KindOf(r) == Kind::kFrozenSet;
    uint64_t h = is_set ? 0x5e7 : 0x7091e;
    uint64_t weight = 1;
    uint32_t depth = 1;
    bool hashable = true;
    for (Ref c : it.refs) {
      if (!Hashable(c)) {
        hashable = false;
        break;
      }
      const Kind k = KindOf(c);
      if (k == Kind::kTuple || k == Kind::kFrozenSet) {
        const Items& ci = ItemsOf(c);
        weight += ci.weight;
        depth = std::max<uint32_t>(depth, ci.depth + 1u);
      } else {
        weight += 1;
      }
      h = is_set ? h + Mix(KeyHash(c)) : Mix(h * 31 + KeyHash(c));
    }
    it.hashable = hashable;
    it.hash = Mix(h);
    it.weight = static_cast<uint32_t>(std::min<uint64_t>(weight, 0xFFFFFFFFu));
    it.depth = static_cast<uint16_t>(std::min<uint32_t>(depth, 0xFFFF));
  }

  bool Hashable(Ref r) const {
    switch (KindOf(r)) {
      case Kind::kList:
      case Kind::kDict:
      case Kind::kSet:
        return false;
      case Kind::kTuple:
      case Kind::kFrozenSet:
        return ItemsOf(r).hashable;
      default:
        return true;
    }
  }

  // Python's hash, up to the constants: equal keys hash equally (1, 1.0 and True included).
  uint64_t KeyHash(Ref r) const {
    const Node& n = p_.nodes_[r];
    switch (n.kind) {
      case Kind::kNone:
        return Mix(kTagNone);
      case Kind::kBool:
        return Mix(static_cast<uint64_t>(n.flags));
      case Kind::kInt:
        return Mix(static_cast<uint64_t>(n.i));
      case Kind::kFloat: {
        if (auto i = WholeInt64(n.f)) return Mix(static_cast<uint64_t>(*i));
        return Mix(std::bit_cast<uint64_t>(n.f) ^ kTagFloat);
      }
      case Kind::kStr:
        return p_.strings_[n.extra].hash ^ kTagStr;
      case Kind::kBytes:
        return p_.strings_[n.extra].hash ^ kTagBytes;
      case Kind::kBigInt:
        return p_.strings_[n.extra].hash ^ kTagBig;
      case Kind::kTuple:
      case Kind::kFrozenSet:
        return ItemsOf(r).hash;
      default:
        return Mix(static_cast<uint64_t>(r) ^ kTagIdentity);  // objects hash by identity
    }
  }

  static bool IsNumber(Kind k) { return k == Kind::kBool || k == Kind::kInt || k == Kind::kFloat; }

  bool KeysEqual(Ref a, Ref b, int depth) const {
    if (a == b) return true;
    const Node& x = p_.nodes_[a];
    const Node& y = p_.nodes_[b];
    if (IsNumber(x.kind) && IsNumber(y.kind)) {
      if (x.kind == Kind::kFloat && y.kind == Kind::kFloat) return x.f == y.f;
      if (x.kind == Kind::kFloat || y.kind == Kind::kFloat) {
        const Node& fl = x.kind == Kind::kFloat ? x : y;
        const Node& in = x.kind == Kind::kFloat ? y : x;
        const auto fi = WholeInt64(fl.f);
        const int64_t iv = in.kind == Kind::kBool ? in.flags : in.i;
        return fi && *fi == iv;
      }
      const int64_t xv = x.kind == Kind::kBool ? x.flags : x.i;
      const int64_t yv = y.kind == Kind::kBool ? y.flags : y.i;
      return xv == yv;
    }
    if (x.kind != y.kind) return false;
    switch (x.kind) {
      case Kind::kNone:
        return true;
      case Kind::kStr:
      case Kind::kBytes:
      case Kind::kBigInt:
        return p_.strings_[x.extra].bytes == p_.strings_[y.extra].bytes;
      case Kind::kTuple: {
        // Depth is bounded by max_key_depth, checked before a key is used.
        const auto& xs = ItemsOf(a).refs;
        const auto& ys = ItemsOf(b).refs;
        if (xs.size() != ys.size() || ItemsOf(a).hash != ItemsOf(b).hash) return false;
        for (size_t i = 0; i < xs.size(); ++i) {
          if (!KeysEqual(xs[i], ys[i], depth + 1)) return false;
        }
        return true;
      }
      case Kind::kFrozenSet: {
        const auto& xs = ItemsOf(a).refs;
        if (xs.size() != ItemsOf(b).refs.size() || ItemsOf(a).hash != ItemsOf(b).hash) {
          return false;
        }
        for (Ref item : xs) {
          if (index_.find(Slot{b, item}) == index_.end()) return false;
        }
        return true;
      }
      default:
        return false;  // identity-compared kinds, and a != b
    }
  }

  Status CheckKey(Ref key) const {
    if (!Hashable(key)) {
      return Corrupt(
          fmt::format("unhashable {} used as a dict key or set item", EnumName(KindOf(key))));
    }
    const Kind k = KindOf(key);
    if (k == Kind::kTuple || k == Kind::kFrozenSet) {
      const Items& it = ItemsOf(key);
      if (it.weight > limits_.max_key_size || it.depth > limits_.max_key_depth) {
        return OutOfRange(fmt::format(
            "dict key or set item of {} values nested {} deep is too large", it.weight, it.depth));
      }
    }
    return Status::Ok();
  }

  Status ChargeKey() {
    if (++keys_total_ > limits_.max_keys) {
      return OutOfRange(fmt::format("dicts and sets hold more than {} entries", limits_.max_keys));
    }
    return Status::Ok();
  }

  // d[key] = value, keeping the first position of an existing key (Python's dict order).
  Status DictSet(Ref dict, Ref key, Ref value) {
    NUMPROBE_RETURN_IF_ERROR(CheckKey(key));
    auto it = index_.find(Slot{dict, key});
    if (it != index_.end()) {
      RefsOf(dict)[2 * static_cast<size_t>(it->second) + 1] = value;
      return Status::Ok();
    }
    NUMPROBE_RETURN_IF_ERROR(ChargeKey());
    NUMPROBE_RETURN_IF_ERROR(ChargeItems(2));
    auto& refs = RefsOf(dict);
    index_.emplace(Slot{dict, key}, static_cast<uint32_t>(refs.size() / 2));
    refs.push_back(key);
    refs.push_back(value);
    return Status::Ok();
  }

  Status SetAdd(Ref set, Ref item) {
    NUMPROBE_RETURN_IF_ERROR(CheckKey(item));
    if (index_.find(Slot{set, item}) != index_.end()) return Status::Ok();
    NUMPROBE_RETURN_IF_ERROR(ChargeKey());
    NUMPROBE_RETURN_IF_ERROR(ChargeItems(1));
    auto& refs = RefsOf(set);
    index_.emplace(Slot{set, item}, static_cast<uint32_t>(refs.size()));
    refs.push_back(item);
    return Status::Ok();
  }

  Result<Ref> NewSet(Kind kind, std::span<const Ref> items) {
    NUMPROBE_ASSIGN_OR_RETURN(Ref s, NewContainer(kind, {}));
    for (Ref item : items) NUMPROBE_RETURN_IF_ERROR(SetAdd(s, item));
    if (kind == Kind::kFrozenSet) Summarize(s);
    return s;
  }

  Result<Ref> NewDictFromPairs(std::span<const Ref> flat, bool ordered) {
    if (flat.size() % 2 != 0) return Corrupt("odd number of items for a dict");
    NUMPROBE_ASSIGN_OR_RETURN(Ref d, NewContainer(Kind::kDict, {}, ordered ? 1 : 0));
    for (size_t i = 0; i < flat.size(); i += 2) {
      NUMPROBE_RETURN_IF_ERROR(DictSet(d, flat[i], flat[i + 1]));
    }
    return d;
  }

  // A kCall or kObject: [callable, args, state, list, dict, kwargs].
  Result<Ref> NewApplied(Kind kind, Global global, Ref callable, Ref args) {
    NUMPROBE_ASSIGN_OR_RETURN(
        Ref r, NewContainer(Kind::kList, {callable, args, kNoRef, kNoRef, kNoRef, kNoRef}));
    Node& n = p_.nodes_[r];
    n.kind = kind;
    n.global = static_cast<uint8_t>(global);
    return r;
  }

  // ----- opcodes -----
  Status DoInt(std::string_view line);
  Status DoLong(std::string_view line);
  Status DoFloat(std::string_view line);
  Status DoLongBytes(std::string_view bytes);
  Status DoString(std::string_view line);
  Status DoUnicode(std::string_view line);
  Status DoGlobal(std::string_view module, std::string_view name);
  Status DoReduce(Ref callable, Ref args, bool newobj);
  Status DoBuild(Ref target, Ref state);
  Status DoAppends(Ref target, std::span<const Ref> items);
  Status DoSetItems(Ref target, std::span<const Ref> flat);
  Result<Ref> Evaluate(Global id, Ref callable, Ref args);
  Status MemoPut(uint64_t index);
  Status MemoGet(uint64_t index);
  Result<uint64_t> DecimalIndex(std::string_view line);
  Status Step();

  static constexpr Ref kNoneRef = 0;
  static constexpr Ref kFalseRef = 1;
  static constexpr Ref kTrueRef = 2;
  static constexpr Ref kSmallInts = 3;

  std::span<const std::byte> data_;
  const Options& options_;
  const Limits& limits_;
  Pickle p_;
  size_t pos_ = 0;
  size_t op_offset_ = 0;
  uint8_t op_ = 0;
  bool stopped_ = false;
  std::vector<Ref> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, Ref> memo_;
  std::unordered_map<Slot, uint32_t, SlotHash, SlotEq> index_;
  std::unordered_set<std::string> opaque_seen_;
  uint64_t items_total_ = 0;
  uint64_t keys_total_ = 0;
  uint64_t string_budget_ = 0;
};

Status Machine::DoInt(std::string_view line) {
  // Protocol 0 writes True/False as INT 01/00.
  if (line == "01") return Push(kTrueRef);
  if (line == "00") return Push(kFalseRef);
  std::string_view digits = line;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec == std::errc::result_out_of_range) return OutOfRange("integer does not fit in 64 bits");
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) {
    return Corrupt(fmt::format("invalid integer '{}'", Printable(line, 40)));
  }
  NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewInt(v));
  return Push(r);
}

Status Machine::DoLong(std::string_view line) {
  if (!line.empty() && line.back() == 'L') line.remove_suffix(1);
  if (line == "01" || line == "00") return DoInt(line == "01" ? "1" : "0");
  return DoInt(line);
}

Status Machine::DoFloat(std::string_view line) {
  double v = 0;
  const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), v);
  if (ec != std::errc() || end != line.data() + line.size() || line.empty()) {
    return Corrupt(fmt::format("invalid float '{}'", Printable(line, 40)));
  }
  NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewFloat(v));
  return Push(r);
}

// LONG1 / LONG4: two's complement, little-endian. Only values that fit in int64 are kept, plus
// the legacy torch.save magic, which the legacy reader checks.
Status Machine::DoLongBytes(std::string_view bytes) {
  const size_t n = bytes.size();
  if (n == 0) return Push(kSmallInts);
  if (n > 8) {
    if (n == kLegacyMagic.size() && std::memcmp(bytes.data(), kLegacyMagic.data(), n) == 0) {
      NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewText(Kind::kBigInt, std::string(bytes)));
      return Push(r);
    }
    // Wider than needed but still an int64: the extra bytes only repeat the sign.
    const bool negative = (static_cast<uint8_t>(bytes[7]) & 0x80) != 0;
    const auto fill = static_cast<char>(negative ? 0xff : 0x00);
    for (size_t k = 8; k < n; ++k) {
      if (bytes[k] != fill) {
        return OutOfRange(fmt::format("integer of {} bytes does not fit in 64 bits", n));
      }
    }
  }
  uint64_t u = 0;
  const size_t used = std::min<size_t>(n, 8);
  for (size_t k = 0; k < used; ++k)
    u |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[k])) << (8 * k);
  if (used < 8 && (static_cast<uint8_t>(bytes[used - 1]) & 0x80) != 0) {
    u |= ~uint64_t{0} << (8 * used);  // sign-extend
  }
  NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewInt(static_cast<int64_t>(u)));
  return Push(r);
}

// STRING: a Python 2 str repr ('...' or "..."), decoded like codecs.escape_decode, then as UTF-8
// (torch.load passes encoding='utf-8').
Status Machine::DoString(std::string_view line) {
  if (line.size() < 2 || (line.front() != '\'' && line.front() != '"') ||
      line.back() != line.front()) {
    return Corrupt("STRING operand is not quoted");
  }
  line = line.substr(1, line.size() - 2);
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\\' || i + 1 == line.size()) {
      out += line[i];
      continue;
    }
    const char c = line[++i];
    switch (c) {
      case '\n':
        break;
      case '\\':
        out += '\\';
        break;
      case '\'':
        out += '\'';
        break;
      case '"':
        out += '"';
        break;
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'v':
        out += '\v';
        break;
      case 'x': {
        unsigned v = 0;
        if (line.size() - i - 1 < 2) return Corrupt("invalid \\x escape");
        const auto [end, ec] = std::from_chars(line.data() + i + 1, line.data() + i + 3, v, 16);
        if (ec != std::errc() || end != line.data() + i + 3) return Corrupt("invalid \\x escape");
        out += static_cast<char>(v);
        i += 2;
        break;
      }
      default:
        if (c >= '0' && c <= '7') {
          auto v = static_cast<unsigned>(c - '0');
          for (int k = 0; k < 2 && i + 1 < line.size() && line[i + 1] >= '0' && line[i + 1] <= '7';
               ++k) {
            v = v * 8 + static_cast<unsigned>(line[++i] - '0');
          }
          out += static_cast<char>(v & 0xff);
        } else {
          out += '\\';
          out += c;
        }
    }
  }
  NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewStr(out));
  return Push(r);
}

// UNICODE: raw-unicode-escape (latin-1 bytes, \uXXXX and \UXXXXXXXX escapes).
Status Machine::DoUnicode(std::string_view line) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if (c == '\\' && i + 1 < line.size() && (line[i + 1] == 'u' || line[i + 1] == 'U')) {
      const size_t digits = line[i + 1] == 'u' ? 4 : 8;
      if (line.size() - i - 2 < digits) return Corrupt("truncated \\u escape");
      uint32_t cp = 0;
      const char* first = line.data() + i + 2;
      const auto [end, ec] = std::from_chars(first, first + digits, cp, 16);
      if (ec != std::errc() || end != first + digits || cp > detail::kMaxCodePoint) {
        return Corrupt("invalid \\u escape");
      }
      detail::AppendUtf8(cp, &out);
      i += 1 + digits;
    } else {
      detail::AppendUtf8(c, &out);
    }
  }
  NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewText(Kind::kStr, std::move(out)));
  return Push(r);
}

Status Machine::DoGlobal(std::string_view module, std::string_view name) {
  if (!detail::IsValidUtf8(module, kStrRule) || !detail::IsValidUtf8(name, kStrRule)) {
    return Corrupt("global name is not valid UTF-8");
  }
  const std::string qualified = std::string(module) + "." + std::string(name);
  const GlobalInfo info = ResolveGlobal(module, name);
  switch (info.verdict) {
    case GlobalInfo::kAllowed:
      break;
    case GlobalInfo::kUnsupported:
      return Unsupported(fmt::format("{} ({}) is not supported", Printable(qualified), info.why));
    case GlobalInfo::kDenied:
      return Rejected(fmt::format("global '{}' is not allowed{}", Printable(qualified),
                                  options_.inert ? ", even in inert mode" : ""));
    case GlobalInfo::kUnknown:
      if (!options_.inert) {
        return Rejected(fmt::format("global '{}' is not allowed", Printable(qualified)));
      }
      break;
  }
  NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewText(Kind::kGlobal, qualified));
  Node& stored = p_.nodes_[r];
  stored.global = static_cast<uint8_t>(info.id);
  stored.dtype = info.dtype >= 0 ? static_cast<uint8_t>(info.dtype) : 0xFF;
  return Push(r);
}

// Builds what an allowlisted callable returns for data constructors (OrderedDict, set, bytes,
// Size), or an inert kCall record for the torch callables the caller interprets.
Result<Ref> Machine::Evaluate(Global id, Ref callable, Ref args) {
  const std::vector<Ref> a = RefsOf(args);  // a copy: building values may move the arena
  const std::string name = Printable(p_.text(callable));
  auto bad_args = [&]() {
    return Corrupt(fmt::format("bad arguments for {}: {}", name, p_.Describe(args)));
  };
  switch (id) {
    case Global::kOrderedDict: {
      if (a.empty()) return NewContainer(Kind::kDict, {}, 1);
      if (a.size() != 1) return bad_args();
      const Ref src = a[0];
      if (KindOf(src) == Kind::kDict) {
        std::vector<Ref> flat = RefsOf(src);
        return NewDictFromPairs(flat, true);
      }
      if (KindOf(src) != Kind::kList && KindOf(src) != Kind::kTuple) return bad_args();
      std::vector<Ref> flat;
      for (Ref pair : RefsOf(src)) {
        if ((KindOf(pair) != Kind::kTuple && KindOf(pair) != Kind::kList) ||
            RefsOf(pair).size() != 2) {
          return bad_args();
        }
        flat.push_back(RefsOf(pair)[0]);
        flat.push_back(RefsOf(pair)[1]);
      }
      return NewDictFromPairs(flat, true);
    }
    case Global::kSet:
    case Global::kFrozenSet: {
      const Kind kind = id == Global::kSet ? Kind::kSet : Kind::kFrozenSet;
      if (a.empty()) return NewSet(kind, {});
      if (a.size() != 1) return bad_args();
      const Kind k = KindOf(a[0]);
      if (k != Kind::kList && k != Kind::kTuple && k != Kind::kSet && k != Kind::kFrozenSet) {
        return bad_args();
      }
      std::vector<Ref> items = RefsOf(a[0]);
      return NewSet(kind, items);
    }
    case Global::kSize: {
      if (a.size() != 1 || (KindOf(a[0]) != Kind::kTuple && KindOf(a[0]) != Kind::kList)) {
        return bad_args();
      }
      std::vector<Ref> dims = RefsOf(a[0]);
      for (Ref d : dims) {
        if (KindOf(d) != Kind::kInt) return bad_args();
      }
      return NewContainer(Kind::kTuple, std::move(dims));
    }
    case Global::kCodecsEncode:
    case Global::kByteArray: {
      if (id == Global::kByteArray && a.empty()) return NewText(Kind::kBytes, {}, true);
      if (id == Global::kByteArray && a.size() == 1 && KindOf(a[0]) == Kind::kBytes) {
        return NewText(Kind::kBytes, std::string(p_.text(a[0])), true);
      }
      if (a.size() != 2 || KindOf(a[0]) != Kind::kStr || KindOf(a[1]) != Kind::kStr) {
        return bad_args();
      }
      const std::string_view encoding = p_.text(a[1]);
      const std::string_view s = p_.text(a[0]);
      std::string out;
      if (encoding == "latin1" || encoding == "latin-1" || encoding == "iso-8859-1") {
        // Code points < 256 only; surrogates and above cannot be latin-1.
        for (size_t i = 0; i < s.size();) {
          const detail::Utf8Char c = detail::DecodeUtf8(s, i, kStrRule);
          if (!c.valid || c.code > 0xff) return Corrupt("string has characters outside latin-1");
          out += static_cast<char>(c.code);
          i += c.length;
        }
      } else if (encoding == "utf-8" || encoding == "utf8") {
        out = std::string(s);
      } else {
        return Unsupported(fmt::format("encoding '{}' is not supported", Printable(encoding, 30)));
      }
      return NewText(Kind::kBytes, std::move(out), id == Global::kByteArray);
    }
    case Global::kComplex: {
      if (a.empty() || a.size() > 2) return bad_args();
      for (Ref x : a) {
        if (!IsNumber(KindOf(x))) return bad_args();
      }
      return NewApplied(Kind::kCall, id, callable, args);
    }
    default:
      return NewApplied(Kind::kCall, id, callable, args);
  }
}

Status Machine::DoReduce(Ref callable, Ref args, bool newobj) {
  if (KindOf(args) != Kind::kTuple) {
    return Corrupt(fmt::format("arguments are a {}, not a tuple", EnumName(KindOf(args))));
  }
  const Kind ck = KindOf(callable);
  if (ck == Kind::kGlobal && p_.global(callable) != Global::kUnknown) {
    const Global id = p_.global(callable);
    const std::string name = Printable(p_.text(callable));
    if (newobj ? !IsClassGlobal(id) : !IsCallableGlobal(id)) {
      return Rejected(
          fmt::format("{} '{}' is not allowed", newobj ? "instantiating" : "calling", name));
    }
    NUMPROBE_ASSIGN_OR_RETURN(Ref r, Evaluate(id, callable, args));
    return Push(r);
  }
  const bool opaque_target =
      ck == Kind::kGlobal || ck == Kind::kObject || ck == Kind::kPersistentId;
  if (!options_.inert || !opaque_target) {
    return Corrupt(fmt::format("{} on a {} (needs a {})", newobj ? "NEWOBJ" : "REDUCE",
                               EnumName(ck), newobj ? "class" : "callable"));
  }
  Ref cls_global = callable;
  if (ck == Kind::kPersistentId) {  // legacy whole-model saves: ('module', cls, file, source)
    const Ref pid = p_.persistent_id(callable);
    const auto parts = p_.items(pid);
    cls_global = parts.size() >= 2 && KindOf(parts[1]) == Kind::kGlobal ? parts[1] : kNoRef;
  }
  if (cls_global != kNoRef && KindOf(cls_global) == Kind::kGlobal) {
    std::string cls(p_.text(cls_global));
    if (opaque_seen_.insert(cls).second) p_.opaque_classes_.push_back(Printable(cls));
  }
  NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewApplied(Kind::kObject, Global::kUnknown, callable, args));
  return Push(r);
}

Status Machine::DoBuild(Ref target, Ref state) {
  const Kind k = KindOf(target);
  if (k == Kind::kDict && p_.is_ordered(target)) return Status::Ok();  // OrderedDict attributes
  if (k == Kind::kObject) {
    RefsOf(target)[2] = state;
    return Status::Ok();
  }
  if (k == Kind::kCall) {
    switch (p_.global(target)) {
      case Global::kRebuildTensorV2:
      case Global::kRebuildTensorV3:
      case Global::kRebuildParameter:
      case Global::kRebuildParameterWithState:
      case Global::kRebuildFromType:
      case Global::kParameterClass: {
        // Plain Python attributes are kept aside; the legacy Tensor.set_ form (a tuple starting
        // with a storage) would replace the data, which numprobe does not do.
        const Kind sk = KindOf(state);
        if (sk == Kind::kTuple && !RefsOf(state).empty() &&
            KindOf(RefsOf(state)[0]) == Kind::kPersistentId) {
          return Unsupported("BUILD with a storage (Tensor.set_) on a tensor");
        }
        if (sk != Kind::kNone && sk != Kind::kDict && sk != Kind::kTuple) {
          return Corrupt(fmt::format("BUILD state of a tensor is a {}", EnumName(sk)));
        }
        RefsOf(target)[2] = state;
        return Status::Ok();
      }
      default:
        break;
    }
  }
  return Rejected(fmt::format("BUILD on {} is not allowed", p_.Describe(target)));
}

Status Machine::DoAppends(Ref target, std::span<const Ref> items) {
  Ref list = target;
  if (KindOf(target) == Kind::kObject && options_.inert) {
    list = RefsOf(target)[3];
    if (list == kNoRef) {
      NUMPROBE_ASSIGN_OR_RETURN(list, NewContainer(Kind::kList, {}));
      RefsOf(target)[3] = list;
    }
  }
  if (KindOf(list) != Kind::kList) {
    return Corrupt(fmt::format("{} on a {} (needs a list)", OpName(op_), EnumName(KindOf(target))));
  }
  NUMPROBE_RETURN_IF_ERROR(ChargeItems(items.size()));
  auto& refs = RefsOf(list);
  refs.insert(refs.end(), items.begin(), items.end());
  return Status::Ok();
}

Status Machine::DoSetItems(Ref target, std::span<const Ref> flat) {
  if (flat.size() % 2 != 0) return Corrupt("odd number of items for SETITEMS");
  Ref dict = target;
  if (KindOf(target) == Kind::kObject && options_.inert) {
    dict = RefsOf(target)[4];
    if (dict == kNoRef) {
      NUMPROBE_ASSIGN_OR_RETURN(dict, NewContainer(Kind::kDict, {}));
      RefsOf(target)[4] = dict;
    }
  }
  if (KindOf(dict) != Kind::kDict) {
    return Corrupt(fmt::format("{} on a {} (needs a dict)", OpName(op_), EnumName(KindOf(target))));
  }
  for (size_t i = 0; i < flat.size(); i += 2) {
    NUMPROBE_RETURN_IF_ERROR(DictSet(dict, flat[i], flat[i + 1]));
  }
  return Status::Ok();
}

Status Machine::MemoPut(uint64_t index) {
  NUMPROBE_ASSIGN_OR_RETURN(Ref top, Top());
  auto it = memo_.find(index);
  if (it != memo_.end()) {
    it->second = top;
    return Status::Ok();
  }
  if (memo_.size() >= limits_.max_memo) {
    return OutOfRange(fmt::format("memo holds more than {} entries", limits_.max_memo));
  }
  memo_.emplace(index, top);
  return Status::Ok();
}

Status Machine::MemoGet(uint64_t index) {
  auto it = memo_.find(index);
  if (it == memo_.end()) return Corrupt(fmt::format("memo index {} not found", index));
  return Push(it->second);
}

Result<uint64_t> Machine::DecimalIndex(std::string_view line) {
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), v);
  if (ec == std::errc::result_out_of_range) return OutOfRange("memo index does not fit in 64 bits");
  if (ec != std::errc() || end != line.data() + line.size() || line.empty()) {
    return Corrupt(fmt::format("invalid memo index '{}'", Printable(line, 40)));
  }
  return v;
}

Status Machine::Step() {
  op_offset_ = pos_;
  op_ = U8();
  switch (op_) {
    case kProto: {
      NUMPROBE_RETURN_IF_ERROR(Need(1));
      const int proto = U8();
      if (proto > 5) return Unsupported(fmt::format("pickle protocol {} is not supported", proto));
      p_.protocol_ = proto;
      return Status::Ok();
    }
    case kFrame: {
      NUMPROBE_RETURN_IF_ERROR(Need(8));
      const uint64_t n = LittleEndian(8);
      if (n > Left())
        return Corrupt(fmt::format("frame of {} bytes exceeds the {} bytes left", n, Left()));
      return Status::Ok();  // frames only hint at buffering
    }
    case kStop: {
      NUMPROBE_ASSIGN_OR_RETURN(p_.root_, Pop());
      stopped_ = true;
      return Status::Ok();
    }
    case kMark:
      if (marks_.size() >= limits_.max_marks) {
        return OutOfRange(fmt::format("MARKs nested deeper than {}", limits_.max_marks));
      }
      marks_.push_back(stack_.size());
      return Status::Ok();
    case kPop:
      if (!marks_.empty() && marks_.back() == stack_.size()) {
        marks_.pop_back();
        return Status::Ok();
      }
      return Pop().status();
    case kPopMark:
      return PopMark().status();
    case kDup: {
      NUMPROBE_ASSIGN_OR_RETURN(Ref top, Top());
      return Push(top);
    }
    // ----- scalars -----
    case kNone:
      return Push(kNoneRef);
    case kNewTrue:
      return Push(kTrueRef);
    case kNewFalse:
      return Push(kFalseRef);
    case kBinInt: {
      NUMPROBE_RETURN_IF_ERROR(Need(4));
      const auto v = static_cast<int32_t>(static_cast<uint32_t>(LittleEndian(4)));
      NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewInt(v));
      return Push(r);
    }
    case kBinInt1: {
      NUMPROBE_RETURN_IF_ERROR(Need(1));
      return Push(kSmallInts + U8());
    }
    case kBinInt2: {
      NUMPROBE_RETURN_IF_ERROR(Need(2));
      NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewInt(static_cast<int64_t>(LittleEndian(2))));
      return Push(r);
    }
    case kLong1: {
      NUMPROBE_ASSIGN_OR_RETURN(uint64_t n, Length(1, false));
      return DoLongBytes(Bytes(n));
    }
    case kLong4: {
      NUMPROBE_ASSIGN_OR_RETURN(uint64_t n, Length(4, true));
      return DoLongBytes(Bytes(n));
    }
    case kBinFloat: {
      NUMPROBE_RETURN_IF_ERROR(Need(8));
      uint64_t bits = 0;
      for (int k = 0; k < 8; ++k) bits = (bits << 8) | U8();  // big-endian
      NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewFloat(std::bit_cast<double>(bits)));
      return Push(r);
    }
    case kInt: {
      NUMPROBE_ASSIGN_OR_RETURN(auto line, Line());
      return DoInt(line);
    }
    case kLong: {
      NUMPROBE_ASSIGN_OR_RETURN(auto line, Line());
      return DoLong(line);
    }
    case kFloat: {
      NUMPROBE_ASSIGN_OR_RETURN(auto line, Line());
      return DoFloat(line);
    }
    // ----- strings -----
    case kBinUnicode:
    case kShortBinUnicode:
    case kBinUnicode8: {
      const size_t width = op_ == kShortBinUnicode ? 1 : op_ == kBinUnicode ? 4 : 8;
      NUMPROBE_ASSIGN_OR_RETURN(uint64_t n, Length(width, false));
      NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewStr(Bytes(n)));
      return Push(r);
    }
    case kBinString:
    case kShortBinString: {
      NUMPROBE_ASSIGN_OR_RETURN(uint64_t n, Length(op_ == kBinString ? 4 : 1, op_ == kBinString));
      NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewStr(Bytes(n)));
      return Push(r);
    }
    case kBinBytes:
    case kShortBinBytes:
    case kBinBytes8:
    case kByteArray8: {
      const size_t width = op_ == kShortBinBytes ? 1 : op_ == kBinBytes ? 4 : 8;
      NUMPROBE_ASSIGN_OR_RETURN(uint64_t n, Length(width, false));
      NUMPROBE_ASSIGN_OR_RETURN(Ref r,
                                NewText(Kind::kBytes, std::string(Bytes(n)), op_ == kByteArray8));
      return Push(r);
    }
    case kString: {
      NUMPROBE_ASSIGN_OR_RETURN(auto line, Line());
      return DoString(line);
    }
    case kUnicode: {
      NUMPROBE_ASSIGN_OR_RETURN(auto line, Line());
      return DoUnicode(line);
    }
    // ----- containers -----
    case kEmptyTuple: {
      NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewContainer(Kind::kTuple, {}));
      return Push(r);
    }
    case kEmptyList: {
      NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewContainer(Kind::kList, {}));
      return Push(r);
    }
    case kEmptyDict: {
      NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewContainer(Kind::kDict, {}));
      return Push(r);
    }
    case kEmptySet: {
      NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewContainer(Kind::kSet, {}));
      return Push(r);
    }
    case kTuple1:
    case kTuple2:
    case kTuple3: {
      const size_t n = op_ - kTuple1 + 1u;
      if (stack_.size() < Fence() + n) return Corrupt("stack underflow");
      std::vector<Ref> items(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
      stack_.resize(stack_.size() - n);
      NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewContainer(Kind::kTuple, std::move(items)));
      return Push(r);
    }
    case kTuple: {
      NUMPROBE_ASSIGN_OR_RETURN(auto items, PopMark());
      NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewContainer(Kind::kTuple, std::move(items)));
      return Push(r);
    }
    case kList: {
      NUMPROBE_ASSIGN_OR_RETURN(auto items, PopMark());
      NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewContainer(Kind::kList, std::move(items)));
      return Push(r);
    }
    case kDict: {
      NUMPROBE_ASSIGN_OR_RETURN(auto items, PopMark());
      NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewDictFromPairs(items, false));
      return Push(r);
    }
    case kFrozenSetOp: {
      NUMPROBE_ASSIGN_OR_RETURN(auto items, PopMark());
      NUMPROBE_ASSIGN_OR_RETURN(Ref r, NewSet(Kind::kFrozenSet, items));
      return Push(r);
    }
    case kAppend: {
      NUMPROBE_ASSIGN_OR_RETURN(Ref item, Pop());
      NUMPROBE_ASSIGN_OR_RETURN(Ref target, Top());
      return DoAppends(target, std::span<const Ref>(&item, 1));
    }
    case kAppends: {
      NUMPROBE_ASSIGN_OR_RETURN(auto items, PopMark());
      NUMPROBE_ASSIGN_OR_RETURN(Ref target, Top());
      return DoAppends(target, items);
    }
    case kSetItem: {
      NUMPROBE_ASSIGN_OR_RETURN(Ref value, Pop());
      NUMPROBE_ASSIGN_OR_RETURN(Ref key, Pop());
      NUMPROBE_ASSIGN_OR_RETURN(Ref target, Top());
      const std::array<Ref, 2> pair = {key, value};
      return DoSetItems(target, pair);
    }
    case kSetItems: {
      NUMPROBE_ASSIGN_OR_RETURN(auto items, PopMark());
      NUMPROBE_ASSIGN_OR_RETURN(Ref target, Top());
      return DoSetItems(target, items);
    }
    case kAddItems: {
      NUMPROBE_ASSIGN_OR_RETURN(auto items, PopMark());
      NUMPROBE_ASSIGN_OR_RETURN(Ref target, Top());
      if (KindOf(target) != Kind::kSet) {
        return Corrupt(fmt::format("ADDITEMS on a {} (needs a set)", EnumName(KindOf(target))));
      }
      for (Ref item : items) NUMPROBE_RETURN_IF_ERROR(SetAdd(target, item));
      return Status::Ok();
    }
    // ----- memo -----
    case kBinPut: {
      NUMPROBE_RETURN_IF_ERROR(Need(1));
      return MemoPut(U8());
    }
    case kLongBinPut: {
      NUMPROBE_RETURN_IF_ERROR(Need(4));
      return MemoPut(LittleEndian(4));
    }
    case kMemoize:
      return MemoPut(memo_.size());
    case kPut: {
      NUMPROBE_ASSIGN_OR_RETURN(auto line, Line());
      NUMPROBE_ASSIGN_OR_RETURN(uint64_t index, DecimalIndex(line));
      return MemoPut(index);
    }
    case kBinGet: {
      NUMPROBE_RETURN_IF_ERROR(Need(1));
      return MemoGet(U8());
    }
    case kLongBinGet: {
      NUMPROBE_RETURN_IF_ERROR(Need(4));
      return MemoGet(LittleEndian(4));
    }
    case kGet: {
      NUMPROBE_ASSIGN_OR_RETURN(auto line, Line());
      NUMPROBE_ASSIGN_OR_RETURN(uint64_t index, DecimalIndex(line));
      return MemoGet(index);
    }
    // ----- objects -----
    case kGlobalOp: {
      NUMPROBE_ASSIGN_OR_RETURN(auto module, Line());
      NUMPROBE_ASSIGN_OR_RETURN(auto name, Line());
      return DoGlobal(module, name);
    }
    case kStackGlobal: {
      NUMPROBE_ASSIGN_OR_RETURN(Ref name, Pop());
      NUMPROBE_ASSIGN_OR_RETURN(Ref module, Pop());
      if (KindOf(name) != Kind::kStr || KindOf(module) != Kind::kStr) {
        return Corrupt(fmt::format("STACK_GLOBAL needs two strings, got {} and {}",
                                   EnumName(KindOf(module)), EnumName(KindOf(name))));
      }
      return DoGlobal(p_.text(module), p_.text(name));
    }
    case kReduce: {
      NUMPROBE_ASSIGN_OR_RETURN(Ref args, Pop());
      NUMPROBE_ASSIGN_OR_RETURN(Ref callable, Pop());
      return DoReduce(callable, args, false);
    }
    case kNewObj: {
      NUMPROBE_ASSIGN_OR_RETURN(Ref args, Pop());
      NUMPROBE_ASSIGN_OR_RETURN(Ref cls, Pop());
      return DoReduce(cls, args, true);
    }
    case kNewObjEx: {
      NUMPROBE_ASSIGN_OR_RETURN(Ref kwargs, Pop());
      NUMPROBE_ASSIGN_OR_RETURN(Ref args, Pop());
      NUMPROBE_ASSIGN_OR_RETURN(Ref cls, Pop());
      if (KindOf(kwargs) != Kind::kDict) {
        return Corrupt(
            fmt::format("NEWOBJ_EX keyword arguments are a {}", EnumName(KindOf(kwargs))));
      }
      const bool allowlisted = KindOf(cls) == Kind::kGlobal && p_.global(cls) != Global::kUnknown;
      if (allowlisted && !RefsOf(kwargs).empty()) {
        return Unsupported("NEWOBJ_EX with keyword arguments on an allowlisted class");
      }
      NUMPROBE_RETURN_IF_ERROR(DoReduce(cls, args, true));
      if (KindOf(stack_.back()) == Kind::kObject) RefsOf(stack_.back())[5] = kwargs;
      return Status::Ok();
    }
    case kBuild: {
      NUMPROBE_ASSIGN_OR_RETURN(Ref state, Pop());
      NUMPROBE_ASSIGN_OR_RETURN(Ref target, Top());
      return DoBuild(target, state);
    }
    case kBinPersId: {
      NUMPROBE_ASSIGN_OR_RETURN(Ref pid, Pop());
      Node n;
      n.kind = Kind::kPersistentId;
      n.extra = pid;
      NUMPROBE_ASSIGN_OR_RETURN(Ref r, Add(n));
      return Push(r);
    }
    // ----- refused -----
    case kPersId:
      return Unsupported("text persistent ids (PERSID) are not supported");
    case kInst:
    case kObj:
      return Rejected(fmt::format("{} (instantiates a class by name) is not allowed", OpName(op_)));
    case kExt1:
    case kExt2:
    case kExt4:
      return Rejected(fmt::format("{} (copyreg extension registry) is not allowed", OpName(op_)));
    case kNextBuffer:
    case kReadOnlyBuffer:
      return Unsupported(fmt::format("{} (out-of-band buffers) is not supported", OpName(op_)));
    default:
      return Status::Corrupt(fmt::format("unknown opcode 0x{:02x} at offset {}", op_, op_offset_));
  }
}

Result<Pickle> Machine::Run() {
  // Interned values: None, False, True, then the ints 0..255 (immutable, so sharing is safe).
  p_.nodes_.reserve(256 + 3);
  Node none;
  p_.nodes_.push_back(none);
  Node f;
  f.kind = Kind::kBool;
  p_.nodes_.push_back(f);
  Node t;
  t.kind = Kind::kBool;
  t.flags = 1;
  p_.nodes_.push_back(t);
  for (int64_t v = 0; v < 256; ++v) {
    Node n;
    n.kind = Kind::kInt;
    n.i = v;
    p_.nodes_.push_back(n);
  }
  uint64_t ops = 0;
  while (!stopped_) {
    if (pos_ >= data_.size()) {
      return Status::Corrupt(fmt::format("pickle truncated: no STOP before offset {}", pos_));
    }
    if (++ops > limits_.max_opcodes) {
      return Status::OutOfRange(
          fmt::format("pickle runs more than {} opcodes", limits_.max_opcodes));
    }
    NUMPROBE_RETURN_IF_ERROR(Step());
  }
  p_.end_offset_ = pos_;
  return std::move(p_);
}

Result<Pickle> Unpickle(std::span<const std::byte> data, const Options& options) {
  Machine machine(data, options);
  return machine.Run();
}

}  // namespace numprobe::pickle
