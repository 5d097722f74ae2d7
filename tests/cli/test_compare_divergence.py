"""`numprobe compare` and the first-divergence analysis on the planted-divergence dumps of
tests/golden/gen_compare_divergence.py: exit code 1 and the planted op named first (stdout,
divergence_{ts}.json, and msprobe's diff_analyze_{ts}.json with -da), exit code 0 and no
divergence for bf16-only differences; multi-rank trees paired by rank number with the ranks
present on one side only reported.

Environment (set by ctest): NUMPROBE_BIN, NUMPROBE_GOLDEN_DIR.
"""
import glob
import json
import math
import os
import shutil
import subprocess

import pytest

GOLDEN = os.path.join(os.environ.get("NUMPROBE_GOLDEN_DIR", ""), "compare_divergence")
PLANTED = "Functional.gelu.0.forward"


def run(*args, env=None):
    r = subprocess.run([os.environ["NUMPROBE_BIN"], "compare", *args], capture_output=True,
                       text=True, errors="replace", timeout=600, env=env)
    assert "Sanitizer" not in r.stderr and "runtime error:" not in r.stderr, r.stderr
    return r


def one(pattern):
    paths = glob.glob(pattern)
    assert len(paths) == 1, paths
    with open(paths[0], encoding="utf-8") as f:
        return json.load(f)


@pytest.mark.parametrize("case", ["perturbed_stats", "perturbed_tensor", "nan_stats", "growth_stats"])
def test_planted_divergence_is_named_first(tmp_path, case):
    r = run("-tp", os.path.join(GOLDEN, case, "target"), "-gp", os.path.join(GOLDEN, case, "golden"),
            "-o", str(tmp_path), "-da")
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"first divergence: {PLANTED}" in r.stdout
    assert "in: Module.block.Block.forward.0" in r.stdout
    doc = one(str(tmp_path / "divergence_*.json"))
    assert doc["numprobe_divergence"] == 1
    assert doc["first"]["rank"] == "rank0"
    assert doc["first"]["scope"] == "step0"
    op = doc["first"]["op"]
    assert op["op_name"] == PLANTED
    assert op["direction"] == "forward"
    assert op["module_path"] == ["Module.block.Block.forward.0"]
    assert op["stack"] and "examples/model.py" in op["stack"][0]
    assert op["non_finite"] == (case == "nan_stats")
    # msprobe's diff_analyze format, with numprobe's answer in it.
    analyze = one(str(tmp_path / "diff_analyze_*.json"))
    nodes = analyze["step0/rank_0"]
    assert [n["op_name"] for n in nodes] == [PLANTED]
    info = nodes[0]["data_info"]
    assert list(info["input"]) == [PLANTED + ".input.0"]
    assert list(info["output"]) == [PLANTED + ".output.0"]
    assert set(info["output"][PLANTED + ".output.0"]) == {"NPU max", "NPU min", "NPU mean",
                                                         "NPU l2norm"}
    assert nodes[0]["stack_info"] == op["stack"]
    # The results table itself is there too, with numprobe's judgment columns.
    csv_paths = glob.glob(str(tmp_path / "step0" / "compare_result_rank0_*.csv"))
    assert len(csv_paths) == 1


