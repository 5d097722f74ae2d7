"""The packed layout (config key dump_layout: "packed"): the same training run dumped in both
layouts gives the same dump.json and byte-identical compare and scan results, and numprobe.load
and inspect see the same tensors; a SIGKILL mid-step loses nothing the journal recorded.

Environment (set by ctest): NUMPROBE_BIN; the numprobe package on PYTHONPATH."""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numprobe

BIN = os.environ.get("NUMPROBE_BIN")
pytestmark = pytest.mark.skipif(not BIN or not os.path.exists(BIN),
                                reason="numprobe binary not built")

# Two steps of a small model with fp16 and integer tensors among the float32 ones (so that the
# container holds tensors of several sizes whose offsets are not all aligned); "noisy" perturbs a
# weight so that compare finds differences.
SCRIPT = """
import json, os, sys, torch
import torch.nn as nn, torch.nn.functional as F
from numprobe.pytorch import PrecisionDebugger
torch.manual_seed(0)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)
    def forward(self, x):
        h = F.relu(self.fc1(x))
        idx = torch.argmax(h, dim=1)
        return self.fc2(h) + idx.unsqueeze(1).to(h.dtype) * 0.01 + h[:, :4].half().float()
model = Net()
if sys.argv[1] == "noisy":
    with torch.no_grad():
        model.fc1.weight[0, 0] += 1e-3
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(3, 8)
dbg = PrecisionDebugger(config_path=sys.argv[2])
for _ in range(2):
    dbg.start(model)
    loss = model(x).sum()
    loss.backward()
    opt.step()
    opt.zero_grad()
    dbg.stop()
    dbg.step()
"""


def dump_run(tmp_path, variant, layout):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    config = tmp_path / f"config_{variant}.json"
    config.write_text(json.dumps({"task": "tensor", "level": "mix", "dump_layout": layout,
                                  "dump_path": str(tmp_path / variant)}))
    subprocess.run([sys.executable, str(script), variant, str(config)], check=True, cwd=tmp_path,
                   timeout=300)
    return tmp_path / variant


def run(args, codes=(0,)):
    proc = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode in codes, proc.stderr
    return proc


def outputs(folder):
    """Every file of a result folder, its name's timestamp dropped: name -> bytes."""
    out = {}
    for path in sorted(glob.glob(os.path.join(folder, "**", "*"), recursive=True)):
        if os.path.isfile(path):
            name = re.sub(r"\d{8,}|proc\d+", "TS", os.path.relpath(path, folder))
            with open(path, "rb") as f:
                out[name] = no_pid(f.read())
    return out


def no_pid(data):
    """The rank folders are proc{pid}: each run has its own pid."""
    return re.sub(rb"proc\d+", b"procPID", data)


def results(tmp_path, tag):
    """compare (target against golden), scan, inspect and load of the two dumps in place."""
    base, noisy = tmp_path / "base", tmp_path / "noisy"
    got = {}
    run(["compare", "-tp", str(noisy), "-gp", str(base), "-o", str(tmp_path / f"cmp_{tag}")],
        codes=(0, 1))
    got["compare"] = outputs(tmp_path / f"cmp_{tag}")
    run(["scan", str(noisy), "-o", str(tmp_path / f"scan_{tag}")], codes=(0, 1))
    got["scan"] = outputs(tmp_path / f"scan_{tag}")
    rank_dir = glob.glob(str(noisy / "step1" / "*"))[0]
    inspect = json.loads(run(["inspect", "--json", rank_dir]).stdout)
    got["inspect"] = [(os.path.relpath(f["path"], rank_dir), [(t["dtype"], t["shape"], t["stats"])
                                                              for t in f["tensors"]])
                      for f in inspect["files"]]
    got["formats"] = {f["format"] for f in inspect["files"]}
    got["load"] = {re.sub(r"proc\d+", "procPID", k): v
                   for k, v in numprobe.load(str(noisy)).items()}
    with open(os.path.join(rank_dir, "dump.json"), "rb") as f:
        got["dump.json"] = no_pid(f.read())
    return got


