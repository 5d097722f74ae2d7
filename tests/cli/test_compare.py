"""`numprobe compare` against msprobe's own output on the fixtures (tests/fixtures/msprobe/):
the CSV numprobe writes must have msprobe's rows in msprobe's order, identical text columns,
every metric equal to 1e-6 relative (tokens exactly) and the same Result; its JSON twin must hold
the same table. Also the command's exit codes and output file names.

Environment (set by ctest): NUMPROBE_BIN, NUMPROBE_SOURCE_DIR.
"""
import csv
import glob
import json
import math
import os
import subprocess

import pytest

SOURCE = os.environ.get("NUMPROBE_SOURCE_DIR",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "msprobe")

STATS_METRICS = {"Max diff", "Min diff", "Mean diff", "L2norm diff", "MaxRelativeErr",
                 "MinRelativeErr", "MeanRelativeErr", "NormRelativeErr"}
TENSOR_METRICS = {"Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr", "One Thousandth Err Ratio",
                  "Five Thousandths Err Ratio"}


def run_compare(*args, cwd=None):
    r = subprocess.run([os.environ["NUMPROBE_BIN"], "compare", *args], capture_output=True,
                       text=True, errors="replace", timeout=600, cwd=cwd)
    assert "Sanitizer" not in r.stderr and "runtime error:" not in r.stderr, r.stderr
    return r


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def metric(text):
    """(number, is_percent) for a numeric cell, None for a token."""
    percent = text.endswith("%")
    body = text[:-1] if percent else text
    if body.strip().lower() in ("nan", "inf", "-inf", ""):
        return None
    try:
        return float(body), percent
    except ValueError:
        return None


def assert_same_table(ours, theirs, metric_columns):
    header = theirs[0]
    assert ours[0][:len(header)] == header
    assert len(ours) == len(theirs), "row count"
    problems = []
    for a_row, b_row in zip(ours[1:], theirs[1:]):
        name = b_row[0]
        for col, a, b in zip(header, a_row, b_row):
            if col not in metric_columns:
                if a != b:
                    problems.append(f"{name} / {col}: {a!r} != {b!r}")
                continue
            ma, mb = metric(a), metric(b)
            if ma is None or mb is None:
                if a != b:
                    problems.append(f"{name} / {col}: token {a!r} != {b!r}")
                continue
            if ma[1] != mb[1] or not math.isclose(ma[0], mb[0], rel_tol=1e-6, abs_tol=0):
                problems.append(f"{name} / {col}: {a} != {b}")
    assert not problems, "\n".join(problems[:20])


def compare_fixture(tmp_path, target, golden, msprobe_folder, metric_columns):
    out = tmp_path / "out"
    r = run_compare("-tp", os.path.join(FIXTURES, target, "step0"),
                    "-gp", os.path.join(FIXTURES, golden, "step0"), "-o", str(out))
    assert r.returncode in (0, 1), r.stderr
    theirs_path = glob.glob(os.path.join(FIXTURES, msprobe_folder, "*.csv"))[0]
    # msprobe names the file after the target's proc folder: compare_result_proc17032_{ts}.csv
    prefix = "_".join(os.path.basename(theirs_path).split("_")[:3])
    ours_paths = glob.glob(str(out / (prefix + "_*.csv")))
    assert len(ours_paths) == 1, os.listdir(out)
    ours = read_csv(ours_paths[0])
    assert_same_table(ours, read_csv(theirs_path), metric_columns)
    twin_path = ours_paths[0][:-4] + ".json"
    with open(twin_path, encoding="utf-8") as f:
        twin = json.load(f)
    assert twin["columns"] == ours[0]
    assert len(twin["rows"]) == len(ours) - 1
    for row_json, row_csv in zip(twin["rows"], ours[1:]):
        for cell_json, cell_csv in zip(row_json, row_csv):
            if isinstance(cell_json, str):
                assert cell_json == cell_csv
            else:
                assert math.isclose(cell_json, float(cell_csv), rel_tol=1e-15)
    return r


def test_statistics_mode_reproduces_msprobe(tmp_path):
    r = compare_fixture(tmp_path, "dump_statistics_bf16", "dump_statistics_base",
                        "compare_statistics", STATS_METRICS)
    assert "65 rows" in r.stdout
    assert_autocast_named(r)


def assert_autocast_named(r):
    """The target runs the forward pass under bf16 autocast: its fp32 loss and fp32 weight update
    carry bf16 rounding, more than fp32's tolerance, and the precision was lost at the first op
    autocast computed in bf16 (issue 12: precision changes are births)."""
    assert r.returncode == 1, r.stdout
    assert "first divergence: Functional.conv2d.0.forward (forward, dump entry 0, rule precision)" \
        in r.stdout
    assert "computes in torch.bfloat16 where the golden run uses torch.float32 although its " \
        "inputs are at the golden's precision" in r.stdout
    assert "at: File examples/models.py, line 26, in forward" in r.stdout


def test_tensor_mode_reproduces_msprobe(tmp_path):
    r = compare_fixture(tmp_path, "dump_tensor_bf16", "dump_tensor_base", "compare_tensor",
                        TENSOR_METRICS)
    assert "tensor mode, 65 rows" in r.stdout
    assert_autocast_named(r)


def test_file_pair_writes_compare_result_with_timestamp_only(tmp_path):
    t = os.path.join(FIXTURES, "dump_statistics_bf16", "step0", "proc17032", "dump.json")
    g = os.path.join(FIXTURES, "dump_statistics_base", "step0", "proc17026", "dump.json")
    r = run_compare("--target", t, "--golden", g, "--output_path", str(tmp_path))
    assert r.returncode in (0, 1), r.stderr
    names = sorted(os.listdir(tmp_path))
    assert len(names) == 3, names
    assert names[0].startswith("compare_result_2") and names[0].endswith(".csv")
    assert names[1] == names[0][:-4] + ".json"
    assert names[2] == "divergence_" + names[0][len("compare_result_"):-4] + ".json"


def test_usage_errors_exit_2(tmp_path):
    r = run_compare("-tp", os.path.join(FIXTURES, "dump_statistics_bf16", "step0"))
    assert r.returncode == 2
    assert "-gp" in r.stderr
    t = os.path.join(FIXTURES, "dump_statistics_bf16", "step0", "proc17032", "dump.json")
    r = run_compare("-tp", t, "-gp", os.path.join(FIXTURES, "dump_statistics_base", "step0"),
                    "-o", str(tmp_path / "o"))
    assert r.returncode == 2
    assert "both" in r.stderr
    r = run_compare("-tp", t, "-gp", t, "--no-such-option")
    assert r.returncode == 2


def test_missing_input_exits_3(tmp_path):
    r = run_compare("-tp", str(tmp_path / "nope"), "-gp", str(tmp_path), "-o", str(tmp_path / "o"))
    assert r.returncode == 3
    assert "no such file" in r.stderr
    assert not (tmp_path / "o").exists()


def test_help_lists_msprobe_spellings():
    r = run_compare("--help")
    assert r.returncode == 0
    for flag in ("-tp", "--target_path", "-gp", "--golden_path", "-o", "--output_path",
                 "--threads"):
        assert flag in r.stdout
