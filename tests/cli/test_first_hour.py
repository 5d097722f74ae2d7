"""A newcomer's first hour (issue 19): the command line points the right way. A mistyped
subcommand or option is named, with the nearest spelling; bare `numprobe` lists what it can do; a
weight file given to compare points to diff and a dump tree given to diff points to compare; a
whole pickled model is read by `diff --inert`; the reference comes second everywhere and the
output says so; scan counts steps and ranks apart.

Environment (set by ctest): NUMPROBE_BIN, NUMPROBE_GOLDEN_DIR, NUMPROBE_SOURCE_DIR.
"""
import json
import os
import re
import shutil
import subprocess

import pytest

PY = "/usr/bin/python3"


@pytest.fixture(scope="module")
def fixtures(source_dir):
    return os.path.join(source_dir, "tests", "fixtures", "msprobe")


@pytest.fixture(scope="module")
def gd(golden_dir):
    return os.path.join(golden_dir, "diff")


def subcommands(run):
    """The subcommands as `numprobe --help` lists them."""
    text = run("--help").stdout
    section = text[text.index("Subcommands:"):]
    return [line.split()[0] for line in section.splitlines()[1:] if line.startswith("  ")]


def test_mistyped_subcommand_is_named_with_the_nearest(run):
    r = run("comapre", "-tp", "a", "-gp", "b")
    assert r.returncode == 2
    assert r.stdout == ""
    first = r.stderr.splitlines()[0]
    assert first == "numprobe: unknown subcommand 'comapre'; did you mean 'compare'?"
    assert "A subcommand is required" not in r.stderr
    r = run("sacn", "dump")
    assert r.returncode == 2 and "did you mean 'scan'?" in r.stderr
    # Nothing near: named, no guess, and the list of what exists.
    r = run("frobnicate")
    assert r.returncode == 2
    assert r.stderr.splitlines()[0] == "numprobe: unknown subcommand 'frobnicate'"
    assert "  compare " in r.stderr


def test_bare_numprobe_lists_the_subcommands_one_line_each(run):
    names = subcommands(run)
    assert {"inspect", "compare", "scan", "diff", "config-check", "run"} <= set(names)
    r = run()
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    for name in names:
        mine = [line for line in lines if line.split()[:1] == [name]]
        assert len(mine) == 1, (name, r.stderr)
        assert len(mine[0]) <= 100, mine[0]
        assert len(mine[0].split()) > 2, f"{name} has no description"
    assert "numprobe SUBCOMMAND --help" in r.stderr
    # The same for the subcommands of config-check.
    r = run("config-check")
    assert r.returncode == 2
    assert re.search(r"^  collect +\S", r.stderr, re.M) and re.search(r"^  compare +\S", r.stderr,
                                                                        re.M)
    r = run("config-check", "comapre", "a.json", "b.json")
    assert r.returncode == 2
    assert r.stderr.splitlines()[0] == \
        "numprobe config-check: unknown subcommand 'comapre'; did you mean 'compare'?"
    # Help and version still work.
    assert run("--version").returncode == 0
    assert run("config-check", "--help").returncode == 0


def test_unknown_option_is_named_first_with_the_nearest(run, fixtures):
    dump = os.path.join(fixtures, "dump_statistics_nan")
    r = run("scan", dump, "--dtyp", "fp16")
    assert r.returncode == 2
    assert r.stderr.splitlines()[0] == \
        "numprobe scan: unknown option '--dtyp'; did you mean '--dtype'?"
    assert "fp16 --dtyp" not in r.stderr
    assert "numprobe scan --help" in r.stderr
    r = run("diff", "a.pt", "b.pt", "--rtoll", "1e-3")
    assert r.stderr.splitlines()[0] == \
        "numprobe diff: unknown option '--rtoll'; did you mean '--rtol'?"
    r = run("config-check", "compare", "a.json", "b.json", "--xslx")
    assert r.stderr.splitlines()[0] == \
        "numprobe config-check compare: unknown option '--xslx'; did you mean '--xlsx'?"
    r = run("inspect", "x.npy", "--frobnicate")
    assert r.returncode == 2
    assert r.stderr.splitlines()[0] == "numprobe inspect: unknown option '--frobnicate'"
    r = run("inspect", "x.npy", "y.npy")
    assert r.returncode == 2 and "unexpected argument 'y.npy'" in r.stderr


def test_compare_names_an_unknown_option_too(run, fixtures):
    base = os.path.join(fixtures, "dump_statistics_base")
    for typo, near in (("--xslx", "--xlsx"), ("-tpp", "-tp"), ("--golden_pth", "--golden_path")):
        r = run("compare", "-tp", base, "-gp", base, typo)
        assert r.returncode == 2, r.stderr
        assert r.stderr.splitlines()[0] == \
            f"numprobe compare: unknown option '{typo}'; did you mean '{near}'?"


def test_weight_files_given_to_compare_point_to_diff(run, gd):
    a = os.path.join(gd, "model.pt")
    b = os.path.join(gd, "model.safetensors")
    r = run("compare", "-tp", a, "-gp", b)
    assert r.returncode == 2
    assert "malformed JSON" not in r.stderr
    line = r.stderr.strip()
    assert line.startswith(f"numprobe: error: {a} is a tensor file (pt), not an msprobe dump")
    assert line.endswith(f"run: numprobe diff {a} {b}")


