"""`numprobe serve` and `numprobe report` as a user runs them: serve prints a loopback URL, answers
the API, refuses traversal, stops cleanly on Ctrl-C (SIGINT) with exit code 0, and reports bad
input with exit codes 2/3; report writes one self-contained HTML page whose embedded data names
the first divergence.

Environment (set by ctest): NUMPROBE_BIN, NUMPROBE_SOURCE_DIR.
"""
import json
import os
import re
import socket
import subprocess
import sys

import pytest

from served import Served

BIN = os.environ.get("NUMPROBE_BIN", "numprobe")
SOURCE = os.environ.get("NUMPROBE_SOURCE_DIR",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "msprobe")
TARGET = os.path.join(FIXTURES, "dump_tensor_bf16", "step0")
GOLDEN = os.path.join(FIXTURES, "dump_tensor_base", "step0")


def webui_built():
    r = subprocess.run([BIN, "serve", "--help"], capture_output=True, text=True)
    return r.returncode == 0


pytestmark = pytest.mark.skipif(not webui_built(), reason="numprobe built without the web UI")


PLANTED_OP = "Functional.linear.0.forward"


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    """numprobe compare of a dump with a planted bug (tests/browser/make_planted.py) against the
    fixture it was made from."""
    planted = tmp_path_factory.mktemp("planted")
    maker = os.path.join(SOURCE, "tests", "browser", "make_planted.py")
    op = subprocess.run([sys.executable, maker, str(planted)], check=True, capture_output=True,
                        text=True).stdout.strip()
    assert op == PLANTED_OP
    out = tmp_path_factory.mktemp("compare")
    r = subprocess.run([BIN, "compare", "-tp", str(planted / "step0"), "-gp", GOLDEN, "-o",
                        str(out)], capture_output=True, text=True)
    assert r.returncode == 1, r.stderr  # 1: a divergence was found
    return out


def test_serve_prints_a_loopback_url_and_stops_on_ctrl_c(compared):
    s = Served(BIN, [compared])
    try:
        assert s.host == "127.0.0.1"
        assert "proc17038: tensor mode, 65 rows" in s.startup_output
        status, body = s.get("/api/info")
        assert status == 200
        info = json.loads(body)
        assert info["kind"] == "compare"
        assert info["runs"][0]["divergence_source"] == "analysis"
        assert info["runs"][0]["divergence"][0]["op"] == PLANTED_OP
        status, body = s.get("/")
        assert status == 200 and b'<div id="app">' in body
        for target in ["/../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/assets/..%2f..%2fetc%2fpasswd"]:
            status, body = s.get(target)
            assert status == 400, target
            assert b"root:" not in body
        status, _ = s.get("/api/info", host="attacker.example")
        assert status == 403
    finally:
        code, out, err = s.stop()
    assert code == 0, err
    assert "numprobe: stopped" in out


def test_serve_two_dump_trees_compares_them_on_the_fly():
    s = Served(BIN, [TARGET, GOLDEN])
    try:
        status, body = s.get("/api/info")
        info = json.loads(body)
        assert info["kind"] == "dumps"
        assert info["runs"][0]["mode"] == "tensor"
        assert info["runs"][0]["source"] == "compared on the fly"
        status, body = s.get("/api/tensor?run=0&row=10")
        assert status == 200
        assert json.loads(body)["target"]["dtype"] == "bf16"
    finally:
        code, _, err = s.stop()
    assert code == 0, err


def test_serve_reports_bad_input(tmp_path):
    r = subprocess.run([BIN, "serve", str(tmp_path / "missing"), "--port", "0"],
                       capture_output=True, text=True)
    assert r.returncode == 3
    assert "no such file or folder" in r.stderr
    r = subprocess.run([BIN, "serve", TARGET, GOLDEN, "--golden", GOLDEN, "--port", "0"],
                       capture_output=True, text=True)
    assert r.returncode == 2
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        r = subprocess.run([BIN, "serve", TARGET, GOLDEN, "--port", str(port)],
                           capture_output=True, text=True)
    assert r.returncode == 3
    assert "cannot listen" in r.stderr and r.stderr.count("\n") == 1


