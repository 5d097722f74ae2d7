// Fuzz target: the restricted pickle interpreter alone, on raw bytes, in strict and inert mode.
// A successful run is then read back through every accessor so that a malformed arena (a bad
// index, a wrong kind) would show up under the sanitizers.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "formats/pickle.h"

namespace {

// Results are stored here so that the compiler cannot drop the reads.
volatile size_t g_sink = 0;

void Walk(const numprobe::pickle::Pickle& p) {
  using numprobe::pickle::Kind;
  using numprobe::pickle::kNoRef;
  size_t sink = 0;
  for (numprobe::pickle::Ref r = 0; r < p.size(); ++r) {
    sink += p.Describe(r).size();
    sink += p.text(r).size();
    for (numprobe::pickle::Ref item : p.items(r)) sink += item < p.size() ? 1 : 0;
    switch (p.kind(r)) {
      case Kind::kCall:
      case Kind::kObject:
        for (auto part : {p.callable(r), p.args(r), p.state(r), p.object_list(r), p.object_dict(r),
                          p.object_kwargs(r)}) {
          if (part != kNoRef && part >= p.size()) __builtin_trap();
        }
        break;
      case Kind::kPersistentId:
        if (p.persistent_id(r) >= p.size()) __builtin_trap();
        break;
      case Kind::kGlobal:
        sink += p.global_dtype(r).has_value() ? 1 : 0;
        break;
      default:
        break;
    }
  }
  if (p.root() >= p.size()) __builtin_trap();
  g_sink = sink;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto bytes = std::as_bytes(std::span(data, size));
  for (bool inert : {false, true}) {
    numprobe::pickle::Options options;
    options.inert = inert;
    auto r = numprobe::pickle::Unpickle(bytes, options);
    if (r.ok()) {
      Walk(*r);
    } else if (r.error().message().find('\n') != std::string::npos) {
      __builtin_trap();  // error messages are one line
    }
  }
  return 0;
}
