// The restricted pickle interpreter: CPython's own pickles of plain data at protocols 0-5 must
// come back as repr() shows them, every opcode family is exercised by hand-made streams, and every
// refusal and limit is checked for its error code and message.
#include "formats/pickle.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "unit/formats/pickle_builder.h"

namespace numprobe::pickle {
namespace {

#include "pickle_cases.inc"

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  }
  return out;
}

std::span<const std::byte> Bytes(const std::string& s) { return std::as_bytes(std::span(s)); }

Result<Pickle> Unpick(const std::string& s, bool inert = false, Limits limits = {}) {
  Options o;
  o.inert = inert;
  o.limits = limits;
  return Unpickle(Bytes(s), o);
}

using P = ::numprobe::testing::PickleBuilder;

void ExpectError(const Result<Pickle>& r, ErrorCode code, std::string_view phrase) {
  ASSERT_FALSE(r.ok()) << "expected an error containing: " << phrase;
  EXPECT_EQ(r.error().code(), code) << r.error().ToString();
  EXPECT_NE(r.error().message().find(phrase), std::string::npos) << r.error().ToString();
}

// repr() of a value, as CPython prints it for the kinds these tests use.
std::string Repr(const Pickle& p, Ref r, std::set<Ref>* active) {
  if (active->count(r) != 0) {
    return p.kind(r) == Kind::kList ? "[...]" : p.kind(r) == Kind::kDict ? "{...}" : "...";
  }
  // ascii(): quotes, backslashes and control bytes escaped; str code points above 0x7f as
  // \xNN, \uNNNN or \UNNNNNNNN; bytes above 0x7e as \xNN.
  auto quote = [](std::string_view s, bool is_str) {
    std::string out = "'";
    char buf[16];
    for (size_t i = 0; i < s.size();) {
      auto c = static_cast<unsigned char>(s[i]);
      uint32_t cp = c;
      size_t len = 1;
      if (is_str && c >= 0x80) {
        len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
        cp = c & (len == 2 ? 0x1fu : len == 3 ? 0x0fu : 0x07u);
        for (size_t k = 1; k < len; ++k)
          cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3fu);
      }
      i += len;
      if (cp == '\\' || cp == '\'') {
        out += '\\';
        out += static_cast<char>(cp);
      } else if (cp == '\n') {
        out += "\\n";
      } else if (cp == '\t') {
        out += "\\t";
      } else if (cp == '\r') {
        out += "\\r";
      } else if (cp < 0x20 || (cp >= 0x7f && cp < 0x100)) {
        std::snprintf(buf, sizeof(buf), "\\x%02x", cp);
        out += buf;
      } else if (cp >= 0x100) {
        std::snprintf(buf, sizeof(buf), cp < 0x10000 ? "\\u%04x" : "\\U%08x", cp);
        out += buf;
      } else {
        out += static_cast<char>(cp);
      }
    }
    return out + "'";
  };
  switch (p.kind(r)) {
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return p.bool_value(r) ? "True" : "False";
    case Kind::kInt:
      return std::to_string(p.int_value(r));
    case Kind::kFloat: {
      char buf[64];
      const double v = p.float_value(r);
      std::snprintf(buf, sizeof(buf), "%.17g", v);
      // Shortest round-trip form, as repr() writes it.
      for (int prec = 1; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof(buf), "%.*g", prec, v);
        if (std::strtod(buf, nullptr) == v) break;
      }
      std::string s = buf;
      if (s.find_first_of(".en") == std::string::npos) s += ".0";
      const auto e = s.find("e");
      if (e != std::string::npos && s[e + 2] == '0') s.erase(e + 2, 1);  // 1e+100, 1.5e-300
      return s;
    }
    case Kind::kStr:
      return quote(p.text(r), '\'');
    case Kind::kBytes: {
      const std::string b = "b" + quote(p.text(r), false);
      return p.is_bytearray(r) ? "bytearray(" + b + ")" : b;
    }
    default:
      break;
  }
  active->insert(r);
  std::string out;
  const auto items = p.items(r);
  auto join = [&](std::string_view sep) {
    std::string s;
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) s += sep;
      s += Repr(p, items[i], active);
    }
    return s;
  };
  switch (p.kind(r)) {
    case Kind::kList:
      out = "[" + join(", ") + "]";
      break;
    case Kind::kTuple:
      out = "(" + join(", ") + (items.size() == 1 ? ",)" : ")");
      break;
    case Kind::kSet:
      out = "{" + join(", ") + "}";
      break;
    case Kind::kFrozenSet:
      out = "frozenset({" + join(", ") + "})";
      break;
    case Kind::kDict: {
      std::string s;
      for (size_t i = 0; i + 1 < items.size(); i += 2) {
        if (p.is_ordered(r)) {
          s += std::string(i ? ", " : "") + "(" + Repr(p, items[i], active) + ", " +
               Repr(p, items[i + 1], active) + ")";
        } else {
          s += std::string(i ? ", " : "") + Repr(p, items[i], active) + ": " +
               Repr(p, items[i + 1], active);
        }
      }
      out = p.is_ordered(r) ? "OrderedDict([" + s + "])" : "{" + s + "}";
      break;
    }
    default:
      out = "<" + std::string(EnumName(p.kind(r))) + ">";
  }
  active->erase(r);
  return out;
}