def test_both_layouts_give_the_same_results(tmp_path):
    for variant in ("base", "noisy"):
        dump_run(tmp_path, variant, "files")
    files = results(tmp_path, "files")
    assert files["formats"] == {"pt"}
    for variant in ("base", "noisy"):
        shutil.rmtree(tmp_path / variant)
        dump_run(tmp_path, variant, "packed")  # the same paths: results may name them
    rank_dir = glob.glob(str(tmp_path / "noisy" / "step1" / "*"))[0]
    tensor_dir = os.path.join(rank_dir, "dump_tensor_data")
    assert sorted(os.listdir(tensor_dir)) == ["packed.data", "packed.index"]
    packed = results(tmp_path, "packed")
    assert packed["formats"] == {"packed"}

    # The dump.json is the same, data_names included: the layout is invisible to its readers.
    assert packed["dump.json"] == files["dump.json"]
    assert json.loads(files["dump.json"])["task"] == "tensor"
    for kind in ("compare", "scan"):
        assert packed[kind].keys() == files[kind].keys(), kind
        assert files[kind], kind
        for name in files[kind]:
            assert packed[kind][name] == files[kind][name], (kind, name)
    csv = next(v for k, v in files["compare"].items() if k.endswith(".csv")).decode()
    assert "Functional.linear" in csv and "N/A" not in csv.splitlines()[1]
    assert packed["inspect"] == files["inspect"] and len(files["inspect"]) > 10
    assert packed["load"].keys() == files["load"].keys() and len(files["load"]) > 10
    for name, array in files["load"].items():
        np.testing.assert_array_equal(packed["load"][name], array, err_msg=name)
        assert packed["load"][name].dtype == array.dtype, name

    # One data file by its own path, as numprobe.load reads a .pt of the files layout.
    name = json.loads(packed["dump.json"])["data"]["Functional.linear.0.forward"]["output"][0]
    one = numprobe.load(os.path.join(tensor_dir, name["data_name"]))
    (array,) = one.values()
    assert list(array.shape) == name["shape"] and float(array.max()) == pytest.approx(name["Max"])

    # A packed dump compared against a dump of the files layout: the same results again.
    shutil.rmtree(tmp_path / "base")
    dump_run(tmp_path, "base", "files")
    run(["compare", "-tp", str(tmp_path / "noisy"), "-gp", str(tmp_path / "base"), "-o",
         str(tmp_path / "cmp_mixed")], codes=(0, 1))
    assert outputs(tmp_path / "cmp_mixed") == files["compare"]


@pytest.mark.parametrize("durability", ["step", "file"])
def test_sigkill_mid_step_in_the_packed_layout_journals_only_complete_tensors(tmp_path, durability):
    # Large tensors queue up in the background writer; the kill comes while it is behind.
    script = tmp_path / "kill.py"
    script.write_text(textwrap.dedent("""
    import os, signal, torch
    from numprobe.pytorch import PrecisionDebugger
    dbg = PrecisionDebugger(config_path="config.json")
    dbg.start()
    big = torch.randn(512, 1024)
    for i in range(24):
        big = big * 1.0 + i
    print(dbg.dumper.entry_count, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
    """))
    (tmp_path / "config.json").write_text(json.dumps(
        {"task": "tensor", "level": "L1", "dump_layout": "packed",
         "tensor_durability": durability, "dump_path": str(tmp_path / "dump")}))
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    recorded = int(proc.stdout.strip())
    (rank_dir,) = glob.glob(str(tmp_path / "dump" / "step0" / "*"))
    journal = numprobe.read_journal(os.path.join(rank_dir, "dump.json.journal"))
    data = journal["dump"]["data"]
    assert 0 < len(data) <= recorded
    tensor_dir = os.path.join(rank_dir, "dump_tensor_data")
    assert not any(f.endswith(".pt") for f in os.listdir(tensor_dir))
    checked = 0
    for name, entry in data.items():
        for leaf in entry.get("input_args", []) + entry.get("output", []):
            if not isinstance(leaf, dict) or "data_name" not in leaf:
                continue
            # Complete: read whole from the container, its values those the journal recorded.
            (array,) = numprobe.load(os.path.join(tensor_dir, leaf["data_name"])).values()
            assert list(array.shape) == leaf["shape"], name
            assert float(array.max()) == pytest.approx(leaf["Max"], rel=1e-6), name
            checked += 1
    assert checked >= 2
    # The whole crashed dump reads: scan takes the journal and every tensor it names.
    out = tmp_path / "scan"
    scan = run(["scan", rank_dir, "-o", str(out)], codes=(0, 1))
    assert "could not be read" not in scan.stderr
    inspect = run(["inspect", "--json", rank_dir])
    listed = {os.path.basename(f["path"]) for f in json.loads(inspect.stdout)["files"]}
    named = {leaf["data_name"] for e in data.values()
             for leaf in e.get("input_args", []) + e.get("output", [])
             if isinstance(leaf, dict) and "data_name" in leaf}
    assert named <= listed

    # The data file cut short under its index (a disk that lost its tail): the cut tensor is an
    # error naming it, never a shorter tensor.
    index = os.path.join(tensor_dir, "packed.index")
    with open(index) as f:
        last = json.loads([line for line in f.read().splitlines() if line][-1])
    with open(os.path.join(tensor_dir, "packed.data"), "r+b") as f:
        f.truncate(last["offsets"][1] - 1)
    with pytest.raises(numprobe.Error, match="cut short"):
        numprobe.load(os.path.join(tensor_dir, last["name"]))
    cut = run(["inspect", rank_dir], codes=(3,))
    assert "cut short" in cut.stderr
