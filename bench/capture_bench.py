"""Capture overhead: step time (process CPU time, idle OpenMP workers made passive in every run:
see run()) of a small transformer block training on CPU with numprobe's
statistics dump at L1 and at mix, divided by the undumped step time (target <= 1.5). Tensor mode
(L1 and mix) is timed in wall time, since what it costs is mostly waiting for the disk: its
slowdown, and its write rate against `dd` writing (and fdatasync-ing) the same folder, each with
tensor_durability "step" (one sync per step, the default) and "file" (an fsync per file, as
before the key existed): medians of ROUNDS pairs of interpreters, the undumped loop then the
dumped one (tensor_mode says why); a row's dumps are deleted together after it, not between its runs
(kept_dumps says why). Each configuration runs in its own
interpreter. Where CUDA is present the block is also trained on the GPU (wall time, the device
synchronised at the end of each step, median of 20 steps), numprobe and msprobe on the same
config: statistics, md5 and tensor at L1 and mix, each with and without async_dump, on the mid
block and (statistics and md5 without async_dump) on a large one (D=1024, T=256, B=16); --cuda
runs these rows alone, NUMPROBE_BENCH_CUDA_BLOCKS=mid|large|mid,large picks the blocks.
Elsewhere that part reports itself as skipped.

Incremental dump (bench_path, docs/capture.md) on the demo model (scripts/demo/train.py, its
planted GELU bug against its baseline's tensor dump): bytes written and training-loop wall time
against a full tensor dump of the same run (goal: at least 70% fewer bytes, 3x less time),
and the time each dump adds to the same loop run without the debugger, in rounds of the four runs
with medians over the rounds (NUMPROBE_BENCH_INC_STEPS, default 24; NUMPROBE_BENCH_INC_ROUNDS,
default 5; --incremental-only runs these rows alone). Then the slowdown table per mode (statistics, md5, tensor) and level (L1, mix), with
msprobe's column measured on the same block and config where msprobe is importable ("not
installed" otherwise; a run that fails prints its last error line in the cell).

msprobe is not on PyPI's mirror here; a source checkout works (its Python tree, with Debian's
python3-pandas, -yaml, -openpyxl, -tqdm, -matplotlib, -psutil):

  NUMPROBE_BENCH_MSPROBE=/path/to/msprobe/python PYTHONPATH=BUILD/python \
    /usr/bin/python3 bench/capture_bench.py

For msprobe's runs only, the bench then (MSPROBE_SHIM below) stands in an `einops` that fails
when called (msprobe imports it for its NPU fusion-attention reference, never called on CPU) and,
on torch < 2.0, aliases Tensor.untyped_storage to storage().untyped() (msprobe's md5 and tensor
modes call the torch 2 name; Debian's torch is 1.13).

  PYTHONPATH=BUILD/python /usr/bin/python3 bench/capture_bench.py [--tensor-only | --per-op |
      --statistics | --incremental-only | --cuda]

The statistics rows are measured on two blocks: the mid-size one above (D=128, two threads; with
a reference BLAS its matrix products dominate the step) and a small-op one (D=32, T=16, B=2, one
thread, 30 timed steps), where the capture's per-op and per-step costs are most of the step;
--statistics runs those rows (after the per-op row) alone.

The tensor-mode rows are measured in both layouts (dump_layout "files", msprobe's, and "packed",
one container per step); --tensor-only runs those rows alone.

First, the per-op cost: process CPU time of one recorded API call (torch.add of two 16x16
tensors, statistics L1, with stacks) against the same call unrecorded, medians of 5 rounds of 2000
calls in each of 3 interpreters; --per-op runs that row alone.
"""
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BODY = r"""
import json, os, sys, time, torch
import torch.nn as nn
torch.manual_seed(0)
# "mid": the block whose matrix products dominate its step; "small": a small-op block (one
# thread), where what the capture adds per op and per step is most of what is measured.
model = sys.argv[5] if len(sys.argv) > 5 else "mid"
D, T, B, threads, timed = {"small": (32, 16, 2, 1, 30), "mid": (128, 64, 8, 2, 6),
                           "large": (1024, 256, 16, 2, 6)}[model]
torch.set_num_threads(threads)
block = nn.TransformerEncoderLayer(d_model=D, nhead=4, dim_feedforward=4 * D, batch_first=True)
opt = torch.optim.SGD(block.parameters(), lr=1e-3)
x = torch.randn(B, T, D)
mode = sys.argv[1]
device = sys.argv[3] if len(sys.argv) > 3 else "cpu"
if device != "cpu":
    timed = 20  # a GPU step is milliseconds; the machine is not shared
block, x = block.to(device), x.to(device)
wall = len(sys.argv) > 4 and sys.argv[4] == "wall"
clock = time.process_time if device == "cpu" and not wall else time.perf_counter
dbg = None
if mode == "msprobe":  # the same model and config under msprobe, where it is importable
    exec(MSPROBE_SHIM)
    from msprobe.pytorch import PrecisionDebugger
    dbg = PrecisionDebugger(config_path=sys.argv[2])
elif mode != "off":
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
for _ in range(timed):
    # CPU time of the process (all its threads): on a shared machine wall time mostly measures
    # the other tenants.
    # On a GPU the wall time of a synchronised step is what the user waits for.
    t0 = clock(); step(); times.append(clock() - t0)
times.sort()
print(json.dumps({"step_s": times[len(times) // 2]}))
"""

