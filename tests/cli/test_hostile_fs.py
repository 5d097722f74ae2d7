"""Hostile dump trees built at test time by tests/hostile/make_hostile_fs.py (a FIFO, symbolic
links that leave the dump, a construct.json nested 400,000 deep), and compare --xlsx on a full
file system. Issue 17, points 2, 3 and 9:

- a FIFO where a data file is expected is refused at once ("not a regular file"): inspect exits
  3, compare leaves the row uncompared with a warning, serve loads and stops on SIGTERM;
- a data file that resolves outside its dump folder is read by nobody: compare leaves the row
  uncompared, serve's /api/tensor reports the refusal and no statistics;
- report refuses a construct.json nested too deeply (exit 3), as compare and scan do;
- compare --xlsx on a full disk prints numprobe's one error line, not libxlsxwriter's own.

Every run has a timeout, so a hang fails the test instead of stalling CI.
Environment (set by ctest): NUMPROBE_BIN, NUMPROBE_SOURCE_DIR.
"""
import csv
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import urllib.parse

import pytest

from served import Served

BIN = os.environ.get("NUMPROBE_BIN", "numprobe")
SOURCE = os.environ.get("NUMPROBE_SOURCE_DIR",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
VICTIM_ROW = "Functional.conv2d.0.forward.output.0"
STATISTICS = os.path.join(SOURCE, "tests", "fixtures", "msprobe")


def load_maker():
    spec = importlib.util.spec_from_file_location(
        "make_hostile_fs", os.path.join(SOURCE, "tests", "hostile", "make_hostile_fs.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    dest = tmp_path_factory.mktemp("hostile_fs")
    load_maker().make_all(str(dest))
    return dest


def run(*args, timeout=60):
    try:
        return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True,
                              errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"numprobe {' '.join(map(str, args))} hung (no answer in {timeout} s)")


def error_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("numprobe: error")]


def webui_built():
    return subprocess.run([BIN, "serve", "--help"], capture_output=True).returncode == 0


def test_inspect_refuses_a_fifo(hostile):
    r = run("inspect", hostile / "fifo_file" / "some_fifo.pt")
    assert r.returncode == 3, r.stderr
    assert r.stdout == ""
    assert len(error_lines(r.stderr)) == 1, r.stderr
    assert "not a regular file" in r.stderr


def victim_row(out_dir):
    (path,) = [p for p in out_dir.rglob("compare_result_*.csv")]
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    (row,) = [r for r in rows if r["NPU Name"] == VICTIM_ROW]
    return row


@pytest.mark.parametrize("case,phrase", [("fifo_data", "not a regular file"),
                                         ("symlink_out", "outside the dump folder")])
def test_compare_does_not_read_the_file(hostile, tmp_path, case, phrase):
    out = tmp_path / "out"
    r = run("compare", "-tp", hostile / case / "target", "-gp", hostile / case / "golden",
            "-o", out)
    assert r.returncode in (0, 1), r.stderr  # a finished compare (1: it found a divergence)
    assert phrase in r.stderr, r.stderr
    row = victim_row(out)
    # Nothing was read for the row: no metric, msprobe's "unsupported" cells.
    assert row["Cosine"] == "unsupported", row
    assert row["MaxAbsErr"] == "unsupported", row


def tensor_of_victim(served):
    status, body = served.get("/api/rows?run=0&limit=1000&q=" +
                              urllib.parse.quote(VICTIM_ROW))
    assert status == 200, body
    rows = json.loads(body)
    ids = [r["i"] for r in rows["rows"] if f'"{VICTIM_ROW}"' in json.dumps(r["c"])]
    assert ids, rows
    status, body = served.get(f"/api/tensor?run=0&row={ids[0]}")
    assert status == 200, body
    return json.loads(body)


@pytest.mark.skipif(not webui_built(), reason="numprobe built without the web UI")
@pytest.mark.parametrize("case,phrase", [("fifo_data", "not a regular file"),
                                         ("symlink_out", "outside the dump folder")])
def test_serve_loads_and_does_not_read_the_file(hostile, case, phrase):
    served = Served(BIN, [hostile / case / "target", hostile / case / "golden"])
    try:
        detail = tensor_of_victim(served)
        assert phrase in detail["target"]["error"], detail["target"]
        assert detail["target"]["histogram"] == [], detail["target"]
    finally:
        code, _, err = served.stop(signal.SIGTERM)
    assert code == 0, err


def test_report_refuses_a_deeply_nested_construct_json(hostile, tmp_path):
    out = tmp_path / "report.html"
    r = run("report", hostile / "deep_construct" / "dump", "-o", out)
    assert r.returncode == 3, r.stderr
    assert len(error_lines(r.stderr)) == 1, r.stderr
    assert "construct.json" in r.stderr and "nested deeper than" in r.stderr, r.stderr
    assert not out.exists()


def can_mount_tmpfs(tmp_path):
    probe = tmp_path / "probe"
    probe.mkdir()
    if shutil.which("unshare") is None:
        return False
    r = subprocess.run(["unshare", "-rm", "sh", "-c", 'mount -t tmpfs -o size=8k tmpfs "$1"',
                        "sh", str(probe)], capture_output=True)
    return r.returncode == 0


def test_compare_xlsx_on_a_full_disk_prints_one_error(tmp_path):
    """A tmpfs filled to the last byte, in a private mount namespace (no root needed)."""
    if not can_mount_tmpfs(tmp_path):
        pytest.skip("cannot mount a tmpfs in a user namespace here (unshare -rm)")
    disk = tmp_path / "disk"
    disk.mkdir()
    target = os.path.join(STATISTICS, "dump_statistics_bf16", "step0")
    golden = os.path.join(STATISTICS, "dump_statistics_base", "step0")
    script = ('mount -t tmpfs -o size=64k tmpfs "$1" && '
              '(head -c 1048576 /dev/zero > "$1/fill" 2>/dev/null; true) && '
              'shift && exec "$@"')
    r = subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", str(disk), BIN, "compare",
                        "-tp", target, "-gp", golden, "--xlsx", "-o", str(disk / "out")],
                       capture_output=True, text=True, errors="replace", timeout=120)
    assert r.returncode == 3, r.stderr
    assert "[ERROR]" not in r.stderr, r.stderr
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("numprobe: error"), r.stderr
    assert ".xlsx" in lines[0], lines[0]