std::string Repr(const Pickle& p) {
  std::set<Ref> active;
  return Repr(p, p.root(), &active);
}

TEST(Pickle, CPythonProtocols0To5) {
  for (const PythonCase& c : kPythonCases) {
    SCOPED_TRACE("protocol " + std::to_string(c.protocol));
    const std::string data = FromHex(c.hex);
    auto r = Unpick(data);
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    EXPECT_EQ(Repr(*r), c.repr);
    EXPECT_EQ(r->end_offset(), data.size());
    EXPECT_EQ(r->protocol(), c.protocol >= 2 ? c.protocol : 0);  // PROTO exists since 2
  }
}

TEST(Pickle, ProtocolFourFramingOpcodesArePresentInTheCases) {
  // The protocol 4 and 5 cases must really use FRAME, MEMOIZE, SHORT_BINUNICODE, STACK_GLOBAL,
  // EMPTY_SET/ADDITEMS, FROZENSET and (5) BYTEARRAY8, or the test above proves less than it says.
  const std::string p4 = FromHex(kPythonCases[4].hex);
  const std::string p5 = FromHex(kPythonCases[5].hex);
  EXPECT_EQ(static_cast<uint8_t>(p4[2]), 0x95);  // FRAME right after PROTO
  for (int op : {0x94, 0x8c, 0x93, 0x8f, 0x90, 0x91}) {
    EXPECT_NE(p4.find(static_cast<char>(op)), std::string::npos) << op;
  }
  EXPECT_NE(p5.find(static_cast<char>(0x96)), std::string::npos);
}

TEST(Pickle, SharedValuesAndCycles) {
  // l = [1]; d = {'a': l, 'b': l}; l.append(l)
  P p;
  p.proto(2).op('}').op('q').op(0).op('(').bu("a").op(']').op('q').op(1).k(1).op('a');
  p.op('h').op(1).op('a');  // l.append(l)
  p.bu("b").op('h').op(1).op('u').stop();
  auto r = Unpick(p.str());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  const auto kv = r->items(r->root());
  ASSERT_EQ(kv.size(), 4u);
  EXPECT_EQ(kv[1], kv[3]);  // one list, shared
  const auto l = r->items(kv[1]);
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[1], kv[1]);  // which contains itself
  EXPECT_EQ(Repr(*r), "{'a': [1, [...]], 'b': [1, [...]]}");
}

TEST(Pickle, WideStringAndBytesOpcodes) {
  P p;
  p.proto(4).op('(');
  p.op(0x8d).le(3, 8).raw("abc");            // BINUNICODE8
  p.op(0x8e).le(2, 8).raw("\x01\x02");       // BINBYTES8
  p.op(0x96).le(1, 8).raw("z");              // BYTEARRAY8
  p.op('B').le(1, 4).raw("y");               // BINBYTES
  p.op('C').op(1).raw("x");                  // SHORT_BINBYTES
  p.op('T').le(2, 4).raw("py");              // BINSTRING (Python 2 str)
  p.op('U').op(2).raw("p2");                 // SHORT_BINSTRING
  p.op(0x8c).op(2).raw("\xc3\xa9");          // SHORT_BINUNICODE "é"
  p.op('S').raw("'a\\n\\x41\\101\\\\b'\n");  // STRING with escapes
  p.op('V').raw("\\u20ac\xe9\n");            // UNICODE raw-unicode-escape
  p.op('t').stop();
  auto r = Unpick(p.str());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(Repr(*r),
            "('abc', b'\\x01\\x02', bytearray(b'z'), b'y', b'x', 'py', 'p2', '\\xe9', "
            "'a\\nAA\\\\b', '\\u20ac\\xe9')");
}

