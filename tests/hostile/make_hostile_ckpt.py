#!/usr/bin/env python3
"""Writes the hostile MindSpore .ckpt corpus and the fuzz seeds, byte by byte (no MindSpore).

  tests/hostile/ckpt/*.ckpt + manifest.tsv   malformed files: `numprobe inspect` must exit 3 with
                                             stderr naming the problem (run_hostile.py checks it)
  fuzz/corpus/ckpt/*.ckpt                    valid files covering each quirk, seeds for fuzz_ckpt

The bytes follow mindspore/ccsrc/utils/checkpoint.proto (proto2):
  Checkpoint { repeated Value value = 1; }
  Value { required string tag = 1; oneof { TensorProto tensor = 2; MapTensorProto maptensor = 3; } }
  TensorProto { repeated int64 dims = 1; required string tensor_type = 2;
                required bytes tensor_content = 3; }
Run from anywhere: python3 tests/hostile/make_hostile_ckpt.py. Output is deterministic.
"""
import os
import random
import shutil
import struct
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOSTILE = os.path.join(ROOT, "tests", "hostile", "ckpt")
SEEDS = os.path.join(ROOT, "fuzz", "corpus", "ckpt")


def varint(v):
    v &= (1 << 64) - 1  # negative int64 -> 10-byte two's complement varint
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def ld(field, payload):
    """A length-delimited field."""
    return key(field, 2) + varint(len(payload)) + payload


def vint(field, value):
    return key(field, 0) + varint(value)


def tensor(dims, ttype, content, packed=False):
    if packed:
        d = ld(1, b"".join(varint(x) for x in dims)) if dims else b""
    else:
        d = b"".join(vint(1, x) for x in dims)
    return d + ld(2, ttype.encode()) + ld(3, content)


def value(tag, tensor_msg):
    """A top-level Checkpoint.value record."""
    return ld(1, ld(1, tag.encode()) + ld(2, tensor_msg))


def record(tag, dims, ttype, content, packed=False):
    return value(tag, tensor(dims, ttype, content, packed))


def crc_trailer(records, crc=None):
    if crc is None:
        crc = zlib.crc32(records)
    return b"crc_num" + crc.to_bytes(10, "big")


def f32(*xs):
    return struct.pack("<%df" % len(xs), *xs)


def utf32(text, width):
    return text.ljust(width, "\0").encode("utf-32-le")


GOOD = record("conv1.weight", [2, 3], "Float32", f32(1, 2, 3, 4, 5, 6)) + record(
    "conv1.bias", [2], "Float32", f32(0.5, -0.5))


