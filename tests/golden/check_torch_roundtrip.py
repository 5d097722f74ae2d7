#!/usr/bin/env python3
"""Loads .pt files that numprobe's WriteTorch wrote with real torch.load and checks every tensor
against the bytes numprobe meant to write. Used by torch_pt_golden_test (run with Debian's
/usr/bin/python3, torch 1.13.1).

Usage: check_torch_roundtrip.py MANIFEST.json
MANIFEST: {"files": [{"file": PATH, "bare": bool,
                      "tensors": [{"name", "dtype", "shape", "hex"}]}]}
Exit status 0 and "checked N tensors in M files" when everything matches; 1 with one line per
mismatch otherwise. The files are the test's own output (trusted), never third-party data.
"""
import json
import sys

import torch

from gen_torch import raw_bytes  # the same byte form the golden files use (same folder)


def main():
    with open(sys.argv[1]) as f:
        manifest = json.load(f)
    problems = []
    checked = 0
    for entry in manifest["files"]:
        loaded = torch.load(entry["file"])
        if entry["bare"]:
            if not isinstance(loaded, torch.Tensor):
                problems.append(f"{entry['file']}: expected a bare tensor, got {type(loaded)}")
                continue
            got = {"": loaded}
        else:
            if not isinstance(loaded, dict):
                problems.append(f"{entry['file']}: expected a dict, got {type(loaded)}")
                continue
            got = loaded
        if list(got.keys()) != [t["name"] for t in entry["tensors"]]:
            problems.append(f"{entry['file']}: names {list(got.keys())} differ")
            continue
        for want in entry["tensors"]:
            t = got[want["name"]]
            where = f"{entry['file']}:{want['name']!r}"
            if str(t.dtype) != "torch." + want["dtype"]:
                problems.append(f"{where}: dtype {t.dtype}, want {want['dtype']}")
            elif list(t.shape) != want["shape"]:
                problems.append(f"{where}: shape {list(t.shape)}, want {want['shape']}")
            elif raw_bytes(t) != bytes.fromhex(want["hex"]):
                problems.append(f"{where}: values differ")
            else:
                checked += 1
    for p in problems:
        print("MISMATCH", p)
    print(f"checked {checked} tensors in {len(manifest['files'])} files")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
