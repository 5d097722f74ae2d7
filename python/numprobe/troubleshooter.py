"""TroubleShooter's compare API on numprobe, for the users it left behind (upstream deprecated its
dump and compare APIs in 2025): the same function names, arguments and output columns
(``troubleshooter.migrator``), computed by numprobe's library (the figures `numprobe diff`
computes). Nothing here imports MindSpore: .ckpt files are read by numprobe's own reader, and a
weight map's value transforms are never run (no input executes code).

    from numprobe import troubleshooter as ts
    ts.compare_npy_dir("npu_npy", "gpu_npy", output_file="cmp.csv")
    name_map, value_map = ts.get_weight_map(torch_net, weight_map_save_path="map.json")
    ts.compare_pth_and_ckpt("map.json", "torch_net.pth", "ms_net.ckpt")

Deliberate differences from TroubleShooter (its known quirks, fixed), also in
docs/python-api.md:
- "mean & max diffs": the mean |orig - target| is over every element finite on both sides, not
  over the differing elements only (TroubleShooter's mean grew when fewer elements differed, and
  one NaN made it NaN); the max is the same.
- NaN/Inf: cosine and the diffs use the elements finite on both sides; NaN vs NaN counts as close
  only with equal_nan=True (as numpy.isclose).
- Pairing by number sorts by the numbers in the file names, then the names; TroubleShooter sorted
  by file creation time first, so copies of the same folder paired differently.
- The functions return their rows (lists of dicts keyed by the column names) besides printing
  them; num_processes is accepted and unused (the library compares on its own threads).
- bf16 tensors (MindSpore saves them) are compared as they are, not through float32 files.
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from . import _numprobe
from .analysis import write_text_atomically

PathLike = Union[str, "os.PathLike[str]"]
NameMapList = List[Tuple[Optional[str], Optional[str]]]

__all__ = ["compare_dict_dir", "compare_grads_dir", "compare_list_dir", "compare_ms_ckpt",
           "compare_npy_dir", "compare_pth_and_ckpt", "get_name_map_list_by_name",
           "get_name_map_list_by_number", "get_name_map_list_by_shape_edit_distance",
           "get_weight_map"]

# Column names, exactly as TroubleShooter prints and writes them.
NPY_COLUMNS = ["orig array name", "target array name", "result of allclose", "ratio of allclose",
               "cosine similarity", "mean & max diffs"]
NPY_SHAPE_COLUMNS = ["shape of orig", "shape of target"]  # after the names, with compare_shape
CKPT_SHAPE_COLUMNS = ["Parameter name of original ckpt", "Parameter name of target ckpt",
                      "Whether shape are equal", "Parameter shape of original ckpt",
                      "Parameter shape of target ckpt"]
CKPT_VALUE_COLUMNS = ["Parameter name of original ckpt", "Parameter name of target ckpt",
                      "results of comparison", "match ratio", "cosine similarity", "(mean, max)"]
PTH_SHAPE_COLUMNS = ["Parameter name of torch", "Parameter name of MindSpore",
                     "Whether shape are equal", "Parameter shape of torch",
                     "Parameter shape of MindSpore"]
PTH_VALUE_COLUMNS = ["Parameter name of torch", "Parameter name of MindSpore",
                     "results of comparison", "match ratio", "cosine similarity", "(mean, max)"]

# TroubleShooter's weight_mapping_lib: torch module class -> {torch parameter: MindSpore name}.
_WEIGHT_NAME_MAP = {
    "BatchNorm1d": {"weight": "gamma", "bias": "beta", "running_mean": "moving_mean",
                    "running_var": "moving_variance"},
    "BatchNorm2d": {"weight": "gamma", "bias": "beta", "running_mean": "moving_mean",
                    "running_var": "moving_variance"},
    "BatchNorm3d": {"weight": "bn2d.gamma", "bias": "bn2d.beta",
                    "running_mean": "bn2d.moving_mean", "running_var": "bn2d.moving_variance"},
    "Embedding": {"weight": "embedding_table"},
    "LayerNorm": {"weight": "gamma", "bias": "beta"},
    "GroupNorm": {"weight": "gamma", "bias": "beta"},
    "PReLU": {"weight": "a"},
}
# torch module class -> {parameter: the value transform TroubleShooter names} (recorded in the
# map as TroubleShooter records it; numprobe compares such pairs by their compatible shapes).
_WEIGHT_VALUE_MAP = {
    "Conv1d": {"weight": "troubleshooter.migrator.mapping_relation.weight_adapter.expand_dims"},
}


# ---- pairing (TroubleShooter's get_name_map_list_*) ----

def _npy_files(folder: PathLike) -> List[str]:
    folder = os.fspath(folder)
    if not os.path.isdir(folder):
        raise _numprobe.NotFoundError(f"{folder}: no such folder")
    names = sorted(n for n in os.listdir(folder)
                   if n.endswith(".npy") and os.path.isfile(os.path.join(folder, n)))
    return names


def _both_npy_files(orig_dir: PathLike, target_dir: PathLike) -> Tuple[List[str], List[str]]:
    orig, target = _npy_files(orig_dir), _npy_files(target_dir)
    if not orig or not target:
        empty = orig_dir if not orig else target_dir
        raise _numprobe.NotFoundError(f"{os.fspath(empty)}: no .npy file to compare")
    return orig, target


def get_name_map_list_by_name(orig_dir: PathLike, target_dir: PathLike) -> NameMapList:
    """Pairs files of the same name; the others as (name, None) / (None, name)."""
    orig, target = _both_npy_files(orig_dir, target_dir)
    remaining = set(target)
    pairs: NameMapList = []
    for name in orig:
        if name in remaining:
            pairs.append((name, name))
            remaining.discard(name)
        else:
            pairs.append((name, None))
    pairs.extend((None, name) for name in target if name in remaining)
    return pairs


def _number_key(name: str):
    numbers = [int(n) for n in re.findall(r"\d+", name)]
    return ([numbers[0], numbers[-1]] if numbers else [], name)


def get_name_map_list_by_number(orig_dir: PathLike, target_dir: PathLike) -> NameMapList:
    """Pairs the files in the order of the (first, last) numbers in their names."""
    orig, target = _both_npy_files(orig_dir, target_dir)
    orig.sort(key=_number_key)
    target.sort(key=_number_key)
    n = max(len(orig), len(target))
    return [(orig[i] if i < len(orig) else None, target[i] if i < len(target) else None)
            for i in range(n)]


def _edit_distance_pairs(a: Sequence[Any], b: Sequence[Any], del_cost: int, ins_cost: int,
                         rep_cost: int) -> List[Tuple[Optional[int], Optional[int]]]:
    """Levenshtein alignment of two sequences; a replace still pairs (TroubleShooter's rule).
    Ties prefer delete, then insert, then replace, as TroubleShooter's table does."""
    m, n = len(a), len(b)
    cost = [[0] * (n + 1) for _ in range(m + 1)]
    move = [[""] * (n + 1) for _ in range(m + 1)]
    for i in range(m + 1):
        cost[i][0] = i * del_cost
        move[i][0] = "D"
    for j in range(n + 1):
        cost[0][j] = j * ins_cost
        move[0][j] = "I"
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            if a[i - 1] == b[j - 1]:
                cost[i][j], move[i][j] = cost[i - 1][j - 1], "M"
                continue
            options = [(cost[i - 1][j] + del_cost, "D"), (cost[i][j - 1] + ins_cost, "I"),
                       (cost[i - 1][j - 1] + rep_cost, "R")]
            cost[i][j], move[i][j] = min(options, key=lambda o: o[0])
    pairs: List[Tuple[Optional[int], Optional[int]]] = []
    i, j = m, n
    while i > 0 or j > 0:
        step = move[i][j] if i > 0 and j > 0 else ("D" if i > 0 else "I")
        if step in ("M", "R"):
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif step == "D":
            pairs.append((i - 1, None))
            i -= 1
        else:
            pairs.append((None, j - 1))
            j -= 1
    pairs.reverse()
    return pairs


def get_name_map_list_by_shape_edit_distance(orig_dir: PathLike, target_dir: PathLike, *,
                                             del_cost: int = 1, ins_cost: int = 1,
                                             rep_cost: int = 5) -> NameMapList:
    """Pairs the files (in name order) by aligning their shape sequences: for gradients, which
    MindSpore saves without names."""
    orig, target = _both_npy_files(orig_dir, target_dir)
    shapes_a = [_load_npy(orig_dir, n).shape for n in orig]
    shapes_b = [_load_npy(target_dir, n).shape for n in target]
    pairs = _edit_distance_pairs(shapes_a, shapes_b, del_cost, ins_cost, rep_cost)
    return [(None if i is None else orig[i], None if j is None else target[j]) for i, j in pairs]


# ---- figures and display ----

class _Loaded:
    """A tensor read by numprobe (its memory) and its shape."""

    def __init__(self, memory: Any) -> None:
        self.memory = memory
        self.shape = tuple(memoryview(memory).shape)


def _load_npy(folder: PathLike, name: str) -> _Loaded:
    if not name.endswith(".npy"):
        name += ".npy"
    _kind, tensors, _warnings = _numprobe._load(os.path.join(os.fspath(folder), name), False)
    return _Loaded(tensors[0])


def _nan_pairs(a: _Loaded, b: _Loaded) -> int:
    """Positions NaN on both sides (numpy.isclose counts them close only with equal_nan)."""
    import numpy

    def floats(t):
        return numpy.asarray(t.memory) if t.memory.numpy_native else t.memory.float32_copy()

    x, y = floats(a), floats(b)
    if x.dtype.kind not in "fc" or y.dtype.kind not in "fc":
        return 0
    return int(numpy.count_nonzero(numpy.isnan(x).reshape(-1) & numpy.isnan(y).reshape(-1)))


def _figures(a: Optional[_Loaded], b: Optional[_Loaded], rtol: float, atol: float,
             equal_nan: bool, exact_shape: bool):
    """(result of allclose, ratio, cosine, (mean, max)) as TroubleShooter's cal_algorithm
    returns them: (False, 0, nan, (nan, nan)) when a side is missing, "Shape is inconsistent"
    for shapes that differ."""
    if a is None or b is None:
        return False, 0.0, math.nan, (math.nan, math.nan)
    shapes_differ = a.shape != b.shape
    if shapes_differ and (exact_shape or math.prod(a.shape) != math.prod(b.shape)):
        return "Shape is inconsistent", 0.0, math.nan, (math.nan, math.nan)
    try:
        m = _numprobe._tensor_diff(a.memory, b.memory, rtol, atol)
    except _numprobe.UsageError:  # shapes that no reshape makes compatible
        return "Shape is inconsistent", 0.0, math.nan, (math.nan, math.nan)
    close = m["close"] - (0 if equal_nan else _nan_pairs(a, b))
    numel = m["numel"]
    ratio = close / numel if numel else 1.0
    return close == numel, ratio, m["cosine"], (m["mean_abs"], m["max_abs"])


def _truncate(value: float, digits: int) -> float:
    if not math.isfinite(value):
        return value
    scale = 10 ** digits
    return math.trunc(value * scale) / scale


def _display(result, ratio: float, cosine: float, diffs: Tuple[float, float]) -> List[str]:
    """TroubleShooter's cells: the ratio truncated to 4 decimals shown as a percentage with 2,
    cosine and diffs truncated to 5 decimals."""
    return [str(result), f"{_truncate(ratio, 4) * 100:.2f}%", str(_truncate(cosine, 5)),
            f"{_truncate(diffs[0], 5)}, {_truncate(diffs[1], 5)}"]


def _print_table(title: str, columns: List[str], rows: List[List[str]]) -> None:
    # A plain fixed-width table (TroubleShooter prints with PrettyTable, which Debian's Python
    # here does not have).
    widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(columns)]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    print(title)
    print(rule)
    print("| " + " | ".join(c.center(w) for c, w in zip(columns, widths)) + " |")
    print(rule)
    for r in rows:
        print("| " + " | ".join(v.center(w) for v, w in zip(r, widths)) + " |")
    print(rule)