def test_report_is_one_self_contained_page(compared, tmp_path):
    out = tmp_path / "report.html"
    r = subprocess.run([BIN, "report", str(compared), "-o", str(out)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert "wrote" in r.stdout
    html = out.read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]+src=", html)
    assert not re.search(r"<link[^>]+stylesheet", html)
    m = re.search(r'<script type="application/json" id="numprobe-data">(.*?)</script>', html,
                  re.S)
    assert m
    assert "<" not in m.group(1)  # every '<' in the data is escaped
    data = json.loads(m.group(1))
    assert data["info"]["runs"][0]["divergence"][0]["op"] == PLANTED_OP
    rows = data["runs"][0]["rows"]
    assert len(rows) == 65
    # The culprit's tensor detail travels with the report.
    culprit = data["info"]["runs"][0]["divergence"][0]["rows"][0]
    assert rows[culprit["i"]][0] == PLANTED_OP + ".output.0"
    assert str(culprit["i"]) in data["runs"][0]["tensors"]
    r = subprocess.run([BIN, "report", str(compared)], capture_output=True, text=True)
    assert r.returncode == 2
    r = subprocess.run([BIN, "report", str(tmp_path / "missing"), "-o", str(tmp_path / "x.html")],
                       capture_output=True, text=True)
    assert r.returncode == 3
    assert not (tmp_path / "x.html").exists()


def embedded_data(path):
    html = path.read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="numprobe-data">(.*?)</script>', html,
                  re.S)
    assert m
    return json.loads(m.group(1))


def test_report_over_the_row_cap_embeds_a_sample_and_full_counts(compared, tmp_path):
    full_out = tmp_path / "full.html"
    r = subprocess.run([BIN, "report", str(compared), "-o", str(full_out)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert "showing" not in r.stdout  # 65 rows are under the default cap
    full = embedded_data(full_out)
    assert "row_index" not in full["runs"][0]
    full_rows = full["runs"][0]["rows"]
    assert len(full_rows) == 65

    out = tmp_path / "capped.html"
    r = subprocess.run([BIN, "report", str(compared), "-o", str(out), "--max-rows", "10",
                        "--tensor-rows", "2"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "showing 10 of 65 rows" in r.stdout
    assert f"open the full result with: numprobe serve {compared}" in r.stdout
    data = embedded_data(out)
    run = data["runs"][0]
    index = run["row_index"]
    assert len(index) == 10 and len(run["rows"]) == 10 and len(run["levels"]) == 10
    assert len(run["row_entry"]) == 10
    assert index == sorted(set(index)) and all(0 <= i < 65 for i in index)
    # Each embedded row is the full table's row it names.
    for k, i in enumerate(index):
        assert run["rows"][k] == full_rows[i]
        assert run["levels"][k] == full["runs"][0]["levels"][i]
    # Counts, totals and the model tree cover every row, not only the embedded ones.
    info = data["info"]["runs"][0]
    assert info["rows"] == 65
    assert info["counts"] == full["info"]["runs"][0]["counts"]
    assert run["tree"] == full["runs"][0]["tree"]
    assert data["full_result"] == str(compared)
    # Kept: the culprit's rows (with their tensor detail), the first row, and the worst row by
    # Cosine among the errors.
    culprit = info["divergence"][0]["rows"][0]["i"]
    assert culprit in index
    assert run["rows"][index.index(culprit)][0] == PLANTED_OP + ".output.0"
    assert set(run["tensors"]) <= {str(i) for i in index} and str(culprit) in run["tensors"]
    assert 0 in index
    cosine = full["info"]["runs"][0]["columns"].index("Cosine")
    levels = full["runs"][0]["levels"]
    errors = [i for i in range(65) if levels[i] == 3 and isinstance(full_rows[i][cosine], float)]
    assert errors
    assert min(errors, key=lambda i: (full_rows[i][cosine], i)) in index

    r = subprocess.run([BIN, "report", str(compared), "-o", str(tmp_path / "x.html"),
                        "--max-rows", "0"], capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert "--max-rows" in r.stderr
    assert not (tmp_path / "x.html").exists()