TEST(Pickle, IntegerOpcodes) {
  P p;
  p.proto(2).op('(');
  p.op('J').le(0xfffffffe, 4);                            // BININT -2
  p.op('M').le(65535, 2);                                 // BININT2
  p.op(0x8a).op(0);                                       // LONG1 of 0 bytes = 0
  p.op(0x8a).op(9).le(0xffffffffffffff85, 8).op(0xff);    // LONG1 padded with a sign byte: -123
  p.op(0x8b).le(2, 4).le(0x8000, 2);                      // LONG4: -32768
  p.op('I').raw("-7\n");                                  // INT
  p.op('I').raw("01\n");                                  // INT True
  p.op('L').raw("12345678901L\n");                        // LONG
  p.op('F').raw("0.25\n");                                // FLOAT
  p.op('G').raw(std::string("\x3f\xf8\0\0\0\0\0\0", 8));  // BINFLOAT 1.5, big-endian
  p.op('t').stop();
  auto r = Unpick(p.str());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(Repr(*r), "(-2, 65535, 0, -123, -32768, -7, True, 12345678901, 0.25, 1.5)");
}

TEST(Pickle, LegacyMagicIsABigInt) {
  const std::string magic("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 15);
  auto r = Unpick(magic);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->kind(r->root()), Kind::kBigInt);
  EXPECT_EQ(r->text(r->root()).size(), 10u);
}

TEST(Pickle, StackAndMarkOpcodes) {
  P p;
  p.proto(2).k(1).op('2');      // DUP
  p.op('(').k(5).k(6).op('1');  // POP_MARK drops 5, 6 and the mark
  p.op('(').op('0');            // POP of a bare MARK removes the mark
  p.k(9).op('0');               // POP
  p.op(0x86).stop();            // TUPLE2 (1, 1)
  auto r = Unpick(p.str());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(Repr(*r), "(1, 1)");
}

TEST(Pickle, MemoIsAMapNotAnArray) {
  P p;
  p.proto(2).bu("v").op('r').le(0xfffffff0, 4).op('0');  // LONG_BINPUT at a huge index
  p.op('j').le(0xfffffff0, 4);                           // LONG_BINGET
  p.op('p').raw("123456789012\n");                       // PUT (protocol 0, decimal)
  p.op('g').raw("123456789012\n");                       // GET
  p.op(0x86).stop();
  auto r = Unpick(p.str());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(Repr(*r), "('v', 'v')");
}

TEST(Pickle, MemoizeNumbersEntriesInOrder) {
  P p;
  p.proto(4).bu("a").op(0x94).op('0').bu("b").op(0x94).op('0');
  p.op('h').op(1).op('h').op(0).op(0x86).stop();
  auto r = Unpick(p.str());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(Repr(*r), "('b', 'a')");
}

TEST(Pickle, DictKeysCompareAsPythonDoes) {
  // {1: 'a', True: 'b', 1.0: 'c', (1, 'x'): 'd', (1, 'x'): 'e', frozenset({1,2}): 'f',
  //  frozenset({2,1}): 'g'} has three entries: 1 -> 'c', (1, 'x') -> 'e', frozenset -> 'g'.
  P p;
  p.proto(4).op('}').op('(');
  p.k(1).bu("a").op(0x88).bu("b").op('G').raw(std::string("\x3f\xf0\0\0\0\0\0\0", 8)).bu("c");
  p.k(1).bu("x").op(0x86).bu("d").k(1).bu("x").op(0x86).bu("e");
  p.op('(').k(1).k(2).op(0x91).bu("f").op('(').k(2).k(1).op(0x91).bu("g");
  p.op('u').stop();
  auto r = Unpick(p.str());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(Repr(*r), "{1: 'c', (1, 'x'): 'e', frozenset({1, 2}): 'g'}");
}