# Run before msprobe is imported (see the module's docstring): only what msprobe needs to import
# and run on Debian's torch 1.13 without the NPU stack, nothing that changes what it measures.
MSPROBE_SHIM = r"""
import sys, types, torch
if "einops" not in sys.modules:
    try:
        import einops
    except ImportError:
        def _no_einops(*args, **kwargs):
            raise NotImplementedError("einops is not installed (bench stand-in)")
        sys.modules["einops"] = types.SimpleNamespace(rearrange=_no_einops, repeat=_no_einops)
if not hasattr(torch.Tensor, "untyped_storage"):
    torch.Tensor.untyped_storage = lambda self: self.storage().untyped()
"""
BODY = BODY.replace("exec(MSPROBE_SHIM)", MSPROBE_SHIM.strip().replace("\n", "\n    "))

STEPS_RUN = 8  # 2 warm-up steps and 6 timed ones

# Rounds per row of the statistics, tensor and mode-table rows (NUMPROBE_BENCH_ROUNDS, default 5):
# on this 2-core shared VM a row's median moved by more than its distance to the goal from one
# run of 3 rounds to the next (the mid block's statistics mix share: 0.32, then 0.39 with the
# allocator fixed, the same code), so each row takes more rounds and prints their spread.
ROUNDS = int(os.environ.get("NUMPROBE_BENCH_ROUNDS", "5"))

PER_OP_BODY = r"""
import json, os, statistics, sys, tempfile, time, torch
torch.set_num_threads(1)
a, b = torch.randn(16, 16), torch.randn(16, 16)
N = 2000
def loop():
    for _ in range(N):
        torch.add(a, b)
def timed():
    t0 = time.process_time_ns(); loop(); return (time.process_time_ns() - t0) / N / 1e3
plain = statistics.median(timed() for _ in range(5))
from numprobe.pytorch import PrecisionDebugger
tmp = tempfile.mkdtemp()
path = os.path.join(tmp, "config.json")
with open(path, "w") as f:
    json.dump({"task": "statistics", "level": "L1", "dump_path": os.path.join(tmp, "dump")}, f)
dbg = PrecisionDebugger(config_path=path)
rounds = []
for _ in range(5):
    dbg.start(); rounds.append(timed()); dbg.stop(); dbg.step()
print(json.dumps({"plain_us": plain, "recorded_us": statistics.median(rounds)}))
"""


