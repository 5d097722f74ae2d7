"""numprobe's analyses from Python: scan, diff, inspect and load, one function per `numprobe`
subcommand, with its options and semantics (the same C++ library call does the work). Each
returns a result object whose ``save(dir)`` writes the files the subcommand writes. Errors are
raised as numprobe.Error's subclasses, carrying the exit ``code`` the command would give.
See docs/python-api.md.
"""
from __future__ import annotations

import json
import os
import time
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from . import _numprobe

PathLike = Union[str, "os.PathLike[str]"]

__all__ = ["DiffResult", "InspectResult", "ScanResult", "diff", "inspect", "load", "scan"]


def file_timestamp() -> str:
    """The {ts} of result file names, as the command line makes it: local time, %Y%m%d%H%M%S."""
    return time.strftime("%Y%m%d%H%M%S", time.localtime())


def write_text_atomically(path: PathLike, text: str) -> str:
    """Writes `text` to `path` through a temporary file renamed over it, so that a reader never
    sees half a file (the Python side's one atomic writer; the C++ writers have core's)."""
    path = os.fspath(path)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


class ScanResult:
    """The report of `numprobe scan`: the first NaN/Inf (``first_anomaly``), every birth of
    NaN/Inf (``anomalies``), watchpoint ``hits`` and precision ``headroom`` per target dtype."""

    def __init__(self, report: Any) -> None:
        self._report = report

    def __getattr__(self, name: str) -> Any:  # dump, task, framework, level, scopes, ranks, ...
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._report, name)

    @property
    def first_anomaly(self) -> Optional[Dict[str, Any]]:
        """The first op that turned finite inputs into NaN/Inf, or None."""
        anomalies = self._report.anomalies
        return anomalies[0] if anomalies else None

    @property
    def headroom(self) -> List[Dict[str, Any]]:
        return self._report.headroom_summary

    def save(self, dir: PathLike = ".", *, timestamp: Optional[str] = None) -> List[str]:
        """Writes scan_{ts}.json, scan_anomalies_{ts}.csv, scan_watchpoints_{ts}.csv,
        scan_headroom_{ts}.csv (and msprobe's anomaly_analyze_{ts}.json when there is an
        anomaly) into `dir`, as `numprobe scan -o dir` does; returns their paths."""
        paths = self._report.save(os.fspath(dir), timestamp or file_timestamp())
        return [os.fspath(p) for p in paths]

    def __repr__(self) -> str:
        first = self.first_anomaly
        where = first["op_name"] if first else "none"
        return (f"<numprobe.ScanResult {self._report.dump!r}: {self._report.entries} entries, "
                f"first anomaly {where}, {len(self._report.hits)} watchpoint hits>")


_SCAN_THRESHOLDS = ("grad_norm_min", "grad_norm_max", "weight_rtol", "weight_atol",
                    "update_ratio_max", "update_ratio_min", "tensor_max", "act_max_min_lt",
                    "act_max_min_gt", "act_range_pct_lt", "act_range_pct_gt")


def scan(path: PathLike, *, dtype: Optional[str] = None,
         watch: Union[None, str, Sequence[str]] = None, tensors: bool = True,
         act_range: Optional[Tuple[float, float]] = None,
         **thresholds: float) -> ScanResult:
    """`numprobe scan PATH`: the first NaN/Inf, watchpoint hits and fp16/bf16/fp8 headroom of a
    dump (a dump root, step folder, rank folder or dump.json).

    dtype: headroom for one target (fp16, bf16, fp8_e4m3, fp8_e5m2); default all.
    watch: watchpoints to evaluate, a list or a comma-separated string ("none" for none);
        default all.
    tensors: False uses dump.json statistics only (--no-tensors).
    act_range: (LOW, HIGH) for activation_range's in-range percentage.
    thresholds: grad_norm_min, grad_norm_max, weight_rtol, weight_atol, update_ratio_max,
        update_ratio_min, tensor_max, act_max_min_lt, act_max_min_gt, act_range_pct_lt,
        act_range_pct_gt (the --options of the same names).
    """
    for name in thresholds:
        if name not in _SCAN_THRESHOLDS:
            raise _numprobe.UsageError(
                f"scan() got an unknown option {name!r}; thresholds: {', '.join(_SCAN_THRESHOLDS)}")
    if isinstance(watch, str):
        watch = watch.split(",")
    report = _numprobe._scan(os.fspath(path), dtype, None if watch is None else list(watch),
                             not tensors, {k: float(v) for k, v in thresholds.items()},
                             None if act_range is None else tuple(float(x) for x in act_range))
    return ScanResult(report)


