#!/usr/bin/env python3
"""Writes msprobe-format dump trees with planted anomalies for `numprobe scan`, plus expected.json
with the answers, computed here independently of numprobe.

Run with Debian's interpreter: /usr/bin/python3 gen_scan.py --out DIR

Dumps (each DIR/<name>/step{N}/rank{R}/ with dump.json, stack.json, construct.json; tensor-mode
ones add dump_tensor_data/*.npy). dump.json is written with Python's json, so non-finite
statistics are the bare tokens NaN/Infinity/-Infinity, as msprobe writes them.

  nan_single      one rank: torch.empty garbage (ignored), masked_fill with a -inf scalar (not a
                  birth), then Torch.exp.0.forward overflows fp16 (the planted first NaN/Inf,
                  inside Module.head.ExpHead), then Torch.log.1.forward makes -inf from log(0)
  nan_allreduce   two ranks: Torch.sqrt.0.forward on rank 1 makes NaN before the first
                  all_reduce, which spreads it to rank 0; rank 0 has a later birth with a smaller
                  position in its file (only communication order puts it second)
  nan_p2p         two ranks: rank 0 makes Inf and sends it to rank 1 (send/recv, src before dst);
                  rank 1's receive buffer held NaN garbage (ignored) and it has its own later birth
  nan_comm        two ranks: both inputs of an fp16 all_reduce finite, its output Inf: the
                  communication op is the birth
  nan_input       one rank whose very first op gets NaN input data
  nan_steps       step 0 clean, the birth in step 1
  watch_stats     two steps, statistics: every statistics watchpoint hit once or per step
  watch_tensor    two steps, tensor mode: weight update watchpoints computed from .npy files, and
                  an activation whose in-range share is checked with --act-range
  healthy         two steps, statistics: nothing to report
  headroom        tensor mode: values at the fp16/bf16/fp8 overflow and underflow boundaries
  headroom_stats  the same tensors described by statistics only
"""
import argparse
import json
import math
import os
import zlib
from fractions import Fraction

import numpy as np
import torch

USER_FRAME = "File examples/train.py, line {line}, in forward, \n {code}"
TORCH_FRAME = ("File site-packages/torch/nn/modules/module.py, line 1194, in _call_impl, \n"
               " return forward_call(*input, **kwargs)")


def T(mx, mn, mean=None, norm=None, dtype="torch.float32", shape=(4, 8), rg=True, data_name=None):
    leaf = {"type": "torch.Tensor", "dtype": dtype, "shape": list(shape), "Max": mx, "Min": mn,
            "Mean": mean if mean is not None else (mx + mn) / 2 if math.isfinite(mx + mn)
            else float("nan"),
            "Norm": norm if norm is not None else (abs(mx) + abs(mn)) if math.isfinite(mx + mn)
            else float("nan"),
            "requires_grad": rg}
    if data_name:
        leaf["data_name"] = data_name
    return leaf


def I(value):
    return {"type": "int", "value": value}


def F(value):
    return {"type": "float", "value": value}


def group(ranks):
    text = str(ranks)
    return {"type": "torch.ProcessGroup", "group_ranks": ranks,
            "group_id": zlib.crc32(text.encode()) & 0xFFFFFFFF}


def fwd(args, out, kwargs=None, params=None):
    e = {"input_args": args, "input_kwargs": kwargs or {}, "output": out}
    if params is not None:
        e["parameters"] = params
    return e


NAN = float("nan")
INF = float("inf")


