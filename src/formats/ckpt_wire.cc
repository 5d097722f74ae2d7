// Wire-level decoding of MindSpore checkpoints: the streaming walk used by the reader and the
// generated-parser reference it is checked against (see ckpt_internal.h for why there are two).
#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include "checkpoint.pb.h"
#include "formats/ckpt_internal.h"

namespace numprobe::detail {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

constexpr uint32_t kValueTag =
    WireFormatLite::MakeTag(1, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);

// The generated parser (ParseContext) is stricter than CodedInputStream in three places, and the
// walk must refuse whatever it refuses: tags of more than 5 bytes (CodedInputStream truncates them
// to 32 bits), field number 0, and length prefixes of more than 5 bytes or from 2 GiB - 16 on
// (CodedInputStream's ReadVarint32 truncates them). Hence these readers and a skipper of its own
// instead of WireFormatLite::SkipField, which reads tags and lengths the lenient way.
constexpr int kMaxTagBytes = 5;
constexpr int kMaxLengthBytes = 5;
constexpr uint64_t kMaxLength = INT_MAX - 16;  // ParseContext's limit (its kSlopBytes)

// A tag, or 0 at the end of the message (ConsumedEntireMessage() true) or on a malformed one.
uint32_t ReadTagStrict(CodedInputStream* in) {
  const int before = in->CurrentPosition();
  const uint32_t tag = in->ReadTag();
  if (tag != 0 && (in->CurrentPosition() - before > kMaxTagBytes ||
                   WireFormatLite::GetTagFieldNumber(tag) == 0)) {
    return 0;
  }
  return tag;
}

bool ReadLengthStrict(CodedInputStream* in, uint64_t* length) {
  const int before = in->CurrentPosition();
  return in->ReadVarint64(length) && in->CurrentPosition() - before <= kMaxLengthBytes &&
         *length <= kMaxLength;
}

// Skips the unknown field whose tag was just read. Groups may nest `depth` levels: the budget
// the generated parser has left at this level (each message level and each group takes one).
bool SkipUnknownField(CodedInputStream* in, uint32_t tag, int depth) {
  switch (WireFormatLite::GetTagWireType(tag)) {
    case WireFormatLite::WIRETYPE_VARINT: {
      uint64_t value = 0;
      return in->ReadVarint64(&value);
    }
    case WireFormatLite::WIRETYPE_FIXED64: {
      uint64_t value = 0;
      return in->ReadLittleEndian64(&value);
    }
    case WireFormatLite::WIRETYPE_FIXED32: {
      uint32_t value = 0;
      return in->ReadLittleEndian32(&value);
    }
    case WireFormatLite::WIRETYPE_LENGTH_DELIMITED: {
      uint64_t length = 0;
      return ReadLengthStrict(in, &length) && in->Skip(static_cast<int>(length));
    }
    case WireFormatLite::WIRETYPE_START_GROUP: {
      if (depth < 1) return false;
      while (true) {  // recursion is bounded by `depth`
        const uint32_t inner = ReadTagStrict(in);
        if (inner == 0) return false;
        if (WireFormatLite::GetTagWireType(inner) == WireFormatLite::WIRETYPE_END_GROUP) {
          return WireFormatLite::GetTagFieldNumber(inner) == WireFormatLite::GetTagFieldNumber(tag);
        }
        if (!SkipUnknownField(in, inner, depth - 1)) return false;
      }
    }
    default:  // an end-group tag without its start, or wire types 6 and 7
      return false;
  }
}

std::string Where(size_t index, uint64_t offset, std::string_view tag) {
  return CkptValueWhere(index, offset, tag);
}

// Decodes one Checkpoint.Value (or TensorProto) from a stream whose limit is pushed at the end of
// the message. `base` is the stream's first byte, `base_offset` its offset in the input, so that
// content spans point into the input and messages give file offsets.
class ValueDecoder {
 public:
  ValueDecoder(CodedInputStream* in, const std::byte* base, uint64_t base_offset, size_t index,
               uint64_t record_offset)
      : in_(in), base_(base), base_offset_(base_offset), index_(index) {
    value_.offset = record_offset;
  }

