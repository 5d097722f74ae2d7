"""`numprobe merge` (msprobe's merge_result). The inputs in tests/fixtures/msprobe/merge/input were
written by msprobe's own save_excel (pandas + openpyxl) from the fixture's statistics compare, and
expected.json holds the sheets msprobe's merge_result wrote from them (read back with pandas); the
generator is described in tests/fixtures/msprobe/merge/README.md. numprobe's workbook is read back
here with the standard library (zipfile + xml)."""
import csv
import glob
import json
import os
import re
import shutil
import xml.etree.ElementTree as ET
import zipfile

import pytest

SOURCE = os.environ.get("NUMPROBE_SOURCE_DIR", "")
FIXTURE = os.path.join(SOURCE, "tests", "fixtures", "msprobe", "merge")
NS = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}


def read_workbook(path):
    """{sheet name: rows of cell values (float, str, bool or None)}."""
    with zipfile.ZipFile(path) as z:
        shared = []
        if "xl/sharedStrings.xml" in z.namelist():
            for si in ET.fromstring(z.read("xl/sharedStrings.xml")).findall("m:si", NS):
                shared.append("".join(t.text or "" for t in si.iter(f"{{{NS['m']}}}t")))
        wb = ET.fromstring(z.read("xl/workbook.xml"))
        rels = ET.fromstring(z.read("xl/_rels/workbook.xml.rels"))
        target = {r.get("Id"): r.get("Target") for r in rels}
        out = {}
        for sheet in wb.find("m:sheets", NS):
            rid = sheet.get("{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id")
            part = "xl/" + target[rid].lstrip("/").replace("xl/", "")
            rows = []
            for row in ET.fromstring(z.read(part)).iter(f"{{{NS['m']}}}row"):
                cells = {}
                for c in row.findall("m:c", NS):
                    col = 0
                    for ch in re.match(r"[A-Z]+", c.get("r")).group(0):
                        col = col * 26 + ord(ch) - 64
                    v = c.find("m:v", NS)
                    t = c.get("t", "n")
                    if t == "s":
                        val = shared[int(v.text)]
                    elif t == "b":
                        val = v.text == "1"
                    elif t in ("str", "inlineStr"):
                        val = v.text if v is not None else "".join(x.text or "" for x in c.iter(f"{{{NS['m']}}}t"))
                    else:
                        val = float(v.text) if v is not None else None
                    cells[col - 1] = val
                width = max(cells) + 1 if cells else 0
                rows.append([cells.get(i) for i in range(width)])
            out[sheet.get("name")] = rows
        return out


def check_against_expected(merged_path, rel_tol=0.0):
    """rel_tol: 0 for xlsx inputs (the same cells); CSV/JSON inputs carry the full float while
    openpyxl stored msprobe's xlsx rounded to about 13 significant digits."""
    with open(os.path.join(FIXTURE, "expected.json"), encoding="utf-8") as f:
        expected = json.load(f)
    got = read_workbook(merged_path)
    assert list(got) == list(expected)
    for name, sheet in expected.items():
        rows = got[name]
        assert rows[0] == sheet["columns"], name
        assert len(rows) - 1 == len(sheet["rows"]), name
        for want, have in zip(sheet["rows"], rows[1:]):
            have = have + [None] * (len(want) - len(have))
            for w, h in zip(want, have):
                if w == "":  # pandas reads an empty cell as ""
                    assert h is None, (name, want, have)
                elif isinstance(w, float):
                    assert isinstance(h, float), (name, want, have)
                    assert h == w or abs(h - w) <= rel_tol * abs(w), (name, want, have)
                else:
                    assert h == w, (name, want, have)


def test_merges_msprobe_xlsx_as_msprobe_does(run, tmp_path):
    out = tmp_path / "out"
    r = run("merge", "-i", os.path.join(FIXTURE, "input"), "-o", out,
            "-config", os.path.join(FIXTURE, "merge_config.yaml"))
    assert r.returncode == 0, r.stdout + r.stderr
    files = glob.glob(str(out / "multi_ranks_compare_merge_*.xlsx"))
    assert len(files) == 1 and re.search(r"_\d{14}\.xlsx$", files[0]), files
    check_against_expected(files[0])
    assert "merged 2 ranks, 3 compare indexes" in r.stdout


