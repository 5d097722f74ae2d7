"""MindSpore graph-mode dump trees written as MindSpore writes them (rank_{id}/{net}/{graph}/
{iteration}/ with {op_type}.{op_name}.{task}.{stream}.{timestamp}.{input|output}.{slot}.{format}.
{dtype}.npy files, or a statistic.csv with a quoted shape and a trailing comma): two ranks, two
iterations, four kernels; the target's Add output of rank 1 iteration 1 holds an Inf. Shared by
tests/cli/test_mindspore_graph.py and tests/cluster/test_mpi.py."""
import os

import numpy as np

OPS = [("Conv2D", "Default--network-Conv2D-op12", 3), ("ReLU", "Default--network-ReLU-op13", 4),
       ("MatMul", "Default--network-MatMul-op20", 5), ("Add", "Default--network-Add-op21", 6)]
STAT_HEADERS = {
    "current": "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,"
               "Max Value,Min Value,Avg Value,L2Norm Value",
    "kbk": "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,"
           "Max Value,Min Value,Avg Value,L2Norm Value,Count",
    "old": "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,"
           "Max Value,Min Value,Avg Value,Count,Negative Zero Count,Positive Zero Count,NaN Count,"
           "Negative Inf Count,Positive Inf Count,Zero Count,L2Norm Value",
}


def value(rank, it, k, slot, io, side, typ):
    base = np.random.default_rng(1000 * rank + 100 * it + 10 * k + slot).standard_normal(
        (2, 3)).astype(np.float32)
    if typ == "ReLU" and io == "output":
        base = np.maximum(base, 0)
    v = base
    if side == "target":
        v = (base + 1e-3 * np.float32(k) * (1 if io == "output" else 0)).astype(np.float32)
        if typ == "Add" and io == "output" and rank == 1 and it == 1:
            v = v.copy()
            v[0, 0] = np.inf
    return v


def make_tree(root, mode, side, header="current"):
    for rank in (0, 1):
        for it in (0, 1):
            d = os.path.join(root, f"rank_{rank}", "Net", "0", str(it))
            os.makedirs(d, exist_ok=True)
            lines = []
            ts = 1700000000000000 + it * 1000
            for k, (typ, name, task) in enumerate(OPS):
                for io, nslot in (("input", 2 if typ in ("MatMul", "Add") else 1), ("output", 1)):
                    for slot in range(nslot):
                        v = value(rank, it, k, slot, io, side, typ)
                        stamp = ts + 10 * k
                        if mode == "npy":
                            np.save(os.path.join(
                                d, f"{typ}.{name}.{task}.0.{stamp}.{io}.{slot}.DefaultFormat.float32.npy"), v)
                            continue
                        stats = {"Max Value": v.max(), "Min Value": v.min(), "Avg Value": v.mean(),
                                 "L2Norm Value": np.linalg.norm(v), "Count": v.size,
                                 "Negative Zero Count": 0, "Positive Zero Count": 0,
                                 "NaN Count": int(np.isnan(v).sum()),
                                 "Negative Inf Count": int(np.isneginf(v).sum()),
                                 "Positive Inf Count": int(np.isposinf(v).sum()),
                                 "Zero Count": int((v == 0).sum())}
                        fields = [typ, name, task, 0, stamp, io, slot, v.nbytes, "float32", '"(2,3)"']
                        for col in STAT_HEADERS[header].split(",")[10:]:
                            x = stats[col]
                            fields.append(repr(float(x)) if isinstance(x, np.floating) else str(x))
                        lines.append(",".join(map(str, fields)) + ",")
            if mode == "statistic":
                with open(os.path.join(d, "statistic.csv"), "w") as f:
                    f.write(STAT_HEADERS[header] + "\n" + "\n".join(lines) + "\n")
