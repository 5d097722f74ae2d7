"""The places where an msprobe user switching to numprobe used to hit a difference (issue 13):
ranks whose dump.json is {} (skipped with a warning, as msprobe does), md5 dumps that carry
statistics (scanned), inspect given a dump.json file, and `numprobe run` reading MindSpore's
dump_config.json through MINDSPORE_DUMP_CONFIG."""
import glob
import json
import os
import shutil

SOURCE = os.environ.get("NUMPROBE_SOURCE_DIR", "")
FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "msprobe")


def rank_tree(tmp_path, side, empty_rank=None):
    """A step folder of two ranks made from the fixture's statistics dumps."""
    src = glob.glob(os.path.join(FIXTURES, f"dump_statistics_{side}", "step0", "proc*"))[0]
    step = tmp_path / side / "step0"
    for rank in (0, 1):
        shutil.copytree(src, step / f"rank{rank}")
    if empty_rank is not None:
        (step / f"rank{empty_rank}" / "dump.json").write_text("{}")
    return step


def test_a_rank_whose_dump_json_is_empty_is_skipped(run, tmp_path):
    target = rank_tree(tmp_path, "bf16", empty_rank=1)
    golden = rank_tree(tmp_path, "base")
    out = tmp_path / "out"
    r = run("compare", "-tp", target, "-gp", golden, "-o", out)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    assert "rank1" in r.stderr and "is {} (the rank recorded nothing); skipped" in r.stderr
    names = sorted(os.path.basename(p) for p in glob.glob(str(out / "compare_result_*.csv")))
    assert len(names) == 1 and names[0].startswith("compare_result_rank0_"), names
    # Every rank empty: nothing to compare is an error.
    for rank in (0,):
        (target / f"rank{rank}" / "dump.json").write_text("{}\n")
    r = run("compare", "-tp", target, "-gp", golden, "-o", tmp_path / "out2")
    assert r.returncode == 3 and "nothing to compare" in r.stderr, r.stderr


def test_md5_dump_with_statistics_is_scanned(run, tmp_path):
    data = {"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": None,
            "data": {
                "Functional.linear.0.forward": {
                    "input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2],
                                    "Max": 1.0, "Min": 0.5, "Mean": 0.75, "Norm": 1.1,
                                    "requires_grad": False, "md5": "0123abcd"}],
                    "input_kwargs": {},
                    "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2],
                                "Max": float("inf"), "Min": 0.5, "Mean": float("inf"),
                                "Norm": float("inf"), "requires_grad": False,
                                "md5": "89abcdef"}]}}}
    d = tmp_path / "dump" / "step0" / "rank0"
    d.mkdir(parents=True)
    (d / "dump.json").write_text(json.dumps(data))
    r = run("scan", tmp_path / "dump", "-o", tmp_path / "s")
    assert "md5 mode: no statistics" not in r.stdout, r.stdout
    assert "First anomaly: Functional.linear.0.forward" in r.stdout, r.stdout
    # Without a NaN/Inf: "First anomaly: none".
    data["data"]["Functional.linear.0.forward"]["output"][0].update(Max=1.0, Mean=0.7, Norm=1.0)
    (d / "dump.json").write_text(json.dumps(data))
    r = run("scan", tmp_path / "dump", "-o", tmp_path / "s2")
    assert "First anomaly: none" in r.stdout, r.stdout


def test_inspect_takes_a_dump_json_file(run, tmp_path):
    src = glob.glob(os.path.join(FIXTURES, "dump_statistics_base", "step0", "proc*", "dump.json"))[0]
    r = run("inspect", src)
    assert r.returncode == 0, r.stderr
    assert "pytorch dump, task statistics, level mix" in r.stdout, r.stdout
    other = tmp_path / "npu_dump.json"  # a dump.json under another name
    shutil.copy(src, other)
    r = run("inspect", other)
    assert r.returncode == 0 and str(other) in r.stdout, r.stdout + r.stderr


def test_run_reads_mindspore_dump_config(run, tmp_path):
    cfg = tmp_path / "dump_config.json"
    cfg.write_text(json.dumps({"common_dump_settings": {
        "op_debug_mode": 0, "dump_mode": 0, "path": str(tmp_path / "ms_dump"), "net_name": "Net",
        "iteration": "0", "saved_data": "statistic", "input_output": 0, "kernels": [],
        "support_device": [0]}}))
    env_script = tmp_path / "show.py"
    env_script.write_text("import os\nprint('CONFIG=' + os.environ['NUMPROBE_CONFIG'])\n")
    import subprocess
    env = dict(os.environ, MINDSPORE_DUMP_CONFIG=str(cfg))
    env.pop("NUMPROBE_CONFIG", None)
    r = subprocess.run([os.environ["NUMPROBE_BIN"], "run", "--", "/usr/bin/python3", "-S",
                        str(env_script)], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"CONFIG={cfg}" in r.stdout
    # A typo in it fails before the script starts, naming the key and the likely one.
    cfg.write_text(json.dumps({"common_dump_settings": {"path": "/p", "iteraton": "0"}}))
    r = subprocess.run([os.environ["NUMPROBE_BIN"], "run", "--", "/usr/bin/python3", "-S",
                        str(env_script)], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2 and "did you mean 'iteration'" in r.stderr, r.stderr
