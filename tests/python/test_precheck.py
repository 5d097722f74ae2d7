"""numprobe.precheck: a model with a deliberately imprecise custom API registered for capture is
flagged while its faithful APIs pass, in statistics and tensor mode; -n N equals -n 1; an
interrupted run resumes; an API name outside the allow-list is refused without being looked up;
the static plan flags fp16 but not bf16 for a run whose activations exceed fp16's range, and
AdamW's eps of 1e-8 for fp16; the CUDA path where CUDA is available."""
import csv
import glob
import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import numprobe

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import precheck_model as pm  # noqa: E402

CAPTURE = """
import sys, torch
sys.path.insert(0, {here!r})
import precheck_model as pm
from numprobe.pytorch import PrecisionDebugger
dbg = PrecisionDebugger(task={task!r}, level="L1", dump_path={dump!r}, step=[0])
dbg.register_custom_api(pm.ops, "faithful_center", api_prefix="Custom")
dbg.register_custom_api(pm.ops, "imprecise_center", api_prefix="Custom")
model = pm.Net()
dbg.start(model)
model(pm.batch()).sum().backward()
dbg.stop()
dbg.step()
"""


def capture(tmp_path, task):
    dump = tmp_path / f"dump_{task}"
    script = tmp_path / f"capture_{task}.py"
    script.write_text(CAPTURE.format(here=HERE, task=task, dump=str(dump)))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (dump_json,) = glob.glob(str(dump / "step0" / "*" / "dump.json"))
    return dump_json


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("precheck_dumps")
    return {task: capture(tmp, task) for task in ("statistics", "tensor")}


def details(result):
    with open(result.files["details_csv"], encoding="utf-8-sig", newline="") as f:
        return list(csv.reader(f))


@pytest.mark.parametrize("task", ["statistics", "tensor"])
def test_imprecise_custom_api_is_flagged_and_faithful_ones_pass(dumps, tmp_path, task):
    result = numprobe.precheck(dumps[task], tmp_path, custom_apis=pm.CUSTOM_APIS)
    assert result.mode == task
    verdicts = {a["api"]: a["verdict"] for a in result.apis}
    assert verdicts["Custom.imprecise_center.0"] == "error", verdicts
    assert verdicts["Custom.faithful_center.0"] == "pass", verdicts
    assert result.failed == ["Custom.imprecise_center.0"], verdicts
    for api in ("Functional.linear.0", "Tensor.__add__.0", "Functional.gelu.0",
                "Tensor.__mul__.0", "Functional.linear.1"):
        assert verdicts[api] in ("pass", "warning"), (api, verdicts)
    # The error is msprobe's: the imprecise API's cosine or relative errors fail its rules.
    (bad,) = [a for a in result.apis if a["api"] == "Custom.imprecise_center.0"]
    assert bad["forward"] == "error"
    assert bad["forward_rows"][0]["status"] == "error"
    # Backward entries were replayed too: the input gradients of linear.
    (linear,) = [a for a in result.apis if a["api"] == "Functional.linear.1"]
    assert [r["name"] for r in linear["backward_rows"]][:1] == ["Functional.linear.1.backward.output.0"]
    # The files: msprobe's columns first, numprobe's after; the JSON twin agrees.
    rows = details(result)
    assert rows[0][:5] == ["API Name", "Bench Dtype", "DEVICE Dtype", "Shape", "余弦相似度"]
    assert rows[0][21:24] == ["Status", "Message", "Standard"]
    with open(result.files["json"]) as f:
        twin = json.load(f)
    assert twin["summary"]["error"] == 1
    assert twin["mode"] == task
    # Without custom_apis the custom APIs are not replayed: skipped, with a warning.
    plain = numprobe.precheck(dumps[task], tmp_path / "plain")
    assert plain.verdict("Custom.imprecise_center.0") == "SKIP"
    assert any("Custom.imprecise_center" in w for w in plain.warnings)


def test_parallel_equals_serial(dumps, tmp_path):
    one = numprobe.precheck(dumps["statistics"], tmp_path / "one", custom_apis=pm.CUSTOM_APIS)
    two = numprobe.precheck(dumps["statistics"], tmp_path / "two", n=3,
                            custom_apis=pm.CUSTOM_APIS)
    assert details(one) == details(two)
    assert one.summary == two.summary


def test_resume_continues_an_interrupted_run(dumps, tmp_path):
    full = numprobe.precheck(dumps["statistics"], tmp_path / "full", custom_apis=pm.CUSTOM_APIS)

    class Stop(Exception):
        pass

    def stop_after_three(done, total, api):
        if done == 3:
            raise Stop()

    with pytest.raises(Stop):
        numprobe.precheck(dumps["statistics"], tmp_path / "cut", custom_apis=pm.CUSTOM_APIS,
                          progress=stop_after_three)
    (result_csv,) = glob.glob(str(tmp_path / "cut" / "accuracy_checking_result_*.csv"))
    with open(result_csv, encoding="utf-8-sig") as f:
        assert len(list(csv.reader(f))) == 4  # header and three APIs
    seen = []
    resumed = numprobe.precheck(dumps["statistics"], csv_path=result_csv,
                                custom_apis=pm.CUSTOM_APIS,
                                progress=lambda done, total, api: seen.append(api))
    assert len(seen) == full.summary["apis"] - 3  # only the rest was run
    assert resumed.files["result_csv"] == result_csv
    assert resumed.summary == full.summary
    assert details(resumed)[1:] == details(full)[1:]


