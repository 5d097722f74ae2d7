#include "core/sha256.h"

#include <algorithm>

#include <fmt/format.h>

#ifdef NUMPROBE_WITH_OPENSSL
#include <openssl/evp.h>
#endif

namespace numprobe::detail {

#ifdef NUMPROBE_WITH_OPENSSL

struct Sha256::State {
  EVP_MD_CTX* ctx = nullptr;
  Status status;
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
  state_->ctx = EVP_MD_CTX_new();
  if (state_->ctx == nullptr || EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr) != 1) {
    state_->status = Status::Internal("SHA-256: cannot set up a digest context");
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(state_->ctx); }

void Sha256::Update(std::string_view bytes) {
  if (!state_->status.ok() || bytes.empty()) return;
  if (EVP_DigestUpdate(state_->ctx, bytes.data(), bytes.size()) != 1) {
    state_->status = Status::Internal("SHA-256: update failed");
  }
}

Result<Sha256::Digest> Sha256::Finish() {
  NUMPROBE_RETURN_IF_ERROR(state_->status);
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(state_->ctx, out, &length) != 1 || length != 32) {
    return Status::Internal("SHA-256: final failed");
  }
  Digest digest;
  std::copy(out, out + 32, digest.begin());
  return digest;
}

Result<std::string> Sha256::Base64(std::string_view bytes) {
  Sha256 sha;
  sha.Update(bytes);
  NUMPROBE_ASSIGN_OR_RETURN(const Digest digest, sha.Finish());
  unsigned char text[48] = {};  // 4 * ceil(32 / 3) + NUL
  const int n = EVP_EncodeBlock(text, digest.data(), static_cast<int>(digest.size()));
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(n));
}

#else

struct Sha256::State {};
Sha256::Sha256() : state_(std::make_unique<State>()) {}
Sha256::~Sha256() = default;
void Sha256::Update(std::string_view /*bytes*/) {}
Result<Sha256::Digest> Sha256::Finish() {
  return Status::Unsupported("SHA-256 needs a build with NUMPROBE_WITH_OPENSSL (libssl-dev)");
}
Result<std::string> Sha256::Base64(std::string_view /*bytes*/) {
  return Status::Unsupported("SHA-256 needs a build with NUMPROBE_WITH_OPENSSL (libssl-dev)");
}

#endif

bool Sha256::Available() {
#ifdef NUMPROBE_WITH_OPENSSL
  return true;
#else
  return false;
#endif
}

std::string Sha256::HexOf(const Digest& digest) {
  std::string hex;
  hex.reserve(64);
  for (const uint8_t b : digest) hex += fmt::format("{:02x}", b);
  return hex;
}

Result<std::string> Sha256::Hex(std::string_view bytes) {
  Sha256 sha;
  sha.Update(bytes);
  NUMPROBE_ASSIGN_OR_RETURN(const Digest digest, sha.Finish());
  return HexOf(digest);
}

}  // namespace numprobe::detail
