"""MindSpore kernel-level (graph mode) dumps in compare, scan and inspect. The trees are written
here as MindSpore writes them (rank_{id}/{net}/{graph}/{iteration}/ with
{op_type}.{op_name}.{task}.{stream}.{timestamp}.{input|output}.{slot}.{format}.{dtype}.npy files,
or a statistic.csv with a quoted shape and a trailing comma), and the expected cells follow
msprobe's ms_graph_compare.py arithmetic, worked out with numpy. Cells marked "msprobe:" were
also checked against msprobe's own GraphMSComparator run on the same trees (v26, 8ff00da3)."""
import csv
import glob
import os

import numpy as np
import pytest

from graph_trees import make_tree, value


def read_results(out):
    tables = {}
    for path in glob.glob(os.path.join(str(out), "compare_result_*_*_*.csv")):
        rank, step = os.path.basename(path).split("_")[2:4]
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
        tables[(int(rank), int(step))] = (rows[0], rows[1:])
    return tables


@pytest.mark.parametrize("header", ["current", "kbk", "old"])
def test_statistic_mode_compare(run, tmp_path, header):
    make_tree(tmp_path / "t", "statistic", "target", header)
    make_tree(tmp_path / "g", "statistic", "golden", header)
    r = run("compare", "-tp", tmp_path / "t", "-gp", tmp_path / "g", "-o", tmp_path / "out")
    assert r.returncode == 1, r.stdout + r.stderr  # an Inf makes one row "No"
    tables = read_results(tmp_path / "out")
    assert sorted(tables) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    head, rows = tables[(1, 1)]
    assert head == ["NPU Name", "Bench Name", "NPU Dtype", "Bench Dtype", "NPU Tensor Shape",
                    "Bench Tensor Shape", "NPU max", "NPU min", "NPU mean", "NPU l2norm",
                    "Bench max", "Bench min", "Bench mean", "Bench l2norm",
                    "Accuracy Reached or Not", "Err_message", "Max diff", "Min diff", "Mean diff",
                    "L2norm diff", "MaxRelativeErr", "MinRelativeErr", "MeanRelativeErr",
                    "NormRelativeErr", "NPU CSV File", "Bench CSV File"]
    by_name = {row[0]: dict(zip(head, row)) for row in rows}
    assert len(rows) == 10  # target order (timestamps), every key paired
    assert [row[0] for row in rows[:2]] == ["Default--network-Conv2D-op12.3.input.0",
                                            "Default--network-Conv2D-op12.3.output.0"]
    relu = by_name["Default--network-ReLU-op13.4.output.0"]
    t = value(1, 1, 1, 0, "output", "target", "ReLU")
    g = value(1, 1, 1, 0, "output", "golden", "ReLU")
    n_max = np.float32(float(repr(float(t.max()))))
    b_max = np.float32(float(repr(float(g.max()))))
    diff = n_max - b_max
    assert np.float32(float(relu["Max diff"])) == diff
    assert relu["MaxRelativeErr"] == str(abs((diff / b_max) * 100)) + "%"
    assert relu["MaxRelativeErr"] == "0.07422504713758826%"  # msprobe: the same text
    assert relu["MinRelativeErr"] == "N/A"  # golden min 0: msprobe's N/A
    assert relu["Accuracy Reached or Not"] == "Yes" and relu["Err_message"] == ""
    assert relu["NPU Tensor Shape"] == "[2,3]" and relu["NPU Dtype"] == "float32"
    assert relu["NPU CSV File"].endswith(os.path.join("t", "rank_1", "Net", "0", "1", "statistic.csv"))
    add = by_name["Default--network-Add-op21.6.output.0"]
    # msprobe: " inf" for Inf values, "inf%" for their relative errors, "No".
    assert add["NPU max"] == " inf" and add["Max diff"] == " inf"
    assert add["MaxRelativeErr"] == "inf%" and add["Accuracy Reached or Not"] == "No"
    assert add["MinRelativeErr"] == "0.14735094737261534%"  # msprobe: the same text
    assert "rank 1 step 1: MindSpore graph dump, statistic mode, 10 rows: 1 not reached" in r.stdout


