#!/usr/bin/env python3
"""Writes the hostile .npy and .npz corpus: tests/hostile/npy/ and tests/hostile/npz/, each with
its manifest.tsv (FILE <TAB> 3 <TAB> phrase stderr must contain <TAB> comment).

Every file breaks one rule: truncation at each section boundary, lying lengths, overflowing
shapes, forbidden descrs (object/pickle, structured, strings), bad header literals, and for the
zip container: bombs (declared and lying sizes), overlapping entries, path traversal, duplicate
names, central/local disagreement, encryption, unknown methods, truncated or misplaced central
directories. The outputs are committed; rerun after changing a case:

  /usr/bin/python3 tests/hostile/make_hostile_npy.py

Only the standard library is used (no numpy), so the bytes are exactly what is written here.
"""
import os
import shutil
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def npy_header(dict_text, major=1, pad=True, length=None):
    header = dict_text.encode("latin-1") if isinstance(dict_text, str) else dict_text
    prefix = 10 if major == 1 else 12
    if pad:
        total = prefix + len(header) + 1
        header += b" " * (64 - total % 64) + b"\n"
    n = len(header) if length is None else length
    field = struct.pack("<H", n) if major == 1 else struct.pack("<I", n)
    return b"\x93NUMPY" + bytes([major, 0]) + field + header


def npy(dict_text, data=b"", **kw):
    return npy_header(dict_text, **kw) + data


def d(descr="<f4", shape="(2, 3)", fortran="False"):
    return "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)


GOOD_F4 = npy(d("'<f4'"), struct.pack("<6f", 1, 2, 3, 4, 5, 6))


