#!/usr/bin/env python3
"""Checks with Python's zipfile the archives npy_golden_test writes with numprobe's ZipWriter.

  check_zip_written.py DIR

DIR/mixed.zip must hold, in order: stored.txt (b"hello stored", stored), aligned.bin
(bytes(range(256)) * 4, stored, data starting at a multiple of 64), deflated.bin (b"abc" * 10000,
deflated), "dir/\u00fcn\u00ef.txt" (b"unicode", stored, UTF-8 flag). DIR/many.zip must hold 70000
stored entries named str(i) containing str(3 * i) (ZIP64 end records). CRCs must verify.
"""
import os
import struct
import sys
import zipfile


def main():
    folder = sys.argv[1]
    problems = []
    want = [("stored.txt", b"hello stored", zipfile.ZIP_STORED),
            ("aligned.bin", bytes(range(256)) * 4, zipfile.ZIP_STORED),
            ("deflated.bin", b"abc" * 10000, zipfile.ZIP_DEFLATED),
            ("dir/\u00fcn\u00ef.txt", b"unicode", zipfile.ZIP_STORED)]
    path = os.path.join(folder, "mixed.zip")
    with zipfile.ZipFile(path) as z:
        if z.testzip() is not None:
            problems.append("mixed.zip: CRC error")
        infos = z.infolist()
        if [i.filename for i in infos] != [w[0] for w in want]:
            problems.append(f"mixed.zip: names {[i.filename for i in infos]}")
        for info, (name, data, method) in zip(infos, want):
            if z.read(info) != data:
                problems.append(f"{name}: contents differ")
            if info.compress_type != method:
                problems.append(f"{name}: method {info.compress_type}")
        raw = open(path, "rb").read()
        aligned = infos[1]
        name_len, extra_len = struct.unpack_from("<HH", raw, aligned.header_offset + 26)
        start = aligned.header_offset + 30 + name_len + extra_len
        if start % 64 != 0:
            problems.append(f"aligned.bin: data at {start}")
        if not infos[3].flag_bits & 0x800:
            problems.append("unicode name without the UTF-8 flag")
    with zipfile.ZipFile(os.path.join(folder, "many.zip")) as z:
        infos = z.infolist()
        if len(infos) != 70000:
            problems.append(f"many.zip: {len(infos)} entries")
        for i in (0, 1, 65534, 65535, 65536, 69999):
            if z.read(str(i)) != str(3 * i).encode():
                problems.append(f"many.zip: entry {i} differs")
        if z.testzip() is not None:
            problems.append("many.zip: CRC error")
    for p in problems:
        print("FAIL", p)
    print(f"{len(problems)} problems")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
