#!/usr/bin/env python3
"""Writes a dump pair whose names carry markup, for the browser tests of the web UI (issue 17,
point 4: script injection in the report). A copy of the fixture's fp32 tensor-mode dump
(tests/fixtures/msprobe/dump_tensor_base) in which

- the op Functional.relu.0.forward is renamed HOSTILE_OP (in dump.json, construct.json,
  stack.json and its tensor files' names),
- its module Module.relu.ReLU.forward.0 is renamed HOSTILE_MODULE,
- its stack gets a frame holding a </script> and an <img onerror>,
- and everything sits under a folder whose name is markup too.

In the target, that op's output starts with a NaN (its tensor file and its dump.json statistics),
so the op is both the first divergence (compared against the golden) and the first anomaly (for
scan): every view of the UI shows its name. Run at test time (the output holds torch files):

    /usr/bin/python3 tests/hostile/make_hostile_names.py OUT_DIR
        -> prints {"target": ..., "golden": ..., "op": ..., "module": ..., "payloads": [...]}

Every payload calls alert(): a dialog in the browser means markup from the data ran.
"""
import json
import math
import os
import shutil
import sys

import torch

ORIGINAL_OP = "Functional.relu.0.forward"
ORIGINAL_MODULE = "Module.relu.ReLU.forward.0"
HOSTILE_OP = "Functional.relu<img src=x onerror=alert(1)>.0.forward"
HOSTILE_MODULE = "Module.relu<svg onload=alert(2)>.ReLU.forward.0"
HOSTILE_FRAME = ('File "<script>alert(3)</script>", line 1, in <module>, \n'
                 ' x = "</script><img src=x onerror=alert(4)>"')
HOSTILE_FOLDER = "run<img src=x onerror=alert(5)>"
PAYLOADS = ["<img src=x onerror=alert(1)>", "<svg onload=alert(2)>", "<script>alert(3)</script>",
            "</script><img src=x onerror=alert(4)>"]


def rename(value):
    """Every occurrence of the op's and the module's names, recursively (keys too)."""
    if isinstance(value, str):
        return value.replace(ORIGINAL_OP[:-len(".forward")] + ".",
                             HOSTILE_OP[:-len(".forward")] + ".").replace(ORIGINAL_MODULE,
                                                                          HOSTILE_MODULE)
    if isinstance(value, list):
        return [rename(v) for v in value]
    if isinstance(value, dict):
        return {rename(k): rename(v) for k, v in value.items()}
    return value


def write_json(path, doc):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)  # NaN stays Python's bare NaN, as msprobe writes it


def hostile_copy(source, dest):
    shutil.copytree(source, dest)
    rank = os.path.join(dest, "proc17038")
    for name in ("dump.json", "construct.json", "stack.json"):
        path = os.path.join(rank, name)
        with open(path, encoding="utf-8") as f:
            doc = rename(json.load(f))
        if name == "stack.json":
            for names, frames in doc.values():
                if HOSTILE_OP in names:
                    frames.insert(0, HOSTILE_FRAME)
        write_json(path, doc)
    data = os.path.join(rank, "dump_tensor_data")
    for name in os.listdir(data):
        if name != rename(name):
            os.rename(os.path.join(data, name), os.path.join(data, rename(name)))
    return rank


def main():
    out = os.path.join(sys.argv[1], HOSTILE_FOLDER)
    here = os.path.dirname(os.path.abspath(__file__))
    base = os.path.join(here, "..", "fixtures", "msprobe", "dump_tensor_base", "step0")
    hostile_copy(base, os.path.join(out, "golden", "step0"))
    rank = hostile_copy(base, os.path.join(out, "target", "step0"))
    with open(os.path.join(rank, "dump.json"), encoding="utf-8") as f:
        dump = json.load(f)
    leaf = dump["data"][HOSTILE_OP]["output"][0]
    path = os.path.join(rank, "dump_tensor_data", leaf["data_name"])
    tensor = torch.load(path).clone()
    tensor.view(-1)[0] = math.nan
    torch.save(tensor, path)
    for key in ("Max", "Min", "Mean", "Norm"):
        leaf[key] = math.nan
    write_json(os.path.join(rank, "dump.json"), dump)
    print(json.dumps({"target": os.path.join(out, "target", "step0"),
                      "golden": os.path.join(out, "golden", "step0"), "op": HOSTILE_OP,
                      "module": HOSTILE_MODULE, "folder": HOSTILE_FOLDER, "payloads": PAYLOADS}))


if __name__ == "__main__":
    main()