def test_unknown_api_names_are_refused_not_looked_up(tmp_path, monkeypatch):
    called = []
    monkeypatch.setattr(torch, "load", lambda *a, **k: called.append(a))
    tensor = {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 1.0,
              "Min": 0.0, "Mean": 0.5, "Norm": 1.0, "requires_grad": False}
    dump = {"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": None,
            "data": {
                "Torch.load.0.forward": {"input_args": [{"type": "str", "value": "x.pt"}],
                                         "input_kwargs": {}, "output": [tensor]},
                "Torch.__import__.0.forward": {"input_args": [{"type": "str", "value": "os"}],
                                               "input_kwargs": {}, "output": []},
                "Tensor.__reduce_ex__.0.forward": {"input_args": [tensor], "input_kwargs": {},
                                                   "output": []},
                "Functional.relu.0.forward": {"input_args": [tensor], "input_kwargs": {},
                                              "output": [tensor]},
            }}
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(dump))
    result = numprobe.precheck(str(path), tmp_path / "out")
    assert called == []
    assert result.verdict("Functional.relu.0") == "pass"
    for api in ("Torch.load.0", "Torch.__import__.0", "Tensor.__reduce_ex__.0"):
        assert result.verdict(api) == "SKIP"
        assert any(api.rsplit(".", 1)[0] in w and "allow-list" in w for w in result.warnings)
    from numprobe.precheck import _allowlist

    assert ("Torch", "load") not in _allowlist.allowed()
    assert ("Functional", "relu") in _allowlist.allowed()


def test_static_plan_fp16_against_bf16(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
    with torch.no_grad():
        model[0].weight.mul_(3e4)  # activations around 1e5: beyond fp16's 65504
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, eps=1e-8)
    batch = torch.randn(16, 8)
    fp16 = numprobe.precheck.plan(model, batch, "fp16", optimizer=optimizer,
                                  dump_path=str(tmp_path / "dump16"), out=str(tmp_path / "out"))
    bf16 = numprobe.precheck.plan(model, batch, "bf16", optimizer=optimizer,
                                  dump_path=str(tmp_path / "dump_bf16"))

    def has(report, kind, severity, text=""):
        return any(f["kind"] == kind and f["severity"] == severity and text in f["detail"]
                   for f in report["findings"])

    assert has(fp16, "overflow", "error")
    assert has(fp16, "optimizer", "error", "eps")
    assert not has(bf16, "overflow", "error")
    assert not any(f["kind"] == "optimizer" and "eps" in f["detail"] for f in bf16["findings"])
    assert glob.glob(str(tmp_path / "out" / "precheck_plan_fp16_*.json"))
    # The same from the command line on the dump the plan captured.
    binary = os.environ.get("NUMPROBE_BIN")
    if binary:
        proc = subprocess.run([binary, "precheck", "--plan", "fp16", str(tmp_path / "dump16")],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "overflow" in proc.stdout and "eps" in proc.stdout
        proc = subprocess.run([binary, "precheck", "--plan", "bf16", str(tmp_path / "dump16")],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine")
def test_cuda_path(dumps, tmp_path):
    result = numprobe.precheck(dumps["tensor"], tmp_path, device="cuda",
                               custom_apis=pm.CUSTOM_APIS)
    rows = [r for _, r in result.rows() if r["device"]]
    assert rows and all(r["device"].startswith("cuda") for r in rows)
    assert "Custom.imprecise_center.0" in result.failed


def test_runs_on_msprobes_own_dumps(tmp_path):
    fixtures = os.path.join(os.environ.get("NUMPROBE_SOURCE_DIR", os.path.join(HERE, "..", "..")),
                            "tests", "fixtures", "msprobe")
    for name in ("dump_statistics_base", "dump_tensor_base"):
        (dump_json,) = glob.glob(os.path.join(fixtures, name, "step0", "*", "dump.json"))
        result = numprobe.precheck(dump_json, tmp_path / name)
        s = result.summary
        assert s["apis"] == s["pass"] + s["warning"] + s["error"] + s["skip"] > 0
        # The fp32 reference model replays faithfully: nothing fails.
        assert s["error"] == 0, [(a["api"], a["message"]) for a in result.apis if a["verdict"] == "error"]


def test_save_error_data_keeps_only_the_failing_apis(dumps, tmp_path):
    result = numprobe.precheck(dumps["tensor"], tmp_path, custom_apis=pm.CUSTOM_APIS,
                               save_error_data=True)
    assert result.failed == ["Custom.imprecise_center.0"]
    (folder,) = glob.glob(str(tmp_path / "ut_error_data*"))
    names = os.listdir(folder)
    assert "Custom.imprecise_center.0.forward.input.0.pt" in names
    assert "Custom.imprecise_center.0.forward.output.device.0.pt" in names
    assert "Custom.imprecise_center.0.forward.output.bench.0.pt" in names
    assert all(n.startswith("Custom.imprecise_center.0.") for n in names)