@pytest.mark.parametrize("case", ["bf16_stats", "bf16_tensor", "same_stats"])
def test_no_divergence_exits_0(tmp_path, case):
    r = run("-tp", os.path.join(GOLDEN, case, "target"), "-gp", os.path.join(GOLDEN, case, "golden"),
            "-o", str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no divergence" in r.stdout
    doc = one(str(tmp_path / "divergence_*.json"))
    assert doc["first"] is None
    assert doc["ranks"][0]["first"] is None
    assert not glob.glob(str(tmp_path / "diff_analyze_*.json"))  # only with -da


def make_ranks(root, side, ranks, perturbed_rank):
    """A step folder of rank{N} dumps: the planted case on one rank, identical runs elsewhere."""
    for r in ranks:
        case = "perturbed_stats" if r == perturbed_rank else "same_stats"
        shutil.copytree(os.path.join(GOLDEN, case, side, "step0", "rank0"),
                        os.path.join(root, "step0", f"rank{r}"))


def test_multi_rank_pairs_by_number_and_reports_missing(tmp_path):
    make_ranks(tmp_path / "t", "target", [0, 1, 10], perturbed_rank=1)
    make_ranks(tmp_path / "g", "golden", [0, 1, 2], perturbed_rank=1)
    out = tmp_path / "out"
    r = run("-tp", str(tmp_path / "t" / "step0"), "-gp", str(tmp_path / "g" / "step0"),
            "-o", str(out), "--threads", "3")
    assert r.returncode == 1, r.stdout + r.stderr
    names = sorted(os.path.basename(p) for p in glob.glob(str(out / "compare_result_*.csv")))
    assert [n.split("_")[2] for n in names] == ["rank0", "rank1"]
    assert "rank2: only in the golden dump" in r.stdout
    assert "rank10: only in the target dump" in r.stdout
    assert "earliest divergence across ranks: rank1 " + PLANTED in r.stdout
    doc = one(str(out / "divergence_*.json"))
    assert [x["rank"] for x in doc["ranks"]] == ["rank0", "rank1"]
    assert doc["ranks"][0]["first"] is None
    assert doc["ranks"][1]["first"]["op_name"] == PLANTED
    assert doc["first"]["rank"] == "rank1"
    assert len(doc["missing"]) == 2


def test_results_do_not_depend_on_the_thread_count(tmp_path):
    case = "perturbed_tensor"
    outputs = []
    for threads in ("1", "4"):
        out = tmp_path / threads
        r = run("-tp", os.path.join(GOLDEN, case, "target"),
                "-gp", os.path.join(GOLDEN, case, "golden"), "-o", str(out), "--threads", threads)
        assert r.returncode == 1
        with open(glob.glob(str(out / "step0" / "*.csv"))[0], encoding="utf-8") as f:
            outputs.append(f.read())
    assert outputs[0] == outputs[1]


def read_xlsx(path):
    """Cells and fill colours of the first sheet of an xlsx written by numprobe (inline strings)."""
    import re
    import zipfile
    import xml.etree.ElementTree as ET
    ns = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}
    with zipfile.ZipFile(path) as z:
        sheet = ET.fromstring(z.read("xl/worksheets/sheet1.xml"))
        styles = ET.fromstring(z.read("xl/styles.xml"))
    fills = []
    for fill in styles.find("m:fills", ns):
        fg = fill.find("m:patternFill/m:fgColor", ns)
        fills.append(fg.get("rgb") if fg is not None else None)
    xf_fill = [fills[int(xf.get("fillId"))] for xf in styles.find("m:cellXfs", ns)]
    rows, colors = [], []
    for row in sheet.find("m:sheetData", ns):
        cells, color = [], None
        for c in row:
            t = c.find("m:is/m:t", ns)
            v = c.find("m:v", ns)
            cells.append(t.text or "" if t is not None else float(v.text))
            color = xf_fill[int(c.get("s", "0"))] or color
        rows.append(cells)
        colors.append(color)
    return rows, colors


def test_xlsx_holds_the_csv_table_with_msprobe_highlighting(tmp_path):
    case = "nan_stats"
    for fmt in ("csv", "xlsx"):
        args = ["-tp", os.path.join(GOLDEN, case, "target"), "-gp", os.path.join(GOLDEN, case, "golden"),
                "-o", str(tmp_path / fmt)]
        r = run(*(args + (["--xlsx"] if fmt == "xlsx" else [])))
        assert r.returncode == 1, r.stderr
    import csv
    with open(glob.glob(str(tmp_path / "csv" / "step0" / "*.csv"))[0], newline="", encoding="utf-8") as f:
        table = list(csv.reader(f))
    xlsx_paths = glob.glob(str(tmp_path / "xlsx" / "step0" / "compare_result_rank0_*.xlsx"))
    assert len(xlsx_paths) == 1
    assert not glob.glob(str(tmp_path / "xlsx" / "step0" / "*.csv"))
    rows, colors = read_xlsx(xlsx_paths[0])
    assert len(rows) == len(table)
    for got, want in zip(rows, table):
        for g, w in zip(got, want):
            if isinstance(g, float):  # xlsx keeps 16 significant digits
                assert math.isclose(g, float(w), rel_tol=1e-15)
            else:
                assert g == w
    header = table[0]
    max_col = header.index("NPU max")
    for cells, color in zip(table[1:], colors[1:]):
        # msprobe paints rows whose NPU max is NaN red; nothing here is yellow.
        assert (color == "FFFF0000") == (cells[max_col] == "Nan"), (cells[0], color)
    assert any(c == "FFFF0000" for c in colors)


