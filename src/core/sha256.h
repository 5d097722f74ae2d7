// SHA-256 (OpenSSL's EVP), the one implementation for config-check's fingerprints and the
// report's Content-Security-Policy script hash. In a build without OpenSSL every digest is
// kUnsupported.
#ifndef NUMPROBE_CORE_SHA256_H_
#define NUMPROBE_CORE_SHA256_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "numprobe/result.h"

namespace numprobe::detail {

class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  // Adds bytes; an error sticks and is returned by Finish().
  void Update(std::string_view bytes);
  Result<Digest> Finish();

  // False in a build without OpenSSL.
  static bool Available();
  // The digest of `bytes` as 64 lower-case hex digits, and as standard base64 (CSP's form).
  static Result<std::string> Hex(std::string_view bytes);
  static Result<std::string> Base64(std::string_view bytes);
  static std::string HexOf(const Digest& digest);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_SHA256_H_
