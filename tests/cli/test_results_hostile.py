"""Result files nested too deep to read (issue 17, point 1): `report` and `serve` on a results folder
whose scan_*.json is nested 300,000 deep or whose divergence_*.json is nested 400,000 deep, and
`diff A B --map` with a map nested 200,000 deep, crashed with SIGSEGV. They must refuse with exit
code 3 and one error line naming the file and the nesting, without a crash, a sanitizer report or
an output file. The hostile files are generated here (megabytes; not committed).

Environment (set by ctest): NUMPROBE_BIN, NUMPROBE_SOURCE_DIR.
"""
import os
import shutil
import subprocess

import numpy as np
import pytest

BIN = os.environ.get("NUMPROBE_BIN", "numprobe")
SOURCE = os.environ.get("NUMPROBE_SOURCE_DIR",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "msprobe")


def has_webui():
    return subprocess.run([BIN, "serve", "--help"], capture_output=True).returncode == 0


def nested(depth, leaf="1"):
    """A JSON array nested `depth` deep around `leaf`."""
    return "[" * depth + leaf + "]" * depth


def check_refused(args, named, tmp_path):
    r = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, errors="replace",
                       timeout=120, cwd=tmp_path)
    assert r.returncode == 3, (r.returncode, r.stderr[-2000:])
    assert "Sanitizer" not in r.stderr and "runtime error:" not in r.stderr, r.stderr[-2000:]
    errors = [l for l in r.stderr.splitlines() if l.startswith("numprobe: error")]
    assert len(errors) == 1, r.stderr[-2000:]
    assert "nested deeper than" in errors[0], errors[0]
    assert named in errors[0], errors[0]
    return r


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    out = tmp_path_factory.mktemp("compare")
    r = subprocess.run([BIN, "compare", "-tp", os.path.join(FIXTURES, "dump_statistics_bf16"),
                        "-gp", os.path.join(FIXTURES, "dump_statistics_base"), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stderr
    assert [f for f in os.listdir(out) if f.startswith("divergence_")]
    return out


def serve_args(folder):
    return ["serve", folder, "--port", "0"]


def report_args(folder, tmp_path):
    return ["report", folder, "-o", tmp_path / "report.html"]


@pytest.mark.skipif(not has_webui(), reason="numprobe built without the web UI")
@pytest.mark.parametrize("command", ["report", "serve"])
def test_divergence_nested_400000_deep_is_refused(compared, tmp_path, command):
    folder = tmp_path / "results"
    shutil.copytree(compared, folder)
    [divergence] = [f for f in os.listdir(folder) if f.startswith("divergence_")]
    (folder / divergence).write_text('{"numprobe_divergence": 1, "ranks": ' + nested(400000) +
                                     "}")
    args = report_args(folder, tmp_path) if command == "report" else serve_args(folder)
    check_refused(args, divergence, tmp_path)
    assert not (tmp_path / "report.html").exists()


@pytest.mark.skipif(not has_webui(), reason="numprobe built without the web UI")
@pytest.mark.parametrize("command", ["report", "serve"])
def test_scan_nested_300000_deep_is_refused(tmp_path, command):
    folder = tmp_path / "results"
    folder.mkdir()
    name = "scan_20260101000000.json"
    (folder / name).write_text('{"numprobe_scan": 1, "anomalies": ' + nested(300000) + "}")
    args = report_args(folder, tmp_path) if command == "report" else serve_args(folder)
    check_refused(args, name, tmp_path)
    assert not (tmp_path / "report.html").exists()


def test_diff_map_nested_200000_deep_is_refused(tmp_path):
    weights = {"w": np.arange(6, dtype=np.float32).reshape(2, 3)}
    np.savez(tmp_path / "a.npz", **weights)
    np.savez(tmp_path / "b.npz", **weights)
    (tmp_path / "map.json").write_text('{"w": ' + nested(200000, '"w"') + "}")
    out = tmp_path / "out"
    check_refused(["diff", tmp_path / "a.npz", tmp_path / "b.npz", "--map", tmp_path / "map.json",
                   "-o", out], "map.json", tmp_path)
    assert not out.exists() or not any(out.iterdir())