  Result<CkptRawValue> Decode() {
    while (true) {
      const uint32_t tag = ReadTagStrict(in_);
      if (tag == 0) {
        if (in_->ConsumedEntireMessage()) break;  // at the limit, not inside a cut varint
        return Malformed("malformed field tag");
      }
      const int field = WireFormatLite::GetTagFieldNumber(tag);
      const auto wire = WireFormatLite::GetTagWireType(tag);
      if (wire == WireFormatLite::WIRETYPE_END_GROUP) return Malformed("unexpected end-group tag");
      if (wire != WireFormatLite::WIRETYPE_LENGTH_DELIMITED || field < 1 || field > 3) {
        NUMPROBE_RETURN_IF_ERROR(SkipUnknown(tag, kCkptMaxNesting - 1));
        continue;
      }
      NUMPROBE_ASSIGN_OR_RETURN(const int length, ReadLength(field == 1 ? "tag" : "tensor"));
      if (field == 1) {
        if (static_cast<uint64_t>(length) > kCkptMaxTagBytes) {
          return Status::OutOfRange(fmt::format("{}: tag of {} bytes exceeds the cap of {}",
                                                Where(index_, value_.offset, ""), length,
                                                kCkptMaxTagBytes));
        }
        if (!in_->ReadString(&value_.tag, length)) return Malformed("truncated tag");
        has_tag_ = true;
      } else if (field == 2) {
        // oneof: a tensor after a maptensor replaces it; a second tensor merges into the first.
        if (!value_.has_tensor) tensor_ = TensorFields();
        value_.has_tensor = true;
        has_maptensor_ = false;
        const auto limit = in_->PushLimit(length);
        NUMPROBE_RETURN_IF_ERROR(DecodeTensor(&tensor_, kCkptMaxNesting - 2, "tensor"));
        in_->PopLimit(limit);
      } else {
        // MapTensor (embedding hash tables): numprobe does not read them, but its bytes must be
        // valid protobuf even when a later tensor field replaces it, as for the generated parser.
        // The walk goes on so that the message can name the tag, which may come after.
        value_.has_tensor = false;
        has_maptensor_ = true;
        const auto limit = in_->PushLimit(length);
        NUMPROBE_RETURN_IF_ERROR(CheckMapTensor());
        in_->PopLimit(limit);
      }
    }
    if (!has_tag_) {
      return Status::Corrupt(
          fmt::format("{}: missing required field tag", Where(index_, value_.offset, "")));
    }
    if (has_maptensor_) {
      return Status::Unsupported(fmt::format("{}: MapTensor values (maptensor) are not supported",
                                             Where(index_, value_.offset, value_.tag)));
    }
    if (value_.has_tensor) {
      if (!tensor_.has_type || !tensor_.has_content) {
        return Status::Corrupt(fmt::format("{}: tensor is missing required field {}",
                                           Where(index_, value_.offset, value_.tag),
                                           tensor_.has_type ? "tensor_content" : "tensor_type"));
      }
      value_.dims = std::move(tensor_.dims);
      value_.tensor_type = std::move(tensor_.type);
      value_.content = tensor_.content;
    }
    return std::move(value_);
  }

 private:
  // TensorProto's fields, merged over repeated occurrences.
  struct TensorFields {
    std::vector<int64_t> dims;
    std::string type;
    std::span<const std::byte> content;
    bool has_type = false;
    bool has_content = false;
  };

  Status Malformed(std::string_view what) const {
    return Status::Corrupt(
        fmt::format("{}: {} at offset {}", Where(index_, value_.offset, value_.tag), what,
                    base_offset_ + static_cast<uint64_t>(in_->CurrentPosition())));
  }

  // Reads a length prefix and checks it against the bytes left in the enclosing message.
  Result<int> ReadLength(std::string_view field) {
    const int at = in_->CurrentPosition();
    uint64_t length = 0;
    if (!in_->ReadVarint64(&length) || in_->CurrentPosition() - at > kMaxLengthBytes) {
      return Malformed(fmt::format("malformed {} length", field));
    }
    const int left = in_->BytesUntilLimit();
    if (left < 0 || length > static_cast<uint64_t>(left)) {
      return Status::Corrupt(fmt::format(
          "{}: {} length {} at offset {} exceeds the {} bytes left in the enclosing message",
          Where(index_, value_.offset, value_.tag), field, length,
          base_offset_ + static_cast<uint64_t>(at), std::max(left, 0)));
    }
    return static_cast<int>(length);
  }

