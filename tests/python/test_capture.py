"""numprobe.pytorch capture: levels, filters, md5, overflow_check, crash safety, zero-code-change
runs and a two-process gloo run. Each case runs a small script in a fresh interpreter."""
import glob
import json
import os
import signal
import subprocess
import sys
import textwrap
import zlib

import pytest

import numprobe

MODEL = """
import json, os, sys, torch
import torch.nn as nn, torch.nn.functional as F
torch.manual_seed(0)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)
    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(3, 8)
"""


def run_script(tmp_path, body, config=None, args=(), expect_rc=0, env_extra=None):
    script = tmp_path / "script.py"
    script.write_text(MODEL + textwrap.dedent(body))
    env = dict(os.environ)
    env.update(env_extra or {})
    if config is not None:
        config.setdefault("dump_path", str(tmp_path / "dump"))
        (tmp_path / "config.json").write_text(json.dumps(config))
    proc = subprocess.run([sys.executable, str(script), *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == expect_rc, proc.stdout + proc.stderr
    return proc


def load(tmp_path, step=0):
    (rank_dir,) = glob.glob(str(tmp_path / "dump" / f"step{step}" / "*"))
    with open(os.path.join(rank_dir, "dump.json")) as f:
        return json.load(f), rank_dir


TRAIN_ONE_STEP = """
from numprobe.pytorch import PrecisionDebugger
dbg = PrecisionDebugger(config_path="config.json")
for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 1):
    dbg.start(model)
    loss = model(x).sum()
    loss.backward()
    opt.step()
    opt.zero_grad()
    dbg.stop()
    dbg.step()
"""


def test_l0_records_modules_with_backward_and_parameter_gradients(tmp_path):
    run_script(tmp_path, TRAIN_ONE_STEP, {"task": "statistics", "level": "L0"})
    dump, rank_dir = load(tmp_path)
    names = list(dump["data"])
    # Backward entries come in autograd's execution order: fc2's weights accumulate their
    # gradients before the gradient reaches fc2's input.
    assert names == ["Module.fc1.Linear.forward.0", "Module.fc2.Linear.forward.0",
                     "Module.fc2.Linear.parameters_grad.0", "Module.fc2.Linear.backward.0",
                     "Module.fc1.Linear.backward.0", "Module.fc1.Linear.parameters_grad.0"], names
    fc1 = dump["data"]["Module.fc1.Linear.forward.0"]
    assert list(fc1["parameters"]) == ["weight", "bias"]
    bw = dump["data"]["Module.fc2.Linear.backward.0"]
    assert bw["input"][0]["shape"] == [3, 4]   # gradient of the output
    assert bw["output"][0]["shape"] == [3, 16]  # gradient of the input
    grads = dump["data"]["Module.fc1.Linear.parameters_grad.0"]
    assert grads["weight"][0]["shape"] == [16, 8]
    with open(os.path.join(rank_dir, "construct.json")) as f:
        assert json.load(f)["Module.fc1.Linear.forward.0"] is None


def test_l1_counts_per_step_and_outermost_only(tmp_path):
    body = """
    from numprobe.pytorch import PrecisionDebugger
    dbg = PrecisionDebugger(config_path="config.json")
    for _ in range(2):
        dbg.start()
        y = torch.nn.functional.softmax(x, dim=-1)   # calls Tensor.softmax inside: not recorded
        z = (y + 1) * y
        dbg.stop()
        dbg.step()
    """
    run_script(tmp_path, body, {"task": "statistics", "level": "L1"})
    for step in (0, 1):
        dump, _ = load(tmp_path, step)
        assert list(dump["data"]) == ["Functional.softmax.0.forward", "Tensor.__add__.0.forward",
                                      "Tensor.__mul__.0.forward"]
    kwargs = dump["data"]["Functional.softmax.0.forward"]["input_kwargs"]
    assert kwargs == {"dim": {"type": "int", "value": -1}}



def test_stack_json_names_each_calls_own_line(tmp_path):
    # Stacks are cached per call site (the frames' code and current instruction): a loop's call
    # reuses its stack, and calls from other lines, or twice on one line, get their own lines.
    body = """
    from numprobe.pytorch import PrecisionDebugger
    dbg = PrecisionDebugger(config_path="config.json")
    dbg.start()
    def inner(v):
        return torch.sigmoid(v)  # LINE_INNER
    for _ in range(3):
        y = torch.sigmoid(x)  # LINE_LOOP
    y = torch.sigmoid(y)  # LINE_AFTER
    a = torch.sigmoid(x); b = torch.sigmoid(a)  # LINE_TWICE
    c = inner(x)  # LINE_OUTER
    c = inner(c)  # LINE_OUTER_AGAIN
    dbg.stop()
    """
    run_script(tmp_path, body, {"task": "statistics", "level": "L1"})
    _, rank_dir = load(tmp_path)
    with open(os.path.join(rank_dir, "stack.json")) as f:
        groups = json.load(f)
    frames_of = {}
    for names, frames in groups.values():
        for name in names:
            frames_of[name] = frames
    script = (tmp_path / "script.py").read_text().splitlines()
    line = {tag: script.index(next(s for s in script if s.endswith("# " + tag))) + 1
            for tag in ("LINE_INNER", "LINE_LOOP", "LINE_AFTER", "LINE_TWICE", "LINE_OUTER",
                        "LINE_OUTER_AGAIN")}

    def lines(name):
        return [int(f.split(", line ")[1].split(",")[0]) for f in frames_of[name]
                if "script.py" in f]

    expected = {0: ["LINE_LOOP"], 1: ["LINE_LOOP"], 2: ["LINE_LOOP"], 3: ["LINE_AFTER"],
                4: ["LINE_TWICE"], 5: ["LINE_TWICE"], 6: ["LINE_INNER", "LINE_OUTER"],
                7: ["LINE_INNER", "LINE_OUTER_AGAIN"]}
    for count, tags in expected.items():
        name = f"Torch.sigmoid.{count}.forward"
        assert lines(name) == [line[t] for t in tags], (name, frames_of[name])
    # one group for the loop's three calls, whose stacks are the same
    loop_group = [names for names, _ in groups.values() if "Torch.sigmoid.0.forward" in names]
    assert loop_group == [["Torch.sigmoid.0.forward", "Torch.sigmoid.1.forward",
                           "Torch.sigmoid.2.forward"]], loop_group

def test_l2_records_aten_ops(tmp_path):
    run_script(tmp_path, TRAIN_ONE_STEP, {"task": "statistics", "level": "L2"})
    dump, _ = load(tmp_path)
    names = list(dump["data"])
    assert names and all(n.startswith("Aten.") for n in names), names
    assert any(n.startswith("Aten.addmm.default.0.forward") for n in names), names


def test_data_mode_forward_and_step_filter(tmp_path):
    config = {"task": "statistics", "level": "mix", "step": [1],
              "statistics": {"data_mode": ["forward"]}}
    run_script(tmp_path, TRAIN_ONE_STEP, config, args=("2",))
    assert not os.path.exists(tmp_path / "dump" / "step0")
    dump, _ = load(tmp_path, 1)
    assert dump["data"] and not any("backward" in n or "parameters_grad" in n for n in dump["data"])


def test_md5_is_crc32_of_the_tensor_bytes(tmp_path):
    body = """
    from numprobe.pytorch import PrecisionDebugger
    dbg = PrecisionDebugger(config_path="config.json")
    dbg.start()
    y = torch.relu(x)
    dbg.stop()
    torch.save(y, "y.pt")
    """
    run_script(tmp_path, body, {"task": "statistics", "level": "L1",
                                "statistics": {"summary_mode": "md5"}})
    dump, _ = load(tmp_path)
    import torch

    y = torch.load(tmp_path / "y.pt")
    leaf = dump["data"]["Torch.relu.0.forward"]["output"][0]
    assert leaf["md5"] == f"{zlib.crc32(y.numpy().tobytes()):08x}"
    assert list(leaf)[-1] == "md5"


def test_overflow_check_reports_the_first_op_with_a_nonfinite_output(tmp_path):
    body = """
    from numprobe.pytorch import PrecisionDebugger
    dbg = PrecisionDebugger(config_path="config.json")
    dbg.start(model)
    h = model(x)
    q = h * 1e38
    q = q * 1e38                      # the first Inf is born here
    r = torch.exp(q)                  # also non-finite, after overflow_nums is reached
    dbg.stop()
    """
    proc = run_script(tmp_path, body, {"task": "overflow_check", "level": "mix"})
    assert "overflow_check: first non-finite output in Tensor.__mul__.1.forward" in proc.stderr
    assert "source: File " in proc.stderr and "q = q * 1e38" in proc.stderr
    dump, _ = load(tmp_path)
    assert list(dump["data"]) == ["Tensor.__mul__.1.forward"]


def test_sigkill_mid_step_loses_no_recorded_entry(tmp_path):
    body = """
    import signal
    from numprobe.pytorch import PrecisionDebugger
    dbg = PrecisionDebugger(config_path="config.json")
    dbg.start(model)
    out = model(x)
    out.sum().backward()
    print(dbg.dumper.entry_count, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
    """
    proc = run_script(tmp_path, body, {"task": "statistics", "level": "mix"}, expect_rc=-signal.SIGKILL)
    recorded = int(proc.stdout.strip())
    (rank_dir,) = glob.glob(str(tmp_path / "dump" / "step0" / "*"))
    text, from_journal, _ = numprobe.load_dump_json(rank_dir)
    assert from_journal
    data = json.loads(text)["data"]
    assert len(data) == recorded and recorded >= 8
    assert "Functional.linear.1.backward" in data and "Module.fc1.Linear.parameters_grad.0" in data
    # `numprobe inspect`-style readers see the same: the journal is complete line by line.
    journal = numprobe.read_journal(os.path.join(rank_dir, "dump.json.journal"))
    assert len(journal["dump"]["data"]) == recorded and not journal["dump_json_current"]

    # The command-line readers fall back to the journal too.
    binary = os.environ["NUMPROBE_BIN"]
    inspect = subprocess.run([binary, "inspect", "--json", rank_dir], capture_output=True,
                             text=True, timeout=120)
    assert inspect.returncode == 0, inspect.stderr
    assert "dump.json.journal" in inspect.stderr  # the user is told where the entries came from
    (dump,) = json.loads(inspect.stdout)["dumps"]
    assert dump["entries"] == recorded and dump["from_journal"] and dump["task"] == "statistics"

    # A clean run of the same script is the golden: every recorded entry pairs and agrees.
    clean = tmp_path / "clean"
    clean.mkdir()
    run_script(clean, TRAIN_ONE_STEP, {"task": "statistics", "level": "mix"})
    (golden_dir,) = glob.glob(str(clean / "dump" / "step0" / "*"))
    out = tmp_path / "cmp"
    cmp = subprocess.run([binary, "compare", "-tp", rank_dir, "-gp", golden_dir, "-o", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert cmp.returncode in (0, 1), cmp.stderr
    (csv_path,) = glob.glob(str(out / "compare_result_*.csv"))
    import csv
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    names = [r["NPU Name"] for r in rows]
    missing = [e for e in data if not any(n.startswith(e + ".") for n in names)]
    assert not missing, missing
    assert all(r["Bench Name"] != "N/A" for r in rows)
    assert all(r["Result"] == "pass" for r in rows), [r["NPU Name"] for r in rows
                                                      if r["Result"] != "pass"][:5]


@pytest.mark.parametrize("durability", ["step", "file"])
def test_sigkill_mid_step_in_tensor_mode_journals_only_complete_files(tmp_path, durability):
    # Large tensors queue up in the background writer; the kill comes while it is behind.
    body = """
    import signal
    from numprobe.pytorch import PrecisionDebugger
    dbg = PrecisionDebugger(config_path="config.json")
    dbg.start()
    big = torch.randn(512, 1024)
    for i in range(24):
        big = big * 1.0 + i
    print(dbg.dumper.entry_count, flush=True)
    # The kill must find at least one record to check: on a loaded machine the writer may not
    # have finished its first (fsync'ed) file when the loop ends, so wait for one in the journal.
    import glob, time, numprobe
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        paths = glob.glob("dump/step0/*/dump.json.journal")
        if paths and numprobe.read_journal(paths[0])["dump"]["data"]:
            break
        time.sleep(0.005)
    os.kill(os.getpid(), signal.SIGKILL)
    """
    proc = run_script(tmp_path, body, {"task": "tensor", "level": "L1",
                                       "tensor_durability": durability},
                      expect_rc=-signal.SIGKILL)
    recorded = int(proc.stdout.strip())
    (rank_dir,) = glob.glob(str(tmp_path / "dump" / "step0" / "*"))
    journal = numprobe.read_journal(os.path.join(rank_dir, "dump.json.journal"))
    data = journal["dump"]["data"]
    assert 0 < len(data) <= recorded
    import torch

    checked = 0
    for name, entry in data.items():
        for leaf in entry.get("input_args", []) + entry.get("output", []):
            if not isinstance(leaf, dict) or "data_name" not in leaf:
                continue
            path = os.path.join(rank_dir, "dump_tensor_data", leaf["data_name"])
            assert os.path.exists(path), f"{name}: the journal names a file never written"
            tensor = torch.load(path)  # complete: a cut file would not load
            assert list(tensor.shape) == leaf["shape"]
            assert float(tensor.max()) == pytest.approx(leaf["Max"], rel=1e-6)
            checked += 1
    assert checked >= 2
    # Nothing under a final name is cut short; an unfinished file keeps its temporary name.
    for f in os.listdir(os.path.join(rank_dir, "dump_tensor_data")):
        if ".numprobe-tmp." not in f:  # AtomicOutput's temporary names
            torch.load(os.path.join(rank_dir, "dump_tensor_data", f))


def test_a_tensor_recorded_again_in_a_step_is_a_hard_link_that_torch_loads(tmp_path):
    # An op's output is the next op's input: one file, two names (docs/capture.md). An in-place
    # op's input (before) and output (after) hold other bytes: two files.
    body = """
    from numprobe.pytorch import PrecisionDebugger
    dbg = PrecisionDebugger(config_path="config.json")
    dbg.start()
    h = F.relu(model.fc1(x))
    h.mul_(2)
    out = model.fc2(h)
    dbg.stop()
    dbg.step()
    """
    run_script(tmp_path, body, {"task": "tensor", "level": "L1"})
    dump, rank_dir = load(tmp_path)
    data = dump["data"]
    import torch

    def leaf(entry, part, i=0):
        (name,) = [n for n in data if n.startswith(entry)]
        return data[name][part][i]

    def inode(leaf):
        return os.stat(os.path.join(rank_dir, "dump_tensor_data", leaf["data_name"])).st_ino

    linear0_out = leaf("Functional.linear.0.", "output")
    relu_in, relu_out = leaf("Functional.relu.0.", "input_args"), leaf("Functional.relu.0.", "output")
    mul_in, mul_out = leaf("Tensor.mul_.0.", "input_args"), leaf("Tensor.mul_.0.", "output")
    linear1_in = leaf("Functional.linear.1.", "input_args")
    assert inode(relu_in) == inode(linear0_out)
    assert inode(mul_in) == inode(relu_out)
    assert inode(linear1_in) == inode(mul_out)
    assert inode(mul_in) != inode(mul_out)  # in place: other bytes
    # Every name loads with torch, and holds what dump.json says it holds.
    for entry in data.values():
        for part in ("input_args", "output"):
            for item in entry.get(part, []):
                if not isinstance(item, dict) or "data_name" not in item:
                    continue
                tensor = torch.load(os.path.join(rank_dir, "dump_tensor_data", item["data_name"]))
                assert list(tensor.shape) == item["shape"]
                assert float(tensor.max()) == pytest.approx(item["Max"], rel=1e-6)
    assert float(torch.load(os.path.join(rank_dir, "dump_tensor_data", mul_out["data_name"])).max()) \
        == pytest.approx(2 * relu_out["Max"], rel=1e-6)
    assert not [f for f in os.listdir(os.path.join(rank_dir, "dump_tensor_data"))
                if ".numprobe-tmp." in f]


def test_numprobe_run_dumps_an_unmodified_script(tmp_path):
    binary = os.environ.get("NUMPROBE_BIN")
    if not binary or not os.path.exists(binary):
        pytest.skip("numprobe binary not built")
    script = tmp_path / "train.py"
    script.write_text(MODEL + """
for _ in range(2):
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
""")
    (tmp_path / "cfg.json").write_text(json.dumps({"task": "statistics", "level": "mix",
                                                    "dump_path": str(tmp_path / "dump")}))
    env = dict(os.environ)
    env["NUMPROBE_PYTHONPATH"] = os.path.dirname(os.path.dirname(numprobe.__file__))
    proc = subprocess.run([binary, "run", "--config", str(tmp_path / "cfg.json"), "--",
                           sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    for step in (0, 1):
        dump, _ = load(tmp_path, step)
        names = list(dump["data"])
        assert "Module.fc1.Linear.forward.0" in names and "Functional.linear.0.forward" in names
        assert "Tensor.pow.0.forward" in names and any(n.startswith("Tensor.add_.") for n in names)
    bad = subprocess.run([binary, "run", "--config", str(tmp_path / "missing.json"), "--", "true"],
                         capture_output=True, text=True)
    assert bad.returncode == 3 and "not found" in bad.stderr


def test_bad_config_fails_at_construction_naming_the_key(tmp_path):
    body = """
    from numprobe.pytorch import PrecisionDebugger
    import numprobe
    try:
        PrecisionDebugger(config_path="config.json")
    except numprobe.Error as e:
        print(e)
    """
    proc = run_script(tmp_path, body, {"task": "statistics", "levle": "L1"})
    assert "config key 'levle': unknown key" in proc.stdout


def test_two_process_gloo_run_writes_rank_folders_with_collectives(tmp_path):
    body = """
    import torch.distributed as dist
    import torch.multiprocessing as mp
    from numprobe.pytorch import PrecisionDebugger

    def worker(rank):
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=sys.argv[1])
        dist.init_process_group("gloo", rank=rank, world_size=2)
        dbg = PrecisionDebugger(config_path="config.json")
        dbg.start()
        t = torch.ones(4) * (rank + 1)
        dist.all_reduce(t)
        dbg.stop()
        dist.destroy_process_group()

    if __name__ == "__main__":
        mp.spawn(worker, nprocs=2)
    """
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    run_script(tmp_path, body, {"task": "statistics", "level": "L1"}, args=(str(port),))
    for rank in (0, 1):
        with open(tmp_path / "dump" / "step0" / f"rank{rank}" / "dump.json") as f:
            data = json.load(f)["data"]
        entry = data["Distributed.all_reduce.0.forward"]
        assert entry["input_args"][0]["Max"] == rank + 1.0
        assert entry["output"][0]["Max"] == 3.0  # the reduced tensor, after the collective


def test_batched_device_path_gives_the_same_statistics(tmp_path):
    """The device path (one stacked reduction per op, one transfer) forced onto CPU tensors must
    write what the C++ kernel path writes, up to the last bit of the dtype's mean/norm."""
    body = """
    import numprobe._numprobe as core
    from numprobe.pytorch import PrecisionDebugger
    if sys.argv[1] == "device":
        core.set_force_device_path(True)
    dbg = PrecisionDebugger(config_path="config.json")
    dbg.start(model)
    out = model(x)
    out.sum().backward()
    b = torch.tensor([True, False]) & torch.tensor([True, True])
    s = torch.tensor(3, dtype=torch.int64) + 1
    dbg.stop()
    """
    results = {}
    for mode in ("kernel", "device"):
        sub = tmp_path / mode
        sub.mkdir()
        run_script(sub, body, {"task": "statistics", "level": "mix"}, args=(mode,))
        results[mode], _ = load(sub)
    assert list(results["kernel"]["data"]) == list(results["device"]["data"])

    def leaves(v):
        if isinstance(v, dict) and "dtype" in v:
            yield v
        elif isinstance(v, dict):
            for x in v.values():
                yield from leaves(x)
        elif isinstance(v, list):
            for x in v:
                yield from leaves(x)

    pairs = list(zip(leaves(results["kernel"]["data"]), leaves(results["device"]["data"])))
    assert len(pairs) > 20
    for k, d in pairs:
        assert (k["dtype"], k["shape"]) == (d["dtype"], d["shape"])
        for key in ("Max", "Min"):
            assert k[key] == d[key] and type(k[key]) is type(d[key])
        for key in ("Mean", "Norm"):
            if k[key] is None:
                assert d[key] is None
            else:
                assert abs(k[key] - d[key]) <= 2**-22 * max(abs(k["Max"]), abs(k["Min"]), 1e-30) * 4


# Two training steps on the device path: on a GPU (argv[1] "cuda"), or forced onto CPU tensors
# ("forced"); prints the device transfers and the records waiting at each step's end.
TWO_STEPS_ON_A_DEVICE = """
import numprobe._numprobe as core
from numprobe.pytorch import PrecisionDebugger
if sys.argv[1] == "forced":
    core.set_force_device_path(True)
else:
    model.to(sys.argv[1])
    x = x.to(sys.argv[1])
dbg = PrecisionDebugger(config_path="config.json")
rt = dbg._runtime
waiting = []
for _ in range(2):
    dbg.start(model)
    model(x).sum().backward()
    opt.step()
    opt.zero_grad()
    waiting.append(dbg.dumper.pending_records)
    dbg.stop()
    dbg.step()
print(json.dumps({"transfers": rt.device_transfers, "waiting": waiting}))
"""


def test_async_dump_fetches_device_statistics_once_per_step(tmp_path):
    """async_dump on the device path (forced onto CPU tensors): the statistics stay on the device
    and are fetched in one transfer at each step's end, and the dump is the one the synchronous
    device path writes, value for value, in the same order."""
    results = {}
    for mode in ("sync", "async"):
        sub = tmp_path / mode
        sub.mkdir()
        proc = run_script(sub, TWO_STEPS_ON_A_DEVICE, {"task": "statistics", "level": "mix",
                                                       "async_dump": mode == "async"},
                          args=("forced",))
        results[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
        results[mode]["dumps"] = [load(sub, step)[0] for step in (0, 1)]
    sync, asynchronous = results["sync"], results["async"]
    assert asynchronous["dumps"] == sync["dumps"]  # same entries, order and values
    assert len(sync["dumps"][0]["data"]) >= 8
    assert asynchronous["transfers"] == 2  # one fetch per step
    assert sync["transfers"] >= 2 * 8  # one per recorded op
    assert min(asynchronous["waiting"]) >= 8 and sync["waiting"] == [0, 0]


CUDA = pytest.mark.skipif(not __import__("torch").cuda.is_available(),
                          reason="needs a CUDA device (none on this machine)")


@pytest.mark.parametrize("device", ["forced", pytest.param("cuda", marks=CUDA)])
@pytest.mark.parametrize("task", ["tensor", "md5"])
def test_async_dump_copies_data_for_files_and_md5_at_the_step_end(tmp_path, task, device):
    """async_dump with data (tensor files, md5) on the device path (on a GPU, or forced onto CPU
    tensors): the host copies (a copy stream's, on a GPU) are handed over at the step's end with
    the statistics, and the dump, its md5s and its tensor files are those of the synchronous path,
    byte for byte."""
    config = {"task": "tensor", "level": "mix"} if task == "tensor" else \
        {"task": "statistics", "level": "mix", "statistics": {"summary_mode": "md5"}}
    results = {}
    for mode in ("sync", "async"):
        sub = tmp_path / mode
        sub.mkdir()
        proc = run_script(sub, TWO_STEPS_ON_A_DEVICE, dict(config, async_dump=mode == "async"),
                          args=(device,))
        results[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
        dumps = [load(sub, step)[0] for step in (0, 1)]
        for dump in dumps:
            dump.pop("dump_data_dir", None)  # the one field that names the run's own folder
        results[mode]["dumps"] = dumps
        files = {}
        for path in sorted(glob.glob(str(sub / "dump" / "step*" / "*" / "dump_tensor_data" / "*"))):
            step, _, _, name = os.path.relpath(path, sub / "dump").split(os.sep)  # no proc{pid}
            with open(path, "rb") as f:
                files[(step, name)] = f.read()
        results[mode]["files"] = files
    sync, asynchronous = results["sync"], results["async"]
    assert asynchronous["dumps"] == sync["dumps"]  # entries, order, statistics, md5s, data_names
    assert asynchronous["files"] == sync["files"]
    leaves = [leaf for entry in sync["dumps"][0]["data"].values()
              for part in entry.values() if isinstance(part, list)
              for leaf in part if isinstance(leaf, dict) and leaf.get("type") == "torch.Tensor"]
    assert len(leaves) >= 8
    if task == "tensor":
        assert len(sync["files"]) >= 2 * len(leaves) and all("data_name" in l for l in leaves)
    else:
        assert not sync["files"] and all(len(l["md5"]) == 8 for l in leaves)
    assert asynchronous["transfers"] == 2  # one fetch per step
    assert min(asynchronous["waiting"]) >= 8 and sync["waiting"] == [0, 0]


def test_save_writes_debug_json_with_the_gradient(tmp_path):
    body = """
    from numprobe.pytorch import PrecisionDebugger
    dbg = PrecisionDebugger(config_path="config.json")
    dbg.start()
    w = torch.ones(3, requires_grad=True)
    y = w * 2
    dbg.save(y, "y")
    dbg.save({"n": 3, "t": w.detach()}, "misc")
    y.sum().backward()
    dbg.stop()
    """
    run_script(tmp_path, body, {"task": "statistics", "level": "debug"})
    (rank_dir,) = glob.glob(str(tmp_path / "dump" / "step0" / "*"))
    with open(os.path.join(rank_dir, "debug.json")) as f:
        debug = json.load(f)
    assert debug["level"] == "debug"
    assert list(debug["data"]) == ["y.0.debug", "misc.0.debug", "y_grad.0.debug"]
    assert debug["data"]["y.0.debug"]["Max"] == 2.0
    assert debug["data"]["y_grad.0.debug"]["Min"] == 1.0
    assert debug["data"]["misc.0.debug"]["n"] == {"type": "int", "value": 3}
    with open(os.path.join(rank_dir, "dump.json")) as f:
        assert json.load(f)["data"] == {}


def test_scope_list_risk_level_and_tensor_list(tmp_path):
    body = """
    from numprobe.pytorch import PrecisionDebugger
    dbg = PrecisionDebugger(config_path="config.json")
    dbg.start(model)
    h = model(x).flatten()
    y = torch.sigmoid(h) * 2
    dbg.stop()
    """
    cases = {
        # scope bounds a range of APIs (inclusive); with a scope, risk_level does not apply
        "scope": ({"level": "L1", "statistics": {"scope": ["Functional.linear.1.forward",
                                                           "Torch.sigmoid.0.forward"]}},
                  ["Functional.linear.1.forward", "Tensor.flatten.0.forward",
                   "Torch.sigmoid.0.forward"]),
        # list: a module name selects everything inside it, a substring selects by name
        "list": ({"level": "mix", "statistics": {"list": ["Module.fc2", "sigmoid"]}},
                 ["Functional.linear.1.forward", "Module.fc2.Linear.forward.0",
                  "Torch.sigmoid.0.forward"]),
        # risk_level ALL keeps the low-risk view op that FOCUS (the default) leaves out
        "all": ({"level": "L1", "risk_level": "ALL"},
                ["Functional.linear.0.forward", "Functional.relu.0.forward",
                 "Functional.linear.1.forward", "Tensor.flatten.0.forward",
                 "Torch.sigmoid.0.forward", "Tensor.__mul__.0.forward"]),
        "focus": ({"level": "L1"},
                  ["Functional.linear.0.forward", "Functional.relu.0.forward",
                   "Functional.linear.1.forward", "Torch.sigmoid.0.forward",
                   "Tensor.__mul__.0.forward"]),
    }
    for label, (config, expected) in cases.items():
        sub = tmp_path / label
        sub.mkdir()
        run_script(sub, body, dict(config, task="statistics"))
        dump, _ = load(sub)
        forward = [n for n in dump["data"] if n.endswith("forward") or ".forward." in n]
        assert forward == expected, (label, forward)
    sub = tmp_path / "tensor_list"
    sub.mkdir()
    run_script(sub, body, {"task": "statistics", "level": "L1", "statistics": {"tensor_list": ["relu"]}})
    dump, rank_dir = load(sub)
    files = sorted(os.listdir(os.path.join(rank_dir, "dump_tensor_data")))
    assert files == ["Functional.relu.0.forward.input.0.pt", "Functional.relu.0.forward.output.0.pt"]
    assert dump["data"]["Functional.relu.0.forward"]["output"][0]["data_name"] == files[1]
    assert "data_name" not in dump["data"]["Torch.sigmoid.0.forward"]["output"][0]


@pytest.mark.parametrize("dump", ["sync", "async"])
def test_tensor_list_copies_only_the_listed_entries_data(tmp_path, dump):
    """A statistics dump with a tensor_list on the device path (forced onto CPU tensors): only the
    listed entries' tensors are copied to the host (a copy of every tensor, as before, made a
    device-to-host transfer of each activation for files nobody asked for), and the files are
    those the kernel path writes."""
    body = """
    import numprobe._numprobe as core
    from numprobe.pytorch import PrecisionDebugger
    core.set_force_device_path(True)
    dbg = PrecisionDebugger(config_path="config.json")
    dbg.start(model)
    h = model(x).flatten()
    y = torch.sigmoid(h) * 2
    dbg.stop()
    print(json.dumps({"host_copies": dbg._runtime.host_copies}))
    """
    config = {"task": "statistics", "level": "L1", "async_dump": dump == "async",
              "statistics": {"tensor_list": ["relu"]}}
    proc = run_script(tmp_path, body, config)
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"host_copies": 2}
    dump_json, rank_dir = load(tmp_path)
    files = sorted(os.listdir(os.path.join(rank_dir, "dump_tensor_data")))
    assert files == ["Functional.relu.0.forward.input.0.pt", "Functional.relu.0.forward.output.0.pt"]
    relu = dump_json["data"]["Functional.relu.0.forward"]
    assert relu["output"][0]["data_name"] == files[1]
    assert "data_name" not in dump_json["data"]["Torch.sigmoid.0.forward"]["output"][0]
    import torch

    saved = torch.load(os.path.join(rank_dir, "dump_tensor_data", files[1]))
    assert saved.max().item() == relu["output"][0]["Max"]


def test_narrowing_casts_go_to_casts_json_and_dump_json_stays_msprobes(tmp_path):
    """casts.json (docs/casts.md): every narrowing cast, named as msprobe would name it at risk
    level ALL, at any risk level; dump.json holds casts only where msprobe would (ALL), never the
    Tensor.type wrapper it does not have; no casts.json where the capture does not watch casts."""
    body = """
    from numprobe.pytorch import PrecisionDebugger
    dbg = PrecisionDebugger(config_path="config.json")
    dbg.start(model)
    h = model(x)
    b = h.bfloat16()                  # narrowing
    w = b.float()                     # widening: not a cast record
    t = w.type(torch.HalfTensor)      # narrowing, through a method msprobe does not wrap
    same = w.to(torch.float32)        # no dtype change
    y = torch.sigmoid(same) * t.float()
    dbg.stop()
    """
    runs = {}
    for label, config in (("focus", {"level": "L1"}), ("all", {"level": "L1", "risk_level": "ALL"}),
                          ("mix", {"level": "mix"}), ("l0", {"level": "L0"})):
        sub = tmp_path / label
        sub.mkdir()
        run_script(sub, body, dict(config, task="statistics"))
        runs[label] = load(sub)
    for label in ("focus", "all", "mix"):
        dump, rank_dir = runs[label]
        with open(os.path.join(rank_dir, "casts.json")) as f:
            casts = json.load(f)
        assert casts["numprobe_casts"] == 1
        names = [c["name"] for c in casts["casts"]]
        assert names == ["Tensor.bfloat16.0.forward", "Tensor.type.0.forward"], (label, names)
        first, second = casts["casts"]
        assert (first["input"]["dtype"], first["output"]["dtype"]) == ("torch.float32", "torch.bfloat16")
        assert (second["input"]["dtype"], second["output"]["dtype"]) == ("torch.float32", "torch.float16")
        assert first["output"]["shape"] == [3, 4]
        # its place in execution order: after the model's entries (and their modules at mix)
        names = list(dump["data"])
        place = "Tensor.bfloat16.0.forward" if label == "all" else "Torch.sigmoid.0.forward"
        assert first["entries_before"] == names.index(place), (label, first, names)
        assert "script.py" in first["stack"][0] and "h.bfloat16()" in first["stack"][0]
        assert not any(".type." in n for n in dump["data"])
    focus = list(runs["focus"][0]["data"])
    assert focus == ["Functional.linear.0.forward", "Functional.relu.0.forward",
                     "Functional.linear.1.forward", "Torch.sigmoid.0.forward",
                     "Tensor.__mul__.0.forward"], focus
    all_dump = runs["all"][0]["data"]
    assert [n for n in all_dump if n.startswith("Tensor.") and "__" not in n] == [
        "Tensor.bfloat16.0.forward", "Tensor.float.0.forward", "Tensor.to.0.forward",
        "Tensor.float.1.forward"]
    with open(os.path.join(runs["all"][1], "casts.json")) as f:
        recorded = json.load(f)["casts"][0]["output"]
    dumped = all_dump["Tensor.bfloat16.0.forward"]["output"][0]
    assert {k: recorded[k] for k in ("Max", "Min", "Mean", "Norm")} == \
        {k: dumped[k] for k in ("Max", "Min", "Mean", "Norm")}
    assert not os.path.exists(os.path.join(runs["l0"][1], "casts.json"))


def test_wrapped_apis_are_functions_to_their_callers_and_unwrap_to_the_originals(tmp_path):
    # The wrappers are C++ callables (ApiWrapper) reading the runtime's own state: they keep the
    # original's attributes, bind as methods, pass through numprobe's own calls (inner) and other
    # threads, leave the state as it was when the original raises, and un-wrapping puts back the
    # very objects that were there.
    body = """
    import threading
    originals = {"add": torch.add, "Tensor.add": torch.Tensor.add, "relu": F.relu}
    from numprobe.pytorch import PrecisionDebugger
    dbg = PrecisionDebugger(config_path="config.json")
    for name, wrapper in (("add", torch.add), ("relu", F.relu),
                          ("Tensor.add", torch.Tensor.add)):
        original = originals[name]
        assert wrapper is not original and wrapper._numprobe_original is original, name
        assert wrapper.__wrapped__ is original, name
        for attribute in ("__name__", "__qualname__", "__doc__", "__module__"):
            if hasattr(original, attribute):
                assert getattr(wrapper, attribute) == getattr(original, attribute), (name, attribute)
        assert wrapper.__module__
    import copy, pickle
    assert pickle.loads(pickle.dumps(torch.add)) is torch.add  # by name, as a function
    assert copy.deepcopy(F.relu) is F.relu
    rt = dbg._runtime
    dbg.start()
    try:
        torch.matmul(torch.ones(2, 3), torch.ones(2, 3))
    except RuntimeError:
        pass
    else:
        raise AssertionError("matmul of mismatched shapes did not raise")
    assert rt.depth == 0 and rt.inner == 0 and "Torch.matmul." not in rt.api_counts
    y = x.add(1)                   # bound to x as a method
    z = torch.Tensor.add(x, 2)     # read from the class: x is the first argument
    rt.inner += 1                  # numprobe's own calls are passed through
    torch.add(x, 3)
    rt.inner -= 1
    worker = threading.Thread(target=lambda: torch.add(x, 4))  # not the recording thread
    worker.start()
    worker.join()
    w = torch.add(y, z, alpha=2)
    assert rt.api_counts == {"Tensor.add.": 2, "Torch.add.": 1}, rt.api_counts
    dbg.stop()
    PrecisionDebugger._reset()
    assert torch.add is originals["add"] and F.relu is originals["relu"]
    assert torch.Tensor.add is originals["Tensor.add"]
    """
    run_script(tmp_path, body, {"task": "statistics", "level": "L1"})
    dump, _ = load(tmp_path)
    names = [n for n in dump["data"] if not n.startswith("Torch.matmul.")]
    assert names == ["Tensor.add.0.forward", "Tensor.add.1.forward", "Torch.add.0.forward"]
    recorded = dump["data"]["Torch.add.0.forward"]
    assert recorded["input_kwargs"] == {"alpha": {"type": "int", "value": 2}}
    assert len(recorded["input_args"]) == 2 and len(recorded["output"]) == 1
    assert dump["data"]["Tensor.add.1.forward"]["input_args"][1] == {"type": "int", "value": 2}


def test_forked_child_does_not_touch_the_parents_dump(tmp_path):
    body = """
    from numprobe.pytorch import PrecisionDebugger
    dbg = PrecisionDebugger(config_path="config.json")
    dbg.start(model)
    out = model(x)
    pid = os.fork()
    if pid == 0:  # a DataLoader-like worker: runs torch ops, exits through atexit
        torch.relu(torch.ones(3)) * 2
        sys.exit(0)
    os.waitpid(pid, 0)
    y = torch.sigmoid(out)
    dbg.stop()
    """
    run_script(tmp_path, body, {"task": "statistics", "level": "L1"})
    dump, rank_dir = load(tmp_path)
    assert list(dump["data"]) == ["Functional.linear.0.forward", "Functional.relu.0.forward",
                                  "Functional.linear.1.forward", "Torch.sigmoid.0.forward"]
    journal = numprobe.read_journal(os.path.join(rank_dir, "dump.json.journal"))
    assert list(journal["dump"]["data"]) == list(dump["data"]) and journal["dump_json_current"]


@CUDA
def test_cuda_run_matches_the_cpu_run(tmp_path):
    """The same training step dumped on the GPU (batched device statistics, one transfer per op)
    and on the CPU: same entries, and `numprobe compare` pairs every row without an error."""
    body = """
    from numprobe.pytorch import PrecisionDebugger
    device = sys.argv[1]
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model.to(device)
    dbg = PrecisionDebugger(config_path="config.json")
    dbg.start(model)
    model(x.to(device)).sum().backward()
    dbg.stop()
    """
    dirs = {}
    for device in ("cpu", "cuda"):
        sub = tmp_path / device
        sub.mkdir()
        run_script(sub, body, {"task": "statistics", "level": "mix"}, args=(device,))
        (dirs[device],) = glob.glob(str(sub / "dump" / "step0" / "*"))
    with open(os.path.join(dirs["cuda"], "dump.json")) as f:
        cuda_data = json.load(f)["data"]
    with open(os.path.join(dirs["cpu"], "dump.json")) as f:
        cpu_data = json.load(f)["data"]
    assert list(cuda_data) == list(cpu_data)
    out = tmp_path / "cmp"
    cmp = subprocess.run([os.environ["NUMPROBE_BIN"], "compare", "-tp", dirs["cuda"], "-gp",
                          dirs["cpu"], "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert cmp.returncode in (0, 1), cmp.stderr
    (csv_path,) = glob.glob(str(out / "compare_result_*.csv"))
    import csv
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows and all(r["Bench Name"] != "N/A" for r in rows)
    assert not [r["NPU Name"] for r in rows if r["Result"] == "error"]


def test_an_8x_config_runs_with_one_warning_per_unhonoured_key(tmp_path):
    """msprobe 8.x's keys (enable_dataloader, acl_config, seed, ...) are accepted: the run dumps,
    and each key numprobe does not implement is one warning line on stderr."""
    config = {"task": "statistics", "level": "L1", "rank": [], "step": [], "seed": 1234,
              "is_deterministic": False, "enable_dataloader": False, "acl_config": "./acl.json",
              "statistics": {"scope": [], "list": [], "data_mode": ["all"],
                             "summary_mode": "statistics"}}
    proc = run_script(tmp_path, TRAIN_ONE_STEP, config=config)
    warnings = [l for l in proc.stderr.splitlines() if l.startswith("numprobe: warning: config key")]
    assert len(warnings) == 2, proc.stderr
    assert any("'enable_dataloader'" in w for w in warnings)
    assert any("'acl_config'" in w for w in warnings)
    data, _ = load(tmp_path)
    assert data["task"] == "statistics" and data["data"]
