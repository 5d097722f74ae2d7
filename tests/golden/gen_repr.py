#!/usr/bin/env python3
"""Golden data for float-to-text: CPython's repr of float64 values and numpy's str of float32
values (the texts of msprobe's compare tables and of MindSpore graph compares).

Writes into --out:
  f64.bin / f64.txt   N little-endian float64, and repr(value) per line
  f32.bin / f32.txt   M little-endian float32 bit patterns, and str(np.float32) per line
Values: uniform random bit patterns (fixed seed), values of a typical statistics range, whole
numbers, every power of ten of the type's range with its neighbours one ulp either side, and the
neighbourhoods of the points where the layout switches between fixed and exponent form (1e-4 and
1e16), +-0 and +-Inf. NaN is left out (its text does not depend on the value). Deterministic.
"""
import argparse
import os

import numpy as np


def with_neighbours(values, dtype):
    v = np.asarray(values, dtype=dtype)
    v = v[np.isfinite(v)]
    inf = np.array(np.inf, dtype=dtype)
    return np.concatenate([v, np.nextafter(v, inf), np.nextafter(v, -inf)])


def f64_values(rng):
    bits = rng.integers(0, 2**64, size=200_000, dtype=np.uint64)
    random = bits.view(np.float64)
    typical = rng.uniform(-1000, 1000, size=50_000)
    whole = np.round(rng.uniform(-1e7, 1e7, size=20_000))
    tens = with_neighbours([10.0**e for e in range(-323, 309)], np.float64)
    edges = with_neighbours([1e-4, 1e-5, 1e15, 1e16, 1e17, 9999999999999998.0], np.float64)
    special = np.array([0.0, -0.0, np.inf, -np.inf, 5e-324, 1.7976931348623157e308])
    v = np.concatenate([random, typical, whole, tens, edges, special])
    v = np.concatenate([v, -v])
    return v[~np.isnan(v)]


def f32_values(rng):
    bits = rng.integers(0, 2**32, size=100_000, dtype=np.uint64).astype(np.uint32)
    random = bits.view(np.float32)
    typical = rng.uniform(-1000, 1000, size=20_000).astype(np.float32)
    tens = with_neighbours([10.0**e for e in range(-45, 39)], np.float32)
    edges = with_neighbours([1e-4, 1e-5, 1e15, 1e16, 1e17, 16777216.0], np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, 1e-45, 3.4028235e38], dtype=np.float32)
    v = np.concatenate([random, typical, tens, edges, special]).astype(np.float32)
    v = np.concatenate([v, -v])
    return v[~np.isnan(v)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    out = p.parse_args().out
    rng = np.random.default_rng(20261203)
    f64 = f64_values(rng)
    f64.astype("<f8").tofile(os.path.join(out, "f64.bin"))
    with open(os.path.join(out, "f64.txt"), "w") as f:
        f.write("\n".join(repr(float(x)) for x in f64) + "\n")
    f32 = f32_values(rng)
    f32.astype("<f4").view("<u4").tofile(os.path.join(out, "f32.bin"))
    with open(os.path.join(out, "f32.txt"), "w") as f:
        f.write("\n".join(str(x) for x in f32) + "\n")


if __name__ == "__main__":
    main()