def test_xlsx_is_byte_reproducible_under_source_date_epoch(tmp_path):
    """Two runs at different times write the same bytes when SOURCE_DATE_EPOCH fixes the
    workbook's creation time (its only varying part); the time is the one given."""
    import zipfile
    case = "nan_stats"
    args = ["-tp", os.path.join(GOLDEN, case, "target"), "-gp", os.path.join(GOLDEN, case, "golden"),
            "--xlsx"]
    paths = []
    for i, epoch in enumerate(["1700000000", "1700000000", "1800000000"]):
        r = run(*args, "-o", str(tmp_path / str(i)), env=dict(os.environ, SOURCE_DATE_EPOCH=epoch))
        assert r.returncode == 1, r.stderr
        found = glob.glob(str(tmp_path / str(i) / "step0" / "compare_result_rank0_*.xlsx"))
        assert len(found) == 1, found
        paths.append(found[0])
    written = []
    for path in paths:
        with open(path, "rb") as f:
            written.append(f.read())
    assert written[0] == written[1]
    assert written[0] != written[2]
    with zipfile.ZipFile(paths[0]) as z:
        core = z.read("docProps/core.xml").decode()
    assert "2023-11-14T22:13:20Z" in core, core


def write_bf16_chain(path, n, target, planted):
    """A statistics dump of `n` ops: the golden run in float32; the target in bfloat16, its
    statistics drifting by bfloat16-sized amounts, and op `planted`'s output 10% off."""
    def leaf(dtype, scale):
        return {"type": "torch.Tensor", "dtype": dtype, "shape": [8, 1024], "Max": 3.25 * scale,
                "Min": -3.125 * scale, "Mean": 0.0123 * scale, "Norm": 181.02 * scale,
                "requires_grad": True}
    dtype = "torch.bfloat16" if target else "torch.float32"
    data = {}
    for i in range(n):
        s = 1.0 + (i % 13) * 0.01 + (1e-4 * (i % 7) if target else 0.0)
        out = s * 1.01 * (1.1 if target and i == planted else 1.0)
        data[f"Functional.op{i}.0.forward"] = {
            "input_args": [leaf(dtype, s), {"type": "float", "value": 0.5}], "input_kwargs": {},
            "output": [leaf(dtype, out)]}
    os.makedirs(os.path.dirname(path))
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"task": "statistics", "level": "L1", "framework": "pytorch",
                   "dump_data_dir": None, "data": data}, f)


def test_a_precision_verdict_still_names_the_first_output_over_its_tolerance(tmp_path):
    # The target computes in bfloat16 throughout: the verdict names where that precision starts
    # (rule precision) and the ops after it with the largest error growth. The one op over its
    # own dtype's tolerance, a planted 10% error, is in neither; stdout must still name it.
    planted = 60
    for side in ("target", "golden"):
        write_bf16_chain(str(tmp_path / side / "step0" / "rank0" / "dump.json"), 120,
                         side == "target", planted)
    r = run("-tp", str(tmp_path / "target"), "-gp", str(tmp_path / "golden"),
            "-o", str(tmp_path / "out"))
    assert r.returncode == 1, r.stdout + r.stderr
    doc = one(str(tmp_path / "out" / "divergence_*.json"))
    name = f"Functional.op{planted}.0.forward"
    assert doc["ranks"][0]["first_over_tolerance"] == name
    first = doc["first"]["op"]
    assert first["rule"] == "precision" and first["op_name"] != name
    assert name not in [n["op_name"] for n in doc["ranks"][0]["next"]]
    assert f"    first output over its dtype's tolerance: {name}\n" in r.stdout