def npy_cases():
    header_end = len(npy_header(d("'<f4'")))
    c = []
    add = lambda name, data, phrase, why: c.append((name, data, phrase, why))
    add("empty.npy", b"", "too short for the .npy magic", "zero bytes")
    add("trunc_magic.npy", GOOD_F4[:4], "too short for the .npy magic", "cut inside the magic")
    add("trunc_version.npy", GOOD_F4[:7], "format version", "cut inside the version")
    add("trunc_header_len.npy", GOOD_F4[:9], "header length field", "cut inside the length")
    add("trunc_header.npy", GOOD_F4[:40], "exceeds file size", "cut inside the header")
    add("trunc_header_end.npy", GOOD_F4[:header_end - 1], "exceeds file size",
        "cut one byte before the data")
    add("trunc_data.npy", GOOD_F4[:header_end + 10], "data truncated: need 24 bytes, have 10",
        "cut inside the data")
    add("no_data.npy", GOOD_F4[:header_end], "data truncated: need 24 bytes, have 0",
        "header only")
    add("bad_magic.npy", b"\x93NUMPZ" + GOOD_F4[6:], "bad .npy magic", "one magic byte wrong")
    add("version_4.npy", GOOD_F4[:6] + b"\x04\x00" + GOOD_F4[8:],
        "unsupported .npy format version 4.0", "unknown major version")
    add("header_len_huge_v2.npy", npy(d("'<f4'"), b"\0" * 24, major=2, length=0xFFFFFFF0),
        "exceeds file size", "2.0 length field of 4 GiB in a small file")
    add("header_len_past_end.npy", npy(d("'<f4'"), b"\0" * 24, length=60000),
        "exceeds file size", "1.0 length field past the end")
    add("header_over_cap.npy", npy(d("'<f4'") + " " * 20000, b"\0" * 24),
        "exceeds the cap of 10000", "1.0 header of 20 KB (numpy's cap is 10000)")
    add("shape_overflow.npy", npy(d("'<f4'", "(4294967296, 4294967296, 16)")),
        "shape product overflows", "product of dims past 2^64")
    add("shape_overflow_zero.npy", npy(d("'<f4'", "(0, 4294967296, 4294967296)")),
        "shape product overflows", "a zero dim does not excuse the overflow")
    add("dim_overflow.npy", npy(d("'<f4'", "(99999999999999999999,)")), "overflows 64 bits",
        "one dim past int64")
    add("bytes_overflow.npy", npy(d("'<f8'", "(4611686018427387904,)")),
        "size in bytes overflows", "numel fits, numel * 8 does not")
    add("negative_dim.npy", npy(d("'<f4'", "(-1, 3)")), "negative dimension -1",
        "negative dim")
    add("too_many_dims.npy", npy(d("'<f4'", "(" + "1, " * 100 + ")"), b"\0" * 4),
        "more than 64", "100 dims (CVE-2021-33430)")
    add("huge_claim.npy", npy(d("'<f4'", "(1000000000000,)"), b"\0" * 64),
        "data truncated: need 4000000000000 bytes", "declares 4 TB, holds 64 bytes")
    add("unknown_descr.npy", npy(d("'<q9'"), b"\0" * 64), "unknown descr '<q9'", "no such kind")
    add("object_descr.npy", npy(d("'|O'", "(1,)"), b"\x80\x02cos\nsystem\nq\x00."),
        "object arrays (pickle) are not read", "pickle payload must never be touched")
    add("structured_descr.npy",
        npy(d("[('a', '<f4'), ('b', '<i8', (2,))]", "(1,)"), b"\0" * 20),
        "structured dtype", "record dtype")
    add("string_descr.npy", npy(d("'<U5'", "(1,)"), b"\0" * 20), "(strings) is not supported",
        "unicode strings")
    add("long_double.npy", npy(d("'<f16'", "(1,)"), b"\0" * 16), "(long double)",
        "x87 long double")
    add("datetime_descr.npy", npy(d("'<M8[ns]'", "(1,)"), b"\0" * 8), "(datetime)",
        "datetime64")
    add("void_descr.npy", npy(d("'|V16'", "(1,)"), b"\0" * 16), "(opaque void elements)",
        "16-byte void")
    add("v3_bad_utf8.npy", npy(d("'<f4'").encode() + b"\xff\xfe", b"\0" * 24, major=3),
        "not valid UTF-8", "3.0 header with invalid UTF-8")
    add("bad_literal.npy", npy("{'descr': '<f4' 'fortran_order': False, 'shape': (2, 3)}",
                               b"\0" * 24), "bad header literal", "missing comma")
    add("unterminated_string.npy", npy("{'descr': '<f4, 'fortran_order': False}"),
        "bad header literal", "unterminated string")
    add("eval_attempt.npy",
        npy("{'descr': __import__('os').system('touch pwned'), 'fortran_order': False, "
            "'shape': (1,)}", b"\0" * 4),
        "bad header literal", "an expression instead of a literal")
    add("not_a_dict.npy", npy("['<f4', False, (2, 3)]", b"\0" * 24), "bad header literal",
        "a list instead of a dict")
    add("trailing_text.npy", npy(d("'<f4'") + " x", b"\0" * 24),
        "unexpected text after the dict", "junk after the dict")
    add("deep_nesting.npy", npy(d("'<f4'", "(" * 50 + "1" + ")" * 50), b"\0" * 4),
        "nests deeper", "50 nested tuples")
    add("missing_shape.npy", npy("{'descr': '<f4', 'fortran_order': False}", b"\0" * 4),
        "lacks the key 'shape'", "no shape")
    add("missing_descr.npy", npy("{'fortran_order': False, 'shape': (1,)}", b"\0" * 4),
        "lacks the key 'descr'", "no descr")
    add("extra_key.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), "
                             "'evil': 1}", b"\0" * 4), "unexpected key 'evil'", "fourth key")
    add("duplicate_key.npy", npy("{'descr': '<f4', 'shape': (1,), 'fortran_order': False, "
                                 "'shape': (100,)}", b"\0" * 4),
        "repeats the key 'shape'", "which shape wins?")
    add("fortran_not_bool.npy", npy(d("'<f4'", "(1,)", "1"), b"\0" * 4),
        "fortran_order is not a bool", "int instead of bool")
    add("shape_list.npy", npy(d("'<f4'", "[2, 3]"), b"\0" * 24), "shape is not a tuple",
        "list shape")
    add("shape_float.npy", npy(d("'<f4'", "(2.0, 3)"), b"\0" * 24), "malformed integer",
        "float dim")
    add("descr_not_string.npy", npy(d("4", "(1,)"), b"\0" * 4), "descr is not a string",
        "int descr")
    return c


# ---------------------------------------------------------------------------------------------
# Zip building blocks, byte by byte, so that each field can lie on its own.

