"""Readers of the packed layout (dump_layout "packed", docs/capture.md) on msprobe's own tensor
dumps: the fixture dumps repacked into one container per rank folder (by this test, with torch,
independently of numprobe's writer) compare, scan, inspect and serve exactly as the files do.

Environment (set by ctest): NUMPROBE_BIN, NUMPROBE_SOURCE_DIR.
"""
import glob
import json
import os
import re
import shutil
import subprocess

import pytest

from served import Served

torch = pytest.importorskip("torch")

BIN = os.environ.get("NUMPROBE_BIN", "numprobe")
SOURCE = os.environ.get("NUMPROBE_SOURCE_DIR",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "msprobe")
NAMES = {torch.float64: "f64", torch.float32: "f32", torch.float16: "f16",
         torch.bfloat16: "bf16", torch.int64: "i64", torch.int32: "i32", torch.int16: "i16",
         torch.int8: "i8", torch.uint8: "u8", torch.bool: "bool"}


def pack(src_step, dst_step):
    """Copies a dump tree, replacing each dump_tensor_data/ of .pt files by packed.data +
    packed.index (the tensors' C-order bytes, one index line each)."""
    shutil.copytree(src_step, dst_step)
    for tensor_dir in glob.glob(os.path.join(dst_step, "*", "dump_tensor_data")):
        names = sorted(os.listdir(tensor_dir))
        offset = 0
        with open(os.path.join(tensor_dir, "packed.data"), "wb") as data, \
                open(os.path.join(tensor_dir, "packed.index"), "w") as index:
            index.write('{"numprobe_packed": 1}\n')
            for name in names:
                path = os.path.join(tensor_dir, name)
                t = torch.load(path).contiguous()
                raw = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
                data.write(raw)
                index.write(json.dumps({"name": name, "dtype": NAMES[t.dtype],
                                        "shape": list(t.shape),
                                        "offsets": [offset, offset + len(raw)]}) + "\n")
                offset += len(raw)
                os.remove(path)
    return dst_step


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    root = tmp_path_factory.mktemp("packed")
    out = {}
    for variant in ("bf16", "base"):
        src = os.path.join(FIXTURES, f"dump_tensor_{variant}", "step0")
        files = str(root / "files" / variant / "step0")
        shutil.copytree(src, files)
        out[("files", variant)] = files
        out[("packed", variant)] = pack(src, str(root / "packed" / variant / "step0"))
    return out


def outputs(folder):
    got = {}
    for path in sorted(glob.glob(os.path.join(folder, "*"))):
        name = re.sub(r"\d{8,}", "TS", os.path.basename(path))
        with open(path, "rb") as f:
            # Results name the dump folders: the two layouts' folders differ by that word only.
            got[name] = f.read().replace(b"/packed/", b"/files/")
    return got


def run(args, codes=(0,)):
    proc = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode in codes, proc.stderr
    return proc


def test_compare_and_scan_read_packed_dumps_as_files(dumps, tmp_path):
    results = {}
    for layout in ("files", "packed"):
        run(["compare", "-tp", dumps[(layout, "bf16")], "-gp", dumps[(layout, "base")], "-o",
             str(tmp_path / f"cmp_{layout}")], codes=(0, 1))
        run(["scan", dumps[(layout, "bf16")], "-o", str(tmp_path / f"scan_{layout}")],
            codes=(0, 1))
        results[layout] = (outputs(tmp_path / f"cmp_{layout}"),
                           outputs(tmp_path / f"scan_{layout}"))
    assert results["packed"] == results["files"]
    csv = next(v for k, v in results["files"][0].items() if k.endswith(".csv")).decode()
    assert "Functional.linear.0.forward" in csv and "not found" not in csv
    # msprobe's own dump.json names .pt files that the packed folder does not hold.
    assert not glob.glob(os.path.join(dumps[("packed", "bf16")], "*", "dump_tensor_data", "*.pt"))


def test_inspect_lists_each_entry_as_the_file_it_stands_for(dumps):
    seen = {}
    for layout in ("files", "packed"):
        rank = glob.glob(os.path.join(dumps[(layout, "bf16")], "*"))[0]
        report = json.loads(run(["inspect", "--json", rank]).stdout)
        # The container keeps no device (a .pt file records where the tensor lived).
        seen[layout] = [(os.path.relpath(f["path"], rank),
                         [{k: v for k, v in t.items() if k != "device"} for t in f["tensors"]])
                        for f in report["files"]]
        assert {f["format"] for f in report["files"]} == {"pt" if layout == "files" else "packed"}
    assert seen["packed"] == seen["files"] and len(seen["files"]) > 20


def test_serve_api_tensor_reads_packed_dumps(dumps):
    if subprocess.run([BIN, "serve", "--help"], capture_output=True).returncode != 0:
        pytest.skip("numprobe built without the web UI")
    answers = {}
    for layout in ("files", "packed"):
        s = Served(BIN, [dumps[(layout, "bf16")], dumps[(layout, "base")]])
        try:
            answers[layout] = []
            for row in (0, 10, 20):
                status, body = s.get(f"/api/tensor?run=0&row={row}")
                assert status == 200, body
                answers[layout].append(json.loads(body))
        finally:
            assert s.stop()[0] == 0
    assert answers["packed"] == answers["files"]
    assert answers["files"][1]["target"]["dtype"] == "bf16"
    assert not answers["files"][1]["target"]["error"]