def _write_csv(path: PathLike, columns: List[str], rows: List[List[str]]) -> None:
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(columns)
    writer.writerows(rows)
    write_text_atomically(path, text.getvalue())


def _shape_text(shape: Optional[Tuple[int, ...]]) -> str:
    return "None" if shape is None else str(tuple(shape))


# ---- npy folders ----

def _check_tolerances(rtol: float, atol: float) -> None:
    for name, value in (("rtol", rtol), ("atol", atol)):
        if not (isinstance(value, (int, float)) and value >= 0):
            raise _numprobe.UsageError(f"{name} must be a number >= 0, got {value!r}")


def compare_npy_dir(orig_dir: PathLike, target_dir: PathLike, rtol: float = 1e-4,
                    atol: float = 1e-4, equal_nan: bool = False, *,
                    name_map_list: Optional[NameMapList] = None, compare_shape: bool = False,
                    output_file: Optional[PathLike] = None,
                    num_processes: Optional[int] = None) -> List[Dict[str, str]]:
    """Compares the .npy files of two folders, paired by name_map_list (default: by name).
    Prints TroubleShooter's table, writes it as CSV to output_file, and returns its rows."""
    del num_processes  # the library compares on its own threads
    _check_tolerances(rtol, atol)
    if name_map_list is None:
        name_map_list = get_name_map_list_by_name(orig_dir, target_dir)
    columns = NPY_COLUMNS[:2] + (NPY_SHAPE_COLUMNS if compare_shape else []) + NPY_COLUMNS[2:]
    rows: List[List[str]] = []
    for orig_name, target_name in name_map_list:
        a = None if orig_name is None else _maybe_npy(orig_dir, orig_name)
        b = None if target_name is None else _maybe_npy(target_dir, target_name)
        cells = [str(orig_name), str(target_name)]
        if compare_shape:
            cells += [_shape_text(a and a.shape), _shape_text(b and b.shape)]
        cells += _display(*_figures(a, b, rtol, atol, equal_nan, exact_shape=True))
        rows.append(cells)
    _print_table("The list of comparison results", columns, rows)
    if output_file is not None:
        _write_csv(output_file, columns, rows)
    return [dict(zip(columns, r)) for r in rows]


