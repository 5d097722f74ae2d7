#!/usr/bin/env python3
"""Golden .safetensors files and their expected statistics.

The `safetensors` package is not installed here (no PyPI), so files are written by the spec with
struct and json: u64 little-endian header length N, N bytes of JSON, then the data buffer, with
data_offsets relative to 8 + N. Arrays come from real numpy (and torch for bfloat16, which numpy
lacks); float8 encodings come from the format definitions, decoded here independently.

Files (written into --out):
  all_dtypes.safetensors       every dtype numpy/torch 1.13 has, 0-d, empty, specials (NaN, inf, -0)
  float8.safetensors           all 256 encodings of each float8 type, and their finite subsets
  large.safetensors            tensors of 70k elements (chunked reductions)
  metadata.safetensors         __metadata__ with non-ASCII strings
  empty.safetensors            no tensors, only __metadata__
  unaligned.safetensors        third-party style: unpadded header, name order, misaligned data
  leading_whitespace.safetensors  the JSON header starts with whitespace (allowed since 2026)
  expected.json                per file: metadata, and per tensor in file (data-offset) order its
                               numprobe dtype name, shape, FNV-1a 64 of its bytes and statistics

Statistics follow numprobe's TensorStats contract (include/numprobe/stats.h), computed with numpy
in float64 and math.fsum: max/min propagate NaN; bool max = any, min = all; integers and bools
have no mean/norm (null); complex tensors are summarised by |x|; empty tensors have null max/min.
Non-finite numbers are written as the strings "NaN", "Infinity", "-Infinity".
"""
import argparse
import json
import math
import os
import struct

import numpy as np
import torch

# The reference enum order (increasing alignment); the reference writer sorts by it, descending.
REFERENCE_ORDER = ["BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0",
                   "F8_E4M3FNUZ", "F8_E5M2FNUZ", "I16", "U16", "F16", "BF16", "I32", "U32", "F32",
                   "C64", "F64", "I64", "U64"]

# safetensors name -> (numprobe dtype name, kind)
DTYPES = {
    "F64": ("f64", "float"), "F32": ("f32", "float"), "F16": ("f16", "float"),
    "BF16": ("bf16", "float"), "F8_E4M3": ("f8_e4m3fn", "float"), "F8_E5M2": ("f8_e5m2", "float"),
    "F8_E4M3FNUZ": ("f8_e4m3fnuz", "float"), "F8_E5M2FNUZ": ("f8_e5m2fnuz", "float"),
    "I64": ("i64", "int"), "I32": ("i32", "int"), "I16": ("i16", "int"), "I8": ("i8", "int"),
    "U64": ("u64", "int"), "U32": ("u32", "int"), "U16": ("u16", "int"), "U8": ("u8", "int"),
    "BOOL": ("bool", "bool"), "C64": ("c64", "complex"),
}


class T:
    """One tensor: safetensors dtype, shape, raw little-endian bytes, float64 values for stats."""

    def __init__(self, name, st_dtype, shape, raw, values):
        self.name, self.st_dtype, self.shape, self.raw = name, st_dtype, list(shape), raw
        self.values = values  # numpy array (float64, int objects, bool or complex) in C order
        n = int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1
        assert len(self.values.reshape(-1)) == n, name


def from_numpy(name, st_dtype, arr):
    arr = np.ascontiguousarray(arr)
    raw = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
    if arr.dtype.kind == "f":
        values = arr.astype(np.float64)
    else:
        values = arr
    return T(name, st_dtype, arr.shape, raw, values)


def from_torch_bf16(name, values_f32):
    t = torch.from_numpy(np.ascontiguousarray(values_f32, dtype=np.float32)).to(torch.bfloat16)
    raw = t.view(torch.int16).numpy().astype("<i2").tobytes()
    return T(name, "BF16", list(t.shape), raw, t.to(torch.float32).numpy().astype(np.float64))


# --- float8 decoding from the format definitions ----------------------------------------------

