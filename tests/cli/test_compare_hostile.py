"""`numprobe compare` on the hostile dump corpus (tests/hostile/dump/, listed in cases.tsv):
each malformed dump.json (or dump folder) must be refused, as target and as golden, with exit
code 3, one error line on stderr naming the file and the problem, nothing on stdout, no
sanitizer report, and no output file.

Environment (set by ctest): NUMPROBE_BIN, NUMPROBE_SOURCE_DIR.
"""
import os
import subprocess

import pytest

SOURCE = os.environ.get("NUMPROBE_SOURCE_DIR",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
CORPUS = os.path.join(SOURCE, "tests", "hostile", "dump")
GOOD = os.path.join(SOURCE, "tests", "fixtures", "msprobe", "dump_statistics_base", "step0",
                    "proc17026")


def load_cases():
    cases = []
    with open(os.path.join(CORPUS, "cases.tsv"), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            name, code, phrase, sides = line.split("\t")[:4]
            for side in (["target", "golden"] if sides == "both" else [sides]):
                cases.append((name, int(code), phrase, side))
    return cases


CASES = load_cases()


def test_every_corpus_file_is_listed():
    on_disk = {e for e in os.listdir(CORPUS) if e not in ("cases.tsv",) and not e.endswith(".py")}
    assert on_disk == {c[0] for c in CASES}


@pytest.mark.parametrize("name,code,phrase,side", CASES, ids=[f"{c[0]}-{c[3]}" for c in CASES])
def test_hostile_dump_is_refused(tmp_path, name, code, phrase, side):
    bad = os.path.join(CORPUS, name)
    good = GOOD if os.path.isdir(bad) else os.path.join(GOOD, "dump.json")
    target, golden = (bad, good) if side == "target" else (good, bad)
    out = tmp_path / "out"
    r = subprocess.run([os.environ["NUMPROBE_BIN"], "compare", "-tp", target, "-gp", golden,
                        "-o", str(out)], capture_output=True, text=True, errors="replace",
                       timeout=120)
    assert r.returncode == code, r.stderr
    assert r.stdout == ""
    assert "Sanitizer" not in r.stderr and "runtime error:" not in r.stderr, r.stderr
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("numprobe: error: ")
    assert phrase.lower() in lines[0].lower(), lines[0]
    assert name in lines[0]  # the file is named
    assert not out.exists() or not any(out.iterdir())