def _maybe_npy(folder: PathLike, name: str) -> Optional[_Loaded]:
    path = os.path.join(os.fspath(folder), name if name.endswith(".npy") else name + ".npy")
    return _load_npy(folder, name) if os.path.isfile(path) else None


def compare_list_dir(orig_dir: PathLike, target_dir: PathLike, rtol: float = 1e-4,
                     atol: float = 1e-4, equal_nan: bool = False, compare_shape: bool = False,
                     output_file: Optional[PathLike] = None) -> List[Dict[str, str]]:
    """compare_npy_dir with files paired by the numbers in their names (lists saved by ts.save)."""
    return compare_npy_dir(orig_dir, target_dir, rtol, atol, equal_nan,
                           name_map_list=get_name_map_list_by_number(orig_dir, target_dir),
                           compare_shape=compare_shape, output_file=output_file)


def compare_dict_dir(orig_dir: PathLike, target_dir: PathLike, rtol: float = 1e-4,
                     atol: float = 1e-4, equal_nan: bool = False, compare_shape: bool = False,
                     output_file: Optional[PathLike] = None) -> List[Dict[str, str]]:
    """compare_npy_dir with files paired by name (dicts saved by ts.save)."""
    return compare_npy_dir(orig_dir, target_dir, rtol, atol, equal_nan,
                           name_map_list=get_name_map_list_by_name(orig_dir, target_dir),
                           compare_shape=compare_shape, output_file=output_file)


