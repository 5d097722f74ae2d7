// The JSON reader (json.h) on RapidJSON's SAX parser. Numbers always arrive as their literal text
// (kParseNumbersAsStringsFlag) and are read by ReadJsonNumber, so that every reader types them as
// Python's json does. UTF-8 is checked before RapidJSON sees the bytes (IllFormedAt,
// Utf8FileStream), eight ASCII bytes at a time. Two ways through RapidJSON:
//   - whole documents (ParseJson, ParseJsonEvents) are parsed recursively in place, in a private
//     NUL-terminated copy: RapidJSON then never uses its internal stack (whose first push does
//     arithmetic on a null pointer, Tencent/rapidjson#1724, reported by clang's UBSan);
//   - streams (StreamJson and StreamJsonEvents over memory, StreamJsonFile and
//     ParseJsonFileEvents over a file) are parsed recursively too, without copying the input
//     (RapidJSON's iterative parser was an eighth slower on a large dump.json).
// The recursion is bounded: the depth limit refuses a container before RapidJSON descends into it.
#include "core/json.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <unistd.h>

#include "core/json_tape.h"
#include "core/regular_file.h"
#include "core/text_arena.h"
#include "core/utf8.h"

namespace numprobe {

JsonNumber ReadJsonNumber(std::string_view literal) {
  JsonNumber n;
  const char* begin = literal.data();
  const char* end = literal.data() + literal.size();
  bool is_float = false;  // a fraction, an exponent, NaN or Infinity
  for (const char c : literal) {
    if (c == '.' || c == 'e' || c == 'E' || c == 'I' || c == 'N') {
      is_float = true;
      break;
    }
  }
  if (!is_float) {
    const auto [ptr, ec] = std::from_chars(begin, end, n.integer);
    if (ec == std::errc() && ptr == end) {
      n.kind = JsonNumber::Kind::kInt;
      n.number = static_cast<double>(n.integer);
      return n;
    }
    n.kind = JsonNumber::Kind::kBigInt;  // Python's int has no size limit: the caller keeps digits
  } else {
    n.kind = JsonNumber::Kind::kFloat;
  }
  const bool minus = !literal.empty() && literal.front() == '-';
  const std::string_view unsigned_part = minus ? literal.substr(1) : literal;
  if (unsigned_part == "NaN") {
    n.number = std::numeric_limits<double>::quiet_NaN();
    return n;
  }
  if (unsigned_part == "Infinity" || unsigned_part == "Inf") {
    n.number = minus ? -HUGE_VAL : HUGE_VAL;
    return n;
  }
  // RapidJSON has validated the literal; from_chars rounds correctly, as Python's float() does.
  const auto [ptr, ec] = std::from_chars(begin, end, n.number);
  (void)ptr;
  if (ec == std::errc::result_out_of_range) {
    n.number = std::strtod(std::string(literal).c_str(), nullptr);  // overflow to inf, or 0
  }
  return n;
}

// Wires a JsonEvents handler to the reader: its offset source and its failure.
class JsonEventSource {
 public:
  template <typename Stream>
  static void Attach(JsonEvents& events, Stream& stream) {
    events.offset_ = [](void* s) -> uint64_t { return static_cast<Stream*>(s)->Tell(); };
    events.offset_context_ = &stream;
  }
  static void Detach(JsonEvents& events) {
    events.offset_ = nullptr;
    events.offset_context_ = nullptr;
  }
  static bool Fail(JsonEvents& events, Status status) { return events.Fail(std::move(status)); }
};

namespace {

using rapidjson::SizeType;

// RapidJSON handler that forwards to JsonEvents and enforces the depth limit before anything
// descends.
template <typename Stream>
class Adapter {
 public:
  Adapter(JsonEvents& events, Stream& stream, int max_depth)
      : events_(events), stream_(stream), max_depth_(max_depth) {}

  bool Null() { return events_.Null(); }
  bool Bool(bool b) { return events_.Bool(b); }
  // Numbers arrive as RawNumber (kParseNumbersAsStringsFlag); the typed calls never happen.
  bool Int(int) { return false; }
  bool Uint(unsigned) { return false; }
  bool Int64(int64_t) { return false; }
  bool Uint64(uint64_t) { return false; }
  bool Double(double) { return false; }
  bool RawNumber(const char* str, SizeType length, bool /*copy*/) {
    return events_.Number(std::string_view(str, length));
  }
  bool String(const char* str, SizeType length, bool /*copy*/) {
    return events_.String(std::string_view(str, length));
  }
  bool Key(const char* str, SizeType length, bool /*copy*/) {
    return events_.Key(std::string_view(str, length));
  }
  bool StartObject() { return Deeper() && events_.StartObject(); }
  bool EndObject(SizeType /*members*/) {
    --depth_;
    return events_.EndObject();
  }
  bool StartArray() { return Deeper() && events_.StartArray(); }
  bool EndArray(SizeType /*elements*/) {
    --depth_;
    return events_.EndArray();
  }

