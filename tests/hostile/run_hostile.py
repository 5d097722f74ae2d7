#!/usr/bin/env python3
"""Runs `numprobe inspect` on every file of a hostile corpus folder and checks the outcome.

manifest.tsv, one case per line: FILE <TAB> EXIT_CODE <TAB> TEXT [<TAB> comment]
  FILE       relative to the manifest's folder
  EXIT_CODE  the exit status numprobe must return (3 for malformed input)
  TEXT       a phrase that stderr must contain (case-insensitive), naming the problem

Every case must also: not die from a signal, print nothing on stdout (no partial output presented
as complete), print one line on stderr (the error) plus optional warnings, contain no sanitizer
report, and create no file. Lines starting with # are comments.
"""
import argparse
import os
import subprocess
import sys
import tempfile


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--numprobe", required=True)
    p.add_argument("folder")
    a = p.parse_args()
    manifest = os.path.join(a.folder, "manifest.tsv")
    cases = []
    with open(manifest, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) < 3:
                sys.exit(f"{manifest}:{n}: expected FILE, EXIT_CODE, TEXT separated by tabs")
            cases.append((n, parts[0], int(parts[1]), parts[2]))
    listed = {c[1] for c in cases}
    on_disk = {e for e in os.listdir(a.folder) if e != "manifest.tsv" and not e.endswith(".py")}
    unlisted = sorted(on_disk - listed)
    failures = []
    if unlisted:
        failures.append(f"files without a manifest line: {unlisted}")
    for n, name, want_code, want_text in cases:
        path = os.path.join(a.folder, name)
        if not os.path.exists(path):
            failures.append(f"{name}: listed but missing")
            continue
        with tempfile.TemporaryDirectory() as cwd:
            try:
                r = subprocess.run([a.numprobe, "inspect", os.path.abspath(path)], cwd=cwd,
                                   capture_output=True, text=True, errors="replace", timeout=60)
            except subprocess.TimeoutExpired:
                failures.append(f"{name}: hung (no answer in 60 s)")
                continue
            created = os.listdir(cwd)
        err = r.stderr
        problems = []
        if r.returncode < 0:
            problems.append(f"killed by signal {-r.returncode}")
        if r.returncode != want_code:
            problems.append(f"exit {r.returncode}, want {want_code}")
        if want_text.lower() not in err.lower():
            problems.append(f"stderr lacks {want_text!r}")
        if "Sanitizer" in err or "runtime error:" in err:
            problems.append("sanitizer report")
        if want_code != 0 and r.stdout.strip():
            problems.append("printed output on stdout")
        error_lines = [l for l in err.splitlines() if l.startswith("numprobe: error")]
        if want_code == 3 and len(error_lines) != 1:
            problems.append(f"{len(error_lines)} error lines, want 1")
        if created:
            problems.append(f"created files {created}")
        if problems:
            failures.append(f"{name} (manifest line {n}): " + "; ".join(problems) +
                            f"\n    stderr: {err.strip()[:400]}")
    print(f"{len(cases)} cases, {len(failures)} failures in {a.folder}")
    for f in failures:
        print("FAIL", f)
    print(f"{len(cases) - len(failures)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
