"""`numprobe scan` against dumps with planted anomalies (tests/golden/gen_scan.py writes them and
the expected answers, computed independently with numpy/torch and exact fp8 rounding) and against
msprobe's own NaN dump (tests/fixtures/msprobe/dump_statistics_nan).

Environment (set by ctest): NUMPROBE_BIN, NUMPROBE_GOLDEN_DIR, NUMPROBE_SOURCE_DIR.
"""
import csv
import glob
import json
import math
import os
import subprocess

import pytest

GOLDEN = os.path.join(os.environ.get("NUMPROBE_GOLDEN_DIR", ""), "scan")
SOURCE = os.environ.get("NUMPROBE_SOURCE_DIR", "")
NAN_FIXTURE = os.path.join(SOURCE, "tests", "fixtures", "msprobe", "dump_statistics_nan")
with open(os.path.join(GOLDEN, "expected.json"), encoding="utf-8") as f:
    EXPECTED = json.load(f)
TARGETS = ["fp16", "bf16", "fp8_e4m3", "fp8_e5m2"]


def run_scan(path, out_dir, *extra):
    r = subprocess.run([os.environ["NUMPROBE_BIN"], "scan", str(path), "-o", str(out_dir), *extra],
                       capture_output=True, text=True, timeout=120)
    assert "Sanitizer" not in r.stderr and "runtime error:" not in r.stderr, r.stderr
    return r


def load_outputs(out_dir):
    def one(pattern):
        files = glob.glob(os.path.join(str(out_dir), pattern))
        assert len(files) <= 1, files
        return files[0] if files else None

    report_path = one("scan_2*.json")
    assert report_path, os.listdir(str(out_dir))
    with open(report_path, encoding="utf-8") as f:
        report = json.load(f)
    analyze = one("anomaly_analyze_*.json")
    if analyze:
        with open(analyze, encoding="utf-8") as f:
            analyze = json.load(f)  # Python's json reads msprobe's bare NaN/Infinity
    return report, analyze


def scan(path, tmp_path, *extra, expect_exit=None):
    r = run_scan(path, tmp_path, *extra)
    if expect_exit is not None:
        assert r.returncode == expect_exit, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    report, analyze = load_outputs(tmp_path)
    return r, report, analyze


def test_msprobe_nan_fixture_names_the_multiply(tmp_path):
    r, report, analyze = scan(NAN_FIXTURE, tmp_path, expect_exit=1)
    first = report["first_anomaly"]
    assert first["op_name"] == "Tensor.__mul__.0.forward"
    assert first["kind"] == "compute"
    assert first["step"] == 0
    assert first["rank_folder"] == "proc18393"
    assert [a["op_name"] for a in report["anomalies"]] == ["Tensor.__mul__.0.forward"]
    # Inputs finite (3.69.., -4.28.. and the 1e38 scale), output +-Inf.
    ins = [t for t in first["inputs"] if t["is_tensor"]]
    assert ins[0]["max"] == pytest.approx(3.6971449851989746, rel=1e-15)
    assert first["outputs"][0]["max"] == "Infinity" and first["outputs"][0]["min"] == "-Infinity"
    assert any("models.py, line 58" in line for line in first["stack"])
    assert "First anomaly: Tensor.__mul__.0.forward" in r.stdout
    # msprobe's anomaly_analyze file: the entry's data copied verbatim.
    node = analyze["rank_0"][0]
    assert node["op_name"] == "Tensor.__mul__.0.forward"
    assert node["construct_info"] == ["Tensor.__mul__.0.forward"]
    assert node["data_info"]["input_args"][1] == {"type": "float", "value": 1e38}
    assert node["data_info"]["output"][0]["Max"] == math.inf
    assert math.isnan(node["data_info"]["output"][0]["Mean"])


ANOMALY_DUMPS = [k for k in sorted(EXPECTED) if "first" in EXPECTED[k]]


@pytest.mark.parametrize("name", ANOMALY_DUMPS)
def test_first_anomaly_and_births(name, tmp_path):
    want = EXPECTED[name]
    r, report, analyze = scan(os.path.join(GOLDEN, name), tmp_path)
    first = report["first_anomaly"]
    if want["first"] is None:
        assert first is None, first
        assert report["anomalies"] == []
        assert analyze is None
        return
    wf = want["first"]
    assert first is not None, r.stdout
    got = {k: first[k] for k in ("op_name", "rank", "step", "kind", "module_path")}
    assert got == {k: wf[k] for k in got}
    if wf["stack_line"]:
        assert any(wf["stack_line"] in line for line in first["stack"]), first["stack"]
    assert [[a["op_name"], a["rank"]] for a in report["anomalies"]] == want["anomalies"]
    assert f"First anomaly: {wf['op_name']}" in r.stdout
    # msprobe's file lists the first anomaly first under its rank.
    assert analyze[f"rank_{wf['rank']}"][0]["op_name"] == wf["op_name"]
    assert r.returncode == 1