  // `depth`: the group nesting the generated parser allows at this message level.
  Status SkipUnknown(uint32_t tag, int depth) {
    if (!SkipUnknownField(in_, tag, depth)) {
      return Malformed(fmt::format("malformed, truncated or too deeply nested unknown field {}",
                                   WireFormatLite::GetTagFieldNumber(tag)));
    }
    return Status::Ok();
  }

  Status AddDim(TensorFields* t, uint64_t raw) {
    if (t->dims.size() >= kCkptMaxDims) {
      return Status::OutOfRange(fmt::format(
          "{}: more than {} dims", Where(index_, value_.offset, value_.tag), kCkptMaxDims));
    }
    t->dims.push_back(static_cast<int64_t>(raw));  // negative dims are 10-byte varints
    return Status::Ok();
  }

  // Validates a MapTensorProto { repeated TensorProto tensor = 1; } as protobuf.
  Status CheckMapTensor() {
    while (true) {
      const uint32_t tag = ReadTagStrict(in_);
      if (tag == 0) {
        if (in_->ConsumedEntireMessage()) return Status::Ok();
        return Malformed("malformed field tag in maptensor");
      }
      if (WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_END_GROUP) {
        return Malformed("unexpected end-group tag in maptensor");
      }
      if (tag != WireFormatLite::MakeTag(1, WireFormatLite::WIRETYPE_LENGTH_DELIMITED)) {
        NUMPROBE_RETURN_IF_ERROR(SkipUnknown(tag, kCkptMaxNesting - 2));
        continue;
      }
      NUMPROBE_ASSIGN_OR_RETURN(const int length, ReadLength("maptensor tensor"));
      const auto limit = in_->PushLimit(length);
      TensorFields ignored;
      NUMPROBE_RETURN_IF_ERROR(DecodeTensor(&ignored, kCkptMaxNesting - 3, "maptensor"));
      in_->PopLimit(limit);
    }
  }

  // Decodes a TensorProto into `t`; `depth` is the group nesting left at its level.
  Status DecodeTensor(TensorFields* t, int depth, std::string_view where) {
    while (true) {
      const uint32_t tag = ReadTagStrict(in_);
      if (tag == 0) {
        if (in_->ConsumedEntireMessage()) return Status::Ok();
        return Malformed(fmt::format("malformed field tag in {}", where));
      }
      const int field = WireFormatLite::GetTagFieldNumber(tag);
      const auto wire = WireFormatLite::GetTagWireType(tag);
      if (wire == WireFormatLite::WIRETYPE_END_GROUP) {
        return Malformed(fmt::format("unexpected end-group tag in {}", where));
      }
      if (field == 1 && wire == WireFormatLite::WIRETYPE_VARINT) {
        uint64_t dim = 0;
        if (!in_->ReadVarint64(&dim)) return Malformed("malformed dim");
        NUMPROBE_RETURN_IF_ERROR(AddDim(t, dim));
      } else if (field == 1 && wire == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
        // Packed dims (proto3 writers); proto2 MindSpore writes them unpacked.
        NUMPROBE_ASSIGN_OR_RETURN(const int length, ReadLength("packed dims"));
        const auto limit = in_->PushLimit(length);
        while (in_->BytesUntilLimit() > 0) {
          uint64_t dim = 0;
          if (!in_->ReadVarint64(&dim)) return Malformed("malformed packed dim");
          NUMPROBE_RETURN_IF_ERROR(AddDim(t, dim));
        }
        in_->PopLimit(limit);
      } else if (field == 2 && wire == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
        NUMPROBE_ASSIGN_OR_RETURN(const int length, ReadLength("tensor_type"));
        if (static_cast<uint64_t>(length) > kCkptMaxTypeBytes) {
          return Status::OutOfRange(fmt::format("{}: tensor_type of {} bytes exceeds the cap of {}",
                                                Where(index_, value_.offset, value_.tag), length,
                                                kCkptMaxTypeBytes));
        }
        if (!in_->ReadString(&t->type, length)) return Malformed("truncated tensor_type");
        t->has_type = true;
      } else if (field == 3 && wire == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
        NUMPROBE_ASSIGN_OR_RETURN(const int length, ReadLength("tensor_content"));
        t->content = {base_ + in_->CurrentPosition(), static_cast<size_t>(length)};
        if (!in_->Skip(length)) return Malformed("truncated tensor_content");
        t->has_content = true;
      } else {
        NUMPROBE_RETURN_IF_ERROR(SkipUnknown(tag, depth));
      }
    }
  }