TEST(Pickle, OrderedDictBuildStateIsAccepted) {
  P p;
  p.proto(2).global("collections", "OrderedDict").op(')').op('R');
  p.bu("w").k(3).op('s');
  p.op('}').bu("_metadata").op('}').op('s').op('b').stop();  // BUILD {'_metadata': {}}
  auto r = Unpick(p.str());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(Repr(*r), "OrderedDict([('w', 3)])");
}

TEST(Pickle, TorchRebuildBecomesACallRecord) {
  P p;
  p.proto(2).global("torch._utils", "_rebuild_tensor_v2");
  p.op('(').op('(').bu("storage").global("torch", "FloatStorage").bu("0").bu("cpu").k(6);
  p.op('t').op('Q');  // BINPERSID
  p.k(0).k(2).k(3).op(0x86).k(3).k(1).op(0x86).op(0x89);
  p.global("collections", "OrderedDict").op(')').op('R').op('t').op('R').stop();
  auto r = Unpick(p.str());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  const Ref root = r->root();
  ASSERT_EQ(r->kind(root), Kind::kCall);
  EXPECT_EQ(r->global(root), Global::kRebuildTensorV2);
  const auto args = r->items(r->args(root));
  ASSERT_EQ(args.size(), 6u);
  ASSERT_EQ(r->kind(args[0]), Kind::kPersistentId);
  const auto pid = r->items(r->persistent_id(args[0]));
  ASSERT_EQ(pid.size(), 5u);
  EXPECT_EQ(r->global(pid[1]), Global::kTypedStorage);
  EXPECT_EQ(r->global_dtype(pid[1]), DType::kF32);
}

TEST(Pickle, StackGlobalAndDTypes) {
  P q;
  q.proto(4).op(0x8c).op(5).raw("torch").op(0x8c).op(11).raw("float8_e5m2").op(0x93);
  q.op(0x8c).op(5).raw("torch").op(0x8c).op(9).raw("complex32").op(0x93).op(0x86).stop();
  auto ok = Unpick(q.str());
  ASSERT_TRUE(ok.ok()) << ok.error().ToString();
  const auto items = ok->items(ok->root());
  EXPECT_EQ(ok->global(items[0]), Global::kDType);
  EXPECT_EQ(ok->global_dtype(items[0]), DType::kF8E5M2);
  EXPECT_EQ(ok->global(items[1]), Global::kDType);
  EXPECT_FALSE(ok->global_dtype(items[1]).has_value());  // torch has it, numprobe does not
}

TEST(Pickle, TrailingBytesAfterStopAreLeft) {
  const std::string s = P().proto(2).k(7).stop().raw("more").str();
  auto r = Unpick(s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->end_offset(), 5u);
}

// ----- inert mode -----

TEST(Pickle, InertModeKeepsUnknownObjectsOpaque) {
  // __main__.Net via NEWOBJ, BUILD with a state dict holding a tensor-like call, APPEND on it.
  P p;
  p.proto(2).global("__main__", "Net").op(')').op(0x81);  // NEWOBJ
  p.op('}').bu("w").global("torch", "Size").k(2).op(0x85).op(0x85).op('R').op('s');
  p.op('b');               // BUILD
  p.k(4).op('a');          // APPEND on the object
  p.bu("k").k(5).op('s');  // SETITEM on the object
  p.stop();
  auto strict = Unpick(p.str());
  ExpectError(strict, ErrorCode::kRejected, "global '__main__.Net' is not allowed");
  auto r = Unpick(p.str(), /*inert=*/true);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  const Ref root = r->root();
  ASSERT_EQ(r->kind(root), Kind::kObject);
  EXPECT_EQ(r->text(r->callable(root)), "__main__.Net");
  ASSERT_NE(r->state(root), kNoRef);
  std::set<Ref> active;
  EXPECT_EQ(Repr(*r, r->state(root), &active), "{'w': (2,)}");
  EXPECT_EQ(Repr(*r, r->object_list(root), &active), "[4]");
  EXPECT_EQ(Repr(*r, r->object_dict(root), &active), "{'k': 5}");
  ASSERT_EQ(r->opaque_classes().size(), 1u);
  EXPECT_EQ(r->opaque_classes()[0], "__main__.Net");
}