def test_dump_trees_given_to_diff_point_to_compare(run, fixtures, tmp_path):
    # A statistics dump has no tensor files: diff cannot read it, and says what can.
    dump = os.path.join(fixtures, "dump_statistics_nan")
    r = run("diff", dump, dump)
    assert r.returncode == 3
    assert "no tensor files" in r.stderr
    assert f"{dump} is an msprobe dump tree; numprobe compare -tp {dump} -gp {dump} compares " \
           "dump trees op by op and names the first divergence" in r.stderr
    # A tensor dump is diffed file by file, with a note that compare is the tool for dumps.
    tensor = os.path.join(fixtures, "dump_tensor_base")
    r = run("diff", tensor, tensor)
    assert r.returncode == 0, r.stderr
    assert f"numprobe: note: A and B are msprobe dump trees; numprobe compare -tp {tensor} " \
           f"-gp {tensor} compares dump trees" in r.stderr


def make_pickled_module(path):
    code = ("import sys, torch\n"
            "torch.manual_seed(0)\n"
            "torch.save(torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU()), sys.argv[1])\n")
    subprocess.run([PY, "-c", code, str(path)], check=True, capture_output=True, timeout=300)


def test_diff_reads_a_whole_pickled_model_with_inert(run, tmp_path):
    model = tmp_path / "whole_model.pt"
    make_pickled_module(model)
    r = run("diff", model, model)
    assert r.returncode == 3
    assert "is not allowed" in r.stderr
    assert "--inert reads its tensors" in r.stderr
    r = run("diff", "--inert", model, model, "--all")
    assert r.returncode == 0, r.stderr
    assert re.search(r"^\d+ pairs .*: (\d+) equal, 0 differ", r.stdout, re.M)
    assert "weight" in r.stdout and "bias" in r.stdout
    # inspect, which had --inert already, says so in its refusal too.
    r = run("inspect", model)
    assert r.returncode == 3 and "--inert reads its tensors" in r.stderr
    # A pickle that --inert would not read either gets no such advice.
    evil = tmp_path / "evil.pt"
    evil.write_bytes(b"\x80\x02cos\nsystem\nq\x00.")
    r = run("diff", evil, evil)
    assert r.returncode == 3 and "--inert" not in r.stderr


def test_the_reference_comes_second_everywhere(run, gd, fixtures, tmp_path):
    # --help of each command that takes two sides says so.
    compare_help = run("compare", "--help").stdout
    assert "-tp TARGET -gp GOLDEN" in compare_help
    assert "The golden run is the reference and comes second" in compare_help
    diff_help = run("diff", "--help").stdout
    assert "Target: the file or folder under test" in diff_help
    assert "Reference (golden), second as in compare" in diff_help
    cc_help = run("config-check", "compare", "--help").stdout
    assert "snapshot of the run to check" in cc_help
    assert "baseline snapshot: the reference, second" in cc_help
    # ... and the output headers.
    a = os.path.join(gd, "perturbed.safetensors")
    b = os.path.join(gd, "model.npz")
    r = run("diff", a, b)
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"A (target): {a} ")
    assert lines[1].startswith(f"B (reference): {b} ")
    base = os.path.join(fixtures, "dump_statistics_base")
    bf16 = os.path.join(fixtures, "dump_statistics_bf16")
    r = run("compare", "-tp", bf16, "-gp", base, "-o", tmp_path / "c")
    assert r.stdout.splitlines()[0] == \
        f"numprobe compare: {bf16} (target) vs {base} (golden, the reference)"
    snap_a = tmp_path / "run.json"
    snap_b = tmp_path / "base.json"
    for snap, lr in ((snap_a, "0.002"), (snap_b, "0.001")):
        r = run("config-check", "collect", "-o", snap, "--no-python", "--set",
                f"hyperparameters.lr={lr}")
        assert r.returncode == 0, r.stderr
    r = run("config-check", "compare", snap_a, snap_b, "-o", tmp_path / "cc")
    assert r.returncode == 1
    assert r.stdout.splitlines()[0] == \
        f"numprobe config-check: {snap_a} (A, checked) vs {snap_b} (B, baseline)"
    assert re.search(r"error +hyperparameters +lr: 0\.002 \| 0\.001", r.stdout)


def test_scan_counts_steps_and_ranks_apart(run, fixtures, tmp_path):
    # One process dumped over 4 steps: 4 step folders holding one rank folder each.
    src = os.path.join(fixtures, "dump_statistics_nan", "step0")
    root = tmp_path / "dump"
    for step in range(4):
        shutil.copytree(src, root / f"step{step}")
    r = run("scan", root, "-o", tmp_path / "out")
    assert r.returncode in (0, 1), r.stderr
    first = r.stdout.splitlines()[0]
    assert "4 steps, 1 rank," in first, first
    assert "rank folder" not in first
    scan = json.loads(next((tmp_path / "out").glob("scan_*.json")).read_text())
    assert scan["ranks"] == 1 and scan["rank_folders"] == 4
    assert len(scan["steps"]) == 4


def test_readme_says_where_the_python_package_is_and_quotes_the_wrong_path_error(source_dir):
    with open(os.path.join(source_dir, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    assert "`build/<type>/python`" in readme
    assert readme.count("build/<type>/python") >= 1
    # The source folder on PYTHONPATH: the import names the problem and the fix, as the README
    # quotes it.
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": os.path.join(source_dir, "python"),
           "PYTHONNOUSERSITE": "1"}
    r = subprocess.run([PY, "-c", "import numprobe"], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: numprobe's C++ module (_numprobe) is not beside ")
    assert "build/<type>/python" in last
    quoted = last.replace(os.path.join(source_dir, "python"), ".../python")
    assert quoted in readme, quoted
