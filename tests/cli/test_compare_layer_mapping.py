"""`numprobe compare -lm MAP.yaml` (msprobe's --layer_mapping): a MindSpore target against a PyTorch
golden whose module names differ per layer class. Two small statistics-mode dumps (dump.json,
construct.json, stack.json) are written here; the test checks which NPU row paired with which
Bench row (as msprobe's layer mapping pairs them: tests/unit/compare_layer_mapping_test.cc runs
msprobe's own test data) and that the Match column says `mapped`, that rows the mapping sends to
N/A stay unmatched even when a golden row has their name (msprobe's data mapping), and the
errors (bad YAML, wrong structure, missing file, no construct.json).

Environment (set by ctest): NUMPROBE_BIN.
"""
import csv
import glob
import json
import os
import subprocess


def run(*args):
    r = subprocess.run([os.environ["NUMPROBE_BIN"], "compare", *args], capture_output=True,
                       text=True, errors="replace", timeout=600)
    assert "Sanitizer" not in r.stderr and "runtime error:" not in r.stderr, r.stderr
    return r


def stat(dtype, value):
    return {"type": "mindspore.Tensor" if dtype == "Float32" else "torch.Tensor", "dtype": dtype,
            "shape": [2, 4], "Max": value, "Min": -value, "Mean": value / 4, "Norm": value * 2,
            "requires_grad": False}


def entry(dtype, x, y):
    return {"input_args": [stat(dtype, x)], "input_kwargs": {}, "output": [stat(dtype, y)]}


