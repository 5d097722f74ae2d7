#!/usr/bin/env python3
"""Pairs of msprobe dumps with a planted divergence, for numprobe's first-divergence analysis.

A small network (linear, relu, linear, layer_norm, *scale, gelu, linear, +residual, softmax,
linear; the middle six inside a module) runs forward and backward in float32 for the golden
dump. The target dump runs the same network, but one op's output is altered and everything after
it is computed from the altered value, so every later op disagrees too:

  perturbed_stats / perturbed_tensor   gelu's output x (1 + 2% noise)          -> gelu first
  nan_stats                            one NaN in gelu's output                 -> gelu first
  growth_stats                         the input x carries 1e-4 relative noise (every op's
                                       inputs disagree), gelu's output 3% noise -> gelu first
  bf16_stats / bf16_tensor             every activation rounded to bfloat16     -> no divergence
  same_stats                           identical runs                           -> no divergence

Layout: OUT/<case>/{target,golden}/step0/rank0/{dump.json,stack.json,construct.json}, plus
dump_tensor_data/*.pt for the tensor cases. OUT/expected.json: {case: {"mode", "first"}}, with
"first" the op numprobe must name first (null for none). Deterministic (fixed seeds). Run with
Debian's python3 (torch 1.13)."""
import argparse
import json
import os

import torch
import torch.nn.functional as F

PLANTED = "Functional.gelu.0.forward"
MODULE = "Module.block.Block.forward.0"


def stats(t):
    t = t.detach()
    f = t.to(torch.float64)
    return {"Max": f.max().item(), "Min": f.min().item(), "Mean": f.mean().item(),
            "Norm": f.norm().item()}


class Recorder:
    def __init__(self, tensor_mode, data_dir):
        self.data = {}
        self.stack = {}
        self.construct = {}
        self.tensor_mode = tensor_mode
        self.data_dir = data_dir

    def leaf(self, entry, kind, index, t):
        if t is None:
            return None
        if not isinstance(t, torch.Tensor):
            return {"type": type(t).__name__, "value": t}
        leaf = {"type": "torch.Tensor", "dtype": str(t.dtype), "shape": list(t.shape)}
        leaf.update(stats(t))
        leaf["requires_grad"] = bool(t.requires_grad)
        if self.tensor_mode:
            name = f"{entry}.{kind}.{index}.pt"
            torch.save(t.detach().clone().contiguous(), os.path.join(self.data_dir, name))
            leaf["data_name"] = name
        return leaf

    def forward(self, entry, inputs, output, parent=None, line=1):
        self.data[entry] = {
            "input_args": [self.leaf(entry, "input", i, t) for i, t in enumerate(inputs)],
            "input_kwargs": {},
            "output": [self.leaf(entry, "output", 0, output)],
        }
        self.stack[entry] = [f"File examples/model.py, line {line}, in forward, \n step {entry}",
                             "File examples/train.py, line 9, in main, \n out = model(x)"]
        self.construct[entry] = parent

    def backward(self, entry, grad_outputs, grad_inputs):
        self.data[entry] = {
            "input": [self.leaf(entry, "input", i, t) for i, t in enumerate(grad_outputs)],
            "output": [self.leaf(entry, "output", i, t) for i, t in enumerate(grad_inputs)],
        }
        self.construct[entry] = None


