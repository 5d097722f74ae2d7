"""numprobe.troubleshooter: TroubleShooter's compare names on npy folders and weight files, with
its arguments and its output columns; figures checked against numpy."""
import csv
import json
import math
import os
import sys

import numpy as np
import pytest
import torch

import numprobe
from numprobe import troubleshooter as ts

SOURCE = os.environ.get("NUMPROBE_SOURCE_DIR",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "tests", "golden"))
from gen_diff import write_ckpt  # noqa: E402 (a MindSpore .ckpt by checkpoint.proto's layout)


def make_npy_dirs(tmp_path):
    rng = np.random.default_rng(0)
    orig, target = tmp_path / "orig", tmp_path / "target"
    orig.mkdir()
    target.mkdir()
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = a.copy()
    b[1, 2] += 0.5  # one element differs
    np.save(orig / "x.npy", a)
    np.save(target / "x.npy", b)
    same = rng.standard_normal(6).astype(np.float32)
    np.save(orig / "same.npy", same)
    np.save(target / "same.npy", same)
    np.save(orig / "only_orig.npy", same)
    np.save(target / "shape.npy", np.zeros((2, 3), np.float32))
    np.save(orig / "shape.npy", np.zeros((3, 2), np.float32))
    return orig, target, a, b


def test_compare_npy_dir_columns_and_figures(tmp_path, capsys):
    orig, target, a, b = make_npy_dirs(tmp_path)
    out = tmp_path / "cmp.csv"
    rows = ts.compare_npy_dir(orig, target, output_file=out)
    printed = capsys.readouterr().out
    assert "The list of comparison results" in printed
    by_name = {r["orig array name"]: r for r in rows}
    assert list(rows[0]) == ["orig array name", "target array name", "result of allclose",
                             "ratio of allclose", "cosine similarity", "mean & max diffs"]
    x = by_name["x.npy"]
    assert x["result of allclose"] == "False"
    expected_ratio = np.isclose(a, b, rtol=1e-4, atol=1e-4).sum() / a.size
    assert x["ratio of allclose"] == f"{math.trunc(expected_ratio * 1e4) / 1e4 * 100:.2f}%"
    cos = float(np.dot(a.ravel().astype(np.float64), b.ravel()) /
                (np.linalg.norm(a.astype(np.float64)) * np.linalg.norm(b.astype(np.float64))))
    assert float(x["cosine similarity"]) == pytest.approx(math.trunc(cos * 1e5) / 1e5, abs=1e-5)
    mean, mx = (float(v) for v in x["mean & max diffs"].split(", "))
    assert mx == pytest.approx(0.5, abs=1e-5)
    assert mean == pytest.approx(math.trunc(np.abs(a - b).mean() * 1e5) / 1e5, abs=1e-5)
    same = by_name["same.npy"]
    assert (same["result of allclose"], same["ratio of allclose"], same["cosine similarity"],
            same["mean & max diffs"]) == ("True", "100.00%", "1.0", "0.0, 0.0")
    assert by_name["shape.npy"]["result of allclose"] == "Shape is inconsistent"
    assert by_name["only_orig.npy"]["target array name"] == "None"
    assert by_name["only_orig.npy"]["result of allclose"] == "False"
    with open(out, newline="", encoding="utf-8") as f:
        written = list(csv.reader(f))
    assert written[0] == list(rows[0])
    assert written[1:] == [list(r.values()) for r in rows]


def test_compare_shape_columns_and_equal_nan(tmp_path, capsys):
    orig, target = tmp_path / "o", tmp_path / "t"
    orig.mkdir()
    target.mkdir()
    v = np.array([1.0, np.nan, 3.0], np.float32)
    np.save(orig / "n.npy", v)
    np.save(target / "n.npy", v)
    rows = ts.compare_npy_dir(orig, target, compare_shape=True)
    assert rows[0]["shape of orig"] == "(3,)" and rows[0]["shape of target"] == "(3,)"
    assert rows[0]["result of allclose"] == "False"  # NaN != NaN without equal_nan
    assert rows[0]["ratio of allclose"] == "66.66%"
    rows = ts.compare_npy_dir(orig, target, equal_nan=True)
    assert rows[0]["result of allclose"] == "True"
    with pytest.raises(numprobe.UsageError):
        ts.compare_npy_dir(orig, target, rtol=-1.0)
    with pytest.raises(numprobe.NotFoundError):
        ts.compare_npy_dir(tmp_path / "missing", target)


