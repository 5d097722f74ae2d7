// core/crc32: the CRC-32 of zlib.crc32 / binascii.crc32. Expected values printed by CPython 3.11
// (zlib.crc32); "123456789" is the CRC catalogue's check value of CRC-32/ISO-HDLC.
#include "core/crc32.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace numprobe::detail {
namespace {

std::span<const std::byte> Bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

TEST(Crc32Test, KnownVectors) {
  EXPECT_EQ(Crc32(std::string_view()), 0u);
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926u);
  EXPECT_EQ(Crc32("The quick brown fox jumps over the lazy dog"), 0x414FA339u);
  EXPECT_EQ(Crc32(std::string(32, '\0')), 0x190A55ADu);
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  EXPECT_EQ(Crc32(all), 0x29058C73u);
  EXPECT_EQ(Crc32Table(Bytes(all)), 0x29058C73u);
  EXPECT_EQ(Crc32Table(Bytes("123456789")), 0xCBF43926u);
}

TEST(Crc32Test, ContinuesFromAPreviousCrc) {
  const std::string text = "The quick brown fox jumps over the lazy dog";
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    const uint32_t first = Crc32(std::string_view(text).substr(0, cut));
    EXPECT_EQ(Crc32(std::string_view(text).substr(cut), first), 0x414FA339u) << cut;
    const uint32_t table_first = Crc32Table(Bytes(text.substr(0, cut)));
    EXPECT_EQ(Crc32Table(Bytes(text.substr(cut)), table_first), 0x414FA339u) << cut;
  }
  // Nothing more to add: the CRC so far, also for an empty span with no data pointer.
  EXPECT_EQ(Crc32(std::span<const std::byte>(), 0x1234u), 0x1234u);
  EXPECT_EQ(Crc32Table(std::span<const std::byte>(), 0x1234u), 0x1234u);
}

TEST(Crc32Test, TableAgreesWithTheBuiltImplementation) {
  std::mt19937 rng(7);
  // Sizes around the vector loops' strides (libdeflate folds 16-256 bytes at a time), a
  // tensor-sized buffer, and starts off any alignment.
  for (const size_t size : std::initializer_list<size_t>{1, 3, 15, 16, 17, 63, 64, 65, 255, 256,
                                                         257, 4096, 100003, size_t{4} << 20}) {
    std::vector<std::byte> data(size + 7);
    for (std::byte& b : data) b = static_cast<std::byte>(rng());
    for (const size_t offset : {size_t{0}, size_t{1}, size_t{7}}) {
      const std::span<const std::byte> bytes(data.data() + offset, size);
      EXPECT_EQ(Crc32(bytes), Crc32Table(bytes)) << size << " at +" << offset;
    }
  }
}

}  // namespace
}  // namespace numprobe::detail
