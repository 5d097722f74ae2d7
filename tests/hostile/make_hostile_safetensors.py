#!/usr/bin/env python3
"""Writes the hostile .safetensors corpus: tests/hostile/safetensors/*.safetensors and its
manifest.tsv (FILE <TAB> 3 <TAB> phrase that numprobe's one-line error must contain).

Each file breaks one rule of the format (huggingface/safetensors safetensors/src/tensor.rs and
formats.md section 3) and is otherwise valid, so that the expected message is the one for that
rule. The files keep the .safetensors extension: format detection relies on it for files whose
first bytes are not a plausible header. Run from anywhere; the output folder is fixed relative to
this script. Deterministic: rerunning gives identical bytes.
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "safetensors")


def header(obj):
    return json.dumps(obj, separators=(",", ":")).encode()


def st_file(hdr, data=b"", length=None):
    """u64 LE length (the real one unless `length` lies), header bytes, data bytes."""
    n = len(hdr) if length is None else length
    return struct.pack("<Q", n) + hdr + data


def t(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


def cases():
    f32x2 = t("F32", [2], 0, 8)
    ok_hdr = header({"w": f32x2})
    c = []
    add = lambda name, data, phrase, why: c.append((name, data, phrase, why))

    # Length field and header text.
    add("empty_file", b"", "file is 0 bytes", "no length field at all")
    add("too_short", b"\x08\x00\x00\x00\x00", "too short for the 8-byte header length",
        "file < 8 bytes")
    add("header_exceeds_file", st_file(b"{}", length=70000) + b"\x00" * 110,
        "header length 70000 exceeds file size 120", "N + 8 > file length")
    add("header_over_cap", st_file(ok_hdr, b"\x00" * 8, length=100_000_001),
        "exceeds the cap of 100000000 bytes", "N over the reference's 100 MB cap")
    add("header_length_u64_max", st_file(ok_hdr, b"\x00" * 8, length=2**64 - 1),
        "exceeds the cap", "N = 2^64-1 (8 + N wraps)")
    add("truncated_header_json", st_file(ok_hdr[:-9], b"\x00" * 8), "header is not valid JSON",
        "JSON cut short")
    add("non_utf8_header", st_file(b'{"w\xff\xfe":' + header(f32x2) + b"}", b"\x00" * 8),
        "not valid UTF-8", "invalid UTF-8 in a tensor name")
    add("overlong_utf8_header", st_file(b'{"\xc0\xafw":' + header(f32x2) + b"}", b"\x00" * 8),
        "not valid UTF-8", "overlong encoding of '/'")
    add("nul_in_header", st_file(b'{"w":' + header(f32x2) + b"}\x00garbage", b"\x00" * 8),
        "NUL byte", "a NUL would end the JSON early for a C string parser")
    add("bom_header", st_file(b"\xef\xbb\xbf" + ok_hdr, b"\x00" * 8), "not valid JSON",
        "a UTF-8 byte order mark is not JSON")
    add("header_not_object", st_file(b'[{"w":1}]'), "not a JSON object", "root is an array")
    add("trailing_json", st_file(ok_hdr + b"{}", b"\x00" * 8), "not valid JSON",
        "a second JSON value after the object")
    add("deep_nesting", st_file(b'{"w":{"x":' + b"[" * 5000 + b"]" * 5000 +
                                b',"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', b"\x00" * 8),
        "nests deeper than 128 levels", "5000 nested arrays in an ignored field")

    # Tensor entries.
    add("unknown_dtype", st_file(header({"w": t("F33", [2], 0, 8)}), b"\x00" * 8),
        "unknown dtype 'F33'", "dtype outside the spec")
    add("dtype_not_string", st_file(header({"w": {"dtype": 32, "shape": [2],
                                                  "data_offsets": [0, 8]}}), b"\x00" * 8),
        "dtype is a number", "dtype of the wrong JSON type")
    add("unsupported_dtype_f4", st_file(header({"w": t("F4", [4], 0, 2)}), b"\x00" * 2),
        "dtype F4 is valid safetensors but numprobe cannot represent it",
        "valid spec dtype without a numprobe type (kUnsupported)")
    add("shape_product_overflow",
        st_file(header({"w": t("F32", [2**47, 2**47, 2**47], 0, 8)}), b"\x00" * 8),
        "overflows 64 bits", "product of dims overflows u64")
    add("shape_overflow_behind_zero",
        st_file(header({"w": t("F32", [0, 2**47, 2**47], 0, 0)})),
        "overflows 64 bits", "empty tensor whose other dims overflow (strides would)")
    add("bits_overflow", st_file(header({"w": t("F64", [2**31, 2**31], 0, 8)}), b"\x00" * 8),
        "more than 2^64 bits", "numel fits but numel * 64 bits does not")
    add("negative_shape", st_file(header({"w": t("F32", [-2], 0, 8)}), b"\x00" * 8),
        "negative dimension -2", "negative dim")
    add("fractional_shape", st_file(b'{"w":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}}',
                                    b"\x00" * 8), "fractional or out-of-range number",
        "a float where an integer belongs")
    add("dim_over_2p48", st_file(header({"w": t("U8", [2**48], 0, 8)}), b"\x00" * 8),
        "exceeds the limit 2^48-1", "dim beyond the schema's cap")
    add("too_many_dims", st_file(header({"w": t("U8", [1] * 65, 0, 1)}), b"\x00"),
        "more than 64 dimensions", "65 dims")
    add("lying_dims", st_file(header({"w": t("U8", [2**24, 2**24], 0, 2**48)}), b"\x00" * 16),
        "file truncated: tensor data needs 281474976710656 bytes",
        "shape and offsets agree but claim 256 TiB the file does not hold")
    add("missing_data_offsets", st_file(header({"w": {"dtype": "F32", "shape": [2]}}),
                                        b"\x00" * 8), "lacks \"data_offsets\"", "missing field")
    add("duplicate_field", st_file(b'{"w":{"dtype":"F32","dtype":"I32","shape":[2],'
                                   b'"data_offsets":[0,8]}}', b"\x00" * 8),
        "duplicate key 'dtype'", "two dtypes: readers would disagree on which wins")
    add("duplicate_names", st_file(b'{"w":' + header(f32x2) + b',"w":' +
                                   header(t("I32", [2], 0, 8)) + b"}", b"\x00" * 8),
        "duplicate tensor name 'w'", "same name twice (serde keeps the last silently)")

    # data_offsets.
    add("offsets_wrong_type", st_file(b'{"w":{"dtype":"F32","shape":[2],"data_offsets":"0-8"}}',
                                      b"\x00" * 8), "data_offsets is a string",
        "data_offsets not an array")
    add("offsets_one_element", st_file(b'{"w":{"dtype":"F32","shape":[2],"data_offsets":[8]}}',
                                       b"\x00" * 8), "data_offsets has 1 element, not 2",
        "one offset")
    add("offsets_three_elements",
        st_file(b'{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8,16]}}', b"\x00" * 8),
        "more than 2 elements", "three offsets")
    add("offsets_negative", st_file(b'{"w":{"dtype":"F32","shape":[2],"data_offsets":[-8,0]}}',
                                    b"\x00" * 8), "negative data_offsets value -8",
        "negative offset")
    add("offsets_end_before_begin", st_file(header({"w": t("F32", [2], 8, 0)}), b"\x00" * 8),
        "data_offsets end 0 is before begin 8", "end < begin")
    add("size_mismatch", st_file(header({"w": t("F32", [3], 0, 8)}), b"\x00" * 8),
        "hold 8 bytes but F32 [3] needs 12", "offsets disagree with dtype x shape")
    add("offsets_overlap", st_file(header({"a": t("F32", [2], 0, 8), "b": t("F32", [2], 4, 12)}),
                                   b"\x00" * 12),
        "tensor 'b' data_offsets [4, 12] overlap tensor 'a' [0, 8]", "partial overlap")
    add("offsets_alias", st_file(header({"a": t("F32", [2], 0, 8), "b": t("I32", [2], 0, 8)}),
                                 b"\x00" * 8),
        "overlap tensor 'a'", "two tensors on the same bytes (polyglot)")
    add("offsets_hole", st_file(header({"a": t("F32", [2], 0, 8), "b": t("F32", [2], 16, 24)}),
                                b"\x00" * 24),
        "hole of 8 bytes between tensor 'a' (ends at 8) and tensor 'b' (begins at 16)",
        "unreferenced bytes between tensors")
    add("offsets_not_from_zero", st_file(header({"w": t("F32", [2], 8, 16)}), b"\x00" * 16),
        "data_offsets do not start at 0", "unreferenced bytes before the first tensor")
    add("trailing_bytes", st_file(ok_hdr, b"\x00" * 8 + b"hidden payload"),
        "14 trailing bytes after the tensor data", "bytes after the last tensor")
    add("truncated_data", st_file(ok_hdr, b"\x00" * 5),
        "file truncated: tensor data needs 8 bytes after the header but only 5 are present",
        "data shorter than the offsets say")
    add("offsets_u64_max", st_file(header({"w": t("U8", [2**48 - 1], 2**64 - 2**48, 2**64 - 1)}),
                                   b"\x00" * 8), "do not start at 0",
        "offsets near 2^64 (no wrap-around in begin + size)")

    # __metadata__.
    add("metadata_non_string", st_file(header({"__metadata__": {"format": 1}, "w": f32x2}),
                                       b"\x00" * 8),
        "__metadata__ value of 'format' is a number, not a string", "metadata value not a string")
    add("metadata_nested", st_file(header({"__metadata__": {"a": {"b": "c"}}, "w": f32x2}),
                                   b"\x00" * 8), "is an object, not a string",
        "nested metadata")
    add("metadata_not_object", st_file(header({"__metadata__": ["a"], "w": f32x2}), b"\x00" * 8),
        "__metadata__ is an array", "metadata not an object")
    add("metadata_duplicate_key",
        st_file(b'{"__metadata__":{"k":"1","k":"2"},"w":' + header(f32x2) + b"}", b"\x00" * 8),
        "duplicate __metadata__ key 'k'", "same metadata key twice")
    return c


def main():
    os.makedirs(OUT, exist_ok=True)
    for old in os.listdir(OUT):
        if old.endswith(".safetensors"):
            os.remove(os.path.join(OUT, old))
    lines = ["# Generated by tests/hostile/make_hostile_safetensors.py; do not edit by hand.",
             "# FILE\tEXIT_CODE\tPHRASE\tWHAT IS WRONG"]
    for name, data, phrase, why in cases():
        fname = name + ".safetensors"
        with open(os.path.join(OUT, fname), "wb") as f:
            f.write(data)
        assert "\t" not in phrase and "\t" not in why
        lines.append(f"{fname}\t3\t{phrase}\t{why}")
    with open(os.path.join(OUT, "manifest.tsv"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines) - 2} files to {OUT}")


if __name__ == "__main__":
    main()
