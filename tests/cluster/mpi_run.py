"""What the MPI tests share: running numprobe with and without mpiexec, and the files a run
wrote."""
import os
import re
import subprocess

SOURCE = os.environ.get("NUMPROBE_SOURCE_DIR",
                        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "msprobe")
# Open MPI refuses root unless both are set; harmless for other users. SOURCE_DATE_EPOCH fixes
# an .xlsx workbook's creation time, so that runs compare byte for byte.
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", SOURCE_DATE_EPOCH="1700000000")
TIMEOUT = 120  # a hang fails the test instead of the suite


def run(cmd, timeout=TIMEOUT, env=None):
    return subprocess.run(cmd, capture_output=True, text=True, env=env or MPI_ENV,
                          timeout=timeout)


def numprobe_cmd(numprobe, mpiexec, processes, *args):
    """numprobe ARGS, under `mpiexec -n PROCESSES` unless PROCESSES is 0."""
    cmd = [numprobe, *[str(a) for a in args]]
    if processes:
        cmd = [mpiexec, "-n", str(processes), "--oversubscribe", *cmd]
    return cmd


def files_of(folder, named_inside=False):
    """{path with the {ts} taken out: bytes} of every file under `folder`; with `named_inside`, the
    {ts} of file names quoted in the files taken out too (a precheck twin names its CSVs)."""
    out = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            key = re.sub(r"_\d{14}\.", ".", os.path.relpath(path, folder))
            with open(path, "rb") as f:
                out[key] = f.read()
            if named_inside:
                out[key] = re.sub(rb"_\d{14}\.", b".", out[key])
    return out
