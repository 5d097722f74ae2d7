#!/usr/bin/env python3
"""Writes a synthetic multi-rank msprobe statistics dump, a target and a golden, for the cluster
tests and benchmark (issue 18; docs/cluster.md):

  /usr/bin/python3 bench/make_cluster_dump.py DEST --ranks R [--steps S] [--ops N]
      [--plant-rank K] [--plant-step T] [--uneven] [--plant-nan]

DEST/{target,golden}/step{s}/rank{r}/dump.json, as msprobe's L1 dump of a tensor-parallel
transformer writes them: per layer layer_norm, the QKV linear, matmul, softmax, matmul, the output
linear, Distributed.all_reduce (the row-parallel sum across ranks), the residual add, layer_norm,
two linears around a gelu, another Distributed.all_reduce and add: 14 API calls, each with its
tensor inputs and output as Max/Min/Mean/Norm, values that differ per rank, step and layer.
The golden and the target are the same run except one planted bug: on rank K in step T the gelu
of the middle layer outputs 5% too much. Its error reaches the other ranks through the next
all_reduce (their all_reduce outputs differ while its inputs agree), so every rank diverges but
the first divergence across ranks is rank K's gelu. --uneven gives rank r (r mod 4) * 10% more
layers, so that ranks differ in size. --plant-nan plants NaN instead (for numprobe scan): the gelu's
output on rank K is NaN, carried on within the rank to the next all_reduce, whose output is NaN on
every rank; the first anomaly across ranks is rank K's gelu. Deterministic: the same arguments write the same bytes.
Prints the planted op and the bytes written.
"""
import argparse
import os
import random

LAYER = [  # (API, tensor inputs, output scale relative to the first input)
    ("Functional.layer_norm", 3, 1.0),
    ("Functional.linear", 3, 1.7),
    ("Torch.matmul", 2, 2.3),
    ("Functional.softmax", 1, 0.05),
    ("Torch.matmul", 2, 0.9),
    ("Functional.linear", 3, 1.2),
    ("Distributed.all_reduce", 1, 1.0),
    ("Tensor.__add__", 2, 1.4),
    ("Functional.layer_norm", 3, 1.0),
    ("Functional.linear", 3, 2.1),
    ("Functional.gelu", 1, 0.6),
    ("Functional.linear", 3, 1.3),
    ("Distributed.all_reduce", 1, 1.0),
    ("Tensor.__add__", 2, 1.1),
]
GELU = 10          # the planted op's position within a layer
NEXT_REDUCE = 12   # the all_reduce that carries its error to every rank
PLANT = 0.05       # the planted relative error


def leaf(rng, scale, shape):
    mx = 3.0 * scale * (1.0 + 0.1 * rng.random())
    mn = -2.9 * scale * (1.0 + 0.1 * rng.random())
    mean = 0.01 * scale * (rng.random() - 0.5)
    norm = 40.0 * scale * (1.0 + 0.1 * rng.random())
    return (f'{{"type": "torch.Tensor", "dtype": "torch.float32", "shape": {shape}, '
            f'"Max": {mx!r}, "Min": {mn!r}, "Mean": {mean!r}, "Norm": {norm!r}, '
            f'"requires_grad": true}}')


def scaled(text_leaf, factor):
    """The same leaf with its statistics multiplied by `factor` (Mean too)."""
    import json
    d = json.loads(text_leaf)
    for k in ("Max", "Min", "Mean", "Norm"):
        d[k] = d[k] * factor
    return json.dumps(d)


def nan_leaf(text_leaf):
    """The same leaf with NaN statistics."""
    return scaled(text_leaf, float("nan"))


def write_rank(path, rank, step, layers, ranks, planted, target, nan=False):
    """One rank's dump.json. `planted` is (rank, step, layer) of the bug; the target carries it."""
    rng = random.Random(f"{step}/{rank}")
    counts = {}
    entries = []
    p_rank, p_step, p_layer = planted
    bug_here = target and step == p_step
    for layer in range(layers):
        for pos, (api, n_in, out_scale) in enumerate(LAYER):
            n = counts.get(api, 0)
            counts[api] = n + 1
            base = 1.0 + 0.01 * (layer % 17)
            inputs = [leaf(rng, base * (1.0 + 0.2 * k), "[4, 512, 1024]") for k in range(n_in)]
            output = leaf(rng, base * out_scale, "[4, 512, 1024]")
            if bug_here and layer == p_layer and nan:
                if rank == p_rank and pos == GELU:
                    output = nan_leaf(output)                      # the bug
                elif rank == p_rank and GELU < pos < NEXT_REDUCE:
                    inputs[0] = nan_leaf(inputs[0])
                    output = nan_leaf(output)
                elif pos == NEXT_REDUCE:
                    if rank == p_rank:
                        inputs[0] = nan_leaf(inputs[0])
                    output = nan_leaf(output)                      # the sum reaches every rank
            elif bug_here and layer == p_layer:
                if rank == p_rank and pos == GELU:
                    output = scaled(output, 1.0 + PLANT)           # the bug
                elif rank == p_rank and GELU < pos < NEXT_REDUCE:
                    inputs[0] = scaled(inputs[0], 1.0 + PLANT)     # carried on within the rank
                    output = scaled(output, 1.0 + PLANT)
                elif pos == NEXT_REDUCE:
                    if rank == p_rank:
                        inputs[0] = scaled(inputs[0], 1.0 + PLANT)
                    output = scaled(output, 1.0 + PLANT / ranks)   # the sum reaches every rank
            entries.append(f'"{api}.{n}.forward": {{"input_args": [{", ".join(inputs)}], '
                           f'"input_kwargs": {{}}, "output": [{output}]}}')
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write('{"task": "statistics", "level": "L1", "framework": "pytorch", '
                '"dump_data_dir": null, "data": {\n')
        f.write(",\n".join(entries))
        f.write("\n}}\n")
    return os.path.getsize(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dest")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--steps", type=int, default=1)
    ap.add_argument("--ops", type=int, default=2000, help="API calls per rank (rounded to layers)")
    ap.add_argument("--plant-rank", type=int, default=None, help="default: ranks * 3 // 5")
    ap.add_argument("--plant-step", type=int, default=0)
    ap.add_argument("--uneven", action="store_true")
    ap.add_argument("--plant-nan", action="store_true", help="plant NaN instead of a 5%% error")
    a = ap.parse_args()
    base_layers = max(1, round(a.ops / len(LAYER)))
    plant_rank = a.ranks * 3 // 5 if a.plant_rank is None else a.plant_rank
    planted = (plant_rank, a.plant_step, base_layers // 2)
    total = 0
    for step in range(a.steps):
        for rank in range(a.ranks):
            layers = base_layers + (base_layers * (rank % 4) // 10 if a.uneven else 0)
            for side in ("target", "golden"):
                path = os.path.join(a.dest, side, f"step{step}", f"rank{rank}", "dump.json")
                total += write_rank(path, rank, step, layers, a.ranks, planted, side == "target",
                                    a.plant_nan)
    gelu_index = planted[2] * sum(1 for api, _, _ in LAYER if api == "Functional.gelu")
    print(f"planted: step{a.plant_step}/rank{plant_rank} Functional.gelu.{gelu_index}.forward")
    print(f"bytes: {total}")


if __name__ == "__main__":
    main()