 private:
  bool Deeper() {
    if (++depth_ <= max_depth_) return true;
    return JsonEventSource::Fail(
        events_, Status::OutOfRange(fmt::format("JSON nested deeper than {} levels at byte {}",
                                                max_depth_, stream_.Tell())));
  }

  JsonEvents& events_;
  Stream& stream_;
  const int max_depth_;
  int depth_ = 0;
};

// `where` names the error's position ("byte", or "byte offset" for whole documents).
// `ill_formed_at`: where the input stops being UTF-8 (the stream ends there), read once the parse
// is over (a file stream finds it as it reads); the parser's own failure is reported only when it
// comes first.
template <unsigned kFlags, typename Stream>
Status Run(Stream& stream, JsonEvents& events, const JsonReadOptions& options,
           const std::optional<uint64_t>& ill_formed_at, std::string_view where = "byte") {
  JsonEventSource::Attach(events, stream);
  Adapter<Stream> adapter(events, stream, options.max_depth);
  rapidjson::Reader reader;
  rapidjson::ParseResult result;
  if (options.non_finite == JsonNonFinite::kAccept) {
    result = reader.Parse<kFlags | rapidjson::kParseNanAndInfFlag>(stream, adapter);
  } else {
    result = reader.Parse<kFlags>(stream, adapter);
  }
  JsonEventSource::Detach(events);
  if (!events.status().ok()) return events.status();
  if (ill_formed_at.has_value() && (!result.IsError() || result.Offset() >= *ill_formed_at)) {
    constexpr std::string_view kReason = "not valid UTF-8";
    if (options.syntax_error != nullptr) {
      *options.syntax_error = {*ill_formed_at, std::string(kReason)};
    }
    return Status::Corrupt(
        fmt::format("malformed JSON at {} {}: {}", where, *ill_formed_at, kReason));
  }
  if (result.IsError()) {
    if (options.syntax_error != nullptr) {
      *options.syntax_error = {result.Offset(), rapidjson::GetParseError_En(result.Code())};
    }
    return Status::Corrupt(fmt::format("malformed JSON at {} {}: {}", where, result.Offset(),
                                       rapidjson::GetParseError_En(result.Code())));
  }
  return Status::Ok();
}

// Where `bytes` stop being UTF-8, if they do: a memory input is parsed up to there (see Run).
std::optional<uint64_t> IllFormedAt(std::span<const char> bytes) {
  const detail::Utf8Prefix prefix =
      detail::WellFormedUtf8Prefix(std::string_view(bytes.data(), bytes.size()));
  if (prefix.length == bytes.size()) return std::nullopt;
  return prefix.length;
}

// A memory input up to where it stops being UTF-8.
rapidjson::MemoryStream Utf8MemoryStream(std::span<const char> bytes,
                                         std::optional<uint64_t> ill_formed_at) {
  return {bytes.data(),
          ill_formed_at.has_value() ? static_cast<size_t>(*ill_formed_at) : bytes.size()};
}

// A file read for RapidJSON (its FileReadStream's interface) in windows that are checked to be
// UTF-8 as they are read. RapidJSON's own check (kParseValidateEncodingFlag) decodes every byte of
// every string and took a third of its parsing time on a large dump.json; this one passes ASCII
// eight bytes at a time. A window never ends inside a sequence (the sequence's first bytes wait for
// the next window), and the input ends at the first ill-formed byte (ill_formed_at(); Run reports
// it). Written by hand: RapidJSON has no such stream, and wrapping its FileReadStream would check
// each byte through another call.
class Utf8FileStream {
 public:
  using Ch = char;

  explicit Utf8FileStream(int fd) : fd_(fd), buffer_(kWindowBytes + 1) {
    window_end_ = data_end_ = buffer_.data();
    Fill();
  }

  Ch Peek() const { return *current_; }
  // Called for every byte: kept small enough to inline, the window's end handled out of line.
  Ch Take() {
    const Ch c = *current_;
    if (++current_ >= window_end_) [[unlikely]] {
      PastWindowEnd();
    }
    return c;
  }
  size_t Tell() const { return handed_out_ + static_cast<size_t>(current_ - buffer_.data()); }

  // An input stream only.
  void Put(Ch /*c*/) { std::abort(); }
  void Flush() { std::abort(); }
  Ch* PutBegin() { std::abort(); }
  size_t PutEnd(Ch* /*begin*/) { std::abort(); }