def write_rank(root, step, rank, data, task="statistics", construct=None, lines=None,
               tensors=None):
    d = os.path.join(root, f"step{step}", f"rank{rank}")
    os.makedirs(d, exist_ok=True)
    doc = {"task": task, "level": "mix", "framework": "pytorch",
           "dump_data_dir": "dump_tensor_data" if tensors else None, "data": data}
    with open(os.path.join(d, "dump.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)  # allow_nan: bare NaN/Infinity, as msprobe
    stack = {}
    for i, name in enumerate(data):
        line = (lines or {}).get(name, 100 + i)
        stack[str(i)] = [[name], [USER_FRAME.format(line=line, code=f"y = op_{i}(x)"),
                                  TORCH_FRAME]]
    with open(os.path.join(d, "stack.json"), "w", encoding="utf-8") as f:
        json.dump(stack, f, indent=1)
    cons = {name: None for name in data}
    cons.update(construct or {})
    with open(os.path.join(d, "construct.json"), "w", encoding="utf-8") as f:
        json.dump(cons, f, indent=1)
    if tensors:
        td = os.path.join(d, "dump_tensor_data")
        os.makedirs(td, exist_ok=True)
        for name, arr in tensors.items():
            np.save(os.path.join(td, name), arr)


def stats_of(arr, data_name, rg=True):
    a = arr.astype(np.float64)
    return {"type": "torch.Tensor", "dtype": f"torch.{arr.dtype}", "shape": list(arr.shape),
            "Max": float(a.max()), "Min": float(a.min()), "Mean": float(a.mean()),
            "Norm": float(np.sqrt((a * a).sum())), "requires_grad": rg, "data_name": data_name}


# ---------------------------------------------------------------------------------- anomalies

def gen_nan_single(out, expected):
    root = os.path.join(out, "nan_single")
    ids = T(63, 0, dtype="torch.int64", shape=(2, 8), rg=False)
    w = T(0.2, -0.2, 0.0, 3.0, shape=(64, 8))
    h = T(3.0, -3.0, 0.1, 20.0, shape=(2, 8, 8))
    data = {
        "Functional.embedding.0.forward": fwd([ids, w], [h]),
        "Module.emb.Embedding.forward.0": fwd([ids], [h], params={"weight": w}),
        "Torch.empty.0.forward": fwd([I(2), I(8)], [T(NAN, NAN, shape=(2, 8))]),
        "Tensor.masked_fill.0.forward": fwd(
            [h, {"type": "torch.Tensor", "dtype": "torch.bool", "shape": [2, 8, 8], "Max": True,
                 "Min": False, "requires_grad": False}, F(-INF)],
            [T(3.0, -INF, shape=(2, 8, 8))]),
        "Functional.softmax.0.forward": fwd([T(3.0, -INF, shape=(2, 8, 8))],
                                            [T(0.9, 0.0, 0.125, 2.0, shape=(2, 8, 8))]),
        "Functional.linear.0.forward": fwd([T(0.9, 0.0, shape=(2, 8, 8)), T(3.0, -3.0, shape=(8, 8))],
                                           [T(12.0, -11.0, dtype="torch.float16", shape=(2, 8, 8))]),
        "Torch.exp.0.forward": fwd([T(12.0, -11.0, dtype="torch.float16", shape=(2, 8, 8))],
                                   [T(INF, 1.67e-5, dtype="torch.float16", shape=(2, 8, 8))]),
        "Module.head.ExpHead.forward.0": fwd(
            [T(12.0, -11.0, dtype="torch.float16", shape=(2, 8, 8))],
            [T(INF, 1.67e-5, dtype="torch.float16", shape=(2, 8, 8))]),
        "Functional.layer_norm.0.forward": fwd([T(INF, 1.67e-5, dtype="torch.float16",
                                                  shape=(2, 8, 8))],
                                               [T(NAN, NAN, dtype="torch.float16", shape=(2, 8, 8))]),
        "Torch.log.0.forward": fwd([T(0.5, 0.1)], [T(-0.69, -2.3)]),
        "Torch.log.1.forward": fwd([T(1.0, 0.0)], [T(0.0, -INF)]),
        "Functional.linear.0.backward": {"input": [T(NAN, NAN)], "output": [T(NAN, NAN)]},
        "Module.head.ExpHead.parameters_grad.0": {"weight": [T(NAN, NAN, shape=(8, 8))]},
    }
    construct = {"Functional.embedding.0.forward": "Module.emb.Embedding.forward.0",
                 "Torch.exp.0.forward": "Module.head.ExpHead.forward.0",
                 "Module.head.ExpHead.forward.0": "Module.block.Block.forward.0",
                 "Module.block.Block.forward.0": None}
    write_rank(root, 0, 0, data, construct=construct, lines={"Torch.exp.0.forward": 12})
    expected["nan_single"] = {
        "first": {"op_name": "Torch.exp.0.forward", "rank": 0, "step": 0, "kind": "compute",
                  "module_path": ["Module.block.Block.forward.0", "Module.head.ExpHead.forward.0"],
                  "stack_line": "examples/train.py, line 12"},
        "anomalies": [["Torch.exp.0.forward", 0], ["Torch.log.1.forward", 0]],
        # The gradient of ExpHead holds NaN: gradient_exploding.
        "hits": [["gradient_exploding", "Module.head.ExpHead.weight", 0, 0]],
    }


def allreduce(x_in, x_out, ranks=(0, 1)):
    return fwd([x_in], [x_out], kwargs={"group": group(list(ranks))})


def gen_nan_allreduce(out, expected):
    root = os.path.join(out, "nan_allreduce")
    ok = T(2.0, -2.0)
    nan = T(NAN, NAN)
    rank0 = {
        "Functional.linear.0.forward": fwd([ok, ok], [ok]),
        "Distributed.all_reduce.0.forward": allreduce(ok, nan),
        "Torch.log.0.forward": fwd([T(1.0, 0.0)], [T(0.0, -INF)]),
        "Functional.gelu.0.forward": fwd([nan], [nan]),
        "Distributed.all_reduce.1.forward": allreduce(nan, nan),
    }
    rank1 = {
        "Functional.linear.0.forward": fwd([ok, ok], [ok]),
        "Functional.linear.1.forward": fwd([ok, ok], [ok]),
        "Tensor.sub.0.forward": fwd([ok, ok], [T(4.0, -1.0)]),
        "Torch.sqrt.0.forward": fwd([T(4.0, -1.0)], [nan]),
        "Distributed.all_reduce.0.forward": allreduce(nan, nan),
        "Functional.gelu.0.forward": fwd([nan], [nan]),
        "Distributed.all_reduce.1.forward": allreduce(nan, nan),
    }
    write_rank(root, 0, 0, rank0)
    write_rank(root, 0, 1, rank1, lines={"Torch.sqrt.0.forward": 33})
    expected["nan_allreduce"] = {
        "first": {"op_name": "Torch.sqrt.0.forward", "rank": 1, "step": 0, "kind": "compute",
                  "module_path": [], "stack_line": "examples/train.py, line 33"},
        "anomalies": [["Torch.sqrt.0.forward", 1], ["Torch.log.0.forward", 0]],
        "hits": [],
    }


def gen_nan_p2p(out, expected):
    root = os.path.join(out, "nan_p2p")
    ok = T(2.0, -2.0, dtype="torch.float16")
    inf = T(INF, 0.5, dtype="torch.float16")
    rank0 = {
        "Functional.linear.0.forward": fwd([ok, ok], [ok]),
        "Tensor.mul.0.forward": fwd([ok, F(2.0)], [T(12.0, -4.0, dtype="torch.float16")]),
        "Torch.exp.0.forward": fwd([T(12.0, -4.0, dtype="torch.float16")], [inf]),
        "Distributed.send.0.forward": fwd([inf], [None], kwargs={"dst": I(1)}),
    }
    rank1 = {
        # The receive buffer came from torch.empty: NaN garbage, which must not count.
        "Distributed.recv.0.forward": fwd([T(NAN, NAN, dtype="torch.float16")], [inf],
                                          kwargs={"src": I(0)}),
        "Torch.log.0.forward": fwd([T(1.0, 0.0)], [T(0.0, -INF)]),
        "Functional.gelu.0.forward": fwd([inf], [inf]),
    }
    write_rank(root, 0, 0, rank0)
    write_rank(root, 0, 1, rank1)
    expected["nan_p2p"] = {
        "first": {"op_name": "Torch.exp.0.forward", "rank": 0, "step": 0, "kind": "compute",
                  "module_path": [], "stack_line": None},
        "anomalies": [["Torch.exp.0.forward", 0], ["Torch.log.0.forward", 1]],
        "hits": [],
    }


def gen_nan_comm(out, expected):
    root = os.path.join(out, "nan_comm")
    big = T(60000.0, -1.0, dtype="torch.float16")
    inf = T(INF, -2.0, dtype="torch.float16")
    for rank in (0, 1):
        data = {
            "Functional.linear.0.forward": fwd([T(2.0, -2.0), T(2.0, -2.0)], [big]),
            "Distributed.all_reduce.0.forward": allreduce(big, inf),
            "Functional.gelu.0.forward": fwd([inf], [inf]),
        }
        write_rank(root, 0, rank, data)
    expected["nan_comm"] = {
        "first": {"op_name": "Distributed.all_reduce.0.forward", "rank": 0, "step": 0,
                  "kind": "communication", "module_path": [], "stack_line": None},
        "anomalies": [["Distributed.all_reduce.0.forward", 0],
                      ["Distributed.all_reduce.0.forward", 1]],
        # 60000 is above the default tensor_too_large limit (1e4).
        "hits": [[w, t, 0, r] for r in (0, 1)
                 for w, t in (("tensor_too_large", "Functional.linear.0.forward.output.0"),
                              ("tensor_too_large", "Distributed.all_reduce.0.forward.input.0"))],
    }


def gen_nan_input(out, expected):
    root = os.path.join(out, "nan_input")
    data = {
        "Functional.linear.0.forward": fwd([T(NAN, NAN), T(1.0, -1.0)], [T(NAN, NAN)]),
        "Functional.relu.0.forward": fwd([T(NAN, NAN)], [T(NAN, NAN)]),
    }
    write_rank(root, 0, 0, data)
    expected["nan_input"] = {
        "first": {"op_name": "Functional.linear.0.forward", "rank": 0, "step": 0,
                  "kind": "input", "module_path": [], "stack_line": None},
        "anomalies": [["Functional.linear.0.forward", 0]],
        "hits": [],
    }


def gen_nan_steps(out, expected):
    root = os.path.join(out, "nan_steps")
    ok = T(2.0, -2.0)
    write_rank(root, 0, 0, {"Functional.linear.0.forward": fwd([ok, ok], [ok]),
                            "Torch.div.0.forward": fwd([ok, T(1.0, 0.5)], [ok])})
    write_rank(root, 1, 0, {"Functional.linear.0.forward": fwd([ok, ok], [ok]),
                            "Torch.div.0.forward": fwd([ok, T(1.0, 0.0)], [T(INF, -INF)])})
    expected["nan_steps"] = {
        "first": {"op_name": "Torch.div.0.forward", "rank": 0, "step": 1, "kind": "compute",
                  "module_path": [], "stack_line": None},
        "anomalies": [["Torch.div.0.forward", 0]],
        "hits": [],
    }


# -------------------------------------------------------------------------------- watchpoints

def watch_step(step, healthy):
    """One step of the statistics watchpoint dump (or of the healthy twin)."""
    x = T(1.0, -1.0, 0.0, 4.0)
    fc1_w = T(0.3, -0.3, 0.01 + 0.001 * step, 2.0, shape=(8, 8))
    fc1_b = T(0.1, -0.1, 0.002 + 0.001 * step, 0.3, shape=(8,))
    # fc2's weight: identical statistics in both steps (not updated) unless healthy.
    fc2_w = T(0.25, -0.25, 0.02 + (0.001 * step if healthy else 0.0), 1.5, shape=(8, 8))
    # fc3's weight: mean jumps from 0 to 0.5 (norm 2 over 16 elements: ratio >= 1) unless healthy.
    fc3_w = T(0.9, -0.9, (0.5 if step == 1 and not healthy else 0.0) + 0.0001 * step, 2.0,
              shape=(4, 4))
    frozen = T(0.5, -0.5, 0.1, 2.5, shape=(8, 8), rg=False)
    relu_out = T(0.0, 0.0, 0.0, 0.0) if not healthy else T(1.0, 0.0, 0.3, 3.0)
    big = T(3e5, -2.0, 10.0, 4e5) if not healthy else T(30.0, -2.0, 1.0, 40.0)
    gelu_out = T(2e4, -0.1, 10.0, 3e4) if not healthy else T(20.0, -0.1, 1.0, 30.0)
    data = {
        "Functional.linear.0.forward": fwd([x, fc1_w, fc1_b], [x]),
        "Module.fc1.Linear.forward.0": fwd([x], [x], params={"weight": fc1_w, "bias": fc1_b}),
        "Functional.relu.0.forward": fwd([x], [relu_out]),
        "Functional.linear.1.forward": fwd([x, fc2_w], [big]),
        "Module.fc2.Linear.forward.0": fwd([x], [big], params={"weight": fc2_w}),
        "Functional.gelu.0.forward": fwd([x], [gelu_out]),
        "Functional.linear.2.forward": fwd([x, fc3_w], [x]),
        "Module.fc3.Linear.forward.0": fwd([x], [x], params={"weight": fc3_w}),
        "Functional.linear.3.forward": fwd([x, frozen], [x]),
        "Module.frozen.Linear.forward.0": fwd([x], [x], params={"weight": frozen}),
        "Functional.linear.3.backward": {"input": [x], "output": [x]},
        "Module.fc1.Linear.parameters_grad.0": {
            "weight": [T(0.0, 0.0, 0.0, 0.0, shape=(8, 8)) if not healthy
                       else T(0.01, -0.01, 0.0, 0.05, shape=(8, 8))],
            "bias": [T(1e-10, -1e-10, 0.0, 1e-11, shape=(8,)) if not healthy
                     else T(0.02, -0.01, 0.0, 0.04, shape=(8,))]},
        "Module.fc2.Linear.parameters_grad.0": {
            "weight": [T(900.0, -800.0, 0.1, 5e4, shape=(8, 8)) if not healthy
                       else T(0.9, -0.8, 0.1, 5.0, shape=(8, 8))]},
        "Module.fc3.Linear.parameters_grad.0": {
            "weight": [T(0.1, -0.1, 0.0, 0.5, shape=(4, 4))]},
    }
    return data


def gen_watch(out, expected):
    for name, healthy in (("watch_stats", False), ("healthy", True)):
        root = os.path.join(out, name)
        for step in (0, 1):
            write_rank(root, step, 0, watch_step(step, healthy))
    hits = []
    for step in (0, 1):
        hits += [
            ["activation_range", "Functional.relu.0.forward.output.0", step, 0],
            ["tensor_too_large", "Functional.linear.1.forward.output.0", step, 0],
            ["activation_range", "Functional.gelu.0.forward.output.0", step, 0],
            ["tensor_too_large", "Functional.gelu.0.forward.output.0", step, 0],
            ["gradient_all_zero", "Module.fc1.Linear.weight", step, 0],
            ["gradient_vanishing", "Module.fc1.Linear.bias", step, 0],
            ["gradient_exploding", "Module.fc2.Linear.weight", step, 0],
        ]
    hits += [["weight_not_changed", "Module.fc2.Linear.weight", 1, 0],
             ["weight_change_too_large", "Module.fc3.Linear.weight", 1, 0]]
    expected["watch_stats"] = {"first": None, "anomalies": [], "hits": hits}
    expected["healthy"] = {"first": None, "anomalies": [], "hits": []}


def gen_watch_tensor(out, expected):
    root = os.path.join(out, "watch_tensor")
    rng = np.random.default_rng(7)
    w0 = {k: rng.uniform(-0.5, 0.5, size=(8, 8)).astype(np.float32) for k in "abcd"}
    w1 = {
        "a": (w0["a"].astype(np.float64) * (1 + 5e-5)).astype(np.float32),  # too small, not equal
        "b": w0["b"].copy(),                                                 # not changed
        "c": (w0["c"] + 0.5 * np.sign(w0["c"])).astype(np.float32),         # too large
        "d": (w0["d"].astype(np.float64) * (1 + 1e-3)).astype(np.float32),  # healthy
    }
    sig = np.linspace(0.2, 0.8, 32, dtype=np.float32).reshape(4, 8)
    ratios = {}
    for step, ws in ((0, w0), (1, w1)):
        data = {}
        tensors = {}
        x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)
        for k in "abcd":
            entry = f"Module.{k}.Linear.forward.0"
            pname = f"{entry}.parameters.weight.npy"
            xname = f"{entry}.input.0.npy"
            oname = f"{entry}.output.0.npy"
            tensors[pname] = ws[k]
            tensors[xname] = x
            tensors[oname] = x
            data[entry] = fwd([stats_of(x, xname)], [stats_of(x, oname)],
                              params={"weight": stats_of(ws[k], pname)})
        sname_in = "Functional.sigmoid.0.forward.input.0.npy"
        sname_out = "Functional.sigmoid.0.forward.output.0.npy"
        tensors[sname_in] = x
        tensors[sname_out] = sig
        data["Functional.sigmoid.0.forward"] = fwd([stats_of(x, sname_in)],
                                                   [stats_of(sig, sname_out)])
        write_rank(root, step, 0, data, task="tensor", tensors=tensors)
    for k in "abcd":
        a = w1[k].astype(np.float64)
        b = w0[k].astype(np.float64)
        ratios[k] = float(np.abs(a - b).mean() / (np.abs(b).mean() + 1e-9))
    pct = float(100.0 * np.mean((sig >= 0.4) & (sig <= 0.6)))
    expected["watch_tensor"] = {
        "first": None, "anomalies": [],
        "hits": [["weight_change_too_small", "Module.a.Linear.weight", 1, 0],
                 ["weight_not_changed", "Module.b.Linear.weight", 1, 0],
                 ["weight_change_too_large", "Module.c.Linear.weight", 1, 0]],
        "ratios": ratios,
        "sigmoid_pct_in_0.4_0.6": pct,
    }


# ----------------------------------------------------------------------------------- headroom

# The fp8 formats, from their definitions (OCP FP8): exponent bits, mantissa bits, bias, whether
# the top exponent code is Inf/NaN (e5m2) or only S.1111.111 is NaN (e4m3fn).
FP8 = {"fp8_e4m3": (4, 3, 7, False), "fp8_e5m2": (5, 2, 15, True)}


def fp8_round(x, fmt):
    """x rounded to nearest even in the fp8 format; inf/nan when out of range (exact rationals)."""
    ebits, mbits, bias, ieee = FP8[fmt]
    if x == 0:
        return 0.0
    q = Fraction(abs(x))
    emin = 1 - bias
    emax = (2 ** ebits - 1) - bias - (1 if ieee else 0)
    max_mant = (2 ** mbits - 1) if ieee else (2 ** mbits - 2)  # e4m3fn: 1.110 at the top
    max_finite = Fraction(2 ** mbits + max_mant, 2 ** mbits) * Fraction(2) ** emax
    e = max(math.floor(math.log2(q)), emin)
    while Fraction(2) ** e > q:
        e -= 1
    while Fraction(2) ** (e + 1) <= q:
        e += 1
    e = max(e, emin)
    step = Fraction(2) ** (e - mbits)
    n = q / step
    lo = math.floor(n)
    rem = n - lo
    r = lo + (1 if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and lo % 2 == 1) else 0)
    v = r * step
    if v > max_finite:
        return float("inf") if ieee else float("nan")
    return float(v)