def write_dump(folder, framework, entries, construct):
    """entries: [(name, input max, output max)] in execution order."""
    os.makedirs(folder)
    dtype = "Float32" if framework == "mindspore" else "torch.float32"
    data = {name: entry(dtype, x, y) for name, x, y in entries}
    doc = {"task": "statistics", "level": "mix", "framework": framework, "dump_data_dir": None,
           "data": data}
    with open(os.path.join(folder, "dump.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f)
    with open(os.path.join(folder, "construct.json"), "w", encoding="utf-8") as f:
        json.dump(construct, f)
    stack = {name: [f"File /work/model.py, line {10 + i}, in forward, y = f(x)"]
             for i, (name, _, _) in enumerate(entries)}
    with open(os.path.join(folder, "stack.json"), "w", encoding="utf-8") as f:
        json.dump(stack, f)


MS_ATTN = "Cell.network.layers.0.attention.Attention.forward.0"
MS_LAYER = "Cell.network.layers.0.DecoderLayer.forward.0"
MS_WQ = "Cell.network.layers.0.attention.wq.Dense.forward.0"
PT_ATTN = "Module.model.layers.0.attn.SelfAttention.forward.0"
PT_LAYER = "Module.model.layers.0.Block.forward.0"
PT_WQ = "Module.model.layers.0.attn.q_proj.Linear.forward.0"

MAP_YAML = """\
TopLayer:
  network: model
DecoderLayer:
  attention: attn
Attention:
  wq: q_proj
"""


def make_dumps(tmp_path):
    target = tmp_path / "target"
    golden = tmp_path / "golden"
    # MindSpore runs wq, then its two matmuls; softmax only on this side. The global call numbers
    # of matmul differ between the runs (4, 5 against 0, 1).
    write_dump(str(target), "mindspore", [
        (MS_WQ, 1.0, 2.0),
        ("Functional.matmul.4.forward", 2.0, 3.0),
        ("Functional.matmul.5.forward", 3.0, 4.0),
        ("Functional.softmax.0.forward", 4.0, 1.0),
        (MS_ATTN, 1.0, 4.0),
        (MS_LAYER, 1.0, 4.0),
        ("Tensor.add.0.forward", 4.0, 5.0),
    ], {
        MS_WQ: MS_ATTN,
        "Functional.matmul.4.forward": MS_ATTN,
        "Functional.matmul.5.forward": MS_ATTN,
        "Functional.softmax.0.forward": MS_ATTN,
        MS_ATTN: MS_LAYER,
        MS_LAYER: None,
        "Tensor.add.0.forward": None,
    })
    write_dump(str(golden), "pytorch", [
        (PT_WQ, 1.0, 2.0),
        ("Torch.matmul.0.forward", 2.0, 3.0),
        ("Torch.matmul.1.forward", 3.0, 4.0),
        (PT_ATTN, 1.0, 4.0),
        (PT_LAYER, 1.0, 4.0),
        # Same name as the target's, but inside the layer here: a different scope, so msprobe's
        # layer mapping sends the target's to N/A and it stays unpaired.
        ("Tensor.add.0.forward", 4.0, 5.0),
    ], {
        PT_WQ: PT_ATTN,
        "Torch.matmul.0.forward": PT_ATTN,
        "Torch.matmul.1.forward": PT_ATTN,
        PT_ATTN: PT_LAYER,
        PT_LAYER: None,
        "Tensor.add.0.forward": PT_LAYER,
    })
    return target, golden


def table(out):
    files = glob.glob(str(out / "compare_result_*.csv"))
    assert len(files) == 1, files
    with open(files[0], newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    return {r[0]: dict(zip(header, r)) for r in rows[1:]}


def test_layer_mapping_pairs_renamed_modules_and_their_apis(tmp_path):
    target, golden = make_dumps(tmp_path)
    mapping = tmp_path / "map.yaml"
    mapping.write_text(MAP_YAML, encoding="utf-8")
    out = tmp_path / "out"
    r = run("-tp", str(target / "dump.json"), "-gp", str(golden / "dump.json"), "-o", str(out),
            "-lm", str(mapping))
    assert r.returncode == 0, r.stdout + r.stderr
    t = table(out)
    expected = {
        MS_WQ + ".input.0": (PT_WQ + ".input.0", "mapped"),
        MS_WQ + ".output.0": (PT_WQ + ".output.0", "mapped"),
        "Functional.matmul.4.forward.input.0": ("Torch.matmul.0.forward.input.0", "mapped"),
        "Functional.matmul.5.forward.output.0": ("Torch.matmul.1.forward.output.0", "mapped"),
        MS_ATTN + ".output.0": (PT_ATTN + ".output.0", "mapped"),
        MS_LAYER + ".input.0": (PT_LAYER + ".input.0", "mapped"),
        "Tensor.add.0.forward.output.0": ("N/A", "none"),
        "Functional.softmax.0.forward.input.0": ("N/A", "none"),
    }
    for npu, (bench, match) in expected.items():
        assert (t[npu]["Bench Name"], t[npu]["Match"]) == (bench, match), npu
    # Equal statistics on both sides: the paired rows' differences are 0; the stack is filled.
    for npu in (MS_WQ + ".output.0", "Functional.matmul.5.forward.output.0"):
        assert [t[npu][c] for c in ("Max diff", "Min diff", "Mean diff", "L2norm diff")] == ["0"] * 4
    assert "model.py, line 10" in t[MS_WQ + ".input.0"]["NPU_Stack_Info"]
    # msprobe's dtype rule compares the dtype texts as written, so MindSpore's Float32 against
    # PyTorch's torch.float32 is its error; numprobe's own Judgment sees one dtype.
    for npu in (MS_WQ + ".output.0", "Functional.matmul.5.forward.output.0"):
        assert t[npu]["Result"] == "error", t[npu]
        assert t[npu]["Err_message"] == '["error: The dtype of NPU and Bench are inconsistent."]'
        assert t[npu]["Judgment"] == "ok", t[npu]
    assert t["Functional.softmax.0.forward.output.0"]["Result"] == "unmatched"

    # Without -lm the renamed modules and the MindSpore matmuls find nothing to pair with.
    plain = tmp_path / "plain"
    r = run("-tp", str(target / "dump.json"), "-gp", str(golden / "dump.json"), "-o", str(plain))
    assert r.returncode == 0, r.stdout + r.stderr
    p = table(plain)
    assert p[MS_WQ + ".input.0"]["Bench Name"] == "N/A"
    assert p["Functional.matmul.4.forward.input.0"]["Bench Name"] == "N/A"


def test_layer_mapping_errors(tmp_path):
    target, golden = make_dumps(tmp_path)
    t, g = str(target / "dump.json"), str(golden / "dump.json")
    out = tmp_path / "o"
    bad = tmp_path / "bad.yaml"
    bad.write_text("Attention:\n  wq: [q_proj\n", encoding="utf-8")
    r = run("-tp", t, "-gp", g, "-o", str(out), "-lm", str(bad))
    assert r.returncode == 2, r.stderr
    assert "bad.yaml: line" in r.stderr
    flat = tmp_path / "flat.yaml"  # a data_mapping-style file: names to names
    flat.write_text("wq: q_proj\n", encoding="utf-8")
    r = run("-tp", t, "-gp", g, "-o", str(out), "-lm", str(flat))
    assert r.returncode == 2, r.stderr
    assert "flat.yaml: line 1: layer class wq must map sub-layer names to names" in r.stderr
    r = run("-tp", t, "-gp", g, "-o", str(out), "-lm", str(tmp_path / "missing.yaml"))
    assert r.returncode == 3, r.stderr
    assert "missing.yaml: no such file" in r.stderr
    good = tmp_path / "map.yaml"
    good.write_text(MAP_YAML, encoding="utf-8")
    os.remove(golden / "construct.json")
    r = run("-tp", t, "-gp", g, "-o", str(out), "-lm", str(good))
    assert r.returncode == 2, r.stderr
    assert "-lm/--layer_mapping needs the construct.json beside dump.json" in r.stderr
    assert str(golden) in r.stderr
    assert not out.exists()


def test_help_lists_layer_mapping():
    r = run("--help")
    assert r.returncode == 0
    assert "-lm, --layer_mapping MAP.yaml" in r.stdout
