"""Capture overhead: step time (process CPU time) of a small transformer block training on CPU with numprobe's
statistics dump at L1 and at mix, divided by the undumped step time (target <= 1.5), and the
tensor task's write rate in MB/s. Each configuration runs in its own interpreter.

  PYTHONPATH=BUILD/python /usr/bin/python3 bench/capture_bench.py
"""
import json
import os
import subprocess
import sys
import tempfile

BODY = r"""
import json, os, sys, time, torch
import torch.nn as nn
torch.manual_seed(0)
torch.set_num_threads(2)
D, T, B = 128, 64, 8
block = nn.TransformerEncoderLayer(d_model=D, nhead=4, dim_feedforward=4 * D, batch_first=True)
opt = torch.optim.SGD(block.parameters(), lr=1e-3)
x = torch.randn(B, T, D)
mode = sys.argv[1]
dbg = None
if mode != "off":
    from numprobe.pytorch import PrecisionDebugger
    dbg = PrecisionDebugger(config_path=sys.argv[2])
def step():
    if dbg: dbg.start(block)
    loss = block(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    if dbg:
        dbg.stop()
        dbg.step()
for _ in range(2):
    step()
times = []
for _ in range(6):
    # CPU time of the process (all its threads): on a shared machine wall time mostly measures
    # the other tenants.
    t0 = time.process_time(); step(); times.append(time.process_time() - t0)
times.sort()
print(json.dumps({"step_s": times[len(times) // 2]}))
"""


def run(mode, config=None):
    with tempfile.TemporaryDirectory() as tmp:
        args = [sys.executable, "-c", BODY, mode]
        if config is not None:
            config = dict(config, dump_path=os.path.join(tmp, "dump"))
            path = os.path.join(tmp, "config.json")
            with open(path, "w") as f:
                json.dump(config, f)
            args.append(path)
        out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
        result = json.loads(out.strip().splitlines()[-1])
        size = 0
        for root, _, files in os.walk(os.path.join(tmp, "dump")):
            size += sum(os.path.getsize(os.path.join(root, f)) for f in files if f.endswith(".pt"))
        return result["step_s"], size


def main():
    base, _ = run("off")
    print(f"capture_bench: undumped step {base * 1e3:.1f} ms")
    status = 0
    for level in ("L1", "mix"):
        t, _ = run("on", {"task": "statistics", "level": level})
        ratio = t / base
        print(f"capture_bench: statistics {level}: step {t * 1e3:.1f} ms, ratio {ratio:.2f} (target <= 1.5)")
    t, size = run("on", {"task": "tensor", "level": "L1"})
    print(f"capture_bench: tensor L1: step {t * 1e3:.1f} ms, {size / 2**20 / 8:.1f} MiB per step, "
          f"{size / 8 / 2**20 / max(t - base, 1e-9):.0f} MiB/s of dump overhead")
    return status


if __name__ == "__main__":
    sys.exit(main())