FP8_MAX = {"fp8_e4m3": 448.0, "fp8_e5m2": 57344.0}
FP8_MIN_NORMAL = {"fp8_e4m3": 2.0 ** -6, "fp8_e5m2": 2.0 ** -14}


def fits(max_abs, min_nz):
    out = {}
    # fp16 with numpy (correctly rounded double -> half).
    with np.errstate(over="ignore"):
        f16 = float(np.float64(max_abs).astype(np.float16))
    m16 = float(np.float64(min_nz).astype(np.float16)) if min_nz is not None else None
    fi16 = np.finfo(np.float16)
    out["fp16"] = {"overflow": not math.isfinite(f16),
                   "underflow": m16 == 0.0 if m16 is not None else False,
                   "subnormal": (m16 != 0.0 and min_nz < float(fi16.tiny)) if m16 is not None
                   else False,
                   "headroom_log2": math.log2(float(fi16.max) / max_abs)}
    # bf16 with torch (values are float32, so one rounding).
    bmax = torch.tensor(max_abs, dtype=torch.float32).to(torch.bfloat16).float().item()
    bmin = (torch.tensor(min_nz, dtype=torch.float32).to(torch.bfloat16).float().item()
            if min_nz is not None else None)
    fib = torch.finfo(torch.bfloat16)
    out["bf16"] = {"overflow": not math.isfinite(bmax),
                   "underflow": bmin == 0.0 if bmin is not None else False,
                   "subnormal": (bmin != 0.0 and min_nz < fib.tiny) if bmin is not None else False,
                   "headroom_log2": math.log2(fib.max / max_abs)}
    for name in FP8:
        v = fp8_round(max_abs, name)
        m = fp8_round(min_nz, name) if min_nz is not None else None
        out[name] = {"overflow": not math.isfinite(v),
                     "underflow": m == 0.0 if m is not None else False,
                     "subnormal": (m != 0.0 and min_nz < FP8_MIN_NORMAL[name]) if m is not None
                     else False,
                     "headroom_log2": math.log2(FP8_MAX[name] / max_abs)}
    return out


