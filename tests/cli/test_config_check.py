"""`numprobe config-check collect` and `compare` through the real binary: two runs whose
snapshots differ in exactly a seed, a library version and an environment variable must be
reported with exactly those three differences; secrets never reach the snapshot.

Environment (set by ctest): NUMPROBE_BIN.
"""
import glob
import hashlib
import json
import os
import stat
import subprocess
import zipfile

import pytest

PY = "/usr/bin/python3"

# An interpreter that answers like Debian's, except for numpy's version.
FAKE_PY = f"""#!{PY}
import json, subprocess, sys
r = subprocess.run([{PY!r}] + sys.argv[1:], capture_output=True, text=True)
doc = json.loads(r.stdout)
doc["packages"]["numpy"] = "9.9.9"
sys.stdout.write(json.dumps(doc))
"""


def numprobe(*args, env=None, expect=None):
    r = subprocess.run([os.environ["NUMPROBE_BIN"], *map(str, args)], capture_output=True,
                       text=True, timeout=300, env=env)
    assert "Sanitizer" not in r.stderr and "runtime error:" not in r.stderr, r.stderr
    if expect is not None:
        assert r.returncode == expect, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


def run_env(**extra):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/tmp", "LANG": "C.UTF-8"}
    env.update(extra)
    return env


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def findings(out_dir):
    report = load(glob.glob(os.path.join(str(out_dir), "config_check_*.json"))[0])
    return report, [i for i in report["items"] if i["level"] != "pass"]


