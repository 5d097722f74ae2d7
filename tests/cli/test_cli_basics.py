"""The command line's contract: help on every subcommand, exit codes 0/2/3, one-line errors."""
import json
import os

import numpy as np


def test_help_lists_inspect(run):
    r = run("--help")
    assert r.returncode == 0
    assert "inspect" in r.stdout


def test_inspect_help(run):
    r = run("inspect", "--help")
    assert r.returncode == 0
    assert "--json" in r.stdout


def test_no_subcommand_is_usage_error(run):
    r = run()
    assert r.returncode == 2


def test_unknown_option_is_usage_error(run):
    r = run("inspect", "--no-such-flag", "x")
    assert r.returncode == 2


def test_missing_file_exit_3_one_line(run, tmp_path):
    r = run("inspect", tmp_path / "absent.npy")
    assert r.returncode == 3
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("numprobe: error:")
    assert "absent.npy" in lines[0]


def test_unknown_format_exit_3(run, tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("hello, not a tensor file\n")
    r = run("inspect", p)
    assert r.returncode == 3
    assert "unrecognised file format" in r.stderr


def test_inspect_text_and_json_agree(run, tmp_path):
    arr = np.array([[1.0, -2.0, 0.0], [np.nan, np.inf, 3.5]], dtype=np.float32)
    np.save(tmp_path / "a.npy", arr)
    text = run("inspect", tmp_path / "a.npy")
    assert text.returncode == 0, text.stderr
    assert "f32" in text.stdout and "[2, 3]" in text.stdout
    js = run("inspect", "--json", tmp_path / "a.npy")
    assert js.returncode == 0, js.stderr
    doc = json.loads(js.stdout)
    t = doc["files"][0]["tensors"][0]
    assert t["dtype"] == "f32" and t["shape"] == [2, 3]
    s = t["stats"]
    assert s["max"] == "NaN" and s["min"] == "NaN"  # NaN propagates like torch.max
    assert s["nan_count"] == 1 and s["pos_inf_count"] == 1 and s["zero_count"] == 1
    assert s["max_abs"] == "Infinity"
    assert s["min_nonzero_abs"] == 1.0


def test_folder_is_walked_recursively_and_sorted(run, tmp_path):
    (tmp_path / "sub").mkdir()
    np.save(tmp_path / "sub" / "b.npy", np.arange(3, dtype=np.int32))
    np.save(tmp_path / "a.npy", np.ones(2, dtype=np.float64))
    (tmp_path / "README.txt").write_text("not a tensor")
    r = run("inspect", "--json", tmp_path)
    assert r.returncode == 0, r.stderr
    paths = [os.path.relpath(f["path"], tmp_path) for f in json.loads(r.stdout)["files"]]
    assert paths == ["a.npy", os.path.join("sub", "b.npy")]


def test_folder_with_a_bad_file_fails_with_3(run, tmp_path):
    np.save(tmp_path / "good.npy", np.ones(2, dtype=np.float32))
    (tmp_path / "bad.npy").write_bytes(b"\x93NUMPY\x01\x00\xff\xff")
    r = run("inspect", tmp_path)
    assert r.returncode == 3
    assert "bad.npy" in r.stderr
    assert r.stdout == ""
