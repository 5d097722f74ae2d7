"""Fixtures of the MPI tests: the numprobe binary and Open MPI's mpiexec, as ctest names them."""
import os
import shutil

import pytest


@pytest.fixture(scope="module")
def numprobe():
    path = os.environ.get("NUMPROBE_BIN")
    if not path or not os.path.exists(path):
        pytest.fail("NUMPROBE_BIN must name the numprobe binary (ctest sets it)")
    return path


@pytest.fixture(scope="module")
def mpiexec():
    path = os.environ.get("NUMPROBE_MPIEXEC") or shutil.which("mpiexec")
    if not path:
        pytest.fail("NUMPROBE_MPIEXEC must name mpiexec (ctest sets it)")
    return path
