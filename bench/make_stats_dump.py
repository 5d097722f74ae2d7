#!/usr/bin/env python3
"""Writes a pair of msprobe statistics-mode dumps with N entries each, quickly, for the large-dump
benchmark (issue 17, point 8; bench/large_stats_bench.cc) and for correctness checks on a large
generated dump:

  /usr/bin/python3 bench/make_stats_dump.py DEST N

DEST/target/step0/rank0/dump.json and DEST/golden/step0/rank0/dump.json, laid out as an L1 dump:
each entry an API call with two tensor inputs, a scalar and one output, Max/Min/Mean/Norm as
msprobe writes them. The target is bf16 with small drifts, and one entry in the middle gets a
planted error (its output's statistics off by 10%) so that compare and scan have findings.
Deterministic: the same N writes the same bytes.
"""
import os
import sys

LEAF = ('{{"type": "torch.Tensor", "dtype": "{dtype}", "shape": [{rows}, 1024], '
        '"Max": {max!r}, "Min": {min!r}, "Mean": {mean!r}, "Norm": {norm!r}, '
        '"requires_grad": true}}')


def leaf(dtype, scale, k):
    return LEAF.format(dtype=dtype, rows=8 + k % 8, max=3.25 * scale, min=-3.125 * scale,
                       mean=0.0123 * scale, norm=181.02 * scale)


def entry(i, target, planted):
    s = 1.0 + (i % 13) * 0.01 + (1e-4 * (i % 7) if target else 0.0)
    out_scale = s * 1.01 * (1.1 if target and i == planted else 1.0)
    act = "torch.bfloat16" if target else "torch.float32"
    name = f"Functional.op{i % 211}.{i // 211}.forward"
    return (f'\n  "{name}": {{"input_args": [{leaf(act, s, i)}, {leaf("torch.float32", 1.0, i)}, '
            f'{{"type": "float", "value": 0.5}}], "input_kwargs": {{}}, '
            f'"output": [{leaf(act, out_scale, i)}]}}')


def write_dump(path, n, target):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    planted = n // 2
    with open(path, "w") as f:
        f.write('{"task": "statistics", "level": "L1", "framework": "pytorch", '
                '"dump_data_dir": null, "data": {')
        block = 10000
        for start in range(0, n, block):
            f.write(",".join(entry(i, target, planted) for i in range(start, min(n, start + block)))
                    if start == 0 else
                    "," + ",".join(entry(i, target, planted)
                                   for i in range(start, min(n, start + block))))
        f.write("\n}}\n")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: make_stats_dump.py DEST N")
    dest, n = sys.argv[1], int(sys.argv[2])
    for side in ("target", "golden"):
        path = os.path.join(dest, side, "step0", "rank0", "dump.json")
        write_dump(path, n, side == "target")
        print(path, os.path.getsize(path))


if __name__ == "__main__":
    main()
