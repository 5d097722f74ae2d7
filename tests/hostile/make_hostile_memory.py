#!/usr/bin/env python3
"""Writes files that are small on disk but whose one compressed member inflates to hundreds of
MiB or several GiB (issue 17, point 7): a torch.save-like .pt whose storage archive/data/0 holds
float32 values (mostly zeros, a few thousand random values per 64 MiB), an .npz whose member
big.npy does the same, and a .pt whose tensor is a transpose of such a storage (a view that
cannot be streamed in storage order, so its statistics need the whole storage in memory). All
stay under the readers' compression-ratio cap. Genuine: the declared sizes and CRCs are right
and the streams really inflate that far.

Generated at test time (not committed):

  /usr/bin/python3 tests/hostile/make_hostile_memory.py DEST [SEGMENTS]

SEGMENTS 64 MiB segments per member (default 60, 3.75 GiB: under 4 GiB, so no zip64 records are
needed; the CLI tests also use 8, 512 MiB). The deflate stream is built without compressing the
whole: one 64 MiB segment is compressed once and ended with a full flush (byte-aligned, no
back-references across it), so the same bytes can be repeated, and an empty final block closes
the stream. expected_stats() gives the statistics numprobe must report for these members.
"""
import functools
import importlib.util
import math
import os
import random
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
SEGMENT = 64 << 20
SEGMENTS = 60  # 3.75 GiB
INFLATED = SEGMENT * SEGMENTS
NOISE_VALUES = 4096  # float32 values at the start of each segment, then zeros
FINAL_EMPTY_BLOCK = b"\x03\x00"  # BFINAL=1, fixed Huffman, end-of-block


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def flushed(data):
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush(zlib.Z_FULL_FLUSH)


def noise_values():
    """The non-zero float32 values that start every segment: random magnitudes over several
    decades and both signs, with poorly compressible mantissas, so that the compression ratio
    (about 850) stays under the readers' cap of 1024 and only memory is at stake."""
    rng = random.Random(7)
    values = []
    for _ in range(NOISE_VALUES):
        v = rng.uniform(1.0, 2.0) * 2.0 ** rng.randint(-10, 10) * rng.choice((-1.0, 1.0))
        values.append(struct.unpack("<f", struct.pack("<f", v))[0])  # exactly a float32
    return values


def segment_bytes():
    noise = struct.pack("<%df" % NOISE_VALUES, *noise_values())
    return noise + bytes(SEGMENT - len(noise))


@functools.lru_cache(maxsize=1)
def packed_segment():
    """(the segment deflated and flushed, the segment's bytes)."""
    data = segment_bytes()
    return flushed(data), data


def zeros_member(segments, prefix=b""):
    """(deflate stream, crc32, inflated size) of `prefix` followed by `segments` segments."""
    segment, data = packed_segment()
    crc = zlib.crc32(prefix)
    for _ in range(segments):
        crc = zlib.crc32(data, crc)
    stream = (flushed(prefix) if prefix else b"") + segment * segments + FINAL_EMPTY_BLOCK
    return stream, crc, len(prefix) + SEGMENT * segments


def expected_stats(segments=SEGMENTS):
    """inspect's statistics of the members above: count, max, min, mean, norm, zero count (mean
    and norm computed in double; compare with a relative tolerance)."""
    values = noise_values()
    count = SEGMENT * segments // 4
    total = math.fsum(values) * segments
    squares = math.fsum(v * v for v in values) * segments
    return {"count": count, "max": max(max(values), 0.0), "min": min(min(values), 0.0),
            "mean": total / count, "norm": math.sqrt(squares),
            "zero_count": count - NOISE_VALUES * segments, "nan_count": 0}


def self_check():
    """The construction on a small scale: repeated flushed segments inflate to their sum."""
    part = flushed(bytes(1 << 16))
    stream = flushed(b"head") + part * 3 + FINAL_EMPTY_BLOCK
    assert zlib.decompress(stream, -15) == b"head" + bytes(3 << 16)


def member(npy_module, name, stream, crc, usize):
    e = npy_module.Entry(name, stream, method=8)
    e.crc, e.usize = crc, usize
    return e


def inflating_pt(npy_module, pt, segments, transposed=False):
    numel = SEGMENT * segments // 4
    if transposed:  # the storage seen as a (rows, 1024) matrix's transpose
        rows = numel // 1024
        t = pt.tensor("FloatStorage", "0", numel, 0, [1024, rows], [1, 1024])
    else:
        t = pt.tensor("FloatStorage", "0", numel, 0, [numel], [1])
    pkl = pt.state_dict([("weight", t)])
    stream, crc, usize = zeros_member(segments)
    return npy_module.build_zip([
        npy_module.stored("archive/data.pkl", pkl),
        member(npy_module, "archive/data/0", stream, crc, usize),
        npy_module.stored("archive/version", b"3\n"),
    ])


def inflating_npz(npy_module, segments):
    header = npy_module.npy_header(npy_module.d("'<f4'", "(%d,)" % (SEGMENT * segments // 4)))
    stream, crc, usize = zeros_member(segments, header)
    return npy_module.build_zip([member(npy_module, "big.npy", stream, crc, usize)])


def make_all(dest, segments=SEGMENTS):
    self_check()
    npy_module = load("make_hostile_npy")
    pt = load("make_hostile_pt")
    files = {
        "inflating.pt": inflating_pt(npy_module, pt, segments),
        "inflating.npz": inflating_npz(npy_module, segments),
        "inflating_transposed.pt": inflating_pt(npy_module, pt, segments, transposed=True),
    }
    for name, data in files.items():
        with open(os.path.join(dest, name), "wb") as f:
            f.write(data)
    # The 64 MiB segment is let go: a test process that forks children after this must not
    # carry it (a child's peak RSS counts what it inherits until it execs).
    packed_segment.cache_clear()
    return {name: os.path.join(dest, name) for name in files}


if __name__ == "__main__":
    dest = sys.argv[1] if len(sys.argv) > 1 else "."
    count = int(sys.argv[2]) if len(sys.argv) > 2 else SEGMENTS
    for name, path in make_all(dest, count).items():
        print(path, os.path.getsize(path))