HEADROOM_TENSORS = {
    # name: float32 values (positive, so that statistics know the smallest non-zero too)
    "fp16_edge_ok": [65519.0, 1.0],        # rounds down to 65504 in fp16; > 61440: e5m2 Inf
    "fp16_edge_over": [65520.0, 1.0],      # the fp16 rounding midpoint: Inf
    "fp16_under": [2.0 ** -25, 1.0],       # ties to zero in fp16
    "fp16_subnormal": [3.0e-8, 1.0],       # rounds to 2^-24 in fp16
    "e4m3_tie": [464.0, 0.5],              # ties to 448 in e4m3fn
    "e4m3_over": [465.0, 0.5],             # NaN in e4m3fn
    "e4m3_under": [2.0 ** -10, 0.5],       # ties to zero in e4m3fn
    "bf16_over": [3.4e38, 1.0],            # above bf16's rounding midpoint
    "small_ok": [0.75, 0.125],
}


def gen_headroom(out, expected):
    for name, tensor_mode in (("headroom", True), ("headroom_stats", False)):
        root = os.path.join(out, name)
        data = {}
        tensors = {}
        construct = {}
        for key, values in HEADROOM_TENSORS.items():
            arr = np.array(values, dtype=np.float32)
            entry = f"Torch.{key}.0.forward"
            oname = f"{entry}.output.0.npy"
            out_leaf = stats_of(arr, oname)
            if not tensor_mode:
                del out_leaf["data_name"]
            data[entry] = fwd([I(2)], [out_leaf])
            construct[entry] = f"Module.{key}_layer.Block.forward.0"
            tensors[oname] = arr
        write_rank(root, 0, 0, data, task="tensor" if tensor_mode else "statistics",
                   construct=construct, tensors=tensors if tensor_mode else None)
    rows = {}
    for key, values in HEADROOM_TENSORS.items():
        arr = np.array(values, dtype=np.float32).astype(np.float64)
        rows[f"Torch.{key}.0.forward.output.0"] = {
            "layer": f"Module.{key}_layer.Block",
            "max_abs": float(np.abs(arr).max()),
            "min_nonzero_abs": float(np.abs(arr[arr != 0]).min()),
            "fits": fits(float(np.abs(arr).max()), float(np.abs(arr[arr != 0]).min())),
        }
    over = [k for k, values in HEADROOM_TENSORS.items() if max(values) > 1e4]
    hits = [["tensor_too_large", f"Torch.{k}.0.forward.output.0", 0, 0] for k in over]
    expected["headroom"] = {"first": None, "anomalies": [], "hits": hits, "rows": rows}
    expected["headroom_stats"] = expected["headroom"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    a = p.parse_args()
    expected = {}
    gen_nan_single(a.out, expected)
    gen_nan_allreduce(a.out, expected)
    gen_nan_p2p(a.out, expected)
    gen_nan_comm(a.out, expected)
    gen_nan_input(a.out, expected)
    gen_nan_steps(a.out, expected)
    gen_watch(a.out, expected)
    gen_watch_tensor(a.out, expected)
    gen_headroom(a.out, expected)
    with open(os.path.join(a.out, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
