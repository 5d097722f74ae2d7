// safetensors reader and writer (include/numprobe/safetensors.h).
//
// Layout: u64 LE header length N, N bytes of UTF-8 JSON, then the data buffer; data_offsets are
// relative to the start of the buffer (file offset 8 + N). The reader applies every rule of the
// reference implementation (huggingface/safetensors safetensors/src/tensor.rs) plus the rules the
// reference states but serde does not enforce (no duplicate keys, dims <= 2^48-1).
//
// The JSON header is parsed with SAX events (core/json.h) rather than into a DOM: the handler
// checks the schema as values arrive and stops at the first problem (so nesting, and rapidjson's
// recursion, never goes past kMaxHeaderDepth), memory grows with the entries kept rather than with
// the size of the JSON, and duplicate keys are seen as they arrive (serde keeps the last one
// silently; a file that two readers would read differently is refused here).
#include "numprobe/safetensors.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>

#include "core/atomic_file.h"
#include "core/checked.h"
#include "core/json.h"
#include "core/json_writer.h"
#include "core/utf8.h"
#include "formats/safetensors_internal.h"

namespace numprobe {
namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian and is viewed in place");

constexpr uint64_t kLengthFieldBytes = 8;
constexpr uint64_t kMaxHeaderBytes = 100'000'000;      // the reference's MAX_HEADER_SIZE
constexpr uint64_t kMaxDim = (uint64_t{1} << 48) - 1;  // docs/safetensors.schema.json
// numprobe's own cap (the reference has none): more dims than any real tensor, and it bounds the
// shape and stride vectors a hostile header can make us allocate.
constexpr size_t kMaxDims = 64;
// serde_json's recursion limit: the reference refuses deeper headers, and so do we.
constexpr int kMaxHeaderDepth = 128;
constexpr std::string_view kMetadataName = "__metadata__";

// Every dtype name of the safetensors spec with its size in bits, in the reference enum's order
// (increasing alignment). The writer sorts by this order, descending, as the reference does.
struct SpecDType {
  std::string_view name;
  int bits;
};
constexpr SpecDType kSpecDTypes[] = {
    {"BOOL", 8},        {"F4", 4},      {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"U8", 8},
    {"I8", 8},          {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8},
    {"F8_E5M2FNUZ", 8}, {"I16", 16},    {"U16", 16},    {"F16", 16},    {"BF16", 16},
    {"I32", 32},        {"U32", 32},    {"F32", 32},    {"C64", 64},    {"F64", 64},
    {"I64", 64},        {"U64", 64},
};

// Index of `name` in kSpecDTypes, or nullopt for a name the spec does not define.
std::optional<int> SpecRank(std::string_view name) {
  for (int i = 0; i < static_cast<int>(std::size(kSpecDTypes)); ++i) {
    if (kSpecDTypes[i].name == name) return i;
  }
  return std::nullopt;
}

// 'name' for messages: control characters escaped (messages stay on one line) and long names cut
// at a UTF-8 character boundary.
std::string Quote(std::string_view name) {
  constexpr size_t kMaxShown = 120;
  bool cut = false;
  if (name.size() > kMaxShown) {
    name = name.substr(0, detail::Utf8PrefixLength(name, kMaxShown));
    cut = true;
  }
  std::string out = "'";
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F || c == '\'' || c == '\\') {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  out += cut ? "...'" : "'";
  return out;
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// One tensor entry of the header as parsed, before validation.
struct Entry {
  std::string name;
  std::string dtype_name;
  std::vector<int64_t> shape;
  uint64_t offsets[2] = {0, 0};
  int offsets_seen = 0;
  bool has_dtype = false;
  bool has_shape = false;
  bool has_offsets = false;
  // Filled by validation.
  std::optional<DType> dtype;  // nullopt for a spec dtype numprobe cannot represent
  uint64_t begin() const { return offsets[0]; }
  uint64_t end() const { return offsets[1]; }
};

// SAX handler for the header: a small state machine over the fixed schema
//   {name: {"dtype": str, "shape": [uint...], "data_offsets": [uint, uint], other: any}, ...,
//    "__metadata__": {str: str} | null}
// Returning false stops the reader; status() then says why.
class HeaderHandler final : public JsonEvents {
 public:
  bool Null() override {
    if (state_ == State::kMetadataValue) {  // serde reads null as an absent Option
      state_ = State::kTopKey;
      return true;
    }
    return Scalar("null");
  }
  bool Bool(bool /*value*/) override { return Scalar("a boolean"); }
  // Typed as RapidJSON types numbers: an integer literal that fits int64 (negative) or uint64
  // (non-negative), anything else (a fraction, an exponent, a larger integer) a double.
  bool Number(std::string_view literal) override {
    const char* end = literal.data() + literal.size();
    if (literal.find_first_of(".eE") == std::string_view::npos) {
      if (!literal.empty() && literal.front() == '-') {
        int64_t value = 0;
        const auto [ptr, ec] = std::from_chars(literal.data(), end, value);
        if (ec == std::errc() && ptr == end) return Int64(value);
      } else {
        uint64_t value = 0;
        const auto [ptr, ec] = std::from_chars(literal.data(), end, value);
        if (ec == std::errc() && ptr == end) return Uint64(value);
      }
    }
    return Scalar("a fractional or out-of-range number");
  }
  bool Int64(int64_t value) {
    if (value >= 0) return Uint64(static_cast<uint64_t>(value));
    if (state_ == State::kShapeItem) {
      return Fail(Status::Corrupt(
          fmt::format("tensor {}: negative dimension {} in shape", Quote(Current().name), value)));
    }
    if (state_ == State::kOffsetsItem) {
      return Fail(Status::Corrupt(
          fmt::format("tensor {}: negative data_offsets value {}", Quote(Current().name), value)));
    }
    return Scalar("a negative number");
  }
  bool Uint64(uint64_t value) {
    if (state_ == State::kShapeItem) return AddDim(value);
    if (state_ == State::kOffsetsItem) return AddOffset(value);
    return Scalar("a number");
  }
  bool String(std::string_view value) override {
    if (state_ == State::kDtype) {
      Current().dtype_name.assign(value);
      state_ = State::kTensorKey;
      return true;
    }
    if (state_ == State::kMetadataString) {
      metadata_.emplace_back(std::move(pending_key_), std::string(value));
      state_ = State::kMetadataKey;
      return true;
    }
    return Scalar("a string");
  }

  bool StartObject() override {
    if (!Deeper()) return false;
    switch (state_) {
      case State::kRoot:
        state_ = State::kTopKey;
        return true;
      case State::kMetadataValue:
        state_ = State::kMetadataKey;
        return true;
      case State::kTensorValue:
        state_ = State::kTensorKey;
        return true;
      case State::kSkip:
        ++skip_depth_;
        return true;
      default:
        return Unexpected("an object");
    }
  }
  bool Key(std::string_view key) override {
    switch (state_) {
      case State::kTopKey:
        return TopKey(key);
      case State::kMetadataKey:
        if (!metadata_keys_.emplace(key).second) {
          return Fail(
              Status::Corrupt(fmt::format("duplicate {} key {}", kMetadataName, Quote(key))));
        }
        pending_key_.assign(key);
        state_ = State::kMetadataString;
        return true;
      case State::kTensorKey:
        return TensorKey(key);
      case State::kSkip:
        return true;  // a key inside an ignored value
      default:
        return Unexpected("a key");
    }
  }
  bool EndObject() override {
    --depth_;
    switch (state_) {
      case State::kTopKey:
        state_ = State::kDone;
        return true;
      case State::kMetadataKey:
        state_ = State::kTopKey;
        return true;
      case State::kTensorKey:
        return EndTensor();
      case State::kSkip:
        return EndSkipped();
      default:
        return Unexpected("the end of an object");
    }
  }
  bool StartArray() override {
    if (!Deeper()) return false;
    switch (state_) {
      case State::kShape:
        state_ = State::kShapeItem;
        return true;
      case State::kOffsets:
        state_ = State::kOffsetsItem;
        return true;
      case State::kSkip:
        ++skip_depth_;
        return true;
      default:
        return Unexpected("an array");
    }
  }
  bool EndArray() override {
    --depth_;
    switch (state_) {
      case State::kShapeItem:
        state_ = State::kTensorKey;
        return true;
      case State::kOffsetsItem: {
        const Entry& e = Current();
        if (e.offsets_seen != 2) {
          return Fail(Status::Corrupt(fmt::format("tensor {}: data_offsets has {} element{}, not 2",
                                                  Quote(e.name), e.offsets_seen,
                                                  e.offsets_seen == 1 ? "" : "s")));
        }
        state_ = State::kTensorKey;
        return true;
      }
      case State::kSkip:
        return EndSkipped();
      default:
        return Unexpected("the end of an array");
    }
  }

  std::vector<Entry>& entries() { return entries_; }
  std::vector<std::pair<std::string, std::string>>& metadata() { return metadata_; }

 private:
  enum class State {
    kRoot,            // expecting the root object
    kTopKey,          // in the root: a tensor name, "__metadata__" or the end
    kMetadataValue,   // after "__metadata__"
    kMetadataKey,     // in __metadata__: a key or the end
    kMetadataString,  // after a __metadata__ key
    kTensorValue,     // after a tensor name
    kTensorKey,       // in a tensor entry: a field name or the end
    kDtype,
    kShape,
    kShapeItem,
    kOffsets,
    kOffsetsItem,
    kSkip,  // inside the value of an unknown tensor field (ignored, as the reference does)
    kDone,
  };

  Entry& Current() { return entries_.back(); }

  bool Deeper() {
    if (++depth_ > kMaxHeaderDepth) {
      return Fail(
          Status::Corrupt(fmt::format("header JSON nests deeper than {} levels", kMaxHeaderDepth)));
    }
    return true;
  }

  // A scalar value (or a value whose type does not fit the state).
  bool Scalar(const char* what) {
    if (state_ == State::kSkip) {
      if (skip_depth_ == 0) state_ = State::kTensorKey;
      return true;
    }
    return Unexpected(what);
  }

  bool Unexpected(const char* what) {
    const std::string name = entries_.empty() ? std::string() : Quote(entries_.back().name);
    switch (state_) {
      case State::kRoot:
        return Fail(Status::Corrupt(fmt::format("header is {}, not a JSON object", what)));
      case State::kMetadataValue:
        return Fail(Status::Corrupt(
            fmt::format("{} is {}, not an object of strings", kMetadataName, what)));
      case State::kMetadataString:
        return Fail(Status::Corrupt(fmt::format("{} value of {} is {}, not a string", kMetadataName,
                                                Quote(pending_key_), what)));
      case State::kTensorValue:
        return Fail(
            Status::Corrupt(fmt::format("tensor {}: entry is {}, not an object", name, what)));
      case State::kDtype:
        return Fail(
            Status::Corrupt(fmt::format("tensor {}: dtype is {}, not a string", name, what)));
      case State::kShape:
        return Fail(
            Status::Corrupt(fmt::format("tensor {}: shape is {}, not an array", name, what)));
      case State::kShapeItem:
        return Fail(Status::Corrupt(
            fmt::format("tensor {}: shape element is {}, not a non-negative integer", name, what)));
      case State::kOffsets:
        return Fail(Status::Corrupt(fmt::format(
            "tensor {}: data_offsets is {}, not an array of two integers", name, what)));
      case State::kOffsetsItem:
        return Fail(Status::Corrupt(fmt::format(
            "tensor {}: data_offsets element is {}, not a non-negative integer", name, what)));
      default:
        return Fail(Status::Corrupt(fmt::format("unexpected {} in the header", what)));
    }
  }

  bool TopKey(std::string_view key) {
    if (key == kMetadataName) {
      if (metadata_seen_) {
        return Fail(Status::Corrupt(fmt::format("duplicate key {}", Quote(kMetadataName))));
      }
      metadata_seen_ = true;
      state_ = State::kMetadataValue;
      return true;
    }
    if (!names_.emplace(key).second) {
      return Fail(Status::Corrupt(fmt::format("duplicate tensor name {}", Quote(key))));
    }
    entries_.emplace_back();
    Current().name.assign(key);
    state_ = State::kTensorValue;
    return true;
  }

  bool TensorKey(std::string_view key) {
    Entry& e = Current();
    bool* seen = nullptr;
    State next = State::kSkip;
    if (key == "dtype") {
      seen = &e.has_dtype;
      next = State::kDtype;
    } else if (key == "shape") {
      seen = &e.has_shape;
      next = State::kShape;
    } else if (key == "data_offsets") {
      seen = &e.has_offsets;
      next = State::kOffsets;
    }
    if (seen != nullptr) {
      if (*seen) {
        return Fail(
            Status::Corrupt(fmt::format("tensor {}: duplicate key {}", Quote(e.name), Quote(key))));
      }
      *seen = true;
    }
    skip_depth_ = 0;
    state_ = next;
    return true;
  }

  bool EndTensor() {
    const Entry& e = Current();
    const char* missing = !e.has_dtype     ? "dtype"
                          : !e.has_shape   ? "shape"
                          : !e.has_offsets ? "data_offsets"
                                           : nullptr;
    if (missing != nullptr) {
      return Fail(Status::Corrupt(fmt::format("tensor {} lacks \"{}\"", Quote(e.name), missing)));
    }
    state_ = State::kTopKey;
    return true;
  }

  bool EndSkipped() {
    if (--skip_depth_ == 0) state_ = State::kTensorKey;
    return true;
  }

  bool AddDim(uint64_t value) {
    Entry& e = Current();
    if (value > kMaxDim) {
      return Fail(Status::OutOfRange(
          fmt::format("tensor {}: dimension {} exceeds the limit 2^48-1", Quote(e.name), value)));
    }
    if (e.shape.size() >= kMaxDims) {
      return Fail(Status::OutOfRange(
          fmt::format("tensor {}: more than {} dimensions", Quote(e.name), kMaxDims)));
    }
    e.shape.push_back(static_cast<int64_t>(value));
    return true;
  }

  bool AddOffset(uint64_t value) {
    Entry& e = Current();
    if (e.offsets_seen >= 2) {
      return Fail(Status::Corrupt(
          fmt::format("tensor {}: data_offsets has more than 2 elements", Quote(e.name))));
    }
    e.offsets[e.offsets_seen++] = value;
    return true;
  }

  State state_ = State::kRoot;
  int depth_ = 0;
  int skip_depth_ = 0;
  std::vector<Entry> entries_;
  std::unordered_set<std::string> names_;
  bool metadata_seen_ = false;
  std::unordered_set<std::string> metadata_keys_;
  std::string pending_key_;
  std::vector<std::pair<std::string, std::string>> metadata_;
};

// Checks that the header is UTF-8 without NUL bytes. The reference decodes the whole header as
// UTF-8 before parsing; doing the same gives an exact "where" for a bad byte. A NUL could never be
// valid JSON, and ruling it out keeps the '\0' that ends rapidjson's input unambiguous.
Status CheckHeaderText(std::string_view header) {
  if (const size_t nul = header.find('\0'); nul != std::string_view::npos) {
    return Status::Corrupt(
        fmt::format("header contains a NUL byte at file offset {}", kLengthFieldBytes + nul));
  }
  if (const size_t valid = detail::WellFormedUtf8Prefix(header).length; valid < header.size()) {
    return Status::Corrupt(
        fmt::format("header is not valid UTF-8 at file offset {}", kLengthFieldBytes + valid));
  }
  return Status::Ok();
}

// Resolves the dtype and checks the size of one entry: Π shape × bits with checked arithmetic, a
// whole number of bytes, and equal to end - begin.
Status CheckEntry(Entry& e) {
  const std::string name = Quote(e.name);
  const std::optional<int> rank = SpecRank(e.dtype_name);
  if (!rank) {
    return Status::Corrupt(fmt::format("tensor {}: unknown dtype {}", name, Quote(e.dtype_name)));
  }
  e.dtype = DTypeFromSafetensors(e.dtype_name);
  if (e.end() < e.begin()) {
    return Status::Corrupt(
        fmt::format("tensor {}: data_offsets end {} is before begin {}", name, e.end(), e.begin()));
  }
  // CheckedNumel also refuses an empty tensor whose other dims overflow 64 bits (the strides
  // computed for it would overflow).
  const std::optional<int64_t> numel = CheckedNumel(e.shape);
  if (!numel) {
    return Status::OutOfRange(
        fmt::format("tensor {}: shape {} overflows 64 bits", name, ShapeText(e.shape)));
  }
  const int bits = kSpecDTypes[*rank].bits;
  const auto nbits =
      CheckedMul<uint64_t>(static_cast<uint64_t>(*numel), static_cast<uint64_t>(bits));
  if (!nbits) {
    return Status::OutOfRange(fmt::format("tensor {}: {} {} is more than 2^64 bits", name,
                                          e.dtype_name, ShapeText(e.shape)));
  }
  if (*nbits % 8 != 0) {
    return Status::Corrupt(fmt::format("tensor {}: {} {} is {} bits, not a whole number of bytes",
                                       name, e.dtype_name, ShapeText(e.shape), *nbits));
  }
  const uint64_t have = e.end() - e.begin();
  if (have != *nbits / 8) {
    return Status::Corrupt(
        fmt::format("tensor {}: data_offsets [{}, {}] hold {} bytes but {} {} needs {}", name,
                    e.begin(), e.end(), have, e.dtype_name, ShapeText(e.shape), *nbits / 8));
  }
  return Status::Ok();
}

// Orders entries by data offsets and checks that they tile [0, data_bytes) exactly: the first
// begins at 0, each begins where the previous ends (no hole, no overlap: a file must not be
// readable two ways), and the last ends at the end of the file. Returns the order.
Result<std::vector<size_t>> CheckTiling(const std::vector<Entry>& entries, uint64_t data_bytes) {
  std::vector<size_t> order(entries.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Stable: empty tensors at the same offset keep their header order.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair(entries[a].begin(), entries[a].end()) <
           std::pair(entries[b].begin(), entries[b].end());
  });
  uint64_t expected = 0;
  const Entry* previous = nullptr;
  for (const size_t i : order) {
    const Entry& e = entries[i];
    if (e.begin() < expected) {
      return Status::Corrupt(fmt::format(
          "tensor {} data_offsets [{}, {}] overlap tensor {} [{}, {}]", Quote(e.name), e.begin(),
          e.end(), Quote(previous->name), previous->begin(), previous->end()));
    }
    if (e.begin() > expected) {
      if (previous == nullptr) {
        return Status::Corrupt(
            fmt::format("data_offsets do not start at 0: the first tensor {} begins at {} (a hole)",
                        Quote(e.name), e.begin()));
      }
      return Status::Corrupt(fmt::format(
          "hole of {} bytes between tensor {} (ends at {}) and tensor {} (begins at {})",
          e.begin() - expected, Quote(previous->name), expected, Quote(e.name), e.begin()));
    }
    expected = e.end();
    previous = &e;
  }
  if (expected < data_bytes) {
    return Status::Corrupt(
        fmt::format("{} trailing bytes after the tensor data: tensors end at data offset {} but "
                    "the file holds {} data bytes",
                    data_bytes - expected, expected, data_bytes));
  }
  if (expected > data_bytes) {
    return Status::Corrupt(
        fmt::format("file truncated: tensor data needs {} bytes after the header but only {} are "
                    "present",
                    expected, data_bytes));
  }
  return order;
}

}  // namespace

