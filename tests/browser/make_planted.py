"""Writes a target dump with a planted precision bug: a copy of the fixture's fp32 tensor-mode dump
(tests/fixtures/msprobe/dump_tensor_base) in which one op's output is scaled by 1.25 (its tensor
file and its dump.json statistics), every other tensor untouched. Compared against the original,
that op's inputs agree exactly and its output does not, so it is the first divergence.

    /usr/bin/python3 make_planted.py OUT_DIR   ->  OUT_DIR/step0/proc17038/...

Uses Debian's torch (1.13) to rewrite the tensor file; the files read are the project's own
fixtures.
"""
import json
import os
import shutil
import sys

import torch

PLANTED_OP = "Functional.linear.0.forward"
SCALE = 1.25


def main():
    out = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    base = os.path.join(here, "..", "fixtures", "msprobe", "dump_tensor_base", "step0")
    target = os.path.join(out, "step0")
    shutil.copytree(base, target)
    rank = os.path.join(target, "proc17038")
    with open(os.path.join(rank, "dump.json"), encoding="utf-8") as f:
        dump = json.load(f)
    leaf = dump["data"][PLANTED_OP]["output"][0]
    path = os.path.join(rank, "dump_tensor_data", leaf["data_name"])
    tensor = torch.load(path) * SCALE
    torch.save(tensor, path)
    leaf["Max"] = tensor.max().item()
    leaf["Min"] = tensor.min().item()
    leaf["Mean"] = tensor.mean().item()
    leaf["Norm"] = tensor.norm().item()
    with open(os.path.join(rank, "dump.json"), "w", encoding="utf-8") as f:
        json.dump(dump, f, indent=1)
    print(PLANTED_OP)


if __name__ == "__main__":
    main()
