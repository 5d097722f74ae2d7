#!/usr/bin/env python3
"""Writes the .npy/.npz golden set with real numpy, plus expected.json with numpy's own answers.

Run with Debian's interpreter: /usr/bin/python3 gen_npy.py --out DIR

Files: one .npy per dtype with special values (NaN, +-Inf, -0, subnormals, extremes) and one with
finite values, big-endian variants, Fortran order, 0-d, empty, 1-d and 4-d arrays, 2.0 and 3.0
headers, bfloat16 bytes written as '<V2' (ml_dtypes) and '|V2' (plain numpy void), and np.savez /
np.savez_compressed archives.

expected.json (compact, keys sorted) maps each file to its tensors, in file order, each with:
  name, dtype (numprobe's name), shape, count, max/min (NaN-propagating; bool: any/all; complex:
  of |x|), mean and norm in float64 (norm = sqrt(sum(x*x))) for float, complex and 0-d arrays
  (null otherwise, and null for empty arrays), nan/pos_inf/neg_inf/zero counts, max_abs and
  min_nonzero_abs over non-NaN elements (0 and Infinity when there are none), and c_hex: the
  elements in C order, little-endian, as hex (what a reader must produce). Non-finite numbers are
  the strings "NaN", "Infinity", "-Infinity" (as `numprobe inspect --json` writes them).
Complex counts are taken on |x| and the values are chosen so that counting parts would agree.
"""
import argparse
import io
import json
import math
import os
import zipfile

import numpy as np

NUMPROBE_DTYPE = {
    "b1": "bool", "i1": "i8", "i2": "i16", "i4": "i32", "i8": "i64",
    "u1": "u8", "u2": "u16", "u4": "u32", "u8": "u64",
    "f2": "f16", "f4": "f32", "f8": "f64", "c8": "c64", "c16": "c128",
}
CODES = list(NUMPROBE_DTYPE)


def special_floats(code):
    fi = np.finfo(np.dtype(code))
    return np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, fi.smallest_subnormal, fi.tiny,
                     fi.max, fi.min, 1.5, -2.25, 0.0], dtype=code).reshape(3, 4)


def finite_floats(code):
    fi = np.finfo(np.dtype(code))
    sub = fi.smallest_subnormal
    return np.array([-0.0, 0.0, sub, -3 * sub, fi.tiny, 1.5, -2.25, 0.125, 100.0, -7.0, 3.0, 0.5],
                    dtype=code).reshape(4, 3)


def ints(code):
    ii = np.iinfo(np.dtype(code))
    if ii.min < 0:
        values = [0, 1, -1, ii.min, ii.max, 42, 0, -100]
    else:
        values = [0, 1, 7, ii.min, ii.max, 42, 0, 100]
    return np.array(values, dtype=code).reshape(2, 4)


def special_complex(code):
    # |x| of each: 5, NaN, Inf, 0, 0, 13 -- parts-based counting agrees with |x|-based counting.
    return np.array([3 + 4j, complex(np.nan, 1.0), complex(np.inf, 0.0), 0j,
                     complex(-0.0, 0.0), 5 - 12j], dtype=code).reshape(2, 3)


def finite_complex(code):
    return np.array([3 + 4j, -6 + 8j, 0j, 1.5 + 2j, -5 - 12j, 8 + 15j], dtype=code)


def bf16_values():
    # 1, -2.5, NaN, +Inf, -Inf, 0, -0, 0.15625, smallest subnormal, largest finite
    return np.array([0x3F80, 0xC020, 0x7FC0, 0x7F80, 0xFF80, 0x0000, 0x8000, 0x3E20, 0x0001,
                     0x7F7F], dtype="<u2")


