"""numprobe.compare and numprobe.config_check.compare against `numprobe compare` and `numprobe
config-check compare` on the same inputs (msprobe's real dumps in tests/fixtures/msprobe): save()
writes the command's files byte for byte; the mapping, aliases, first divergence, summary,
pandas frame and HTML view agree with them."""
import csv
import io
import math
import os
import re
import shutil

import pytest

import numprobe
from numprobe import config_check
from numprobe.tree_compare import METRIC_ALIASES

from test_analysis_api import FIXTURES, cli, files_by_name, needs_cli

TS = "20250101000000"
TENSOR_TARGET = os.path.join(FIXTURES, "dump_tensor_bf16")
TENSOR_GOLDEN = os.path.join(FIXTURES, "dump_tensor_base")
STATS_TARGET = os.path.join(FIXTURES, "dump_statistics_bf16")
STATS_GOLDEN = os.path.join(FIXTURES, "dump_statistics_base")


def compare_both(tmp_path, target, golden, *flags, **options):
    result = numprobe.compare(target, golden, **options)
    result.save(tmp_path / "py", timestamp=TS,
                diff_analyze="-da" in flags, xlsx="--xlsx" in flags)
    run = cli("compare", "-tp", target, "-gp", golden, "-o", tmp_path / "cli", *flags)
    return result, run


@needs_cli
@pytest.mark.parametrize("target,golden", [(TENSOR_TARGET, TENSOR_GOLDEN),
                                           (STATS_TARGET, STATS_GOLDEN)])
def test_save_writes_the_commands_files(tmp_path, target, golden):
    result, run = compare_both(tmp_path, target, golden, "-da")
    assert run.returncode == (1 if result.findings else 0), run.stderr
    ours = files_by_name(tmp_path / "py", TS)
    theirs = files_by_name(tmp_path / "cli")
    assert sorted(ours) == sorted(theirs)
    assert any(name.endswith(".csv") for name in ours)
    assert any(name.startswith("diff_analyze_") for name in ours)
    for name in ours:
        assert ours[name] == theirs[name], name
    # The mapping holds every row of the CSV, keyed by NPU Name, in order.
    (csv_name,) = [n for n in ours if n.endswith(".csv")]
    rows = list(csv.DictReader(io.StringIO(ours[csv_name].decode("utf-8"))))
    assert list(result) == [r["NPU Name"] for r in rows]
    assert [r["Result"] for r in rows] == [result[k]["result"] for k in result]


@needs_cli
def test_tensor_metrics_aliases_and_first_divergence(tmp_path):
    result, run = compare_both(tmp_path, TENSOR_TARGET, TENSOR_GOLDEN)
    assert len(result) > 0
    for name, metrics in result.items():
        row = next(r for r in result.rows if r["NPU Name"] == name)
        for alias, column in METRIC_ALIASES.items():
            if column in row:
                assert metrics[alias] == metrics[column], (name, alias)
        if row["Cosine"] not in ("N/A", "unsupported", ""):
            assert metrics["cosine"] == pytest.approx(float(row["Cosine"]))
            assert metrics["mae"] == pytest.approx(float(row["MaxAbsErr"]))
    first = result.first_divergence
    assert first is not None
    assert f"first divergence: {first['op_name']}" in run.stdout
    assert first["op_name"] in result.summary()
    assert result.findings


@needs_cli
def test_statistics_mode_has_its_own_metrics(tmp_path):
    result, _run = compare_both(tmp_path, STATS_TARGET, STATS_GOLDEN)
    metrics = next(iter(result.values()))
    assert "cosine" not in metrics and "Cosine" not in metrics
    assert "max_diff" in metrics and metrics["max_diff"] == metrics["Max diff"]
    assert result.ranks[0]["mode"] == "statistics"