  const std::optional<uint64_t>& ill_formed_at() const { return ill_formed_at_; }
  // A failed read(2): the input ends there too.
  int read_errno() const { return read_errno_; }

 private:
  static constexpr size_t kWindowBytes = size_t{1} << 16;

  [[gnu::noinline]] void PastWindowEnd() {
    if (ended_) {
      current_ = window_end_;  // at the end's NUL, the stream stays there
    } else {
      Fill();
    }
  }

  // The next window: the bytes the last one held back, then as many as the file gives.
  void Fill() {
    do {
      handed_out_ += static_cast<size_t>(window_end_ - buffer_.data());
      const auto held = static_cast<size_t>(data_end_ - window_end_);
      std::memmove(buffer_.data(), window_end_, held);
      size_t have = held;
      bool at_end = false;
      while (have < kWindowBytes) {
        const ssize_t n = ::read(fd_, buffer_.data() + have, kWindowBytes - have);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          if (n < 0) read_errno_ = errno;
          at_end = true;
          break;
        }
        have += static_cast<size_t>(n);
      }
      data_end_ = buffer_.data() + have;
      const detail::Utf8Prefix prefix =
          detail::WellFormedUtf8Prefix(std::string_view(buffer_.data(), have));
      window_end_ = buffer_.data() + prefix.length;
      current_ = buffer_.data();
      if (prefix.length < have && (at_end || !prefix.cut_short)) {
        ill_formed_at_ = handed_out_ + prefix.length;
        at_end = true;
      }
      ended_ = at_end;
    } while (!ended_ && window_end_ == buffer_.data());  // never: a window holds 64 KiB
    if (ended_) *window_end_ = '\0';                     // RapidJSON's end of input
  }

  const int fd_;
  std::vector<char> buffer_;
  char* current_ = nullptr;
  char* window_end_ = nullptr;  // the window: [buffer_, window_end_)
  char* data_end_ = nullptr;    // bytes read: the window, then those it held back
  size_t handed_out_ = 0;       // bytes of the file before the window
  bool ended_ = false;
  std::optional<uint64_t> ill_formed_at_;
  int read_errno_ = 0;
};

// The read error that ended a file stream early, if one did: it explains any parse error.
std::optional<Status> ReadFailure(const std::filesystem::path& path, const Utf8FileStream& stream) {
  if (stream.read_errno() == 0) return std::nullopt;
  return Status::IoError(
      fmt::format("{}: read failed: {}", path.string(), std::strerror(stream.read_errno())));
}

// UTF-8 is checked before RapidJSON sees the bytes (Utf8FileStream, IllFormedAt).
constexpr unsigned kCommonFlags = rapidjson::kParseNumbersAsStringsFlag;

// Builds JsonValues from events: one container per frame. Large objects get an index by member
// name so that a repeated key replaces the earlier value without a quadratic search.
class ValueBuilder {
 public:
  bool building() const { return !frames_.empty(); }
  size_t depth() const { return frames_.size(); }

  void Start(bool object) {
    Frame& f = frames_.emplace_back();
    f.value = object ? JsonValue::MakeObject() : JsonValue::MakeArray();
  }
  void Key(std::string_view key) { frames_.back().pending_key.assign(key); }
  // Adds a complete value to the open container; returns it when there is none (a top value).
  std::optional<JsonValue> Add(JsonValue&& value) {
    if (frames_.empty()) return std::move(value);
    Frame& parent = frames_.back();
    if (parent.value.is_array()) {
      parent.value.array().push_back(std::move(value));
      return std::nullopt;
    }
    JsonValue::Object& members = parent.value.object();
    size_t found = members.size();
    if (members.size() < kIndexFrom) {
      for (size_t i = 0; i < members.size(); ++i) {
        if (members[i].first == parent.pending_key) {
          found = i;
          break;
        }
      }
    } else {
      if (parent.index.empty()) {
        for (size_t i = 0; i < members.size(); ++i) parent.index.emplace(members[i].first, i);
      }
      const auto [it, inserted] = parent.index.try_emplace(parent.pending_key, members.size());
      if (!inserted) found = it->second;
    }
    if (found < members.size()) {
      members[found].second = std::move(value);  // a repeated key: the last value wins
    } else {
      members.emplace_back(std::move(parent.pending_key), std::move(value));
    }
    return std::nullopt;
  }
  // Scalars, as StreamHandler adds them.
  std::optional<JsonValue> Null() { return Add(JsonValue()); }
  std::optional<JsonValue> Bool(bool b) { return Add(JsonValue::Bool(b)); }
  std::optional<JsonValue> Number(std::string_view literal) { return Add(NumberValue(literal)); }
  std::optional<JsonValue> String(std::string_view s) {
    return Add(JsonValue::String(std::string(s)));
  }
  // Closes the innermost container.
  std::optional<JsonValue> End() {
    JsonValue done = std::move(frames_.back().value);
    frames_.pop_back();
    return Add(std::move(done));
  }

