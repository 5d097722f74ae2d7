"""`numprobe inspect --json` on the golden .safetensors files (tests/golden/gen_safetensors.py)
must report the tensors in file order with the dtype, shape, metadata and statistics that numpy
computed: floats within 1e-12 relative, counts exact, non-finite values and nulls identical.

Environment: NUMPROBE_BIN (the numprobe executable), NUMPROBE_GOLDEN_DIR (generated golden data).
"""
import json
import math
import os
import subprocess

import pytest

GOLDEN = os.path.join(os.environ.get("NUMPROBE_GOLDEN_DIR", ""), "safetensors")
REL_TOL = 1e-12
FLOAT_FIELDS = ["max", "min", "mean", "norm", "max_abs", "min_nonzero_abs"]
COUNT_FIELDS = ["count", "nan_count", "pos_inf_count", "neg_inf_count", "zero_count"]


def load_expected():
    with open(os.path.join(GOLDEN, "expected.json"), encoding="utf-8") as f:
        return json.load(f)


def inspect_json(path):
    r = subprocess.run([os.environ["NUMPROBE_BIN"], "inspect", "--json", path],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr}"
    return json.loads(r.stdout)


def as_float(v):
    """JSON number or the strings numprobe uses for non-finite values."""
    if isinstance(v, str):
        return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[v]
    return float(v)


def same_float(got, want):
    if want is None or got is None:
        return got is None and want is None
    g, w = as_float(got), as_float(want)
    if math.isnan(w) or math.isnan(g):
        return math.isnan(w) and math.isnan(g)
    if math.isinf(w) or math.isinf(g):
        return g == w
    return g == w or abs(g - w) <= REL_TOL * max(abs(g), abs(w))


def golden_files():
    try:
        return sorted(load_expected())
    except FileNotFoundError:
        return []  # reported by test_golden_data_present


def test_golden_data_present():
    assert len(golden_files()) >= 7, f"no golden safetensors data in {GOLDEN}"


@pytest.mark.parametrize("name", golden_files())
def test_inspect_matches_numpy(name):
    want = load_expected()[name]
    path = os.path.join(GOLDEN, name)
    out = inspect_json(path)
    assert out["numprobe_inspect"] == 1
    assert len(out["files"]) == 1
    got = out["files"][0]
    assert got["format"] == "safetensors"
    assert got["metadata"] == want["metadata"]
    got_names = [t["name"] for t in got["tensors"]]
    want_names = [t["name"] for t in want["tensors"]]
    assert got_names == want_names, "tensors must be listed in file (data-offset) order"
    problems = []
    for g, w in zip(got["tensors"], want["tensors"]):
        where = f"{name}: {w['name']}"
        if g["dtype"] != w["dtype"]:
            problems.append(f"{where}: dtype {g['dtype']} != {w['dtype']}")
        if g["shape"] != w["shape"]:
            problems.append(f"{where}: shape {g['shape']} != {w['shape']}")
        for field in COUNT_FIELDS:
            if g["stats"][field] != w["stats"][field]:
                problems.append(f"{where}: {field} {g['stats'][field]} != {w['stats'][field]}")
        for field in FLOAT_FIELDS:
            if not same_float(g["stats"][field], w["stats"][field]):
                problems.append(f"{where}: {field} {g['stats'][field]!r} != {w['stats'][field]!r}")
    assert not problems, "\n".join(problems)


def test_inspect_folder_lists_every_golden_file():
    expected = load_expected()
    out = inspect_json(GOLDEN)
    seen = {os.path.basename(f["path"]): f for f in out["files"] if f["format"] == "safetensors"}
    assert set(expected) <= set(seen)
    for name, want in expected.items():
        assert [t["name"] for t in seen[name]["tensors"]] == [t["name"] for t in want["tensors"]]