def test_merges_numprobe_csv_and_json_results(run, tmp_path):
    """The same tables as numprobe's CSV (rank 0) and JSON twin (rank 1) give the same workbook."""
    src = glob.glob(os.path.join(SOURCE, "tests", "fixtures", "msprobe", "compare_statistics",
                                 "*.csv"))[0]
    with open(src, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    col = {c: i for i, c in enumerate(header)}
    rank0 = [list(r) for r in body]
    for r in rank0:
        if r[col["NPU Name"]] == "Functional.relu.0.forward.input.inplace":
            r[col["NormRelativeErr"]] = "N/A"
    rank1 = []
    for r in body:
        if r[col["NPU Name"]] == "Functional.linear.0.backward.output.2":
            continue
        r = list(r)
        for c in ("Max diff", "Min diff", "Mean diff", "L2norm diff"):
            try:
                r[col[c]] = repr(float(r[col[c]]) * 2)
            except ValueError:
                pass
        rank1.append(r)
    extra = [list(r) for r in rank1 if r[col["NPU Name"]] == "Functional.relu.0.forward.output.0"][0]
    extra[col["NPU Name"]] = "Functional.relu.1.forward.output.0"
    rank1.append(extra)
    inp = tmp_path / "in"
    inp.mkdir()
    with open(inp / "compare_result_rank0_20261201120000.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([header] + rank0)

    def cell(v):  # as numprobe's JSON twin writes a CSV text: plain numbers as JSON numbers
        for convert in (int, float):
            try:
                x = convert(v)
                return x if v.strip() not in ("inf", "-inf", "nan") else v
            except ValueError:
                pass
        return v
    with open(inp / "compare_result_rank1_20261201120000.json", "w", encoding="utf-8") as f:
        json.dump({"numprobe_compare": 1, "columns": header,
                   "rows": [[cell(v) for v in r] for r in rank1]}, f)
    out = tmp_path / "out"
    r = run("merge", "-i", inp, "-o", out, "-config", os.path.join(FIXTURE, "merge_config.yaml"))
    assert r.returncode == 0, r.stdout + r.stderr
    check_against_expected(glob.glob(str(out / "multi_ranks_compare_merge_*.xlsx"))[0], 1e-11)


def test_merge_refusals(run, tmp_path):
    cfg = os.path.join(FIXTURE, "merge_config.yaml")
    # One rank only: nothing to merge (msprobe: "no need to merge").
    one = tmp_path / "one"
    one.mkdir()
    shutil.copy(os.path.join(FIXTURE, "input", "compare_result_rank0_20261201120000.xlsx"), one)
    r = run("merge", "-i", one, "-o", tmp_path / "o1", "-config", cfg)
    assert r.returncode == 3 and "nothing to merge" in r.stderr, r.stderr
    # A config without api.
    bad = tmp_path / "bad.yaml"
    bad.write_text("compare_index: [Max diff]\n")
    r = run("merge", "-i", os.path.join(FIXTURE, "input"), "-o", tmp_path / "o2", "-config", bad)
    assert r.returncode == 2 and "api" in r.stderr, r.stderr
    # A workbook whose sheet carries a DTD (entity expansion) is refused, not expanded.
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    shutil.copy(os.path.join(FIXTURE, "input", "compare_result_rank0_20261201120000.xlsx"), hostile)
    with zipfile.ZipFile(os.path.join(FIXTURE, "input", "compare_result_rank1_20261201120000.xlsx")) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    sheet = [n for n in parts if n.startswith("xl/worksheets/")][0]
    body = parts[sheet].split(b"?>", 1)[-1]
    parts[sheet] = (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">'
                    b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>' + body)
    with zipfile.ZipFile(hostile / "compare_result_rank1_20261201120000.xlsx", "w") as z:
        for n, data in parts.items():
            z.writestr(n, data)
    r = run("merge", "-i", hostile, "-o", tmp_path / "o3", "-config", cfg)
    assert r.returncode == 3 and "DTD" in r.stderr, r.stderr
    assert not os.path.exists(tmp_path / "o3") or not os.listdir(tmp_path / "o3")
