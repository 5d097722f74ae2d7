// Test helper: builds pickle byte streams opcode by opcode (never by pickling objects), plus the
// torch.save shapes the .pt tests need (a persistent id, a _rebuild_tensor_v2/v3 call).
#ifndef NUMPROBE_UNIT_FORMATS_PICKLE_BUILDER_H_
#define NUMPROBE_UNIT_FORMATS_PICKLE_BUILDER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace numprobe::testing {

class PickleBuilder {
 public:
  PickleBuilder& op(int c) {
    s_ += static_cast<char>(c);
    return *this;
  }
  PickleBuilder& raw(std::string_view x) {
    s_ += x;
    return *this;
  }
  PickleBuilder& le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) s_ += static_cast<char>((v >> (8 * i)) & 0xff);
    return *this;
  }
  PickleBuilder& proto(int p) { return op(0x80).op(p); }
  // BINUNICODE
  PickleBuilder& bu(std::string_view x) { return op('X').le(x.size(), 4).raw(x); }
  // BININT1
  PickleBuilder& k(int v) { return op('K').op(v); }
  // The smallest int opcode for v (BININT1, BININT2, BININT, LONG1).
  PickleBuilder& i(int64_t v) {
    if (v >= 0 && v < 256) return k(static_cast<int>(v));
    if (v >= 0 && v < 65536) return op('M').le(static_cast<uint64_t>(v), 2);
    if (v >= INT32_MIN && v <= INT32_MAX) return op('J').le(static_cast<uint64_t>(v), 4);
    return op(0x8a).op(8).le(static_cast<uint64_t>(v), 8);
  }
  PickleBuilder& global(std::string_view m, std::string_view n) {
    return op('c').raw(m).raw("\n").raw(n).raw("\n");
  }
  PickleBuilder& ints(const std::vector<int64_t>& v) {
    op('(');
    for (int64_t x : v) i(x);
    return op('t');
  }
  PickleBuilder& ordered_dict() { return global("collections", "OrderedDict").op(')').op('R'); }
  PickleBuilder& stop() { return op('.'); }

  // ('storage', torch.<type>, key, location, numel) BINPERSID.
  PickleBuilder& storage(std::string_view type, std::string_view key, std::string_view location,
                         int64_t numel) {
    op('(').bu("storage").global("torch", type).bu(key).bu(location).i(numel);
    return op('t').op('Q');
  }
  // _rebuild_tensor_v2(storage, offset, size, stride, False, OrderedDict()[, metadata]);
  // `metadata` is pickle bytes for one value, or empty.
  PickleBuilder& tensor_v2(std::string_view type, std::string_view key, int64_t numel,
                           int64_t offset, const std::vector<int64_t>& shape,
                           const std::vector<int64_t>& stride, std::string_view location = "cpu",
                           std::string_view metadata = {}) {
    global("torch._utils", "_rebuild_tensor_v2").op('(');
    storage(type, key, location, numel).i(offset).ints(shape).ints(stride).op(0x89).ordered_dict();
    if (!metadata.empty()) raw(metadata);
    return op('t').op('R');
  }
  // _rebuild_tensor_v3(UntypedStorage, offset, size, stride, False, OrderedDict(), dtype).
  PickleBuilder& tensor_v3(std::string_view dtype, std::string_view key, int64_t nbytes,
                           int64_t offset, const std::vector<int64_t>& shape,
                           const std::vector<int64_t>& stride) {
    global("torch._utils", "_rebuild_tensor_v3").op('(');
    storage("UntypedStorage", key, "cpu", nbytes).i(offset).ints(shape).ints(stride).op(0x89);
    return ordered_dict().global("torch", dtype).op('t').op('R');
  }
  const std::string& str() const { return s_; }

 private:
  std::string s_;
};

}  // namespace numprobe::testing

#endif  // NUMPROBE_UNIT_FORMATS_PICKLE_BUILDER_H_