def compare_grads_dir(orig_dir: PathLike, target_dir: PathLike, rtol: float = 1e-4,
                      atol: float = 1e-4, equal_nan: bool = False, compare_shape: bool = True,
                      output_file: Optional[PathLike] = None) -> List[Dict[str, str]]:
    """compare_npy_dir with files paired by shape edit distance (gradients, saved unnamed)."""
    return compare_npy_dir(orig_dir, target_dir, rtol, atol, equal_nan,
                           name_map_list=get_name_map_list_by_shape_edit_distance(orig_dir,
                                                                                  target_dir),
                           compare_shape=compare_shape, output_file=output_file)


# ---- weight files ----

def _weights(path: PathLike) -> Dict[str, _Loaded]:
    """The tensors of a weight file (.ckpt, .pt/.pth state_dict or whole module, .safetensors,
    .npz); a pickled module is read inertly (nothing runs)."""
    path = os.fspath(path)
    try:
        _kind, tensors, _warnings = _numprobe._load(path, False)
    except _numprobe.RejectedError:
        _kind, tensors, _warnings = _numprobe._load(path, True)
    return {t.name: _Loaded(t) for t in tensors}


def _compare_weights(orig: Dict[str, _Loaded], target: Dict[str, _Loaded],
                     orig_label: Dict[str, str], compare_value: bool, print_level: int,
                     rtol: float, atol: float, equal_nan: bool, shape_columns: List[str],
                     value_columns: List[str], output_file: Optional[PathLike]):
    """TroubleShooter's compare_ms_ckpt over loaded tensors: `orig` keyed by the target's names,
    `orig_label` giving the name shown for the original."""
    if print_level not in (0, 1, 2):
        raise _numprobe.UsageError(f"print_level must be 0, 1 or 2, got {print_level!r}")
    _check_tolerances(rtol, atol)
    shape_rows: List[List[str]] = []
    value_rows: List[List[str]] = []
    remaining = dict(target)
    for name, a in orig.items():
        b = remaining.pop(name, None)
        label = orig_label.get(name, name)
        if b is None:
            shape_rows.append([label, "None", "None", _shape_text(a.shape), "None"])
            continue
        shape_rows.append([label, name, str(a.shape == b.shape), _shape_text(a.shape),
                           _shape_text(b.shape)])
        if compare_value:
            figures = _figures(a, b, rtol, atol, equal_nan, exact_shape=False)
            value_rows.append([label, name] + _display(*figures))
    for name, b in remaining.items():
        shape_rows.append(["None", name, "None", "None", _shape_text(b.shape)])
    if print_level:
        shown_shapes = shape_rows if print_level == 1 else [r for r in shape_rows
                                                            if r[2] != "True"]
        shown_values = value_rows if print_level == 1 else [r for r in value_rows
                                                            if r[2] != "True"]
        _print_table("The list of comparison results for shapes", shape_columns, shown_shapes)
        if compare_value:
            _print_table("The list of comparison results for values", value_columns,
                         shown_values)
    shapes = [dict(zip(shape_columns, r)) for r in shape_rows]
    values = [dict(zip(value_columns, r)) for r in value_rows]
    if output_file is not None:
        _write_csv(output_file, shape_columns + value_columns[2:],
                   [s + (v[2:] if v is not None else [""] * (len(value_columns) - 2))
                    for s, v in _join_rows(shape_rows, value_rows)])
    return shapes, values


