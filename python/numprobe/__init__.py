"""numprobe: find where and why two deep-learning runs stop agreeing.

The heavy lifting (statistics, dump writing, the crash-safe journal) is done by the C++ module
``numprobe._numprobe``; ``numprobe.pytorch`` hooks PyTorch and hands tensor memory to it.
"""
try:
    from ._numprobe import (DTYPES, DumpConfig, Dumper, Error, FileAccessError, FormatError,
                            InternalError, NotFoundError, RejectedError, UnsupportedError,
                            UsageError, load_dump_json, read_journal, tensor_stats)
except ModuleNotFoundError as _missing:  # the source tree's package, without the C++ module
    if _missing.name != __name__ + "._numprobe":
        raise
    import os as _os

    raise ImportError(
        "numprobe's C++ module (_numprobe) is not beside " + _os.path.dirname(__file__) + ": "
        "this is the source folder of the package. Point PYTHONPATH at a build tree's python "
        "folder, build/<type>/python (build/release/python after `make demo`, build/dev/python "
        "after `make test`), or install the package (see README.md).") from None

from .analysis import DiffResult, InspectResult, ScanResult, diff, inspect, load, scan  # noqa: E402
from .tree_compare import CompareResult, compare  # noqa: E402

__version__ = "0.1.0"
__all__ = ["CompareResult", "DiffResult", "DumpConfig", "Dumper", "Error", "FileAccessError",
           "FormatError", "InspectResult", "InternalError", "NotFoundError", "RejectedError",
           "ScanResult", "UnsupportedError", "UsageError", "compare", "config_check", "diff",
           "inspect", "load", "load_dump_json", "precheck", "read_journal", "scan", "stats",
           "tensor_stats", "troubleshooter"]


def __getattr__(name):
    # numprobe.precheck (the pre-check, callable) imports torch; numprobe.troubleshooter
    # (TroubleShooter's compare names) and numprobe.config_check are rarely needed: all three are
    # loaded on first use only.
    if name in ("config_check", "precheck", "troubleshooter"):
        import importlib

        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'numprobe' has no attribute {name!r}")


def stats(tensor):
    """Statistics of a CPU torch tensor computed on its memory (no copy): a dict with count, max,
    min, mean, norm, nan/inf/zero counts, max_abs and min_nonzero_abs."""
    from .pytorch._tensors import numprobe_dtype

    if tensor.device.type != "cpu":
        raise UsageError("numprobe.stats needs a CPU tensor; use tensor.cpu()")
    return tensor_stats(tensor.data_ptr(), numprobe_dtype(tensor.dtype), list(tensor.shape),
                        list(tensor.stride()))
