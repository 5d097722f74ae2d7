"""`numprobe diff` on the golden inputs of tests/golden/gen_diff.py: a real torch.save state_dict
against its MindSpore-named .ckpt, .safetensors and .npz (all paired and equal), a perturbed tensor
(exactly that one reported, figures checked against numpy's in expected.json), renamed and missing
tensors (unpaired, then paired by a user map), unnamed gradients (shape alignment), dump trees,
output files, and the exit codes for bad input and usage."""
import csv
import json
import os

import pytest


@pytest.fixture(scope="module")
def gd(golden_dir):
    return os.path.join(golden_dir, "diff")


@pytest.fixture(scope="module")
def expected(gd):
    with open(os.path.join(gd, "expected.json")) as f:
        return json.load(f)


def diff_json(run, tmp_path, *args):
    out = tmp_path / "out"
    r = run("diff", *args, "-o", out)
    with open(out / "diff.json") as f:
        return r, json.load(f)


@pytest.mark.parametrize("other", ["model.ckpt", "model.safetensors", "model.npz"])
def test_same_weights_in_every_format_are_paired_and_equal(run, gd, expected, tmp_path, other):
    r, j = diff_json(run, tmp_path, os.path.join(gd, "model.pt"), os.path.join(gd, other))
    assert r.returncode == 0, r.stdout + r.stderr
    assert j["a"]["kind"] == "pt"
    names_a = sorted(p["name_a"] for p in j["pairs"])
    floats = [n for n in expected["torch_names"] if not n.endswith("num_batches_tracked")]
    if other == "model.ckpt":
        # num_batches_tracked has no MindSpore counterpart: listed, not counted.
        assert names_a == sorted(floats)
        assert [u["name"] for u in j["only_a"]] == ["bn.num_batches_tracked"]
        assert j["only_a"][0]["framework_only"] is True
        rules = {p["name_a"]: (p["name_b"], p["rule"]) for p in j["pairs"]}
        assert rules["bn.weight"] == ("bn.gamma", "framework")
        assert rules["bn.running_var"] == ("bn.moving_variance", "framework")
        assert rules["ln.bias"] == ("ln.beta", "framework")
        assert rules["gn.weight"] == ("gn.gamma", "framework")
        assert rules["emb.weight"] == ("emb.embedding_table", "framework")
        assert rules["act.weight"] == ("act.a", "framework")
        assert rules["conv1d.weight"] == ("conv1d.weight", "exact")
        conv = next(p for p in j["pairs"] if p["name_a"] == "conv1d.weight")
        assert conv["shape_a"] == [8, 4, 3] and conv["shape_b"] == [8, 4, 1, 3]
        assert sorted(p["name_b"] for p in j["pairs"]) == sorted(expected["ckpt_names"])
    else:
        assert names_a == sorted(expected["torch_names"])
        assert j["only_a"] == [] and j["only_b"] == []
    assert j["summary"]["equal"] == len(j["pairs"]) and j["summary"]["clean"] is True
    for p in j["pairs"]:
        assert p["status"] == "equal" and p["allclose"] is True
        assert p["max_abs_diff"] == 0 and p["allclose_ratio"] == 1


def test_perturbed_tensor_is_the_only_one_reported_with_numpy_figures(run, gd, expected, tmp_path):
    r, j = diff_json(run, tmp_path, os.path.join(gd, "perturbed.safetensors"),
                     os.path.join(gd, "model.npz"))
    assert r.returncode == 1
    differing = [p for p in j["pairs"] if p["status"] != "equal"]
    want = expected["perturbed"]
    assert [p["name_a"] for p in differing] == [want["name"]]
    p = differing[0]
    assert p["allclose"] is False
    assert p["allclose_ratio"] == pytest.approx(want["allclose_ratio"], abs=0)
    assert p["cosine"] == pytest.approx(want["cosine"], rel=1e-12)
    assert p["mean_abs_diff"] == pytest.approx(want["mean_abs_diff"], rel=1e-12)
    assert p["max_abs_diff"] == pytest.approx(want["max_abs_diff"], rel=1e-15)
    assert p["worst_index"] == want["worst_index"]
    assert p["max_rel_err"] == pytest.approx(want["max_rel_err"], rel=1e-6)
    assert p["rmse"] == pytest.approx(want["rmse"], rel=1e-12)
    assert p["max_ulp"] == want["max_ulp"] and p["ulp_dtype"] == "f32"
    # The console names it too, and nothing else.
    assert "lin.weight" in r.stdout and "1 differ" in r.stdout and "98.75%" in r.stdout
    rows = list(csv.DictReader(open(tmp_path / "out" / "diff_values.csv")))
    bad = [row for row in rows if row["status"] != "equal"]
    assert [row["name_a"] for row in bad] == ["lin.weight"]
    assert float(bad[0]["max_abs_diff"]) == pytest.approx(want["max_abs_diff"], rel=1e-15)


