"""pip install of the numprobe Python package, offline: the C++ module is built with CMake from
this repository (no downloads; needs cmake, a C++20 compiler, pybind11-dev and the libraries
the numprobe libraries use). From the repository root:

  /usr/bin/python3 -m pip install --no-build-isolation --no-deps --break-system-packages ./python

(--break-system-packages because Debian marks its interpreter externally managed.)
"""
import os
import shutil
import subprocess
import sys

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        os.makedirs(build_dir, exist_ok=True)
        jobs = os.environ.get("NUMPROBE_JOBS", "2")
        subprocess.check_call([
            "cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
            "-DNUMPROBE_BUILD_TESTS=OFF", "-DNUMPROBE_BUILD_CLI=OFF", "-DNUMPROBE_BUILD_PYTHON=ON",
            f"-DPython_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "_numprobe", "-j", jobs])
        built = [f for f in os.listdir(os.path.join(build_dir, "python", "numprobe"))
                 if f.startswith("_numprobe") and f.endswith(".so")]
        if len(built) != 1:
            raise RuntimeError(f"expected one _numprobe module in {build_dir}, found {built}")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(build_dir, "python", "numprobe", built[0]), target)


class BuildPyWithPth(build_py):
    """Puts numprobe-autostart.pth at the root of the installed tree (site-packages), where the
    interpreter reads .pth files; data_files would put it under the prefix instead."""

    def run(self):
        super().run()
        self.copy_file(os.path.join(HERE, "numprobe-autostart.pth"),
                       os.path.join(self.build_lib, "numprobe-autostart.pth"), preserve_mode=0)


setup(
    name="numprobe",
    version="0.1.0",
    description="Find where and why two deep-learning runs stop agreeing (msprobe-compatible capture)",
    packages=find_packages(where=HERE, include=["numprobe", "numprobe.*"]),
    package_dir={"": "."},
    package_data={"numprobe": ["_numprobe.pyi", "py.typed"]},
    ext_modules=[CMakeExtension("numprobe._numprobe")],
    cmdclass={"build_ext": CMakeBuild, "build_py": BuildPyWithPth},
    python_requires=">=3.9",
    zip_safe=False,
)
