// CRC-32, the one checksum the file formats numprobe reads and writes use: zlib's crc32(),
// Python's zlib.crc32 and binascii.crc32 (CRC-32/ISO-HDLC: reflected polynomial 0xEDB88320,
// initial value and final xor 0xFFFFFFFF). Zip entries, MindSpore's .ckpt "crc_num" trailer and
// safetensors "crc_num" (binascii.crc32 in MindSpore's serialization.py) and msprobe's "md5"
// field (zlib.crc32 of a tensor's bytes, or of str(value)) are all this CRC. None of them is
// CRC-32C (the Castagnoli polynomial), so numprobe has no CRC-32C.
#ifndef NUMPROBE_CORE_CRC32_H_
#define NUMPROBE_CORE_CRC32_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace numprobe::detail {

// The CRC-32 of `bytes` continuing from `crc`, the CRC-32 of the bytes before them (0 for none),
// as zlib's crc32(crc, bytes, size) does. libdeflate's code (carry-less multiplies) when built
// with NUMPROBE_WITH_LIBDEFLATE, else zlib's with NUMPROBE_WITH_ZLIB, else Crc32Table.
uint32_t Crc32(std::span<const std::byte> bytes, uint32_t crc = 0);
uint32_t Crc32(std::string_view text, uint32_t crc = 0);

// The same CRC computed with a 256-entry table, one byte at a time: what Crc32 is without zlib
// (always built, so that the tests check both against each other).
uint32_t Crc32Table(std::span<const std::byte> bytes, uint32_t crc = 0);

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_CRC32_H_
