"""One API replayed: its inputs rebuilt, the API run in the recorded dtypes on the device (CPU, or
CUDA where the dump says the tensors lived there and CUDA is available) and in float64 on the CPU
as the benchmark, its backward run too when the dump has the backward entry, and each output and
input gradient handed to C++ for the metrics and msprobe's judgment. Returns the API's result as
the dict the C++ writer takes."""
import contextlib
import os

import torch

from .. import _numprobe
from ..pytorch._tensors import DTYPE_MAP
from . import _allowlist
from ._inputs import DEVICE_PLACEHOLDER, InputBuilder, Unsupported, build_call, map_tensors, tensors_in

_NO_BACKWARD = frozenset({"repeat_interleave", "masked_select"})  # as msprobe's acc_check


class Context:
    """What every API of a run shares."""

    def __init__(self, *, mode, tensor_dir, seed, device, custom, white_list, black_list,
                 error_dir):
        self.mode = mode
        self.tensor_dir = tensor_dir
        self.seed = seed
        self.device = device  # "auto", "cpu" or "cuda"
        self.custom = custom  # {"Prefix.api": callable or (callable, reference callable)}
        self.white_list = set(white_list or [])
        self.black_list = set(black_list or [])
        self.error_dir = error_dir  # where -save_error_data writes, or None

    def device_for(self, dumped_devices):
        if self.device == "cpu":
            return "cpu"
        if self.device == "cuda" or "cuda" in dumped_devices:
            return "cuda" if torch.cuda.is_available() else "cpu"
        return "cpu"


def split_api(api):
    """("Functional", "relu") of "Functional.relu.0" (middle parts joined: "linalg.inv")."""
    parts = api.split(".")
    if len(parts) < 3 or not parts[-1].isdigit():
        return None, None
    return parts[0], ".".join(parts[1:-1])


def resolve(ctx, api):
    """(device callable, benchmark callable) of `api`, or a reason it is not replayed."""
    prefix, name = split_api(api)
    if prefix is None:
        return None, f"API {api} not support for acc_check. SKIP."
    custom = ctx.custom.get(f"{prefix}.{name}")
    if custom is not None:
        return (custom if isinstance(custom, tuple) else (custom, custom)), None
    if prefix in _allowlist.UNSUPPORTED_PREFIXES:
        return None, f"API {api} not support for acc_check. SKIP."
    fn = _allowlist.lookup(prefix, name)
    if fn is None:
        return None, (f"API {prefix}.{name} is not in numprobe's allow-list of the torch APIs "
                      "its capture wraps: not replayed. SKIP.")
    return (fn, fn), None


def _prepare(args, kwargs, device, bench, need_grad):
    """Inputs on `device`: the recorded dtypes, or float64 for the benchmark; tensors the run
    recorded as requiring grad become leaves (returned in argument order) passed on as clones,
    so that in-place APIs work."""
    leaves = []

    def move(t):
        x = t.detach()
        if bench and (x.is_floating_point() or x.is_complex()):
            x = x.to(torch.complex128 if x.is_complex() else torch.float64)
        x = x.to(device)
        if need_grad and getattr(t, "_numprobe_requires_grad", False):
            leaf = x.clone().requires_grad_(True)
            leaves.append(leaf)
            return leaf.clone()
        leaves.append(None)
        return x.clone()

    run_device = torch.device(device)

    def place(value):
        if value is DEVICE_PLACEHOLDER:
            return run_device
        if isinstance(value, list):
            return [place(v) for v in value]
        return value

    moved_args = place(map_tensors(args, move))
    moved_kwargs = {}
    for key, value in kwargs.items():
        value = place(map_tensors(value, move))
        if bench and key == "dtype" and isinstance(value, torch.dtype) and value.is_floating_point:
            value = torch.float64  # the benchmark computes in float64 whatever dtype was asked
        moved_kwargs[key] = value
    return moved_args, moved_kwargs, leaves


