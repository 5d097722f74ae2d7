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
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    collect(a, cfg, data, PY, 1234, run_env(NCCL_ALGO="Ring"))
    collect(b, cfg, data, fake, 42, run_env(NCCL_ALGO="Tree"))
    out = tmp_path / "out"
    r = numprobe("config-check", "compare", a, b, "-o", out, expect=1)
    report, diffs = findings(out)
    got = sorted((d["category"], d["name"], d["a"], d["b"], d["level"]) for d in diffs)
    import numpy
    assert got == [("env", "NCCL_ALGO", "Ring", "Tree", "error"),
                   ("pip", "numpy", numpy.__version__, "9.9.9", "error"),
                   ("random", "seed", "1234", "42", "error")]
    assert report["summary"] == {"env": "error", "pip": "error", "dataset": "pass",
                                 "weights": "pass", "hyperparameters": "pass",
                                 "random": "error"}
    assert "Differences (3):" in r.stdout
    # Everything else was compared and passed: the data, the hyperparameters, the libraries.
    passed = {(i["category"], i["name"]) for i in report["items"] if i["level"] == "pass"}
    assert ("hyperparameters", "optimizer.lr") in passed
    assert ("hyperparameters", "batch_size") in passed
    assert ("dataset", "data/shard0.bin") in passed
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
    assert snap["dataset"]["data/shard0.bin"] == f"sha256:{digest} size:3000"
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