def decode_fp8(code, exp_bits, man_bits, bias, kind):
    """kind: 'fn' (E4M3FN: no inf, S.1111.111 is NaN), 'ieee' (E5M2: inf and NaN at max exponent),
    'fnuz' (0x80 is the only NaN, no negative zero, no inf)."""
    sign = -1.0 if code & 0x80 else 1.0
    e = (code >> man_bits) & ((1 << exp_bits) - 1)
    m = code & ((1 << man_bits) - 1)
    emax = (1 << exp_bits) - 1
    if kind == "fnuz" and code == 0x80:
        return math.nan
    if kind == "fn" and e == emax and m == (1 << man_bits) - 1:
        return math.nan
    if kind == "ieee" and e == emax:
        return sign * math.inf if m == 0 else math.nan
    if e == 0:
        return sign * (m / (1 << man_bits)) * 2.0 ** (1 - bias)
    return sign * (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)


FP8 = {
    "F8_E4M3": (4, 3, 7, "fn"),
    "F8_E5M2": (5, 2, 15, "ieee"),
    "F8_E4M3FNUZ": (4, 3, 8, "fnuz"),
    "F8_E5M2FNUZ": (5, 2, 16, "fnuz"),
}


def fp8_tensor(name, st_dtype, codes):
    values = np.array([decode_fp8(c, *FP8[st_dtype]) for c in codes], dtype=np.float64)
    return T(name, st_dtype, [len(codes)], bytes(codes), values)


# --- statistics (numprobe's TensorStats contract) ----------------------------------------------

