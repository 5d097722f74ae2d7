"""Pre-check throughput: APIs checked per second on the demo's dump (its transformer block at the
demo's full size, one training step captured at level mix, statistics and tensor mode), against
the physical floor of the benchmark computation: the time the same APIs take to run once in
float64 on the same inputs. Process CPU time (the machine is shared), median of three runs, one
torch thread (precheck's default).

  PYTHONPATH=BUILD/python /usr/bin/python3 bench/precheck_bench.py
"""
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, "..", "scripts", "demo", "train.py")
FULL = ["--steps", "1", "--dim", "64", "--heads", "4", "--seq", "32", "--batch", "16"]
REPEATS = 3


def capture(out, task):
    name = f"baseline_{task}"
    subprocess.run([sys.executable, TRAIN, "--variant", "baseline", "--task", task, "--out", out,
                    "--dump-name", name, *FULL], check=True, capture_output=True, text=True)
    (dump,) = glob.glob(os.path.join(out, "dumps", name, "step0", "*", "dump.json"))
    return dump


def float64_floor(dump_json):
    """Process CPU time of every replayable forward API of the dump run once in float64."""
    import torch

    from numprobe.precheck import _load_dump, _split_entries
    from numprobe.precheck._inputs import InputBuilder, build_call
    from numprobe.precheck._replay import _prepare, resolve, Context

    doc, folder = _load_dump(dump_json)
    forward, _ = _split_entries(doc["data"])
    mode = "tensor" if doc.get("task") == "tensor" else "statistics"
    ctx = Context(mode=mode, tensor_dir=os.path.join(folder, "dump_tensor_data"), seed=1234,
                  device="cpu", custom={}, white_list=None, black_list=None, error_dir=None)
    calls = []
    for api, entry in forward.items():
        fns, skip = resolve(ctx, api)
        if skip is not None:
            continue
        try:
            args, kwargs = build_call(InputBuilder(mode, ctx.tensor_dir, 1234), entry, api)
            calls.append((fns[1], *_prepare(args, kwargs, "cpu", True, False)[:2]))
        except Exception:  # noqa: BLE001 - APIs precheck skips are not in the floor either
            continue
    total = 0.0
    with torch.no_grad():
        for fn, args, kwargs in calls:
            t0 = time.process_time()
            fn(*args, **kwargs)
            total += time.process_time() - t0
    return total, len(calls)


def main():
    import torch

    import numprobe

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory(prefix="numprobe-precheck-bench-") as tmp:
        for task in ("statistics", "tensor"):
            dump = capture(tmp, task)
            times, floors = [], []
            apis = checked = 0
            for r in range(REPEATS):
                t0 = time.process_time()
                result = numprobe.precheck(dump, os.path.join(tmp, f"out_{task}_{r}"))
                times.append(time.process_time() - t0)
                apis = result.summary["apis"]
                checked = apis - result.summary["skip"]
                floor, _ = float64_floor(dump)
                floors.append(floor)
            t = statistics.median(times)
            floor = statistics.median(floors)
            print(f"precheck_bench: {task}: {apis} APIs ({checked} replayed) in {t:.2f} s CPU = "
                  f"{apis / t:.0f} APIs/s; the same APIs once in float64: {floor * 1e3:.1f} ms; "
                  f"ratio {t / floor:.0f} (median of {REPEATS})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