def _join_rows(shape_rows: List[List[str]], value_rows: List[List[str]]):
    by_pair = {(v[0], v[1]): v for v in value_rows}
    return [(s, by_pair.get((s[0], s[1]))) for s in shape_rows]


def compare_ms_ckpt(orig_file_path: PathLike, target_file_path: PathLike, *,
                    compare_value: bool = True, print_level: int = 1, rtol: float = 1e-4,
                    atol: float = 1e-4, equal_nan: bool = False,
                    output_file: Optional[PathLike] = None):
    """Compares two MindSpore checkpoints parameter by parameter (paired by name): prints the
    shape table and, with compare_value, the value table (print_level 0 none, 1 all, 2 only rows
    that are not True). output_file: both tables as one CSV (numprobe's addition). Returns
    (shape rows, value rows)."""
    orig = _weights(orig_file_path)
    return _compare_weights(orig, _weights(target_file_path), {}, compare_value, print_level,
                            rtol, atol, equal_nan, CKPT_SHAPE_COLUMNS, CKPT_VALUE_COLUMNS,
                            output_file)


def _read_weight_map(path: PathLike) -> Tuple[Dict[str, str], Dict[str, str]]:
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise _numprobe.NotFoundError(f"{path}: no such file") from None
    except ValueError as e:
        raise _numprobe.FormatError(f"{path}: malformed JSON: {e}") from None
    if isinstance(doc, dict):
        doc = [doc, {}]
    if (not isinstance(doc, list) or not 1 <= len(doc) <= 2
            or not all(isinstance(d, dict) for d in doc)):
        raise _numprobe.FormatError(
            f"{path}: expected TroubleShooter's weight map [{{torch name: MindSpore name}}, "
            "{torch name: value transform}]")
    name_map = {str(k): str(v) for k, v in doc[0].items()}
    value_map = {str(k): str(v) for k, v in (doc[1] if len(doc) > 1 else {}).items()}
    return name_map, value_map