def hostile_cases():
    """(file name, bytes, phrase that stderr must contain)."""
    rng = random.Random(20261130)
    cases = []

    def add(name, data, phrase):
        cases.append((name, data, phrase))

    first_len = len(record("conv1.weight", [2, 3], "Float32", f32(1, 2, 3, 4, 5, 6)))
    # Truncation at several points.
    add("truncated_after_first_byte.ckpt", GOOD[:1], "malformed length")
    add("truncated_in_tag.ckpt", GOOD[:8], "exceeds the 6 bytes left in the file")
    add("truncated_in_content.ckpt", GOOD[:first_len - 3], "bytes left in the file")
    add("truncated_second_value.ckpt", GOOD[:first_len + 5], "value 1 at offset %d" % first_len)
    # The outer length agrees with the bytes present, but tensor_content claims more.
    inner = ld(1, b"w") + ld(2, vint(1, 4) + ld(2, b"Float32") + key(3, 2) + varint(100) + f32(1))
    add("truncated_content_inner.ckpt", ld(1, inner),
        "tensor_content length 100")
    # Length prefixes larger than the file, up to 1 GiB.
    add("length_beyond_file.ckpt", key(1, 2) + varint(1000) + GOOD[2:40],
        "length 1000 exceeds the 38 bytes left in the file")
    add("record_declares_1gib.ckpt", key(1, 2) + varint(1 << 30) + GOOD[2:40],
        "length 1073741824 exceeds")
    huge = ld(1, b"big") + ld(2, ld(2, b"Int8") + key(3, 2) + varint(1 << 30) + b"xyz")
    add("content_declares_1gib.ckpt", ld(1, huge), "tensor_content length 1073741824")
    add("length_varint_too_long.ckpt", key(1, 2) + b"\xff" * 11, "malformed length")
    # Dims.
    add("dims_product_overflow.ckpt", record("w", [1 << 40, 1 << 40], "Float32", f32(1)),
        "overflow 64 bits")
    add("dims_bytes_overflow.ckpt", record("w", [1 << 62], "Float64", b""), "overflow 64 bits")
    add("negative_dim.ckpt", record("w", [2, -1], "Float32", f32(1, 2)),
        "negative dim -1 at index 1")
    add("too_many_dims.ckpt", value("w", b"".join(vint(1, 1) for _ in range(65)) +
                                    ld(2, b"Int8") + ld(3, b"x")), "more than 64 dims")
    add("content_size_mismatch.ckpt", record("fc.weight", [2, 3], "Float32", b"\0" * 20),
        "need 24 bytes but tensor_content has 20")
    add("scalar_dims0_two_elements.ckpt", record("lr", [0], "Float32", f32(1, 2)),
        "need 0 bytes but tensor_content has 8")
    # Types.
    add("unknown_tensor_type.ckpt", record("w", [1], "Float128", b"\0" * 16),
        "unknown tensor_type 'Float128'")
    add("int4_tensor.ckpt", record("q.weight", [4], "Int4", b"\x12\x34"), "tensor_type Int4")
    add("maptensor.ckpt", ld(1, ld(1, b"emb") + ld(3, ld(1, tensor([1], "int64", b"\0" * 8)))),
        "MapTensor")
    add("str_bad_utf32.ckpt", record("note", [0], "str", struct.pack("<I", 0x110000)),
        "invalid code point")
    add("str_odd_size.ckpt", record("note", [0], "str", b"abcde"), "not UTF-32")
    # Missing required fields.
    add("missing_tag.ckpt", ld(1, ld(2, tensor([1], "Int8", b"x"))), "missing required field tag")
    add("missing_tensor_type.ckpt", value("w", vint(1, 1) + ld(3, b"x")),
        "missing required field tensor_type")
    add("missing_tensor_content.ckpt", value("w", vint(1, 1) + ld(2, b"Int8")),
        "missing required field tensor_content")
    add("value_without_tensor.ckpt", ld(1, ld(1, b"w")), "value has no tensor")
    # Structure.
    add("split_not_consecutive.ckpt",
        record("w", [1], "Float32", f32(1)) + record("b", [], "Int8", b"\1") +
        record("w", [1], "Float32", f32(2)), "must be consecutive")
    add("split_parts_disagree.ckpt",
        record("w", [2], "Float32", f32(1)) + record("w", [1, 2], "Float32", f32(2)),
        "part 1 of a split tensor")
    add("nested_groups.ckpt", ld(1, ld(1, b"g") + key(13, 3) * 5000), "too deeply nested")
    add("nested_groups_top_level.ckpt", GOOD + key(12, 3) * 5000, "too deeply nested")
    add("end_group_top_level.ckpt", GOOD + key(5, 4), "end-group")
    add("garbage_in_value.ckpt", ld(1, b"\xff" * 12), "malformed field tag")
    add("tag_too_long.ckpt", record("t" * 70000, [], "Int8", b"\1"), "exceeds the cap")
    add("tensor_type_too_long.ckpt", record("w", [], "F" * 300, b"\1"), "exceeds the cap")
    add("empty.ckpt", b"", "empty file")
    # Encrypted or foreign.
    gcm = struct.pack("<I", 0x7F3A5ED8) + bytes(rng.getrandbits(8) for _ in range(200))
    add("encrypted_aes_gcm.ckpt", gcm, "file looks encrypted or is not a MindSpore checkpoint")
    cbc = struct.pack("<I", 0x7F3A5ED9) + bytes(rng.getrandbits(8) for _ in range(200))
    add("encrypted_aes_cbc.ckpt", cbc, "AES-CBC")
    noise = bytearray(rng.getrandbits(8) for _ in range(4096))
    noise[0] = 0xB7  # random cipher text without a magic; anything but 0x0A
    add("random_bytes.ckpt", bytes(noise), "file looks encrypted or is not a MindSpore checkpoint")
    add("gguf_renamed.ckpt", b"GGUF\x03\x00\x00\x00" + b"\0" * 16, "looks encrypted")
    # Trailers.
    add("crc_mismatch.ckpt", GOOD + crc_trailer(GOOD, zlib.crc32(GOOD) ^ 0x80),
        "crc_num trailer")
    add("crc_wider_than_32_bits.ckpt", GOOD + b"crc_num" + b"\x01" + b"\0" * 9,
        "wider than 32 bits")
    add("crc_trailer_truncated.ckpt", GOOD + crc_trailer(GOOD)[:-1], "unknown field 12")
    add("crc_trailer_only.ckpt", crc_trailer(b""), "no values before the crc_num trailer")
    return cases


