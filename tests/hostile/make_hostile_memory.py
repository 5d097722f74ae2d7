#!/usr/bin/env python3
"""Writes files that are small on disk but whose one compressed member inflates to several GiB
(issue 17, point 7): a torch.save-like .pt whose storage archive/data/0 holds 3.75 GiB
(mostly zeros) in about 5 MB of deflate, and an .npz whose member big.npy does the same, both
under the readers' compression-ratio cap. Genuine: the declared sizes and CRCs are right and the
streams really inflate that far, so only a reader that checks the declared size against
--max-memory before allocating stays small.

Generated at test time (a 5 MB file is not committed):

  /usr/bin/python3 tests/hostile/make_hostile_memory.py DEST

The deflate stream is built without compressing 3.75 GiB: one 64 MiB block is compressed once and ended with a full flush (byte-aligned, no back-references across it), so the
same bytes can be repeated, and an empty final block closes the stream.
"""
import importlib.util
import os
import random
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
SEGMENT = 64 << 20
SEGMENTS = 60  # 3.75 GiB: under 4 GiB, so no zip64 records are needed
INFLATED = SEGMENT * SEGMENTS
NOISE = 16 << 10
FINAL_EMPTY_BLOCK = b"\x03\x00"  # BFINAL=1, fixed Huffman, end-of-block


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def flushed(data):
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush(zlib.Z_FULL_FLUSH)


def segment_bytes():
    """64 MiB: 16 KiB of noise, then zeros. The noise keeps the compression ratio (about 800)
    under the readers' ratio cap of 1024, so that only the memory limit stops the file."""
    return random.Random(7).randbytes(NOISE) + bytes(SEGMENT - NOISE)


def zeros_member(prefix=b""):
    """(deflate stream, crc32, inflated size) of `prefix` followed by INFLATED bytes, mostly
    zeros."""
    data = segment_bytes()
    segment = flushed(data)
    crc = zlib.crc32(prefix)
    for _ in range(SEGMENTS):
        crc = zlib.crc32(data, crc)
    stream = (flushed(prefix) if prefix else b"") + segment * SEGMENTS + FINAL_EMPTY_BLOCK
    return stream, crc, len(prefix) + INFLATED


def self_check():
    """The construction on a small scale: repeated flushed segments inflate to their sum."""
    part = flushed(bytes(1 << 16))
    stream = flushed(b"head") + part * 3 + FINAL_EMPTY_BLOCK
    assert zlib.decompress(stream, -15) == b"head" + bytes(3 << 16)


def member(npy_module, name, stream, crc, usize):
    e = npy_module.Entry(name, stream, method=8)
    e.crc, e.usize = crc, usize
    return e


def inflating_pt(npy_module, pt):
    numel = INFLATED // 4
    pkl = pt.state_dict([("weight", pt.tensor("FloatStorage", "0", numel, 0, [numel], [1]))])
    stream, crc, usize = zeros_member()
    return npy_module.build_zip([
        npy_module.stored("archive/data.pkl", pkl),
        member(npy_module, "archive/data/0", stream, crc, usize),
        npy_module.stored("archive/version", b"3\n"),
    ])


def inflating_npz(npy_module):
    header = npy_module.npy_header(npy_module.d("'<f4'", "(%d,)" % (INFLATED // 4)))
    stream, crc, usize = zeros_member(header)
    return npy_module.build_zip([member(npy_module, "big.npy", stream, crc, usize)])


def make_all(dest):
    self_check()
    npy_module = load("make_hostile_npy")
    pt = load("make_hostile_pt")
    files = {"inflating.pt": inflating_pt(npy_module, pt), "inflating.npz": inflating_npz(npy_module)}
    for name, data in files.items():
        with open(os.path.join(dest, name), "wb") as f:
            f.write(data)
    return {name: os.path.join(dest, name) for name in files}


if __name__ == "__main__":
    for name, path in make_all(sys.argv[1] if len(sys.argv) > 1 else ".").items():
        print(path, os.path.getsize(path))