def compare_pth_and_ckpt(weight_map_path: PathLike, pt_file_path: PathLike,
                         ms_file_path: PathLike, *, compare_value: bool = True,
                         print_level: int = 1, rtol: float = 1e-4, atol: float = 1e-4,
                         equal_nan: bool = False, output_file: Optional[PathLike] = None):
    """Compares a PyTorch weight file with a MindSpore checkpoint through a weight map (from
    get_weight_map): each torch parameter is paired with the MindSpore name the map gives it.
    Parameters with a value transform (Conv1d's expand_dims) are compared in the checkpoint's
    layout (same elements, compatible shapes). Returns (shape rows, value rows)."""
    name_map, _value_map = _read_weight_map(weight_map_path)
    torch_weights = _weights(pt_file_path)
    renamed: Dict[str, _Loaded] = {}
    label: Dict[str, str] = {}
    for pt_name, tensor in torch_weights.items():
        ms_name = name_map.get(pt_name, pt_name)
        renamed[ms_name] = tensor
        label[ms_name] = pt_name
    return _compare_weights(renamed, _weights(ms_file_path), label, compare_value, print_level,
                            rtol, atol, equal_nan, PTH_SHAPE_COLUMNS, PTH_VALUE_COLUMNS,
                            output_file)


def get_weight_map(pt_model=None, weight_map_save_path: Optional[PathLike] = None,
                   weight_name_prefix: Optional[str] = None,
                   custom_name_func: Optional[Callable[[Dict[str, str]], Dict[str, str]]] = None,
                   print_map: bool = False, **kwargs) -> Tuple[Dict[str, str], Dict[str, str]]:
    """TroubleShooter's weight map of a torch.nn.Module: ({torch parameter: MindSpore parameter},
    {torch parameter: value transform}), every state_dict key in the name map (BatchNorm
    weight->gamma, bias->beta, running_mean->moving_mean, running_var->moving_variance; Embedding
    weight->embedding_table; LayerNorm/GroupNorm gamma/beta; PReLU weight->a; others kept),
    weight_name_prefix put before every MindSpore name, then custom_name_func applied to the
    name map. Written as JSON [name map, value map] to weight_map_save_path."""
    del kwargs  # TroubleShooter accepts and ignores extra keywords
    import torch

    if not isinstance(pt_model, torch.nn.Module):
        raise TypeError("The parameter 'pt_model' must be torch.nn.Module")
    if custom_name_func is not None and not callable(custom_name_func):
        raise TypeError("The parameter 'custom_name_func' must be a function")
    renames: Dict[str, str] = {}
    value_map: Dict[str, str] = {}
    for module_name, module in pt_model.named_modules():
        prefix = module_name + "." if module_name else ""
        for cls in type(module).__mro__:
            if cls.__module__.startswith("torch.nn") and cls.__name__ in _WEIGHT_NAME_MAP:
                for pt, ms in _WEIGHT_NAME_MAP[cls.__name__].items():
                    renames[prefix + pt] = prefix + ms
                break
        for cls in type(module).__mro__:
            if cls.__module__.startswith("torch.nn") and cls.__name__ in _WEIGHT_VALUE_MAP:
                for pt, func in _WEIGHT_VALUE_MAP[cls.__name__].items():
                    value_map[prefix + pt] = func
                break
    name_map = {key: renames.get(key, key) for key in pt_model.state_dict()}
    if weight_name_prefix:
        name_map = {k: f"{weight_name_prefix}.{v}" for k, v in name_map.items()}
    if custom_name_func is not None:
        name_map = custom_name_func(name_map)
    if print_map:
        from pprint import pprint

        pprint(name_map)
        pprint(value_map)
    if weight_map_save_path is not None:
        write_text_atomically(weight_map_save_path, json.dumps([name_map, value_map], indent=4))
    return name_map, value_map
