#!/usr/bin/env python3
"""Writes the hostile .pt corpus: tests/hostile/pt/*.pt and tests/hostile/pt/manifest.tsv.

Every pickle here is assembled BY HAND from opcode bytes. Nothing is pickled from live objects
(so no __reduce__ of ours can run) and nothing is ever unpickled. The payloads name dangerous
callables (os.system("touch CANARY") and friends); numprobe must refuse them before anything could
happen, and run_hostile.py checks that no file appears in the working folder.

Each case must make `numprobe inspect FILE` exit with status 3 and print a message containing the
manifest's phrase. Deterministic output; rerun after editing:
    python3 tests/hostile/make_hostile_pt.py
"""
import os
import struct
import zipfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "pt")

# ----- pickle opcodes -----
PROTO2 = b"\x80\x02"
PROTO4 = b"\x80\x04"
STOP = b"."
MARK = b"("
TUPLE = b"t"
TUPLE1 = b"\x85"
TUPLE2 = b"\x86"
EMPTY_TUPLE = b")"
EMPTY_DICT = b"}"
EMPTY_LIST = b"]"
REDUCE = b"R"
BUILD = b"b"
NEWOBJ = b"\x81"
APPEND = b"a"
SETITEM = b"s"
SETITEMS = b"u"
BINPERSID = b"Q"
NEWFALSE = b"\x89"
NONE = b"N"


def glob(module, name):
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def stack_glob(module, name):
    return short_str(module) + short_str(name) + b"\x93"


def short_str(s):
    b = s.encode()
    return b"\x8c" + bytes([len(b)]) + b


def ustr(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def pint(v):
    if 0 <= v < 256:
        return b"K" + bytes([v])
    if 0 <= v < 65536:
        return b"M" + struct.pack("<H", v)
    if -2**31 <= v < 2**31:
        return b"J" + struct.pack("<i", v)
    return b"\x8a\x08" + struct.pack("<q", v)


def ints(values):
    return MARK + b"".join(pint(v) for v in values) + TUPLE


def ordered_dict():
    return glob("collections", "OrderedDict") + EMPTY_TUPLE + REDUCE


def storage(type_name, key, numel, location="cpu", view=None):
    pid = MARK + ustr("storage") + glob("torch", type_name) + ustr(key) + ustr(location) + pint(numel)
    if view is not None:
        pid += view
    return pid + TUPLE + BINPERSID


def tensor(type_name, key, numel, offset, shape, stride, view=None, metadata=b""):
    return (glob("torch._utils", "_rebuild_tensor_v2") + MARK + storage(type_name, key, numel, view=view) +
            pint(offset) + ints(shape) + ints(stride) + NEWFALSE + ordered_dict() + metadata + TUPLE + REDUCE)


def state_dict(pairs):
    return PROTO2 + ordered_dict() + MARK + b"".join(ustr(k) + v for k, v in pairs) + SETITEMS + STOP


def canary_call(module, name):
    """module.name("touch CANARY"): the classic GLOBAL + REDUCE payload."""
    return glob(module, name) + ustr("touch CANARY") + TUPLE1 + REDUCE


# ----- containers -----
F32_SIX = struct.pack("<6f", 1.5, -2.0, 3.25, 0.0, -0.0, 1e30)


def torch_zip(pkl, records=(), extra=()):
    """A torch.save-like zip: archive/data.pkl, archive/data/<key>, archive/version."""
    entries = [("archive/data.pkl", pkl, zipfile.ZIP_STORED)]
    entries += [(f"archive/data/{k}", v, zipfile.ZIP_STORED) for k, v in records]
    entries += list(extra)
    entries.append(("archive/version", b"3\n", zipfile.ZIP_STORED))
    return zip_bytes(entries)


def zip_bytes(entries):
    import io
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data, method in entries:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            z.writestr(info, data)
    return buf.getvalue()


def raw_zip(entries, cd_override=None):
    """A zip built field by field: entries are (name, stored data). cd_override(i, fields) may
    change a central-directory record (name, offset, sizes) to craft inconsistencies."""
    out = b""
    records = []
    for name, data in entries:
        nb = name.encode()
        crc = zlib.crc32(data)
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0x21, crc, len(data), len(data),
                           len(nb), 0) + nb + data
        records.append({"name": nb, "crc": crc, "size": len(data), "offset": offset, "flags": 0})
    cd = b""
    for i, r in enumerate(records):
        if cd_override:
            cd_override(i, r)
        cd += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, r["flags"], 0, 0, 0x21, r["crc"],
                          r["size"], r["size"], len(r["name"]), 0, 0, 0, 0, 0, r["offset"]) + r["name"]
    eocd = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(records), len(records), len(cd), len(out), 0)
    return out + cd + eocd