  CodedInputStream* in_;
  const std::byte* base_;
  uint64_t base_offset_;
  size_t index_;
  CkptRawValue value_;
  TensorFields tensor_;
  bool has_tag_ = false;
  bool has_maptensor_ = false;
};

}  // namespace

std::string CkptValueWhere(size_t index, uint64_t offset, std::string_view tag) {
  if (tag.empty()) return fmt::format("value {} at offset {}", index, offset);
  return fmt::format("value {} at offset {} ({})", index, offset, QuoteCkptText(tag));
}

std::string QuoteCkptText(std::string_view text) {
  constexpr size_t kMaxShown = 200;
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f || c == '\'' || c == '\\') {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > kMaxShown) out += "...";
  out += "'";
  return out;
}

namespace {

// Every MindSpore writer starts with a Checkpoint.value record. Cipher text (AES-GCM, AES-CBC,
// SM4-CBC) and other formats almost never do, and would otherwise fail somewhere arbitrary.
Status CheckFirstByte(std::span<const std::byte> bytes) {
  if (static_cast<uint8_t>(bytes[0]) != kValueTag) {
    return Status::Corrupt(fmt::format(
        "file looks encrypted or is not a MindSpore checkpoint: it starts with byte 0x{:02x}, a "
        "checkpoint starts with 0x0a",
        static_cast<uint8_t>(bytes[0])));
  }
  return Status::Ok();
}

// Decodes the top-level record at `*pos` (< bytes.size()) and moves `*pos` past it: a
// Checkpoint.value is appended to `values`, an unknown field is skipped.
Status DecodeRecord(std::span<const std::byte> bytes, uint64_t* pos,
                    std::vector<CkptRawValue>* values) {
  const uint64_t left = bytes.size() - *pos;
  // CodedInputStream counts in int: each record gets its own stream, so the file may exceed
  // 2 GiB while each record stays below it (MindSpore's records are at most 512 MiB of data).
  const int window = static_cast<int>(std::min<uint64_t>(left, INT_MAX));
  const std::byte* base = bytes.data() + *pos;
  CodedInputStream in(reinterpret_cast<const uint8_t*>(base), window);
  in.SetTotalBytesLimit(window);
  in.SetRecursionLimit(kCkptMaxNesting);
  const uint32_t tag = ReadTagStrict(&in);
  if (tag == 0) {
    return Status::Corrupt(fmt::format("malformed field tag at offset {}", *pos));
  }
  if (WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_END_GROUP) {
    return Status::Corrupt(fmt::format("unexpected end-group tag at offset {}", *pos));
  }
  if (tag != kValueTag) {
    // Unknown top-level field (or field 1 with another wire type, which protobuf also treats
    // as unknown): skipped.
    if (!SkipUnknownField(&in, tag, kCkptMaxNesting)) {
      return Status::Corrupt(
          fmt::format("malformed, truncated or too deeply nested unknown field {} at offset {}",
                      WireFormatLite::GetTagFieldNumber(tag), *pos));
    }
    *pos += static_cast<uint64_t>(in.CurrentPosition());
    return Status::Ok();
  }
  const size_t index = values->size();
  const int after_tag = in.CurrentPosition();
  uint64_t length = 0;
  if (!in.ReadVarint64(&length) || in.CurrentPosition() - after_tag > kMaxLengthBytes) {
    return Status::Corrupt(fmt::format("{}: malformed length", Where(index, *pos, "")));
  }
  const auto header = static_cast<uint64_t>(in.CurrentPosition());
  if (length > left - header) {
    return Status::Corrupt(fmt::format("{}: length {} exceeds the {} bytes left in the file",
                                       Where(index, *pos, ""), length, left - header));
  }
  if (length > static_cast<uint64_t>(window) - header || length > kMaxLength) {
    return Status::OutOfRange(fmt::format("{}: length {} exceeds protobuf's 2 GiB message limit",
                                          Where(index, *pos, ""), length));
  }
  const auto limit = in.PushLimit(static_cast<int>(length));
  ValueDecoder decoder(&in, base, *pos, index, *pos);
  NUMPROBE_ASSIGN_OR_RETURN(CkptRawValue value, decoder.Decode());
  in.PopLimit(limit);
  values->push_back(std::move(value));
  *pos += header + length;
  return Status::Ok();
}

}  // namespace