def _recorded_float_dtypes(values):
    """The float dtypes of the tensor leaves of recorded values."""
    out = []
    for v in values:
        if isinstance(v, list):
            out.extend(_recorded_float_dtypes(v))
        elif isinstance(v, dict) and v.get("dtype") in _FLOAT_NAMES:
            out.append(_FLOAT_NAMES[v["dtype"]])
    return out


_FLOAT_NAMES = {"torch.float16": torch.float16, "torch.bfloat16": torch.bfloat16,
                "torch.float32": torch.float32, "torch.float64": torch.float64}


def _autocast(forward, device):
    """torch.autocast as the recorded run had it: when the API's output dtype differs from the
    float dtypes of its inputs (it ran under autocast), the device run uses that dtype too, as
    msprobe's acc_check does; else no autocast."""
    outputs = _recorded_float_dtypes(forward.get("output") or [])
    inputs = _recorded_float_dtypes(list(forward.get("input_args") or []) +
                                    list((forward.get("input_kwargs") or {}).values()))
    if not outputs or not inputs:
        return contextlib.nullcontext()
    target = outputs[0]
    if len(set(inputs)) == 1 and target in inputs:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device, dtype=target)


def _flatten(out):
    if isinstance(out, (list, tuple)):
        items = []
        for o in out:
            items.extend(_flatten(o) if isinstance(o, (list, tuple, dict)) else [o])
        return items
    if isinstance(out, dict):
        return _flatten(list(out.values()))
    return [out]


def _rows(api, bare, direction, bench_out, device_out, device_label):
    rows = []
    bench_items = _flatten(bench_out)
    device_items = _flatten(device_out)
    if len(bench_items) > len(device_items):
        return [_numprobe.precheck_message_row(f"{api}.{direction}.output.0", "error",
                                               "bench and npu output structure is different.")]
    for i, (b, d) in enumerate(zip(bench_items, device_items)):
        name = f"{api}.{direction}.output.{i}"
        if b is None:
            rows.append(_numprobe.precheck_message_row(name, "SKIP",
                                                       "Bench output is None, skip this test."))
        elif isinstance(b, torch.Tensor) and isinstance(d, torch.Tensor):
            d = d.detach().cpu().contiguous()
            b = b.detach().cpu().contiguous()
            if d.shape != b.shape:
                rows.append(_numprobe.precheck_message_row(
                    name, "error",
                    f"The shape of bench{tuple(b.shape)} and npu{tuple(d.shape)} not equal."))
            elif d.is_floating_point() != b.is_floating_point() or d.dtype not in DTYPE_MAP \
                    or b.dtype not in DTYPE_MAP:
                rows.append(_numprobe.precheck_message_row(
                    name, "error",
                    f"Bench out dtype is {b.dtype} but npu output dtype is {d.dtype}, cannot "
                    "compare."))
            else:
                rows.append(_numprobe.precheck_output(
                    name, bare, d.data_ptr(), DTYPE_MAP[d.dtype], list(d.shape), b.data_ptr(),
                    DTYPE_MAP[b.dtype], device_label))
        elif isinstance(b, (bool, int, float, str)) and not isinstance(d, torch.Tensor):
            rows.append(_numprobe.precheck_builtin(name, str(type(b)), str(type(d)), b == d))
        elif isinstance(b, torch.Size) and isinstance(d, torch.Size):
            rows.append(_numprobe.precheck_builtin(name, str(type(b)), str(type(d)), b == d))
        else:
            rows.append(_numprobe.precheck_message_row(
                name, "error", f"Unexpected output type in compare_core: {type(b)}"))
    return rows


def _save(ctx, api, inputs, outputs):
    os.makedirs(ctx.error_dir, exist_ok=True)
    for label, value in list(inputs.items()) + list(outputs.items()):
        for i, t in enumerate(tensors_in(value)):
            torch.save(t.detach().cpu(), os.path.join(ctx.error_dir, f"{api}.{label}.{i}.pt"))


