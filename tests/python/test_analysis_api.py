"""numprobe.scan / diff / inspect / load and the error classes, each against the `numprobe`
subcommand on the same inputs: save() writes the files the command writes (byte for byte), and an
error carries the exit code the command gives it."""
import gc
import glob
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

import numprobe

SOURCE = os.environ.get("NUMPROBE_SOURCE_DIR",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "msprobe")
NUMPROBE_BIN = os.environ.get("NUMPROBE_BIN", "")

sys.path.insert(0, os.path.join(SOURCE, "tests", "golden"))
from gen_diff import write_ckpt, write_safetensors  # noqa: E402 (the golden files' writers)

needs_cli = pytest.mark.skipif(not NUMPROBE_BIN, reason="NUMPROBE_BIN (the numprobe command) unset")


def cli(*args, cwd=None):
    return subprocess.run([NUMPROBE_BIN, *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, check=False)


def files_by_name(folder, timestamp=None):
    """{relative path with the {ts} of file names replaced by TS: bytes} of a folder."""
    out = {}
    for path in sorted(glob.glob(os.path.join(folder, "**", "*"), recursive=True)):
        if os.path.isfile(path):
            rel = os.path.relpath(path, folder)
            rel = re.sub(r"\d{14}" if timestamp is None else re.escape(timestamp), "TS", rel)
            with open(path, "rb") as f:
                out[rel] = f.read()
    return out


# ---- errors ----

def test_error_hierarchy():
    for name in ("UsageError", "NotFoundError", "FileAccessError", "FormatError",
                 "UnsupportedError", "RejectedError", "InternalError"):
        cls = getattr(numprobe, name)
        assert issubclass(cls, numprobe.Error), name
    assert issubclass(numprobe.UnsupportedError, numprobe.FormatError)
    assert issubclass(numprobe.UsageError, ValueError)
    assert issubclass(numprobe.NotFoundError, FileNotFoundError)
    assert issubclass(numprobe.FileAccessError, OSError)
    assert numprobe.UsageError.code == 2 and numprobe.FormatError.code == 3


@needs_cli
def test_not_found_error_matches_cli(tmp_path):
    missing = tmp_path / "missing.npy"
    with pytest.raises(numprobe.NotFoundError) as info:
        numprobe.inspect(missing)
    e = info.value
    assert e.kind == "not_found" and e.code == 3
    assert isinstance(e, numprobe.Error) and isinstance(e, FileNotFoundError)
    assert not str(e).startswith("not_found"), "no hand-typed prefix"
    assert str(missing) in str(e)
    assert cli("inspect", missing).returncode == e.code


@needs_cli
def test_format_error_matches_cli(tmp_path):
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"\x93NUMPY\x01\x00\xff\xff{'descr': '<f4'")  # header longer than the file
    with pytest.raises(numprobe.FormatError) as info:
        numprobe.load(bad)
    e = info.value
    assert e.kind in ("corrupt", "out_of_range") and e.code == 3
    assert not str(e).startswith(e.kind)
    run = cli("inspect", bad)
    assert run.returncode == e.code
    assert str(e) in run.stderr  # the command prints the same message


@needs_cli
def test_usage_error_matches_cli():
    dump = os.path.join(FIXTURES, "dump_statistics_nan")
    with pytest.raises(numprobe.UsageError) as info:
        numprobe.scan(dump, dtype="fp7")
    e = info.value
    assert e.kind == "invalid_argument" and e.code == 2 and isinstance(e, ValueError)
    assert cli("scan", dump, "--dtype", "fp7").returncode == e.code
    with pytest.raises(numprobe.UsageError):
        numprobe.scan(dump, watch="no_such_watchpoint")
    with pytest.raises(numprobe.UsageError):
        numprobe.diff(dump, dump, rtol=-1)


def test_python_raised_errors_are_classes():
    # numprobe.stats refuses a non-CPU tensor with UsageError (code 2), not a prefixed message.
    class FakeCuda:
        class device:  # noqa: N801 (mimics torch.device)
            type = "cuda"

    with pytest.raises(numprobe.UsageError) as info:
        numprobe.stats(FakeCuda())
    assert info.value.code == 2 and info.value.kind == "invalid_argument"


