"""Incremental dump against a baseline (config keys bench_path, diff_nums, stop_at_first;
docs/capture.md): the demo's training run (scripts/demo/train.py) with its planted bug (GELU's
tanh approximation) dumped against the baseline run's dump. Tensor files are written only where
the run leaves the golden, `numprobe compare` names the same first divergence as from two full
dumps, and stop_at_first ends the run there."""
import glob
import json
import os
import re
import subprocess
import sys

import pytest

SOURCE = os.environ.get("NUMPROBE_SOURCE_DIR") or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAIN = os.path.join(SOURCE, "scripts", "demo", "train.py")
PLANTED = "Functional.gelu.0.forward"  # train.py's PLANTED_OP
SMALL = ["--steps", "2", "--dim", "32", "--seq", "16", "--batch", "4"]


def train(out, variant, *extra, expect_rc=0):
    proc = subprocess.run([sys.executable, TRAIN, "--variant", variant, "--out", str(out),
                           "--task", "tensor", *SMALL, *extra],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == expect_rc, proc.stdout + proc.stderr
    return proc


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("incremental")
    train(out, "baseline")
    train(out, "target", "--dump-name", "target_full")
    inc = train(out, "target", "--dump-name", "target_inc", "--bench-path",
                str(out / "dumps" / "baseline"))
    return out, inc


def tensor_files(dump):
    return sorted(os.path.relpath(p, dump)
                  for p in glob.glob(os.path.join(dump, "step*", "*", "dump_tensor_data", "*")))


def first_divergences(target, golden, out):
    binary = os.environ.get("NUMPROBE_BIN")
    if not binary:
        pytest.fail("NUMPROBE_BIN must name the numprobe binary (ctest sets it)")
    proc = subprocess.run([binary, "compare", "-tp", str(target), "-gp", str(golden), "-o",
                           str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return re.findall(r"first divergence: (\S+)", proc.stdout), proc.stdout


def test_tensor_files_only_around_the_planted_op(runs):
    out, inc = runs
    dump = out / "dumps" / "target_inc"
    files = tensor_files(dump)
    # diff_nums 1: the planted op's output is the one entry over tolerance that gets files; its
    # input agrees with the golden, so it gets none.
    assert files, inc.stderr
    assert all(os.path.basename(f).startswith(PLANTED + ".output.") for f in files), files
    assert all(f.startswith("step0" + os.sep) for f in files), files
    with open(glob.glob(str(dump / "step0" / "*" / "dump.json"))[0]) as f:
        data = json.load(f)["data"]
    gelu = data[PLANTED]
    assert "data_name" in gelu["output"][0] and "data_name" not in gelu["input_args"][0]
    assert gelu["input_args"][0]["Max"] is not None  # the rest is recorded as statistics
    full_files = tensor_files(out / "dumps" / "target_full")
    assert len(full_files) > 20 * len(files)
    with open(glob.glob(str(dump / "step0" / "*" / "incremental.json"))[0]) as f:
        meta = json.load(f)
    assert meta["first_divergence"] == PLANTED
    assert meta["tensors_written"] == len([f for f in files if f.startswith("step0")])
    assert meta["bytes_not_written"] > 10 * meta["bytes_written"] > 0
    # stop() says it too, with the bytes not written.
    assert "not written" in inc.stderr and PLANTED in inc.stderr, inc.stderr


def test_compare_names_the_same_first_divergence_as_two_full_dumps(runs, tmp_path):
    out, _ = runs
    golden = out / "dumps" / "baseline"
    full, full_text = first_divergences(out / "dumps" / "target_full", golden, tmp_path / "full")
    inc, inc_text = first_divergences(out / "dumps" / "target_inc", golden, tmp_path / "inc")
    assert full and full[0] == PLANTED, full_text
    assert inc == full, inc_text + "\n---\n" + full_text


def test_stop_at_first_stops_the_run(runs, tmp_path):
    out, _ = runs
    proc = train(tmp_path, "target", "--steps", "3", "--bench-path",
                 str(out / "dumps" / "baseline"), "--stop-at-first", expect_rc=1)
    assert f"first divergence from bench_path: {PLANTED}" in proc.stderr, proc.stderr
    assert "stop_at_first" in proc.stderr
    # The loop did not go on: no later step, no record after the op, no end-of-run files.
    dump = tmp_path / "dumps" / "target"
    assert [os.path.basename(p) for p in glob.glob(str(dump / "step*"))] == ["step0"]
    with open(glob.glob(str(dump / "step0" / "*" / "dump.json"))[0]) as f:
        names = list(json.load(f)["data"])
    assert names[-1] == PLANTED, names[-5:]
    assert not (tmp_path / "runs" / "target.json").exists()
    with open(glob.glob(str(dump / "step0" / "*" / "incremental.json"))[0]) as f:
        assert json.load(f)["first_divergence"] == PLANTED


def test_identical_run_writes_no_tensor_files(runs, tmp_path):
    out, _ = runs
    train(tmp_path, "baseline", "--bench-path", str(out / "dumps" / "baseline"), "--diff-nums",
          "-1")
    dump = tmp_path / "dumps" / "baseline"
    assert tensor_files(dump) == []
    with open(glob.glob(str(dump / "step0" / "*" / "incremental.json"))[0]) as f:
        meta = json.load(f)
    assert meta["tensors_judged"] > 50 and meta["tensors_over_tolerance"] == 0
    assert meta["first_divergence"] is None


def test_bad_incremental_keys_fail_naming_the_key(tmp_path):
    import numprobe.pytorch  # noqa: F401  (the module must import)
    from numprobe import _numprobe
    for section, message in (({"bench_path": ""}, "bench_path"),
                             ({"bench_path": "x", "diff_nums": 0}, "diff_nums"),
                             ({"bench_path": "x", "stop_at_first": "yes"}, "stop_at_first")):
        text = json.dumps({"task": "tensor", "dump_path": str(tmp_path), "tensor": section})
        with pytest.raises(_numprobe.Error, match=message):
            _numprobe.DumpConfig.parse(text)
    text = json.dumps({"task": "overflow_check", "dump_path": str(tmp_path),
                       "overflow_check": {"bench_path": "x"}})
    with pytest.raises(_numprobe.Error):
        _numprobe.DumpConfig.parse(text)
