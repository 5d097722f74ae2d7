"""Started by `numprobe run` (this folder is put first on PYTHONPATH): when NUMPROBE_CONFIG names
a config.json, an unmodified training script is captured (numprobe.pytorch._autostart). The
interpreter's own sitecustomize, if any, runs afterwards."""
import importlib.machinery
import importlib.util
import os
import sys

if os.environ.get("NUMPROBE_CONFIG"):
    from numprobe.pytorch import _autostart

    _autostart.install(os.environ["NUMPROBE_CONFIG"])

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.machinery.PathFinder.find_spec(
    "sitecustomize", [p for p in sys.path if os.path.abspath(p or ".") != _here])
if _spec is not None and _spec.loader is not None:
    _module = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)