# ---- scan ----

@needs_cli
@pytest.mark.parametrize("dump", ["dump_statistics_nan", "dump_tensor_base"])
def test_scan_save_matches_cli(tmp_path, dump):
    path = os.path.join(FIXTURES, dump)
    result = numprobe.scan(path)
    written = result.save(tmp_path / "py", timestamp="20250101000000")
    assert all(os.path.isfile(p) for p in written)
    run = cli("scan", path, "-o", tmp_path / "cli")
    assert run.returncode == (1 if result.findings else 0), run.stderr
    ours = files_by_name(tmp_path / "py", "20250101000000")
    theirs = files_by_name(tmp_path / "cli")
    assert ours.keys() == theirs.keys()
    for name in ours:
        assert ours[name] == theirs[name], name
    doc = json.loads(ours["scan_TS.json"])
    assert (result.entries, result.tensors) == (doc["entries"], doc["tensors"])


@needs_cli
def test_scan_finds_the_planted_nan(tmp_path):
    path = os.path.join(FIXTURES, "dump_statistics_nan")
    result = numprobe.scan(path)
    first = result.first_anomaly
    assert result.findings and first["op_name"] == "Tensor.__mul__.0.forward"
    assert first["kind"] == "compute"
    # The command's console summary names the same op.
    assert f"First anomaly: {first['op_name']}" in cli("scan", path, "-o", tmp_path).stdout
    # A folder that cannot be created: the command and save() fail alike.
    blocker = tmp_path / "file"
    blocker.write_text("")
    run = cli("scan", path, "-o", blocker / "sub")
    with pytest.raises(numprobe.Error) as info:
        result.save(blocker / "sub")
    assert run.returncode == info.value.code == 3


def test_scan_options():
    path = os.path.join(FIXTURES, "dump_statistics_nan")
    only_bf16 = numprobe.scan(path, dtype="bf16", watch="none")
    assert [h["target"] for h in only_bf16.headroom] == ["bf16"]
    assert only_bf16.hits == []
    with pytest.raises(numprobe.UsageError):
        numprobe.scan(path, no_such_threshold=1.0)


# ---- diff ----

def make_weights(tmp_path):
    torch.manual_seed(0)
    a = {"fc1.weight": torch.randn(4, 3), "fc1.bias": torch.randn(4),
         "fc2.weight": torch.randn(2, 4), "bn.num_batches_tracked": torch.tensor(3)}
    b = {k: v.clone() for k, v in a.items()}
    b["fc2.weight"][1, 2] += 0.5  # the planted difference
    del b["bn.num_batches_tracked"]
    b["extra"] = torch.zeros(5)
    torch.save(a, tmp_path / "a.pt")
    np.savez(tmp_path / "b.npz", **{k: v.numpy() for k, v in b.items()})
    return tmp_path / "a.pt", tmp_path / "b.npz"


@needs_cli
def test_diff_save_matches_cli(tmp_path):
    a, b = make_weights(tmp_path)
    result = numprobe.diff(a, b, rtol=1e-5, atol=1e-6)
    result.save(tmp_path / "py")
    run = cli("diff", a, b, "--rtol", "1e-5", "--atol", "1e-6", "-o", tmp_path / "cli")
    assert run.returncode == (0 if result.clean else 1)
    assert files_by_name(tmp_path / "py") == files_by_name(tmp_path / "cli")
    rows = {r["name_a"]: r for r in result}
    assert rows["fc2.weight"]["status"] == "differs"
    assert rows["fc2.weight"]["max_abs"] == pytest.approx(0.5, rel=1e-6)
    assert rows["fc1.weight"]["status"] == "equal" and rows["fc1.weight"]["cosine"] == 1.0
    assert [r["name_a"] for r in result.differing()] == ["fc2.weight"]
    assert [t["name"] for t in result.only_b] == ["extra"]
    assert not result.clean
    frame = result.to_pandas()
    assert list(frame["name_a"]) == [r["name_a"] for r in result.rows]


