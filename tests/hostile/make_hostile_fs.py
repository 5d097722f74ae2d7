#!/usr/bin/env python3
"""Writes the hostile dump trees that cannot be committed into a folder given on the command line
(or by a test through make_all): a FIFO, symbolic links that leave the dump, and a construct.json
nested 400,000 deep (800 KB, generated rather than stored). Each case is a folder named after it:

  fifo_data/target        a tensor dump whose dump_tensor_data/ holds a FIFO under the name
                          dump.json gives for Functional.conv2d.0.forward.output.0
  fifo_data/golden        the golden dump it is compared with (a copy of the fixture)
  fifo_file/some_fifo.pt  a FIFO with a tensor file's extension (for inspect)
  symlink_out/target      the same dump with that data file replaced by a symbolic link to a
                          tensor file outside the dump (symlink_out/outside/secret.pt)
  symlink_out/golden
  deep_construct/dump     a statistics dump whose construct.json is nested 400,000 deep

Deterministic: rerunning rewrites identical trees. Usage: make_hostile_fs.py DEST
"""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures", "msprobe")
TENSOR_TARGET = os.path.join(FIXTURES, "dump_tensor_bf16", "step0", "proc17044")
TENSOR_GOLDEN = os.path.join(FIXTURES, "dump_tensor_base", "step0", "proc17038")
STATISTICS = os.path.join(FIXTURES, "dump_statistics_bf16", "step0", "proc17032")

VICTIM = "Functional.conv2d.0.forward.output.0.pt"
DEEP = 400_000


def copy_tree(src, dst):
    if os.path.exists(dst):
        shutil.rmtree(dst)
    shutil.copytree(src, dst, symlinks=True)


def pair(dest):
    copy_tree(TENSOR_TARGET, os.path.join(dest, "target"))
    copy_tree(TENSOR_GOLDEN, os.path.join(dest, "golden"))
    victim = os.path.join(dest, "target", "dump_tensor_data", VICTIM)
    os.remove(victim)
    return victim


def make_fifo_data(dest):
    os.mkfifo(pair(dest))


def make_fifo_file(dest):
    os.makedirs(dest, exist_ok=True)
    path = os.path.join(dest, "some_fifo.pt")
    if os.path.lexists(path):
        os.remove(path)
    os.mkfifo(path)


def make_symlink_out(dest):
    victim = pair(dest)
    outside = os.path.join(dest, "outside")
    os.makedirs(outside, exist_ok=True)
    # A real tensor file, so that following the link would give a row with values.
    secret = os.path.join(outside, "secret.pt")
    shutil.copyfile(os.path.join(TENSOR_GOLDEN, "dump_tensor_data", VICTIM), secret)
    os.symlink(secret, victim)


def make_deep_construct(dest):
    dump = os.path.join(dest, "dump")
    copy_tree(STATISTICS, dump)
    with open(os.path.join(dump, "construct.json"), "w", encoding="ascii") as f:
        f.write('{"Module.layer.Linear.forward.0": ' + "[" * DEEP + "]" * DEEP + "}")


CASES = {
    "fifo_data": make_fifo_data,
    "fifo_file": make_fifo_file,
    "symlink_out": make_symlink_out,
    "deep_construct": make_deep_construct,
}


def make_all(dest):
    for name, make in CASES.items():
        make(os.path.join(dest, name))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    make_all(sys.argv[1])