def num(v):
    if v is None:
        return None
    v = float(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def exact_sum(x):
    """Sum in exact arithmetic rounded once (math.fsum), with IEEE semantics for non-finite."""
    if np.isnan(x).any():
        return math.nan
    pos, neg = np.isposinf(x).any(), np.isneginf(x).any()
    if pos and neg:
        return math.nan
    if pos:
        return math.inf
    if neg:
        return -math.inf
    return math.fsum(x.tolist())


def float_stats(x):
    """x: float64 array of the element values (or of |x| for complex)."""
    n = x.size
    s = {"count": n}
    finite_or_inf = x[~np.isnan(x)]
    if n == 0:
        s.update(max=None, min=None, mean=None, norm=None)
    else:
        has_nan = bool(np.isnan(x).any())
        s["max"] = math.nan if has_nan else float(np.max(x))
        s["min"] = math.nan if has_nan else float(np.min(x))
        s["mean"] = exact_sum(x) / n
        s["norm"] = math.sqrt(exact_sum(x * x))
    s["nan_count"] = int(np.isnan(x).sum())
    s["pos_inf_count"] = int(np.isposinf(x).sum())
    s["neg_inf_count"] = int(np.isneginf(x).sum())
    s["zero_count"] = int((x == 0).sum())
    a = np.abs(finite_or_inf)
    s["max_abs"] = float(a.max()) if a.size else 0.0
    nz = a[a != 0]
    s["min_nonzero_abs"] = float(nz.min()) if nz.size else math.inf
    return s


def int_stats(values):
    ints = [int(v) for v in values.reshape(-1).tolist()]
    n = len(ints)
    s = {"count": n,
         "max": float(max(ints)) if n else None,
         "min": float(min(ints)) if n else None,
         "mean": None, "norm": None,
         "nan_count": 0, "pos_inf_count": 0, "neg_inf_count": 0,
         "zero_count": sum(1 for v in ints if v == 0)}
    abs_values = [abs(v) for v in ints]
    s["max_abs"] = float(max(abs_values)) if n else 0.0
    nz = [v for v in abs_values if v != 0]
    s["min_nonzero_abs"] = float(min(nz)) if nz else math.inf
    return s


def bool_stats(values):
    b = values.reshape(-1).astype(bool)
    n = b.size
    s = {"count": n,
         "max": float(b.any()) if n else None,
         "min": float(b.all()) if n else None,
         "mean": None, "norm": None,
         "nan_count": 0, "pos_inf_count": 0, "neg_inf_count": 0,
         "zero_count": int((~b).sum())}
    s["max_abs"] = 1.0 if b.any() else 0.0
    s["min_nonzero_abs"] = 1.0 if b.any() else math.inf
    return s


def stats(t):
    kind = DTYPES[t.st_dtype][1]
    if kind == "float":
        s = float_stats(t.values.reshape(-1).astype(np.float64))
    elif kind == "complex":
        c = t.values.reshape(-1).astype(np.complex128)
        # The golden complex values are Pythagorean, so |x| is exact in any precision.
        s = float_stats(np.abs(c))
    elif kind == "int":
        s = int_stats(t.values)
    else:
        s = bool_stats(t.values)
    return {k: (num(v) if isinstance(v, float) or v is None else v) for k, v in s.items()}


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


# --- writing by the spec ------------------------------------------------------------------------

def write_safetensors(path, tensors, metadata=None, *, reference_order=True, pad=True,
                      leading=""):
    """Returns the tensors in file (data) order. reference_order sorts as the reference writer
    (alignment descending, then name); otherwise tensors are laid out by name (older writers)."""
    if reference_order:
        ordered = sorted(tensors, key=lambda t: (-REFERENCE_ORDER.index(t.st_dtype), t.name))
    else:
        ordered = sorted(tensors, key=lambda t: t.name)
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    offset = 0
    for t in ordered:
        header[t.name] = {"dtype": t.st_dtype, "shape": t.shape,
                          "data_offsets": [offset, offset + len(t.raw)]}
        offset += len(t.raw)
    text = (leading + json.dumps(header, separators=(",", ":"), ensure_ascii=False)).encode()
    if pad:
        text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for t in ordered:
            f.write(t.raw)
    return ordered


def with_specials(rng, n, dtype):
    x = rng.normal(0.5, 1.0, n).astype(dtype)
    if n >= 8:
        x[1] = np.nan
        x[3] = np.inf
        x[4] = -np.inf
        x[5] = 0.0
        x[6] = -0.0
    return x


def build(out):
    rng = np.random.default_rng(20240611)
    files = {}

    # Every dtype numpy and torch 1.13 have (float8 types are in float8.safetensors).
    normal = lambda shape, dt: rng.normal(0.5, 1.0, shape).astype(dt)
    all_dtypes = [
        from_numpy("f64.normal", "F64", normal((3, 4, 5), np.float64)),
        from_numpy("f64.specials", "F64", with_specials(rng, 16, np.float64)),
        from_numpy("f32.normal", "F32", normal((7, 9), np.float32)),
        from_numpy("f32.specials", "F32", with_specials(rng, 16, np.float32).reshape(4, 4)),
        from_numpy("f32.only_inf", "F32", np.array([np.inf, 1.0, -2.0], np.float32)),
        from_numpy("f32.both_inf", "F32", np.array([np.inf, -np.inf, 3.0], np.float32)),
        from_numpy("f32.scalar", "F32", np.array(-1.25, np.float32)),
        from_numpy("f32.empty", "F32", np.zeros((0,), np.float32)),
        from_numpy("f32.zeros", "F32", np.zeros((2, 3), np.float32)),
        from_numpy("f16.normal", "F16", normal((5, 6), np.float16)),
        from_numpy("f16.specials", "F16", np.array(
            [6.0e-8, -6.0e-8, 6.1e-5, 65504.0, -65504.0, np.nan, np.inf, -np.inf, 0.0, -0.0,
             1.0, 0.333], np.float16)),
        from_torch_bf16("bf16.normal", rng.normal(0.5, 1.0, (4, 8)).astype(np.float32)),
        from_torch_bf16("bf16.specials", np.array(
            [1e-40, -3.0e38, 3.0e38, np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -7.5], np.float32)),
        from_numpy("i64", "I64", rng.integers(-2**40, 2**40, (3, 3), dtype=np.int64)),
        from_numpy("i32", "I32", rng.integers(-2**31, 2**31 - 1, (10,), dtype=np.int32)),
        from_numpy("i16", "I16", np.array([-32768, 32767, 0, 5, -5, 0], np.int16)),
        from_numpy("i8", "I8", np.array([[-128, 127], [0, -1]], np.int8)),
        from_numpy("u8", "U8", np.arange(0, 256, 3, dtype=np.uint8)),
        from_numpy("u16", "U16", np.array([0, 65535, 1, 300], np.uint16)),
        from_numpy("u32", "U32", np.array([4294967295, 0, 7], np.uint32)),
        from_numpy("u64", "U64", np.array([2**53, 0, 12345678901234], np.uint64)),
        from_numpy("i32.scalar", "I32", np.array(-42, np.int32)),
        from_numpy("i32.empty", "I32", np.zeros((3, 0), np.int32)),
        from_numpy("bool.mixed", "BOOL", np.array([[True, False, True], [False, False, True]])),
        from_numpy("bool.all_true", "BOOL", np.ones((4,), bool)),
        from_numpy("bool.all_false", "BOOL", np.zeros((3,), bool)),
        from_numpy("c64", "C64", np.array([3 + 4j, -5 + 12j, 0, 8 - 15j, -7 - 24j, 0.75 - 1j],
                                          np.complex64).reshape(2, 3)),
    ]
    files["all_dtypes.safetensors"] = (all_dtypes, None, {})

    fp8 = []
    for st in FP8:
        codes = list(range(256))
        fp8.append(fp8_tensor(st.lower() + ".all", st, codes))
        finite = [c for c in codes if math.isfinite(decode_fp8(c, *FP8[st]))]
        fp8.append(fp8_tensor(st.lower() + ".finite", st, finite))
    files["float8.safetensors"] = (fp8, None, {})

    large = [
        from_numpy("large.f32", "F32", rng.normal(3.0, 1.0, (70, 1000)).astype(np.float32)),
        from_numpy("large.f64", "F64", rng.normal(-2.0, 0.5, (70001,))),
        from_torch_bf16("large.bf16", rng.normal(1.0, 2.0, (65537,)).astype(np.float32)),
        from_numpy("large.i32", "I32", rng.integers(-1000, 1000, (70000,), dtype=np.int32)),
    ]
    files["large.safetensors"] = (large, None, {})

    meta = {"format": "pt", "source": "numprobe golden", "unicode": "\u00fcn\u00efc\u00f6d\u00e9 \u2713"}
    files["metadata.safetensors"] = (
        [from_numpy("weight", "F32", normal((2, 2), np.float32)),
         from_numpy("bias", "F16", normal((2,), np.float16))], meta, {})
    files["empty.safetensors"] = ([], {"only": "metadata"}, {})
    # Name order with an unpadded header of odd length and "a.u8" (2 bytes) first: every tensor
    # after it starts at an odd file offset.
    unaligned = [
        from_numpy("a.u8", "U8", np.array([1, 2], np.uint8)),
        from_numpy("b.f32", "F32", normal((5,), np.float32)),
        from_numpy("c.f64", "F64", normal((3,), np.float64)),
        from_torch_bf16("d.bf16", rng.normal(0.5, 1.0, (3,)).astype(np.float32)),
        from_numpy("e.i64", "I64", np.array([-1, 2**40, 3], np.int64)),
    ]
    files["unaligned.safetensors"] = (unaligned, None, {"reference_order": False, "pad": False})
    files["leading_whitespace.safetensors"] = (
        [from_numpy("x", "F64", normal((4,), np.float64)),
         from_numpy("y", "I16", np.array([1, -2, 3], np.int16))], None, {"leading": "\n  \t"})

    expected = {}
    for fname, (tensors, metadata, opts) in files.items():
        path = os.path.join(out, fname)
        ordered = write_safetensors(path, tensors, metadata, **opts)
        if fname == "unaligned.safetensors":
            with open(path, "rb") as f:
                n = struct.unpack("<Q", f.read(8))[0]
            assert (8 + n + 2) % 2 == 1, "the tensors after a.u8 must be misaligned"
        expected[fname] = {
            "metadata": metadata or {},
            "tensors": [{"name": t.name, "dtype": DTYPES[t.st_dtype][0], "shape": t.shape,
                         "fnv1a64": fnv1a64(t.raw), "stats": stats(t)} for t in ordered],
        }
    with open(os.path.join(out, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=1, ensure_ascii=False, allow_nan=False)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    build(a.out)


if __name__ == "__main__":
    main()
