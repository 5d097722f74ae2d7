"""`numprobe compare` options beyond the plain pair: a dump root with step folders (steps paired
by number, results under -o DIR/step{N}/), the mapping options (-fm, -dm, -cm, -am) and their
file errors (exit 2), and --no_align.

Environment (set by ctest): NUMPROBE_BIN, NUMPROBE_GOLDEN_DIR.
"""
import csv
import glob
import json
import os
import shutil
import subprocess

GOLDEN = os.path.join(os.environ.get("NUMPROBE_GOLDEN_DIR", ""), "compare_divergence")


def run(*args):
    r = subprocess.run([os.environ["NUMPROBE_BIN"], "compare", *args], capture_output=True,
                       text=True, errors="replace", timeout=600)
    assert "Sanitizer" not in r.stderr and "runtime error:" not in r.stderr, r.stderr
    return r


def rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def step_tree(root, side, steps):
    for s in steps:
        shutil.copytree(os.path.join(GOLDEN, "same_stats", side, "step0"),
                        os.path.join(root, f"step{s}"))


def test_dump_root_pairs_steps_by_number(tmp_path):
    step_tree(tmp_path / "t", "target", [0, 1, 3])
    step_tree(tmp_path / "g", "golden", [0, 1, 2])
    out = tmp_path / "out"
    r = run("-tp", str(tmp_path / "t"), "-gp", str(tmp_path / "g"), "-o", str(out))
    assert r.returncode == 1, r.stdout + r.stderr  # steps 2 and 3 are on one side only
    for step in ("step0", "step1"):
        assert len(glob.glob(str(out / step / "compare_result_rank0_*.csv"))) == 1
    assert not (out / "step2").exists() and not (out / "step3").exists()
    assert "step2: only in the golden dump" in r.stdout
    assert "step3: only in the target dump" in r.stdout
    doc = json.load(open(glob.glob(str(out / "divergence_*.json"))[0], encoding="utf-8"))
    assert [x["scope"] for x in doc["ranks"]] == ["step0", "step1"]
    assert doc["first"] is None


def renamed_target(tmp_path):
    """The same_stats target with every call count of relu and linear shifted by 5."""
    src = os.path.join(GOLDEN, "same_stats", "target", "step0", "rank0", "dump.json")
    with open(src, encoding="utf-8") as f:
        text = f.read()
    for api in ("relu", "linear"):
        for n in range(4, -1, -1):
            text = text.replace(f"Functional.{api}.{n}.", f"Functional.{api}.{n + 5}.")
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "dump.json").write_text(text, encoding="utf-8")
    return str(folder / "dump.json")


GOLDEN_JSON = os.path.join(GOLDEN, "same_stats", "golden", "step0", "rank0", "dump.json")


def results(out, column="Result"):
    table = rows(glob.glob(str(out / "compare_result_*.csv"))[0])
    col = table[0].index(column)
    return {r[0]: (r[1], r[col]) for r in table[1:]}


def test_fuzzy_and_alignment_pair_shifted_call_counts(tmp_path):
    target = renamed_target(tmp_path)
    r = run("-tp", target, "-gp", GOLDEN_JSON, "-o", str(tmp_path / "plain"), "--no_align")
    assert r.returncode == 0
    plain = results(tmp_path / "plain")
    assert plain["Functional.relu.5.forward.input.0"] == ("N/A", "unmatched")
    assert results(tmp_path / "plain", "Match")["Functional.relu.5.forward.input.0"][1] == "none"
    for flags, name in ((["-fm"], "fuzzy"), ([], "aligned")):
        r = run("-tp", target, "-gp", GOLDEN_JSON, "-o", str(tmp_path / name), *flags)
        assert r.returncode == 0, r.stdout + r.stderr
        res = results(tmp_path / name)
        assert res["Functional.relu.5.forward.input.0"] == ("Functional.relu.0.forward.input.0", "pass")
        assert res["Functional.linear.8.forward.output.0"] == ("Functional.linear.3.forward.output.0",
                                                               "pass")
        assert not any(v[1] == "unmatched" for v in res.values())
        match = results(tmp_path / name, "Match")
        assert match["Functional.relu.5.forward.input.0"][1] == ("fuzzy" if flags else "aligned")
        # Rows whose names agree pair exactly either way.
        assert match["Tensor.__mul__.0.forward.input.0"][1] == "exact"


def test_data_mapping_file(tmp_path):
    target = renamed_target(tmp_path)
    mapping = tmp_path / "dm.yaml"
    mapping.write_text("Functional.relu.5.forward.input.0: Functional.relu.0.forward.input.0\n",
                       encoding="utf-8")
    r = run("-tp", target, "-gp", GOLDEN_JSON, "-o", str(tmp_path / "o"), "-dm", str(mapping),
            "--no_align")
    assert r.returncode == 0, r.stderr
    res = results(tmp_path / "o")
    assert res["Functional.relu.5.forward.input.0"][0] == "Functional.relu.0.forward.input.0"
    assert res["Functional.relu.5.forward.output.0"] == ("N/A", "unmatched")


def test_mapping_file_errors_are_usage_errors(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1, 2\n", encoding="utf-8")
    for flag in ("-dm", "-cm", "-am"):
        r = run("-tp", GOLDEN_JSON, "-gp", GOLDEN_JSON, "-o", str(tmp_path / "o"), flag, str(bad))
        assert r.returncode == 2, (flag, r.stderr)
        assert "bad.yaml: line" in r.stderr
        r = run("-tp", GOLDEN_JSON, "-gp", GOLDEN_JSON, "-o", str(tmp_path / "o"), flag,
                str(tmp_path / "missing.yaml"))
        assert r.returncode == 3, (flag, r.stderr)  # a file that cannot be read
    assert not (tmp_path / "o").exists()


def test_cell_and_api_mapping_without_a_file(tmp_path):
    # -cm and -am take an optional file; without one they still run (nothing to rename here).
    for flag in ("-cm", "-am"):
        r = run("-tp", GOLDEN_JSON, "-gp", GOLDEN_JSON, "-o", str(tmp_path / flag), flag)
        assert r.returncode == 0, (flag, r.stderr)
