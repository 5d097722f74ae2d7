"""--max-memory (issue 17, point 7): a 4 MB .pt whose storage inflates to 3.75 GiB, and an .npz
member the same (tests/hostile/make_hostile_memory.py), are refused with a clear error before
anything is allocated. Bounded memory is asserted with resource limits, not timings: each run has
its address space capped (RLIMIT_AS, 1.5 GiB: an attempt to inflate the storage cannot even be
allocated) and its peak RSS, read from wait4's rusage, must stay far below the storage's size.
Environment (set by ctest): NUMPROBE_BIN, NUMPROBE_SOURCE_DIR.
"""
import importlib.util
import json
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


def load_maker():
    spec = importlib.util.spec_from_file_location(
        "make_hostile_memory", os.path.join(SOURCE, "tests", "hostile", "make_hostile_memory.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def inflating(tmp_path_factory):
    return load_maker().make_all(str(tmp_path_factory.mktemp("inflating")))


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


@pytest.mark.parametrize("name", ["inflating.pt", "inflating.npz"])
def test_inspect_refuses_a_storage_over_max_memory(inflating, name):
    code, _, err, peak = run_bounded("inspect", inflating[name], "--max-memory", "256M")
    assert_refused(code, err, peak)
    assert "over the remaining budget of 268435456" in err, err


def test_diff_refuses_a_storage_over_max_memory(inflating):
    code, _, err, peak = run_bounded("diff", inflating["inflating.pt"], inflating["inflating.pt"],
                                     "--max-memory", "1G")
    assert_refused(code, err, peak)


def test_the_default_limit_is_a_fraction_of_physical_memory(inflating):
    """Without --max-memory the limit is half the physical memory: on a machine with less than
    7.5 GiB the storage is refused too; with more, the address-space cap stops the allocation,
    which must still be a clear error (exit 3), never a crash."""
    code, _, err, peak = run_bounded("inspect", inflating["inflating.pt"])
    assert code == 3, err
    assert "terminate" not in err and "Segmentation" not in err
    assert peak < RSS_BOUND_KB, f"peak RSS {peak} KiB"


def make_dump(folder, data_file):
    """A one-row tensor-mode dump whose data file is `data_file`."""
    tensor_dir = folder / "dump_tensor_data"
    tensor_dir.mkdir(parents=True)
    shutil.copy(data_file, tensor_dir / "Functional.relu.0.forward.output.0.pt")
    numel = (load_maker().INFLATED // 4)
    row = {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [numel],
           "Max": 0.0, "Min": 0.0, "Mean": 0.0, "Norm": 0.0, "requires_grad": False,
           "data_name": "Functional.relu.0.forward.output.0.pt"}
    dump = {"task": "tensor", "level": "L1", "framework": "pytorch", "dump_data_dir":
            str(tensor_dir), "data": {"Functional.relu.0.forward": {
                "input_args": [], "input_kwargs": {}, "output": [row]}}}
    (folder / "dump.json").write_text(json.dumps(dump))
    return folder


def test_scan_and_compare_leave_the_file_out_with_a_warning(inflating, tmp_path):
    """scan and compare treat an unreadable tensor file as they always have (statistics from
    dump.json, the row uncompared), with the memory limit named in the warning."""
    target = make_dump(tmp_path / "target", inflating["inflating.pt"])
    golden = make_dump(tmp_path / "golden", inflating["inflating.pt"])
    code, _, err, peak = run_bounded("scan", target, "-o", tmp_path / "scan", "--max-memory",
                                     "512M")
    assert code in (0, 1), err
    assert "--max-memory" in err, err
    assert peak < RSS_BOUND_KB, f"peak RSS {peak} KiB"
    code, _, err, peak = run_bounded("compare", "-tp", target, "-gp", golden, "-o",
                                     tmp_path / "compare", "--max-memory", "512M")
    assert code in (0, 1), err
    assert "--max-memory" in err, err
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
