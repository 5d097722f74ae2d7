"""`mpirun -n N numprobe compare|scan|precheck --plan` (issue 18; docs/cluster.md), on msprobe
dumps and MindSpore graph dumps: the output files are byte-identical to a single-process run, the
cross-rank first divergence (compare) and first anomaly (scan) are the same, a rank that cannot be
read fails the whole run with exit 3 naming it, without hanging, and the subcommands without a
distributed form run once. Run by ctest `cluster.mpi` (label mpi) when numprobe is built with NUMPROBE_WITH_MPI; the launcher is Open MPI's mpiexec,
allowed to run as root here (the environment below) so that no user has to."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from mpi_run import FIXTURES, SOURCE, files_of, numprobe_cmd, run  # noqa: F401


def compare(numprobe, mpiexec, processes, target, golden, out, *extra):
    return run(numprobe_cmd(numprobe, mpiexec, processes, "compare", "-tp", target, "-gp", golden,
                            "-o", out, *extra))


def copy_rank(src, dest):
    shutil.copytree(src, dest)


@pytest.fixture(scope="module")
def stats_tree(tmp_path_factory):
    """Real msprobe statistics dumps laid out as 2 steps x 3 ranks of uneven content and size,
    plus a rank on the target side only."""
    root = tmp_path_factory.mktemp("stats")
    base = os.path.join(FIXTURES, "dump_statistics_base", "step0", "proc17026")
    bf16 = os.path.join(FIXTURES, "dump_statistics_bf16", "step0", "proc17032")
    nan = os.path.join(FIXTURES, "dump_statistics_nan", "step0", "proc18393")
    for step in ("step0", "step1"):
        for rank, target in enumerate([bf16, nan, base] if step == "step0" else [base, bf16, nan]):
            copy_rank(target, root / "target" / step / f"rank{rank}")
            copy_rank(base, root / "golden" / step / f"rank{rank}")
    copy_rank(bf16, root / "target" / "step1" / "rank3")
    return root


@pytest.fixture(scope="module")
def tensor_tree(tmp_path_factory):
    """Real msprobe tensor dumps (dump_tensor_data/*.pt) as 3 ranks."""
    root = tmp_path_factory.mktemp("tensor")
    base = os.path.join(FIXTURES, "dump_tensor_base", "step0", "proc17038")
    bf16 = os.path.join(FIXTURES, "dump_tensor_bf16", "step0", "proc17044")
    for rank, target in enumerate([bf16, base, bf16]):
        copy_rank(target, root / "target" / "step0" / f"rank{rank}")
        copy_rank(base, root / "golden" / "step0" / f"rank{rank}")
    return root


@pytest.fixture(scope="module")
def cluster64(tmp_path_factory):
    """A simulated 64-rank tensor-parallel run with one planted bug (bench/make_cluster_dump.py)."""
    root = tmp_path_factory.mktemp("cluster64")
    gen = subprocess.run([sys.executable, os.path.join(SOURCE, "bench", "make_cluster_dump.py"),
                          str(root), "--ranks", "64", "--ops", "70", "--uneven"],
                         capture_output=True, text=True, check=True)
    planted = re.search(r"planted: (\S+) (\S+)", gen.stdout)
    return root, planted.group(1), planted.group(2)


@pytest.mark.parametrize("tree,extra", [("stats_tree", ["--diff_analyze"]),
                                        ("tensor_tree", ["--diff_analyze"])])
def test_outputs_byte_identical_to_one_process(numprobe, mpiexec, tree, extra, request,
                                               tmp_path):
    root = request.getfixturevalue(tree)
    single = compare(numprobe, None, 0, root / "target", root / "golden", tmp_path / "one", *extra)
    assert single.returncode == 1, single.stderr  # the fixtures diverge
    expected = files_of(tmp_path / "one")
    assert any(k.startswith("divergence") for k in expected)
    assert any(k.startswith("diff_analyze") for k in expected)
    for processes in (2, 3):
        out = tmp_path / f"n{processes}"
        r = compare(numprobe, mpiexec, processes, root / "target", root / "golden", out, *extra)
        assert r.returncode == 1, r.stderr
        assert f"{processes} MPI processes" in r.stdout
        got = files_of(out)
        assert sorted(got) == sorted(expected)
        for name, data in expected.items():
            assert got[name] == data, f"{name} differs with {processes} processes"
        # One summary, from process 0, naming the same ranks in the same order.
        ranks = lambda text: re.findall(r"^(\S+): \w+ mode", text, re.M)
        assert ranks(r.stdout) == ranks(single.stdout)
        assert r.stdout.count("numprobe compare:") == 1


def test_planted_divergence_across_64_ranks(numprobe, mpiexec, cluster64, tmp_path):
    root, planted_rank, planted_op = cluster64
    answers = {}
    for processes in (0, 1, 2):
        out = tmp_path / f"n{processes}"
        r = compare(numprobe, mpiexec, processes, root / "target", root / "golden", out)
        assert r.returncode == 1, r.stderr
        line = re.search(r"^earliest divergence across ranks: (\S+) (\S+)$", r.stdout, re.M)
        assert line, r.stdout[-2000:]
        answers[processes] = (line.group(1), line.group(2))
        (div,) = [f for f in os.listdir(out) if f.startswith("divergence_")]
        with open(out / div) as f:
            doc = json.load(f)
        assert (doc["first"]["scope"] + "/" + doc["first"]["rank"]) == planted_rank
        assert doc["first"]["op"]["op_name"] == planted_op
        # Every other rank diverges later, at the all_reduce that carried the error to it.
        others = [r_ for r_ in doc["ranks"] if r_["rank"] != planted_rank.split("/")[1]]
        assert len(others) == 63
        assert all(o["first"]["op_name"].startswith("Distributed.all_reduce") for o in others)
        if processes:
            assert files_of(out) == files_of(tmp_path / "n0")
    assert answers[0] == answers[1] == answers[2] == (planted_rank, planted_op)


def with_truncated_rank(stats_tree, tmp_path):
    """A copy of the statistics tree whose target step1/rank2 dump.json is cut short."""
    root = tmp_path / "tree"
    shutil.copytree(stats_tree, root)
    with open(root / "target" / "step1" / "rank2" / "dump.json", "w") as f:
        f.write('{"task": "statistics", "data": {"Functional.x.0.forward": [')  # truncated
    return root


def test_unreadable_rank_fails_the_whole_run(numprobe, mpiexec, stats_tree, tmp_path):
    root = with_truncated_rank(stats_tree, tmp_path)
    single = compare(numprobe, None, 0, root / "target", root / "golden", tmp_path / "one")
    assert single.returncode == 3
    for processes in (2, 3):
        out = tmp_path / f"n{processes}"
        r = compare(numprobe, mpiexec, processes, root / "target", root / "golden", out)
        assert r.returncode == 3, r.stdout + r.stderr
        errors = [l for l in r.stderr.splitlines() if l.startswith("numprobe: error:")]
        assert len(errors) == 1, r.stderr  # printed once, by process 0
        assert "step1/rank2" in errors[0] or "rank2" in errors[0]
        assert errors == [l for l in single.stderr.splitlines() if l.startswith("numprobe: error:")]
        assert not os.path.exists(out)  # nothing written: everything is compared first


def test_plain_run_reports_the_feature(numprobe):
    r = subprocess.run([numprobe, "--version"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "mpi: on" in r.stdout


# ---- scan and precheck --plan ----

@pytest.mark.parametrize("tree,extra", [("stats_tree", []), ("tensor_tree", []),
                                        ("tensor_tree", ["--no-tensors"])])
def test_scan_outputs_byte_identical_to_one_process(numprobe, mpiexec, tree, extra, request,
                                                    tmp_path):
    root = request.getfixturevalue(tree)
    single = run(numprobe_cmd(numprobe, mpiexec, 0, "scan", root / "target", "-o",
                              tmp_path / "one", *extra))
    assert single.returncode in (0, 1), single.stderr
    expected = files_of(tmp_path / "one")
    assert any(k.startswith("scan_headroom") for k in expected)
    summary = lambda text: [l for l in text.splitlines()
                            if not l.startswith(("Wrote ", "numprobe scan:"))
                            and "MPI processes" not in l]
    for processes in (1, 2, 3):
        out = tmp_path / f"n{processes}"
        r = run(numprobe_cmd(numprobe, mpiexec, processes, "scan", root / "target", "-o", out,
                             *extra))
        assert r.returncode == single.returncode, r.stdout + r.stderr
        assert f"{processes} MPI processes" in r.stdout
        assert r.stdout.count("numprobe scan:") == 1  # process 0 alone prints
        got = files_of(out)
        assert sorted(got) == sorted(expected)
        for name, data in expected.items():
            assert got[name] == data, f"{name} differs with {processes} processes"
        assert summary(r.stdout) == summary(single.stdout)
        warnings = lambda text: [l for l in text.splitlines() if l.startswith("numprobe: warn")]
        assert warnings(r.stderr) == warnings(single.stderr)  # from process 0 only


def test_stats_tree_scan_finds_the_nan(numprobe, stats_tree, tmp_path):
    """The fixture the identity test uses does exercise the first-anomaly path."""
    r = run(numprobe_cmd(numprobe, None, 0, "scan", stats_tree / "target", "-o", tmp_path))
    assert r.returncode == 1
    assert re.search(r"^First anomaly: \S+", r.stdout, re.M)
    assert "First anomaly: none" not in r.stdout


@pytest.fixture(scope="module")
def nan64(tmp_path_factory):
    """A simulated 64-rank run, uneven ranks, with NaN planted on one rank (make_cluster_dump.py)."""
    root = tmp_path_factory.mktemp("nan64")
    gen = subprocess.run([sys.executable, os.path.join(SOURCE, "bench", "make_cluster_dump.py"),
                          str(root), "--ranks", "64", "--ops", "70", "--uneven", "--plant-nan",
                          "--plant-rank", "23"],
                         capture_output=True, text=True, check=True)
    planted = re.search(r"planted: step0/(rank\d+) (\S+)", gen.stdout)
    return root, planted.group(1), planted.group(2)


def test_planted_nan_across_64_ranks(numprobe, mpiexec, nan64, tmp_path):
    root, planted_rank, planted_op = nan64
    for processes in (0, 1, 2):
        out = tmp_path / f"n{processes}"
        r = run(numprobe_cmd(numprobe, mpiexec, processes, "scan", root / "target", "-o", out))
        assert r.returncode == 1, r.stderr
        line = re.search(r"^First anomaly: (\S+)  \(step 0, (rank\d+)\)$", r.stdout, re.M)
        assert line, r.stdout[-2000:]
        assert (line.group(2), line.group(1)) == (planted_rank, planted_op)
        (doc_name,) = [f for f in os.listdir(out) if re.match(r"scan_\d{14}\.json$", f)]
        with open(out / doc_name) as f:
            doc = json.load(f)
        assert json.dumps(doc).count(planted_op) >= 1
        if processes:
            assert files_of(out) == files_of(tmp_path / "n0")


def test_unreadable_rank_fails_the_whole_scan(numprobe, mpiexec, stats_tree, tmp_path):
    root = with_truncated_rank(stats_tree, tmp_path)
    single = run(numprobe_cmd(numprobe, mpiexec, 0, "scan", root / "target", "-o",
                              tmp_path / "one"))
    assert single.returncode == 3
    single_errors = [l for l in single.stderr.splitlines() if l.startswith("numprobe: error:")]
    assert len(single_errors) == 1 and "rank2" in single_errors[0]
    for processes in (2, 3):
        out = tmp_path / f"n{processes}"
        # run() has a timeout: a hang fails the test.
        r = run(numprobe_cmd(numprobe, mpiexec, processes, "scan", root / "target", "-o", out))
        assert r.returncode == 3, r.stdout + r.stderr
        errors = [l for l in r.stderr.splitlines() if l.startswith("numprobe: error:")]
        assert errors == single_errors  # printed once, by process 0, the same error
        assert not os.path.exists(out)


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_precheck_plan_byte_identical_to_one_process(numprobe, mpiexec, stats_tree, dtype,
                                                     tmp_path):
    target = stats_tree / "target"
    single = run(numprobe_cmd(numprobe, mpiexec, 0, "precheck", "--plan", dtype, target, "-o",
                              tmp_path / "one"))
    assert single.returncode in (0, 1), single.stderr
    expected = files_of(tmp_path / "one")
    assert len(expected) == 2  # .json and .csv
    for processes in (1, 2, 3):
        out = tmp_path / f"n{processes}"
        r = run(numprobe_cmd(numprobe, mpiexec, processes, "precheck", "--plan", dtype, target,
                             "-o", out))
        assert r.returncode == single.returncode, r.stdout + r.stderr
        assert files_of(out) == expected, f"differs with {processes} processes"
        # One summary, from process 0.
        assert r.stdout.replace(str(out), "OUT") == single.stdout.replace(str(tmp_path / "one"), "OUT")


# ---- tensor pairs split within a large rank ----

def make_tensor_dump(dest, ops, elements=4096):
    """bench/make_tensor_dump.py: a synthetic tensor-mode dump, rank r holding ops[r] API calls."""
    subprocess.run([sys.executable, os.path.join(SOURCE, "bench", "make_tensor_dump.py"),
                    str(dest), "--ops", ",".join(str(n) for n in ops), "--elements",
                    str(elements)], capture_output=True, text=True, check=True)
    return dest


@pytest.fixture(scope="module")
def single_tensor_rank(tmp_path_factory):
    """One rank pair of the real msprobe tensor dumps: the whole compare is one rank."""
    root = tmp_path_factory.mktemp("single_tensor")
    copy_rank(os.path.join(FIXTURES, "dump_tensor_bf16", "step0", "proc17044"),
              root / "target" / "step0" / "rank0")
    copy_rank(os.path.join(FIXTURES, "dump_tensor_base", "step0", "proc17038"),
              root / "golden" / "step0" / "rank0")
    return root


@pytest.fixture(scope="module")
def uneven_tensor_tree(tmp_path_factory):
    """Three tensor-mode ranks, rank0 eight times the others' size."""
    return make_tensor_dump(tmp_path_factory.mktemp("uneven_tensor"), [24, 3, 3])


def bytes_per_process(stdout):
    line = re.search(r"^\d+ MPI processes; bytes read per process: ([\d, ]+)$", stdout, re.M)
    assert line, stdout[-2000:]
    return [int(b) for b in line.group(1).split(",")]


def summary_of(text, out):
    """stdout or stderr without the MPI line, the output folder and the file timestamps."""
    text = text.replace(str(out), "OUT")
    return [re.sub(r"_\d{14}\.", ".", l) for l in text.splitlines() if "MPI processes" not in l]


def share_by_bytes(sizes, processes):
    """byte_shares.h's ShareByBytes: largest first (stable), each to the least loaded process."""
    loads = [(0, p) for p in range(processes)]
    owner = [0] * len(sizes)
    for item in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
        load, p = min(loads)
        loads.remove((load, p))
        owner[item] = p
        loads.append((load + sizes[item], p))
    return owner


@pytest.mark.parametrize("tree", ["single_tensor_rank", "uneven_tensor_tree"])
def test_split_rank_outputs_byte_identical_to_one_process(numprobe, mpiexec, tree, request,
                                                          tmp_path):
    root = request.getfixturevalue(tree)
    single = compare(numprobe, None, 0, root / "target", root / "golden", tmp_path / "one",
                     "--diff_analyze")
    assert single.returncode == 1, single.stderr  # the dumps diverge
    expected = files_of(tmp_path / "one")
    assert any(k.startswith("divergence") for k in expected)
    for processes in (2, 3):
        out = tmp_path / f"n{processes}"
        r = compare(numprobe, mpiexec, processes, root / "target", root / "golden", out,
                    "--diff_analyze")
        assert r.returncode == 1, r.stderr
        got = files_of(out)
        assert sorted(got) == sorted(expected)
        for name, data in expected.items():
            assert got[name] == data, f"{name} differs with {processes} processes"
        assert summary_of(r.stdout, out) == summary_of(single.stdout, tmp_path / "one")
        warnings = lambda text: [l for l in text.splitlines() if l.startswith("numprobe: warn")]
        assert warnings(r.stderr) == warnings(single.stderr)
        # The large rank's tensor pairs were spread: every process read some of its tensor files
        # (with whole ranks only, a single rank leaves all but one process at 0 bytes).
        loads = bytes_per_process(r.stdout)
        assert len(loads) == processes and all(b > 0 for b in loads), r.stdout
        if tree == "single_tensor_rank":
            # Balanced by bytes: the heaviest within a tenth of the lightest's total.
            assert max(loads) - min(loads) < sum(loads) // 10, loads


def tensor_jobs(rank_dir):
    """The tensor pairs of a rank of make_tensor_dump.py, in row order: (target file, bytes)."""
    with open(rank_dir("target") / "dump.json") as f:
        data = json.load(f)["data"]
    jobs = []
    for entry in data.values():
        for arg in entry["input_args"] + entry["output"]:
            name = arg["data_name"]
            files = [rank_dir(side) / "dump_tensor_data" / name for side in ("target", "golden")]
            jobs.append((files[0], sum(os.path.getsize(p) for p in files)))
    return jobs


@pytest.mark.parametrize("processes", [2, 3])
def test_unreadable_tensor_file_on_another_process(numprobe, mpiexec, processes, tmp_path):
    """Tensor files that cannot be read, in the shares of the last process and of process 0:
    their rows are unsupported with the same warnings, in the same order, and the same exit code
    as in one process, and nothing hangs."""
    root = make_tensor_dump(tmp_path / "tree", [12])
    rank_dir = lambda side: root / side / "step0" / "rank0"
    jobs = tensor_jobs(rank_dir)
    owner = share_by_bytes([b for _, b in jobs], processes)
    # The last process's last pair and process 0's first: two row warnings, in row order.
    victims = [[f for (f, _), p in zip(jobs, owner) if p == processes - 1][-1],
               next(f for (f, _), p in zip(jobs, owner) if p == 0)]
    for victim in victims:
        size = os.path.getsize(victim)
        with open(victim, "wb") as f:  # unreadable, the same size: the shares do not move
            f.write(b"\0" * size)
    single = compare(numprobe, None, 0, root / "target", root / "golden", tmp_path / "one")
    assert single.returncode == 1, single.stderr
    for victim in victims:
        assert os.path.basename(victim) in single.stderr  # the row warnings name the files
    out = tmp_path / "n"
    r = compare(numprobe, mpiexec, processes, root / "target", root / "golden", out)
    assert r.returncode == single.returncode, r.stdout + r.stderr
    assert files_of(out) == files_of(tmp_path / "one")
    assert summary_of(r.stdout, out) == summary_of(single.stdout, tmp_path / "one")
    warnings = lambda text: [l for l in text.splitlines() if l.startswith("numprobe: warn")]
    assert warnings(r.stderr) == warnings(single.stderr)
    # The shares were the ones computed above (so the file was in the last process's): each
    # process read its tensor pairs' bytes plus both dump.json files.
    common = sum(os.path.getsize(rank_dir(side) / "dump.json") for side in ("target", "golden"))
    expected = [common + sum(b for (_, b), o in zip(jobs, owner) if o == p)
                for p in range(processes)]
    assert bytes_per_process(r.stdout) == expected


def test_unreadable_split_rank_fails_the_whole_run(numprobe, mpiexec, single_tensor_rank,
                                                   tmp_path):
    """A large rank whose dump.json cannot be read: every process meets the error while pairing
    its rows; the run fails once with the single process's error, exit 3, nothing written."""
    root = tmp_path / "tree"
    shutil.copytree(single_tensor_rank, root)
    with open(root / "target" / "step0" / "rank0" / "dump.json", "w") as f:
        f.write('{"task": "tensor", "data": {"Functional.x.0.forward": [')  # truncated
    single = compare(numprobe, None, 0, root / "target", root / "golden", tmp_path / "one")
    assert single.returncode == 3
    single_errors = [l for l in single.stderr.splitlines() if l.startswith("numprobe: error:")]
    assert len(single_errors) == 1
    for processes in (2, 3):
        out = tmp_path / f"n{processes}"
        r = compare(numprobe, mpiexec, processes, root / "target", root / "golden", out)
        assert r.returncode == 3, r.stdout + r.stderr
        errors = [l for l in r.stderr.splitlines() if l.startswith("numprobe: error:")]
        assert errors == single_errors
        assert not os.path.exists(out)


# ---- MindSpore graph dumps ----

sys.path.insert(0, os.path.join(SOURCE, "tests", "cli"))
from graph_trees import make_tree  # noqa: E402  (tests/cli/graph_trees.py)


@pytest.fixture(scope="module")
def graph_trees(tmp_path_factory):
    root = tmp_path_factory.mktemp("graph")
    for mode in ("statistic", "npy"):
        for side in ("target", "golden"):
            make_tree(root / mode / side, mode, side)
    # Uneven units: one more (rank, step) folder on the target side only, named as missing.
    make_tree(root / "extra", "statistic", "target")
    shutil.copytree(root / "extra" / "rank_1", root / "statistic" / "target" / "rank_7")
    return root


def without_process_line(text):
    """stdout lines but the MPI summary, {ts} taken out of file names."""
    return [re.sub(r"_\d{14}\.", ".", l) for l in text.splitlines() if "MPI processes" not in l]


@pytest.mark.parametrize("mode,xlsx", [("statistic", []), ("npy", []), ("statistic", ["--xlsx"])])
def test_graph_compare_byte_identical_to_one_process(numprobe, mpiexec, graph_trees, mode, xlsx,
                                                     tmp_path):
    t, g = graph_trees / mode / "target", graph_trees / mode / "golden"
    single = run(numprobe_cmd(numprobe, mpiexec, 0, "compare", "-tp", t, "-gp", g, "-o",
                              tmp_path / "one", *xlsx))
    assert single.returncode == 1, single.stdout + single.stderr  # the planted Inf
    expected = files_of(tmp_path / "one")
    assert len(expected) == 4  # (rank, step) 0/0, 0/1, 1/0, 1/1
    if mode == "statistic":
        assert "rank 7 step 0: only in the target dump; not compared" in single.stdout
    for processes in (2, 3):
        out = tmp_path / f"n{processes}"
        r = run(numprobe_cmd(numprobe, mpiexec, processes, "compare", "-tp", t, "-gp", g, "-o",
                             out, *xlsx))
        assert r.returncode == single.returncode, r.stdout + r.stderr
        assert f"{processes} MPI processes" in r.stdout
        assert files_of(out) == expected, f"differs with {processes} processes"
        assert (without_process_line(r.stdout.replace(str(out), "OUT")) ==
                without_process_line(single.stdout.replace(str(tmp_path / "one"), "OUT")))


def test_graph_scan_same_with_processes(numprobe, mpiexec, graph_trees, tmp_path):
    for mode in ("statistic", "npy"):
        t = graph_trees / mode / "target"
        single = run(numprobe_cmd(numprobe, mpiexec, 0, "scan", t, "-o", tmp_path / "one"))
        assert single.returncode == 1, single.stdout + single.stderr
        assert "First anomaly: Add.Default--network-Add-op21  (rank 1, iteration 1" in single.stdout
        for processes in (2, 3):
            r = run(numprobe_cmd(numprobe, mpiexec, processes, "scan", t, "-o", tmp_path / "n"))
            assert r.returncode == 1, r.stdout + r.stderr
            assert r.stdout.count("numprobe scan:") == 1  # process 0 alone prints
            assert without_process_line(r.stdout) == without_process_line(single.stdout)


def test_graph_unreadable_unit_fails_the_whole_run(numprobe, mpiexec, graph_trees, tmp_path):
    root = tmp_path / "t"
    shutil.copytree(graph_trees / "statistic" / "target", root)
    (root / "rank_1" / "Net" / "0" / "1" / "statistic.csv").write_text(
        "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot\nAdd,x,1,0,notatime,input,0\n")
    g = graph_trees / "statistic" / "golden"
    single = run(numprobe_cmd(numprobe, mpiexec, 0, "compare", "-tp", root, "-gp", g, "-o",
                              tmp_path / "one"))
    assert single.returncode == 3 and "notatime" in single.stderr, single.stderr
    for sub in (["compare", "-tp", root, "-gp", g, "-o", tmp_path / "n3"],
                ["scan", root, "-o", tmp_path / "s"]):
        r = run(numprobe_cmd(numprobe, mpiexec, 3, *sub))  # run() times out on a hang
        assert r.returncode == 3, r.stdout + r.stderr
        errors = [l for l in r.stderr.splitlines() if l.startswith("numprobe: error:")]
        assert len(errors) == 1 and "notatime" in errors[0], r.stderr
    assert not os.path.exists(tmp_path / "n3")  # nothing written: every unit is compared first


# ---- subcommands without a distributed form ----

def test_other_subcommands_run_once(numprobe, mpiexec, stats_tree, tmp_path):
    """diff, inspect, merge, report...: process 0 alone runs them, so one set of files."""
    dump = stats_tree / "target" / "step0" / "rank0" / "dump.json"
    single = run(numprobe_cmd(numprobe, mpiexec, 0, "inspect", dump))
    r = run(numprobe_cmd(numprobe, mpiexec, 3, "inspect", dump))
    assert r.returncode == single.returncode == 0, r.stderr
    assert r.stdout == single.stdout and r.stdout
    cmp = tmp_path / "cmp"
    assert compare(numprobe, None, 0, stats_tree / "target", stats_tree / "golden",
                   cmp).returncode in (0, 1)
    r = run(numprobe_cmd(numprobe, mpiexec, 3, "report", cmp, "-o", tmp_path / "r.html"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("wrote") <= 1 and os.path.getsize(tmp_path / "r.html") > 0
    assert sorted(os.listdir(tmp_path)) == ["cmp", "r.html"]  # no temporary copies left behind
