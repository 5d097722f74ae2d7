"""Fidelity: the fixture scenario run with numprobe writes the dumps msprobe wrote, entry for
entry (names, order, nesting, dtypes, shapes, statistics, tensor file names and contents)."""
import glob
import json
import math
import os
import subprocess
import sys

import pytest
import torch

import dumpdiff

SOURCE = os.environ.get("NUMPROBE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "msprobe")

# One fp32 ulp of the largest |element|: the accuracy torch's own float32 mean has. Means that are
# sums cancelling to ~0 (gradients of a softmax, ~1e-10) depend on torch's summation order there;
# numprobe sums in double, so these may differ by less than this bound (and are listed below).
_EPS = {"torch.float32": 2.0**-23, "torch.bfloat16": 2.0**-7, "torch.float16": 2.0**-10}


def _run(tmp_path, task, variant):
    with open(os.path.join(FIXTURES, f"config_{task}_{variant}.json")) as f:
        config = json.load(f)
    config["dump_path"] = str(tmp_path / "dump")
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(config))
    subprocess.run([sys.executable, os.path.join(FIXTURES, "scenario.py"), "--variant", variant,
                    "--config", str(cfg)], check=True, cwd=tmp_path, timeout=300)
    (rank_dir,) = glob.glob(str(tmp_path / "dump" / "step0" / "*"))
    (want_dir,) = glob.glob(os.path.join(FIXTURES, f"dump_{task}_{variant}", "step0", "*"))
    return rank_dir, want_dir


def _mean_within_dtype_accuracy(line, got, want):
    """True for a Mean difference inside the dtype's rounding bound (see _EPS)."""
    path = line.split(":")[0]
    if not path.endswith(".Mean"):
        return False
    parts = path.split(".")
    node_g, node_w = got["data"], want["data"]
    # entry names contain dots: find the longest prefix that is an entry
    for i in range(len(parts), 0, -1):
        name = ".".join(parts[:i])
        if name in node_w:
            node_g, node_w = node_g[name], node_w[name]
            rest = parts[i:-1]
            break
    else:
        return False
    for key in rest:
        key = int(key) if isinstance(node_w, list) else key
        node_g, node_w = node_g[key], node_w[key]
    bound = _EPS[node_w["dtype"]] * max(abs(node_w["Max"]), abs(node_w["Min"]))
    return abs(node_g["Mean"] - node_w["Mean"]) <= bound


@pytest.mark.parametrize("task", ["statistics", "tensor"])
@pytest.mark.parametrize("variant", ["base", "bf16"])
def test_scenario_matches_msprobe_fixture(tmp_path, task, variant):
    rank_dir, want_dir = _run(tmp_path, task, variant)
    got_path, want_path = os.path.join(rank_dir, "dump.json"), os.path.join(want_dir, "dump.json")
    with open(got_path) as f:
        got = json.load(f)
    with open(want_path) as f:
        want = json.load(f)
    diffs = dumpdiff.compare_dumps(got_path, want_path, rtol=1e-6)
    tolerated = [d for d in diffs if _mean_within_dtype_accuracy(d, got, want)]
    remaining = [d for d in diffs if d not in tolerated]
    assert not remaining, "\n".join(remaining)
    # Which entries differ beyond 1e-6 (all cancelling fp32 means, inside fp32 accuracy):
    if variant == "base":
        assert len(tolerated) == 7, tolerated
    else:
        assert tolerated == []
    # construct.json is msprobe's, key for key and parent for parent.
    with open(os.path.join(rank_dir, "construct.json")) as f:
        construct = json.load(f)
    with open(os.path.join(want_dir, "construct.json")) as f:
        assert construct == json.load(f)
    with open(os.path.join(rank_dir, "stack.json")) as f:
        stack = json.load(f)
    with open(os.path.join(want_dir, "stack.json")) as f:
        want_stack = json.load(f)
    # Grouping depends on the source lines (the fixture's model file differs from scenario.py);
    # which entries have a stack does not.
    assert sorted(n for v in stack.values() for n in v[0]) == sorted(
        n for v in want_stack.values() for n in v[0])
    if task == "tensor":
        files = sorted(os.listdir(os.path.join(rank_dir, "dump_tensor_data")))
        assert files == sorted(os.listdir(os.path.join(want_dir, "dump_tensor_data")))
        _check_tensor_files(got, rank_dir)


def _check_tensor_files(dump, rank_dir):
    def leaves(v):
        if isinstance(v, dict) and "data_name" in v:
            yield v
        elif isinstance(v, dict):
            for x in v.values():
                yield from leaves(x)
        elif isinstance(v, list):
            for x in v:
                yield from leaves(x)

    count = 0
    for leaf in leaves(dump["data"]):
        t = torch.load(os.path.join(rank_dir, "dump_tensor_data", leaf["data_name"]))
        assert str(t.dtype) == leaf["dtype"] and list(t.shape) == leaf["shape"]
        if t.numel() and t.dtype.is_floating_point:
            assert t.max().item() == leaf["Max"] and t.min().item() == leaf["Min"]
            assert math.isclose(t.float().norm().item(), leaf["Norm"], rel_tol=1e-2)
        count += 1
    assert count == 52
