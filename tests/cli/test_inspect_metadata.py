"""`numprobe inspect` text output shows a file's metadata (safetensors __metadata__): one indented
"key: value" line per key right after the file line, in file order, values cut after 80
characters with "...", control characters escaped so that each entry stays on one line.

The files are written here byte by byte (struct + json), independent of numprobe's writer.
"""
import json
import struct


def write_safetensors(path, metadata):
    data = struct.pack("<3f", 1.0, -2.0, 0.5)
    header = {"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, len(data)]}}
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode("utf-8")
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)


def inspect_lines(run, path):
    r = run("inspect", path)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_metadata_lines_follow_the_file_line(run, tmp_path):
    p = tmp_path / "m.safetensors"
    write_safetensors(p, {"format": "pt", "source": "unit test", "note": "Grüße 数值"})
    lines = inspect_lines(run, p)
    assert lines[0] == f"{p}: safetensors, 1 tensor"
    assert lines[1:4] == ["  format: pt", "  source: unit test", "  note: Grüße 数值"]
    assert lines[4].split()[:3] == ["name", "dtype", "shape"]
    assert lines[5].split()[:3] == ["w", "f32", "[3]"]


def test_long_values_are_cut_after_80_characters(run, tmp_path):
    p = tmp_path / "long.safetensors"
    exact = "x" * 80
    long = "é" * 79 + "ab" + "z" * 500  # 581 characters, 2-byte ones at the cut
    write_safetensors(p, {"exact": exact, "long": long})
    lines = inspect_lines(run, p)
    assert lines[1] == "  exact: " + exact
    assert lines[2] == "  long: " + "é" * 79 + "a..."


def test_control_characters_do_not_break_lines(run, tmp_path):
    p = tmp_path / "ctl.safetensors"
    write_safetensors(p, {"multi": "line one\nline two\x1b[31m", "k\tey": "v"})
    lines = inspect_lines(run, p)
    assert lines[1] == "  multi: line one\\x0aline two\\x1b[31m"
    assert lines[2] == "  k\\x09ey: v"
    assert lines[3].split()[0] == "name"


def test_no_metadata_no_extra_lines(run, tmp_path):
    for i, metadata in enumerate((None, {})):
        p = tmp_path / f"plain{i}.safetensors"
        write_safetensors(p, metadata)
        lines = inspect_lines(run, p)
        assert lines[1].split()[:3] == ["name", "dtype", "shape"]


def test_json_output_keeps_the_full_values(run, tmp_path):
    p = tmp_path / "j.safetensors"
    long = "y" * 200
    write_safetensors(p, {"long": long})
    r = run("inspect", "--json", p)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["files"][0]["metadata"] == {"long": long}
