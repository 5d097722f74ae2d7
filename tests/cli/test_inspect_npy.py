"""`numprobe inspect --json` on the numpy golden set (tests/golden/gen_npy.py) must agree with
numpy's own statistics in expected.json: floats to 1e-12 relative (0 exactly), counts, dtype and
shape exactly. Each file is inspected alone, then the whole folder at once.

Environment (set by ctest): NUMPROBE_BIN, NUMPROBE_GOLDEN_DIR.
"""
import json
import math
import os
import subprocess

import pytest

GOLDEN = os.path.join(os.environ.get("NUMPROBE_GOLDEN_DIR", ""), "npy")
EXPECTED_PATH = os.path.join(GOLDEN, "expected.json")
with open(EXPECTED_PATH, encoding="utf-8") as f:
    EXPECTED = json.load(f)["files"]

FLOAT_KEYS = ("max", "min", "mean", "norm", "max_abs", "min_nonzero_abs")
COUNT_KEYS = ("count", "nan_count", "pos_inf_count", "neg_inf_count", "zero_count")


def run_inspect(path):
    binary = os.environ["NUMPROBE_BIN"]
    r = subprocess.run([binary, "inspect", "--json", path], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr}"
    assert "Sanitizer" not in r.stderr and "runtime error:" not in r.stderr, r.stderr
    doc = json.loads(r.stdout)
    assert doc["numprobe_inspect"] == 1
    return doc, r.stderr


def same_float(got, want):
    if want is None or isinstance(want, str):
        return got == want  # null, "NaN", "Infinity", "-Infinity"
    if not isinstance(got, (int, float)) or isinstance(got, bool):
        return False
    if want == 0:
        return got == 0
    return math.isclose(got, want, rel_tol=1e-12, abs_tol=0.0)


def check_file(name, got):
    want = EXPECTED[name]
    problems = []
    if got["format"] != want["format"]:
        problems.append(f"format {got['format']}, want {want['format']}")
    if len(got["tensors"]) != len(want["tensors"]):
        return problems + [f"{len(got['tensors'])} tensors, want {len(want['tensors'])}"]
    for g, w in zip(got["tensors"], want["tensors"]):
        where = f"{name}:{w['name']!r}"
        if g["name"] != w["name"]:
            problems.append(f"{where}: name {g['name']!r}")
        if g["dtype"] != w["dtype"]:
            problems.append(f"{where}: dtype {g['dtype']}, want {w['dtype']}")
        if g["shape"] != w["shape"]:
            problems.append(f"{where}: shape {g['shape']}, want {w['shape']}")
        s = g["stats"]
        for key in COUNT_KEYS:
            if s[key] != w[key]:
                problems.append(f"{where}: {key} {s[key]}, want {w[key]}")
        for key in FLOAT_KEYS:
            if not same_float(s[key], w[key]):
                problems.append(f"{where}: {key} {s[key]!r}, want {w[key]!r}")
    if name.startswith("bf16"):
        if not any("read as bfloat16" in x for x in got["warnings"]):
            problems.append(f"{name}: no bfloat16 warning in {got['warnings']}")
    return problems


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_inspect_file(name):
    doc, _ = run_inspect(os.path.join(GOLDEN, name))
    assert len(doc["files"]) == 1
    problems = check_file(name, doc["files"][0])
    assert not problems, "\n".join(problems)


def test_inspect_folder():
    doc, _ = run_inspect(GOLDEN)
    by_name = {os.path.basename(f["path"]): f for f in doc["files"]}
    assert sorted(by_name) == sorted(EXPECTED), "folder mode read a different set of files"
    problems = []
    for name in sorted(EXPECTED):
        problems += check_file(name, by_name[name])
    assert not problems, "\n".join(problems)
