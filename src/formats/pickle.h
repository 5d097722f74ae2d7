// Internal: a restricted pickle interpreter for torch .pt files. It can only build values (None,
// bool, int, float, str, bytes, tuple, list, dict, set, frozenset) plus inert records of the few
// torch callables it allows (tensor rebuilds, storages, dtypes); it never imports or calls
// anything, so there is no code path that could execute what a pickle names. Values live in an
// arena and are addressed by index (pickled objects are shared and may form cycles); nothing
// recurses on untrusted depth. The Pickle returned owns all of its values; callers read them
// through its accessors.
#ifndef NUMPROBE_FORMATS_PICKLE_H_
#define NUMPROBE_FORMATS_PICKLE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/dtype.h"
#include "numprobe/enum_names.h"
#include "numprobe/result.h"

namespace numprobe::pickle {

// Index of a value in a Pickle's arena.
using Ref = uint32_t;
inline constexpr Ref kNoRef = 0xFFFFFFFFu;

enum class Kind : uint8_t {
  kNone,
  kBool,
  kInt,     // fits in int64
  kBigInt,  // only the legacy torch.save magic number (more than 64 bits); text() = LE bytes
  kFloat,
  kStr,    // UTF-8 (lone surrogates allowed, as Python's surrogatepass)
  kBytes,  // bytes or bytearray (is_bytearray())
  kTuple,
  kList,
  kDict,  // insertion-ordered; is_ordered() for collections.OrderedDict
  kSet,
  kFrozenSet,
  kGlobal,        // a module.name the allowlist knows (or, in inert mode, an unknown one)
  kCall,          // an allowlisted callable applied to arguments it is not evaluated on
  kObject,        // inert mode only: an unknown class instantiated with args, state and items
  kPersistentId,  // BINPERSID of a value (torch: a storage reference)
};

// The allowlisted globals. kUnknown exists only in inert mode.
enum class Global : uint8_t {
  kUnknown,
  kRebuildTensorV2,            // torch._utils._rebuild_tensor_v2
  kRebuildTensorV3,            // torch._utils._rebuild_tensor_v3
  kRebuildParameter,           // torch._utils._rebuild_parameter
  kRebuildParameterWithState,  // torch._utils._rebuild_parameter_with_state
  kRebuildFromType,            // torch._tensor._rebuild_from_type(_v2)
  kTypedStorage,               // torch.<X>Storage; dtype() says which
  kUntypedStorage,             // torch.UntypedStorage (numel counts bytes)
  kDType,                      // torch.float32 ...; dtype() is empty for one numprobe lacks
  kTensorClass,                // torch.Tensor
  kParameterClass,             // torch.nn.parameter.Parameter
  kSize,                       // torch.Size (evaluated to a tuple)
  kDevice,                     // torch.device
  kOrderedDict,                // collections.OrderedDict (evaluated to a dict)
  kCodecsEncode,               // _codecs.encode (evaluated to bytes)
  kSet,                        // builtins.set (evaluated)
  kFrozenSet,                  // builtins.frozenset (evaluated)
  kByteArray,                  // builtins.bytearray (evaluated)
  kComplex,                    // builtins.complex
};

// As Python names the type (for messages).
inline constexpr EnumNameEntry<Kind> kKindNames[] = {
    {Kind::kNone, "None"},     {Kind::kBool, "bool"},
    {Kind::kInt, "int"},       {Kind::kBigInt, "int"},
    {Kind::kFloat, "float"},   {Kind::kStr, "str"},
    {Kind::kBytes, "bytes"},   {Kind::kTuple, "tuple"},
    {Kind::kList, "list"},     {Kind::kDict, "dict"},
    {Kind::kSet, "set"},       {Kind::kFrozenSet, "frozenset"},
    {Kind::kGlobal, "global"}, {Kind::kCall, "object"},
    {Kind::kObject, "object"}, {Kind::kPersistentId, "persistent id"}};
constexpr const auto& EnumNameTable(Kind /*unused*/) { return kKindNames; }

struct Limits {
  uint64_t max_opcodes = 200'000'000;
  uint64_t max_stack = 1 << 20;   // values on the stack
  uint64_t max_marks = 1000;      // open MARKs (Python's own recursion limit bounds its pickler)
  uint64_t max_memo = 1 << 22;    // memo entries
  uint64_t max_values = 1 << 23;  // values in the arena
  uint64_t max_items = 1 << 25;   // items in all containers together
  uint64_t max_keys = 1 << 22;    // dict and set entries together
  uint32_t max_key_size = 4096;   // values inside one dict key or set item (tuples)
  uint32_t max_key_depth = 32;    // nesting inside one dict key or set item
  uint64_t max_line = 1 << 16;    // protocol-0 text operands and GLOBAL names
};

struct Options {
  // false: any global outside the allowlist is kRejected. true: unknown globals become opaque
  // class values and what is built from them becomes kObject (with a warning by the caller).
  bool inert = false;
  Limits limits;
};

class Pickle {
 public:
  Ref root() const { return root_; }
  // Offset just after STOP in the input (the legacy format has several pickles in a row).
  size_t end_offset() const { return end_offset_; }
  int protocol() const { return protocol_; }
  // Inert mode: the unknown classes the pickle instantiated, first-seen order ("mod.Name").
  const std::vector<std::string>& opaque_classes() const { return opaque_classes_; }
  size_t size() const { return nodes_.size(); }