def legacy(obj_pickle, keys, data, little_endian=True):
    magic = PROTO2 + b"\x8a\x0a" + bytes.fromhex("6cfc9c46f9206aa85019") + STOP
    version = PROTO2 + b"M" + struct.pack("<H", 1001) + STOP
    sys_info = (PROTO2 + EMPTY_DICT + ustr("protocol_version") + b"M" + struct.pack("<H", 1001) + SETITEM +
                ustr("little_endian") + (b"\x88" if little_endian else NEWFALSE) + SETITEM + STOP)
    key_list = PROTO2 + EMPTY_LIST + MARK + b"".join(ustr(k) for k in keys) + b"e" + STOP
    return magic + version + sys_info + obj_pickle + key_list + data


def legacy_tensor(type_name, key, numel, shape):
    stride = []
    s = 1
    for d in reversed(shape):
        stride.insert(0, s)
        s *= d
    return tensor(type_name, key, numel, 0, shape, stride, view=NONE)


def cases():
    """(file name, bytes, phrase, comment)."""
    c = []

    def add(name, data, phrase, comment):
        c.append((name, data, phrase, comment))

    # --- code-execution payloads: refused at the GLOBAL, before REDUCE could run them ---
    for module, name in [("os", "system"), ("posix", "system"), ("nt", "system"), ("builtins", "eval"),
                         ("builtins", "exec"), ("subprocess", "Popen"), ("builtins", "__import__")]:
        add(f"global_{module}_{name.strip('_')}.pt", torch_zip(PROTO2 + canary_call(module, name) + STOP),
            f"global '{module}.{name}' is not allowed", "GLOBAL + REDUCE payload")
    add("global_py2_builtin_eval.pt", torch_zip(PROTO2 + canary_call("__builtin__", "eval") + STOP),
        "global '__builtin__.eval' is not allowed", "Python 2 module name")
    add("stack_global_os_system.pt",
        torch_zip(PROTO4 + stack_glob("os", "system") + ustr("touch CANARY") + TUPLE1 + REDUCE + STOP),
        "global 'os.system' is not allowed", "protocol 4 STACK_GLOBAL payload")
    # getattr(__import__('os'), 'system')('touch CANARY')
    getattr_chain = (PROTO2 + glob("builtins", "getattr") + glob("builtins", "__import__") + ustr("os") + TUPLE1 +
                     REDUCE + ustr("system") + TUPLE2 + REDUCE + ustr("touch CANARY") + TUPLE1 + REDUCE + STOP)
    add("getattr_chain.pt", torch_zip(getattr_chain), "global 'builtins.getattr' is not allowed",
        "getattr(__import__('os'), 'system')(...)")
    # A payload hidden inside an otherwise normal state_dict value.
    add("state_dict_with_payload.pt",
        torch_zip(state_dict([("w", tensor("FloatStorage", "0", 6, 0, [6], [1])),
                              ("x", canary_call("os", "system"))]), [("0", F32_SIX)]),
        "global 'os.system' is not allowed", "payload after a valid tensor")
    # __reduce__-style: an unknown class instantiated, then BUILD with a __setstate__ payload.
    setstate = (PROTO2 + glob("__main__", "Exploit") + EMPTY_TUPLE + NEWOBJ + EMPTY_DICT + ustr("__setstate__") +
                glob("os", "system") + SETITEM + BUILD + STOP)
    add("build_setstate.pt", torch_zip(setstate), "global '__main__.Exploit' is not allowed",
        "NEWOBJ + BUILD(__setstate__) on a non-allowlisted class")
    add("build_on_list.pt", torch_zip(PROTO2 + EMPTY_LIST + EMPTY_DICT + ustr("__setstate__") + ustr("x") +
                                      SETITEM + BUILD + STOP),
        "BUILD on list", "BUILD on a value that has no state")
    add("collect_env_run.pt", torch_zip(PROTO2 + glob("torch.utils.collect_env", "run") + ustr("touch CANARY") +
                                        TUPLE1 + REDUCE + STOP),
        "global 'torch.utils.collect_env.run' is not allowed", "scanner denylist gap")
    add("nested_torch_load.pt", torch_zip(PROTO2 + glob("torch.storage", "_load_from_bytes") + b"C\x01x" + TUPLE1 +
                                          REDUCE + STOP),
        "global 'torch.storage._load_from_bytes' is not allowed", "a nested unrestricted load")
    add("inst_opcode.pt", torch_zip(PROTO2 + MARK + b"ios\nsystem\n" + STOP), "INST",
        "INST instantiates by name")
    add("obj_opcode.pt", torch_zip(PROTO2 + MARK + glob("os", "system") + b"o" + STOP),
        "global 'os.system' is not allowed", "OBJ with a forbidden class")
    add("ext1_opcode.pt", torch_zip(PROTO2 + b"\x82\x01" + STOP), "EXT1", "copyreg extension registry")

    # --- interpreter bounds ---
    add("deep_marks.pt", torch_zip(PROTO2 + MARK * 100000 + STOP), "MARKs nested deeper than 1000",
        "100k nested MARKs")
    add("huge_memo_get.pt", torch_zip(PROTO2 + b"j\xff\xff\xff\xff" + STOP), "memo index 4294967295 not found",
        "LONG_BINGET of an index never PUT")
    add("huge_binunicode.pt", torch_zip(PROTO2 + b"X\xff\xff\xff\xff" + b"abc" + STOP),
        "length 4294967295 exceeds the", "BINUNICODE length past the input")
    add("huge_binbytes8.pt", torch_zip(PROTO4 + b"\x8e" + struct.pack("<Q", 2**63) + b"abc" + STOP),
        "length 9223372036854775808 exceeds the", "BINBYTES8 length past the input")
    add("huge_binunicode8.pt", torch_zip(PROTO4 + b"\x8d" + struct.pack("<Q", 2**64 - 1) + STOP),
        "exceeds the", "BINUNICODE8 length past the input")
    add("huge_frame.pt", torch_zip(PROTO4 + b"\x95" + struct.pack("<Q", 2**40) + NONE + STOP), "frame of",
        "FRAME longer than the input")
    add("stack_underflow.pt", torch_zip(PROTO2 + APPEND + STOP), "stack underflow", "APPEND on an empty stack")
    add("mark_underflow.pt", torch_zip(PROTO2 + pint(1) + TUPLE + STOP), "MARK underflow", "TUPLE with no MARK")
    add("fence_underflow.pt", torch_zip(PROTO2 + EMPTY_LIST + MARK + pint(1) + APPEND + STOP), "stack underflow",
        "APPEND reaching below a MARK")
    add("setitem_on_list.pt", torch_zip(PROTO2 + EMPTY_LIST + pint(1) + pint(2) + SETITEM + STOP),
        "SETITEM on a list", "type confusion (CVE-2026-24747 shape)")
    add("append_on_dict.pt", torch_zip(PROTO2 + EMPTY_DICT + pint(1) + APPEND + STOP), "APPEND on a dict",
        "type confusion")
    add("unhashable_key.pt", torch_zip(PROTO2 + EMPTY_DICT + EMPTY_LIST + pint(1) + SETITEM + STOP),
        "unhashable list", "list as a dict key")
    add("reduce_on_str.pt", torch_zip(PROTO2 + ustr("os") + EMPTY_TUPLE + REDUCE + STOP), "REDUCE on a str",
        "calling a non-callable")
    amplify = PROTO4 + b"\x8e" + struct.pack("<Q", 1 << 16) + b"x" * (1 << 16) + b"\x94" + b"0" + MARK
    amplify += (glob("builtins", "bytearray") + b"h\x00" + TUPLE1 + REDUCE) * 300 + b"l" + STOP
    add("string_amplification.pt", torch_zip(amplify), "amplification", "bytearray() copies of one memo entry")
    deep_key = PROTO2 + EMPTY_DICT + pint(1) + TUPLE1 * 40 + pint(0) + SETITEM + STOP
    add("deep_dict_key.pt", torch_zip(deep_key), "too large", "a dict key tuple nested 40 deep")
    nested = PROTO2 + EMPTY_LIST * 2000 + APPEND * 1999 + STOP
    add("deep_containers.pt", torch_zip(nested), "nested deeper than 1000", "2000 nested lists")
    add("proto6.pt", torch_zip(b"\x80\x06" + NONE + STOP), "pickle protocol 6", "unknown protocol")
    add("unknown_opcode.pt", torch_zip(PROTO2 + b"\xff" + STOP), "unknown opcode 0xff", "undefined opcode")
    add("long_too_big.pt", torch_zip(PROTO2 + b"\x8a\x09" + b"\x01" * 9 + STOP), "does not fit in 64 bits",
        "LONG1 wider than int64")
    add("bad_utf8.pt", torch_zip(PROTO2 + b"X\x02\x00\x00\x00\xc3\x28" + STOP), "not valid UTF-8",
        "malformed string")

    # --- truncation at several points ---
    full = state_dict([("w", tensor("FloatStorage", "0", 6, 0, [6], [1]))])
    for cut in (1, 5, 30, len(full) // 2, len(full) - 1):
        add(f"truncated_pickle_{cut}.pt", torch_zip(full[:cut], [("0", F32_SIX)]), "truncated",
            f"data.pkl cut after {cut} bytes")
    good = torch_zip(full, [("0", F32_SIX)])
    for cut in (10, len(good) // 2, len(good) - 10):
        add(f"truncated_zip_{cut}.pt", good[:cut], "zip", f"the archive cut after {cut} bytes")

    # --- storage and view checks ---
    add("storage_size_mismatch.pt",
        torch_zip(state_dict([("w", tensor("FloatStorage", "0", 6, 0, [6], [1]))]), [("0", F32_SIX[:20])]),
        "does not match record", "numel x itemsize != record size")
    add("storage_numel_overflow.pt",
        torch_zip(state_dict([("w", tensor("DoubleStorage", "0", 2**62, 0, [1], [1]))]), [("0", F32_SIX)]),
        "does not match record", "numel x itemsize overflows")
    add("storage_missing.pt", torch_zip(state_dict([("w", tensor("FloatStorage", "7", 6, 0, [6], [1]))])),
        "has no record", "persistent id without a record")
    add("view_past_storage.pt",
        torch_zip(state_dict([("w", tensor("FloatStorage", "0", 6, 3, [4], [1]))]), [("0", F32_SIX)]),
        "view needs 28 bytes but storage has 24", "offset + size past the storage")
    add("view_stride_overflow.pt",
        torch_zip(state_dict([("w", tensor("FloatStorage", "0", 6, 0, [3, 3], [2**62, 1]))]), [("0", F32_SIX)]),
        "overflows", "stride x size overflows")
    add("view_broadcast_bomb.pt",
        torch_zip(state_dict([("w", tensor("FloatStorage", "0", 6, 0, [2**20, 2**20], [0, 0]))]), [("0", F32_SIX)]),
        "broadcast", "6 stored floats seen as 2^40 elements (stride 0)")
    add("view_rank_mismatch.pt",
        torch_zip(state_dict([("w", tensor("FloatStorage", "0", 6, 0, [2, 3], [1]))]), [("0", F32_SIX)]),
        "shape has 2 dims but strides 1", "len(size) != len(stride)")
    two_types = state_dict([("a", tensor("FloatStorage", "0", 6, 0, [6], [1])),
                            ("b", tensor("HalfStorage", "0", 12, 0, [12], [1]))])
    add("storage_type_conflict.pt", torch_zip(two_types, [("0", F32_SIX)]), "is declared as both",
        "one storage key with two dtypes")
    add("quantized.pt", torch_zip(PROTO2 + glob("torch._utils", "_rebuild_qtensor") + STOP), "quantized tensor",
        "unsupported rebuild")
    conj = EMPTY_DICT + ustr("conj") + b"\x88" + SETITEM
    add("conj_bit.pt", torch_zip(state_dict([("w", tensor("FloatStorage", "0", 6, 0, [6], [1], metadata=conj))]),
                                 [("0", F32_SIX)]), "conjugate bit", "metadata conj=True")
    add("pid_not_storage.pt", torch_zip(PROTO2 + glob("torch._utils", "_rebuild_tensor_v2") + MARK + ustr("x") +
                                        BINPERSID + pint(0) + ints([1]) + ints([1]) + NEWFALSE + ordered_dict() +
                                        TUPLE + REDUCE + STOP),
        "persistent id 'x': not a tuple", "persistent id of the wrong shape")
    add("byteorder_garbage.pt", torch_zip(full, [("0", F32_SIX)], [("archive/byteorder", b"middle",
                                                                    zipfile.ZIP_STORED)]),
        "byteorder record says", "unknown byte order")

    # --- zip container attacks ---
    pkl = PROTO2 + NONE + STOP
    # B's local header sits inside A's data: the central directory points into A.
    inner = raw_zip([("archive/data/0", F32_SIX)])
    inner_header_len = 30 + len("archive/data/0")
    a_data = pkl + inner[:inner_header_len + len(F32_SIX)]

    def overlap(i, r):
        if i == 1:
            r["offset"] = 30 + len("archive/data.pkl") + len(pkl)

    add("zip_overlap.pt", raw_zip([("archive/data.pkl", a_data), ("archive/data/0", F32_SIX)], overlap),
        "overlap", "two entries sharing bytes")
    add("zip_dotdot.pt", raw_zip([("archive/data.pkl", pkl), ("archive/../../evil.sh", b"touch CANARY\n")]),
        "contains a '..' component", "path traversal name")
    add("zip_absolute.pt", raw_zip([("archive/data.pkl", pkl), ("/tmp/evil.sh", b"x")]), "absolute path",
        "absolute name")
    add("zip_duplicate.pt", raw_zip([("archive/data.pkl", pkl), ("archive/data.pkl", PROTO2 + canary_call(
        "os", "system") + STOP)]), "duplicate entry name", "two entries with one name")

    def encrypted(i, r):
        r["flags"] = 1

    add("zip_encrypted.pt", raw_zip([("archive/data.pkl", pkl)], encrypted), "encrypted", "encryption bit")

    # Zip bombs. (1) data.pkl declares 4 GiB: refused before anything is allocated.
    declared = bytearray(zip_bytes([("archive/data.pkl", b"\0" * (4 << 20), zipfile.ZIP_DEFLATED)]))
    for sig in (b"PK\x03\x04", b"PK\x01\x02"):
        at = declared.find(sig)
        field = at + (22 if sig == b"PK\x03\x04" else 24)
        declared[field:field + 4] = struct.pack("<I", 0xFFFFFFF0)
    add("zip_bomb_declared.pt", bytes(declared), "exceeds the limit",
        "data.pkl declaring 4 GiB inflated")
    # (2) A record declaring 4 MiB that inflates from a tiny stream: over the ratio cap.
    big = state_dict([("w", tensor("FloatStorage", "0", 1 << 20, 0, [1 << 20], [1]))])
    add("zip_bomb_ratio.pt", zip_bytes([("archive/data.pkl", big, zipfile.ZIP_STORED),
                                        ("archive/data/0", b"\0" * (4 << 20), zipfile.ZIP_DEFLATED),
                                        ("archive/version", b"3\n", zipfile.ZIP_STORED)]),
        "compression ratio", "a 1000:1 deflate record (4 MiB of zeros)")
    # (3) A record lying about its size: declares 24 bytes, inflates to more.
    lying = bytearray(zip_bytes([("archive/data.pkl", full, zipfile.ZIP_STORED),
                                 ("archive/data/0", F32_SIX * 64, zipfile.ZIP_DEFLATED)]))
    for sig, off in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = 0
        while True:
            at = lying.find(sig, at)
            if at < 0:
                break
            name_len = struct.unpack_from("<H", lying, at + (26 if sig == b"PK\x03\x04" else 28))[0]
            name_at = at + (30 if sig == b"PK\x03\x04" else 46)
            if lying[name_at:name_at + name_len] == b"archive/data/0":
                lying[at + off:at + off + 4] = struct.pack("<I", 24)
            at += 4
    add("zip_bomb_lying_size.pt", bytes(lying), "inflates to more than its declared 24 bytes",
        "deflate stream longer than declared")

    # --- legacy stream ---
    obj = PROTO2 + ordered_dict() + MARK + ustr("w") + legacy_tensor("FloatStorage", "1", 6, [6]) + SETITEMS + STOP
    add("legacy_lying_count.pt", legacy(obj, ["1"], struct.pack("<q", 1000) + F32_SIX), "record says 1000 elements",
        "element count disagreeing with the pickle")
    add("legacy_truncated_data.pt", legacy(obj, ["1"], struct.pack("<q", 6) + F32_SIX[:10]),
        "extends past the end of the file", "storage data cut short")
    add("legacy_huge_count.pt", legacy(PROTO2 + ordered_dict() + MARK + ustr("w") +
                                       legacy_tensor("DoubleStorage", "1", 2**61, [1]) + SETITEMS + STOP,
                                       ["1"], struct.pack("<q", 2**61) + F32_SIX), "extends past the end",
        "element count x itemsize larger than the file")
    add("legacy_payload.pt", legacy(PROTO2 + canary_call("os", "system") + STOP, [], b""),
        "global 'os.system' is not allowed", "payload in the object pickle")
    add("legacy_bad_magic.pt", PROTO2 + b"\x8a\x0a" + b"\x00" * 10 + STOP, "magic number is missing",
        "a pickle that is not the torch magic")
    return c


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))
    lines = ["# Generated by tests/hostile/make_hostile_pt.py. FILE, exit code, stderr phrase, what."]
    for name, data, phrase, comment in cases():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        lines.append(f"{name}\t3\t{phrase}\t{comment}")
    with open(os.path.join(OUT, "manifest.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines) - 1} cases to {OUT}")


if __name__ == "__main__":
    main()