@pytest.mark.parametrize("name", ANOMALY_DUMPS)
def test_watchpoint_hits_exactly(name, tmp_path):
    want = EXPECTED[name]
    r, report, _ = scan(os.path.join(GOLDEN, name), tmp_path)
    got = sorted([h["watchpoint"], h["tensor"], h["step"], h["rank"]]
                 for h in report["watchpoints"]["hits"])
    assert got == sorted(want["hits"]), json.dumps(report["watchpoints"]["hits"], indent=1)


def test_healthy_dump_is_silent(tmp_path):
    r, report, analyze = scan(os.path.join(GOLDEN, "healthy"), tmp_path, expect_exit=0)
    assert report["watchpoints"]["hits"] == []
    assert report["first_anomaly"] is None and analyze is None
    assert all(s["overflow"] == 0 for s in report["headroom"]["summary"])
    assert "Watchpoints: no hits" in r.stdout


def test_each_watchpoint_fires_on_its_dump(tmp_path):
    # Together the dumps trigger every watchpoint MindInsight defines that a dump can answer.
    fired = set()
    for name in ("watch_stats", "watch_tensor"):
        out = tmp_path / name
        _, report, _ = scan(os.path.join(GOLDEN, name), out, "--act-range", "0.4,0.6",
                            "--act-range-pct-lt", "50", expect_exit=1)
        fired |= {h["watchpoint"] for h in report["watchpoints"]["hits"]}
    assert fired == {"gradient_all_zero", "gradient_vanishing", "gradient_exploding",
                     "weight_not_changed", "weight_change_too_large", "weight_change_too_small",
                     "tensor_too_large", "activation_range"}


def test_weight_update_ratios_match_numpy(tmp_path):
    _, report, _ = scan(os.path.join(GOLDEN, "watch_tensor"), tmp_path, expect_exit=1)
    ratios = EXPECTED["watch_tensor"]["ratios"]
    by_tensor = {h["tensor"]: h for h in report["watchpoints"]["hits"]}
    small = by_tensor["Module.a.Linear.weight"]
    assert small["exact"] is True
    assert small["actual"] == pytest.approx(ratios["a"], rel=1e-9)
    large = by_tensor["Module.c.Linear.weight"]
    assert large["actual"] == pytest.approx(ratios["c"], rel=1e-9)
    assert by_tensor["Module.b.Linear.weight"]["watchpoint"] == "weight_not_changed"
    assert "Module.d.Linear.weight" not in by_tensor  # a healthy update (ratio ~1e-3)
    assert 1e-4 < ratios["d"] < 0.1


def test_statistics_only_weight_checks(tmp_path):
    # Without the tensor files: "not changed" from equal statistics, "too large" from a lower
    # bound, and "too small" not decidable.
    _, report, _ = scan(os.path.join(GOLDEN, "watch_tensor"), tmp_path, "--no-tensors",
                        expect_exit=1)
    got = sorted((h["watchpoint"], h["tensor"], h["exact"]) for h in report["watchpoints"]["hits"])
    assert got == [("weight_change_too_large", "Module.c.Linear.weight", False),
                   ("weight_not_changed", "Module.b.Linear.weight", False)]
    assert report["tensor_files_read"] == 0


def test_activation_range_percentage(tmp_path):
    want = EXPECTED["watch_tensor"]["sigmoid_pct_in_0.4_0.6"]
    _, report, _ = scan(os.path.join(GOLDEN, "watch_tensor"), tmp_path / "lt", "--act-range",
                        "0.4,0.6", "--act-range-pct-lt", "50", expect_exit=1)
    hits = [h for h in report["watchpoints"]["hits"] if h["watchpoint"] == "activation_range"]
    assert sorted(h["step"] for h in hits) == [0, 1]
    assert all(h["tensor"] == "Functional.sigmoid.0.forward.output.0" for h in hits)
    assert all(h["actual"] == pytest.approx(want, rel=1e-12) for h in hits)
    _, report, _ = scan(os.path.join(GOLDEN, "watch_tensor"), tmp_path / "gt", "--act-range",
                        "0.4,0.6", "--act-range-pct-gt", "90")
    assert not [h for h in report["watchpoints"]["hits"] if h["watchpoint"] == "activation_range"]


def read_headroom_csv(out_dir):
    path = glob.glob(os.path.join(str(out_dir), "scan_headroom_*.csv"))[0]
    with open(path, newline="", encoding="utf-8") as f:
        return {row["Tensor"]: row for row in csv.DictReader(f)}


def want_status(fit):
    s = "overflow" if fit["overflow"] else ""
    low = "underflow" if fit["underflow"] else "subnormal" if fit["subnormal"] else ""
    if low:
        s = s + "+" + low if s else low
    return s or "ok"