def per_op():
    """Microseconds one recorded API call adds (median of 3 interpreters)."""
    def once():
        out = subprocess.run([sys.executable, "-c", PER_OP_BODY], check=True,
                             capture_output=True, text=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        return (r["recorded_us"] - r["plain_us"], r["plain_us"])
    added, plain = median_of_3(once)
    print(f"capture_bench: per recorded API call (torch.add 16x16, statistics L1): "
          f"{added:.1f} us added to a {plain:.1f} us call (process CPU time, median of 3)")


# Folders of the runs whose dumps are kept until their section ends (kept_dumps), or None.
KEPT = None


@contextlib.contextmanager
def kept_dumps():
    """Keeps each run's dump until the block ends, then deletes them all. Tensor-mode runs use
    it: deleting a run's thousand tensor files just before the next run starts makes that run's
    file creation several times slower on a filesystem without a journal (ext4's inode allocator
    then skips each recently freed inode, one lookup each; docs/capture.md; this VM's root is one):
    113 files of 230 KiB took 9 ms, and 53 ms 2 s after 3,000 files were deleted beside them. A
    training run does not delete files as it dumps; the bench must not charge it for its own
    cleanup."""
    global KEPT
    KEPT = []
    try:
        yield
    finally:
        for path in KEPT:
            shutil.rmtree(path, ignore_errors=True)
        KEPT = None


@contextlib.contextmanager
def run_folder(folder):
    """A fresh folder for one run: deleted when the run ends, or kept (kept_dumps)."""
    if KEPT is None:
        with tempfile.TemporaryDirectory(dir=folder) as tmp:
            yield tmp
    else:
        tmp = tempfile.mkdtemp(dir=folder)
        KEPT.append(tmp)
        yield tmp


# glibc's malloc with its thresholds fixed (statistics_rows says why): blocks below 4 MiB come
# from the heap, and up to 64 MiB of freed heap stays mapped.
FIXED_MALLOC = "glibc.malloc.mmap_threshold=4194304:glibc.malloc.trim_threshold=67108864"


def run(mode, config=None, device="cpu", clock="cpu", folder=None, model="mid",
        fixed_malloc=False):
    with run_folder(folder) as tmp:
        args = [sys.executable, "-c", BODY, mode]
        config = dict(config or {}, dump_path=os.path.join(tmp, "dump"))
        path = os.path.join(tmp, "config.json")
        with open(path, "w") as f:
            json.dump(config, f)
        args += [path, device, clock, model]
        env = msprobe_env() if mode == "msprobe" else dict(os.environ)
        if device == "cpu" and clock == "cpu":
            # Idle OpenMP workers spin by default, and process CPU time counts the spinning as
            # work: the mid block's undumped step measured 188 ms in one round and 260 ms in
            # another minutes later, slower than dumped steps beside it. Passive workers sleep,
            # so the clock counts the work each run does; every run (undumped, numprobe,
            # msprobe) is measured so.
            env["OMP_WAIT_POLICY"] = "PASSIVE"
        if fixed_malloc:
            env["GLIBC_TUNABLES"] = FIXED_MALLOC
        out = subprocess.run(args, check=True, capture_output=True, text=True,
                             env=env).stdout
        result = json.loads(out.strip().splitlines()[-1])
        # Tensor bytes: the files layout's .pt files, the packed layout's container data; stored
        # (each file once) and named (each name, as a reader sees them).
        tensor_file = lambda f: f.endswith(".pt") or f == "packed.data"  # noqa: E731
        dump = os.path.join(tmp, "dump")
        return (result["step_s"], dump_bytes(dump, tensor_file),
                dump_bytes(dump, tensor_file, each_name=True))


def median_of_3(measure):
    """The median of three measurements, each a tuple whose first member is sorted on."""
    results = sorted((measure() for _ in range(3)), key=lambda r: r[0])
    return results[1]


def dd_bytes_per_s(folder, mib=256):
    """What dd writes per second into `folder` (flushed to disk before it ends: conv=fdatasync),
    the physical reference for the tensor task's write rate."""
    def once():
        with tempfile.TemporaryDirectory(dir=folder) as tmp:
            t0 = time.perf_counter()
            subprocess.run(["dd", "if=/dev/zero", f"of={os.path.join(tmp, 'dd.bin')}", "bs=1M",
                            f"count={mib}", "conv=fdatasync"], check=True, capture_output=True)
            return (mib * 2**20 / (time.perf_counter() - t0),)
    return median_of_3(once)[0]


def tensor_mode(folder):
    """Tensor-mode slowdown and write rate (wall time) for L1 and mix, both durabilities. Each
    row runs ROUNDS pairs, the undumped loop and then the dumped one, and takes the medians of
    the pairs' ratios and differences: the host's speed drifts within minutes (an undumped step
    measured once for all rows was once slower than every dumped step after it)."""
    dd = dd_bytes_per_s(folder)
    print(f"capture_bench: tensor mode in {folder}: dd {dd / 2**20:.0f} MiB/s (median of 3; "
          f"a shared machine: wall times are noisy)")
    for level in ("L1", "mix"):
        # The packed layout (dump_layout, docs/capture.md): one container per step instead of a
        # file per tensor.
        for layout, durability in (("files", "step"), ("files", "file"), ("packed", "step"),
                                   ("packed", "file")):
            config = {"task": "tensor", "level": level, "tensor_durability": durability,
                      "dump_layout": layout}
            pairs = []
            with kept_dumps():  # the row's dumps are deleted together after it
                for _ in range(ROUNDS):
                    base = run("off", clock="wall", folder=folder)[0]
                    pairs.append((base, *run("on", config, clock="wall", folder=folder)))
            t = statistics.median(on for _, on, _, _ in pairs)
            slowdown = statistics.median(on / base for base, on, _, _ in pairs)
            added = statistics.median(on - base for base, on, _, _ in pairs)
            size, named = pairs[0][2], pairs[0][3]  # the same bytes in every run
            per_step = size / STEPS_RUN
            head = (f"capture_bench: tensor {level} layout={layout} durability={durability}: "
                    f"step {t * 1e3:.1f} ms, slowdown {slowdown:.2f}x, added "
                    f"{added * 1e3:.1f} ms ({min(on - b for b, on, _, _ in pairs) * 1e3:.1f}.."
                    f"{max(on - b for b, on, _, _ in pairs) * 1e3:.1f}), "
                    f"{per_step / 2**20:.1f} MiB written per step "
                    f"({named / STEPS_RUN / 2**20:.1f} MiB in its files)")
            if added <= 0:
                print(f"{head}: the dumped steps were not slower than the undumped ones "
                      f"(noise), no rate")
                continue
            # Bytes per second of the time the dump adds: the bytes written (a repeated tensor's
            # link or index line writes none), and the bytes its names hold as a reader sees them.
            rate = per_step / added
            named_rate = named / STEPS_RUN / added
            print(f"{head}, {rate / 2**20:.0f} MiB/s written = {rate / dd:.2f} of dd "
                  f"(goal >= 0.5), {named_rate / 2**20:.0f} MiB/s dumped = "
                  f"{named_rate / dd:.2f} of dd")


def dump_bytes(folder, counted=lambda name: True, each_name=False):
    """The bytes stored under `folder` in the files whose names `counted` accepts, each file once;
    with `each_name`, the bytes every name holds, as a reader sees them. A tensor recorded again
    in a step is a hard link to its first file, or in the packed layout an index line naming its
    first entry's bytes (docs/capture.md): a name, not bytes written."""
    total, seen = 0, set()
    for root, _, files in os.walk(folder):
        for name in filter(counted, files):
            st = os.lstat(os.path.join(root, name))
            if each_name and name == "packed.data":
                total += packed_entry_bytes(os.path.join(root, "packed.index"))
            elif each_name or (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_size
    return total


def packed_entry_bytes(index_path):
    """The bytes a packed container's entries name, repeats included (packed_tensors.h)."""
    total = 0
    with open(index_path) as f:
        for line in f.readlines()[1:]:
            begin, end = json.loads(line)["offsets"]
            total += end - begin
    return total


def incremental(folder):
    """Incremental vs full tensor dump of the demo's target run, against its baseline.

    The demo's loop is short, so the time a dump adds (the loop less the same loop without the
    debugger) is a difference of two noisy numbers: the four runs (full, incremental, statistics,
    undumped) are made in rounds, each dump's added time is taken against the undumped run of its
    own round, and medians over the rounds are reported. NUMPROBE_BENCH_INC_STEPS sets the
    demo's steps (default 24: the same model and planted bug, a loop long enough to measure),
    NUMPROBE_BENCH_INC_ROUNDS the rounds (default 5)."""
    train = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts",
                         "demo", "train.py")
    steps = int(os.environ.get("NUMPROBE_BENCH_INC_STEPS", "24"))
    rounds = int(os.environ.get("NUMPROBE_BENCH_INC_ROUNDS", "5"))
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        count = [0]

        def once(name, *extra):
            """The run's loop seconds, dump bytes and dump folder. Dumps are kept until the
            section ends (with `tmp`), as kept_dumps keeps the tensor rows': deleting a full
            dump's 9,000 files just before the next run slowed that run's file creation, and a
            training run does not delete files as it dumps."""
            name = f"{name}{count[0]}"
            count[0] += 1
            dump = os.path.join(tmp, "dumps", name)
            proc = subprocess.run([sys.executable, train, "--out", tmp, "--task", "tensor",
                                   "--steps", str(steps), "--dump-name", name, *extra],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                sys.exit(f"capture_bench: {train} failed:\n{proc.stderr}")
            with open(os.path.join(tmp, "runs", name + ".json")) as f:
                seconds = json.load(f)["train_s"]
            return seconds, dump_bytes(dump), dump

        golden = once("baseline", "--variant", "baseline")[2]
        kinds = {
            "full": ("--variant", "target"),
            "inc": ("--variant", "target", "--bench-path", golden),
            # The floor under the incremental dump's time: it computes every statistic a
            # statistics dump does (and judges it), so it cannot take less.
            "stats": ("--variant", "target", "--task", "statistics"),
            # The loop without the debugger: what the dumps' own time is measured against.
            "off": ("--variant", "target", "--no-dump"),
        }
        runs = {kind: [] for kind in kinds}
        for _ in range(rounds):
            for kind, extra in kinds.items():
                runs[kind].append(once(kind, *extra)[:2])
    median = statistics.median
    loop = {kind: median(s for s, _ in runs[kind]) for kind in kinds}
    written = {kind: median(b for _, b in runs[kind]) for kind in kinds}
    added = {kind: [runs[kind][r][0] - runs["off"][r][0] for r in range(rounds)]
             for kind in ("full", "inc", "stats")}
    added_median = {kind: median(values) for kind, values in added.items()}
    print(f"capture_bench: incremental vs full tensor dump (demo, mix, {steps} steps, medians of "
          f"{rounds} rounds): full {written['full'] / 2**20:.1f} MiB in {loop['full']:.2f} s, "
          f"incremental {written['inc'] / 2**20:.2f} MiB in {loop['inc']:.2f} s: "
          f"{1 - written['inc'] / written['full']:.1%} fewer bytes (goal >= 70%), "
          f"{loop['full'] / loop['inc']:.2f}x less loop time; a statistics dump of the run "
          f"takes {loop['stats']:.2f} s")
    # Loop times include the training itself; the time each dump adds is the loop time less the
    # undumped loop's in the same round.
    spread = {kind: f"{min(values):.2f}..{max(values):.2f}" for kind, values in added.items()}
    print(f"capture_bench: incremental, the time each dump adds to the undumped loop "
          f"({loop['off']:.2f} s): full {added_median['full']:.2f} s ({spread['full']}), "
          f"incremental {added_median['inc']:.2f} s ({spread['inc']}): "
          f"{added_median['full'] / max(added_median['inc'], 1e-9):.2f}x less (goal >= 3x); "
          f"statistics {added_median['stats']:.2f} s ({spread['stats']})")


def msprobe_env():
    """The environment of msprobe's runs: NUMPROBE_BENCH_MSPROBE (a source checkout's Python
    tree) ahead on PYTHONPATH when set."""
    env = dict(os.environ)
    tree = os.environ.get("NUMPROBE_BENCH_MSPROBE")
    if tree:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (tree, env.get("PYTHONPATH")) if p)
    return env


def msprobe_available():
    """Whether msprobe imports; when it does not, says why once (its last error line)."""
    probe = MSPROBE_SHIM + "\nimport msprobe.pytorch"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env=msprobe_env())
    if proc.returncode != 0:
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        print("capture_bench: msprobe does not import: " + (lines[-1] if lines else "?"))
    return proc.returncode == 0