TEST(Pickle, InertModeStillRefusesCodeExecutionGlobals) {
  const std::string s =
      P().proto(2).global("os", "system").bu("touch x").op(0x85).op('R').stop().str();
  ExpectError(Unpick(s, true), ErrorCode::kRejected,
              "global 'os.system' is not allowed, even in inert mode");
}

// ----- refusals -----

TEST(Pickle, StrictModeRejectsGlobalsOutsideTheAllowlist) {
  for (const auto& [m, n] :
       std::vector<std::pair<std::string, std::string>>{{"os", "system"},
                                                        {"posix", "system"},
                                                        {"builtins", "eval"},
                                                        {"builtins", "exec"},
                                                        {"subprocess", "Popen"},
                                                        {"builtins", "getattr"},
                                                        {"torch", "load"},
                                                        {"numpy", "ndarray"}}) {
    const std::string s = P().proto(2).global(m, n).stop().str();
    ExpectError(Unpick(s), ErrorCode::kRejected, "global '" + m + "." + n + "' is not allowed");
  }
  // Python 2 module names go through the same table.
  ExpectError(Unpick(P().proto(2).global("__builtin__", "eval").stop().str()), ErrorCode::kRejected,
              "global '__builtin__.eval' is not allowed");
  // STACK_GLOBAL too.
  const std::string sg =
      P().proto(4).op(0x8c).op(2).raw("os").op(0x8c).op(6).raw("system").op(0x93).stop().str();
  ExpectError(Unpick(sg), ErrorCode::kRejected,
              "global 'os.system' is not allowed (opcode STACK_GLOBAL");
}

TEST(Pickle, UnsupportedTorchRebuildsAreNamed) {
  ExpectError(Unpick(P().proto(2).global("torch._utils", "_rebuild_qtensor").stop().str()),
              ErrorCode::kUnsupported, "_rebuild_qtensor (quantized tensor) is not supported");
  ExpectError(Unpick(P().proto(2).global("torch._utils", "_rebuild_sparse_tensor").stop().str()),
              ErrorCode::kUnsupported, "sparse tensor");
  ExpectError(Unpick(P().proto(2).global("torch._utils", "_rebuild_nested_tensor").stop().str()),
              ErrorCode::kUnsupported, "nested tensor");
  ExpectError(
      Unpick(P().proto(2).global("torch._utils", "_rebuild_meta_tensor_no_storage").stop().str()),
      ErrorCode::kUnsupported, "meta tensor");
  ExpectError(Unpick(P().proto(2).global("torch", "QInt8Storage").stop().str()),
              ErrorCode::kUnsupported, "quantized storage");
  ExpectError(Unpick(P().proto(2).global("torch", "ComplexHalfStorage").stop().str()),
              ErrorCode::kUnsupported, "complex32 storage");
}

TEST(Pickle, CallsOnlyWhatMayBeCalled) {
  ExpectError(Unpick(P().proto(2).global("torch", "float32").op(')').op('R').stop().str()),
              ErrorCode::kRejected,
              "calling 'torch.float32' is not allowed (opcode REDUCE at offset");
  ExpectError(
      Unpick(
          P().proto(2).global("torch._utils", "_rebuild_tensor_v2").op(')').op(0x81).stop().str()),
      ErrorCode::kRejected, "instantiating 'torch._utils._rebuild_tensor_v2' is not allowed");
  ExpectError(Unpick(P().proto(2).op(']').op(')').op('R').stop().str()), ErrorCode::kCorrupt,
              "REDUCE on a list (needs a callable) (opcode REDUCE at offset 4)");
  ExpectError(
      Unpick(P().proto(2).global("collections", "OrderedDict").op(']').op('R').stop().str()),
      ErrorCode::kCorrupt, "arguments are a list, not a tuple");
  ExpectError(Unpick(P().proto(2).global("torch", "Size").bu("x").op(0x85).op('R').stop().str()),
              ErrorCode::kCorrupt, "bad arguments for torch.Size");
}