def run(case, side, root):
    tensor_mode = case.endswith("_tensor")
    folder = os.path.join(root, case, side, "step0", "rank0")
    data_dir = os.path.join(folder, "dump_tensor_data")
    os.makedirs(data_dir if tensor_mode else folder, exist_ok=True)
    rec = Recorder(tensor_mode, data_dir)

    g = torch.Generator().manual_seed(7)
    x = torch.randn(8, 16, generator=g)
    w1, b1 = torch.randn(32, 16, generator=g) * 0.25, torch.randn(32, generator=g) * 0.1
    w2, b2 = torch.randn(32, 32, generator=g) * 0.2, torch.randn(32, generator=g) * 0.1
    w3, b3 = torch.randn(16, 32, generator=g) * 0.2, torch.randn(16, generator=g) * 0.1
    w4, b4 = torch.randn(4, 16, generator=g) * 0.3, torch.randn(4, generator=g) * 0.1
    noise = torch.Generator().manual_seed(99)
    target = side == "target"
    low = target and case.startswith("bf16")

    def act(t):
        """An activation as the run produced it: bf16 in the bf16 cases' target."""
        return t.to(torch.bfloat16) if low else t

    def compute(t):
        return t.to(torch.float32)

    if target and case == "growth_stats":
        x = x * (1 + 1e-4 * torch.randn(x.shape, generator=noise))
    x = x.requires_grad_(True)
    h1 = act(F.linear(compute(act(x)), w1, b1))
    rec.forward("Functional.linear.0.forward", [act(x), w1, b1], h1, line=11)
    h2 = act(F.relu(compute(h1)))
    rec.forward("Functional.relu.0.forward", [h1], h2, line=12)
    h3 = act(F.linear(compute(h2), w2, b2))
    rec.forward("Functional.linear.1.forward", [h2, w2, b2], h3, MODULE, line=13)
    h4 = act(F.layer_norm(compute(h3), [32]))
    rec.forward("Functional.layer_norm.0.forward", [h3, [32]], h4, MODULE, line=14)
    h5 = act(compute(h4) * 0.5)
    rec.forward("Tensor.__mul__.0.forward", [h4, 0.5], h5, MODULE, line=15)
    h6 = F.gelu(compute(h5))
    if target and case in ("perturbed_stats", "perturbed_tensor"):
        h6 = h6 * (1 + 0.02 * torch.randn(h6.shape, generator=noise))
    if target and case == "growth_stats":
        h6 = h6 * (1 + 0.03 * torch.randn(h6.shape, generator=noise))
    if target and case == "nan_stats":
        mask = torch.zeros_like(h6)
        mask[0, 0] = float("nan")
        h6 = h6 + mask
    h6 = act(h6)
    rec.forward(PLANTED, [h5], h6, MODULE, line=16)
    h7 = act(F.linear(compute(h6), w3, b3))
    rec.forward("Functional.linear.2.forward", [h6, w3, b3], h7, MODULE, line=17)
    h8 = act(compute(h7) + compute(act(x)))
    rec.forward("Tensor.__add__.0.forward", [h7, act(x)], h8, MODULE, line=18)
    rec.forward(MODULE, [h2], h8, None, line=19)
    h9 = act(F.softmax(compute(h8), dim=-1))
    rec.forward("Functional.softmax.0.forward", [h8, -1], h9, line=20)
    out = F.linear(compute(h9), w4, b4)
    rec.forward("Functional.linear.3.forward", [h9, w4, b4], out, line=21)

    # Backward of the last ops (gradients of the mean squared output).
    for t in (h8, h9):
        t.retain_grad()
    loss = out.pow(2).mean()
    loss.backward()
    grad_out = 2 * out.detach() / out.numel()
    rec.backward("Functional.linear.3.backward", [grad_out], [h9.grad, None, None])
    rec.backward("Functional.softmax.0.backward", [h9.grad], [h8.grad])

    dump = {"task": "tensor" if tensor_mode else "statistics", "level": "mix",
            "framework": "pytorch", "dump_data_dir": data_dir if tensor_mode else None,
            "data": rec.data}
    with open(os.path.join(folder, "dump.json"), "w", encoding="utf-8") as f:
        json.dump(dump, f, indent=1, allow_nan=True)
    with open(os.path.join(folder, "stack.json"), "w", encoding="utf-8") as f:
        json.dump(rec.stack, f, indent=1)
    with open(os.path.join(folder, "construct.json"), "w", encoding="utf-8") as f:
        json.dump(rec.construct, f, indent=1)


CASES = {
    "perturbed_stats": PLANTED,
    "perturbed_tensor": PLANTED,
    "nan_stats": PLANTED,
    "growth_stats": PLANTED,
    "bf16_stats": None,
    "bf16_tensor": None,
    "same_stats": None,
}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    a = p.parse_args()
    expected = {}
    for case, first in CASES.items():
        for side in ("target", "golden"):
            run(case, side, a.out)
        expected[case] = {"mode": "tensor" if case.endswith("_tensor") else "statistics",
                          "first": first, "module": MODULE if first else None}
    with open(os.path.join(a.out, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=1)


if __name__ == "__main__":
    main()