def failure(error):
    """Why a run failed: the last line of its error output."""
    lines = [l for l in (error.stderr or "").splitlines() if l.strip()]
    return "failed: " + (lines[-1].strip() if lines else f"exit {error.returncode}")


def paired_rounds(config, msprobe, **where):
    """ROUNDS rounds run back to back, each the undumped loop, numprobe's and msprobe's (where it
    is importable) with `config`: ([(base, ours, theirs)], why msprobe failed or None). `where`
    goes to run() (clock, folder, model, fixed_malloc). Ratios are taken within a round, since
    the host's speed drifts within minutes."""
    rounds, why_not = [], None
    for _ in range(ROUNDS):
        base = run("off", **where)[0]
        ours = run("on", config, **where)[0]
        theirs = None
        if msprobe and why_not is None:
            try:
                theirs = run("msprobe", config, **where)[0]
            except subprocess.CalledProcessError as e:
                why_not = failure(e)
        rounds.append((base, ours, theirs))
    return rounds, why_not


def mode_table(folder):
    """Slowdown per mode (statistics, md5, tensor) and level (L1, mix), numprobe and msprobe on
    the same block and config: process CPU time for statistics and md5, wall time for tensor
    (which mostly waits for the disk). Each cell runs ROUNDS rounds back to back (the undumped
    loop, numprobe's, msprobe's) and gives the medians of the rounds' slowdowns, as
    statistics_rows does (one base per mode, measured minutes before, drifted with the host)."""
    msprobe = msprobe_available()
    print("capture_bench: | mode | level | numprobe slowdown | msprobe slowdown |")
    print("capture_bench: |---|---|---|---|")
    for mode, clock in (("statistics", "cpu"), ("md5", "cpu"), ("tensor", "wall")):
        # A tensor cell's dumps are deleted together after it (kept_dumps), both tools'.
        cell = kept_dumps if mode == "tensor" else contextlib.nullcontext
        for level in ("L1", "mix"):
            config = {"task": "tensor" if mode == "tensor" else "statistics", "level": level}
            if mode == "md5":
                config["statistics"] = {"summary_mode": "md5"}
            with cell():
                rounds, why_not = paired_rounds(config, msprobe, clock=clock, folder=folder)
            ours = statistics.median(o / b for b, o, _ in rounds)
            if why_not is not None:
                theirs = why_not
            elif msprobe:
                theirs = f"{statistics.median(m / b for b, _, m in rounds):.2f}x"
            else:
                theirs = "not installed"
            print(f"capture_bench: | {mode} | {level} | {ours:.2f}x | {theirs} |")


