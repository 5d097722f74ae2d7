#!/usr/bin/env python3
"""Checks a .safetensors file written by numprobe against the spec, independently of numprobe.

usage: check_safetensors.py WRITTEN ORIGINAL

Both files are parsed here with struct and json by the spec (huggingface/safetensors README and
safetensors/src/tensor.rs): u64 LE header length N <= 100,000,000, a UTF-8 JSON object without
duplicate keys, known dtypes, non-negative integer shapes, data_offsets that tile the buffer from 0
to the end of the file, each of exactly prod(shape) * bits / 8 bytes, __metadata__ str -> str.
WRITTEN must also have the reference writer's layout: header padded with spaces to a multiple of
8, __metadata__ first, tensors sorted by dtype alignment (descending) then name, every tensor's
data aligned to its element size. WRITTEN must hold the same tensors (name, dtype, shape, bytes)
and metadata as ORIGINAL, which may be laid out in any valid way.

Exit 0 when all holds; 1 with one line per problem otherwise; 2 on usage errors.
"""
import json
import struct
import sys

REFERENCE_ORDER = ["BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0",
                   "F8_E4M3FNUZ", "F8_E5M2FNUZ", "I16", "U16", "F16", "BF16", "I32", "U32", "F32",
                   "C64", "F64", "I64", "U64"]
BITS = {"BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8, "F8_E5M2": 8,
        "F8_E4M3": 8, "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "I16": 16, "U16": 16,
        "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "C64": 64, "F64": 64, "I64": 64,
        "U64": 64}


class Invalid(Exception):
    pass


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise Invalid(f"duplicate keys in {keys}")
    return pairs  # kept as a list to see the order


def is_uint(v):
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**48


def parse(path):
    """Returns (n, header pairs in order, metadata pairs, {name: (dtype, shape, begin, end)},
    data bytes)."""
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise Invalid(f"{len(raw)} bytes: too short")
    (n,) = struct.unpack("<Q", raw[:8])
    if n > 100_000_000 or 8 + n > len(raw):
        raise Invalid(f"header length {n} invalid for {len(raw)} bytes")
    text = raw[8:8 + n].decode("utf-8")  # raises on invalid UTF-8
    pairs = json.loads(text, object_pairs_hook=no_duplicates)
    if not isinstance(pairs, list):
        raise Invalid("header is not an object")
    metadata = []
    tensors = {}
    for key, value in pairs:
        if key == "__metadata__":
            if not isinstance(value, list) or not all(isinstance(v, str) for _, v in value):
                raise Invalid("__metadata__ is not str -> str")
            metadata = value
            continue
        fields = dict(value) if isinstance(value, list) else None
        if fields is None or not {"dtype", "shape", "data_offsets"} <= fields.keys():
            raise Invalid(f"tensor {key!r}: bad entry {value!r}")
        dtype, shape, offsets = fields["dtype"], fields["shape"], fields["data_offsets"]
        if dtype not in BITS:
            raise Invalid(f"tensor {key!r}: unknown dtype {dtype!r}")
        if not isinstance(shape, list) or not all(is_uint(d) for d in shape):
            raise Invalid(f"tensor {key!r}: bad shape {shape!r}")
        if (not isinstance(offsets, list) or len(offsets) != 2
                or not all(isinstance(o, int) and not isinstance(o, bool) and o >= 0
                           for o in offsets)):
            raise Invalid(f"tensor {key!r}: bad data_offsets {offsets!r}")
        numel = 1
        for d in shape:
            numel *= d
        nbits = numel * BITS[dtype]
        if nbits % 8 or offsets[1] - offsets[0] != nbits // 8:
            raise Invalid(f"tensor {key!r}: {offsets} do not hold {dtype} {shape}")
        tensors[key] = (dtype, shape, offsets[0], offsets[1])
    data = raw[8 + n:]
    end = 0
    for name, (_, _, b, e) in sorted(tensors.items(), key=lambda kv: (kv[1][2], kv[1][3])):
        if b != end:
            raise Invalid(f"tensor {name!r} begins at {b}, expected {end} (hole or overlap)")
        end = e
    if end != len(data):
        raise Invalid(f"tensors end at {end} but the buffer has {len(data)} bytes")
    return n, text, pairs, metadata, tensors, data


def check(written, original):
    problems = []
    try:
        n, text, pairs, metadata, tensors, data = parse(written)
    except (Invalid, ValueError) as e:
        return [f"{written}: not a valid safetensors file: {e}"]
    if n % 8:
        problems.append(f"header length {n} is not a multiple of 8")
    body = text.rstrip(" ")
    if not (body.startswith("{") and body.endswith("}")):
        problems.append("header is not '{...}' followed by space padding only")
    keys = [k for k, _ in pairs]
    if "__metadata__" in keys and keys[0] != "__metadata__":
        problems.append("__metadata__ is not the first key")
    names = [k for k in keys if k != "__metadata__"]
    want_order = sorted(names, key=lambda k: (-REFERENCE_ORDER.index(tensors[k][0]), k))
    if names != want_order:
        problems.append(f"tensors are in order {names}, the reference writer's is {want_order}")
    by_offset = sorted(names, key=lambda k: (tensors[k][2], tensors[k][3]))
    if names != by_offset:
        problems.append("header order differs from data order")
    for k in names:
        dtype, _, b, _ = tensors[k]
        item = max(1, BITS[dtype] // 8)
        if (8 + n + b) % item:
            problems.append(f"tensor {k!r} data at file offset {8 + n + b} is not {item}-aligned")

    try:
        _, _, _, o_metadata, o_tensors, o_data = parse(original)
    except (Invalid, ValueError) as e:
        return problems + [f"{original}: not a valid safetensors file: {e}"]
    if dict(metadata) != dict(o_metadata):
        problems.append(f"metadata {dict(metadata)} != original {dict(o_metadata)}")
    if set(tensors) != set(o_tensors):
        problems.append(f"tensor names {sorted(tensors)} != original {sorted(o_tensors)}")
    for k in sorted(set(tensors) & set(o_tensors)):
        dtype, shape, b, e = tensors[k]
        o_dtype, o_shape, ob, oe = o_tensors[k]
        if (dtype, shape) != (o_dtype, o_shape):
            problems.append(f"tensor {k!r}: {dtype} {shape} != original {o_dtype} {o_shape}")
        elif data[b:e] != o_data[ob:oe]:
            problems.append(f"tensor {k!r}: bytes differ from the original")
    return problems


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        sys.exit(2)
    problems = check(sys.argv[1], sys.argv[2])
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