def check_api(ctx, api, forward, backward):
    """The result dict of API `api` ("Functional.relu.0") from its forward entry and, if the
    dump has one, its backward entry."""
    prefix, bare = split_api(api)
    fns, skip = resolve(ctx, api)
    if skip is not None:
        return _numprobe.precheck_skipped(api, skip), skip if "allow-list" in skip else None
    if (ctx.black_list and bare in ctx.black_list) or (ctx.white_list and bare not in ctx.white_list):
        return _numprobe.precheck_skipped(api, f"API {bare} in black list or not in white list. SKIP."), None
    device_fn, bench_fn = fns
    try:
        builder = InputBuilder(ctx.mode, ctx.tensor_dir, ctx.seed)
        args, kwargs = build_call(builder, forward, f"{api}.forward")
        device = ctx.device_for(builder.devices)
        label = f"{device}:0" if device == "cuda" else device
        backward_message = ""
        need_grad = backward is not None and bare not in _allowlist.DROPOUT
        if need_grad and "out" in kwargs:
            need_grad = False
            backward_message = ("function with out=... arguments don't support automatic "
                                "differentiation, skip backward.")
        if need_grad and bare in _NO_BACKWARD:
            need_grad = False
            backward_message = "This API does not support backward ut, skip backward."
        dev_args, dev_kwargs, dev_leaves = _prepare(args, kwargs, device, False, need_grad)
        bench_args, bench_kwargs, bench_leaves = _prepare(args, kwargs, "cpu", True, need_grad)
        grad_mode = contextlib.nullcontext() if need_grad else torch.no_grad()
        with grad_mode:
            with _autocast(forward, device):
                device_out = device_fn(*dev_args, **dev_kwargs)
            bench_out = bench_fn(*bench_args, **bench_kwargs)
        result = {"api": api, "forward_rows": [], "backward_rows": []}
        if bare in _allowlist.DROPOUT:
            d, b = device_out.detach().cpu(), bench_out.detach()
            status = _numprobe.precheck_dropout(int((b == 0).sum()), int((d == 0).sum()), b.numel())
            result.update(dropout=True, forward=status)
            return _numprobe.precheck_aggregate(result), None
        result["forward_rows"] = _rows(api, bare, "forward", bench_out, device_out, label)
        bench_grads, device_grads = [], []
        if backward_message:
            result["backward_rows"] = [_numprobe.precheck_message_row(
                f"{api}.backward.output.0", "SKIP", backward_message)]
        elif need_grad:
            grads = backward.get("input") or []
            dev_outs = [t for t in tensors_in(device_out)]
            bench_outs = [t for t in tensors_in(bench_out)]
            pairs = []
            for i, g in enumerate(grads):
                if g is None or i >= len(dev_outs) or not dev_outs[i].requires_grad:
                    continue
                grad = builder.value(g, f"{api}.backward.input.{i}")
                if not isinstance(grad, torch.Tensor):
                    continue
                pairs.append((dev_outs[i], bench_outs[i], grad))
            if pairs:
                torch.autograd.backward([p[0] for p in pairs],
                                        [p[2].to(device=p[0].device, dtype=p[0].dtype) for p in pairs])
                torch.autograd.backward([p[1] for p in pairs], [p[2].to(p[1].dtype) for p in pairs])
                device_grads = [None if leaf is None else leaf.grad for leaf in dev_leaves]
                bench_grads = [None if leaf is None else leaf.grad for leaf in bench_leaves]
                positional = len(tensors_in(args))  # msprobe compares the gradients of args
                result["backward_rows"] = _rows(api, bare, "backward", bench_grads[:positional],
                                                device_grads[:positional], label)
        api_result = _numprobe.precheck_aggregate(result)
        if ctx.error_dir and api_result["verdict"] == "error":
            _save(ctx, api, {"forward.input": (args, kwargs)},
                  {"forward.output.bench": bench_out, "forward.output.device": device_out,
                   "backward.output.bench": bench_grads, "backward.output.device": device_grads})
        return api_result, None
    except Unsupported as e:
        return _numprobe.precheck_skipped(api, f"{e}. SKIP."), None
    except Exception as e:  # noqa: BLE001 - the API's own error is the reason it is skipped
        return _numprobe.precheck_skipped(api, f"Run {api} acc_check Error: {e}"), None