def main():
    if "--tensor-only" in sys.argv[1:]:  # the tensor-mode rows alone (both layouts)
        tensor_mode(os.environ.get("NUMPROBE_BENCH_DIR") or tempfile.gettempdir())
        return 0
    if "--cuda" in sys.argv[1:]:  # the GPU rows alone
        cuda_table(os.environ.get("NUMPROBE_BENCH_DIR") or tempfile.gettempdir())
        return 0
    if "--incremental-only" in sys.argv[1:]:
        incremental(os.environ.get("NUMPROBE_BENCH_DIR") or tempfile.gettempdir())
        return 0
    per_op()
    if "--per-op" in sys.argv[1:]:
        return 0
    status = 0
    statistics_rows()
    if "--statistics" in sys.argv[1:]:
        return status
    tensor_mode(os.environ.get("NUMPROBE_BENCH_DIR") or tempfile.gettempdir())
    incremental(os.environ.get("NUMPROBE_BENCH_DIR") or tempfile.gettempdir())
    mode_table(os.environ.get("NUMPROBE_BENCH_DIR") or tempfile.gettempdir())
    cuda_table(os.environ.get("NUMPROBE_BENCH_DIR") or tempfile.gettempdir())
    return status


# The CUDA rows: (summary or task, level, extra config keys). The large block (its matrix
# products dominate the step) takes statistics and md5 without async_dump only: its activations
# make gigabytes a step in tensor mode.
CUDA_ROWS = [("statistics", level, extra) for extra in ({}, {"async_dump": True})
             for level in ("L1", "mix")] + \
            [("md5", level, extra) for extra in ({}, {"async_dump": True}) for level in ("L1", "mix")] + \
            [("tensor", level, extra) for extra in ({}, {"async_dump": True}) for level in ("L1", "mix")]