  static JsonValue NumberValue(std::string_view literal) {
    const JsonNumber n = ReadJsonNumber(literal);
    switch (n.kind) {
      case JsonNumber::Kind::kInt:
        return JsonValue::Int(n.integer);
      case JsonNumber::Kind::kBigInt:
        return JsonValue::BigInt(std::string(literal));
      case JsonNumber::Kind::kFloat:
        break;
    }
    return JsonValue::Double(n.number);
  }

 private:
  static constexpr size_t kIndexFrom = 32;
  struct Frame {
    JsonValue value;
    std::string pending_key;
    std::unordered_map<std::string, size_t> index;  // built once an object passes kIndexFrom
  };
  std::vector<Frame> frames_;
};

// A whole document into one JsonValue.
class DocumentHandler final : public JsonEvents {
 public:
  bool Null() override { return Put(JsonValue()); }
  bool Bool(bool b) override { return Put(JsonValue::Bool(b)); }
  bool Number(std::string_view literal) override { return Put(ValueBuilder::NumberValue(literal)); }
  bool String(std::string_view s) override { return Put(JsonValue::String(std::string(s))); }
  bool Key(std::string_view key) override {
    builder_.Key(key);
    return true;
  }
  bool StartObject() override {
    builder_.Start(true);
    return true;
  }
  bool EndObject() override { return Done(builder_.End()); }
  bool StartArray() override {
    builder_.Start(false);
    return true;
  }
  bool EndArray() override { return Done(builder_.End()); }

  JsonValue Take() { return std::move(root_); }

 private:
  bool Put(JsonValue&& v) { return Done(builder_.Add(std::move(v))); }
  bool Done(std::optional<JsonValue> top) {
    if (top) root_ = std::move(*top);
    return true;
  }
  ValueBuilder builder_;
  JsonValue root_;
};

// Where a value being built will go when it is complete.
enum class Destination { kMember, kRootMember, kDiscard };

}  // namespace

// A tape's texts: 64 KiB blocks of a TextArena, kept and reused from one value to the next.
constexpr size_t kTextBlockBytes = size_t{1} << 16;

// Builds tapes (json_tape.h) from events: one token per value, text copied into the arena.
class JsonTapeBuilder {
 public:
  bool building() const { return !frames_.empty(); }
  size_t depth() const { return frames_.size(); }

  void Start(bool object) {
    Push().kind_ = object ? JsonValue::Kind::kObject : JsonValue::Kind::kArray;
    frames_.push_back({static_cast<uint32_t>(tokens_.size() - 1), false});
  }
  void Key(std::string_view key) { pending_key_ = Copy(key); }
  const JsonTapeValue* Null() {
    Push();
    return Top();
  }
  const JsonTapeValue* Bool(bool b) {
    JsonTapeValue& v = Push();
    v.kind_ = JsonValue::Kind::kBool;
    v.integer_ = b ? 1 : 0;
    return Top();
  }
  const JsonTapeValue* Number(std::string_view literal) {
    JsonTapeValue& v = Push();
    const JsonNumber n = ReadJsonNumber(literal);
    switch (n.kind) {
      case JsonNumber::Kind::kInt:
        v.kind_ = JsonValue::Kind::kInt;
        v.integer_ = n.integer;
        break;
      case JsonNumber::Kind::kBigInt:
        v.kind_ = JsonValue::Kind::kBigInt;
        v.text_ = Copy(literal);
        break;
      case JsonNumber::Kind::kFloat:
        v.kind_ = JsonValue::Kind::kDouble;
        v.number_ = n.number;
        break;
    }
    return Top();
  }
  const JsonTapeValue* String(std::string_view s) {
    JsonTapeValue& v = Push();
    v.kind_ = JsonValue::Kind::kString;
    v.text_ = Copy(s);
    return Top();
  }
  // Closes the innermost container.
  const JsonTapeValue* End() {
    const Frame frame = frames_.back();
    frames_.pop_back();
    JsonTapeValue& v = tokens_[frame.index];
    v.span_ = static_cast<uint32_t>(tokens_.size() - frame.index);
    v.repeated_keys_ = frame.repeated || (v.is_object() && RepeatsKey(v));
    if (!frames_.empty()) frames_.back().repeated = frames_.back().repeated || v.repeated_keys_;
    return Top();
  }

 private:
  struct Frame {
    uint32_t index;
    bool repeated;  // a container inside repeats a key
  };