  Kind kind(Ref r) const { return nodes_[r].kind; }
  bool is(Ref r, Kind k) const { return r < nodes_.size() && nodes_[r].kind == k; }
  bool bool_value(Ref r) const { return nodes_[r].flags != 0; }
  int64_t int_value(Ref r) const { return nodes_[r].i; }
  double float_value(Ref r) const { return nodes_[r].f; }
  // kStr, kBytes, kBigInt: the bytes; kGlobal: "module.name".
  std::string_view text(Ref r) const;
  bool is_bytearray(Ref r) const { return nodes_[r].kind == Kind::kBytes && nodes_[r].flags != 0; }
  bool is_ordered(Ref r) const { return nodes_[r].kind == Kind::kDict && nodes_[r].flags != 0; }
  // kTuple, kList, kSet, kFrozenSet: the items; kDict: keys and values alternating.
  std::span<const Ref> items(Ref r) const;
  // kGlobal and kCall (the callable's): which allowlisted global.
  Global global(Ref r) const { return static_cast<Global>(nodes_[r].global); }
  // kGlobal of kTypedStorage / kDType: the element type, if numprobe has it.
  std::optional<DType> global_dtype(Ref r) const;
  // kCall, kObject: the callable or class, the argument tuple, the BUILD state (kNoRef if none).
  Ref callable(Ref r) const { return Part(r, 0); }
  Ref args(Ref r) const { return Part(r, 1); }
  Ref state(Ref r) const { return Part(r, 2); }
  // kObject: a list of APPENDed items and a dict of SETITEMs (kNoRef if none), the NEWOBJ_EX
  // keyword arguments (kNoRef if none).
  Ref object_list(Ref r) const { return Part(r, 3); }
  Ref object_dict(Ref r) const { return Part(r, 4); }
  Ref object_kwargs(Ref r) const { return Part(r, 5); }
  // kPersistentId: the pickled id.
  Ref persistent_id(Ref r) const { return nodes_[r].extra; }

  // Python-like text of a small value for messages ("'storage'", "(1, 2)", "list of 3");
  // bounded in length, one line.
  std::string Describe(Ref r) const;

 private:
  friend class Machine;
  struct Node {
    Kind kind = Kind::kNone;
    uint8_t flags = 0;     // bool value, ordered dict, bytearray
    uint8_t global = 0;    // Global for kGlobal / kCall
    uint8_t dtype = 0xFF;  // kGlobal: DType or 0xFF
    uint32_t extra = 0;    // strings_ / lists_ index; kPersistentId: the id's Ref
    union {
      int64_t i = 0;
      double f;
    };
  };
  struct Str {
    std::string bytes;
    uint64_t hash = 0;
  };
  struct Items {
    std::vector<Ref> refs;
    uint64_t hash = 0;    // tuple / frozenset: of the content, when hashable
    uint32_t weight = 1;  // values inside (saturating), for dict-key comparison cost
    uint16_t depth = 1;   // nesting (saturating)
    bool hashable = false;
  };
  Ref Part(Ref r, size_t i) const;

  std::vector<Node> nodes_;
  std::vector<Str> strings_;
  std::vector<Items> lists_;
  std::vector<std::string> opaque_classes_;
  Ref root_ = kNoRef;
  size_t end_offset_ = 0;
  int protocol_ = 0;
};

// Runs the pickle in `data` up to its STOP. kCorrupt for malformed or truncated input and for
// type confusion (with the opcode and its offset); kRejected for a global outside the allowlist
// or a forbidden construct; kUnsupported for valid pickles numprobe does not read (quantized
// tensors, out-of-band buffers); kOutOfRange when a limit is hit.
Result<Pickle> Unpickle(std::span<const std::byte> data, const Options& options);

}  // namespace numprobe::pickle

#endif  // NUMPROBE_FORMATS_PICKLE_H_
