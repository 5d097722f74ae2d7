"""The closed loop: one config in the closed-loop dialect (dump / overflow_check / compare /
config_check), one run, one report. A small model is trained twice with the same config, the
second time with a planted bug (layer_norm's eps); the second run's stop() prints the first
divergence in one paragraph naming the planted op and writes report.html into dump_path, whose
embedded data names it too. The same through `numprobe run` on an unmodified script. Also: the
first NaN is printed at the step it happens, config_check compares the baseline's snapshot, and
the dialect's parsing and its errors."""
import json
import os
import re
import subprocess
import sys

import pytest

import numprobe

PLANTED_OP = "Functional.layer_norm.0.forward"

# The loop: start() once, step() per step, stop() at the end. EPS is the planted bug;
# NAN_AT plants a NaN at that step (-1: none).
EXPLICIT_SCRIPT = """
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F
from numprobe.pytorch import PrecisionDebugger

EPS = float(sys.argv[2])
NAN_AT = int(sys.argv[3])


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x, step):
        h = F.layer_norm(self.fc1(x), (16,), eps=EPS)
        if step == NAN_AT:
            h = torch.log(h)  # negative entries: NaN
        return self.fc2(torch.relu(h))


torch.manual_seed(0)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(4, 8)
debugger = PrecisionDebugger(config_path=sys.argv[1])
debugger.start(model)
for step in range(3):
    loss = model(x, step).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    debugger.step()
debugger.stop()
print("training done")
"""

# An unmodified script for `numprobe run`: no numprobe in it.
PLAIN_SCRIPT = """
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F

EPS = float(sys.argv[1])


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(F.layer_norm(self.fc1(x), (16,), eps=EPS)))


torch.manual_seed(0)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(4, 8)
for step in range(2):
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print("training done")
"""


def write_config(path, dump_path, base_path, base_config=None, mode="tensor", extra=None):
    config = {
        "dump": {"dump_path": str(dump_path), "dump_step": "0|1", "dump_mode": mode,
                 "level": "mix", "dump_input_output": 0},
        "overflow_check": {"enable": True, "check_step": "all"},
        "compare": {"enable": True, "base_path": str(base_path),
                    "metrics": ["cosine", "mae", "relative"]},
    }
    if base_config is not None:
        config["config_check"] = {"enable": True, "base_config": str(base_config)}
    if extra:
        for section, members in extra.items():
            config.setdefault(section, {}).update(members)
    path.write_text(json.dumps(config))
    return path


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return e


def run_explicit(tmp_path, config, eps, nan_at=-1):
    script = tmp_path / "train_explicit.py"
    script.write_text(EXPLICIT_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), str(config), str(eps), str(nan_at)],
                          capture_output=True, text=True, env=env(), cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "training done" in proc.stdout
    return proc


def paragraph(stdout):
    """The end-of-run paragraph: from 'numprobe: compared' to the report line."""
    start = stdout.index("numprobe: compared")
    end = stdout.index("numprobe: report written to")
    return " ".join(stdout[start:end].split())


def embedded_data(report):
    html = report.read_text(encoding="utf-8")
    match = re.search(r'<script type="application/json" id="numprobe-data">(.*?)</script>', html,
                      re.S)
    assert match, "report.html has no embedded data"
    return json.loads(match.group(1))


