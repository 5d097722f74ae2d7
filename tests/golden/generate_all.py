#!/usr/bin/env python3
"""Writes all golden data: runs every gen_*.py beside this file with Debian's interpreter (real
numpy and torch), each into OUT/<name>/ (gen_npy.py -> OUT/npy/). Generators are deterministic."""
import argparse
import glob
import os
import subprocess
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    a = p.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    gens = sorted(glob.glob(os.path.join(here, "gen_*.py")))
    if not gens:
        sys.exit("no generators found")
    for gen in gens:
        name = os.path.basename(gen)[len("gen_"):-len(".py")]
        out = os.path.join(a.out, name)
        os.makedirs(out, exist_ok=True)
        r = subprocess.run([sys.executable, gen, "--out", out])
        if r.returncode != 0:
            sys.exit(f"{gen} failed with exit code {r.returncode}")
        print(f"generated {name}")


if __name__ == "__main__":
    main()