class DiffResult:
    """The report of `numprobe diff A B`: ``rows`` (one dict per pair: names, pairing rule,
    shapes, status, allclose, cosine, max_abs, ...), ``only_a``/``only_b`` (unpaired tensors),
    ``clean`` (every pair equal, nothing unpaired that counts)."""

    def __init__(self, report: Any) -> None:
        self._report = report
        self.rows: List[Dict[str, Any]] = report.rows

    def __getattr__(self, name: str) -> Any:  # rtol, atol, only_a, only_b, clean, warnings, ...
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._report, name)

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def differing(self) -> List[Dict[str, Any]]:
        """The rows that are not equal (what the command prints without --all)."""
        return [r for r in self.rows if r["status"] != "equal"]

    def to_pandas(self):
        """The rows as a pandas DataFrame (needs pandas)."""
        import pandas

        return pandas.DataFrame(self.rows)

    def save(self, dir: PathLike) -> List[str]:
        """Writes diff_values.csv, diff_shapes.csv and diff.json into `dir`, as `numprobe diff
        -o dir` does; returns their paths."""
        return [os.fspath(p) for p in self._report.save(os.fspath(dir))]

    def __repr__(self) -> str:
        r = self._report
        return (f"<numprobe.DiffResult {len(self.rows)} pairs, {len(self.differing())} not equal, "
                f"{len(r.only_a)} only in A, {len(r.only_b)} only in B>")


def diff(a: PathLike, b: PathLike, *, rtol: float = 1e-4, atol: float = 1e-4,
         map: Optional[PathLike] = None, align: str = "auto", inert: bool = False) -> DiffResult:
    """`numprobe diff A B`: the tensors of two files or folders (.pt/.pth, .ckpt, .safetensors,
    .npz, folders of .npy, tensor dump trees) paired by name, PyTorch<->MindSpore parameter rules,
    `map` (a JSON name map or TroubleShooter's weight map list) or shape alignment (`align`:
    auto, always, never). B is the reference: relative figures divide by B.
    inert: read whole pickled objects (torch.save(model)) without running anything."""
    for name, value in (("rtol", rtol), ("atol", atol)):
        if not value >= 0:
            raise _numprobe.UsageError(f"{name} must be a number >= 0, got {value!r}")
    report = _numprobe._diff(os.fspath(a), os.fspath(b), None if map is None else os.fspath(map),
                             float(rtol), float(atol), align, inert)
    return DiffResult(report)


class InspectResult:
    """What `numprobe inspect` reports: ``to_dict()`` is the document of `inspect --json`
    (docs/inspect-json.md), ``str()`` the table the command prints."""

    def __init__(self, json_text: str, text: str, warnings: List[str]) -> None:
        self._json = json_text
        self._text = text
        self.warnings = warnings

    def to_dict(self) -> Dict[str, Any]:
        return json.loads(self._json)

    def save(self, path: PathLike) -> str:
        """Writes the JSON document `numprobe inspect --json` prints (the same bytes) to `path`
        (a file, or a folder that gets inspect.json); returns the path."""
        path = os.fspath(path)
        if os.path.isdir(path):
            path = os.path.join(path, "inspect.json")
        return write_text_atomically(path, self._json + "\n")

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"<numprobe.InspectResult\n{self._text}>"


def inspect(path: PathLike, *, inert: bool = False) -> InspectResult:
    """`numprobe inspect PATH`: tensors, dtypes, shapes and statistics of a tensor file, a dump,
    or a folder of them. A file that cannot be read is raised as its error (the command exits
    with it)."""
    return InspectResult(*_numprobe._inspect(os.fspath(path), inert))


def _array(memory: Any):
    import numpy

    if memory.numpy_native:
        return numpy.asarray(memory)  # a read-only view of the file's memory (no copy)
    return memory.float32_copy()


def _torch_tensor(memory: Any):
    import numpy
    import torch

    if memory.dtype == "bf16":
        bits = numpy.array(memory, copy=True)  # raw bf16 bits as uint16
        return torch.from_numpy(bits.view(numpy.int16)).view(torch.bfloat16)
    if not memory.numpy_native:
        return torch.from_numpy(memory.float32_copy())
    # A copy: the file is mapped read-only, and torch tensors are writable.
    return torch.from_numpy(numpy.array(memory, copy=True))


def load(path: PathLike, *, as_torch: bool = False, inert: bool = False) -> Dict[str, Any]:
    """The tensors of a .pt/.pth, .npy, .npz, .safetensors or .ckpt file (or a folder of .npy
    files, as `numprobe diff` reads it) by name, in file order (a lone .npy by its file's stem).

    As numpy arrays (default): read-only views of the file's memory map, without a copy, where
    numpy has the dtype and the file's layout allows; bf16 and fp8 tensors become float32 copies
    (numpy has no such types). as_torch=True: torch tensors (copies, since the map is read-only;
    bf16 stays bf16; fp8 becomes float32). inert: read whole pickled objects without running
    anything."""
    kind, tensors, _warnings = _numprobe._load(os.fspath(path), inert)
    convert = _torch_tensor if as_torch else _array
    # A .npy file holds one unnamed array: it is named by the file's stem.
    stem = os.path.splitext(os.path.basename(os.fspath(path)))[0]
    return {(t.name or stem): convert(t) for t in tensors}