Result<std::vector<CkptRawValue>> DecodeCkptValues(std::span<const std::byte> bytes) {
  std::vector<CkptRawValue> values;
  if (bytes.empty()) return values;
  NUMPROBE_RETURN_IF_ERROR(CheckFirstByte(bytes));
  uint64_t pos = 0;
  while (pos < bytes.size()) NUMPROBE_RETURN_IF_ERROR(DecodeRecord(bytes, &pos, &values));
  return values;
}

Result<CkptRawValue> DecodeFirstCkptValue(std::span<const std::byte> bytes) {
  if (bytes.empty()) return Status::Corrupt("empty input: no first value");
  NUMPROBE_RETURN_IF_ERROR(CheckFirstByte(bytes));
  std::vector<CkptRawValue> values;
  uint64_t pos = 0;
  NUMPROBE_RETURN_IF_ERROR(DecodeRecord(bytes, &pos, &values));
  return std::move(values.front());  // byte 0 is the value tag: the record is a value
}

Result<std::vector<CkptReferenceValue>> DecodeCkptValuesReference(
    std::span<const std::byte> bytes) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return Status::OutOfRange("the generated parser takes at most 2 GiB");
  }
  const int size = static_cast<int>(bytes.size());
  numprobe::mindspore::Checkpoint checkpoint;
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), size);
  in.SetTotalBytesLimit(size);
  in.SetRecursionLimit(kCkptMaxNesting);
  // Partial parse + IsInitialized: the same result as ParseFromCodedStream without its log line.
  if (!checkpoint.ParsePartialFromCodedStream(&in) || !in.ConsumedEntireMessage()) {
    return Status::Corrupt("protobuf cannot parse the checkpoint");
  }
  if (!checkpoint.IsInitialized()) {
    return Status::Corrupt("checkpoint lacks required fields: " +
                           checkpoint.InitializationErrorString());
  }
  std::vector<CkptReferenceValue> values;
  values.reserve(static_cast<size_t>(checkpoint.value_size()));
  for (const auto& v : checkpoint.value()) {
    CkptReferenceValue out;
    out.tag = v.tag();
    out.has_tensor = v.has_tensor();
    out.has_maptensor = v.has_maptensor();
    if (v.has_tensor()) {
      out.dims.assign(v.tensor().dims().begin(), v.tensor().dims().end());
      out.tensor_type = v.tensor().tensor_type();
      out.content = v.tensor().tensor_content();
    }
    values.push_back(std::move(out));
  }
  return values;
}

bool SameCkptValues(const std::vector<CkptRawValue>& walked,
                    const std::vector<CkptReferenceValue>& reference) {
  if (walked.size() != reference.size()) return false;
  for (size_t i = 0; i < walked.size(); ++i) {
    const CkptRawValue& a = walked[i];
    const CkptReferenceValue& b = reference[i];
    if (a.tag != b.tag || a.has_tensor != b.has_tensor || b.has_maptensor) return false;
    if (!a.has_tensor) continue;
    if (a.dims != b.dims || a.tensor_type != b.tensor_type) return false;
    if (a.content.size() != b.content.size()) return false;
    if (!a.content.empty() &&
        std::memcmp(a.content.data(), b.content.data(), b.content.size()) != 0) {
      return false;
    }
  }
  return true;
}

}  // namespace numprobe::detail