# ---- inspect ----

@needs_cli
def test_inspect_save_matches_cli_json(tmp_path):
    a, b = make_weights(tmp_path)
    for path in (a, b, os.path.join(FIXTURES, "dump_tensor_base")):
        result = numprobe.inspect(path)
        saved = result.save(tmp_path / "inspect.json")
        run = cli("inspect", path, "--json")
        assert run.returncode == 0
        with open(saved, encoding="utf-8") as f:
            assert f.read() == run.stdout
        assert str(result) == cli("inspect", path).stdout
    doc = numprobe.inspect(a).to_dict()
    assert doc == json.loads(cli("inspect", a, "--json").stdout)


# ---- load ----

def test_load_numpy_views_without_copy(tmp_path):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    i = np.arange(5, dtype=np.int64)
    np.save(tmp_path / "x.npy", x)
    np.savez(tmp_path / "xs.npz", x=x, i=i)
    write_safetensors(tmp_path / "x.safetensors", [("x", x), ("i", i)])
    write_ckpt(tmp_path / "x.ckpt", [("x", x), ("i", i)])
    for name in ("x.npy", "xs.npz", "x.safetensors", "x.ckpt"):
        loaded = numprobe.load(tmp_path / name)
        arr = loaded["x"]
        np.testing.assert_array_equal(arr, x)
        assert arr.dtype == np.float32
        assert not arr.flags.writeable and not arr.flags.owndata, name  # a view of the map
        if name != "x.npy":
            np.testing.assert_array_equal(loaded["i"], i)
    # An array keeps the file's memory alive after everything else is gone.
    arr = numprobe.load(tmp_path / "x.safetensors")["x"]
    gc.collect()
    np.testing.assert_array_equal(arr, x)


def test_load_pt_and_torch(tmp_path):
    torch.manual_seed(1)
    state = {"w": torch.randn(3, 4), "w_t": torch.randn(4, 3).t(), "h": torch.randn(5).bfloat16(),
             "n": torch.tensor([1, 2, 3])}
    torch.save(state, tmp_path / "s.pt")
    arrays = numprobe.load(tmp_path / "s.pt")
    assert list(arrays) == list(state)
    np.testing.assert_array_equal(arrays["w"], state["w"].numpy())
    np.testing.assert_array_equal(arrays["w_t"], state["w_t"].numpy())  # strided view
    np.testing.assert_array_equal(arrays["h"], state["h"].float().numpy())  # bf16 -> float32
    assert arrays["h"].dtype == np.float32
    tensors = numprobe.load(tmp_path / "s.pt", as_torch=True)
    for k, v in state.items():
        assert tensors[k].dtype == v.dtype, k
        assert torch.equal(tensors[k], v), k
    tensors["w"] += 1  # torch tensors are writable copies
    assert torch.equal(numprobe.load(tmp_path / "s.pt", as_torch=True)["w"], state["w"])


def test_load_refuses_pickled_code(tmp_path):
    torch.save(torch.nn.Linear(2, 2), tmp_path / "model.pt")
    with pytest.raises(numprobe.RejectedError) as info:
        numprobe.load(tmp_path / "model.pt")
    assert info.value.code == 3
    inert = numprobe.load(tmp_path / "model.pt", inert=True)
    assert any(k.endswith("weight") for k in inert)


# ---- the type stub ----

def test_stub_names_every_binding():
    import ast

    import numprobe._numprobe as module

    stub = os.path.join(os.path.dirname(module.__file__), "_numprobe.pyi")
    assert os.path.isfile(stub), "the stub is installed beside the module"
    with open(stub, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    declared = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            declared.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            declared.add(node.target.id)
        elif isinstance(node, ast.Assign):
            declared.update(t.id for t in node.targets if isinstance(t, ast.Name))
    bound = {n for n in dir(module) if not n.startswith("__")}
    declared.discard("_Path")  # the stub's own alias
    assert bound == declared