def local_header(name, method=0, flags=0, crc=0, csize=0, usize=0, extra=b""):
    name = name.encode("latin-1") if isinstance(name, str) else name
    return struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, flags, method, 0, 0x21, crc, csize,
                       usize, len(name), len(extra)) + name + extra


def central_header(name, offset, csize, usize, method=0, flags=0, crc=0, extra=b"",
                   disk=0):
    name = name.encode("latin-1") if isinstance(name, str) else name
    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x031E, 20, flags, method, 0, 0x21,
                       crc, csize, usize, len(name), len(extra), 0, disk, 0, 0,
                       offset) + name + extra


def eocd(count, cd_size, cd_offset, disk=0):
    return struct.pack("<IHHHHIIH", 0x06054B50, disk, disk, count, count, cd_size, cd_offset, 0)


class Entry:
    def __init__(self, name, data, method=0, flags=0, local_name=None, local_method=None,
                 usize=None, offset=None, local_flags=None, csize=None):
        self.name, self.data, self.method, self.flags = name, data, method, flags
        self.local_name = name if local_name is None else local_name
        self.local_method = method if local_method is None else local_method
        self.local_flags = flags if local_flags is None else local_flags
        self.usize, self.offset, self.csize = usize, offset, csize
        self.crc = 0


def deflate(data):
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def stored(name, data, **kw):
    e = Entry(name, data, **kw)
    e.crc = zlib.crc32(data)
    if e.usize is None:
        e.usize = len(data)
    return e


def deflated(name, raw, **kw):
    e = Entry(name, deflate(raw), method=8, **kw)
    e.crc = zlib.crc32(raw)
    if e.usize is None:
        e.usize = len(raw)
    return e


def build_zip(entries, cd_offset=None, cd_size=None, count=None, tail=b""):
    out = b""
    offsets = []
    for e in entries:
        offsets.append(len(out))
        out += local_header(e.local_name, e.local_method, e.local_flags, e.crc, len(e.data),
                            e.usize) + e.data
    cd_start = len(out)
    cd = b""
    for e, off in zip(entries, offsets):
        csize = len(e.data) if e.csize is None else e.csize
        cd += central_header(e.name, off if e.offset is None else e.offset, csize, e.usize,
                             e.method, e.flags, e.crc)
    out += cd
    out += eocd(len(entries) if count is None else count,
                len(cd) if cd_size is None else cd_size,
                cd_start if cd_offset is None else cd_offset)
    return out + tail


def zip64_bomb(name, raw, declared):
    """A deflated member whose central record declares `declared` bytes through zip64."""
    data = deflate(raw)
    out = local_header(name, 8, 0, zlib.crc32(raw), 0xFFFFFFFF, 0xFFFFFFFF,
                       struct.pack("<HHQQ", 1, 16, declared, len(data))) + data
    cd_start = len(out)
    cd = central_header(name, 0, 0xFFFFFFFF, 0xFFFFFFFF, 8, 0, zlib.crc32(raw),
                        struct.pack("<HHQQ", 1, 16, declared, len(data)))
    return out + cd + eocd(1, len(cd), cd_start)


def small_npy(values=(1.0, 2.0, 3.0)):
    return npy(d("'<f8'", "(%d,)" % len(values)), struct.pack("<%dd" % len(values), *values))


def noise_npy(n=4096):
    """An .npy of bytes that do not compress (xorshift32), so a cut stream stays under caps."""
    x = 2463534242
    out = bytearray()
    for _ in range(n):
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        out.append(x & 0xFF)
    return npy(d("'|u1'", "(%d,)" % n), bytes(out))


