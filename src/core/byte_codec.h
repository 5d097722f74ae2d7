// Little-endian bytes of numbers and texts, written and read back exactly (doubles as their bits,
// NaN and Inf too): how numprobe moves its own structures between processes (the cluster layer).
// The reader checks every length against the bytes left before it allocates, and remembers the
// first problem (ok() false) instead of failing each call.
#ifndef NUMPROBE_CORE_BYTE_CODEC_H_
#define NUMPROBE_CORE_BYTE_CODEC_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace numprobe::detail {

class ByteWriter {
 public:
  void U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void Bool(bool v) { out_.push_back(v ? '\1' : '\0'); }
  void F64(double v) { U64(std::bit_cast<uint64_t>(v)); }
  void Str(std::string_view v) {
    U64(v.size());
    out_.append(v);
  }
  void Strs(const std::vector<std::string>& v) {
    U64(v.size());
    for (const std::string& s : v) Str(s);
  }
  void OptI64(const std::optional<int64_t>& v) {
    Bool(v.has_value());
    if (v) I64(*v);
  }
  void OptStr(const std::optional<std::string>& v) {
    Bool(v.has_value());
    if (v) Str(*v);
  }

  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}
  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == bytes_.size(); }
  // What the caller found invalid: every later read fails too.
  void Fail() { ok_ = false; }

  uint64_t U64() {
    if (!Need(8)) return 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) {
      v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes_[pos_ + i])) << (8 * i);
    }
    pos_ += 8;
    return v;
  }
  int64_t I64() { return static_cast<int64_t>(U64()); }
  int Int() {
    const int64_t v = I64();
    if (v < INT32_MIN || v > INT32_MAX) ok_ = false;
    return ok_ ? static_cast<int>(v) : 0;
  }
  uint32_t U32() {
    const uint64_t v = U64();
    if (v > UINT32_MAX) ok_ = false;
    return ok_ ? static_cast<uint32_t>(v) : 0;
  }
  bool Bool() {
    if (!Need(1)) return false;
    const char c = bytes_[pos_++];
    if (c != '\0' && c != '\1') ok_ = false;
    return c == '\1';
  }
  double F64() { return std::bit_cast<double>(U64()); }
  // An enum stored as an integer below `count`.
  template <typename E>
  E Enum(uint64_t count) {
    const uint64_t v = U64();
    if (v >= count) ok_ = false;
    return ok_ ? static_cast<E>(v) : E{};
  }
  std::string Str() {
    const uint64_t size = U64();
    if (!Need(size)) return {};
    std::string s(bytes_.substr(pos_, size));
    pos_ += size;
    return s;
  }
  // A count of elements of at least `min_bytes` each.
  size_t Count(size_t min_bytes) {
    const uint64_t n = U64();
    if (!ok_ || n > (bytes_.size() - pos_) / min_bytes) {
      ok_ = false;
      return 0;
    }
    return static_cast<size_t>(n);
  }
  std::vector<std::string> Strs() {
    std::vector<std::string> v(Count(8));
    for (std::string& s : v) s = Str();
    return v;
  }
  std::optional<int64_t> OptI64() {
    if (!Bool()) return std::nullopt;
    return I64();
  }
  std::optional<std::string> OptStr() {
    if (!Bool()) return std::nullopt;
    return Str();
  }

 private:
  bool Need(uint64_t n) {
    if (!ok_ || n > bytes_.size() - pos_) {
      ok_ = false;
      return false;
    }
    return true;
  }

  std::string_view bytes_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_BYTE_CODEC_H_