@pytest.mark.parametrize("name", ["headroom", "headroom_stats"])
def test_headroom_matches_independent_rounding(name, tmp_path):
    _, report, _ = scan(os.path.join(GOLDEN, name), tmp_path, expect_exit=1)
    rows = read_headroom_csv(tmp_path)
    want_rows = EXPECTED["headroom"]["rows"]
    assert set(rows) == set(want_rows)
    for tensor, want in want_rows.items():
        row = rows[tensor]
        assert row["Layer"] == want["layer"]
        assert float(row["Max Abs"]) == want["max_abs"]
        assert float(row["Min Nonzero Abs"]) == want["min_nonzero_abs"]
        assert row["Exact"] == ("True" if name == "headroom" else "False")
        for t in TARGETS:
            fit = want["fits"][t]
            assert row[f"{t} Status"] == want_status(fit), (tensor, t)
            assert float(row[f"{t} Headroom Log2"]) == pytest.approx(fit["headroom_log2"],
                                                                    rel=1e-12)
    # Layers to keep in higher precision: those with a tensor that overflows the target.
    for summary in report["headroom"]["summary"]:
        t = summary["target"]
        want_layers = sorted(w["layer"] for w in want_rows.values() if w["fits"][t]["overflow"])
        assert sorted(l["layer"] for l in summary["keep_higher_precision"]) == want_layers, t
        assert summary["overflow"] == len(want_layers)
        assert summary["underflow"] == sum(w["fits"][t]["underflow"] for w in want_rows.values())


def test_dtype_option_restricts_headroom(tmp_path):
    r, report, _ = scan(os.path.join(GOLDEN, "headroom"), tmp_path, "--dtype", "bf16",
                        expect_exit=1)
    assert report["headroom"]["targets"] == ["bf16"]
    assert [s["target"] for s in report["headroom"]["summary"]] == ["bf16"]
    header = next(iter(read_headroom_csv(tmp_path).values())).keys()
    assert [h for h in header if h.endswith("Status")] == ["bf16 Status"]
    assert "Headroom bf16" in r.stdout and "Headroom fp16" not in r.stdout


def test_watch_option_selects_watchpoints(tmp_path):
    _, report, _ = scan(os.path.join(GOLDEN, "watch_stats"), tmp_path, "--watch",
                        "gradient_all_zero", expect_exit=1)
    assert {h["watchpoint"] for h in report["watchpoints"]["hits"]} == {"gradient_all_zero"}


def test_thresholds_are_options(tmp_path):
    # With the limit at 1e6 the 3e5 and 2e4 outputs are no longer too large.
    _, report, _ = scan(os.path.join(GOLDEN, "watch_stats"), tmp_path, "--tensor-max", "1e6",
                        "--watch", "tensor_too_large")
    assert report["watchpoints"]["hits"] == []
    assert report["watchpoints"]["thresholds"]["tensor_abs_max"] == 1e6


def test_exit_codes_for_bad_input_and_usage(tmp_path):
    r = run_scan(tmp_path / "missing", tmp_path)
    assert r.returncode == 3 and "no such file" in r.stderr
    r = run_scan(os.path.join(GOLDEN, "healthy"), tmp_path, "--dtype", "fp32")
    assert r.returncode == 2 and "--dtype" in r.stderr
    r = run_scan(os.path.join(GOLDEN, "healthy"), tmp_path, "--watch", "nonsense")
    assert r.returncode == 2 and "nonsense" in r.stderr
    bad = tmp_path / "bad" / "step0" / "rank0"
    bad.mkdir(parents=True)
    (bad / "dump.json").write_text('{"task": "statistics", "data": {"Torch.a.0.forward": {',
                                   encoding="utf-8")
    r = run_scan(tmp_path / "bad", tmp_path)
    assert r.returncode == 3
    assert "dump.json" in r.stderr and "malformed JSON" in r.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run_scan(empty, tmp_path)
    assert r.returncode == 3 and "no dump.json" in r.stderr


def test_a_single_dump_json_and_a_rank_folder(tmp_path):
    rank1 = os.path.join(GOLDEN, "nan_allreduce", "step0", "rank1")
    _, report, _ = scan(rank1, tmp_path / "folder", expect_exit=1)
    assert report["first_anomaly"]["op_name"] == "Torch.sqrt.0.forward"
    assert report["first_anomaly"]["rank"] == 1 and report["first_anomaly"]["step"] == 0
    _, report, _ = scan(os.path.join(rank1, "dump.json"), tmp_path / "file", expect_exit=1)
    assert report["first_anomaly"]["op_name"] == "Torch.sqrt.0.forward"
    assert report["first_anomaly"]["rank"] == 1