namespace detail {

Result<TensorFile> ParseSafetensors(std::span<const std::byte> file,
                                    const std::shared_ptr<const Buffer>& owner,
                                    const ReadOptions& options) {
  const uint64_t file_size = file.size();
  if (file_size < kLengthFieldBytes) {
    return Status::Corrupt(
        fmt::format("file is {} bytes, too short for the 8-byte header length", file_size));
  }
  uint64_t n = 0;
  std::memcpy(&n, file.data(), sizeof(n));  // little-endian, asserted above
  const uint64_t cap = std::min(kMaxHeaderBytes, options.max_header_bytes);
  if (n > cap) {
    return Status::OutOfRange(fmt::format("header length {} exceeds the cap of {} bytes", n, cap));
  }
  const auto header_end = CheckedAdd<uint64_t>(kLengthFieldBytes, n);
  if (!header_end || *header_end > file_size) {
    return Status::Corrupt(fmt::format("header length {} exceeds file size {}", n, file_size));
  }
  const std::string_view header(reinterpret_cast<const char*>(file.data()) + kLengthFieldBytes,
                                static_cast<size_t>(n));
  NUMPROBE_RETURN_IF_ERROR(CheckHeaderText(header));

  // Standard JSON (serde rejects NaN); the handler refuses to go deeper than kMaxHeaderDepth
  // before the reader descends.
  HeaderHandler handler;
  JsonSyntaxError syntax;
  const Status parsed = ParseJsonEvents(header, handler,
                                        {.max_depth = kMaxHeaderDepth + 1,
                                         .non_finite = JsonNonFinite::kReject,
                                         .syntax_error = &syntax});
  if (!parsed.ok()) {
    if (!handler.status().ok()) return handler.status();
    return Status::Corrupt(fmt::format("header is not valid JSON: {} (file offset {})",
                                       syntax.reason, kLengthFieldBytes + syntax.offset));
  }

  std::vector<Entry>& entries = handler.entries();
  for (Entry& e : entries) NUMPROBE_RETURN_IF_ERROR(CheckEntry(e));
  const uint64_t data_bytes = file_size - *header_end;
  NUMPROBE_ASSIGN_OR_RETURN(std::vector<size_t> order, CheckTiling(entries, data_bytes));
  // Only a fully valid file reports a dtype numprobe cannot represent, so that a corrupt file is
  // always reported as corrupt.
  for (const size_t i : order) {
    if (!entries[i].dtype) {
      return Status::Unsupported(
          fmt::format("tensor {}: dtype {} is valid safetensors but numprobe cannot represent it",
                      Quote(entries[i].name), entries[i].dtype_name));
    }
  }

  TensorFile out;
  out.format = FileFormat::kSafetensors;
  out.metadata = std::move(handler.metadata());  // in header order
  // Tensors are reported in data-offset order (the order of their bytes in the file), not in
  // header order: JSON object order carries no meaning and writers differ on it.
  out.tensors.reserve(entries.size());
  const std::byte* data = file.data() + *header_end;
  for (const size_t i : order) {
    Entry& e = entries[i];
    const DType dtype = *e.dtype;
    const std::byte* first = data + e.begin();
    TensorView view = TensorView::Contiguous(first, dtype, std::move(e.shape));
    NamedTensor named;
    named.name = std::move(e.name);
    if (reinterpret_cast<uintptr_t>(first) % static_cast<uintptr_t>(ItemSize(dtype)) == 0) {
      named.tensor = Tensor(owner, std::move(view));  // zero copy: views the file
    } else {
      // Files written without 8-byte header padding place data at any offset; the kernels need
      // naturally aligned elements.
      auto copy = Tensor::CopyOf(view);
      if (!copy) return copy.error().WithContext("tensor " + Quote(named.name));
      named.tensor = std::move(*copy);
    }
    out.tensors.push_back(std::move(named));
  }
  return out;
}

}  // namespace detail

