"""What `-o PATH` may replace (issue 17, point 5; docs/outputs.md). numprobe writes an output under
a temporary name beside PATH and renames it into place, so it must refuse to rename over anything
that is not a regular file: a FIFO, a folder or a device at PATH gives exit 3 with "not a regular
file" and stays what it was. A symbolic link at PATH is written through: the link stays and its
file gets the new content. A temporary file left by a killed run (".NAME.numprobe-tmp.PID.XXXXXX"
whose PID is gone) is removed by the next run into the same folder.

Run through `report` (the issue's example, skipped without the web UI) and `config-check
collect` (always built). Every run has a timeout, so a hang fails the test.
Environment (set by ctest): NUMPROBE_BIN, NUMPROBE_SOURCE_DIR.
"""
import os
import stat
import subprocess

import pytest

BIN = os.environ.get("NUMPROBE_BIN", "numprobe")
SOURCE = os.environ.get("NUMPROBE_SOURCE_DIR",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
DUMP = os.path.join(SOURCE, "tests", "fixtures", "msprobe", "dump_tensor_base", "step0")


def webui_built():
    return subprocess.run([BIN, "serve", "--help"], capture_output=True).returncode == 0


WRITERS = {
    "report": lambda out: ["report", DUMP, "-o", str(out)],
    "collect": lambda out: ["config-check", "collect", "--no-python", "-o", str(out)],
}


@pytest.fixture(params=sorted(WRITERS))
def writer(request):
    if request.param == "report" and not webui_built():
        pytest.skip("numprobe built without the web UI")
    return WRITERS[request.param]


def run(args, timeout=120):
    try:
        return subprocess.run([BIN, *args], capture_output=True, text=True, errors="replace",
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"numprobe {' '.join(args)} hung (no answer in {timeout} s)")


def assert_refused(r, path, kind):
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert f"{path}: not a regular file ({kind})" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "terminate" not in r.stderr


def no_temporaries(folder):
    return [n for n in os.listdir(folder) if ".numprobe-tmp." in n]


def test_a_fifo_at_the_output_path_is_refused_and_stays(writer, tmp_path):
    out = tmp_path / "out"
    os.mkfifo(out)
    assert_refused(run(writer(out)), out, "a FIFO")
    assert stat.S_ISFIFO(os.lstat(out).st_mode)
    assert no_temporaries(tmp_path) == []


def test_a_folder_at_the_output_path_is_refused(writer, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    assert_refused(run(writer(out)), out, "a directory")
    assert out.is_dir() and list(out.iterdir()) == []


def test_a_device_at_the_output_path_is_refused(writer, tmp_path):
    # /dev/null itself: as root the old rename replaced the device node with a regular file.
    # Not root here, so the test goes through a link to it, which numprobe must not follow into
    # a rename over the device either.
    link = tmp_path / "null"
    link.symlink_to("/dev/null")
    r = run(writer(link))
    assert r.returncode == 3, r.stderr
    assert "not a regular file (a character device)" in r.stderr, r.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert os.path.islink(link)
    r = run(writer("/dev/null"))
    assert_refused(r, "/dev/null", "a character device")


def test_a_symlink_at_the_output_path_is_written_through(writer, tmp_path):
    real = tmp_path / "kept" / "result"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "latest"
    link.symlink_to(real)
    r = run(writer(link))
    assert r.returncode == 0, r.stderr
    assert os.path.islink(link) and os.readlink(link) == str(real)
    assert real.read_text() != "old" and len(real.read_text()) > 100
    assert no_temporaries(tmp_path) == [] and no_temporaries(real.parent) == []


def test_a_dangling_symlink_is_refused(writer, tmp_path):
    link = tmp_path / "out"
    link.symlink_to(tmp_path / "nowhere" / "x")
    r = run(writer(link))
    assert r.returncode == 3, r.stderr
    assert "does not resolve" in r.stderr, r.stderr
    assert not (tmp_path / "nowhere").exists()


def dead_pid():
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_stale_temporaries_of_a_killed_run_are_removed(writer, tmp_path):
    dead = dead_pid()
    stale = tmp_path / f".out.numprobe-tmp.{dead}.a1b2c3"
    stale.write_text("half an output")
    other = tmp_path / f".other.csv.numprobe-tmp.{dead}.zzzzzz"
    other.write_text("half another")
    live = tmp_path / f".out.numprobe-tmp.{os.getpid()}.a1b2c3"  # this pytest process: alive
    live.write_text("still being written")
    mine = tmp_path / "notes.numprobe-tmp.txt"
    mine.write_text("the user's")
    r = run(writer(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert not stale.exists() and not other.exists()
    assert live.exists() and mine.exists()
    assert (tmp_path / "out").is_file()
    assert sorted(os.listdir(tmp_path)) == sorted(["out", live.name, mine.name])

