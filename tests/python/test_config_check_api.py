"""numprobe.config_check.collect from inside a training script: live seeds, determinism switches,
hyperparameters and model weights, in the command line's format, compared by the command line."""
import csv
import glob
import json
import math
import os
import subprocess
import sys
import textwrap

SCRIPT = """
import argparse, json, sys, torch
import torch.nn as nn
from numprobe import config_check
parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.1)
parser.add_argument("--seed", type=int, default=1234)
parser.add_argument("--perturb", action="store_true")
parser.add_argument("--out")
args = parser.parse_args()
torch.manual_seed(args.seed)
import random, numpy
random.seed(args.seed)
numpy.random.seed(args.seed)
torch.use_deterministic_algorithms(True)
model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3))
if args.perturb:
    with torch.no_grad():
        model[0].weight[1, 2] += 0.5
torch.save(model.state_dict(), args.out + ".pt")
snap = config_check.collect(args.out, model=model,
                            hyperparameters={"args": vars(args), "optimizer": {"betas": [0.9, 0.999]}})
print(json.dumps(snap["random"]["torch.initial_seed"]))
"""


def run(tmp_path, name, *flags):
    """Runs the script in its own folder tmp_path/name (the same relative paths in every run)."""
    cwd = tmp_path / name
    cwd.mkdir()
    script = cwd / "train.py"
    script.write_text(textwrap.dedent(SCRIPT))
    out = cwd / "snap.json"
    proc = subprocess.run([sys.executable, "train.py", "--out", "snap.json", *flags], cwd=cwd,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    with open(out) as f:
        return json.load(f), out


def compare(tmp_path, a, b, name):
    out = tmp_path / name
    proc = subprocess.run([os.environ["NUMPROBE_BIN"], "config-check", "compare", str(a), str(b),
                           "-o", str(out)], capture_output=True, text=True, timeout=120)
    (csv_path,) = glob.glob(str(out / "*.csv"))
    with open(csv_path, newline="") as f:
        return proc.returncode, list(csv.DictReader(f))


def test_a_script_records_what_only_it_knows(tmp_path):
    snap, path = run(tmp_path, "a", "--lr", "0.1")
    random = snap["random"]
    assert random["torch.initial_seed"] == "1234"
    assert random["torch.are_deterministic_algorithms_enabled"] == "True"  # set by the script
    assert random["torch.rng_state"].startswith("sha256:")
    assert random["args.seed"] == "1234"  # a hyperparameter named seed goes to random
    hyper = snap["hyperparameters"]
    assert hyper["args.lr"] == "0.1" and hyper["optimizer.betas"] == "[0.9, 0.999]"
    assert hyper["lr"] == "0.1"  # from the command line (argv) too
    import importlib.metadata
    assert snap["pip"]["torch"] == importlib.metadata.version("torch")  # the probe ran
    weights = snap["weights"]
    names = sorted(k for k in weights if k.startswith("model:"))
    assert names == ["model:0.bias", "model:0.weight", "model:1.bias", "model:1.num_batches_tracked",
                     "model:1.running_mean", "model:1.running_var", "model:1.weight"]
    # The same text the command line writes for the same tensors read from a file, and under the
    # same names when the file is given the role "model".
    cli = subprocess.run([os.environ["NUMPROBE_BIN"], "config-check", "collect", "-o",
                          str(tmp_path / "cli.json"), "--no-python", "--weights",
                          "model=" + str(path) + ".pt"], capture_output=True, text=True,
                         timeout=120)
    assert cli.returncode == 0, cli.stderr
    with open(tmp_path / "cli.json") as f:
        cli_weights = json.load(f)["weights"]
    for name in names:
        assert cli_weights[name] == weights[name], name
    assert weights["model:1.running_var"] == f"f32 [3] max=1 min=1 mean=1 norm={math.sqrt(3)!r}"


def test_two_script_runs_compare_item_by_item(tmp_path):
    _, a = run(tmp_path, "a")
    _, same = run(tmp_path, "same")
    rc, rows = compare(tmp_path, a, same, "cmp-same")
    differing = [(r["Category"], r["Name"]) for r in rows if r["Level"] != "pass"]
    assert rc == 0 and not differing, differing[:5]

    # Same seed, another learning rate and one weight element moved: exactly those differ.
    _, b = run(tmp_path, "b", "--lr", "0.2", "--perturb")
    rc, rows = compare(tmp_path, a, b, "cmp-b")
    assert rc == 1
    failed = {r["Name"] for r in rows if r["Level"] == "error"}
    assert failed == {"args.lr", "args.perturb", "model:0.weight"}, sorted(failed)
    assert all(r["Level"] == "pass" for r in rows if r["Category"] in ("pip", "random"))

    # Another seed: the live generator states and seeds differ.
    _, c = run(tmp_path, "c", "--seed", "7")
    rc, rows = compare(tmp_path, a, c, "cmp-c")
    failed = {r["Name"] for r in rows if r["Level"] == "error"}
    assert rc == 1 and {"torch.initial_seed", "torch.rng_state", "args.seed", "numpy.random.state",
                        "python.random.state", "model:0.weight", "model:0.bias"} <= failed