// Every Read* reader has this signature; the tensors it returns share ownership of `file`.
// NOLINTNEXTLINE(performance-unnecessary-value-param)
Result<TensorFile> ReadSafetensors(std::shared_ptr<const Buffer> file, const ReadOptions& options) {
  const std::span<const std::byte> bytes = file->bytes();
  return detail::ParseSafetensors(bytes, file, options);
}

namespace {

struct WriteItem {
  const NamedView* tensor;
  int rank;  // index in kSpecDTypes
  uint64_t bytes;
};

// Compact, refusing names that are not UTF-8.
using HeaderWriter = JsonWriter<rapidjson::StringBuffer, /*kPretty=*/false, /*kValidateUtf8=*/true>;

Status CheckWriteItem(const NamedView& t, WriteItem* item) {
  const std::string name = Quote(t.name);
  if (t.name == kMetadataName) {
    return Status::InvalidArgument(fmt::format("a tensor cannot be named {}", name));
  }
  const std::string_view st_name = Traits(t.view.dtype).safetensors_name;
  const std::optional<int> rank = SpecRank(st_name);
  if (st_name.empty() || !rank) {
    return Status::Unsupported(
        fmt::format("tensor {}: safetensors has no dtype for {}", name, Name(t.view.dtype)));
  }
  if (t.view.strides.size() != t.view.shape.size()) {
    return Status::InvalidArgument(fmt::format("tensor {}: {} strides for {} dims", name,
                                               t.view.strides.size(), t.view.shape.size()));
  }
  for (size_t i = 0; i < t.view.shape.size(); ++i) {
    if (t.view.shape[i] < 0 || t.view.strides[i] < 0) {
      return Status::InvalidArgument(fmt::format("tensor {}: negative dimension or stride", name));
    }
    if (static_cast<uint64_t>(t.view.shape[i]) > kMaxDim) {
      return Status::OutOfRange(
          fmt::format("tensor {}: dimension {} exceeds the limit 2^48-1", name, t.view.shape[i]));
    }
  }
  if (t.view.shape.size() > kMaxDims) {
    return Status::OutOfRange(fmt::format("tensor {}: more than {} dimensions", name, kMaxDims));
  }
  const auto numel = CheckedNumel(t.view.shape);
  const auto bytes = numel ? CheckedMul<int64_t>(*numel, ItemSize(t.view.dtype)) : std::nullopt;
  if (!bytes) return Status::OutOfRange(fmt::format("tensor {}: size overflows 64 bits", name));
  *item = WriteItem{&t, *rank, static_cast<uint64_t>(*bytes)};
  return Status::Ok();
}

}  // namespace