def test_renamed_and_missing_tensors_are_unpaired_then_mapped(run, gd, tmp_path):
    r, j = diff_json(run, tmp_path, os.path.join(gd, "model.pt"), os.path.join(gd, "renamed.npz"))
    assert r.returncode == 1
    assert sorted(u["name"] for u in j["only_a"]) == ["lin.bias", "ln.bias"]
    assert [u["name"] for u in j["only_b"]] == ["linear.bias"]
    assert "only in A (2)" in r.stdout and "linear.bias" in r.stdout
    for map_file in ("map.json", "map_ts.json"):
        r, j = diff_json(run, tmp_path, os.path.join(gd, "model.pt"),
                         os.path.join(gd, "renamed.npz"), "--map", os.path.join(gd, map_file))
        mapped = [p for p in j["pairs"] if p["rule"] == "map"]
        assert [(p["name_a"], p["name_b"], p["status"]) for p in mapped] == \
            [("lin.bias", "linear.bias", "equal")]
        assert [u["name"] for u in j["only_a"]] == ["ln.bias"] and j["only_b"] == []
        assert r.returncode == 1  # ln.bias is still missing
    assert "1 value transform in the name map not applied" in r.stderr


def test_unnamed_gradients_are_aligned_by_shape(run, gd, expected, tmp_path):
    r, j = diff_json(run, tmp_path, os.path.join(gd, "grads_a"), os.path.join(gd, "grads_b"))
    assert [[p["name_a"], p["name_b"]] for p in j["pairs"]] == expected["aligned"]
    assert all(p["rule"] == "shape-aligned" and p["status"] == "equal" for p in j["pairs"])
    assert [u["name"] for u in j["only_b"]] == [expected["extra_b_grad"]]
    assert r.returncode == 1
    r = run("diff", os.path.join(gd, "grads_a"), os.path.join(gd, "grads_b"), "--align", "never")
    assert "0 pairs" in r.stdout and "5 only in A, 6 only in B" in r.stdout


def test_dump_trees_pair_by_relative_name(run, gd, expected, tmp_path):
    r, j = diff_json(run, tmp_path, os.path.join(gd, "dump_a"), os.path.join(gd, "dump_b"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert j["a"]["kind"] == "dump"
    assert sorted(p["name_a"] for p in j["pairs"]) == sorted(expected["dump_names"])


def test_no_files_without_output_option(run, gd, tmp_path):
    r = run("diff", os.path.join(gd, "model.npz"), os.path.join(gd, "model.safetensors"),
            cwd=tmp_path)
    assert r.returncode == 0
    assert list(tmp_path.iterdir()) == []


def test_bad_input_exits_3_and_usage_exits_2(run, gd, tmp_path):
    r = run("diff", os.path.join(gd, "truncated.safetensors"), os.path.join(gd, "model.npz"))
    assert r.returncode == 3
    assert "header length 4096 exceeds file size" in r.stderr
    r = run("diff", os.path.join(gd, "model.npz"), tmp_path / "missing.pt")
    assert r.returncode == 3 and "no such file" in r.stderr
    (tmp_path / "empty").mkdir()
    r = run("diff", os.path.join(gd, "model.npz"), tmp_path / "empty")
    assert r.returncode == 3 and "no tensor files" in r.stderr
    bad_map = tmp_path / "bad.json"
    bad_map.write_text('{"a": 1}')
    r = run("diff", os.path.join(gd, "model.npz"), os.path.join(gd, "model.npz"), "--map", bad_map)
    assert r.returncode == 3 and "the value is not a string" in r.stderr
    r = run("diff", os.path.join(gd, "model.npz"), os.path.join(gd, "model.npz"), "--rtol", "-1")
    assert r.returncode == 2
    r = run("diff", os.path.join(gd, "model.npz"))
    assert r.returncode == 2
