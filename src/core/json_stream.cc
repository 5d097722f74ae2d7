#include "core/json_stream.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

namespace numprobe::detail {

const JNode* JNode::Find(std::string_view key) const {
  if (kind != Kind::kObject) return nullptr;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == key) return &items[i];
  }
  return nullptr;
}

namespace {

using rapidjson::SizeType;

// Where a value being built will go when it is complete.
enum class Destination { kMember, kRootMember, kDiscard };

// One container under construction. Large objects get an index by member name so that a
// repeated key replaces the earlier value without a quadratic search; small ones are searched.
struct BuildFrame {
  JNode node;
  std::string pending_key;
  std::unordered_map<std::string, size_t> index;  // built once an object passes kIndexFrom members
};
constexpr size_t kIndexFrom = 32;

class StreamHandler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, StreamHandler> {
 public:
  StreamHandler(const JsonStreamSpec& spec, const rapidjson::MemoryStream& stream)
      : spec_(spec), stream_(stream) {}

  const Status& status() const { return status_; }

  bool Null() { return Scalar(JNode{}); }
  bool Bool(bool b) {
    JNode n;
    n.kind = JNode::Kind::kBool;
    n.boolean = b;
    return Scalar(std::move(n));
  }
  bool RawNumber(const char* str, SizeType length, bool /*copy*/) {
    JNode n;
    n.kind = JNode::Kind::kNumber;
    const std::string_view text(str, length);
    bool is_float = false;  // a fraction, an exponent, NaN or Infinity
    for (const char c : text) {
      if (c == '.' || c == 'e' || c == 'E' || c == 'I' || c == 'N') {
        is_float = true;
        break;
      }
    }
    if (is_float) {
      n.is_float = true;
      if (text == "NaN") {
        n.number = std::numeric_limits<double>::quiet_NaN();
      } else if (text == "Infinity" || text == "-Infinity") {
        n.number = text[0] == '-' ? -HUGE_VAL : HUGE_VAL;
      } else {
        // RapidJSON has validated the literal; from_chars rounds correctly, as Python's float().
        const char* begin = str + (str[0] == '+' ? 1 : 0);
        const auto [end, ec] = std::from_chars(begin, str + length, n.number);
        if (ec == std::errc::result_out_of_range) {
          n.number = std::strtod(std::string(text).c_str(), nullptr);  // overflow to inf, or 0
        }
        (void)end;
      }
    } else {
      const auto [end, ec] = std::from_chars(str, str + length, n.integer);
      if (ec != std::errc() || end != str + length) {
        n.big = true;  // Python's int has no size limit: keep the digits
        n.text.assign(str, length);
      }
    }
    return Scalar(std::move(n));
  }
  bool String(const char* str, SizeType length, bool /*copy*/) {
    JNode n;
    n.kind = JNode::Kind::kString;
    n.text.assign(str, length);
    return Scalar(std::move(n));
  }
  bool Key(const char* str, SizeType length, bool /*copy*/) {
    if (!build_.empty()) {
      build_.back().pending_key.assign(str, length);
    } else {
      pending_key_.assign(str, length);
    }
    return true;
  }
  bool StartObject() { return StartContainer(JNode::Kind::kObject); }
  bool EndObject(SizeType /*members*/) {
    if (!build_.empty()) return EndContainer();
    --path_depth_;  // leaving an object on the stream path (or the root)
    return true;
  }
  bool StartArray() { return StartContainer(JNode::Kind::kArray); }
  bool EndArray(SizeType /*elements*/) { return EndContainer(); }

 private:
  // Depth of the object whose members are streamed: the root is 1.
  size_t StreamLevel() const { return spec_.stream_path.size() + 1; }

  Destination DestinationOfPending() const {
    if (path_depth_ == StreamLevel()) return Destination::kMember;
    if (path_depth_ == 1) return Destination::kRootMember;
    return Destination::kDiscard;
  }

  bool Fail(Status status) {
    status_ = std::move(status);
    return false;
  }