def cuda_table(folder):
    """The training step on the GPU (wall time, the device synchronised at each step's end,
    median of 20 steps in one interpreter per row) with numprobe and with msprobe on the same
    block and config: slowdown, and numprobe's overhead as a share of msprobe's (goal <= 1/3).
    --cuda runs these rows alone."""
    if not cuda_available():
        print("capture_bench: CUDA: skipped (no CUDA device on this machine)")
        return
    msprobe = msprobe_available()
    print("capture_bench: CUDA | block | mode | level | async_dump | numprobe | msprobe | share |")
    print("capture_bench: CUDA |---|---|---|---|---|---|---|")
    for model in os.environ.get("NUMPROBE_BENCH_CUDA_BLOCKS", "mid,large").split(","):
        base = run("off", device="cuda", folder=folder, model=model)[0]
        print(f"capture_bench: CUDA {model} block: undumped step {base * 1e3:.2f} ms")
        for mode, level, extra in CUDA_ROWS:
            if model == "large" and (mode == "tensor" or extra):
                continue
            config = {"task": "tensor" if mode == "tensor" else "statistics", "level": level,
                      **extra}
            if mode == "md5":
                config["statistics"] = {"summary_mode": "md5"}
            try:
                ours = f"{run('on', config, device='cuda', folder=folder, model=model)[0] / base:.2f}x"
            except subprocess.CalledProcessError as e:
                ours = failure(e)
            theirs, share = "not installed", ""
            if msprobe:
                try:
                    t = run("msprobe", config, device="cuda", folder=folder, model=model)[0]
                    theirs = f"{t / base:.2f}x"
                    if ours.endswith("x") and t > base:
                        share = f"{(float(ours[:-1]) - 1) / (t / base - 1):.2f}"
                except subprocess.CalledProcessError as e:
                    theirs = failure(e)
            print(f"capture_bench: CUDA | {model} | {mode} | {level} | "
                  f"{'yes' if extra else 'no'} | {ours} | {theirs} | {share} |", flush=True)


