"""Entry-for-entry comparison of two msprobe dump.json files (used by the fidelity tests)."""
import json
import math

STAT_KEYS = ("Max", "Min", "Mean", "Norm")


def _close(a, b, rtol):
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= rtol * max(abs(a), abs(b)) or a == b


def compare_values(got, want, path, rtol, out):
    if isinstance(want, dict) and want.get("type") == "torch.Tensor":
        if not isinstance(got, dict):
            out.append(f"{path}: expected a tensor, got {got!r}")
            return
        if list(got.keys()) != list(want.keys()):
            out.append(f"{path}: keys {list(got.keys())} != {list(want.keys())}")
        for k in ("type", "dtype", "shape", "requires_grad", "data_name"):
            if got.get(k) != want.get(k):
                out.append(f"{path}.{k}: {got.get(k)!r} != {want.get(k)!r}")
        for k in STAT_KEYS:
            if not _close(got.get(k), want.get(k), rtol):
                out.append(f"{path}.{k}: {got.get(k)!r} != {want.get(k)!r}")
        return
    if isinstance(want, dict):
        if not isinstance(got, dict) or list(got.keys()) != list(want.keys()):
            out.append(f"{path}: keys {list(got.keys()) if isinstance(got, dict) else got!r} != {list(want.keys())}")
            return
        for k in want:
            compare_values(got[k], want[k], f"{path}.{k}", rtol, out)
        return
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            out.append(f"{path}: {got!r} != {want!r}")
            return
        for i, (g, w) in enumerate(zip(got, want)):
            compare_values(g, w, f"{path}.{i}", rtol, out)
        return
    if got != want:
        out.append(f"{path}: {got!r} != {want!r}")


def compare_dumps(got_path, want_path, rtol=1e-6):
    """Differences between two dump.json files, as lines ([] when they match)."""
    with open(got_path) as f:
        got = json.load(f)
    with open(want_path) as f:
        want = json.load(f)
    out = []
    for k in ("task", "level", "framework"):
        if got.get(k) != want.get(k):
            out.append(f"{k}: {got.get(k)!r} != {want.get(k)!r}")
    g, w = got["data"], want["data"]
    if list(g) != list(w):
        out.append(f"entry names/order differ:\n  got  {list(g)}\n  want {list(w)}")
    for name in w:
        if name in g:
            compare_values(g[name], w[name], name, rtol, out)
    return out
