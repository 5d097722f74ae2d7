#!/usr/bin/env python3
"""Runs `numprobe compare` on every variant of a captured corpus (make_corpus.py) and checks the
verdict: the op named first, the cast named where numprobe's side record is present, and the
phrase the headline must contain. Prints one line per variant and the localization score.

    score.py NUMPROBE_BIN CORPUS [--jobs N]

A variant is (case, configuration, format): format "numprobe" reads numprobe's dump trees with
their side records, "msprobe" the same trees as msprobe writes them. The score counts variants
whose first divergence is the expected op (for control cases: no divergence); `ok` additionally
needs the cast and the phrase.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

FORMATS = ("numprobe", "msprobe")


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class Verdict:
    def __init__(self, case, config, fmt, expect):
        self.case, self.config, self.fmt, self.expect = case, config, fmt, expect
        self.rc = None
        self.first = None  # the op object of divergence_*.json's "first", or None
        self.stdout = ""
        self.seconds = 0.0
        self.problems = []

    @property
    def label(self):
        return f"{self.case}/{self.config}/{self.fmt}"

    @property
    def named(self):
        return self.first["op_name"] if self.first else None

    @property
    def located(self):
        return self.named == self.expect["op"]

    @property
    def ok(self):
        return self.located and not self.problems

    @property
    def headline(self):
        """The sentence the CLI printed under 'first divergence'."""
        lines = self.stdout.splitlines()
        for i, line in enumerate(lines):
            if "first divergence:" in line and i + 1 < len(lines):
                return lines[i + 1].strip()
        return ""


def compare(numprobe_bin, corpus, case, config, fmt, expect, out_root):
    v = Verdict(case, config, fmt, expect)
    target = os.path.join(corpus, fmt, "target", case, config)
    golden = os.path.join(corpus, fmt, "golden", expect["model"], config)
    out = os.path.join(out_root, fmt, case, config)
    t0 = time.perf_counter()
    r = subprocess.run([numprobe_bin, "compare", "-tp", target, "-gp", golden, "-o", out],
                       capture_output=True, text=True, errors="replace", timeout=600)
    v.seconds = time.perf_counter() - t0
    v.rc, v.stdout = r.returncode, r.stdout
    if r.returncode not in (0, 1):
        v.problems.append(f"exit code {r.returncode}: {r.stderr.strip()[:300]}")
        return v
    paths = glob.glob(os.path.join(out, "divergence_*.json"))
    if len(paths) != 1:
        v.problems.append(f"{len(paths)} divergence files")
        return v
    doc = load(paths[0])
    v.first = doc["first"]["op"] if doc["first"] else None
    if v.first is None:
        if expect["op"] is not None:
            v.problems.append("no first divergence")
        if r.returncode != 0 and expect["op"] is None:
            v.problems.append(f"exit code {r.returncode} without a divergence")
        return v
    if not v.located:
        v.problems.append(f"named {v.named}")
    if expect.get("cast") and fmt == "numprobe":
        cast = (v.first.get("cast") or {}).get("name")
        if cast != expect["cast"]:
            v.problems.append(f"cast {cast!r}, expected {expect['cast']}")
    says = expect.get("says")
    if says and says not in v.first.get("reason", ""):
        v.problems.append(f"the reason does not say {says!r}: {v.first.get('reason')!r}")
    if says and says not in v.headline:
        v.problems.append(f"the headline does not say {says!r}: {v.headline!r}")
    return v


def score_corpus(numprobe_bin, corpus, jobs=2, out_root=None):
    """Every variant's Verdict, in case, configuration, format order."""
    expected = load(os.path.join(corpus, "expected.json"))
    own = out_root is None
    # Beside the corpus (a tmpfs when make_corpus.py was given one): compare's outputs are many
    # small files.
    out_root = out_root or tempfile.mkdtemp(prefix="compare_out_", dir=corpus)
    try:
        work = [(case, config, fmt, expect)
                for case, expect in expected["cases"].items()
                for config in expected["configs"] for fmt in FORMATS]
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(compare, numprobe_bin, corpus, *w, out_root) for w in work]
            return [f.result() for f in futures]
    finally:
        if own:
            shutil.rmtree(out_root, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("numprobe_bin")
    p.add_argument("corpus")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--verbose", action="store_true", help="print every variant's headline")
    a = p.parse_args()
    verdicts = score_corpus(a.numprobe_bin, a.corpus, a.jobs)
    for v in verdicts:
        mark = "ok  " if v.ok else ("part" if v.located else "MISS")
        print(f"{mark} {v.label}: {v.named}" + (f"  [{'; '.join(v.problems)}]" if v.problems else ""))
        if a.verbose and v.first:
            print(f"       {v.headline}")
    located = sum(v.located for v in verdicts)
    ok = sum(v.ok for v in verdicts)
    print(f"localization score: {located}/{len(verdicts)} variants name the planted op "
          f"({ok} also with the expected cast and sentence)")
    return 0 if ok == len(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