TEST(Pickle, BuildOnlyOnAllowedTargets) {
  ExpectError(Unpick(P().proto(2).op(']').op('}').op('b').stop().str()), ErrorCode::kRejected,
              "BUILD on list of 0 items is not allowed (opcode BUILD at offset 4)");
  ExpectError(Unpick(P().proto(2).op('}').op('}').op('b').stop().str()), ErrorCode::kRejected,
              "BUILD on dict");
}

TEST(Pickle, RefusedOpcodes) {
  ExpectError(Unpick(P().proto(2).op('i').raw("os\nsystem\n").stop().str()), ErrorCode::kRejected,
              "INST (instantiates a class by name) is not allowed");
  ExpectError(Unpick(P().proto(2).op('(').op('o').stop().str()), ErrorCode::kRejected, "OBJ");
  ExpectError(Unpick(P().proto(2).op(0x82).op(1).stop().str()), ErrorCode::kRejected,
              "EXT1 (copyreg extension registry)");
  ExpectError(Unpick(P().proto(2).op('P').raw("x\n").stop().str()), ErrorCode::kUnsupported,
              "PERSID");
  ExpectError(Unpick(P().proto(5).op(0x97).stop().str()), ErrorCode::kUnsupported, "NEXT_BUFFER");
  ExpectError(Unpick(P().proto(5).op(0x98).stop().str()), ErrorCode::kUnsupported,
              "READONLY_BUFFER");
  ExpectError(Unpick(P().proto(2).op(0xff).stop().str()), ErrorCode::kCorrupt,
              "unknown opcode 0xff at offset 2");
  ExpectError(Unpick(P().proto(6).stop().str()), ErrorCode::kUnsupported, "pickle protocol 6");
}

TEST(Pickle, StackAndMarkUnderflow) {
  ExpectError(Unpick(P().proto(2).op('a').stop().str()), ErrorCode::kCorrupt,
              "stack underflow (opcode APPEND at offset 2)");
  ExpectError(Unpick(P().proto(2).op('.').str()), ErrorCode::kCorrupt,
              "stack underflow (opcode STOP");
  ExpectError(Unpick(P().proto(2).k(1).op('t').stop().str()), ErrorCode::kCorrupt,
              "no MARK on the stack (MARK underflow) (opcode TUPLE at offset 4)");
  ExpectError(Unpick(P().proto(2).op('1').stop().str()), ErrorCode::kCorrupt, "MARK underflow");
  // A MARK fences off the values below it: APPEND cannot reach the list under the MARK.
  ExpectError(Unpick(P().proto(2).op(']').op('(').k(1).op('a').stop().str()), ErrorCode::kCorrupt,
              "stack underflow (opcode APPEND at offset 6)");
  ExpectError(Unpick(P().proto(2).k(1).op(0x87).stop().str()), ErrorCode::kCorrupt,
              "stack underflow (opcode TUPLE3");
  ExpectError(Unpick(P().proto(2).op(0x93).stop().str()), ErrorCode::kCorrupt, "stack underflow");
}

TEST(Pickle, TypeConfusion) {
  ExpectError(Unpick(P().proto(2).op(']').k(1).k(2).op('s').stop().str()), ErrorCode::kCorrupt,
              "SETITEM on a list (needs a dict) (opcode SETITEM at offset 7)");
  ExpectError(Unpick(P().proto(2).op(']').op('(').k(1).k(2).op('u').stop().str()),
              ErrorCode::kCorrupt, "SETITEMS on a list");
  ExpectError(Unpick(P().proto(2).op('}').k(1).op('a').stop().str()), ErrorCode::kCorrupt,
              "APPEND on a dict (needs a list)");
  ExpectError(Unpick(P().proto(2).op(')').op('(').k(1).op('e').stop().str()), ErrorCode::kCorrupt,
              "APPENDS on a tuple");
  ExpectError(Unpick(P().proto(4).op(']').op('(').k(1).op(0x90).stop().str()), ErrorCode::kCorrupt,
              "ADDITEMS on a list (needs a set)");
  ExpectError(Unpick(P().proto(2).op('}').op(']').k(1).op('s').stop().str()), ErrorCode::kCorrupt,
              "unhashable list used as a dict key");
  ExpectError(Unpick(P().proto(2).op('}').op('(').k(1).op('u').stop().str()), ErrorCode::kCorrupt,
              "odd number of items");
  ExpectError(Unpick(P().proto(4).k(1).k(2).op(0x93).stop().str()), ErrorCode::kCorrupt,
              "STACK_GLOBAL needs two strings, got int and int");
}

