// torch.save files: the zip format (torch >= 1.6) and the legacy stream, read through the
// restricted pickle interpreter (io/pickle.h), and the zip format written the way torch.save
// writes a state_dict.
//
// Reading: the pickle is run first (it only builds values); then the value graph is walked
// without recursion, names are flattened with dots, and each tensor rebuild is checked
// (storage record size, view bounds, dtype) before a Tensor views the file's memory map.
// Storages are shared by key. Copies are made only where the bytes cannot be used in place:
// big-endian records, misaligned data, deflated records and bool bytes other than 0/1.
#include "numprobe/torch_pt.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/checked.h"
#include "core/quoted.h"
#include "core/utf8.h"
#include "formats/pickle.h"
#include "formats/zip.h"

namespace numprobe {
namespace {

using pickle::Global;
using pickle::Kind;
using pickle::Pickle;
using pickle::Ref;

constexpr size_t kMaxDims = 64;
constexpr int kMaxNesting = 1000;    // containers inside containers, as Python's recursion limit
constexpr int kMaxRebuildWraps = 8;  // Parameter(from_type(rebuild(...))) and the like
// An expanded view may have up to kMaxBroadcast times the elements of its storage (any view may
// have up to kMinBroadcastCap).
constexpr int64_t kMaxBroadcast = 1024;
constexpr int64_t kMinBroadcastCap = int64_t{1} << 24;
// CRC-32 (a mismatch is a warning): data.pkl always, storage records in the order they are read
// until this many bytes have been hashed. Small files (dumps, tests) are checked whole; big
// checkpoints are not, because hashing runs far below memory speed and would triple the time of
// `inspect`. torch.load does not check them at all (its miniz is built without CRC checks).
constexpr uint64_t kCrcBudgetBytes = uint64_t{16} << 20;
constexpr std::array<uint8_t, 10> kLegacyMagic = {0x6c, 0xfc, 0x9c, 0x46, 0xf9,
                                                  0x20, 0x6a, 0xa8, 0x50, 0x19};

std::string Quote(std::string_view s) { return detail::Quoted(s, 160); }

// A parsed storage persistent id: ('storage', type, key, location, numel[, view_metadata]).
struct StorageId {
  std::string key;
  std::optional<DType> dtype;  // nullopt: UntypedStorage (numel counts bytes)
  std::string type_name;       // "torch.FloatStorage", for messages
  std::string location;
  int64_t numel = 0;
  // Legacy view_metadata (view_key, offset, size), in elements of the storage's dtype.
  bool is_view = false;
  std::string view_key;
  int64_t view_offset = 0;
  int64_t view_size = 0;

  DType element_type() const { return dtype.value_or(DType::kU8); }
};

// Bytes of one storage record (whole, before any view is taken): in memory, or streamed (a
// deflated record left compressed, ReadOptions::stream_deflated_over; `bytes` is then empty).
struct Record {
  std::shared_ptr<const Buffer> owner;
  std::span<const std::byte> bytes;
  std::shared_ptr<const StreamedStorage> streamed;

  uint64_t size() const { return streamed ? streamed->size() : bytes.size(); }
};

// Bytes ready to be viewed as `dtype`: native order, aligned, bools 0/1 (or streamed as they
// are, native order and not bool).
struct Prepared {
  std::shared_ptr<const Buffer> owner;
  std::span<const std::byte> bytes;
  std::shared_ptr<const StreamedStorage> streamed;

  uint64_t size() const { return streamed ? streamed->size() : bytes.size(); }
  // A tensor viewing these bytes (`view.data` is set here).
  Tensor Make(TensorView view) const {
    if (streamed) return Tensor(streamed, std::move(view));
    view.data = bytes.data();
    return Tensor(owner, std::move(view));
  }
};

// Finds the record of a storage id, checking its size. Implemented by the zip and legacy readers.
using RecordFn = std::function<Result<Record>(const StorageId&)>;

class Loader {
 public:
  // `max_load_bytes` bounds a streamed record that must be loaded whole after all (a bool
  // storage, a legacy view of one).
  Loader(const Pickle& p, bool big_endian, RecordFn records, TensorFile* out,
         uint64_t max_load_bytes = 0)
      : p_(p),
        big_endian_(big_endian),
        records_(std::move(records)),
        out_(out),
        max_load_bytes_(max_load_bytes) {}

  // Walks the value graph from the root and appends every tensor found to out->tensors.
  Status Run();

 private:
  struct Frame {
    Ref node;
    std::string name;
    int depth;
  };

  Result<StorageId> ParseStorageId(Ref pid) const;
  Result<Prepared> Storage(const StorageId& id, DType dtype);
  Result<NamedTensor> Rebuild(Ref call);
  Result<NamedTensor> RebuildTensor(Global fn, Ref args);
  Result<NamedTensor> BareStorage(Ref pid);
  Result<std::vector<int64_t>> IntTuple(Ref r, std::string_view what) const;
  std::string KeyText(Ref key) const;
  Status Push(std::vector<Frame>* stack, Ref node, std::string name, int depth);
  Status Expand(const Frame& f, std::vector<Frame>* stack);
  bool IsTensorCall(Ref r) const;