def test_second_run_names_the_planted_op_and_writes_report_html(tmp_path):
    good, bad = tmp_path / "gpu_dump", tmp_path / "ms_dump"
    # The baseline: the same config (compare's base_path does not exist yet).
    baseline = run_explicit(tmp_path, write_config(tmp_path / "good.json", good, bad), 1e-5)
    assert "base_path" in baseline.stdout and "does not exist yet" in baseline.stdout
    assert not (good / "report.html").exists()
    assert sorted(os.listdir(good)) == ["step0", "step1"]  # dump_step "0|1"; no empty step2

    proc = run_explicit(tmp_path, write_config(tmp_path / "bad.json", bad, good), 0.5)
    text = paragraph(proc.stdout)
    assert re.search(r"First divergence \(step0/[a-z0-9]+\): " + re.escape(PLANTED_OP), text), text
    assert "eps" in text, text  # the argument that differs, with both values
    assert re.search(r"cosine [0-9.]+, mae [0-9.e-]+, relative [0-9.e-]+", text), text
    report = bad / "report.html"
    assert f"numprobe: report written to {report}" in proc.stdout
    assert report.stat().st_size > 10000
    data = embedded_data(report)
    assert PLANTED_OP in json.dumps(data["info"]) or any(
        PLANTED_OP in run["entries"] for run in data["runs"])
    # The compare's result files are the CLI's: compare_result_*.csv and divergence_*.json.
    names = [n for _, _, files in os.walk(bad / "compare") for n in files]
    assert any(n.startswith("compare_result_") and n.endswith(".csv") for n in names), names
    assert any(n.startswith("divergence_") for n in names), names
    divergence = next(os.path.join(d, n) for d, _, files in os.walk(bad / "compare")
                      for n in files if n.startswith("divergence_"))
    assert PLANTED_OP in open(divergence, encoding="utf-8").read()


def test_the_dump_sections_tensor_file_keys_reach_the_capture(tmp_path):
    # dump_layout "packed" in the dump section: both runs write one container per folder (no
    # per-tensor files) and the loop's compare reads them, naming the planted op.
    packed = {"dump": {"dump_layout": "packed", "tensor_durability": "file"}}
    good, bad = tmp_path / "good", tmp_path / "bad"
    run_explicit(tmp_path, write_config(tmp_path / "good.json", good, bad, extra=packed), 1e-5)
    proc = run_explicit(tmp_path, write_config(tmp_path / "bad.json", bad, good, extra=packed), 0.5)
    for root in (good, bad):
        data_dirs = [d for d, _, _ in os.walk(root) if d.endswith("dump_tensor_data")]
        assert data_dirs, f"{root} has no dump_tensor_data"
        for d in data_dirs:
            assert sorted(os.listdir(d)) == ["packed.data", "packed.index"], d
    assert re.search(r"First divergence \(step0/[a-z0-9]+\): " + re.escape(PLANTED_OP),
                     paragraph(proc.stdout)), proc.stdout


def test_the_first_nan_is_printed_at_its_step(tmp_path):
    good, bad = tmp_path / "good", tmp_path / "bad"
    config = write_config(tmp_path / "c.json", bad, good)
    proc = run_explicit(tmp_path, config, 1e-5, nan_at=2)  # step 2: checked, not dumped
    err = proc.stderr
    assert "first non-finite output in Torch.log.0.forward (step 2," in err, err
    assert "NaN" in err
    assert not (bad / "step2").exists()
    assert proc.stdout.count("non-finite") == 0  # the report goes to stderr, once
    assert err.count("first non-finite output") == 1


def test_config_check_compares_the_baselines_snapshot(tmp_path):
    good, bad = tmp_path / "good", tmp_path / "bad"
    run_explicit(tmp_path, write_config(tmp_path / "good.json", good, bad,
                                        base_config=bad / "config_snapshot.json"), 1e-5)
    assert (good / "config_snapshot.json").exists()
    proc = run_explicit(tmp_path, write_config(tmp_path / "bad.json", bad, good,
                                               base_config=good / "config_snapshot.json"), 0.5)
    assert "numprobe: config_check:" in proc.stdout
    # The weights differ (the same seed, but run 2 trained with another eps before stop()).
    assert "weights" in proc.stdout, proc.stdout
    results = os.listdir(bad / "config_check")
    assert any(n.startswith("config_check_") and n.endswith(".csv") for n in results), results