def num(v):
    v = float(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def stats(values, kind, zero_d):
    """values: float64 (or bool) ndarray of what the statistics are taken over."""
    flat = values.reshape(-1)
    out = {"count": int(flat.size)}
    if kind == "bool":
        b = flat.astype(bool)
        x = b.astype(np.float64)
    else:
        x = flat.astype(np.float64)
    nan = np.isnan(x)
    finite_or_inf = x[~nan]
    out["nan_count"] = int(nan.sum())
    out["pos_inf_count"] = int(np.isposinf(x).sum())
    out["neg_inf_count"] = int(np.isneginf(x).sum())
    out["zero_count"] = int((x == 0).sum())
    absx = np.abs(finite_or_inf)
    out["max_abs"] = num(absx.max()) if absx.size else 0.0
    nonzero = absx[absx != 0]
    out["min_nonzero_abs"] = num(nonzero.min()) if nonzero.size else "Infinity"
    if flat.size == 0:
        out.update(max=None, min=None, mean=None, norm=None)
        return out
    if kind == "bool":
        out["max"] = num(float(b.any()))
        out["min"] = num(float(b.all()))
    else:
        out["max"] = num(np.max(x))
        out["min"] = num(np.min(x))
    if kind in ("float", "complex") or zero_d:
        if zero_d:
            out["mean"] = num(x[0])
            out["norm"] = num(x[0])
        else:
            with np.errstate(all="ignore"):
                out["mean"] = num(np.mean(x))
                out["norm"] = num(np.sqrt(np.sum(x * x)))
    else:
        out["mean"] = None
        out["norm"] = None
    return out


def describe(name, arr, bf16=False):
    """The expected entry of one tensor."""
    if bf16:
        bits = arr.view("<u2").astype(np.uint32) << 16
        values = bits.view(np.float32).astype(np.float64)
        entry = {"name": name, "dtype": "bf16", "shape": list(arr.shape)}
        entry.update(stats(values, "float", arr.ndim == 0))
        entry["c_hex"] = np.ascontiguousarray(arr).tobytes().hex()
        return entry
    dt = arr.dtype
    code = dt.kind + str(dt.itemsize)
    le = np.ascontiguousarray(arr).astype(dt.newbyteorder("<"))
    if dt.kind == "b":
        kind, values = "bool", le
    elif dt.kind == "c":
        kind, values = "complex", np.abs(le.astype(np.complex128))
    elif dt.kind == "f":
        kind, values = "float", le.astype(np.float64)
    else:
        kind, values = "int", le.astype(np.float64)
    entry = {"name": name, "dtype": NUMPROBE_DTYPE[code], "shape": list(arr.shape)}
    entry.update(stats(values, kind, arr.ndim == 0))
    entry["c_hex"] = le.tobytes().hex()
    return entry


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    out = p.parse_args().out
    os.makedirs(out, exist_ok=True)
    expected = {}

    def save(filename, arr, **kw):
        np.save(os.path.join(out, filename), arr, **kw)
        expected[filename] = {"format": "npy", "tensors": [describe("", arr)]}

    for code in CODES:
        kind = code[0]
        if kind == "f":
            arrays = {code: special_floats(code), code + "_finite": finite_floats(code)}
        elif kind == "c":
            arrays = {code: special_complex(code), code + "_finite": finite_complex(code)}
        elif kind == "b":
            arrays = {code: np.array([[True, False, True], [True, False, False]])}
        else:
            arrays = {code: ints(code)}
        for stem, arr in arrays.items():
            save(stem + ".npy", arr)
            if arr.dtype.itemsize > 1 and kind != "b":
                per_part = arr.dtype.itemsize // (2 if kind == "c" else 1)
                if per_part > 1:
                    save("be_" + stem + ".npy", arr.astype(arr.dtype.newbyteorder(">")))

    save("fortran_f8.npy", np.asfortranarray(np.arange(24, dtype="<f8").reshape(2, 3, 4) * 0.5 - 3))
    save("fortran_i4.npy", np.asfortranarray(np.arange(12, dtype="<i4").reshape(3, 4) - 5))
    save("be_fortran_f4.npy",
         np.asfortranarray((np.arange(6, dtype="<f4").reshape(2, 3) - 2.5).astype(">f4")))
    save("scalar_f8.npy", np.array(3.5, dtype="<f8"))
    save("scalar_i4.npy", np.array(7, dtype="<i4"))
    save("empty_f4.npy", np.zeros((0, 3), dtype="<f4"))
    save("vec_f4.npy", np.linspace(-1, 1, 17, dtype="<f4"))
    save("nd4_f4.npy", (np.arange(120, dtype="<f4") * 0.25 - 10).reshape(2, 3, 4, 5))
    save("ones_bool.npy", np.ones((2, 2), dtype=bool))
    save("zeros_f8.npy", np.zeros(5, dtype="<f8"))

    for version, stem, arr in [((2, 0), "v2_f4", np.arange(10, dtype="<f4") - 4.5),
                               ((3, 0), "v3_f8", np.arange(6, dtype="<f8").reshape(2, 3) * -1.25)]:
        with open(os.path.join(out, stem + ".npy"), "wb") as f:
            np.lib.format.write_array(f, arr, version=version)
        expected[stem + ".npy"] = {"format": "npy", "tensors": [describe("", arr)]}

    # bfloat16: bytes through a 'V2' array. numpy itself writes '|V2'; ml_dtypes' bfloat16 writes
    # '<V2' (same bytes otherwise), made here by patching the descr in place.
    bits = bf16_values()
    v2 = bits.view("V2").reshape(2, 5)
    buf = io.BytesIO()
    np.save(buf, v2)
    raw = buf.getvalue()
    assert raw.count(b"'|V2'") == 1
    with open(os.path.join(out, "bf16_pipe.npy"), "wb") as f:
        f.write(raw)
    with open(os.path.join(out, "bf16.npy"), "wb") as f:
        f.write(raw.replace(b"'|V2'", b"'<V2'"))
    for stem in ("bf16", "bf16_pipe"):
        expected[stem + ".npy"] = {"format": "npy", "tensors": [describe("", v2, bf16=True)]}

    npz_members = [
        ("weights", (np.arange(12, dtype="<f4") * 0.5 - 2).reshape(3, 4)),
        ("layer.0/bias", np.array([1, -2, 3], dtype="<i8")),
        ("mask", np.array([True, False, True])),
        ("specials", special_floats("f8")),
    ]
    positional = np.array([[1.5, -0.0], [np.inf, 2.0]], dtype="<f2")
    for stem, fn in (("savez", np.savez), ("savez_compressed", np.savez_compressed)):
        path = os.path.join(out, stem + ".npz")
        fn(path, positional, **dict(npz_members))
        arrays = dict(npz_members)
        arrays["arr_0"] = positional
        with zipfile.ZipFile(path) as z:
            order = [n[:-len(".npy")] for n in z.namelist()]
        expected[stem + ".npz"] = {"format": "npz",
                                   "tensors": [describe(n, arrays[n]) for n in order]}
    # A larger compressed member, so that inflation really runs over several blocks.
    big = np.sin(np.arange(20000, dtype="<f8") * 0.001)
    np.savez_compressed(os.path.join(out, "big_compressed.npz"), wave=big)
    expected["big_compressed.npz"] = {"format": "npz", "tensors": [describe("wave", big)]}

    # Key order and separators fixed: the file starts '{"numprobe_golden":1,' so that no format
    # detector mistakes it for a tensor file in folder mode.
    doc = {"numprobe_golden": 1, "files": expected}
    with open(os.path.join(out, "expected.json"), "w") as f:
        f.write('{"numprobe_golden":1,"files":')
        json.dump(doc["files"], f, sort_keys=True, separators=(",", ":"), allow_nan=False)
        f.write("}\n")


if __name__ == "__main__":
    main()