def npz_cases():
    a = small_npy()
    c = []
    add = lambda name, data, phrase, why: c.append((name, data, phrase, why))
    big = npy(d("'<f4'", "(262144,)"), b"\0" * (1 << 20))  # 1 MiB of zeros: deflates ~1000:1
    add("bomb_declared_huge.npz", zip64_bomb("a.npy", big, 1 << 45), "over the remaining budget",
        "a 1 KB member declaring 32 TiB")
    add("bomb_ratio.npz", zip64_bomb("a.npy", big[:4096], 1 << 30), "compression ratio",
        "a tiny member declaring 1 GiB")
    add("bomb_liar.npz", build_zip([deflated("a.npy", big, usize=4096)]),
        "inflates to more than its declared 4096 bytes", "declares 4 KB, inflates to 1 MiB")
    add("short_stream.npz", build_zip([deflated("a.npy", a, usize=len(a) + 100)]),
        "but declares", "declares 100 bytes more than the stream holds")
    cut = deflated("a.npy", noise_npy())
    cut.data = cut.data[: len(cut.data) // 2]
    add("truncated_stream.npz", build_zip([cut]), "deflate stream is truncated",
        "half a deflate stream")
    garbage = deflated("a.npy", a)
    garbage.data = b"\xff" * len(garbage.data)
    add("bad_deflate.npz", build_zip([garbage]), "bad deflate data", "not a deflate stream")

    # Overlap (Fifield): entry "o" stores bytes that contain a complete local header + data of
    # "b.npy"; b's central record points inside o's data.
    inner = local_header("b.npy", 0, 0, zlib.crc32(a), len(a), len(a)) + a
    outer = stored("o.npy", inner)
    b_entry = stored("b.npy", a, offset=30 + len("o.npy"))
    add("overlap.npz", build_zip([outer, b_entry]), "overlap", "two entries share bytes")
    add("same_offset.npz", build_zip([stored("a.npy", a), stored("c.npy", a, offset=0)]),
        "differs from the central directory", "two records, one local header")

    add("dotdot.npz", build_zip([stored("../evil.npy", a)]), "'..' component", "path traversal")
    add("dotdot_inner.npz", build_zip([stored("x/../../evil.npy", a)]), "'..' component",
        "traversal in the middle")
    add("absolute.npz", build_zip([stored("/tmp/evil.npy", a)]), "absolute path",
        "absolute member name")
    add("drive.npz", build_zip([stored("C:evil.npy", a)]), "absolute path", "drive letter")
    add("backslash.npz", build_zip([stored("..\\evil.npy", a)]), "backslash",
        "windows separator")
    add("nul_name.npz", build_zip([stored("a.npy\0.txt", a)]), "NUL byte", "NUL in a name")
    add("empty_name.npz", build_zip([stored("", a)]), "empty name", "no name")
    add("duplicate.npz", build_zip([stored("a.npy", a), stored("a.npy", small_npy((9.0,)))]),
        "duplicate entry name 'a.npy'", "which one wins?")
    add("name_mismatch.npz", build_zip([stored("a.npy", a, local_name="b.npy")]),
        "local header name 'b.npy' differs", "CD and local header disagree")
    add("method_mismatch.npz", build_zip([stored("a.npy", a, local_method=8)]),
        "local header method 8 differs", "CD stored, local deflate")
    add("encrypted.npz", build_zip([stored("a.npy", a, flags=1)]), "encrypted",
        "traditional PKWARE encryption")
    add("encrypted_local.npz", build_zip([stored("a.npy", a, local_flags=1)]), "encrypted",
        "encryption flag only in the local header")
    add("strong_encryption.npz", build_zip([stored("a.npy", a, flags=0x40)]), "encrypted",
        "strong encryption bit")
    lzma = stored("a.npy", a)
    lzma.method = lzma.local_method = 14
    add("method_lzma.npz", build_zip([lzma]), "compression method 14", "LZMA")
    add("stored_size_mismatch.npz", build_zip([stored("a.npy", a, usize=len(a) * 2)]),
        "stored entry 'a.npy' has compressed size", "stored sizes disagree")

    good = build_zip([stored("a.npy", a)])
    cd_start = 30 + len("a.npy") + len(a)
    add("truncated_cd.npz", build_zip([stored("a.npy", a)], cd_size=50),
        "central directory truncated in entry 0", "CD size cuts the record")
    add("count_too_big.npz", build_zip([stored("a.npy", a)], count=500),
        "cannot hold 500 entries", "count does not fit the CD")
    add("cd_outside.npz", build_zip([stored("a.npy", a)], cd_offset=1 << 30),
        "lies outside the file", "EOCD points past the end")
    add("cd_size_outside.npz", build_zip([stored("a.npy", a)], cd_size=1 << 20),
        "lies outside the file", "CD size past the end")
    add("cd_bad_signature.npz", build_zip([stored("a.npy", a)], cd_offset=cd_start - 4),
        "bad central directory signature", "CD offset shifted")
    add("no_eocd.npz", good[:cd_start + 10], "no zip end of central directory record",
        "archive cut inside the CD")
    add("cut_in_half.npz", good[: len(good) // 2], "no zip end of central directory record",
        "archive cut in half")
    add("tiny.npz", b"PK\x05\x06", "too small for a zip end record", "4 bytes")
    add("lho_outside.npz", build_zip([stored("a.npy", a, offset=1 << 20)]),
        "local header offset 1048576", "local header past the entry area")
    add("lho_not_header.npz", build_zip([stored("a.npy", a, offset=5)]), "no local header",
        "offset lands on garbage")
    add("data_outside.npz", build_zip([deflated("a.npy", a, csize=1 << 20)]),
        "extends past the entry area", "compressed size past the CD")
    multi = build_zip([stored("a.npy", a)])
    multi = multi[:-22] + struct.pack("<IHHHHIIH", 0x06054B50, 1, 1, 1, 1, 46 + 5, cd_start, 0)
    add("multi_disk.npz", multi, "multi-disk", "disk number 1")

    # ZIP64 records that lie.
    body = local_header("a.npy", 0, 0, zlib.crc32(a), len(a), len(a)) + a
    cd = central_header("a.npy", 0, len(a), len(a), 0, 0, zlib.crc32(a))
    loc_bad = (body + cd + struct.pack("<IIQI", 0x07064B50, 0, 1 << 40, 1) +
               eocd(0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF))
    add("zip64_locator_outside.npz", loc_bad, "zip64 end record offset", "locator past the end")
    rec = len(body) + len(cd)
    z64 = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, 1 << 40, 1 << 40, len(cd),
                      len(body))
    add("zip64_count_cap.npz", body + cd + z64 + struct.pack("<IIQI", 0x07064B50, 0, rec, 1) +
        eocd(0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF), "over the cap", "2^40 entries")
    no_extra = body + central_header("a.npy", 0, 0xFFFFFFFF, 0xFFFFFFFF, 0, 0, zlib.crc32(a))
    add("zip64_missing_extra.npz", no_extra + eocd(1, 46 + 5, len(body)),
        "no zip64 extra field", "0xFFFFFFFF sizes without the extra")
    short_extra = struct.pack("<HHQ", 1, 8, len(a))  # needs 16 bytes
    add("zip64_short_extra.npz",
        body + central_header("a.npy", 0, 0xFFFFFFFF, 0xFFFFFFFF, 0, 0, zlib.crc32(a),
                              short_extra) + eocd(1, 46 + 5 + 12, len(body)),
        "lacks a needed value", "zip64 extra too short")
    overrun = struct.pack("<HH", 1, 200)
    add("extra_overrun.npz",
        body + central_header("a.npy", 0, 0xFFFFFFFF, 0xFFFFFFFF, 0, 0, zlib.crc32(a),
                              overrun) + eocd(1, 46 + 5 + 4, len(body)),
        "overruns the extra area", "extra field longer than its area")

    # Valid zips whose .npy members are hostile: the error names the member.
    add("member_object.npz", build_zip([stored("w.npy", npy(d("'|O'", "(1,)"), b"\x80\x02N."))]),
        "member 'w.npy': object arrays (pickle) are not read", "pickle inside an npz")
    add("member_truncated.npz", build_zip([deflated("w.npy", a[:-3])]),
        "member 'w.npy': data truncated", "member cut short")
    add("member_not_npy.npz", build_zip([stored("w.npy", b"PK\x03\x04 nested zip")]),
        "member 'w.npy': bad .npy magic", "member is not an npy")
    return c


def write(folder, cases):
    path = os.path.join(HERE, folder)
    if os.path.isdir(path):
        shutil.rmtree(path)
    os.makedirs(path)
    names = set()
    with open(os.path.join(path, "manifest.tsv"), "w", encoding="utf-8") as m:
        m.write("# Generated by tests/hostile/make_hostile_npy.py; do not edit by hand.\n")
        for name, data, phrase, why in cases:
            assert name not in names, name
            names.add(name)
            assert len(data) < 64 * 1024, (name, len(data))
            with open(os.path.join(path, name), "wb") as f:
                f.write(data)
            m.write(f"{name}\t3\t{phrase}\t{why}\n")
    print(f"{folder}: {len(cases)} files")


def main():
    write("npy", npy_cases())
    write("npz", npz_cases())


if __name__ == "__main__":
    main()
