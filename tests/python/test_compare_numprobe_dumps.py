"""msprobe-format consumers read numprobe's dumps: `numprobe compare` on the scenario dumped by
numprobe (bf16 against base) gives the rows, results and statistics of msprobe's own compare of
msprobe's dumps (the fixture CSV)."""
import csv
import glob
import json
import os
import subprocess
import sys

import pytest

SOURCE = os.environ.get("NUMPROBE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "msprobe")


def _dump(tmp_path, variant):
    with open(os.path.join(FIXTURES, f"config_statistics_{variant}.json")) as f:
        config = json.load(f)
    config["dump_path"] = str(tmp_path / variant)
    cfg = tmp_path / f"config_{variant}.json"
    cfg.write_text(json.dumps(config))
    subprocess.run([sys.executable, os.path.join(FIXTURES, "scenario.py"), "--variant", variant,
                    "--config", str(cfg)], check=True, cwd=tmp_path, timeout=300)
    return str(tmp_path / variant / "step0")


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return text not in ("nan", "inf", "-inf")


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_numprobe_compare_of_numprobe_dumps_matches_msprobe_compare(tmp_path):
    binary = os.environ.get("NUMPROBE_BIN")
    if not binary or not os.path.exists(binary):
        pytest.skip("numprobe binary not built")
    target, golden = _dump(tmp_path, "bf16"), _dump(tmp_path, "base")
    proc = subprocess.run([binary, "compare", "-tp", target, "-gp", golden, "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    (got_csv,) = glob.glob(str(tmp_path / "out" / "compare_result_*.csv"))
    (want_csv,) = glob.glob(os.path.join(FIXTURES, "compare_statistics", "*.csv"))
    got, want = _rows(got_csv), _rows(want_csv)
    assert [r["NPU Name"] for r in got] == [r["NPU Name"] for r in want]
    for g, w in zip(got, want):
        for col in ("Bench Name", "NPU Dtype", "Bench Dtype", "NPU Tensor Shape",
                    "Bench Tensor Shape", "Result"):
            assert g[col] == w[col], (g["NPU Name"], col, g[col], w[col])
        for col in ("NPU max", "NPU min", "NPU l2norm", "Bench max", "Bench min", "Bench l2norm"):
            if not _is_number(w[col]):
                assert g[col] == w[col], (g["NPU Name"], col)
            else:
                assert abs(float(g[col]) - float(w[col])) <= 1e-6 * abs(float(w[col])), (g["NPU Name"], col)
        for col in ("NPU mean", "Bench mean"):
            if not _is_number(w[col]):
                assert g[col] == w[col], (g["NPU Name"], col)
            else:
                # 1e-6 relative, or below fp32 accuracy for the means of cancelling fp32
                # gradients (~1e-10; see test_fidelity.py).
                diff = abs(float(g[col]) - float(w[col]))
                assert diff <= 1e-6 * abs(float(w[col])) or diff <= 1e-8, (g["NPU Name"], col)