def seed_files():
    """Valid checkpoints covering each quirk the reader handles."""
    seeds = {}
    seeds["two_tensors.ckpt"] = GOOD
    seeds["with_crc.ckpt"] = GOOD + crc_trailer(GOOD)
    every = b""
    for i, (ttype, size) in enumerate([("Float16", 2), ("BFloat16", 2), ("Float64", 8),
                                       ("Int8", 1), ("Int16", 2), ("Int32", 4), ("Int64", 8),
                                       ("UInt8", 1), ("Uint16", 2), ("UInt32", 4), ("Uint64", 8),
                                       ("Bool", 1)]):
        every += record("t%d" % i, [2], ttype, bytes(range(i, i + 2 * size)))
    seeds["every_type.ckpt"] = every
    content = f32(*range(12))
    seeds["split.ckpt"] = (record("w", [3, 4], "Float32", content[:17]) +
                           record("w", [3, 4], "Float32", content[17:40]) +
                           record("w", [3, 4], "Float32", content[40:]))
    seeds["scalars.ckpt"] = (record("new", [], "Float32", f32(0.125)) +
                             record("old", [0], "Int32", struct.pack("<i", 7)) +
                             record("empty", [0], "Float16", b""))
    seeds["str_and_append_info.ckpt"] = (record("epoch_num", [], "Int32", struct.pack("<i", 5)) +
                                         record("note", [0], "str", utf32("h\u00e9llo", 6)))
    unknown = (vint(9, 1) + ld(1, b"x") + ld(2, key(7, 5) + b"\1\2\3\4" +
                                             tensor([2, 2], "Int8", b"abcd", packed=True)))
    seeds["unknown_fields_packed_dims.ckpt"] = ld(1, unknown) + vint(4, 1) + ld(6, b"junk")
    return seeds


def main():
    shutil.rmtree(HOSTILE, ignore_errors=True)
    os.makedirs(HOSTILE)
    lines = ["# Generated by tests/hostile/make_hostile_ckpt.py: FILE<TAB>EXIT<TAB>PHRASE"]
    for name, data, phrase in hostile_cases():
        with open(os.path.join(HOSTILE, name), "wb") as f:
            f.write(data)
        lines.append("%s\t3\t%s" % (name, phrase))
    with open(os.path.join(HOSTILE, "manifest.tsv"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    shutil.rmtree(SEEDS, ignore_errors=True)
    os.makedirs(SEEDS)
    for name, data in seed_files().items():
        with open(os.path.join(SEEDS, name), "wb") as f:
            f.write(data)
    print("wrote %d hostile files to %s and %d seeds to %s" %
          (len(lines) - 1, HOSTILE, len(seed_files()), SEEDS))


if __name__ == "__main__":
    main()