def statistics_rows():
    """Statistics (and md5) slowdowns at L1 and mix, process CPU time, on the mid-size block and
    on the small-op one (the issue's two models), with msprobe's on the same block and config
    where it is importable, and numprobe's overhead (slowdown - 1) as a share of msprobe's (goal
    <= 1/3). Each row runs ROUNDS rounds back to back, the undumped loop, then numprobe's, then
    msprobe's, and takes the medians of the rounds' slowdowns and shares, as tensor_mode pairs
    its runs: an undumped step measured once per block drifted with the host (it once came out
    slower than the dumped steps after it, a slowdown below 1).

    The mid block is measured twice: as a user runs it, and with glibc's malloc thresholds fixed
    (FIXED_MALLOC, every kind of run alike). Its activations are 256 KiB to 1 MiB, above glibc's
    initial mmap threshold, which glibc raises, and its heap-trim threshold with it, as blocks
    are freed: which of a step's blocks are returned to the kernel, and faulted in again the next
    step, depends on the order of every allocation in the process. Over 40 steps, undumped runs
    took 61-71 thousand page faults; numprobe's statistics L1 runs 50, 100 and 109 thousand, and
    their steps 123, 143 and 145 ms against 120-124 ms undumped. With the thresholds fixed, both
    took 37-39 thousand and 113 and 120-121 ms. The second set of rows measures what each tool's
    work costs, without the allocator's response to it."""
    msprobe = msprobe_available()
    for model, fixed_malloc in (("mid", False), ("mid", True), ("small", False)):
        for level in ("L1", "mix"):
            for summary in ("statistics", "md5"):
                config = {"task": "statistics", "level": level}
                if summary == "md5":
                    config["statistics"] = {"summary_mode": "md5"}
                rounds, why_not = paired_rounds(config, msprobe, model=model,
                                                fixed_malloc=fixed_malloc)
                base = statistics.median(b for b, _, _ in rounds)
                t = statistics.median(o for _, o, _ in rounds)
                slowdown = statistics.median(o / b for b, o, _ in rounds)
                block = f"{model} block{' (malloc thresholds fixed)' if fixed_malloc else ''}"
                line = (f"capture_bench: {block} {summary} {level}: undumped step "
                        f"{base * 1e3:.2f} ms, step {t * 1e3:.2f} ms, slowdown {slowdown:.2f}x")
                if why_not is not None:
                    line += ", msprobe " + why_not
                elif msprobe:
                    theirs = statistics.median(m / b for b, _, m in rounds)
                    # A round where msprobe added nothing has no share (noise): left out.
                    shares = [(o - b) / (m - b) for b, o, m in rounds if m > b]
                    share = statistics.median(shares) if shares else float("nan")
                    spread = (f"{min(shares):.2f}..{max(shares):.2f}" if shares else "none")
                    line += (f", msprobe {theirs:.2f}x: numprobe's overhead is {share:.2f} of "
                             f"msprobe's ({spread} over the rounds; goal <= 0.33; medians of "
                             f"{len(rounds)} rounds)")
                else:
                    line += ", msprobe not installed"
                print(line)


def cuda_available():
    probe = "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


if __name__ == "__main__":
    sys.exit(main())
