"""Memory bounds (issue 17, point 7), with the files of tests/hostile/make_hostile_memory.py: a
small .pt whose storage inflates to 512 MiB or 3.75 GiB, an .npz member the same, and a .pt whose
tensor is a transpose of such a storage. inspect and scan stream a deflated storage: its
statistics come out exact with the inflated bytes never in memory. What still needs the whole
tensor (a transposed view's statistics, diff, compare's tensor metrics) is refused with a clear
error before anything is allocated when it exceeds --max-memory. Bounded memory is asserted with
resource limits, not timings: each run has its address space capped (RLIMIT_AS, 1.5 GiB: an
attempt to inflate a 3.75 GiB storage cannot even be allocated) and its peak RSS, read from
wait4's rusage, must stay far below the storage's size.
Environment (set by ctest): NUMPROBE_BIN, NUMPROBE_SOURCE_DIR.
"""
import csv
import glob
import importlib.util
import json
import math
import os
import resource
import shutil
import subprocess
import tempfile
import threading

import pytest

BIN = os.environ.get("NUMPROBE_BIN", "numprobe")
SOURCE = os.environ.get("NUMPROBE_SOURCE_DIR",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "msprobe")
ADDRESS_SPACE = 3 << 29  # 1.5 GiB
RSS_BOUND_KB = 256 << 10  # 256 MiB, against a 3.75 GiB storage
STREAM_RSS_BOUND_KB = 200 << 10  # 200 MiB, against a 512 MiB storage read whole
STREAM_SEGMENTS = 8  # 512 MiB members for the streaming tests