  // A new token in the open container, or the first of a new tape.
  JsonTapeValue& Push() {
    if (frames_.empty()) {
      tokens_.clear();
      text_.Reset();
    }
    JsonTapeValue& v = tokens_.emplace_back();
    if (!frames_.empty()) {
      JsonTapeValue& parent = tokens_[frames_.back().index];
      ++parent.count_;
      if (parent.is_object()) v.key_ = pending_key_;
    }
    return v;
  }
  const JsonTapeValue* Top() const { return frames_.empty() ? tokens_.data() : nullptr; }

  static bool RepeatsKey(const JsonTapeValue& object) {
    constexpr size_t kPairwiseUpTo = 16;
    if (object.count_ < 2) return false;
    if (object.count_ <= kPairwiseUpTo) {
      for (const JsonTapeValue* a = &object + 1; a != object.next(); a = a->next()) {
        for (const JsonTapeValue* b = a->next(); b != object.next(); b = b->next()) {
          // Length and first byte before the bytes: most keys of one object differ there.
          if (a->key_.size() == b->key_.size() &&
              (a->key_.empty() || a->key_.front() == b->key_.front()) && a->key_ == b->key_) {
            return true;
          }
        }
      }
      return false;
    }
    std::unordered_set<std::string_view> keys;
    for (const JsonTapeValue& m : object.children()) {
      if (!keys.insert(m.key_).second) return true;
    }
    return false;
  }

  std::string_view Copy(std::string_view s) { return text_.Store(s); }

  std::vector<JsonTapeValue> tokens_;
  std::vector<Frame> frames_;
  std::string_view pending_key_;
  detail::TextArena text_{kTextBlockBytes};
};

JsonValue ToJsonValue(const JsonTapeValue& value) {
  switch (value.kind()) {
    case JsonValue::Kind::kNull:
      return {};
    case JsonValue::Kind::kBool:
      return JsonValue::Bool(value.bool_value());
    case JsonValue::Kind::kInt:
      return JsonValue::Int(value.int_value());
    case JsonValue::Kind::kDouble:
      return JsonValue::Double(value.double_value());
    case JsonValue::Kind::kString:
      return JsonValue::String(std::string(value.string_value()));
    case JsonValue::Kind::kBigInt:
      return JsonValue::BigInt(std::string(value.big_int_digits()));
    case JsonValue::Kind::kArray: {
      JsonValue::Array items;
      items.reserve(value.children().size());
      for (const JsonTapeValue& item : value.children()) items.push_back(ToJsonValue(item));
      return JsonValue::MakeArray(std::move(items));
    }
    case JsonValue::Kind::kObject:
      break;
  }
  // A repeated key keeps its first position and takes the last value, as ValueBuilder does.
  JsonValue::Object members;
  std::unordered_map<std::string_view, size_t> index;
  for (const JsonTapeValue& m : value.children()) {
    const auto [it, inserted] = index.try_emplace(m.key(), members.size());
    if (inserted) {
      members.emplace_back(std::string(m.key()), ToJsonValue(m));
    } else {
      members[it->second].second = ToJsonValue(m);
    }
  }
  return JsonValue::MakeObject(std::move(members));
}

const JsonTapeValue* JsonTapeValue::Find(std::string_view key) const {
  if (!is_object()) return nullptr;
  const JsonTapeValue* found = nullptr;
  for (const JsonTapeValue& m : children()) {
    if (m.key_ == key) found = &m;  // the last of repeated keys, as Python's dict
  }
  return found;
}

namespace {

// StreamJson: walks the stream path and builds one member value at a time, as a JsonValue
// (ValueBuilder, JsonStreamSpec) or a tape (JsonTapeBuilder, JsonTapeStreamSpec).
template <typename Builder, typename Spec>
class StreamHandler final : public JsonEvents {
 public:
  StreamHandler(const Spec& spec, int max_depth) : spec_(spec), max_depth_(max_depth) {}

  bool Null() override {
    return Scalar([&] { return builder_.Null(); });
  }
  bool Bool(bool b) override {
    return Scalar([&] { return builder_.Bool(b); });
  }
  bool Number(std::string_view literal) override {
    return Scalar([&] { return builder_.Number(literal); });
  }
  bool String(std::string_view s) override {
    return Scalar([&] { return builder_.String(s); });
  }
  bool Key(std::string_view key) override {
    if (builder_.building()) {
      builder_.Key(key);
    } else {
      pending_key_.assign(key);
    }
    return true;
  }
  bool StartObject() override { return StartContainer(true); }
  bool EndObject() override {
    if (builder_.building()) return EndContainer();
    --path_depth_;  // leaving an object on the stream path (or the root)
    return true;
  }
  bool StartArray() override { return StartContainer(false); }
  bool EndArray() override { return EndContainer(); }