def test_numprobe_run_closes_the_loop_on_an_unmodified_script(tmp_path):
    binary = os.environ.get("NUMPROBE_BIN")
    if not binary:
        pytest.skip("NUMPROBE_BIN is not set (the CLI was not built)")
    script = tmp_path / "train.py"
    script.write_text(PLAIN_SCRIPT)
    good, bad = tmp_path / "gpu_dump", tmp_path / "ms_dump"
    e = env()
    e["NUMPROBE_PYTHON"] = sys.executable
    for dump, base, eps, config in ((good, bad, "1e-5", "good.json"), (bad, good, "0.5", "bad.json")):
        write_config(tmp_path / config, dump, base, extra={"dump": {"level": "L1"}})
        proc = subprocess.run([binary, "run", "--config", str(tmp_path / config), str(script), eps],
                              capture_output=True, text=True, env=e, cwd=tmp_path, timeout=600)
        assert proc.returncode == 0, proc.stderr
        assert "training done" in proc.stdout
    text = paragraph(proc.stdout)
    assert PLANTED_OP in text, text
    report = bad / "report.html"
    assert f"numprobe: report written to {report}" in proc.stdout
    data = embedded_data(report)
    assert any(PLANTED_OP in run["entries"] for run in data["runs"])
    # One report, at exit: no comparison after each optimizer step.
    assert proc.stdout.count("numprobe: compared") == 1


# --- the dialect's parsing, through the Python binding


def parse(config):
    return numprobe.DumpConfig.parse(json.dumps(config))


def test_dialect_maps_onto_the_capture_config():
    c = parse({"dump": {"dump_path": "d", "dump_step": "0|1|5-8", "dump_mode": "md5",
                        "dump_layers": ["conv1", "fc1", "MatMul"], "dump_input_output": 2},
               "overflow_check": {"enable": True, "check_step": "all"},
               "compare": {"enable": True, "base_path": "g"},
               "config_check": {"enable": False, "base_config": "s.json"}})
    assert c.closed_loop_dialect
    assert c.steps == [0, 1, 5, 6, 7, 8]
    assert c.task == "statistics" and c.summary_mode == "md5"
    assert c.list == ["conv1", "fc1", "MatMul"]
    assert (c.dump_input, c.dump_output) == (False, True)
    loop = c.loop
    assert loop["overflow_check"] and loop["check_steps"] == []
    assert loop["compare"] and loop["compare_base"] == "g"
    assert loop["metrics"] == ["cosine", "mae", "relative"]
    assert not loop["config_check"] and loop["config_base"] == "s.json"
    msprobe = parse({"task": "tensor", "dump_path": "d"})
    assert not msprobe.closed_loop_dialect and not msprobe.loop["compare"]


@pytest.mark.parametrize("config,phrase", [
    ({"dump": {"dump_path": "d", "dump_mode": "full"}},
     "config key 'dump.dump_mode': 'full' is not one of tensor, statistics, md5"),
    ({"dump": {"dump_path": "d", "dump_step": "1|a"}}, "config key 'dump.dump_step'"),
    ({"dump": {"dump_path": "d", "dump_input_output": 5}}, "'dump.dump_input_output': must be 0"),
    ({"dump": {"dump_path": "d", "dump_layer": ["fc1"]}},
     "'dump.dump_layer': unknown key (did you mean 'dump_layers'?)"),
    ({"dump": {"dump_path": "d"}, "compare": {"enable": True, "base_path": "g",
                                              "metrics": ["cosine", "maxabs"]}},
     "'compare.metrics': 'maxabs' is not a metric"),
    ({"dump": {"dump_path": "d"}, "compare": {"enable": True}}, "'compare.base_path': is required"),
    ({"dump": {"dump_path": "d"}, "config_check": {"enable": True, "base": "x"}},
     "'config_check.base': unknown key"),
    ({"dump": {"dump_path": "d"}, "overflow_check": {"enable": "true"}},
     "'overflow_check.enable': expected true or false"),
    ({"dump": {"dump_path": "d"}, "level": "L1"}, "'level': unknown key"),
])
def test_dialect_errors_name_the_key(config, phrase):
    with pytest.raises(numprobe.Error) as err:
        parse(config)
    assert phrase in str(err.value)


def test_numprobe_config_env_refuses_a_bad_dialect_config_before_training(tmp_path):
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"dump": {"dump_path": "d", "dump_mode": "tensors"}}))
    script = tmp_path / "t.py"
    script.write_text("from numprobe.pytorch import PrecisionDebugger\n"
                      f"PrecisionDebugger(config_path={str(config)!r})\n")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env())
    assert proc.returncode != 0
    assert "'dump.dump_mode': 'tensors' is not one of" in proc.stderr
