#!/usr/bin/env python3
"""Golden data for f16/bf16 conversions, produced by real numpy (f16) and torch (bf16).

Writes into --out (all little-endian, no headers; counts follow from the file sizes):
  f16_decode.bin    65,536 float32: every f16 code decoded by numpy
  bf16_decode.bin   65,536 float32: every bf16 code decoded by torch
  encode_input.bin  N uint32: float32 bit patterns to encode
  encode_f16.bin    N uint16: numpy's astype(np.float16) of each input
  encode_bf16.bin   N uint16: torch's .to(torch.bfloat16) of each input
The input set: every f32 exponent around the f16 range sampled with a fixed mantissa stride,
every midpoint between consecutive f16 and bf16 values with its neighbours 1 ulp either side
(both signs, including the ties at the overflow thresholds), f32 subnormals, +-0, +-Inf, NaNs of
both signs with quiet and signalling payloads, and uniform random patterns (fixed seed).
Deterministic: the same files on every run.
"""
import argparse
import os

import numpy as np
import torch


def f16_midpoints():
    """f32 bits of midpoints between consecutive non-negative f16 values, and the tie between
    the largest finite value and the next (virtual) one, 65520."""
    codes = np.arange(0, 0x7C00, dtype=np.uint16)  # 0 .. max finite (0x7BFF)
    vals = codes.view(np.float16).astype(np.float64)
    nxt = np.append(vals[1:], 65536.0)  # 65504 + one top-binade ulp (32)
    mids = ((vals + nxt) / 2).astype(np.float32)  # exact: 12 significant bits
    return mids.view(np.uint32)


def bf16_midpoints():
    """f32 bits of midpoints between consecutive non-negative bf16 values: the 16 dropped bits
    are 0x8000. Code 0x7F7F's midpoint is the tie with Inf."""
    codes = np.arange(0, 0x7F80, dtype=np.uint32)
    return (codes << 16) | 0x8000


def with_neighbours(bits):
    """Each pattern, its next-up and next-down f32 (as magnitudes), both signs."""
    bits = bits.astype(np.int64)
    out = np.concatenate([bits, bits + 1, np.maximum(bits - 1, 0)])
    out = out[out < 0x7F800000].astype(np.uint32)
    return np.concatenate([out, out | np.uint32(0x80000000)])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)

    all16 = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    f16_dec = all16.view(np.float16).astype(np.float32)
    bf16_dec = torch.from_numpy(all16.view(np.int16)).view(torch.bfloat16).float().numpy()

    rng = np.random.default_rng(20240611)
    parts = []
    # Exponents from below half the smallest f16 subnormal (2^-26) to past f16 overflow (2^17),
    # every 257th mantissa with a per-exponent phase so different low bits are exercised.
    mant = np.arange(0, 1 << 23, 257, dtype=np.uint32)
    for biased in range(127 - 27, 127 + 18):
        phase = np.uint32(biased * 31 % 257)
        m = np.minimum(mant + phase, np.uint32((1 << 23) - 1))
        parts.append((np.uint32(biased) << np.uint32(23)) | m)
        parts.append((np.uint32(0x80000000) | (np.uint32(biased) << np.uint32(23))) | m)
    parts.append(with_neighbours(f16_midpoints()))
    parts.append(with_neighbours(bf16_midpoints()))
    # f32 subnormals (bf16 keeps some of them) and the largest finite f32 values.
    sub = rng.integers(1, 1 << 23, size=20000, dtype=np.uint32)
    parts += [sub, sub | np.uint32(0x80000000)]
    top = np.arange(0x7F7F0000, 0x7F800000, 7, dtype=np.uint32)
    parts += [top, top | np.uint32(0x80000000)]
    # Zeros, infinities and NaNs (quiet, signalling, with and without low payload bits).
    special = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
               0x7F800001, 0xFF800001, 0x7FBFFFFF, 0xFFBFFFFF, 0x7FFFFFFF, 0xFFFFFFFF,
               0x7FC00001, 0x7F802000, 0x7F810000, 0xFFA00000]
    nan_payload = rng.integers(1, 1 << 23, size=2000, dtype=np.uint32)
    parts += [np.array(special, dtype=np.uint32), np.uint32(0x7F800000) | nan_payload,
              np.uint32(0xFF800000) | nan_payload]
    parts.append(rng.integers(0, 1 << 32, size=2_000_000, dtype=np.uint64).astype(np.uint32))
    inputs = np.concatenate(parts).astype("<u4")

    as_f32 = inputs.view(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        enc_f16 = as_f32.astype(np.float16).view(np.uint16)
    enc_bf16 = torch.from_numpy(as_f32.copy()).to(torch.bfloat16).view(torch.int16).numpy()

    f16_dec.astype("<f4").tofile(os.path.join(a.out, "f16_decode.bin"))
    bf16_dec.astype("<f4").tofile(os.path.join(a.out, "bf16_decode.bin"))
    inputs.tofile(os.path.join(a.out, "encode_input.bin"))
    enc_f16.astype("<u2").tofile(os.path.join(a.out, "encode_f16.bin"))
    enc_bf16.view(np.uint16).astype("<u2").tofile(os.path.join(a.out, "encode_bf16.bin"))
    print(f"float16: {inputs.size} encode inputs")


if __name__ == "__main__":
    main()
