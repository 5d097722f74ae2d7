#!/usr/bin/env python3
"""Runs the demo's training runs (scripts/demo/train.py), two at a time, in forked children of
one interpreter so that torch is imported once: baseline, target and nan with the statistics task
over every step, then baseline and target again with the tensor task over one step only.

    runs.py OUT [--small]

--small is the reduced size that `make test` runs (fewer steps, smaller dimensions)."""
import argparse
import os
import sys
import time

import torch  # noqa: F401  (imported once here, inherited by every forked run)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train  # noqa: E402

FULL = ["--steps", "6", "--dim", "64", "--heads", "4", "--seq", "32", "--batch", "16"]
SMALL = ["--steps", "3", "--dim", "32", "--heads", "2", "--seq", "8", "--batch", "4"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--small", action="store_true")
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args()
    size = SMALL if args.small else FULL
    common = ["--out", args.out] + size
    first_step_only = ["--steps", "1", "--dump-steps", "1"]
    runs = [
        ["--variant", "baseline"],
        ["--variant", "target"],
        ["--variant", "nan", "--nan-step", "2"],
        ["--variant", "baseline", "--task", "tensor", "--dump-name", "baseline_tensor"],
        ["--variant", "target", "--task", "tensor", "--dump-name", "target_tensor"],
    ]
    pending = list(runs)
    running = {}
    failed = []
    while pending or running:
        while pending and len(running) < args.jobs:
            argv = pending.pop(0)
            argv = argv + common + (first_step_only if "tensor" in argv else [])
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                # The child leaves through sys.exit so that the interpreter's exit handlers run
                # (the debugger's closes its dump); an exception exits it with status 1.
                sys.exit(train.main(argv))
            running[pid] = (argv, time.monotonic())
        pid, status = os.wait()
        argv, _ = running.pop(pid)
        if os.waitstatus_to_exitcode(status) != 0:
            failed.append(" ".join(argv))
    for f in failed:
        print(f"demo run failed: train.py {f}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