def test_threshold_pandas_and_html():
    result = numprobe.compare(TENSOR_TARGET, TENSOR_GOLDEN, threshold=0.999995)
    below = result.below_threshold()
    assert below == [k for k, m in result.items()
                     if m.get("cosine") is not None and (math.isnan(m["cosine"])
                                                         or m["cosine"] < 0.999995)]
    assert below, "the bf16 run has rows below 0.999995"
    assert f"{len(below)} rows with cosine below" in result.summary()
    frame = result.to_pandas()
    assert list(frame.index) == list(result)
    assert frame["Cosine"].dtype.kind == "f"
    assert frame.loc[below[0], "Cosine"] < 0.999995
    page = result._repr_html_()
    assert "<table>" in page and result.first_divergence["op_name"] in page
    with pytest.raises(numprobe.UsageError):
        numprobe.compare(TENSOR_TARGET, TENSOR_GOLDEN).below_threshold()


def test_multi_rank_keys(tmp_path):
    for side, source in (("t", TENSOR_TARGET), ("g", TENSOR_GOLDEN)):
        (proc,) = os.listdir(os.path.join(source, "step0"))
        for rank in ("rank0", "rank1"):
            shutil.copytree(os.path.join(source, "step0", proc), tmp_path / side / "step0" / rank)
    result = numprobe.compare(tmp_path / "t", tmp_path / "g")
    assert [r["label"] for r in result.ranks] == ["step0/rank0", "step0/rank1"]
    keys = list(result)
    assert keys[0].startswith("step0/rank0/") and keys[-1].startswith("step0/rank1/")
    assert len(keys) == len(result.rows)
    assert result.first_divergence["rank"] == "step0/rank0"


@needs_cli
def test_compare_errors_match_the_command(tmp_path):
    missing = tmp_path / "missing"
    with pytest.raises(numprobe.NotFoundError) as info:
        numprobe.compare(missing, TENSOR_GOLDEN)
    assert info.value.code == 3
    assert cli("compare", "-tp", missing, "-gp", TENSOR_GOLDEN,
               "-o", tmp_path / "o").returncode == info.value.code
    dump_json = os.path.join(TENSOR_GOLDEN, "step0", os.listdir(
        os.path.join(TENSOR_GOLDEN, "step0"))[0], "dump.json")
    with pytest.raises(numprobe.UsageError) as info:  # a file against a folder
        numprobe.compare(dump_json, TENSOR_GOLDEN)
    assert info.value.code == 2
    assert cli("compare", "-tp", dump_json, "-gp", TENSOR_GOLDEN,
               "-o", tmp_path / "o").returncode == info.value.code
    assert not re.match(r"^(invalid argument|not found)", str(info.value))


@needs_cli
def test_config_check_compare_matches_the_command(tmp_path):
    for name, lr in (("a.json", "0.1"), ("b.json", "0.2")):
        run = cli("config-check", "collect", "-o", tmp_path / name, "--no-python",
                  "--set", f"hyperparameters.lr={lr}", "--set", "random.seed=1")
        assert run.returncode == 0, run.stderr
    result = config_check.compare(tmp_path / "a.json", tmp_path / "b.json")
    result.save(tmp_path / "py", timestamp=TS)
    run = cli("config-check", "compare", tmp_path / "a.json", tmp_path / "b.json",
              "-o", tmp_path / "cli")
    assert run.returncode == (1 if result.differs else 0)
    assert files_by_name(tmp_path / "py", TS) == files_by_name(tmp_path / "cli")
    lr = [i for i in result.differences() if i["name"] == "lr"]
    assert lr and lr[0]["category"] == "hyperparameters" and (lr[0]["a"], lr[0]["b"]) == ("0.1",
                                                                                        "0.2")
    assert result.summary["hyperparameters"] != "pass"
    assert list(result.to_pandas()["name"]) == [i["name"] for i in result.items]
    with pytest.raises(numprobe.NotFoundError):
        config_check.compare(tmp_path / "nope.json", tmp_path / "b.json")