Status WriteSafetensors(const std::filesystem::path& path, std::span<const NamedView> tensors,
                        const std::vector<std::pair<std::string, std::string>>& metadata) {
  std::vector<WriteItem> items(tensors.size());
  std::unordered_set<std::string_view> names;
  for (size_t i = 0; i < tensors.size(); ++i) {
    NUMPROBE_RETURN_IF_ERROR(CheckWriteItem(tensors[i], &items[i]));
    if (!names.insert(tensors[i].name).second) {
      return Status::InvalidArgument("duplicate tensor name " + Quote(tensors[i].name));
    }
  }
  std::unordered_set<std::string_view> keys;
  for (const auto& [key, value] : metadata) {
    if (!keys.insert(key).second) {
      return Status::InvalidArgument(fmt::format("duplicate {} key {}", kMetadataName, Quote(key)));
    }
  }
  // As the reference writer: largest alignment first, then by name (bytewise), so that every
  // tensor starts at a multiple of its element size once the header is padded to 8 bytes.
  std::sort(items.begin(), items.end(), [](const WriteItem& a, const WriteItem& b) {
    if (a.rank != b.rank) return a.rank > b.rank;
    return a.tensor->name < b.tensor->name;
  });

  rapidjson::StringBuffer json;
  HeaderWriter writer(json, JsonFileKind::kResult);
  bool ok = writer.StartObject();
  if (!metadata.empty()) {
    ok = ok && writer.Key(kMetadataName);
    ok = ok && writer.StartObject();
    for (const auto& [key, value] : metadata) {
      if (!writer.Key(key) || !writer.String(value)) {
        return Status::InvalidArgument(
            fmt::format("{} entry {} is not valid UTF-8", kMetadataName, Quote(key)));
      }
    }
    ok = ok && writer.EndObject();
  }
  uint64_t offset = 0;
  for (const WriteItem& item : items) {
    const NamedView& t = *item.tensor;
    if (!writer.Key(t.name)) {
      return Status::InvalidArgument(
          fmt::format("tensor name {} is not valid UTF-8", Quote(t.name)));
    }
    const std::string_view st_name = kSpecDTypes[item.rank].name;
    ok = ok && writer.StartObject() && writer.Key("dtype") && writer.String(st_name) &&
         writer.Key("shape") && writer.StartArray();
    for (const int64_t d : t.view.shape) ok = ok && writer.Uint64(static_cast<uint64_t>(d));
    const auto end = CheckedAdd<uint64_t>(offset, item.bytes);
    if (!end) return Status::OutOfRange("total tensor size overflows 64 bits");
    ok = ok && writer.EndArray() && writer.Key("data_offsets") && writer.StartArray() &&
         writer.Uint64(offset) && writer.Uint64(*end) && writer.EndArray() && writer.EndObject();
    offset = *end;
  }
  ok = ok && writer.EndObject();
  if (!ok) return Status::Internal("cannot format the safetensors header");
  std::string header(json.GetString(), json.GetSize());
  header.append((8 - header.size() % 8) % 8, ' ');  // data starts 8-byte aligned
  if (header.size() > kMaxHeaderBytes) {
    return Status::OutOfRange(fmt::format("header of {} bytes exceeds the cap of {} bytes",
                                          header.size(), kMaxHeaderBytes));
  }

  NUMPROBE_ASSIGN_OR_RETURN(detail::AtomicOutput file, detail::AtomicOutput::Create(path));
  const uint64_t n = header.size();  // little-endian, asserted above
  NUMPROBE_RETURN_IF_ERROR(file.Write(std::as_bytes(std::span(&n, 1))));
  NUMPROBE_RETURN_IF_ERROR(file.Write(header));
  for (const WriteItem& item : items) {
    const TensorView& view = item.tensor->view;
    if (item.bytes == 0) continue;
    if (view.is_contiguous()) {
      NUMPROBE_RETURN_IF_ERROR(file.Write({view.first(), static_cast<size_t>(item.bytes)}));
    } else {
      auto copy = Tensor::CopyOf(view);
      if (!copy) return copy.error().WithContext("tensor " + Quote(item.tensor->name));
      NUMPROBE_RETURN_IF_ERROR(file.Write({copy->view().first(), static_cast<size_t>(item.bytes)}));
    }
  }
  return file.Commit();
}

}  // namespace numprobe
