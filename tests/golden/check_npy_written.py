#!/usr/bin/env python3
"""Checks, with real numpy, the files that numprobe's WriteNpy/WriteNpz wrote back from the golden
set (run by npy_golden_test; Debian's /usr/bin/python3).

  check_npy_written.py --golden DIR --written DIR

For every golden X.npy there must be written/X.npy; for every golden X.npz, written/X.npz (stored)
and written/X_c.npz (deflated). Each must load with np.load (allow_pickle=False) and hold the same
arrays: same names in the same order, same shape, same values bit for bit (NaN payloads too), in
little-endian C order. A written .npy of a numpy-native dtype must equal np.save's own bytes for
that array; bfloat16 must come back as '<V2' with the same bytes. zipfile's CRC check must pass.
Prints one line per file and exits 1 on any difference.
"""
import argparse
import io
import json
import os
import sys
import zipfile

import numpy as np


def le_c_bytes(a):
    if a.dtype.kind == "V":
        return np.array(a, order="C").tobytes()
    return np.array(a, order="C").astype(a.dtype.newbyteorder("<")).tobytes()


def same_array(name, orig, got, problems):
    if orig.shape != got.shape:
        problems.append(f"{name}: shape {got.shape}, want {orig.shape}")
        return
    if orig.dtype.kind == "V":
        if got.dtype.kind != "V" or got.dtype.itemsize != orig.dtype.itemsize:
            problems.append(f"{name}: dtype {got.dtype.str}, want a void of {orig.dtype.itemsize}")
    else:
        want = orig.dtype.newbyteorder("<") if orig.dtype.itemsize > 1 else orig.dtype
        if got.dtype.str != want.str:
            problems.append(f"{name}: dtype {got.dtype.str}, want {want.str}")
    if got.dtype.byteorder == ">" or (got.ndim > 1 and not got.flags.c_contiguous):
        problems.append(f"{name}: not little-endian C order")
    if le_c_bytes(orig) != le_c_bytes(got):
        problems.append(f"{name}: values differ")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--golden", required=True)
    p.add_argument("--written", required=True)
    a = p.parse_args()
    with open(os.path.join(a.golden, "expected.json")) as f:
        files = json.load(f)["files"]
    problems = []
    checked = 0
    for name in sorted(files):
        src = os.path.join(a.golden, name)
        if name.endswith(".npy"):
            orig = np.load(src, allow_pickle=False)
            path = os.path.join(a.written, name)
            if not os.path.exists(path):
                problems.append(f"{name}: not written")
                continue
            got = np.load(path, allow_pickle=False)
            same_array(name, orig, got, problems)
            with open(path, "rb") as f:
                written = f.read()
            buf = io.BytesIO()
            if orig.dtype.kind == "V":
                np.save(buf, np.array(orig, order="C"))
                want = buf.getvalue().replace(b"'|V2'", b"'<V2'")
            else:
                np.save(buf, np.array(orig, order="C").astype(orig.dtype.newbyteorder("<")))
                want = buf.getvalue()
            if written != want:
                problems.append(f"{name}: bytes differ from np.save's")
            checked += 1
            continue
        with np.load(src, allow_pickle=False) as z:
            orig = {k: z[k] for k in z.files}
            order = list(z.files)
        for suffix in ("", "_c"):
            wname = name[:-4] + suffix + ".npz"
            path = os.path.join(a.written, wname)
            if not os.path.exists(path):
                problems.append(f"{wname}: not written")
                continue
            with zipfile.ZipFile(path) as zf:
                bad = zf.testzip()
                if bad is not None:
                    problems.append(f"{wname}: CRC error in {bad}")
                methods = {i.compress_type for i in zf.infolist()}
                want_method = zipfile.ZIP_DEFLATED if suffix else zipfile.ZIP_STORED
                if methods != {want_method}:
                    problems.append(f"{wname}: compression methods {methods}")
            with np.load(path, allow_pickle=False) as z:
                if list(z.files) != order:
                    problems.append(f"{wname}: members {z.files}, want {order}")
                    continue
                for k in order:
                    same_array(f"{wname}:{k}", orig[k], z[k], problems)
            checked += 1
    for line in problems:
        print("FAIL", line)
    print(f"{checked} files checked, {len(problems)} problems")
    sys.exit(1 if problems or checked == 0 else 0)


if __name__ == "__main__":
    main()
