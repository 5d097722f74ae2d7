#!/usr/bin/env python3
"""Captures the planted-bug corpus (planted.py) with numprobe's PrecisionDebugger, in one process
(torch is imported once): for every model its golden run and for every case its target run, each
in four configurations (statistics and tensor task, levels L1 and mix), step 0 only. Then the
same dump trees in msprobe's format: hard-linked copies without numprobe's own files (casts.json
and the capture journal), which msprobe does not write.

    make_corpus.py OUT [--cases a,b,...] [--configs statistics-L1,...] [--seed N]

Layout:
  OUT/numprobe/golden/<model>/<config>/step0/proc<pid>/...   numprobe's capture
  OUT/numprobe/target/<case>/<config>/step0/proc<pid>/...
  OUT/msprobe/...                                            the same without casts.json
  OUT/expected.json   {"cases": {case: {kind, model, op, cast, says}}, "configs": [...],
                       "capture_seconds": {case: s}}

Run with /usr/bin/python3 and the build's python/ folder on PYTHONPATH.
"""
import argparse
import json
import os
import shutil
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import planted  # noqa: E402

CONFIGS = ["statistics-L1", "statistics-mix", "tensor-L1", "tensor-mix"]
# numprobe's own files beside msprobe's: the casts record and the capture journal.
SIDE_RECORDS = {"casts.json", "dump.json.journal"}


def capture(model, bug, config, dump_path, seed=0):
    from numprobe.pytorch import PrecisionDebugger

    task, level = config.split("-")
    PrecisionDebugger._reset()
    debugger = PrecisionDebugger(task=task, level=level, dump_path=dump_path, step=[0])
    try:
        planted.RUNNERS[model](bug, debugger, seed)
    finally:
        PrecisionDebugger._reset()


def msprobe_copy(src, dst):
    """`src` as msprobe writes it: every file hard-linked (copied where links fail) except
    numprobe's side records."""
    for root, _, files in os.walk(src):
        rel = os.path.relpath(root, src)
        os.makedirs(os.path.join(dst, rel), exist_ok=True)
        for name in files:
            if name in SIDE_RECORDS:
                continue
            a, b = os.path.join(root, name), os.path.join(dst, rel, name)
            try:
                os.link(a, b)
            except OSError:
                shutil.copy2(a, b)


def make(out, cases, configs, seed=0):
    torch.set_num_threads(1)  # deterministic and polite on a shared machine
    out = os.path.abspath(out)
    if os.path.exists(out):
        shutil.rmtree(out)
    models = sorted({c.model for c in cases})
    seconds = {}
    for model in models:
        t0 = time.perf_counter()
        for config in configs:
            capture(model, None, config, os.path.join(out, "numprobe", "golden", model, config),
                    seed)
        seconds["golden:" + model] = time.perf_counter() - t0
    for case in cases:
        t0 = time.perf_counter()
        for config in configs:
            capture(case.model, case.bug, config,
                    os.path.join(out, "numprobe", "target", case.name, config), seed)
        seconds[case.name] = time.perf_counter() - t0
    for side in ("golden", "target"):
        msprobe_copy(os.path.join(out, "numprobe", side), os.path.join(out, "msprobe", side))
    expected = {
        "configs": list(configs),
        "cases": {c.name: {"kind": c.kind, "model": c.model, "op": c.op, "cast": c.cast,
                           "says": c.says} for c in cases},
        "capture_seconds": seconds,
    }
    with open(os.path.join(out, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=1)
    return expected


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--cases", help="comma-separated case names (default: all)")
    p.add_argument("--configs", help="comma-separated configurations (default: all four)")
    p.add_argument("--seed", type=int, default=0, help="another draw of weights and data")
    a = p.parse_args()
    cases = planted.CASES
    if a.cases:
        wanted = a.cases.split(",")
        unknown = set(wanted) - {c.name for c in cases}
        if unknown:
            p.error(f"unknown cases: {', '.join(sorted(unknown))}")
        cases = [c for c in cases if c.name in wanted]
    configs = a.configs.split(",") if a.configs else CONFIGS
    if set(configs) - set(CONFIGS):
        p.error(f"configurations are {', '.join(CONFIGS)}")
    t0 = time.perf_counter()
    make(a.out, cases, configs, a.seed)
    print(f"corpus: {len(cases)} cases x {len(configs)} configurations captured in "
          f"{time.perf_counter() - t0:.1f} s under {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