def test_pairing_by_number_and_shape(tmp_path, capsys):
    orig, target = tmp_path / "o", tmp_path / "t"
    orig.mkdir()
    target.mkdir()
    for i in (2, 10, 1):
        np.save(orig / f"out_{i}.npy", np.full(i, i, np.float32))
        np.save(target / f"res{i}_x.npy", np.full(i, i, np.float32))
    assert ts.get_name_map_list_by_number(orig, target) == [
        ("out_1.npy", "res1_x.npy"), ("out_2.npy", "res2_x.npy"), ("out_10.npy", "res10_x.npy")]
    rows = ts.compare_list_dir(orig, target)
    assert all(r["result of allclose"] == "True" for r in rows)

    g_orig, g_target = tmp_path / "go", tmp_path / "gt"
    g_orig.mkdir()
    g_target.mkdir()
    shapes_orig = [(4, 3), (4,), (2, 4), (2,)]
    shapes_target = [(4, 3), (2, 4), (2,)]  # the (4,) gradient is missing
    for k, s in enumerate(shapes_orig):
        np.save(g_orig / f"grad_{k}.npy", np.ones(s, np.float32))
    for k, s in enumerate(shapes_target):
        np.save(g_target / f"g{k}.npy", np.ones(s, np.float32))
    assert ts.get_name_map_list_by_shape_edit_distance(g_orig, g_target) == [
        ("grad_0.npy", "g0.npy"), ("grad_1.npy", None), ("grad_2.npy", "g1.npy"),
        ("grad_3.npy", "g2.npy")]
    rows = ts.compare_grads_dir(g_orig, g_target)
    assert "shape of orig" in rows[0]  # compare_shape defaults to True for gradients
    assert [r["result of allclose"] for r in rows] == ["True", "False", "True", "True"]
    rows = ts.compare_dict_dir(g_orig, g_orig)
    assert all(r["result of allclose"] == "True" for r in rows)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(2, 3, 3)
        self.bn = torch.nn.BatchNorm1d(3)
        self.fc = torch.nn.Linear(3, 2)
        self.norm = torch.nn.LayerNorm(2)


def test_get_weight_map(tmp_path, capsys):
    net = Net()
    path = tmp_path / "map.json"
    name_map, value_map = ts.get_weight_map(net, weight_map_save_path=path)
    assert name_map["bn.weight"] == "bn.gamma"
    assert name_map["bn.running_var"] == "bn.moving_variance"
    assert name_map["norm.bias"] == "norm.beta" and name_map["fc.weight"] == "fc.weight"
    assert name_map["bn.num_batches_tracked"] == "bn.num_batches_tracked"
    assert list(name_map) == list(net.state_dict())
    assert value_map == {"conv.weight":
                         "troubleshooter.migrator.mapping_relation.weight_adapter.expand_dims"}
    assert json.loads(path.read_text()) == [name_map, value_map]
    prefixed, _ = ts.get_weight_map(net, weight_name_prefix="net",
                                    custom_name_func=lambda m: {k: v.upper() for k, v in m.items()})
    assert prefixed["bn.weight"] == "NET.BN.GAMMA"
    with pytest.raises(TypeError):
        ts.get_weight_map(object())


def test_compare_pth_and_ckpt_and_ms_ckpt(tmp_path, capsys):
    torch.manual_seed(0)
    net = Net()
    torch.save(net.state_dict(), tmp_path / "net.pth")
    ts.get_weight_map(net, weight_map_save_path=tmp_path / "map.json")
    name_map, _ = ts.get_weight_map(net)
    # The "MindSpore" side, renamed as the map says, Conv1d's weight in MindSpore's 4-d layout,
    # one value changed, written as a MindSpore .ckpt.
    ms = {}
    for k, v in net.state_dict().items():
        if k.endswith("num_batches_tracked"):
            continue
        value = v.numpy().copy()
        if k == "conv.weight":
            value = np.expand_dims(value, 2)
        ms[name_map[k]] = value
    ms["fc.bias"][0] += 1.0
    write_ckpt(tmp_path / "ms.ckpt", list(ms.items()))
    shapes, values = ts.compare_pth_and_ckpt(tmp_path / "map.json", tmp_path / "net.pth",
                                             tmp_path / "ms.ckpt", output_file=tmp_path / "w.csv")
    printed = capsys.readouterr().out
    assert "The list of comparison results for shapes" in printed
    assert list(shapes[0]) == ["Parameter name of torch", "Parameter name of MindSpore",
                               "Whether shape are equal", "Parameter shape of torch",
                               "Parameter shape of MindSpore"]
    assert list(values[0]) == ["Parameter name of torch", "Parameter name of MindSpore",
                               "results of comparison", "match ratio", "cosine similarity",
                               "(mean, max)"]
    by_torch = {v["Parameter name of torch"]: v for v in values}
    assert by_torch["bn.weight"]["Parameter name of MindSpore"] == "bn.gamma"
    assert by_torch["bn.weight"]["results of comparison"] == "True"
    assert by_torch["conv.weight"]["results of comparison"] == "True"  # expand_dims layout
    assert by_torch["fc.bias"]["results of comparison"] == "False"
    unmatched = [s for s in shapes if s["Parameter name of MindSpore"] == "None"]
    assert [s["Parameter name of torch"] for s in unmatched] == ["bn.num_batches_tracked"]
    with open(tmp_path / "w.csv", newline="", encoding="utf-8") as f:
        assert len(list(csv.reader(f))) == len(shapes) + 1

    write_ckpt(tmp_path / "ms2.ckpt", list(ms.items()))
    shapes, values = ts.compare_ms_ckpt(tmp_path / "ms.ckpt", tmp_path / "ms2.ckpt", print_level=2)
    assert all(v["results of comparison"] == "True" for v in values)
    assert list(values[0])[:2] == ["Parameter name of original ckpt",
                                   "Parameter name of target ckpt"]
    assert "for values" in capsys.readouterr().out
    with pytest.raises(numprobe.UsageError):
        ts.compare_ms_ckpt(tmp_path / "ms.ckpt", tmp_path / "ms2.ckpt", print_level=5)