 private:
  // Depth of the object whose members are streamed: the root is 1.
  size_t StreamLevel() const { return spec_.stream_path.size() + 1; }

  Destination DestinationOfPending() const {
    if (path_depth_ == StreamLevel()) return Destination::kMember;
    if (path_depth_ == 1) return Destination::kRootMember;
    return Destination::kDiscard;
  }

  bool StartContainer(bool object) {
    if (builder_.building()) {
      if (builder_.depth() >= static_cast<size_t>(max_depth_)) {
        return Fail(Status::OutOfRange(
            fmt::format("JSON nested deeper than {} levels at byte {}", max_depth_, Offset())));
      }
      builder_.Start(object);
      return true;
    }
    if (path_depth_ == 0) {
      if (!object) return Fail(Status::Corrupt("the JSON root is not an object"));
      path_depth_ = 1;
      if (StreamLevel() == 1 && spec_.reached_stream_object != nullptr) {
        *spec_.reached_stream_object = true;
      }
      return true;
    }
    // A member value of an object on the stream path: descend when it is the next path object.
    if (object && path_depth_ < StreamLevel() &&
        pending_key_ == spec_.stream_path[path_depth_ - 1]) {
      ++path_depth_;
      if (path_depth_ == StreamLevel() && spec_.reached_stream_object != nullptr) {
        *spec_.reached_stream_object = true;
      }
      return true;
    }
    destination_ = DestinationOfPending();
    member_key_ = pending_key_;
    member_offset_ = Offset();
    builder_.Start(object);
    return true;
  }

  bool EndContainer() {
    auto top = builder_.End();
    return top ? Deliver(std::move(*top)) : true;
  }

  template <typename AddFn>
  bool Scalar(const AddFn& add) {
    if (builder_.building()) {
      (void)add();
      return true;
    }
    if (path_depth_ == 0) return Fail(Status::Corrupt("the JSON root is not an object"));
    destination_ = DestinationOfPending();
    member_key_ = pending_key_;
    member_offset_ = Offset();
    auto top = add();
    return Deliver(std::move(*top));
  }

  template <typename Value>
  bool Deliver(Value&& value) {
    Status s;
    if (destination_ == Destination::kMember) {
      if (spec_.on_member) {
        s = spec_.on_member(member_key_, std::forward<Value>(value), member_offset_);
      }
    } else if (destination_ == Destination::kRootMember) {
      if (spec_.on_root_member) s = spec_.on_root_member(member_key_, std::forward<Value>(value));
    }
    if (!s.ok()) return Fail(std::move(s));
    return true;
  }

  const Spec& spec_;
  const int max_depth_;
  size_t path_depth_ = 0;
  std::string pending_key_;
  Builder builder_;
  Destination destination_ = Destination::kDiscard;
  std::string member_key_;
  uint64_t member_offset_ = 0;
};

}  // namespace

namespace {

Status ParseInPlace(std::string_view text, JsonEvents& events, const JsonReadOptions& options,
                    std::string_view where) {
  // A NUL would end RapidJSON's in-place input early; JSON text can never hold one.
  if (const void* nul = std::memchr(text.data(), '\0', text.size())) {
    const auto at = static_cast<size_t>(static_cast<const char*>(nul) - text.data());
    return Status::Corrupt(fmt::format("malformed JSON at {} {}: a NUL byte", where, at));
  }
  const std::optional<uint64_t> ill_formed_at = IllFormedAt(text);
  std::string copy(text.substr(0, ill_formed_at.value_or(text.size())));
  rapidjson::InsituStringStream stream(copy.data());
  return Run<kCommonFlags | rapidjson::kParseInsituFlag>(stream, events, options, ill_formed_at,
                                                         where);
}

}  // namespace

Status ParseJsonEvents(std::string_view text, JsonEvents& events, const JsonReadOptions& options) {
  return ParseInPlace(text, events, options, "byte");
}

Status StreamJsonEvents(std::span<const char> bytes, JsonEvents& events,
                        const JsonReadOptions& options) {
  const std::optional<uint64_t> ill_formed_at = IllFormedAt(bytes);
  rapidjson::MemoryStream stream = Utf8MemoryStream(bytes, ill_formed_at);
  return Run<kCommonFlags>(stream, events, options, ill_formed_at);
}

Status ParseJsonFileEvents(const std::filesystem::path& path, JsonEvents& events,
                           const JsonReadOptions& options) {
  NUMPROBE_ASSIGN_OR_RETURN(detail::RegularFile file, detail::OpenRegularFile(path));
  Utf8FileStream stream(file.fd());
  const Status parsed = Run<kCommonFlags>(stream, events, options, stream.ill_formed_at());
  return ReadFailure(path, stream).value_or(parsed);
}

