#!/usr/bin/env python3
"""Tensor pairs for numprobe's tensor-mode metrics, saved with torch.save as msprobe's dumps are,
and the values msprobe's compare gives for them, worked out here independently with numpy (the
steps of msprobe's npy_compare: read as numpy reads a .pt, squeeze, empty / shape / NaN-Inf
checks, relative error in numpy's own types, 12-decimal rounding, cosine rounding). numprobe's
extra metrics are worked out with numpy and torch (ULP distances through torch's own rounding).

Writes OUT/<case>_t.pt, OUT/<case>_g.pt and OUT/expected.json. Deterministic (fixed seeds).
Run with Debian's python3 (numpy 1.24, torch 1.13)."""
import argparse
import json
import math
import os

import numpy as np
import torch

EPS = np.finfo(float).eps
FLOATS = (np.float16, np.float32, np.float64)


def as_numpy(t):
    """What msprobe's read_pt_data + np.squeeze give."""
    t = t.detach()
    if t.dtype == torch.bfloat16:
        t = t.to(torch.float32)
    return np.squeeze(t.numpy())


def fmt12(v):
    return float("{:.12f}".format(v))


def cell(v):
    if isinstance(v, str):
        return v
    return repr(float(v))


def relative_err(n, b):
    """msprobe's get_relative_err since its 2026-07-07 change: both sides in
    result_type(n, b, float32), that type's epsilon added where the golden value is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if n.dtype not in FLOATS:
            n = n.astype(float)
        if b.dtype not in FLOATS:
            b = b.astype(float)
        zero = b == 0
        rt = np.result_type(n, b, np.float32)
        n = n.astype(rt)
        b = b.astype(rt)
        eps = np.finfo(rt).eps
        n[zero] += eps
        b[zero] += eps
        return np.abs(np.divide(n - b, b))


def msprobe_metrics(tt, tg):
    n = as_numpy(tt)
    b = as_numpy(tg)
    if n.size == 0:
        return ["unsupported"] * 6
    if n.shape != b.shape:
        return ["shape unmatched"] * 6
    zero_d = n.shape == ()
    if not zero_d:
        n = n.copy()
        b = b.copy()
        nf, bf = n.astype(float), b.astype(float)
        n_inf, b_inf, n_nan, b_nan = np.isinf(nf), np.isinf(bf), np.isnan(nf), np.isnan(bf)
        if n_inf.any() or b_inf.any() or n_nan.any() or b_nan.any():
            if np.array_equal(n_inf, b_inf) and np.array_equal(n_nan, b_nan):
                n[n_inf] = 0
                b[b_inf] = 0
                n[n_nan] = 0
                b[b_nan] = 0
            else:
                return ["N/A"] * 6
    rel = relative_err(n, b)
    if zero_d:
        if n.dtype == bool:
            n, b = n.astype(float), b.astype(float)
        abs_err = np.max(np.abs(n - b))
        max_rel = np.max(np.abs(rel))
        return ["unsupported", "unsupported",
                "Nan" if np.isnan(abs_err) else cell(fmt12(abs_err)),
                "Nan" if np.isnan(max_rel) else cell(fmt12(max_rel)),
                "unsupported", "unsupported"]
    nd = n.reshape(-1).astype(float)
    bd = b.reshape(-1).astype(float)
    out = []
    if len(nd) == 1:
        out.append("unsupported")
    else:
        a_norm, b_norm = np.linalg.norm(nd), np.linalg.norm(bd)
        if a_norm <= EPS and b_norm <= EPS:
            out.append(cell(1.0))
        elif a_norm <= EPS or b_norm <= EPS:
            out.append("Nan")
        else:
            cos = nd.dot(bd) / (a_norm * b_norm)
            if np.isnan(cos):
                out.append("Nan")
            else:
                v = fmt12(cos)
                out.append(cell(round(v, 6) if v > 0.9999 else v))
    out.append(cell(np.linalg.norm(nd - bd, ord=2)))
    abs_err = np.max(np.abs(nd - bd))
    out.append("Nan" if np.isnan(abs_err) else cell(fmt12(abs_err)))
    max_rel = np.max(np.abs(rel))
    out.append("Nan" if np.isnan(max_rel) else cell(fmt12(max_rel)))
    for thr in (0.001, 0.005):
        out.append(cell(fmt12(np.sum(rel < thr) / np.size(rel))))
    return out


SIG_BITS = {torch.float64: 53, torch.float32: 24, torch.float16: 11, torch.bfloat16: 8}
TOL = {torch.float64: (1e-7, 1e-7), torch.float32: (1.3e-6, 1e-5), torch.float16: (1e-3, 1e-5),
       torch.bfloat16: (1.6e-2, 1e-5)}
INT_VIEW = {torch.float64: torch.int64, torch.float32: torch.int32, torch.float16: torch.int16,
            torch.bfloat16: torch.int16}
SIGN = {torch.float64: 1 << 63, torch.float32: 1 << 31, torch.float16: 1 << 15,
        torch.bfloat16: 1 << 15}


def ordinal(values, dtype):
    """Monotonic positions of values rounded (once, by torch) to dtype; +0 and -0 are both 0."""
    bits = values.to(dtype).contiguous().view(INT_VIEW[dtype]).to(torch.int64).numpy()
    sign = SIGN[dtype]
    u = bits.astype(np.uint64) & np.uint64((sign << 1) - 1)
    mag = (u & np.uint64(sign - 1)).astype(np.int64)
    neg = (u & np.uint64(sign)) != 0
    return np.where(neg, -mag, mag)


def extras(tt, tg):
    """numprobe's extra metrics over the squeezed, flattened pair (raw values, no zeroing)."""
    n = as_numpy(tt)
    b = as_numpy(tg)
    if n.size == 0 or n.shape != b.shape:
        return None
    nd = np.asarray(n, dtype=float).reshape(-1)
    bd = np.asarray(b, dtype=float).reshape(-1)
    fin = np.isfinite(nd) & np.isfinite(bd)
    d = nd[fin] - bd[fin]
    out = {
        "nan_mismatch": int(np.sum(np.isnan(nd) != np.isnan(bd))),
        "pos_inf_mismatch": int(np.sum((nd == np.inf) != (bd == np.inf))),
        "neg_inf_mismatch": int(np.sum((nd == -np.inf) != (bd == -np.inf))),
        "mean_abs_err": float(np.mean(np.abs(d))) if d.size else 0.0,
        "rmse": float(np.sqrt(np.mean(d * d))) if d.size else 0.0,
        "worst_index": int(np.flatnonzero(fin)[np.argmax(np.abs(d))]) if d.size else -1,
    }
    g = bd[fin]
    nz = g != 0
    out["mean_rel_err"] = float(np.mean(np.abs(d[nz]) / np.abs(g[nz]))) if nz.any() else 0.0
    noise, power = float(np.sum(d * d)), float(np.sum(g * g))
    out["sqnr_db"] = (math.inf if noise == 0 else -math.inf if power == 0
                      else 10 * math.log10(power / noise))
    if tt.is_floating_point() and tg.is_floating_point():
        low = min((tt.dtype, tg.dtype), key=lambda dt: SIG_BITS[dt])
        rtol, atol = TOL[low]
        # Round each side from its own dtype (one rounding, as from the stored value).
        rt = tt.detach().reshape(-1)[torch.from_numpy(fin)].to(low)
        rg = tg.detach().reshape(-1)[torch.from_numpy(fin)].to(low)
        ok = torch.isfinite(rt.to(torch.float64)) & torch.isfinite(rg.to(torch.float64))
        ulp = np.abs(ordinal(rt[ok], low) - ordinal(rg[ok], low)).astype(float)
        out["ulp_dtype"] = {torch.float64: "f64", torch.float32: "f32", torch.float16: "f16",
                            torch.bfloat16: "bf16"}[low]
        out["max_ulp"] = float(ulp.max()) if ulp.size else 0.0
        out["mean_ulp"] = float(ulp.mean()) if ulp.size else 0.0
    else:
        rtol, atol = 0.0, 0.0
        out["ulp_dtype"] = ""
    close = np.zeros(nd.shape, dtype=bool)
    close[fin] = np.abs(d) <= atol + rtol * np.abs(bd[fin])
    close |= np.isnan(nd) & np.isnan(bd)
    close |= np.isinf(nd) & np.isinf(bd) & (np.sign(nd) == np.sign(bd))
    out["allclose_ratio"] = float(np.mean(close))
    return out


