#!/usr/bin/env python3
"""Golden data for ComputeStats: arrays made with numpy, special values included, and numpy's own
statistics of them (np.max/np.min propagate NaN; mean and sqrt(sum x^2) in float64; counts).

Writes OUT/<case>.bin (the array's raw little-endian bytes in C order) and OUT/manifest.tsv with
one line per case:
  name dtype shape max min mean norm nan_count pos_inf_count neg_inf_count zero_count max_abs
  min_nonzero_abs has_mean_norm
Shapes are comma-separated; floats are Python reprs ("nan", "inf", "-inf" included); integer
extremes are written exactly. Deterministic (fixed seed)."""
import argparse
import os

import numpy as np

NUMPROBE_DTYPE = {
    np.dtype(np.float64): "f64",
    np.dtype(np.float32): "f32",
    np.dtype(np.float16): "f16",
    np.dtype(np.int64): "i64",
    np.dtype(np.int32): "i32",
    np.dtype(np.uint8): "u8",
    np.dtype(np.bool_): "bool",
    np.dtype(np.complex64): "c64",
}


def with_specials(a, rng, values):
    """Puts each of `values` at a random position of a copy of `a`."""
    a = a.copy()
    flat = a.reshape(-1)
    for v in values:
        flat[rng.integers(0, flat.size)] = v
    return a


def cases():
    rng = np.random.default_rng(20240601)
    out = {}
    out["f64_normal"] = rng.standard_normal((97, 103)) * 3.0 + 0.5
    out["f64_specials"] = with_specials(
        rng.standard_normal(5000), rng, [np.nan, np.inf, -np.inf, 0.0, -0.0, np.nan])
    out["f64_inf"] = with_specials(rng.standard_normal(3000), rng, [np.inf, 0.0])
    out["f64_wide"] = rng.standard_normal(4096) * np.exp2(rng.integers(-60, 60, 4096))
    # More than one 64 Ki chunk, so the chunked reduction is covered.
    out["f32_uniform"] = rng.uniform(-5.0, 5.0, 70001).astype(np.float32)
    out["f32_neg_inf"] = with_specials(rng.uniform(-1, 1, (33, 17)).astype(np.float32), rng,
                                       [-np.inf, -np.inf])
    out["f32_zeros"] = with_specials(np.zeros(100, np.float32), rng, [-0.0, 2.5, -7.0])
    out["f16_normal"] = (rng.standard_normal(5003) * 100).astype(np.float16)
    f16 = (rng.standard_normal(777) * 10).astype(np.float16)
    out["f16_specials"] = with_specials(
        f16, rng, [np.float16(np.nan), np.float16(np.inf), np.float16(6e-8), np.float16(65504)])
    i64 = rng.integers(-(2**62), 2**62, 3001, dtype=np.int64)
    out["i64"] = with_specials(i64, rng, [np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0])
    out["i32"] = rng.integers(-(2**31), 2**31, (50, 101), dtype=np.int32)
    out["u8"] = rng.integers(0, 256, 4099, dtype=np.uint8)
    out["bool_mixed"] = rng.random(1001) < 0.3
    out["bool_all_true"] = np.ones(67, dtype=np.bool_)
    out["bool_all_false"] = np.zeros(70, dtype=np.bool_)
    c = (rng.standard_normal(2000) + 1j * rng.standard_normal(2000)).astype(np.complex64)
    out["c64"] = c
    out["c64_specials"] = with_specials(c, rng, [complex(np.inf, np.nan), complex(0, 0),
                                                 complex(np.nan, 1.0)])
    return out


def fmt(x):
    return repr(float(x))


def magnitude(c):
    """|x| of a complex array in its own float precision, correctly rounded: C's hypotf/hypot.

    np.abs(complex64) in numpy 1.24 uses a vectorized loop that is not correctly rounded (on the
    c64 case here 674 of 2000 values differ from hypotf by an ulp; torch 1.13's CPU abs differs in
    328, in other places). float32(hypot in float64) is exact before its one rounding, so it
    equals glibc's hypotf, which is what numprobe computes."""
    out = np.hypot(c.real.astype(np.float64), c.imag.astype(np.float64))
    return out.astype(np.float32) if c.dtype == np.complex64 else out


def expected(a):
    kind = a.dtype.kind
    if kind == "b":
        any_ = bool(np.any(a))
        return dict(max=int(any_), min=int(bool(np.all(a))), mean="nan", norm="nan", nan=0,
                    pos_inf=0, neg_inf=0, zero=int(np.count_nonzero(~a)), max_abs=int(any_),
                    min_nz=1 if any_ else "inf", has_mean_norm=0)
    if kind in "iu":
        mx, mn = int(np.max(a)), int(np.min(a))
        nz = np.abs(a[a != 0].astype(object))  # exact magnitudes, |INT64_MIN| included
        return dict(max=mx, min=mn, mean="nan", norm="nan", nan=0, pos_inf=0, neg_inf=0,
                    zero=int(np.count_nonzero(a == 0)), max_abs=max(abs(mx), abs(mn)),
                    min_nz=int(nz.min()) if nz.size else "inf", has_mean_norm=0)
    v = magnitude(a) if kind == "c" else a
    finite_or_inf = v[~np.isnan(v)]
    a64 = v.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        mean = np.mean(a64)
        norm = np.sqrt(np.sum(a64 * a64))
    absv = np.abs(finite_or_inf)
    nonzero = absv[absv != 0]
    return dict(max=fmt(np.max(v)), min=fmt(np.min(v)), mean=fmt(mean), norm=fmt(norm),
                nan=int(np.count_nonzero(np.isnan(v))),
                pos_inf=int(np.count_nonzero(np.isposinf(v))),
                neg_inf=int(np.count_nonzero(np.isneginf(v))),
                zero=int(np.count_nonzero(v == 0)),
                max_abs=fmt(np.max(absv)) if absv.size else "0.0",
                min_nz=fmt(np.min(nonzero)) if nonzero.size else "inf", has_mean_norm=1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    lines = []
    for name, a in cases().items():
        a = np.ascontiguousarray(a)
        with open(os.path.join(args.out, name + ".bin"), "wb") as f:
            f.write(a.astype(a.dtype.newbyteorder("<")).tobytes())
        e = expected(a)
        fields = [name, NUMPROBE_DTYPE[a.dtype], ",".join(str(d) for d in a.shape),
                  e["max"], e["min"], e["mean"], e["norm"], e["nan"], e["pos_inf"],
                  e["neg_inf"], e["zero"], e["max_abs"], e["min_nz"], e["has_mean_norm"]]
        lines.append("\t".join(str(x) for x in fields))
    with open(os.path.join(args.out, "manifest.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