  bool StartContainer(JNode::Kind kind) {
    if (!build_.empty()) {
      if (build_.size() >= static_cast<size_t>(kMaxJsonDepth)) {
        return Fail(Status::OutOfRange(fmt::format("JSON nested deeper than {} levels at byte {}",
                                                   kMaxJsonDepth, stream_.Tell())));
      }
      PushFrame(kind);
      return true;
    }
    if (path_depth_ == 0) {
      if (kind != JNode::Kind::kObject) {
        return Fail(Status::Corrupt("the JSON root is not an object"));
      }
      path_depth_ = 1;
      if (StreamLevel() == 1 && (spec_.reached_stream_object != nullptr))
        *spec_.reached_stream_object = true;
      return true;
    }
    // A member value of an object on the stream path: descend when it is the next path object.
    if (kind == JNode::Kind::kObject && path_depth_ < StreamLevel() &&
        pending_key_ == spec_.stream_path[path_depth_ - 1]) {
      ++path_depth_;
      if (path_depth_ == StreamLevel() && (spec_.reached_stream_object != nullptr)) {
        *spec_.reached_stream_object = true;
      }
      return true;
    }
    destination_ = DestinationOfPending();
    member_key_ = pending_key_;
    member_offset_ = stream_.Tell();
    PushFrame(kind);
    return true;
  }

  void PushFrame(JNode::Kind kind) {
    BuildFrame& frame = build_.emplace_back();
    frame.node.kind = kind;
    frame.node.items.reserve(8);
    if (kind == JNode::Kind::kObject) frame.node.keys.reserve(8);
  }

  bool EndContainer() {
    BuildFrame done = std::move(build_.back());
    build_.pop_back();
    if (!build_.empty()) {
      AddChild(std::move(done.node));
      return true;
    }
    return Deliver(std::move(done.node));
  }

  void AddChild(JNode&& child) {
    BuildFrame& parent = build_.back();
    if (parent.node.kind == JNode::Kind::kArray) {
      parent.node.items.push_back(std::move(child));
      return;
    }
    std::vector<std::string>& keys = parent.node.keys;
    size_t found = keys.size();
    if (keys.size() < kIndexFrom) {
      for (size_t i = 0; i < keys.size(); ++i) {
        if (keys[i] == parent.pending_key) {
          found = i;
          break;
        }
      }
    } else {
      if (parent.index.empty()) {
        for (size_t i = 0; i < keys.size(); ++i) parent.index.emplace(keys[i], i);
      }
      const auto [it, inserted] = parent.index.try_emplace(parent.pending_key, keys.size());
      if (!inserted) found = it->second;
    }
    if (found < keys.size()) {
      parent.node.items[found] = std::move(child);  // a repeated key: the last value wins
    } else {
      keys.push_back(parent.pending_key);
      parent.node.items.push_back(std::move(child));
    }
  }

  bool Scalar(JNode&& node) {
    if (!build_.empty()) {
      AddChild(std::move(node));
      return true;
    }
    if (path_depth_ == 0) return Fail(Status::Corrupt("the JSON root is not an object"));
    destination_ = DestinationOfPending();
    member_key_ = pending_key_;
    member_offset_ = stream_.Tell();
    return Deliver(std::move(node));
  }

  bool Deliver(JNode&& node) {
    Status s;
    if (destination_ == Destination::kMember) {
      if (spec_.on_member) s = spec_.on_member(member_key_, std::move(node), member_offset_);
    } else if (destination_ == Destination::kRootMember) {
      if (spec_.on_root_member) s = spec_.on_root_member(member_key_, std::move(node));
    }
    if (!s.ok()) return Fail(std::move(s));
    return true;
  }

  const JsonStreamSpec& spec_;
  const rapidjson::MemoryStream& stream_;
  Status status_;
  size_t path_depth_ = 0;
  std::string pending_key_;
  std::vector<BuildFrame> build_;
  Destination destination_ = Destination::kDiscard;
  std::string member_key_;
  uint64_t member_offset_ = 0;
};

}  // namespace

Status StreamJson(std::span<const char> bytes, const JsonStreamSpec& spec) {
  rapidjson::MemoryStream stream(bytes.data(), bytes.size());
  StreamHandler handler(spec, stream);
  rapidjson::Reader reader;
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseNanAndInfFlag |
                              rapidjson::kParseNumbersAsStringsFlag |
                              rapidjson::kParseValidateEncodingFlag;
  const rapidjson::ParseResult result = reader.Parse<kFlags>(stream, handler);
  if (!handler.status().ok()) return handler.status();
  if (result.IsError()) {
    return Status::Corrupt(fmt::format("malformed JSON at byte {}: {}", result.Offset(),
                                       rapidjson::GetParseError_En(result.Code())));
  }
  return Status::Ok();
}

}  // namespace numprobe::detail