def cases():
    g = torch.Generator().manual_seed(20261130)

    def randn(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)

    out = {}
    base = randn(1000)
    out["f32_close"] = (base + 1e-4 * randn(1000), base)
    golden = randn(300)
    out["bf16_vs_f32"] = (golden.to(torch.bfloat16), golden)
    out["f16_vs_f32"] = (golden.to(torch.float16), golden)
    z = randn(64)
    z[::4] = 0
    t = z.clone()
    t[::8] = 1e-3
    out["zero_golden_f32"] = (t, z)
    h = randn(64, dtype=torch.float16)
    h[::4] = 0
    out["f16_zero_golden"] = (h + 0.001 * randn(64, dtype=torch.float16) * (h != 0), h)
    # msprobe's 2026-07-07 rule: f32 epsilon in f32 arithmetic (MaxRelativeErr 16777215.0), and
    # for f16 pairs f32 arithmetic instead of f16 (69504.0, not Nan).
    out["zero_golden_f32_pair"] = (torch.tensor([1.0, 2.0]), torch.tensor([0.0, 0.0]))
    out["zero_golden_f16_pair"] = (torch.tensor([543 / 65536, 0.25], dtype=torch.float16),
                                   torch.tensor([0.0, 0.25], dtype=torch.float16))
    a = randn(50)
    b = a + 1e-3 * randn(50)
    for v in (a, b):
        v[3] = float("nan")
        v[10] = float("inf")
    out["nan_inf_same_positions"] = (a, b)
    c = randn(50)
    d = c.clone()
    c[7] = float("nan")
    out["nan_only_in_target"] = (c, d)
    e = randn(20)
    f = e.clone()
    e[5] = float("inf")
    f[5] = float("-inf")
    out["inf_sign_differs"] = (e, f)
    out["zero_d"] = (torch.tensor(2.4758386611938477), torch.tensor(2.475844144821167))
    out["zero_d_f16"] = (torch.tensor(1.5, dtype=torch.float16), torch.tensor(1.25, dtype=torch.float16))
    out["zero_d_nan"] = (torch.tensor(float("nan")), torch.tensor(1.0))
    out["zero_d_zero_golden"] = (torch.tensor(0.5), torch.tensor(0.0))
    out["length_one"] = (torch.tensor([3.0]), torch.tensor([2.0]))
    out["shape_mismatch"] = (randn(3, 4), randn(4, 3))
    s = randn(4, 3)
    out["squeeze_to_same_shape"] = ((s + 1e-3).reshape(4, 1, 3), s)
    out["empty"] = (torch.zeros(0), torch.zeros(0))
    out["int64"] = (torch.tensor([1, 5, 0, -3, 8]), torch.tensor([1, 4, 0, -3, 9]))
    out["bool"] = (torch.tensor([True, False, True, True]), torch.tensor([True, True, True, False]))
    w = randn(200, dtype=torch.float64)
    out["f64"] = (w * (1 + 1e-9), w)
    out["all_zero_both"] = (torch.zeros(16), torch.zeros(16))
    out["target_all_zero"] = (torch.zeros(16), randn(16))
    m = randn(30, 40)
    out["strided_target"] = ((m + 1e-5).t(), m.t().contiguous())
    thr = torch.ones(400)
    k = torch.arange(400, dtype=torch.float64)
    out["threshold_boundaries"] = ((1 + k * 2.5e-5).to(torch.float32), thr)
    big = randn(200_003)
    out["large_chunked"] = (big.to(torch.bfloat16).to(torch.float32) + 1e-6, big)
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    expected = {}
    for name, (t, gold) in cases().items():
        torch.save(t, os.path.join(a.out, f"{name}_t.pt"))
        torch.save(gold, os.path.join(a.out, f"{name}_g.pt"))
        expected[name] = {"target": f"{name}_t.pt", "golden": f"{name}_g.pt",
                          "msprobe": msprobe_metrics(t, gold), "extras": extras(t, gold)}
    with open(os.path.join(a.out, "expected.json"), "w", encoding="utf-8") as f:
        json.dump({"cases": expected}, f, indent=1, allow_nan=True)


if __name__ == "__main__":
    main()