def test_npy_mode_compare_and_unpaired_rows(run, tmp_path):
    make_tree(tmp_path / "t", "npy", "target")
    make_tree(tmp_path / "g", "npy", "golden")
    # A golden-only tensor and a target-only one.
    extra = tmp_path / "t" / "rank_0" / "Net" / "0" / "0"
    np.save(extra / "Cast.Default--Cast-op99.9.0.1700000000000099.output.0.DefaultFormat.float32.npy",
            np.ones((4,), np.float32))
    r = run("compare", "-tp", tmp_path / "t", "-gp", tmp_path / "g", "-o", tmp_path / "out")
    assert r.returncode == 1, r.stdout + r.stderr
    tables = read_results(tmp_path / "out")
    head, rows = tables[(1, 1)]
    assert head[16:] == ["Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr",
                         "One Thousandth Err Ratio", "Five Thousandths Err Ratio"]
    cells = {os.path.basename(row[0]): dict(zip(head, row)) for row in rows}
    add = [v for k, v in cells.items() if k.startswith("Add.") and ".output.0." in k][0]
    assert add["Err_message"] == "The position of inf or nan in NPU and bench Tensor do not match.\n"
    assert add["Accuracy Reached or Not"] == "" and add["Cosine"] == ""
    assert add["NPU max"] == " inf" and add["NPU Tensor Shape"] == "[2, 3]"
    mm = [v for k, v in cells.items() if k.startswith("MatMul.") and ".output.0." in k][0]
    t = value(1, 1, 2, 0, "output", "target", "MatMul").astype(np.float64).ravel()
    g = value(1, 1, 2, 0, "output", "golden", "MatMul").astype(np.float64).ravel()
    assert float(mm["MaxAbsErr"]) == float("{:.12f}".format(np.max(np.abs(t - g))))
    assert mm["Cosine"] == "0.999999"  # msprobe: 0.999999
    assert mm["Accuracy Reached or Not"] == "Yes"
    assert mm["MaxAbsErr"] == "0.00200009346"  # msprobe: 0.00200009346
    head, rows = tables[(0, 0)]
    cast = [dict(zip(head, row)) for row in rows if "Cast" in row[0]]
    assert len(cast) == 1 and cast[0]["Bench Name"] == ""
    assert cast[0]["Err_message"] == "Dump file is not ndarray.\n"


def test_npy_mode_64_bit_integer_extremes_are_exact(run, tmp_path):
    # numpy prints a 64-bit array's max and min exactly; past 2^53 no double holds them, and past
    # INT64_MAX a conversion to int64 is undefined (it printed -9223372036854775808 on x86).
    make_tree(tmp_path / "t", "npy", "target")
    make_tree(tmp_path / "g", "npy", "golden")
    i64 = np.array([2**63 - 2, -5, 2**63 - 1], np.int64)
    u64 = np.array([2**64 - 1, 2**63 + 1], np.uint64)
    for side in ("t", "g"):
        folder = tmp_path / side / "rank_0" / "Net" / "0" / "0"
        np.save(folder / "Gather.Default--Gather-op97.9.0.1700000000000097.output.0.DefaultFormat.int64.npy", i64)
        np.save(folder / "Gather.Default--Gather-op98.9.0.1700000000000098.output.0.DefaultFormat.uint64.npy", u64)
    run("compare", "-tp", tmp_path / "t", "-gp", tmp_path / "g", "-o", tmp_path / "out")
    head, rows = read_results(tmp_path / "out")[(0, 0)]
    cells = {os.path.basename(row[0]).split(".")[1]: dict(zip(head, row)) for row in rows}
    for op, array in (("Default--Gather-op97", i64), ("Default--Gather-op98", u64)):
        for side in ("NPU", "Bench"):
            assert cells[op][f"{side} max"] == str(array.max()), (op, cells[op])
            assert cells[op][f"{side} min"] == str(array.min()), (op, cells[op])