def load_maker():
    spec = importlib.util.spec_from_file_location(
        "make_hostile_memory", os.path.join(SOURCE, "tests", "hostile", "make_hostile_memory.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def inflating(tmp_path_factory):
    return load_maker().make_all(str(tmp_path_factory.mktemp("inflating")))


@pytest.fixture(scope="module")
def streaming(tmp_path_factory):
    return load_maker().make_all(str(tmp_path_factory.mktemp("streaming")), STREAM_SEGMENTS)


def limited():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run_bounded(*args, timeout=120):
    """Runs numprobe under RLIMIT_AS; returns (exit code, stdout, stderr, peak RSS in KiB), the
    peak from this child's own rusage (wait4)."""
    env = dict(os.environ, NUMPROBE_THREADS="2")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([BIN, *map(str, args)], stdout=out, stderr=err,
                                preexec_fn=limited, env=env)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        hung = not timer.is_alive()
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if hung:
            pytest.fail(f"numprobe {' '.join(map(str, args))} hung (no answer in {timeout} s)")
        out.seek(0)
        err.seek(0)
        text = [f.read().decode("utf-8", "replace") for f in (out, err)]
    return proc.returncode, text[0], text[1], usage.ru_maxrss


def assert_refused(code, err, peak):
    assert code == 3, err
    assert "inflated bytes" in err and "--max-memory" in err, err
    assert "std::bad_alloc" not in err and "terminate" not in err
    assert peak < RSS_BOUND_KB, f"peak RSS {peak} KiB"


def assert_stats(stats, want):
    """inspect's statistics of a member against make_hostile_memory.expected_stats."""
    assert stats["count"] == want["count"]
    assert stats["max"] == want["max"] and stats["min"] == want["min"]
    assert stats["zero_count"] == want["zero_count"]
    assert stats["nan_count"] == 0 and stats["pos_inf_count"] == 0
    assert math.isclose(stats["mean"], want["mean"], rel_tol=1e-9, abs_tol=1e-15), stats
    assert math.isclose(stats["norm"], want["norm"], rel_tol=1e-9), stats


@pytest.mark.parametrize("name", ["inflating.pt", "inflating.npz"])
def test_inspect_streams_a_deflated_storage(streaming, name):
    """512 MiB of float32 inflated chunk by chunk: exact statistics, the member's CRC verified
    (no warning), and the peak RSS of the child far below the storage, even with a --max-memory
    under the storage's size (streaming needs no whole copy)."""
    code, out, err, peak = run_bounded("inspect", "--json", streaming[name], "--max-memory", "64M")
    assert code == 0, err
    assert "CRC" not in err, err
    report = json.loads(out)
    (tensor,) = report["files"][0]["tensors"]
    assert report["files"][0]["warnings"] == []
    assert_stats(tensor["stats"], load_maker().expected_stats(STREAM_SEGMENTS))
    assert peak < STREAM_RSS_BOUND_KB, f"peak RSS {peak} KiB"


def test_a_view_that_needs_the_whole_storage_is_refused_over_max_memory(streaming):
    """A transposed view cannot be read in storage order: it needs the whole storage, so over
    --max-memory it is a clear error (exit 3) naming the file, the member, its size and the
    limit, before anything is allocated; under a limit that fits, it is read."""
    path = streaming["inflating_transposed.pt"]
    code, _, err, peak = run_bounded("inspect", path, "--max-memory", "256M")
    assert code == 3, err
    assert path in err, err
    assert "zip entry 'archive/data/0'" in err, err
    assert "inflates to 536870912 bytes, over the memory limit of 268435456" in err, err
    assert "--max-memory" in err, err
    assert peak < RSS_BOUND_KB, f"peak RSS {peak} KiB"


def test_diff_refuses_a_storage_over_max_memory(inflating):
    code, _, err, peak = run_bounded("diff", inflating["inflating.pt"], inflating["inflating.pt"],
                                     "--max-memory", "1G")
    assert_refused(code, err, peak)


def test_the_default_limit_is_a_fraction_of_physical_memory(inflating):
    """Without --max-memory the limit is half the physical memory: on a machine with less than
    7.5 GiB the 3.75 GiB storage a transposed view needs is refused; with more, the address-space
    cap stops the allocation, which must still be a clear error (exit 3), never a crash."""
    code, _, err, peak = run_bounded("inspect", inflating["inflating_transposed.pt"])
    assert code == 3, err
    assert "terminate" not in err and "Segmentation" not in err
    assert peak < RSS_BOUND_KB, f"peak RSS {peak} KiB"


def make_dump(folder, data_file, segments=None):
    """A one-row tensor-mode dump whose data file is `data_file` (of `segments` segments)."""
    maker = load_maker()
    tensor_dir = folder / "dump_tensor_data"
    tensor_dir.mkdir(parents=True)
    shutil.copy(data_file, tensor_dir / "Functional.relu.0.forward.output.0.pt")
    numel = maker.SEGMENT * (segments or maker.SEGMENTS) // 4
    row = {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [numel],
           "Max": 0.0, "Min": 0.0, "Mean": 0.0, "Norm": 0.0, "requires_grad": False,
           "data_name": "Functional.relu.0.forward.output.0.pt"}
    dump = {"task": "tensor", "level": "L1", "framework": "pytorch", "dump_data_dir":
            str(tensor_dir), "data": {"Functional.relu.0.forward": {
                "input_args": [], "input_kwargs": {}, "output": [row]}}}
    (folder / "dump.json").write_text(json.dumps(dump))
    return folder


def test_scan_streams_a_deflated_tensor_file(streaming, tmp_path):
    """scan takes the exact statistics of a tensor-mode dump's file: a deflated storage is
    streamed, under a --max-memory below its size, with the peak RSS far below it."""
    target = make_dump(tmp_path / "target", streaming["inflating.pt"], STREAM_SEGMENTS)
    code, _, err, peak = run_bounded("scan", target, "-o", tmp_path / "scan", "--max-memory",
                                     "64M")
    assert code in (0, 1), err
    assert "--max-memory" not in err and "CRC" not in err, err
    assert peak < STREAM_RSS_BOUND_KB, f"peak RSS {peak} KiB"
    (report_path,) = glob.glob(str(tmp_path / "scan" / "scan_2*.json"))
    with open(report_path, encoding="utf-8") as f:
        assert json.load(f)["tensor_files_read"] == 1
    (csv_path,) = glob.glob(str(tmp_path / "scan" / "scan_headroom_*.csv"))
    with open(csv_path, encoding="utf-8", newline="") as f:
        (row,) = list(csv.DictReader(f))
    want = load_maker().expected_stats(STREAM_SEGMENTS)
    assert row["Exact"] == "True"
    assert float(row["Max Abs"]) == max(want["max"], -want["min"])


def test_compare_streams_a_pair_and_leaves_a_whole_copy_over_max_memory_out(streaming, tmp_path):
    """compare's tensor metrics stream both deflated storages in lockstep under a --max-memory
    below their size (cosine 1 for a file against itself); a transposed pair needs both whole,
    so over --max-memory its row stays uncompared with a warning naming the file, the member,
    the size and the limit (compare's policy for unreadable files)."""
    target = make_dump(tmp_path / "target", streaming["inflating.pt"], STREAM_SEGMENTS)
    golden = make_dump(tmp_path / "golden", streaming["inflating.pt"], STREAM_SEGMENTS)
    code, _, err, peak = run_bounded("compare", "-tp", target, "-gp", golden, "-o",
                                     tmp_path / "compare", "--max-memory", "64M")
    assert code == 0, err
    assert "--max-memory" not in err, err
    assert peak < STREAM_RSS_BOUND_KB, f"peak RSS {peak} KiB"
    (result,) = glob.glob(str(tmp_path / "compare" / "compare_result_*.csv"))
    with open(result, encoding="utf-8", newline="") as f:
        (row,) = list(csv.DictReader(f))
    assert row["Cosine"] == "1.0" and row["MaxAbsErr"] == "0.0", row

    t2 = make_dump(tmp_path / "t2", streaming["inflating_transposed.pt"], STREAM_SEGMENTS)
    g2 = make_dump(tmp_path / "g2", streaming["inflating_transposed.pt"], STREAM_SEGMENTS)
    code, _, err, peak = run_bounded("compare", "-tp", t2, "-gp", g2, "-o",
                                     tmp_path / "compare2", "--max-memory", "256M")
    assert code in (0, 1), err
    assert "--max-memory" in err and "zip entry 'archive/data/0'" in err, err
    assert "Functional.relu.0.forward.output.0.pt" in err, err
    assert "536870912 bytes, over the memory limit of 268435456" in err, err
    assert peak < RSS_BOUND_KB, f"peak RSS {peak} KiB"


def test_a_file_under_the_limit_is_read(tmp_path):
    sample = None
    for root, _, files in os.walk(FIXTURES):
        for f in files:
            if f.endswith(".pt"):
                sample = os.path.join(root, f)
                break
        if sample:
            break
    assert sample, "no .pt fixture"
    code, out, err, _ = run_bounded("inspect", sample, "--max-memory", "64M")
    assert code == 0, err
    assert out.strip()


@pytest.mark.parametrize("size", ["lots", "0", "-1G", "1.5", "4X", "16E"])
def test_a_bad_size_is_a_usage_error(size):
    r = subprocess.run([BIN, "inspect", "x.pt", "--max-memory", size], capture_output=True,
                       text=True)
    assert r.returncode == 2, (size, r.stderr)
    assert "--max-memory" in r.stderr and "not a size" in r.stderr, r.stderr