Result<JsonValue> ParseJson(std::string_view text, const JsonReadOptions& options) {
  DocumentHandler handler;
  NUMPROBE_RETURN_IF_ERROR(ParseInPlace(text, handler, options, "byte offset"));
  return handler.Take();
}

namespace {

template <typename Builder, typename Stream, typename Spec>
Status StreamMembers(Stream& stream, const std::optional<uint64_t>& ill_formed_at, const Spec& spec,
                     const JsonReadOptions& options) {
  StreamHandler<Builder, Spec> handler(spec, options.max_depth);
  // The handler counts depth from the streamed member and refuses first (its message names the
  // caller's limit); the reader's own limit is one level beyond it.
  JsonReadOptions outer = options;
  outer.max_depth = options.max_depth + static_cast<int>(spec.stream_path.size()) + 2;
  return Run<kCommonFlags>(stream, handler, outer, ill_formed_at);
}

template <typename Builder, typename Spec>
Status StreamMembersOfFile(const std::filesystem::path& path, const Spec& spec,
                           const JsonReadOptions& options) {
  NUMPROBE_ASSIGN_OR_RETURN(detail::RegularFile file, detail::OpenRegularFile(path));
  Utf8FileStream stream(file.fd());
  const Status parsed = StreamMembers<Builder>(stream, stream.ill_formed_at(), spec, options);
  return ReadFailure(path, stream).value_or(parsed);
}

}  // namespace

Status StreamJson(std::span<const char> bytes, const JsonStreamSpec& spec,
                  const JsonReadOptions& options) {
  const std::optional<uint64_t> ill_formed_at = IllFormedAt(bytes);
  rapidjson::MemoryStream stream = Utf8MemoryStream(bytes, ill_formed_at);
  return StreamMembers<ValueBuilder>(stream, ill_formed_at, spec, options);
}

Status StreamJsonFile(const std::filesystem::path& path, const JsonStreamSpec& spec,
                      const JsonReadOptions& options) {
  return StreamMembersOfFile<ValueBuilder>(path, spec, options);
}

Status StreamJsonTape(std::span<const char> bytes, const JsonTapeStreamSpec& spec,
                      const JsonReadOptions& options) {
  const std::optional<uint64_t> ill_formed_at = IllFormedAt(bytes);
  rapidjson::MemoryStream stream = Utf8MemoryStream(bytes, ill_formed_at);
  return StreamMembers<JsonTapeBuilder>(stream, ill_formed_at, spec, options);
}

Status StreamJsonFileTape(const std::filesystem::path& path, const JsonTapeStreamSpec& spec,
                          const JsonReadOptions& options) {
  return StreamMembersOfFile<JsonTapeBuilder>(path, spec, options);
}

// Members' tapes copied out of the parser's reused tape (tokens and texts), for the thread that
// runs the callbacks.
class JsonTapeBatch {
 public:
  size_t size() const { return members_.size(); }
  size_t text_bytes() const { return text_bytes_; }

  // Empty again, keeping its memory for the next batch.
  void Clear() {
    tokens_.clear();
    members_.clear();
    text_.Reset();
    text_bytes_ = 0;
  }

  void Add(std::string_view key, const JsonTapeValue& value, uint64_t offset, bool root) {
    members_.push_back({Store(key), tokens_.size(), offset, root});
    const size_t first = tokens_.size();
    tokens_.insert(tokens_.end(), &value, value.next());
    const std::span<JsonTapeValue> copies(tokens_.data() + first, tokens_.size() - first);
    // The builder stores a tape's texts one after another (each key, then its value's text), so
    // they are nearly always one run of bytes: copied at once, the views moved into the copy.
    // Storing each text on its own was a third of the parsing thread's time on a large dump.
    std::string_view run;  // the texts so far, when they are one run
    for (JsonTapeValue& t : copies) {
      for (const std::string_view text : {t.key_, t.text_}) {
        if (text.empty()) continue;
        // Compared as addresses: a text after a gap is not in the run (a pointer past the run
        // may not be formed from it).
        if (!run.empty() && reinterpret_cast<uintptr_t>(text.data()) !=
                                reinterpret_cast<uintptr_t>(run.data()) + run.size()) {
          for (JsonTapeValue& each : copies) {  // not one run: each text on its own
            each.key_ = Store(each.key_);
            each.text_ = Store(each.text_);
          }
          return;
        }
        run = run.empty() ? text : std::string_view(run.data(), run.size() + text.size());
      }
    }
    const char* at = Store(run).data();
    for (JsonTapeValue& t : copies) {
      for (std::string_view* text : {&t.key_, &t.text_}) {
        if (text->empty()) {
          *text = {};
        } else {
          *text = {at, text->size()};
          at += text->size();
        }
      }
    }
  }

