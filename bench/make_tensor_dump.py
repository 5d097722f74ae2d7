#!/usr/bin/env python3
"""Writes a synthetic msprobe tensor-mode dump, a target and a golden, for the cluster tests and
benchmark of tensor pairs split within a large rank (issue 18; docs/cluster.md):

  /usr/bin/python3 bench/make_tensor_dump.py DEST --ops 24,3,3 [--elements E] [--seed S]

DEST/{target,golden}/step0/rank{r}/dump.json and dump_tensor_data/*.pt, as msprobe's L1 tensor
dump writes them: rank r holds the r-th number of --ops API calls (Functional.linear.{i}.forward),
each with one float32 input and one output of E elements (torch.save'd .pt files) and their
Max/Min/Mean/Norm. The target is the golden plus a small relative noise, more on every fifth op,
so the compare has rows of every verdict. Deterministic values (seeded). Prints the bytes written.
"""
import argparse
import json
import os

import torch


def stats(t):
    return {"Max": float(t.max()), "Min": float(t.min()), "Mean": float(t.mean()),
            "Norm": float(t.norm())}


def write_rank(folder, tensors):
    data_dir = os.path.join(folder, "dump_tensor_data")
    os.makedirs(data_dir, exist_ok=True)
    data = {}
    for name, (x, y) in tensors.items():
        entry = {"input_args": [], "input_kwargs": {}, "output": []}
        for key, kind, t in (("input_args", "input", x), ("output", "output", y)):
            file = f"{name}.{kind}.0.pt"
            torch.save(t, os.path.join(data_dir, file))
            entry[key].append({"type": "torch.Tensor", "dtype": "torch.float32",
                               "shape": list(t.shape), **stats(t), "requires_grad": False,
                               "data_name": file})
        data[name] = entry
    doc = {"task": "tensor", "level": "L1", "framework": "pytorch",
           "dump_data_dir": data_dir, "data": data}
    with open(os.path.join(folder, "dump.json"), "w") as f:
        json.dump(doc, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dest")
    ap.add_argument("--ops", default="24,3,3", help="API calls per rank, comma-separated")
    ap.add_argument("--elements", type=int, default=4096)
    ap.add_argument("--seed", type=int, default=18)
    args = ap.parse_args()
    gen = torch.Generator().manual_seed(args.seed)
    for rank, ops in enumerate(int(n) for n in args.ops.split(",")):
        golden, target = {}, {}
        for i in range(ops):
            name = f"Functional.linear.{i}.forward"
            x = torch.randn(args.elements, generator=gen)
            y = torch.tanh(x * 1.3)
            noise = 1e-2 if i % 5 == 4 else 1e-6
            golden[name] = (x, y)
            target[name] = (x, y + noise * torch.randn(args.elements, generator=gen) * y.abs())
        for side, tensors in (("golden", golden), ("target", target)):
            write_rank(os.path.join(args.dest, side, "step0", f"rank{rank}"), tensors)
    total = 0
    for root, _, names in os.walk(args.dest):
        total += sum(os.path.getsize(os.path.join(root, n)) for n in names)
    print(f"wrote {total} bytes")


if __name__ == "__main__":
    main()
