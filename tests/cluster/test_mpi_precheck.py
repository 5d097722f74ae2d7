"""`mpirun -n N numprobe precheck -api_info DUMP.json` (issue 18; docs/cluster.md): the APIs are
dealt over the MPI processes, each replays its share in its own Python, and process 0 writes the
result files, byte-identical to a single-process run (statistics and tensor mode, -n splits
within each process, a resumed run); a replay that fails anywhere fails the whole run once, with
exit 3, without hanging. Needs the Python module (the replay runs torch): ctest
`cluster.mpi_precheck`, labels mpi and python."""
import csv
import glob
import os
import re
import shutil

import pytest

from mpi_run import FIXTURES, MPI_ENV, files_of, numprobe_cmd, run

TIMEOUT = 300  # each process imports torch


def fixture_dump(name):
    (path,) = glob.glob(os.path.join(FIXTURES, name, "step0", "*", "dump.json"))
    return path


def summary(text, out):
    """stdout without the file paths' folder and {ts}."""
    return re.sub(r"_\d{14}\.", ".", text.replace(str(out), "OUT"))


@pytest.mark.parametrize("name,extra", [("dump_statistics_base", []),
                                        ("dump_tensor_bf16", ["-n", "2"]),
                                        ("dump_statistics_nan", ["-f"])])
def test_precheck_byte_identical_to_one_process(numprobe, mpiexec, name, extra, tmp_path):
    dump = fixture_dump(name)
    single = run(numprobe_cmd(numprobe, mpiexec, 0, "precheck", "-api_info", dump, "-o",
                              tmp_path / "one", *extra), TIMEOUT)
    assert single.returncode in (0, 1), single.stdout + single.stderr
    expected = files_of(tmp_path / "one", named_inside=True)
    assert len(expected) == 3  # result and details CSV, JSON twin
    for processes in (2, 3):
        out = tmp_path / f"n{processes}"
        r = run(numprobe_cmd(numprobe, mpiexec, processes, "precheck", "-api_info", dump, "-o",
                             out, *extra), TIMEOUT)
        assert r.returncode == single.returncode, r.stdout + r.stderr
        assert files_of(out, named_inside=True) == expected, f"differs with {processes} processes"
        assert summary(r.stdout, out) == summary(single.stdout, tmp_path / "one")  # once


def test_resumed_run_byte_identical(numprobe, mpiexec, tmp_path):
    dump = fixture_dump("dump_statistics_base")
    first = run(numprobe_cmd(numprobe, mpiexec, 0, "precheck", "-api_info", dump, "-o",
                             tmp_path / "whole"), TIMEOUT)
    assert first.returncode == 0, first.stderr
    (result_csv,) = glob.glob(str(tmp_path / "whole" / "accuracy_checking_result_*.csv"))
    (details_csv,) = glob.glob(str(tmp_path / "whole" / "accuracy_checking_details_*.csv"))
    # The run "was interrupted" after three APIs: both CSVs cut after their records (the twin is
    # written at the end), and the rest resumed by 2 processes.
    with open(result_csv, encoding="utf-8-sig", newline="") as f:
        apis = {row[0] for row in list(csv.reader(f))[1:4]}
    assert len(apis) == 3
    os.makedirs(tmp_path / "cut")
    for path, keep in ((result_csv, lambda row: row[0] in apis),
                       (details_csv, lambda row: re.sub(r"\.(forward|backward)\..*$", "",
                                                        row[0]) in apis)):
        with open(path, encoding="utf-8", newline="") as f:
            lines = f.readlines()
        reader = csv.reader(iter(lines))
        next(reader)  # the header
        end = 1
        for row in reader:
            if not keep(row):
                break
            end = reader.line_num  # physical lines read so far: records may span lines
        with open(tmp_path / "cut" / os.path.basename(path), "w", encoding="utf-8",
                  newline="") as f:
            f.writelines(lines[:end])
    # Resumed rows are read back from the CSVs' text, so a resumed run's twin is compared with a
    # resumed single-process run's, not with the uninterrupted one's.
    shutil.copytree(tmp_path / "cut", tmp_path / "cut1")
    resumed = {}
    for processes, folder in ((0, "cut1"), (2, "cut")):
        (cut_csv,) = glob.glob(str(tmp_path / folder / "accuracy_checking_result_*.csv"))
        r = run(numprobe_cmd(numprobe, mpiexec, processes, "precheck", "-api_info", dump,
                             "-csv_path", cut_csv), TIMEOUT)
        assert r.returncode == 0, r.stdout + r.stderr
        resumed[processes] = files_of(tmp_path / folder)
    assert len(resumed[0]) == 3 and resumed[2] == resumed[0]
    with open(result_csv, "rb") as whole, open(
            glob.glob(str(tmp_path / "cut" / "accuracy_checking_result_*.csv"))[0], "rb") as cut:
        assert cut.read() == whole.read()  # every API run once, in dump order


def test_failed_replay_fails_the_whole_run_once(numprobe, mpiexec, tmp_path):
    dump = fixture_dump("dump_statistics_base")
    env = dict(MPI_ENV, NUMPROBE_PYTHON="/bin/false")  # every replay exits 1, writing nothing
    r = run(numprobe_cmd(numprobe, mpiexec, 3, "precheck", "-api_info", dump, "-o",
                         tmp_path / "out"), TIMEOUT, env)
    assert r.returncode == 3, r.stdout + r.stderr
    errors = [l for l in r.stderr.splitlines() if l.startswith("numprobe: error:")]
    assert errors == ["numprobe: error: the replay of MPI process 0 exited with code 1"], r.stderr
    assert not glob.glob(str(tmp_path / "out" / "*"))