@pytest.fixture()
def run_files(tmp_path):
    cfg = tmp_path / "train.yaml"
    cfg.write_text("optimizer:\n  lr: 1.0e-3\n  betas: [0.9, 0.999]\nepochs: 3\n", encoding="utf-8")
    data = tmp_path / "data"
    data.mkdir()
    (data / "shard0.bin").write_bytes(b"\x00\x01\x02" * 1000)
    fake = tmp_path / "fakepy"
    fake.write_text(FAKE_PY, encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return cfg, data, fake


def collect(out, cfg, data, python, seed, env):
    return numprobe("config-check", "collect", "-o", out, "--config", cfg, "--data", data,
                    "--python", python, "--", "python", "train.py", "--seed", seed,
                    "--batch-size", "32", env=env, expect=0)


def test_exactly_a_seed_a_library_and_a_variable(tmp_path, run_files):
    cfg, data, fake = run_files
    base = tmp_path / "base.json"
    run = tmp_path / "run.json"
    collect(base, cfg, data, PY, 1234, run_env(NCCL_ALGO="Ring"))
    collect(run, cfg, data, fake, 42, run_env(NCCL_ALGO="Tree"))
    out = tmp_path / "out"
    # The run to check first, the baseline second (as compare's -gp).
    r = numprobe("config-check", "compare", run, base, "-o", out, expect=1)
    report, diffs = findings(out)
    got = [(d["category"], d["name"], d["a"], d["b"], d["level"]) for d in diffs]
    import numpy
    # By kind: seeds and RNG, then the environment, then the packages.
    assert got == [("random", "seed", "42", "1234", "error"),
                   ("env", "NCCL_ALGO", "Tree", "Ring", "error"),
                   ("pip", "numpy", "9.9.9", numpy.__version__, "error")]
    assert report["summary"] == {"env": "error", "pip": "error", "dataset": "pass",
                                 "weights": "pass", "hyperparameters": "pass",
                                 "random": "error"}
    assert "Differences (3), A | B:" in r.stdout
    # Everything else was compared and passed: the data, the hyperparameters, the libraries.
    passed = {(i["category"], i["name"]) for i in report["items"] if i["level"] == "pass"}
    assert ("hyperparameters", "optimizer.lr") in passed
    assert ("hyperparameters", "batch_size") in passed
    assert ("dataset", "data1/shard0.bin") in passed
    assert ("pip", "torch") in passed and ("pip", "python") in passed


def test_identical_runs_compare_clean(tmp_path, run_files):
    cfg, data, _ = run_files
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    collect(a, cfg, data, PY, 7, run_env())
    collect(b, cfg, data, PY, 7, run_env())
    r = numprobe("config-check", "compare", a, b, "-o", tmp_path / "out", "--xlsx", expect=0)
    assert "No differences." in r.stdout
    xlsx = glob.glob(os.path.join(str(tmp_path / "out"), "config_check_*.xlsx"))
    assert len(xlsx) == 1
    with zipfile.ZipFile(xlsx[0]) as z:
        names = z.namelist()
        assert "xl/worksheets/sheet1.xml" in names and "xl/worksheets/sheet7.xml" in names
        assert b"pass_check" in z.read("xl/sharedStrings.xml")


def test_snapshot_contents_and_secrets(tmp_path, run_files):
    cfg, data, _ = run_files
    out = tmp_path / "s.json"
    env = run_env(WANDB_API_KEY="supersecret-123", PYTHONHASHSEED="0",
                  PIP_INDEX_URL="https://bob:hunter2@pypi.example/simple")
    numprobe("config-check", "collect", "-o", out, "--config", cfg, "--data", data,
             "--set", "random.torch.are_deterministic_algorithms_enabled=True",
             "--", "python", "train.py", "--password", "hunter2", "--lr", "0.1", env=env,
             expect=0)
    text = out.read_text(encoding="utf-8")
    assert "supersecret" not in text and "hunter2" not in text
    snap = json.loads(text)
    assert snap["numprobe_config_snapshot"] == 1
    key_hash = hashlib.sha256(b"supersecret-123").hexdigest()[:8]
    assert snap["env"]["WANDB_API_KEY"] == f"<masked sha256:{key_hash}>"
    pw_hash = hashlib.sha256(b"hunter2").hexdigest()[:8]
    assert snap["env"]["PIP_INDEX_URL"] == \
        f"https://bob:<masked sha256:{pw_hash}>@pypi.example/simple"
    assert snap["command"] == ["python", "train.py", "--password", f"<masked sha256:{pw_hash}>",
                               "--lr", "0.1"]
    assert snap["hyperparameters"]["password"] == f"<masked sha256:{pw_hash}>"
    assert snap["random"]["PYTHONHASHSEED"] == "0"
    assert snap["random"]["torch.are_deterministic_algorithms_enabled"] == "True"
    assert snap["hyperparameters"]["optimizer.lr"] == "0.001"
    assert snap["hyperparameters"]["optimizer.betas"] == "[0.9, 0.999]"
    assert snap["hyperparameters"]["lr"] == "0.1"
    digest = hashlib.sha256((data / "shard0.bin").read_bytes()).hexdigest()
    assert snap["dataset"]["data1/shard0.bin"] == f"sha256:{digest} size:3000"
    import numpy
    import torch
    assert snap["pip"]["numpy"] == numpy.__version__
    assert snap["pip"]["torch.version.cuda"] == str(torch.version.cuda)
    assert "deepspeed" in snap["pip"]  # key libraries are always recorded, installed or not


def test_usage_and_bad_input(tmp_path):
    numprobe("config-check", "collect", "-o", tmp_path / "s.json", "--no-python", "--set",
             "bogus", expect=2)
    numprobe("config-check", "collect", "-o", tmp_path / "s.json", "--no-python", "--config",
             tmp_path / "missing.yaml", expect=3)
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1, 2\n", encoding="utf-8")
    r = numprobe("config-check", "collect", "-o", tmp_path / "s.json", "--no-python", "--config",
                 bad, expect=3)
    assert "bad.yaml" in r.stderr and "malformed YAML" in r.stderr
    not_snapshot = tmp_path / "x.json"
    not_snapshot.write_text('{"env": {}}', encoding="utf-8")
    r = numprobe("config-check", "compare", not_snapshot, not_snapshot, "-o", tmp_path, expect=3)
    assert "not a numprobe config snapshot" in r.stderr
    numprobe("config-check", expect=2)


def weight_file(path, scale):
    """A small .npz of named weights (numpy writes it; numprobe reads it as weights)."""
    import numpy as np
    rng = np.random.default_rng(0)
    tensors = {f"layer{i}.weight": rng.standard_normal((4, 4)).astype(np.float32)
               for i in range(5)}
    tensors["layer0.weight"] = tensors["layer0.weight"] * scale
    np.savez(path, **tensors)


def test_weight_items_are_named_by_role_not_by_file_name(tmp_path):
    """--weights w_A.npz in one run and --weights w_B.npz in the other compare tensor by tensor."""
    weight_file(tmp_path / "w_A.npz", 1.0)
    weight_file(tmp_path / "w_B.npz", 2.0)
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    numprobe("config-check", "collect", "-o", a, "--no-python", "--weights", tmp_path / "w_A.npz",
             expect=0)
    numprobe("config-check", "collect", "-o", b, "--no-python", "--weights", tmp_path / "w_B.npz",
             expect=0)
    out = tmp_path / "out"
    numprobe("config-check", "compare", a, b, "-o", out, expect=1)
    report, diffs = findings(out)
    weights = [i for i in report["items"] if i["category"] == "weights"]
    assert len(weights) == 6  # the file and its 5 tensors, each on both sides
    assert all(i["a"] is not None and i["b"] is not None for i in weights)
    assert [(d["name"], d["level"]) for d in diffs] == \
        [("weights1", "error"), ("weights1:layer0.weight", "error")]
    # A label names the role explicitly (and survives a different position).
    numprobe("config-check", "collect", "-o", a, "--no-python", "--weights",
             f"init={tmp_path / 'w_A.npz'}", expect=0)
    snap = load(a)
    assert sorted(snap["weights"]) == ["init"] + [f"init:layer{i}.weight" for i in range(5)]


def test_findings_are_ordered_by_kind_with_a_summary_line_per_kind(tmp_path):
    """The actionable difference (lr) comes before the weight rows, after one line per kind."""
    weight_file(tmp_path / "w_A.npz", 1.0)
    weight_file(tmp_path / "w_B.npz", 2.0)
    for name, lr, seed, weights, algo in (("run", "0.002", "1", "w_B.npz", "Tree"),
                                         ("base", "0.001", "2", "w_A.npz", "Ring")):
        numprobe("config-check", "collect", "-o", tmp_path / f"{name}.json", "--no-python",
                 "--weights", tmp_path / weights, "--set", f"hyperparameters.lr={lr}",
                 "--set", f"random.seed={seed}", env=run_env(NCCL_ALGO=algo), expect=0)
    r = numprobe("config-check", "compare", tmp_path / "run.json", tmp_path / "base.json",
                 "-o", tmp_path / "out", expect=1)
    lines = r.stdout.splitlines()
    kinds = ["hyperparameters", "random", "env", "pip", "dataset", "weights"]
    # A summary line per kind, in this order, before any finding.
    summary = [line.split()[0] for line in lines[1:7]]
    assert summary == kinds, r.stdout
    start = lines.index(next(line for line in lines if line.startswith("Differences (")))
    assert start == 7
    rows = [line.split()[1] for line in lines[start + 1:] if line.startswith("  ")]
    assert rows[0] == "hyperparameters" and "lr: 0.002 | 0.001" in lines[start + 1]
    assert rows == sorted(rows, key=kinds.index)
    assert rows[-1] == "weights" and rows.count("weights") == 2
    # The files list the items in the same order.
    report, diffs = findings(tmp_path / "out")
    assert [d["category"] for d in diffs] == rows
    assert list(report["summary"]) == kinds