  // Runs the spec's callbacks over the members, in order; the first error stops them.
  Status Deliver(const JsonTapeStreamSpec& spec) const {
    for (const Member& m : members_) {
      const JsonTapeValue& value = tokens_[m.token];
      Status s;
      if (m.root) {
        if (spec.on_root_member) s = spec.on_root_member(m.key, value);
      } else if (spec.on_member) {
        s = spec.on_member(m.key, value, m.offset);
      }
      NUMPROBE_RETURN_IF_ERROR(s);
    }
    return Status::Ok();
  }

 private:
  struct Member {
    std::string_view key;
    size_t token;
    uint64_t offset;
    bool root;
  };

  std::string_view Store(std::string_view text) {
    text_bytes_ += text.size();
    return text_.Store(text);
  }

  std::vector<JsonTapeValue> tokens_;
  std::vector<Member> members_;
  detail::TextArena text_{kTextBlockBytes};
  size_t text_bytes_ = 0;
};

Status StreamJsonFileTapeOnTwoThreads(const std::filesystem::path& path,
                                      const JsonTapeStreamSpec& spec,
                                      const JsonReadOptions& options) {
  // Batches of a few hundred members, at most kInFlight of them waiting: memory stays a few MB
  // whatever the file, and the parser waits when the callbacks fall behind.
  constexpr size_t kMembersPerBatch = 256;
  constexpr size_t kTextPerBatch = size_t{1} << 20;
  constexpr size_t kInFlight = 4;
  std::mutex mu;
  std::condition_variable changed;
  std::deque<std::unique_ptr<JsonTapeBatch>> queue;
  std::vector<std::unique_ptr<JsonTapeBatch>> spare;  // delivered batches, for reuse
  bool parsed = false;                                // the parser has handed over its last batch
  Status callbacks_failed;  // written by the callback thread, read after it stopped or under mu
  bool failed = false;      // callbacks_failed is an error (under mu)

  std::thread callbacks([&] {
    for (;;) {
      std::unique_ptr<JsonTapeBatch> batch;
      {
        std::unique_lock<std::mutex> lock(mu);
        changed.wait(lock, [&] { return !queue.empty() || parsed; });
        if (queue.empty()) return;
        batch = std::move(queue.front());
        queue.pop_front();
      }
      changed.notify_all();
      Status s = batch->Deliver(spec);
      std::lock_guard<std::mutex> lock(mu);
      if (!s.ok()) {
        callbacks_failed = std::move(s);
        failed = true;
        changed.notify_all();
        return;
      }
      batch->Clear();
      spare.push_back(std::move(batch));
    }
  });

  auto batch = std::make_unique<JsonTapeBatch>();
  // Hands the batch over; false once the callbacks have failed (the parse then stops).
  auto hand_over = [&]() {
    std::unique_lock<std::mutex> lock(mu);
    changed.wait(lock, [&] { return queue.size() < kInFlight || failed; });
    if (failed) return false;
    queue.push_back(std::move(batch));
    if (spare.empty()) {
      batch = std::make_unique<JsonTapeBatch>();
    } else {
      batch = std::move(spare.back());
      spare.pop_back();
    }
    lock.unlock();
    changed.notify_all();
    return true;
  };
  const Status stopped = Status::Internal("the callbacks failed");  // never returned: they win
  auto add = [&](std::string_view key, const JsonTapeValue& value, uint64_t offset, bool root) {
    batch->Add(key, value, offset, root);
    if (batch->size() < kMembersPerBatch && batch->text_bytes() < kTextPerBatch) {
      return Status::Ok();
    }
    return hand_over() ? Status::Ok() : stopped;
  };
  JsonTapeStreamSpec copying;
  copying.stream_path = spec.stream_path;
  copying.reached_stream_object = spec.reached_stream_object;
  copying.on_member = [&](std::string_view key, const JsonTapeValue& value, uint64_t offset) {
    return add(key, value, offset, false);
  };
  copying.on_root_member = [&](std::string_view key, const JsonTapeValue& value) {
    return add(key, value, 0, true);
  };
  Status parse = StreamJsonFileTape(path, copying, options);
  if (batch->size() > 0) (void)hand_over();  // also the members before a parse error
  {
    std::lock_guard<std::mutex> lock(mu);
    parsed = true;
  }
  changed.notify_all();
  callbacks.join();
  // Every member before a parse error was delivered: a callback's error came first in the file.
  return failed ? callbacks_failed : parse;
}

}  // namespace numprobe
