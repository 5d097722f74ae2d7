"""The end-to-end demo (scripts/demo.sh) in its reduced size: three captured training runs of a
small transformer block, compare, scan and config-check. The demo checks itself (exit 1 when
numprobe misses the planted op); this test also checks the summary and the files behind it.

Run by its own ctest entry (cli.demo, labels cli and python: it needs the Python module, which an
ASan build cannot load into the interpreter). Environment: NUMPROBE_BIN, NUMPROBE_PYTHONPATH (the
build's python/ folder), NUMPROBE_SOURCE_DIR.
"""
import glob
import json
import os
import subprocess

import pytest

PLANTED = "Functional.gelu.0.forward"
NAN_OP = "Torch.matmul.0.forward"


@pytest.fixture(scope="module")
def demo(tmp_path_factory, numprobe_bin, source_dir):
    if not os.environ.get("NUMPROBE_PYTHONPATH"):
        pytest.fail("NUMPROBE_PYTHONPATH must name the build's python folder (ctest sets it)")
    out = tmp_path_factory.mktemp("demo") / "demo-out"
    r = subprocess.run(["bash", os.path.join(source_dir, "scripts", "demo.sh"), numprobe_bin,
                        str(out), "--small"], capture_output=True, text=True, timeout=900,
                       cwd=source_dir)
    return r, out


def summary(stdout):
    assert "== numprobe demo summary" in stdout
    return stdout[stdout.index("== numprobe demo summary"):]


def has(numprobe_bin, command):
    listing = subprocess.run([numprobe_bin, "--help"], capture_output=True, text=True).stdout
    return any(line.startswith(f"  {command} ") for line in listing.splitlines())


def test_demo_succeeds_and_names_the_planted_op(demo):
    r, out = demo
    assert r.returncode == 0, r.stdout + r.stderr
    text = summary(r.stdout)
    assert f"planted precision bug (target run): {PLANTED} at step 0" in text
    assert f"compare (statistics): first divergence {PLANTED} (step0/" in text
    assert f"compare (tensor): first divergence {PLANTED} (step0/" in text
    assert "MISMATCH" not in text
    assert "DEMO OK" in text


def test_precheck_passes_the_faithful_runs_and_plans_fp16(demo, numprobe_bin):
    r, out = demo
    if not has(numprobe_bin, "precheck"):
        pytest.skip("no precheck in this build")
    text = summary(r.stdout)
    # The runs are fp32 and every API computes what it claims: nothing fails against float64.
    for task in ("statistics", "tensor"):
        line = next(l for l in text.splitlines() if l.startswith(f"  precheck ({task}):"))
        assert " 0 error" in line and line.endswith("OK"), line
        (twin,) = glob.glob(str(out / "precheck" / task / "precheck_*.json"))
        with open(twin) as f:
            doc = json.load(f)
        assert doc["summary"]["apis"] > 50 and doc["summary"]["error"] == 0
    # Adam's eps (1e-8, added to every update's denominator) does not survive fp16.
    assert "plan fp16 (from the fp32 baseline):" in text
    (plan,) = glob.glob(str(out / "precheck" / "plan" / "precheck_plan_fp16_*.json"))
    with open(plan) as f:
        findings = json.load(f)["findings"]
    assert any(f["kind"] == "underflow" and f["value"] <= 1e-8 for f in findings)
    assert any(f["kind"] == "sensitive_op" and "softmax" in f["op"] for f in findings)


def test_divergence_files_name_the_planted_op(demo):
    _, out = demo
    for kind in ("statistics", "tensor"):
        (path,) = glob.glob(str(out / "compare" / kind / "divergence_*.json"))
        with open(path) as f:
            doc = json.load(f)
        # Across steps the earliest is step 0's, although later steps diverge at ops with smaller
        # entry numbers (their weights differ after the first update).
        assert doc["first"]["scope"] == "step0", doc["first"]
        assert doc["first"]["op"]["op_name"] == PLANTED, doc["first"]
        step0 = [r for r in doc["ranks"] if r["scope"] == "step0"]
        assert len(step0) == 1, doc["ranks"]
        first = step0[0]["first"]
        assert first["op_name"] == PLANTED, first
        assert first["direction"] == "forward"
        assert not first["non_finite"]
        assert first["module_path"][-1].startswith("Module.mlp.Mlp.forward"), first


def test_scan_names_the_nan_op(demo, numprobe_bin):
    r, out = demo
    text = summary(r.stdout)
    if not has(numprobe_bin, "scan"):
        assert "scan: not in this build of numprobe" in text
        return
    assert f"scan: first anomaly {NAN_OP} at step 2 (compute)" in text
    (path,) = glob.glob(str(out / "scan" / "scan_*.json"))
    with open(path) as f:
        first = json.load(f)["first_anomaly"]
    assert (first["op_name"], first["step"], first["kind"]) == (NAN_OP, 2, "compute")


def test_config_check_reports_the_gelu_setting(demo, numprobe_bin):
    r, _ = demo
    if not has(numprobe_bin, "config-check"):
        return
    text = summary(r.stdout)
    assert "error hyperparameters model.gelu_approximate: tanh | none" in text  # target | baseline