def test_scan_and_inspect(run, tmp_path):
    make_tree(tmp_path / "t", "statistic", "target", "old")
    r = run("scan", tmp_path / "t", "-o", tmp_path / "s")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "MindSpore graph dump, statistic mode, 4 folders" in r.stdout
    assert "First anomaly: Add.Default--network-Add-op21  (rank 1, iteration 1" in r.stdout
    make_tree(tmp_path / "g", "npy", "golden")
    r = run("scan", tmp_path / "g", "-o", tmp_path / "s2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "First anomaly: none" in r.stdout
    r = run("inspect", tmp_path / "g")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "MindSpore graph dump, rank 0 iteration 0: 10 tensors (6 inputs, 4 outputs) from .npy" in r.stdout


def test_hostile_statistic_csv(run, tmp_path):
    make_tree(tmp_path / "t", "statistic", "target")
    make_tree(tmp_path / "g", "statistic", "golden")
    bad = tmp_path / "t" / "rank_0" / "Net" / "0" / "0" / "statistic.csv"
    bad.write_text("Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot\nAdd,x,1,0,notatime,input,0\n")
    r = run("compare", "-tp", tmp_path / "t", "-gp", tmp_path / "g", "-o", tmp_path / "out")
    assert r.returncode == 3 and "timestamp 'notatime'" in r.stderr, r.stderr
    bad.write_text('Op Type,Op Name\n"unclosed,1\n')
    r = run("scan", tmp_path / "t", "-o", tmp_path / "s")
    assert r.returncode == 3, r.stderr


def read_sheet(path, width):
    """The first sheet's cells placed by their references (an empty text is an absent cell), and
    whether any cell carries a style."""
    import re
    import zipfile
    import xml.etree.ElementTree as ET
    ns = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}
    with zipfile.ZipFile(path) as z:
        sheet = ET.fromstring(z.read("xl/worksheets/sheet1.xml"))
    rows, styled = [], False
    for row in sheet.find("m:sheetData", ns):
        cells = [""] * width
        for c in row:
            letters = re.match(r"[A-Z]+", c.get("r")).group(0)
            col = 0
            for ch in letters:
                col = col * 26 + ord(ch) - ord("A") + 1
            t, v = c.find("m:is/m:t", ns), c.find("m:v", ns)
            cells[col - 1] = (t.text or "") if t is not None else float(v.text)
            styled = styled or c.get("s", "0") != "0"
        rows.append(cells)
    return rows, styled


def test_statistic_mode_compare_as_xlsx(run, tmp_path):
    """--xlsx writes the CSV's table as msprobe's save_excel does: numbers as numbers, Inf as
    "inf\\t", the other cells as text, one file per (rank, step) and no CSV."""
    make_tree(tmp_path / "t", "statistic", "target")
    make_tree(tmp_path / "g", "statistic", "golden")
    r = run("compare", "-tp", tmp_path / "t", "-gp", tmp_path / "g", "-o", tmp_path / "csv")
    assert r.returncode == 1, r.stdout + r.stderr
    r = run("compare", "-tp", tmp_path / "t", "-gp", tmp_path / "g", "-o", tmp_path / "xlsx",
            "--xlsx")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "not applied" not in r.stderr
    assert not glob.glob(str(tmp_path / "xlsx" / "*.csv"))
    csv_head, csv_rows = read_results(tmp_path / "csv")[(1, 1)]
    paths = glob.glob(str(tmp_path / "xlsx" / "compare_result_1_1_*.xlsx"))
    assert len(paths) == 1
    rows, styled = read_sheet(paths[0], len(csv_head))
    assert rows[0] == csv_head
    assert len(rows) == len(csv_rows) + 1 and not styled  # msprobe fills no graph compare row
    for want_row, got_row in zip(csv_rows, rows[1:]):
        for want, got in zip(want_row, got_row):
            if want in (" inf", " -inf"):
                assert got == want[1:] + "\t"
            elif isinstance(got, float):
                assert got == float(want), (want, got)
            else:
                assert got == want
    add = dict(zip(csv_head, rows[1 + [row[0] for row in csv_rows].index(
        "Default--network-Add-op21.6.output.0")]))
    assert add["NPU max"] == "inf\t" and add["Accuracy Reached or Not"] == "No"
    assert isinstance(add["Bench max"], float)
