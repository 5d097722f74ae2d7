"""Capture overhead: step time (process CPU time) of a small transformer block training on CPU with numprobe's
statistics dump at L1 and at mix, divided by the undumped step time (target <= 1.5), and the
tensor task's write rate in MB/s. Each configuration runs in its own interpreter. Where CUDA is
present the statistics ratios are measured again with the block on the GPU (wall time, the device
synchronised at the end of each step); elsewhere that part reports itself as skipped.

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
device = sys.argv[3] if len(sys.argv) > 3 else "cpu"
block, x = block.to(device), x.to(device)
clock = time.process_time if device == "cpu" else time.perf_counter
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
    if device != "cpu":
        torch.cuda.synchronize()
for _ in range(2):
    step()
times = []
for _ in range(6):
    # CPU time of the process (all its threads): on a shared machine wall time mostly measures
    # the other tenants.
    # On a GPU the wall time of a synchronised step is what the user waits for.
    t0 = clock(); step(); times.append(clock() - t0)
times.sort()
print(json.dumps({"step_s": times[len(times) // 2]}))
"""


def run(mode, config=None, device="cpu"):
    with tempfile.TemporaryDirectory() as tmp:
        args = [sys.executable, "-c", BODY, mode]
        config = dict(config or {}, dump_path=os.path.join(tmp, "dump"))
        path = os.path.join(tmp, "config.json")
        with open(path, "w") as f:
            json.dump(config, f)
        args += [path, device]
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
    if not cuda_available():
        print("capture_bench: CUDA: skipped (no CUDA device on this machine)")
        return status
    base, _ = run("off", device="cuda")
    print(f"capture_bench: CUDA undumped step {base * 1e3:.1f} ms")
    for level in ("L1", "mix"):
        t, _ = run("on", {"task": "statistics", "level": level}, device="cuda")
        print(f"capture_bench: CUDA statistics {level}: step {t * 1e3:.1f} ms, "
              f"ratio {t / base:.2f} (target <= 1.5)")
    return status


def cuda_available():
    probe = "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


if __name__ == "__main__":
    sys.exit(main())