TEST(Pickle, TruncationAndLengths) {
  ExpectError(Unpick(P().proto(2).op('J').raw("\x01\x02").str()), ErrorCode::kCorrupt,
              "pickle truncated: needs 4 more bytes, 2 left (opcode BININT at offset 2)");
  ExpectError(Unpick(P().proto(2).k(1).str()), ErrorCode::kCorrupt, "no STOP");
  ExpectError(Unpick(P().proto(2).op('X').le(0xffffffff, 4).raw("ab").stop().str()),
              ErrorCode::kCorrupt, "length 4294967295 exceeds the 3 bytes left (opcode BINUNICODE");
  ExpectError(Unpick(P().proto(4).op(0x8e).le(~uint64_t{0}, 8).stop().str()), ErrorCode::kCorrupt,
              "exceeds the 1 bytes left (opcode BINBYTES8");
  ExpectError(Unpick(P().proto(4).op(0x8d).le(uint64_t{1} << 62, 8).stop().str()),
              ErrorCode::kCorrupt, "(opcode BINUNICODE8");
  ExpectError(Unpick(P().proto(4).op(0x95).le(1000, 8).stop().str()), ErrorCode::kCorrupt,
              "frame of 1000 bytes exceeds the 1 bytes left");
  ExpectError(Unpick(P().proto(2).op('T').le(0xfffffff0, 4).stop().str()), ErrorCode::kCorrupt,
              "negative length -16 (opcode BINSTRING");
  ExpectError(Unpick(P().proto(2).op(0x8b).le(0x80000000, 4).stop().str()), ErrorCode::kCorrupt,
              "negative length");
  ExpectError(Unpick(P().proto(2).op('c').raw("os").str()), ErrorCode::kCorrupt,
              "line without a newline (opcode GLOBAL");
  ExpectError(Unpick(P().proto(2).op('h').op(3).stop().str()), ErrorCode::kCorrupt,
              "memo index 3 not found (opcode BINGET at offset 2)");
  ExpectError(Unpick(P().proto(2).op('j').le(0xffffffff, 4).stop().str()), ErrorCode::kCorrupt,
              "memo index 4294967295 not found");
  ExpectError(Unpick(P().proto(2).op('q').op(0).stop().str()), ErrorCode::kCorrupt,
              "stack underflow (opcode BINPUT");
}

TEST(Pickle, MalformedScalars) {
  ExpectError(Unpick(P().proto(2).op(0x8a).op(9).le(1, 8).op(1).stop().str()),
              ErrorCode::kOutOfRange, "integer of 9 bytes does not fit in 64 bits (opcode LONG1");
  ExpectError(Unpick(P().proto(0).op('I').raw("99999999999999999999\n").stop().str()),
              ErrorCode::kOutOfRange, "does not fit in 64 bits (opcode INT");
  ExpectError(Unpick(P().proto(0).op('I').raw("12x\n").stop().str()), ErrorCode::kCorrupt,
              "invalid integer '12x'");
  ExpectError(Unpick(P().proto(0).op('F').raw("nope\n").stop().str()), ErrorCode::kCorrupt,
              "invalid float");
  ExpectError(Unpick(P().proto(2).op('X').le(2, 4).raw("\xc3\x28").stop().str()),
              ErrorCode::kCorrupt, "string is not valid UTF-8 (opcode BINUNICODE");
  ExpectError(Unpick(P().proto(0).op('S').raw("abc\n").stop().str()), ErrorCode::kCorrupt,
              "STRING operand is not quoted");
  ExpectError(Unpick(P().proto(0).op('g').raw("-1\n").stop().str()), ErrorCode::kCorrupt,
              "invalid memo index");
}

