"""numprobe precheck / precheck-compare from the command line: msprobe's spellings of the options,
the result files, exit codes (0 ok, 1 an API fails, 2 usage, 3 unreadable input), resume, the
static plan, and hostile inputs (a malformed dump, an unsafe data_name, a renamed result CSV)."""
import csv
import glob
import json
import os
import shutil

import pytest


def fixture_dump(source_dir, name):
    (path,) = glob.glob(os.path.join(source_dir, "tests", "fixtures", "msprobe", name, "step0", "*",
                                     "dump.json"))
    return path


def test_help(run):
    for sub in ("precheck", "precheck-compare"):
        proc = run(sub, "--help")
        assert proc.returncode == 0, proc.stderr
        assert "--api_info_file" in proc.stdout or "--npu_csv_path" in proc.stdout


def test_precheck_of_msprobes_statistics_dump(run, source_dir, tmp_path):
    dump = fixture_dump(source_dir, "dump_statistics_base")
    proc = run("precheck", "-api_info", dump, "-o", tmp_path, "-n", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "precheck (statistics mode):" in proc.stdout
    (result_csv,) = glob.glob(str(tmp_path / "accuracy_checking_result_*.csv"))
    with open(result_csv, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["API name", "Forward Test Success", "Backward Test Success", "Message",
                       "numprobe Result"]
    names = [r[0] for r in rows[1:]]
    assert "Functional.conv2d.0" in names and "Functional.relu.0" in names
    (twin,) = glob.glob(str(tmp_path / "precheck_*.json"))
    with open(twin) as f:
        doc = json.load(f)
    assert doc["numprobe_precheck"] == 1 and doc["summary"]["apis"] == len(names)


def test_resume_and_filter(run, source_dir, tmp_path):
    dump = fixture_dump(source_dir, "dump_statistics_base")
    assert run("precheck", "-api_info", dump, "-o", tmp_path, "-f").returncode == 0
    (result_csv,) = glob.glob(str(tmp_path / "accuracy_checking_result_*.csv"))
    with open(result_csv, encoding="utf-8-sig", newline="") as f:
        lines = list(csv.reader(f))
    # Keep the header and the first API: the run "was interrupted" there.
    with open(result_csv, "w", encoding="utf-8-sig", newline="") as f:
        csv.writer(f).writerows(lines[:2])
    proc = run("precheck", "-api_info", dump, "-csv_path", result_csv, "-f")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(result_csv, encoding="utf-8-sig", newline="") as f:
        again = list(csv.reader(f))
    assert [r[0] for r in again] == [r[0] for r in lines]
    # A result CSV under another name cannot be resumed (msprobe's rule): usage error.
    renamed = tmp_path / "mine.csv"
    shutil.copy(result_csv, renamed)
    proc = run("precheck", "-api_info", dump, "-csv_path", renamed)
    assert proc.returncode == 2
    assert "accuracy_checking_result_" in proc.stderr


def test_bad_inputs(run, tmp_path):
    assert run("precheck").returncode == 2
    assert run("precheck", "-api_info", tmp_path / "missing.json").returncode == 3
    bad = tmp_path / "dump.json"
    bad.write_text('{"task": "statistics", "data": {"Torch.matmul.0.forward": ')
    proc = run("precheck", "-api_info", bad)
    assert proc.returncode == 3
    assert "dump.json" in proc.stderr and proc.stdout == ""
    # Module entries only: nothing to replay.
    bad.write_text('{"task": "statistics", "level": "L0", "data": {"Module.fc.Linear.forward.0": '
                   '{"input_args": [], "input_kwargs": {}, "output": []}}}')
    assert run("precheck", "-api_info", bad).returncode == 3
    # A tensor-mode data_name that leaves dump_tensor_data: the API is skipped, nothing read.
    leaf = {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 1.0,
            "Min": 0.0, "Mean": 0.5, "Norm": 1.0, "requires_grad": False,
            "data_name": "../../../etc/passwd"}
    bad.write_text(json.dumps({"task": "tensor", "level": "L1", "dump_data_dir": "x",
                               "data": {"Functional.relu.0.forward": {
                                   "input_args": [leaf], "input_kwargs": {}, "output": []}}}))
    proc = run("precheck", "-api_info", bad, "-o", tmp_path / "out")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (details,) = glob.glob(str(tmp_path / "out" / "accuracy_checking_details_*.csv"))
    with open(details, encoding="utf-8-sig") as f:
        text = f.read()
    assert "is not a file name" in text and "SKIP" in text
    assert run("precheck", "-api_info", bad, "-n", "0").returncode == 2
    assert run("precheck", "--plan", "fp32", tmp_path).returncode == 2


def test_precheck_compare(run, source_dir, tmp_path):
    dump = fixture_dump(source_dir, "dump_tensor_base")
    assert run("precheck", "-api_info", dump, "-o", tmp_path / "a").returncode == 0
    (details,) = glob.glob(str(tmp_path / "a" / "accuracy_checking_details_*.csv"))
    # The same run as its own reference: every ratio is 1, nothing fails.
    proc = run("precheck-compare", "-npu", details, "-gpu", details, "-o", tmp_path / "cmp")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (result,) = glob.glob(str(tmp_path / "cmp" / "api_precision_compare_result_*.csv"))
    with open(result, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["API Name", "Forward Test Success", "Backward Test Success", "Message"]
    assert all(r[1] in ("pass", "SKIP") for r in rows[1:]), rows
    assert run("precheck-compare", "-npu", details).returncode == 2
    assert run("precheck-compare", "-npu", details, "-gpu", tmp_path / "nope.csv").returncode == 3


def test_static_plan(run, source_dir, tmp_path):
    dump = os.path.join(source_dir, "tests", "fixtures", "msprobe", "dump_statistics_nan")
    proc = run("precheck", "--plan", "fp16", dump, "-o", tmp_path)
    # The NaN run multiplies by the constant 1e38: far past fp16's range (bf16 holds it).
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Tensor.__mul__.0.forward.input.1: the constant 1e+38 overflows fp16" in proc.stdout
    proc = run("precheck", "--plan", "bf16", dump)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1e+38" not in proc.stdout
    assert glob.glob(str(tmp_path / "precheck_plan_fp16_*.csv"))