  const Pickle& p_;
  bool big_endian_;
  RecordFn records_;
  TensorFile* out_;
  uint64_t max_load_bytes_;
  std::vector<bool> expanded_;
  std::unordered_map<Ref, NamedTensor> built_;  // tensors already rebuilt, by value
  std::unordered_map<std::string, Record> records_cache_;
  // Key -> (type, numel) of its first use; later uses must agree.
  std::unordered_map<std::string, std::pair<std::string, int64_t>> storage_types_;
  std::map<std::pair<std::string, int>, Prepared> prepared_;
  bool warned_bool_ = false;
};

std::string Join(const std::string& prefix, std::string_view part) {
  if (prefix.empty()) return std::string(part);
  std::string out = prefix;
  out += '.';
  out += part;
  return out;
}

bool Loader::IsTensorCall(Ref r) const {
  if (!p_.is(r, Kind::kCall)) return false;
  switch (p_.global(r)) {
    case Global::kRebuildTensorV2:
    case Global::kRebuildTensorV3:
    case Global::kRebuildParameter:
    case Global::kRebuildParameterWithState:
    case Global::kRebuildFromType:
    case Global::kParameterClass:
      return true;
    default:
      return false;
  }
}

Result<StorageId> Loader::ParseStorageId(Ref pid) const {
  auto bad = [&](std::string_view why) {
    return Status::Corrupt(fmt::format("persistent id {}: {}", p_.Describe(pid), why));
  };
  if (!p_.is(pid, Kind::kTuple)) return bad("not a tuple");
  const auto parts = p_.items(pid);
  if (parts.empty()) return bad("empty");
  const Ref tag = parts[0];
  if ((!p_.is(tag, Kind::kStr) && !p_.is(tag, Kind::kBytes)) || p_.text(tag) != "storage") {
    return bad("the first item is not 'storage'");
  }
  if (parts.size() != 5 && parts.size() != 6) return bad("needs 5 or 6 items");
  StorageId id;
  const Ref type = parts[1];
  if (!p_.is(type, Kind::kGlobal) ||
      (p_.global(type) != Global::kTypedStorage && p_.global(type) != Global::kUntypedStorage)) {
    return bad("the storage type is not a torch storage class");
  }
  id.type_name = std::string(p_.text(type));
  if (p_.global(type) == Global::kTypedStorage) id.dtype = p_.global_dtype(type);
  if (!p_.is(parts[2], Kind::kStr)) return bad("the key is not a string");
  id.key = std::string(p_.text(parts[2]));
  if (!p_.is(parts[3], Kind::kStr) && !p_.is(parts[3], Kind::kBytes)) {
    return bad("the location is not a string");
  }
  id.location = std::string(p_.text(parts[3]));
  if (!p_.is(parts[4], Kind::kInt) || p_.int_value(parts[4]) < 0) {
    return bad("the element count is not a non-negative int");
  }
  id.numel = p_.int_value(parts[4]);
  if (parts.size() == 6 && !p_.is(parts[5], Kind::kNone)) {
    const Ref view = parts[5];
    const auto v = p_.items(view);
    if (!p_.is(view, Kind::kTuple) || v.size() != 3 || !p_.is(v[0], Kind::kStr) ||
        !p_.is(v[1], Kind::kInt) || !p_.is(v[2], Kind::kInt) || p_.int_value(v[1]) < 0 ||
        p_.int_value(v[2]) < 0) {
      return bad("view metadata is not (key, offset, size)");
    }
    id.is_view = true;
    id.view_key = std::string(p_.text(v[0]));
    id.view_offset = p_.int_value(v[1]);
    id.view_size = p_.int_value(v[2]);
  }
  return id;
}

// The bytes of storage `id` as elements of `dtype`, in place where possible.
Result<Prepared> Loader::Storage(const StorageId& id, DType dtype) {
  auto seen = storage_types_.find(id.key);
  if (seen == storage_types_.end()) {
    storage_types_.emplace(id.key, std::make_pair(id.type_name, id.numel));
  } else if (seen->second.first != id.type_name || seen->second.second != id.numel) {
    return Status::Corrupt(fmt::format("storage {} is declared as both {} of {} and {} of {}",
                                       Quote(id.key), seen->second.first, seen->second.second,
                                       id.type_name, id.numel));
  }
  const std::string cache_key = id.is_view ? id.key + "/" + id.view_key : id.key;
  auto found = prepared_.find({cache_key, static_cast<int>(dtype)});
  if (found != prepared_.end()) return found->second;

  auto rec = records_cache_.find(id.key);
  if (rec == records_cache_.end()) {
    NUMPROBE_ASSIGN_OR_RETURN(Record r, records_(id));
    rec = records_cache_.emplace(id.key, std::move(r)).first;
  }
  Record record = rec->second;
  const auto item = static_cast<size_t>(ItemSize(dtype));
  if (record.streamed) {
    if (!id.is_view && dtype != DType::kBool && !(big_endian_ && item > 1)) {
      if (record.size() % item != 0) {
        return Status::Corrupt(
            fmt::format("storage {} of {} bytes is not a whole number of {} elements",
                        Quote(id.key), record.size(), Name(dtype)));
      }
      Prepared out{nullptr, {}, record.streamed};
      prepared_.emplace(std::make_pair(cache_key, static_cast<int>(dtype)), out);
      return out;
    }
    std::string warning;
    NUMPROBE_ASSIGN_OR_RETURN(std::shared_ptr<const Buffer> whole,
                              record.streamed->Load(max_load_bytes_, &warning));
    if (!warning.empty()) out_->warnings.push_back(warning);
    record = Record{whole, whole->bytes(), nullptr};
    rec->second = record;
  }
  if (id.is_view) {
    const auto unit = static_cast<uint64_t>(ItemSize(id.element_type()));
    const auto begin = CheckedMul<uint64_t>(static_cast<uint64_t>(id.view_offset), unit);
    const auto len = CheckedMul<uint64_t>(static_cast<uint64_t>(id.view_size), unit);
    if (!begin || !len || !RangeInside(*begin, *len, record.bytes.size())) {
      return Status::OutOfRange(fmt::format(
          "storage view {} (offset {}, size {}) extends past its storage {} of {} bytes",
          Quote(id.view_key), id.view_offset, id.view_size, Quote(id.key), record.bytes.size()));
    }
    record.bytes = record.bytes.subspan(*begin, *len);
  }

  if (record.bytes.size() % item != 0) {
    return Status::Corrupt(
        fmt::format("storage {} of {} bytes is not a whole number of {} elements", Quote(id.key),
                    record.bytes.size(), Name(dtype)));
  }
  const bool swap = big_endian_ && item > 1;
  bool fix_bools = false;
  if (dtype == DType::kBool) {
    fix_bools = std::any_of(record.bytes.begin(), record.bytes.end(),
                            [](std::byte b) { return std::to_integer<uint8_t>(b) > 1; });
  }
  const bool aligned = reinterpret_cast<uintptr_t>(record.bytes.data()) % item == 0;
  Prepared out{record.owner, record.bytes, nullptr};
  if (swap || fix_bools || !aligned) {
    NUMPROBE_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> copy, Buffer::CopyOf(record.bytes));
    std::byte* d = copy->mutable_data();
    if (swap) {
      // Complex numbers are two floats: swap each half.
      const size_t unit = IsComplex(dtype) ? item / 2 : item;
      for (size_t off = 0; off < copy->size(); off += unit) std::reverse(d + off, d + off + unit);
    }
    if (fix_bools) {
      for (size_t k = 0; k < copy->size(); ++k) {
        if (std::to_integer<uint8_t>(d[k]) > 1) d[k] = std::byte{1};
      }
      if (!warned_bool_) {
        out_->warnings.push_back(
            fmt::format("bool storage {} holds bytes other than 0 and 1; they were read as True",
                        Quote(id.key)));
        warned_bool_ = true;
      }
    }
    out = Prepared{copy, copy->bytes(), nullptr};
  }
  prepared_.emplace(std::make_pair(cache_key, static_cast<int>(dtype)), out);
  return out;
}

Result<std::vector<int64_t>> Loader::IntTuple(Ref r, std::string_view what) const {
  if (!p_.is(r, Kind::kTuple) && !p_.is(r, Kind::kList)) {
    return Status::Corrupt(fmt::format("tensor {} is {}, not a tuple", what, p_.Describe(r)));
  }
  const auto items = p_.items(r);
  if (items.size() > kMaxDims) {
    return Status::Unsupported(
        fmt::format("tensor with {} dims (at most {})", items.size(), kMaxDims));
  }
  std::vector<int64_t> out;
  out.reserve(items.size());
  for (Ref v : items) {
    if (!p_.is(v, Kind::kInt) || p_.int_value(v) < 0) {
      return Status::Corrupt(fmt::format("tensor {} holds {}", what, p_.Describe(v)));
    }
    out.push_back(p_.int_value(v));
  }
  return out;
}

// _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata]) and
// _rebuild_tensor_v3(..., hooks, dtype[, metadata]).
Result<NamedTensor> Loader::RebuildTensor(Global fn, Ref args) {
  const bool v3 = fn == Global::kRebuildTensorV3;
  const auto a = p_.items(args);
  const size_t base = v3 ? 7 : 6;
  const char* fn_name = v3 ? "_rebuild_tensor_v3" : "_rebuild_tensor_v2";
  if (!p_.is(args, Kind::kTuple) || (a.size() != base && a.size() != base + 1)) {
    return Status::Corrupt(fmt::format("{} needs {} or {} arguments, got {}", fn_name, base,
                                       base + 1, p_.Describe(args)));
  }
  if (!p_.is(a[0], Kind::kPersistentId)) {
    return Status::Corrupt(fmt::format("{}: the storage is {}", fn_name, p_.Describe(a[0])));
  }
  NUMPROBE_ASSIGN_OR_RETURN(StorageId id, ParseStorageId(p_.persistent_id(a[0])));
  if (!p_.is(a[1], Kind::kInt) || p_.int_value(a[1]) < 0) {
    return Status::Corrupt(fmt::format("{}: storage offset is {}", fn_name, p_.Describe(a[1])));
  }
  const int64_t offset = p_.int_value(a[1]);
  NUMPROBE_ASSIGN_OR_RETURN(std::vector<int64_t> shape, IntTuple(a[2], "size"));
  NUMPROBE_ASSIGN_OR_RETURN(std::vector<int64_t> strides, IntTuple(a[3], "stride"));
  if (!p_.is(a[4], Kind::kBool) && !p_.is(a[4], Kind::kInt)) {
    return Status::Corrupt(fmt::format("{}: requires_grad is {}", fn_name, p_.Describe(a[4])));
  }
  if (!p_.is(a[5], Kind::kDict) && !p_.is(a[5], Kind::kNone)) {
    return Status::Corrupt(fmt::format("{}: backward hooks are {}", fn_name, p_.Describe(a[5])));
  }
  std::optional<DType> dtype;
  if (v3) {
    const Ref d = a[6];
    if (!p_.is(d, Kind::kGlobal) || p_.global(d) != Global::kDType) {
      return Status::Corrupt(fmt::format("{}: dtype is {}", fn_name, p_.Describe(d)));
    }
    dtype = p_.global_dtype(d);
    if (!dtype) {
      return Status::Unsupported(fmt::format("dtype {} is not supported", p_.text(d)));
    }
    if (id.dtype && *id.dtype != *dtype) {
      return Status::Corrupt(
          fmt::format("{} tensor on a {}", TorchDTypeString(*dtype), id.type_name));
    }
  } else {
    dtype = id.element_type();
  }
  if (a.size() == base + 1) {
    const Ref meta = a[base];
    if (!p_.is(meta, Kind::kDict) && !p_.is(meta, Kind::kNone)) {
      return Status::Corrupt(fmt::format("{}: metadata is {}", fn_name, p_.Describe(meta)));
    }
    const auto kv = p_.items(meta);
    for (size_t i = 0; i + 1 < kv.size(); i += 2) {
      const Ref v = kv[i + 1];
      const bool set = (p_.is(v, Kind::kBool) && p_.bool_value(v)) ||
                       (p_.is(v, Kind::kInt) && p_.int_value(v) != 0);
      const bool unset = (p_.is(v, Kind::kBool) && !p_.bool_value(v)) ||
                         (p_.is(v, Kind::kInt) && p_.int_value(v) == 0) || p_.is(v, Kind::kNone);
      if (unset) continue;
      const std::string key = KeyText(kv[i]);
      if (set && key == "conj") {
        return Status::Unsupported("tensor with the conjugate bit set (metadata 'conj')");
      }
      if (set && key == "neg") {
        return Status::Unsupported("tensor with the negative bit set (metadata 'neg')");
      }
      return Status::Unsupported(fmt::format("tensor metadata {} is not supported", Quote(key)));
    }
  }
  // A typed storage's numel counts its elements; an UntypedStorage's counts bytes.
  NUMPROBE_ASSIGN_OR_RETURN(Prepared storage, Storage(id, *dtype));
  const auto byte_offset = CheckedMul<int64_t>(offset, ItemSize(*dtype));
  if (!byte_offset) return Status::OutOfRange("storage offset overflows 64 bits");
  Status valid = ValidateView(*dtype, shape, strides, *byte_offset, storage.size());
  if (!valid.ok()) return valid.WithContext(fmt::format("view of storage {}", Quote(id.key)));
  // Stride-0 (expanded) views may hold more elements than their storage, but not without bound:
  // a few bytes must not become a tensor that takes hours to scan.
  const int64_t numel = *CheckedNumel(shape);
  const auto storage_elems =
      static_cast<int64_t>(storage.size() / static_cast<size_t>(ItemSize(*dtype)));
  if (numel > kMinBroadcastCap && numel / kMaxBroadcast > storage_elems) {
    return Status::OutOfRange(fmt::format(
        "view of storage {} has {} elements over {} stored ones (more than {}x broadcast)",
        Quote(id.key), numel, storage_elems, kMaxBroadcast));
  }
  TensorView view;
  view.dtype = *dtype;
  view.shape = std::move(shape);
  view.strides = std::move(strides);
  view.byte_offset = *byte_offset;
  NamedTensor t;
  t.tensor = storage.Make(std::move(view));
  t.device = id.location;
  return t;
}

// A tensor-producing call: the rebuild functions and the wrappers around them.
Result<NamedTensor> Loader::Rebuild(Ref call) {
  auto cached = built_.find(call);
  if (cached != built_.end()) return cached->second;
  Global fn = p_.global(call);
  Ref args = p_.args(call);
  for (int wraps = 0; wraps <= kMaxRebuildWraps; ++wraps) {
    const auto a = p_.items(args);
    switch (fn) {
      case Global::kRebuildTensorV2:
      case Global::kRebuildTensorV3: {
        NUMPROBE_ASSIGN_OR_RETURN(NamedTensor t, RebuildTensor(fn, args));
        built_.emplace(call, t);
        return t;
      }
      case Global::kRebuildParameter:
      case Global::kRebuildParameterWithState:
      case Global::kParameterClass: {
        // (data, requires_grad, hooks[, state]) or Parameter(data[, requires_grad]).
        if (a.empty() || !IsTensorCall(a[0])) {
          return Status::Corrupt(
              fmt::format("Parameter data is {}", p_.Describe(a.empty() ? pickle::kNoRef : a[0])));
        }
        fn = p_.global(a[0]);
        args = p_.args(a[0]);
        continue;
      }
      case Global::kRebuildFromType: {
        // (func, new_type, args, state): only plain Tensor/Parameter without Python state.
        if (a.size() != 4 || !p_.is(a[0], Kind::kGlobal) || !p_.is(a[1], Kind::kGlobal) ||
            !p_.is(a[2], Kind::kTuple)) {
          return Status::Corrupt(
              fmt::format("_rebuild_from_type arguments are {}", p_.Describe(args)));
        }
        const Global type = p_.global(a[1]);
        if (type != Global::kTensorClass && type != Global::kParameterClass) {
          return Status::Unsupported(fmt::format("tensor subclass {}", Quote(p_.text(a[1]))));
        }
        const Ref state = a[3];
        if (!p_.is(state, Kind::kNone) && !(p_.is(state, Kind::kDict) && p_.items(state).empty())) {
          return Status::Unsupported("tensor with Python attributes (_rebuild_from_type state)");
        }
        fn = p_.global(a[0]);
        args = a[2];
        if (fn != Global::kRebuildTensorV2 && fn != Global::kRebuildTensorV3) {
          return Status::Unsupported(fmt::format("_rebuild_from_type of {}", Quote(p_.text(a[0]))));
        }
        continue;
      }
      default:
        return Status::Internal("not a tensor rebuild");
    }
  }
  return Status::Unsupported("tensor rebuilds nested too deeply");
}

// A storage saved on its own (torch.save(t.untyped_storage())): a 1-D tensor of its elements.
Result<NamedTensor> Loader::BareStorage(Ref pid) {
  NUMPROBE_ASSIGN_OR_RETURN(StorageId id, ParseStorageId(pid));
  const DType dtype = id.element_type();
  NUMPROBE_ASSIGN_OR_RETURN(Prepared storage, Storage(id, dtype));
  const auto numel = static_cast<int64_t>(storage.size() / static_cast<size_t>(ItemSize(dtype)));
  NamedTensor t;
  t.tensor = storage.Make(TensorView::Contiguous(nullptr, dtype, {numel}));
  t.device = id.location;
  return t;
}

// The name part of a dict key: str as is, numbers and constants as Python prints them.
std::string Loader::KeyText(Ref key) const {
  switch (p_.kind(key)) {
    case Kind::kStr:
      return std::string(p_.text(key));
    case Kind::kTuple: {
      std::string out = "(";
      const auto items = p_.items(key);
      for (size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += ", ";
        out += p_.is(items[i], Kind::kStr) ? fmt::format("'{}'", p_.text(items[i]))
                                           : p_.Describe(items[i]);
      }
      return out + (items.size() == 1 ? ",)" : ")");
    }
    default:
      return p_.Describe(key);
  }
}

Status Loader::Push(std::vector<Frame>* stack, Ref node, std::string name, int depth) {
  if (depth > kMaxNesting) {
    return Status::OutOfRange(
        fmt::format("containers nested deeper than {} levels at {}", kMaxNesting, Quote(name)));
  }
  stack->push_back({node, std::move(name), depth});
  return Status::Ok();
}

// Pushes the children of a container or object (in reverse, so that they pop in order).
Status Loader::Expand(const Frame& f, std::vector<Frame>* stack) {
  std::vector<std::pair<Ref, std::string>> children;
  auto add_dict = [&](Ref dict, const std::string& prefix) {
    const auto kv = p_.items(dict);
    for (size_t i = 0; i + 1 < kv.size(); i += 2)
      children.emplace_back(kv[i + 1], Join(prefix, KeyText(kv[i])));
  };
  auto add_seq = [&](Ref seq, const std::string& prefix) {
    const auto items = p_.items(seq);
    for (size_t i = 0; i < items.size(); ++i)
      children.emplace_back(items[i], Join(prefix, std::to_string(i)));
  };
  switch (p_.kind(f.node)) {
    case Kind::kDict:
      add_dict(f.node, f.name);
      break;
    case Kind::kList:
    case Kind::kTuple:
    case Kind::kSet:
    case Kind::kFrozenSet:
      add_seq(f.node, f.name);
      break;
    case Kind::kObject: {
      // An opaque object: its state, then what was appended or set on it, then its arguments.
      // An nn.Module's state is flattened as state_dict() names it: parameters and buffers by
      // name, submodules recursively, bookkeeping attributes (leading "_") skipped.
      Ref state = p_.state(f.node);
      if (p_.is(state, Kind::kTuple) && !p_.items(state).empty()) {
        for (Ref part : p_.items(state)) {
          if (p_.is(part, Kind::kDict)) children.emplace_back(part, f.name);
        }
        state = pickle::kNoRef;
      }
      if (state != pickle::kNoRef && p_.is(state, Kind::kDict)) {
        const auto kv = p_.items(state);
        bool is_module = false;
        for (size_t i = 0; i + 1 < kv.size(); i += 2) {
          if (!p_.is(kv[i], Kind::kStr)) continue;
          const std::string_view key = p_.text(kv[i]);
          is_module |= key == "_parameters" || key == "_buffers" || key == "_modules";
        }
        for (size_t i = 0; i + 1 < kv.size(); i += 2) {
          const std::string key = KeyText(kv[i]);
          if (is_module) {
            if (key == "_parameters" || key == "_buffers" || key == "_modules") {
              if (p_.is(kv[i + 1], Kind::kDict)) add_dict(kv[i + 1], f.name);
              continue;
            }
            if (!key.empty() && key[0] == '_') continue;
          }
          children.emplace_back(kv[i + 1], Join(f.name, key));
        }
      } else if (state != pickle::kNoRef) {
        children.emplace_back(state, f.name);
      }
      if (p_.object_list(f.node) != pickle::kNoRef) add_seq(p_.object_list(f.node), f.name);
      if (p_.object_dict(f.node) != pickle::kNoRef) add_dict(p_.object_dict(f.node), f.name);
      if (p_.object_kwargs(f.node) != pickle::kNoRef) add_dict(p_.object_kwargs(f.node), f.name);
      if (p_.args(f.node) != pickle::kNoRef) add_seq(p_.args(f.node), f.name);
      break;
    }
    default:
      break;
  }
  for (auto it = children.rbegin(); it != children.rend(); ++it) {
    NUMPROBE_RETURN_IF_ERROR(Push(stack, it->first, std::move(it->second), f.depth + 1));
  }
  return Status::Ok();
}

Status Loader::Run() {
  // Each container is expanded once (the first path that reaches it names it), so the walk is
  // linear in the size of the graph even when containers are shared or form cycles. A tensor
  // reached by several paths is listed under each name (tied weights).
  expanded_.assign(p_.size(), false);
  std::vector<Frame> stack;
  stack.push_back({p_.root(), "", 0});
  while (!stack.empty()) {
    Frame f = std::move(stack.back());
    stack.pop_back();
    const Kind k = p_.kind(f.node);
    if (IsTensorCall(f.node)) {
      auto t = Rebuild(f.node);
      if (!t)
        return t.error().WithContext(f.name.empty() ? "tensor"
                                                    : fmt::format("tensor {}", Quote(f.name)));
      t->name = f.name;
      out_->tensors.push_back(std::move(*t));
      continue;
    }
    if (k == Kind::kPersistentId) {
      const Ref pid = p_.persistent_id(f.node);
      const auto parts = p_.items(pid);
      // Legacy whole-model saves also record module classes: ('module', cls, file, source).
      if (!parts.empty() && p_.is(parts[0], Kind::kStr) && p_.text(parts[0]) == "module") continue;
      auto t = BareStorage(pid);
      if (!t)
        return t.error().WithContext(f.name.empty() ? "storage"
                                                    : fmt::format("storage {}", Quote(f.name)));
      t->name = f.name;
      out_->tensors.push_back(std::move(*t));
      continue;
    }
    const bool container = k == Kind::kDict || k == Kind::kList || k == Kind::kTuple ||
                           k == Kind::kSet || k == Kind::kFrozenSet || k == Kind::kObject;
    if (!container || expanded_[f.node]) continue;
    expanded_[f.node] = true;
    NUMPROBE_RETURN_IF_ERROR(Expand(f, &stack));
  }
  return Status::Ok();
}

pickle::Options PickleOptions(const ReadOptions& options) {
  pickle::Options o;
  o.inert = options.inert_pickle;
  return o;
}

void WarnOpaque(const Pickle& p, TensorFile* out) {
  const auto& classes = p.opaque_classes();
  if (classes.empty()) return;
  std::string list;
  for (size_t i = 0; i < classes.size() && i < 12; ++i) list += (i != 0 ? ", " : "") + classes[i];
  if (classes.size() > 12) list += fmt::format(" and {} more", classes.size() - 12);
  out->warnings.push_back(
      fmt::format("inert pickle: objects of {} class{} were kept opaque (not constructed): {}",
                  classes.size(), classes.size() == 1 ? "" : "es", list));
}

// ---------------------------------------------------------------------------------------------
// Zip format

Result<TensorFile> ReadZip(std::shared_ptr<const Buffer> file, const ReadOptions& options) {
  ZipLimits limits;
  limits.max_inflated_bytes = options.max_inflated_bytes;
  NUMPROBE_ASSIGN_OR_RETURN(ZipArchive archive, ZipArchive::Open(std::move(file), limits));
  const auto& entries = archive.entries();
  if (entries.empty()) return Status::Corrupt("zip archive has no entries");
  // The archive prefix is what precedes the first '/' of the first central-directory entry.
  const std::string& first = entries.front().name;
  const size_t slash = first.find('/');
  if (slash == std::string::npos || slash == 0) {
    return Status::Corrupt(fmt::format("first zip entry {} has no archive folder", Quote(first)));
  }
  const std::string prefix = first.substr(0, slash);
  std::unordered_map<std::string_view, const ZipEntry*> by_name;
  for (const ZipEntry& e : entries) by_name.emplace(e.name, &e);
  auto find = [&](const std::string& name) -> const ZipEntry* {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : it->second;
  };
  TensorFile out;
  uint64_t crc_budget = options.check_crc ? kCrcBudgetBytes : 0;
  auto check_crc = [&](const ZipEntry& e, std::span<const std::byte> bytes) {
    if (bytes.size() > crc_budget) {
      crc_budget = 0;  // the first record over budget ends checking, so what is checked is a prefix
      return;
    }
    crc_budget -= bytes.size();
    if (!ZipArchive::CrcMatches(e, bytes)) {
      out.warnings.push_back(fmt::format("CRC-32 mismatch in zip entry {}", Quote(e.name)));
    }
  };

  const ZipEntry* pkl = find(prefix + "/data.pkl");
  if (pkl == nullptr) {
    if (find(prefix + "/constants.pkl") != nullptr || find(prefix + "/code/") != nullptr) {
      return Status::Unsupported("TorchScript archives (torch.jit.save) are not read");
    }
    return Status::Corrupt(fmt::format("zip has no {}", Quote(prefix + "/data.pkl")));
  }
  if (pkl->uncompressed_size > options.max_header_bytes) {
    return Status::OutOfRange(fmt::format("{} of {} bytes exceeds the limit of {}",
                                          Quote(pkl->name), pkl->uncompressed_size,
                                          options.max_header_bytes));
  }
  NUMPROBE_ASSIGN_OR_RETURN(ZipData pkl_data, archive.Read(*pkl));
  if (!ZipArchive::CrcMatches(*pkl, pkl_data.bytes)) {
    out.warnings.push_back(fmt::format("CRC-32 mismatch in zip entry {}", Quote(pkl->name)));
  }

  bool big_endian = false;
  if (const ZipEntry* bo = find(prefix + "/byteorder")) {
    if (bo->uncompressed_size > 16) return Status::Corrupt("byteorder record is too long");
    NUMPROBE_ASSIGN_OR_RETURN(ZipData d, archive.Read(*bo));
    const std::string_view text(reinterpret_cast<const char*>(d.bytes.data()), d.bytes.size());
    if (text == "big") {
      big_endian = true;
    } else if (text != "little") {
      return Status::Corrupt(fmt::format("byteorder record says {}", Quote(text)));
    }
  }

  auto pickled = pickle::Unpickle(pkl_data.bytes, PickleOptions(options));
  if (!pickled) return pickled.error().WithContext(pkl->name);
  const Pickle& p = *pickled;

  RecordFn records = [&](const StorageId& id) -> Result<Record> {
    const std::string name = prefix + "/data/" + id.key;
    const ZipEntry* e = find(name);
    if (e == nullptr) {
      return Status::Corrupt(
          fmt::format("storage {} has no record {}", Quote(id.key), Quote(name)));
    }
    const auto nbytes = CheckedMul<uint64_t>(static_cast<uint64_t>(id.numel),
                                             static_cast<uint64_t>(ItemSize(id.element_type())));
    if (!nbytes || *nbytes != e->uncompressed_size) {
      return Status::Corrupt(
          fmt::format("storage {} ({}, {} elements) does not match record {} of {} bytes",
                      Quote(id.key), id.type_name, id.numel, Quote(name), e->uncompressed_size));
    }
    if (options.stream_deflated_over > 0 && e->method == 8 &&
        e->uncompressed_size > options.stream_deflated_over) {
      // Left compressed: read in passes by whoever uses it, its CRC checked at each pass's end.
      NUMPROBE_ASSIGN_OR_RETURN(std::shared_ptr<const StreamedStorage> streamed,
                                archive.Streamed(*e));
      return Record{nullptr, {}, std::move(streamed)};
    }
    NUMPROBE_ASSIGN_OR_RETURN(ZipData d, archive.Read(*e));
    check_crc(*e, d.bytes);
    return Record{d.owner, d.bytes, nullptr};
  };
  Loader loader(p, big_endian, records, &out, options.max_inflated_bytes);
  NUMPROBE_RETURN_IF_ERROR(loader.Run());
  WarnOpaque(p, &out);
  out.metadata.emplace_back("torch.save format", "zip");
  out.metadata.emplace_back("archive folder", prefix);
  out.metadata.emplace_back("pickle protocol", std::to_string(p.protocol()));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Legacy stream: magic, protocol version, sys_info, the object, the sorted storage keys, then
// per key an i64 LE element count and the elements.

Result<TensorFile> ReadLegacy(const std::shared_ptr<const Buffer>& file,
                              const ReadOptions& options) {
  const std::span<const std::byte> bytes = file->bytes();
  size_t pos = 0;
  const pickle::Options popt = PickleOptions(options);
  auto next = [&](std::string_view what) -> Result<Pickle> {
    const size_t len =
        static_cast<size_t>(std::min<uint64_t>(bytes.size() - pos, options.max_header_bytes));
    auto r = pickle::Unpickle(bytes.subspan(pos, len), popt);
    if (!r) return r.error().WithContext(fmt::format("{} pickle at offset {}", what, pos));
    pos += r->end_offset();
    return r;
  };
  auto first = next("magic number");
  if (!first) {
    return Status::Corrupt("not a torch.save file: the legacy magic number is missing (" +
                           first.error().message() + ")");
  }
  const Pickle& magic = *first;
  if (!magic.is(magic.root(), Kind::kBigInt) ||
      magic.text(magic.root()) !=
          std::string_view(reinterpret_cast<const char*>(kLegacyMagic.data()),
                           kLegacyMagic.size())) {
    return Status::Corrupt("not a torch.save file: the legacy magic number is missing");
  }
  NUMPROBE_ASSIGN_OR_RETURN(Pickle version, next("protocol version"));
  if (!version.is(version.root(), Kind::kInt) || version.int_value(version.root()) != 1001) {
    return Status::Unsupported(fmt::format("legacy torch.save protocol version {} (only 1001)",
                                           version.Describe(version.root())));
  }
  NUMPROBE_ASSIGN_OR_RETURN(Pickle sys_info, next("sys_info"));
  bool little_endian = true;
  if (!sys_info.is(sys_info.root(), Kind::kDict)) return Status::Corrupt("sys_info is not a dict");
  {
    const auto kv = sys_info.items(sys_info.root());
    for (size_t i = 0; i + 1 < kv.size(); i += 2) {
      if (sys_info.is(kv[i], Kind::kStr) && sys_info.text(kv[i]) == "little_endian") {
        if (!sys_info.is(kv[i + 1], Kind::kBool)) {
          return Status::Corrupt("sys_info little_endian is not a bool");
        }
        little_endian = sys_info.bool_value(kv[i + 1]);
      }
    }
  }
  NUMPROBE_ASSIGN_OR_RETURN(Pickle object, next("object"));
  NUMPROBE_ASSIGN_OR_RETURN(Pickle keys, next("storage keys"));
  if (!keys.is(keys.root(), Kind::kList)) return Status::Corrupt("storage key list is not a list");

  // Every storage the object refers to, by root key: its dtype and element count.
  TensorFile out;
  std::unordered_map<std::string, StorageId> ids;
  for (Ref r = 0; r < object.size(); ++r) {
    if (!object.is(r, Kind::kPersistentId)) continue;
    const Ref pid = object.persistent_id(r);
    const auto parts = object.items(pid);
    if (!parts.empty() && object.is(parts[0], Kind::kStr) && object.text(parts[0]) == "module") {
      continue;
    }
    // Validated again when used; here only the root's type and size matter.
    auto bad = [&](std::string_view why) {
      return Status::Corrupt(fmt::format("persistent id {}: {}", object.Describe(pid), why));
    };
    if (!object.is(pid, Kind::kTuple) || parts.size() != 6 || !object.is(parts[2], Kind::kStr) ||
        !object.is(parts[4], Kind::kInt) || !object.is(parts[1], Kind::kGlobal)) {
      return bad("not ('storage', type, key, location, numel, view)");
    }
    StorageId id;
    id.key = std::string(object.text(parts[2]));
    id.type_name = std::string(object.text(parts[1]));
    if (object.global(parts[1]) == Global::kTypedStorage) {
      id.dtype = object.global_dtype(parts[1]);
    } else if (object.global(parts[1]) != Global::kUntypedStorage) {
      return bad("the storage type is not a torch storage class");
    }
    id.numel = object.int_value(parts[4]);
    if (id.numel < 0) return bad("negative element count");
    auto [it, inserted] = ids.emplace(id.key, id);
    if (!inserted && (it->second.numel != id.numel || it->second.type_name != id.type_name)) {
      return Status::Corrupt(
          fmt::format("storage {} is declared with different types or sizes", Quote(id.key)));
    }
  }

  std::unordered_map<std::string, Record> data;
  for (Ref k : keys.items(keys.root())) {
    if (!keys.is(k, Kind::kStr)) return Status::Corrupt("storage key list holds a non-string");
    const std::string key(keys.text(k));
    auto id = ids.find(key);
    if (id == ids.end()) {
      return Status::Corrupt(fmt::format("storage key {} is not used by the object", Quote(key)));
    }
    if (data.count(key) != 0)
      return Status::Corrupt(fmt::format("storage key {} is listed twice", Quote(key)));
    if (bytes.size() - pos < 8) {
      return Status::Corrupt(
          fmt::format("storage {} truncated: no element count at offset {}", Quote(key), pos));
    }
    uint64_t count = 0;
    for (int b = 0; b < 8; ++b)
      count |= static_cast<uint64_t>(std::to_integer<uint8_t>(bytes[pos + b])) << (8 * b);
    pos += 8;
    if (static_cast<int64_t>(count) != id->second.numel) {
      return Status::Corrupt(
          fmt::format("storage {} record says {} elements but the pickle declares {}", Quote(key),
                      static_cast<int64_t>(count), id->second.numel));
    }
    const auto nbytes =
        CheckedMul<uint64_t>(count, static_cast<uint64_t>(ItemSize(id->second.element_type())));
    if (!nbytes || *nbytes > bytes.size() - pos) {
      return Status::Corrupt(fmt::format(
          "storage {} of {} elements extends past the end of the file", Quote(key), count));
    }
    data.emplace(key, Record{file, bytes.subspan(pos, static_cast<size_t>(*nbytes)), nullptr});
    pos += static_cast<size_t>(*nbytes);
  }

  RecordFn records = [&](const StorageId& id) -> Result<Record> {
    auto it = data.find(id.key);
    if (it == data.end())
      return Status::Corrupt(fmt::format("storage {} has no data", Quote(id.key)));
    return it->second;
  };
  Loader loader(object, !little_endian, records, &out);
  NUMPROBE_RETURN_IF_ERROR(loader.Run());
  WarnOpaque(object, &out);
  out.metadata.emplace_back("torch.save format", "legacy");
  out.metadata.emplace_back("pickle protocol", std::to_string(object.protocol()));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Writer: a protocol-2 pickle as torch.save emits it.

class PickleWriter {
 public:
  std::string Take() { return std::move(out_); }
  void Op(uint8_t op) { out_ += static_cast<char>(op); }
  void Le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_ += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  void Int(int64_t v) {
    if (v >= 0 && v < 256) {
      Op('K');
      Le(static_cast<uint64_t>(v), 1);
    } else if (v >= 0 && v < 65536) {
      Op('M');
      Le(static_cast<uint64_t>(v), 2);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      Op('J');
      Le(static_cast<uint64_t>(v), 4);
    } else {
      // LONG1 with the fewest two's-complement bytes.
      int n = 8;
      while (n > 1) {
        const int64_t shifted = v >> (8 * (n - 1) - 1);
        if (shifted != 0 && shifted != -1) break;
        --n;
      }
      Op(0x8a);
      Le(static_cast<uint64_t>(n), 1);
      Le(static_cast<uint64_t>(v), n);
    }
  }
  void Str(std::string_view s) {
    Op('X');
    Le(s.size(), 4);
    out_ += s;
  }
  // GLOBAL, memoized like CPython does (the second use is a BINGET).
  void Global(const std::string& module, const std::string& name) {
    const std::string key = module + "\n" + name;
    auto it = memo_.find(key);
    if (it != memo_.end()) {
      Get(it->second);
      return;
    }
    Op('c');
    out_ += module + "\n" + name + "\n";
    const uint32_t index = next_memo_++;
    Put(index);
    memo_.emplace(key, index);
  }
  void Tuple(const std::vector<int64_t>& v) {
    if (v.empty()) {
      Op(')');
      return;
    }
    if (v.size() > 3) Op('(');
    for (int64_t x : v) Int(x);
    Op(v.size() == 1 ? 0x85 : v.size() == 2 ? 0x86 : v.size() == 3 ? 0x87 : 't');
  }

 private:
  void Put(uint32_t index) {
    if (index < 256) {
      Op('q');
      Le(index, 1);
    } else {
      Op('r');
      Le(index, 4);
    }
  }
  void Get(uint32_t index) {
    if (index < 256) {
      Op('h');
      Le(index, 1);
    } else {
      Op('j');
      Le(index, 4);
    }
  }
  std::string out_;
  std::map<std::string, uint32_t> memo_;
  uint32_t next_memo_ = 0;
};

// Torch 1.13 has a storage class for these; newer dtypes are written as torch >= 2.1 does
// (_rebuild_tensor_v3 on an UntypedStorage).
void WriteTensor(PickleWriter& w, const TensorView& v, const std::string& key) {
  const DTypeTraits& t = Traits(v.dtype);
  const bool legacy_type = !t.torch_storage.empty();
  w.Global("torch._utils", legacy_type ? "_rebuild_tensor_v2" : "_rebuild_tensor_v3");
  w.Op('(');
  w.Op('(');
  w.Str("storage");
  if (legacy_type) {
    w.Global("torch", std::string(t.torch_storage) + "Storage");
  } else {
    w.Global("torch", "UntypedStorage");
  }
  w.Str(key);
  w.Str("cpu");
  w.Int(legacy_type ? v.numel() : v.numel() * ItemSize(v.dtype));
  w.Op('t');
  w.Op('Q');  // BINPERSID
  w.Int(0);
  w.Tuple(v.shape);
  w.Tuple(ContiguousStrides(v.shape));
  w.Op(0x89);  // requires_grad=False
  w.Global("collections", "OrderedDict");
  w.Op(')');
  w.Op('R');
  if (!legacy_type) w.Global("torch", std::string(t.torch_name));
  w.Op('t');
  w.Op('R');
}

}  // namespace

Result<TensorFile> ReadTorch(std::shared_ptr<const Buffer> file, const ReadOptions& options) {
  if (!file) return Status::InvalidArgument("no buffer");
  const std::span<const std::byte> b = file->bytes();
  auto starts = [&](std::string_view magic, size_t at = 0) {
    return b.size() >= at + magic.size() &&
           std::memcmp(b.data() + at, magic.data(), magic.size()) == 0;
  };
  Result<TensorFile> out = Status::Corrupt("unreachable");
  if (starts("PK\x03\x04") || starts("PK\x05\x06")) {
    out = ReadZip(std::move(file), options);
  } else if (starts("ustar", 257)) {
    return Status::Unsupported("the tar format of torch.save before 0.4 is not read");
  } else if (!b.empty() && std::to_integer<uint8_t>(b[0]) == 0x80) {
    out = ReadLegacy(file, options);
  } else {
    return Status::Corrupt(
        "not a torch.save file (neither a zip archive nor a legacy pickle stream)");
  }
  if (out) out->format = FileFormat::kTorch;
  return out;
}

Status WriteTorch(const std::filesystem::path& path, std::span<const NamedView> tensors,
                  FileSync sync) {
  const bool bare = tensors.size() == 1 && tensors[0].name.empty();
  std::unordered_set<std::string_view> names;
  for (const NamedView& t : tensors) {
    if (!bare && t.name.empty()) return Status::InvalidArgument("tensor with an empty name");
    // Names are pickled as str, which torch.load (and numprobe's reader) decode with Python's
    // "surrogatepass" rule: anything else could be written but not read back.
    if (!detail::IsValidUtf8(t.name, detail::Utf8Rule::kSurrogatePass))
      return Status::InvalidArgument(fmt::format("tensor name {} is not UTF-8", Quote(t.name)));
    if (!names.insert(t.name).second)
      return Status::InvalidArgument(fmt::format("duplicate tensor name {}", Quote(t.name)));
    const TensorView& v = t.view;
    if (v.shape.size() != v.strides.size() || !CheckedNumel(v.shape) ||
        std::any_of(v.strides.begin(), v.strides.end(), [](int64_t s) { return s < 0; })) {
      return Status::InvalidArgument(
          fmt::format("tensor {} has an invalid shape or strides", Quote(t.name)));
    }
    if (v.data == nullptr && v.numel() > 0) {
      return Status::InvalidArgument(fmt::format("tensor {} has no data", Quote(t.name)));
    }
  }
  // torch names the archive folder after the file (a buffer save uses "archive").
  std::string prefix = path.stem().string();
  const bool simple = !prefix.empty() && std::all_of(prefix.begin(), prefix.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
  });
  if (!simple || prefix == "." || prefix == "..") prefix = "archive";

  // Non-contiguous views are copied into contiguous ones first.
  std::vector<Tensor> copies;
  std::vector<TensorView> views;
  for (const NamedView& t : tensors) {
    if (t.view.is_contiguous()) {
      views.push_back(t.view);
    } else {
      NUMPROBE_ASSIGN_OR_RETURN(Tensor c, Tensor::CopyOf(t.view));
      views.push_back(c.view());
      copies.push_back(std::move(c));
    }
  }

  PickleWriter w;
  w.Op(0x80);
  w.Le(2, 1);
  if (bare) {
    WriteTensor(w, views[0], "0");
  } else {
    w.Global("collections", "OrderedDict");
    w.Op(')');
    w.Op('R');
    for (size_t i = 0; i < views.size(); i += 1000) {  // SETITEMS batches, as CPython writes them
      w.Op('(');
      for (size_t j = i; j < std::min(views.size(), i + 1000); ++j) {
        w.Str(tensors[j].name);
        WriteTensor(w, views[j], std::to_string(j));
      }
      w.Op('u');
    }
  }
  w.Op('.');
  const std::string pkl = w.Take();

  NUMPROBE_ASSIGN_OR_RETURN(ZipWriter zip, ZipWriter::Create(path, sync));
  NUMPROBE_RETURN_IF_ERROR(zip.AddStored(prefix + "/data.pkl", std::as_bytes(std::span(pkl)), 64));
  static constexpr std::string_view kLittle = "little";
  NUMPROBE_RETURN_IF_ERROR(
      zip.AddStored(prefix + "/byteorder", std::as_bytes(std::span(kLittle)), 64));
  for (size_t i = 0; i < views.size(); ++i) {
    const TensorView& v = views[i];
    const auto nbytes = static_cast<size_t>(v.numel() * ItemSize(v.dtype));
    const std::span<const std::byte> data(nbytes == 0 ? nullptr : v.first(), nbytes);
    NUMPROBE_RETURN_IF_ERROR(zip.AddStored(prefix + "/data/" + std::to_string(i), data, 64));
  }
  static constexpr std::string_view kVersion = "3\n";
  NUMPROBE_RETURN_IF_ERROR(
      zip.AddStored(prefix + "/version", std::as_bytes(std::span(kVersion)), 64));
  return zip.Finish();
}

}  // namespace numprobe
