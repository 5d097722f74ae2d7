"""Shared fixtures of the command-line tests: the binary under test and the golden data folder."""
import os
import subprocess

import pytest


@pytest.fixture(scope="session")
def numprobe_bin():
    path = os.environ.get("NUMPROBE_BIN")
    if not path or not os.path.exists(path):
        pytest.fail("NUMPROBE_BIN must name the numprobe binary (ctest sets it)")
    return path


@pytest.fixture(scope="session")
def golden_dir():
    path = os.environ.get("NUMPROBE_GOLDEN_DIR")
    if not path or not os.path.isdir(path):
        pytest.fail("NUMPROBE_GOLDEN_DIR must name the generated golden data (ctest sets it)")
    return path


@pytest.fixture(scope="session")
def source_dir():
    return os.environ.get("NUMPROBE_SOURCE_DIR",
                          os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.fixture
def run(numprobe_bin):
    def _run(*args, cwd=None, timeout=120):
        return subprocess.run([numprobe_bin, *map(str, args)], capture_output=True, text=True,
                              cwd=cwd, timeout=timeout)
    return _run