TEST(Pickle, LimitsStopHostileInputs) {
  // 100k nested MARKs.
  std::string marks = P().proto(2).str() + std::string(100000, '(') + ".";
  ExpectError(Unpick(marks), ErrorCode::kOutOfRange,
              "MARKs nested deeper than 1000 (opcode MARK at offset 1002)");

  Limits small;
  small.max_stack = 10;
  ExpectError(Unpick(P().proto(2).str() + std::string(20, 'N') + ".", false, small),
              ErrorCode::kOutOfRange, "stack deeper than 10 values");
  small = {};
  small.max_memo = 2;
  ExpectError(Unpick(P().proto(4).k(1).op(0x94).op(0x94).op(0x94).stop().str(), false, small),
              ErrorCode::kOutOfRange, "memo holds more than 2 entries");
  small = {};
  small.max_opcodes = 5;
  ExpectError(Unpick(P().proto(2).str() + std::string(10, 'N') + ".", false, small),
              ErrorCode::kOutOfRange, "more than 5 opcodes");
  small = {};
  small.max_values = 300;  // 259 are interned constants
  std::string many = P().proto(2).op('(').str();
  for (int i = 0; i < 60; ++i) many += P().op('M').le(1000, 2).str();
  ExpectError(Unpick(many + "t.", false, small), ErrorCode::kOutOfRange, "more than 300 values");
  small = {};
  small.max_items = 4;
  ExpectError(Unpick(P().proto(2).op(']').op('(').k(1).k(2).k(3).k(4).k(5).op('e').stop().str(),
                     false, small),
              ErrorCode::kOutOfRange, "containers hold more than 4 items");
  small = {};
  small.max_keys = 2;
  ExpectError(
      Unpick(P().proto(2).op('}').op('(').k(1).k(1).k(2).k(2).k(3).k(3).op('u').stop().str(), false,
             small),
      ErrorCode::kOutOfRange, "more than 2 entries");
  small = {};
  small.max_line = 8;
  ExpectError(Unpick(P().proto(2).global("collections_long_name", "OrderedDict").stop().str(),
                     false, small),
              ErrorCode::kOutOfRange, "line longer than 8 bytes");
}

TEST(Pickle, DeeplyNestedKeysAreRefused) {
  // ((((...(1,)...),),),) 40 deep used as a dict key.
  P p;
  p.proto(2).op('}').k(1);
  for (int i = 0; i < 40; ++i) p.op(0x85);
  p.k(0).op('s').stop();
  ExpectError(Unpick(p.str()), ErrorCode::kOutOfRange, "nested 40 deep is too large");
  // Exponentially shared tuples: t = (t, t) 40 times has 2^40 leaves.
  P q;
  q.proto(2).op('}').k(1);
  for (int i = 0; i < 40; ++i) q.op('2').op(0x86);
  q.k(0).op('s').stop();
  ExpectError(Unpick(q.str()), ErrorCode::kOutOfRange, "is too large");
}

TEST(Pickle, StringAmplificationIsCapped) {
  // bytearray(b) rebuilt from one memoized 1 MiB bytes object, 200 times.
  P p;
  p.proto(4).op(0x8e).le(1 << 20, 8).raw(std::string(1 << 20, 'x')).op(0x94).op('0');
  p.op('(');
  for (int i = 0; i < 200; ++i) p.global("builtins", "bytearray").op('h').op(0).op(0x85).op('R');
  p.op('l').stop();
  ExpectError(Unpick(p.str()), ErrorCode::kOutOfRange, "amplification");
}

TEST(Pickle, NothingIsExecuted) {
  // The classic payload: os.system("touch CANARY") via GLOBAL+REDUCE, in both modes. The VM
  // refuses the global before REDUCE; no file may appear either way.
  const std::string payload = P().proto(2)
                                  .global("os", "system")
                                  .bu("touch PICKLE_TEST_CANARY")
                                  .op(0x85)
                                  .op('R')
                                  .stop()
                                  .str();
  ExpectError(Unpick(payload), ErrorCode::kRejected, "global 'os.system' is not allowed");
  ExpectError(Unpick(payload, true), ErrorCode::kRejected, "global 'os.system' is not allowed");
  EXPECT_FALSE(std::filesystem::exists("PICKLE_TEST_CANARY"));
}

}  // namespace
}  // namespace numprobe::pickle
