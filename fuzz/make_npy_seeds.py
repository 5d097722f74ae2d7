#!/usr/bin/env python3
"""Writes the seed corpora of fuzz_npy, fuzz_npz and fuzz_zip: small valid files written by numpy,
Python's zipfile and torch.save (fuzz/corpus/{npy,npz,zip}/). Committed; rerun to refresh:

  /usr/bin/python3 fuzz/make_npy_seeds.py
"""
import io
import os
import shutil
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def reset(name):
    path = os.path.join(HERE, "corpus", name)
    if os.path.isdir(path):
        shutil.rmtree(path)
    os.makedirs(path)
    return path


def main():
    npy = reset("npy")
    arrays = {
        "f4_2x3": np.array([[1.5, -2, np.nan], [np.inf, -0.0, 3]], dtype="<f4"),
        "be_c16": np.array([1 + 2j, -3j], dtype=">c16"),
        "fortran_i2": np.asfortranarray(np.arange(6, dtype="<i2").reshape(2, 3)),
        "bool": np.array([True, False, True]),
        "scalar_f8": np.array(2.5),
        "empty_u8": np.zeros((0, 3), dtype="<u8"),
        "f2_4d": np.ones((1, 2, 1, 2), dtype="<f2"),
    }
    for name, a in arrays.items():
        np.save(os.path.join(npy, name + ".npy"), a)
    for version in ((2, 0), (3, 0)):
        with open(os.path.join(npy, "v%d.npy" % version[0]), "wb") as f:
            np.lib.format.write_array(f, np.arange(3, dtype="<i4"), version=version)
    buf = io.BytesIO()
    np.save(buf, np.array([0x3F80, 0x7FC0], dtype="<u2").view("V2"))
    with open(os.path.join(npy, "bf16_v2.npy"), "wb") as f:
        f.write(buf.getvalue().replace(b"'|V2'", b"'<V2'"))

    npz = reset("npz")
    small = {"a": np.arange(4, dtype="<f4"), "b/c": np.array([[1, 2]], dtype="<i8")}
    np.savez(os.path.join(npz, "savez.npz"), np.array(1.0), **small)
    np.savez_compressed(os.path.join(npz, "savez_compressed.npz"), **small)

    z = reset("zip")
    with zipfile.ZipFile(os.path.join(z, "stored_deflated.zip"), "w") as f:
        f.writestr("a.txt", b"hello", compress_type=zipfile.ZIP_STORED)
        f.writestr("dir/b.bin", b"\0" * 300, compress_type=zipfile.ZIP_DEFLATED)
    with zipfile.ZipFile(os.path.join(z, "zip64.zip"), "w") as f:
        with f.open("big.bin", "w", force_zip64=True) as member:
            member.write(b"abc" * 10)
    with zipfile.ZipFile(os.path.join(z, "empty.zip"), "w"):
        pass
    shutil.copy(os.path.join(npz, "savez_compressed.npz"), os.path.join(z, "npz.zip"))
    import torch  # only here: the seeds need one real torch.save archive

    torch.save({"w": torch.arange(4, dtype=torch.float32)}, os.path.join(z, "torch.pt"))
    print("seeds written")


if __name__ == "__main__":
    main()
