// core/sha256: FIPS 180-2's test vectors, in hex and in the base64 form CSP hashes use, whole and
// fed in pieces.
#include "core/sha256.h"

#include <string>

#include <gtest/gtest.h>

namespace numprobe::detail {
namespace {

TEST(Sha256Test, KnownDigests) {
  if (!Sha256::Available()) GTEST_SKIP() << "a build without OpenSSL";
  EXPECT_EQ(*Sha256::Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(*Sha256::Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // echo -n abc | openssl dgst -sha256 -binary | base64
  EXPECT_EQ(*Sha256::Base64("abc"), "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=");
  const std::string text = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  Sha256 pieces;
  for (size_t i = 0; i < text.size(); i += 7) pieces.Update(std::string_view(text).substr(i, 7));
  auto digest = pieces.Finish();
  ASSERT_TRUE(digest.ok());
  EXPECT_EQ(Sha256::HexOf(*digest),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256Test, WithoutOpenSslEveryDigestIsUnsupported) {
  if (Sha256::Available()) GTEST_SKIP() << "a build with OpenSSL";
  EXPECT_EQ(Sha256::Hex("abc").error().code(), ErrorCode::kUnsupported);
  EXPECT_EQ(Sha256::Base64("abc").error().code(), ErrorCode::kUnsupported);
}

}  // namespace
}  // namespace numprobe::detail
