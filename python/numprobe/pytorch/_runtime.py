"""The capture runtime behind PrecisionDebugger: API wrappers (L1), module hooks (L0), the aten
dispatch mode (L2), backward and parameter-gradient hooks, call counters, stacks and construct
information. Records go to the C++ Dumper; this module only decides names and order, following
msprobe: API entries are named {Prefix}.{api}.{count}.{forward|backward} with per-step counters
bumped at forward end, only the outermost wrapped call is recorded, module entries are
Module.{path}.{Class}.{forward|backward}.{n}, a backward entry's "input" holds the gradients of the
op's outputs and its "output" the gradients of its inputs."""
import functools
import inspect
import linecache
import os
import sys
import threading

import torch

from .. import _numprobe
from . import _api_list

CURRENT = None  # the active _Runtime (one per process, as msprobe)

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# This process's id, refreshed in a forked child: the wrappers compare it on every call (a forked
# DataLoader worker must not record), and os.getpid() is a system call each time.
_PROCESS_ID = os.getpid()


def _refresh_process_id():
    global _PROCESS_ID
    _PROCESS_ID = os.getpid()


os.register_at_fork(after_in_child=_refresh_process_id)
_TORCH_2 = int(torch.__version__.split(".")[0]) >= 2


def _backward_hook(module, hook):
    """A module's full backward hook (torch.utils.hooks.BackwardHook) calling `hook`; torch 2
    added the pre-hooks argument (none here)."""
    if _BACKWARD_HOOK_TAKES_PRE_HOOKS:
        return torch.utils.hooks.BackwardHook(module, [hook], [])
    return torch.utils.hooks.BackwardHook(module, [hook])


_BACKWARD_HOOK_TAKES_PRE_HOOKS = "user_pre_hooks" in inspect.signature(
    torch.utils.hooks.BackwardHook.__init__).parameters


def _first_tensor(value):
    """msprobe's choice of the tensor whose grad_fn carries an API's backward hook."""
    while not isinstance(value, torch.Tensor):
        if isinstance(value, dict):
            value = next((v for v in value.values() if isinstance(v, torch.Tensor)), None)
            if value is None:
                return None
        elif isinstance(value, (list, tuple)):
            if not value:
                return None
            value = value[0]
        else:
            return None
    return value


def _as_tuple(value):
    return value if isinstance(value, tuple) else (value,)


def _narrowing(source, result):
    """Whether a cast from tensor `source` to tensor `result` loses precision or range: float to
    a float with a larger epsilon or a smaller maximum, or float to an integer or bool."""
    if not isinstance(source, torch.Tensor) or not isinstance(result, torch.Tensor):
        return False
    if source.dtype == result.dtype or not source.is_floating_point():
        return False
    if not result.is_floating_point():
        return not result.is_complex()
    a, b = torch.finfo(source.dtype), torch.finfo(result.dtype)
    return b.eps > a.eps or b.max < a.max


class _Runtime(_numprobe.CaptureState):
    """The state the wrapped APIs read and change (running, depth, inner, thread, pid, api_counts,
    selection, api_parent, module_nodes and the per-run flags) lives in its C++ base class,
    CaptureState: the wrappers (_numprobe.ApiWrapper) record the common case in C++ and call back
    call_api, note_cast and hook_api_backward for the rest."""

    def __init__(self, config, dumper):
        self.config = config
        self.dumper = dumper
        self.level = config.level
        self.running = False
        self.inner = 0  # >0 while numprobe itself calls torch
        self.depth = 0  # nesting of wrapped API calls (outermost-only recording)
        self.filtering = bool(config.scope or config.list)
        self.thread = threading.get_ident()
        self.pid = os.getpid()
        self.wrapped = []  # (owner, attribute, original)
        self.model_roots = []
        self.dispatch_mode = None
        self.param_handles = {}
        self.stack_cache = {}
        # Fixed for the run: whether records get stacks and construct nodes, and per API name
        # whether it is recorded (api_selected), looked up on every wrapped call.
        self.collect_stacks = bool(config.extra_info) and self.level != "L2"
        self.construct_on = self.level in ("L0", "mix")
        self.construct_apis = self.level == "mix"  # construct.json has API nodes
        self.format_stack = _format_stack
        self.dump_backward = bool(config.dump_backward)
        self.selection = {}
        self.on_overflow = None
        # overflow_check's task, or the closed loop's overflow_check section beside a dump.
        self.check_overflow = bool(config.task == "overflow_check" or config.loop["overflow_check"])
        # An incremental dump (bench_path) with stop_at_first: the run ends at the first record
        # that leaves the golden behind (check_records).
        self.stop_at_first = bool(config.bench_path) and config.stop_at_first
        self.check_any = self.check_overflow or self.stop_at_first
        self.on_divergence = None  # set by PrecisionDebugger: stops recording, then raises
        # casts.json: narrowing casts are noted at L1 and mix, where the cast APIs are wrapped.
        self.track_casts = self.level in ("L1", "mix")
        if self.track_casts:
            dumper.track_casts()
        # async_dump (statistics and tensor tasks): device statistics stay on the device until the
        # step ends (or MAX_PENDING_SLOTS accumulate) and are fetched in one transfer, and the host
        # copies that md5 and tensor files need are made on a copy stream and handed over then
        # (_tensors.flush).
        self.async_stats = bool(config.async_dump) and config.task in ("statistics", "tensor")
        self.pending_parts = []  # stacked device statistics, one tensor per op
        self.pending_kinds = []  # per slot: how to read its values back
        self.pending_hosts = []  # per slot: its host copy in flight, or None
        self.pending_host_bytes = 0
        self.copy_streams = {}  # device -> the stream host copies are made on
        self.device_transfers = 0  # device -> host fetches of statistics (tests, benchmarks)
        self.host_copies = 0  # device tensors copied to the host for their data (tests)
        self.reset_step()

    # ---- per-step state ----
    def reset_step(self):
        self.api_counts = {}
        self.module_counts = {}
        self.grad_hook_calls = {}
        self.module_stack = []
        self.api_parent = None
        self.module_nodes = []  # (name, parent) in first-seen order
        self.module_nodes_flushed = 0

    # construct.json, in msprobe's order: update_construct(name, parent=None, is_api=False) is
    # CaptureState's (C++), shared with the wrapped APIs.

    # ---- stack.json ----
    def stack_frames(self):
        frame = sys._getframe(2)
        key = []
        f = frame
        while f is not None:
            key.append((f.f_code, f.f_lineno))
            f = f.f_back
        key = tuple(key)
        cached = self.stack_cache.get(key)
        if cached is not None:
            return cached
        lines = _format_stack(key)
        self.stack_cache[key] = lines
        return lines

    def collect_stack(self, name):
        if self.collect_stacks:
            # The walk and its cache are in C++; _format_stack runs once per distinct stack.
            self.dumper.add_call_stack(name, 1, _format_stack)

    def check_records(self):
        """After a record: the first overflow (overflow checks) and the first divergence from
        bench_path (stop_at_first), each reported once."""
        if self.check_overflow:
            self.report_overflow()
        if self.stop_at_first:
            notice = self.dumper.take_divergence()
            if notice is not None and self.on_divergence is not None:
                self.on_divergence(notice)

    def report_overflow(self):
        report = self.dumper.take_overflow_report()
        if report is not None:
            sys.stderr.write(report["report"])
            sys.stderr.flush()
            if self.on_overflow is not None:
                self.on_overflow(report)

    # ---- L1: wrapped APIs ----
    def api_selected(self, api_name):
        if api_name in _api_list.CAST_ONLY:
            return False
        if self.filtering or self.level not in ("L1", "mix"):
            return True
        return _api_list.risk_allows(self.config.risk_level, api_name)

    def call_api(self, prefix, api_name, func, args, kwargs, distributed):
        """A wrapped call through Python: what the C++ wrapper hands over (the first call of an
        API, whose selection is decided here, and every call while records are checked after
        each: check_any)."""
        self.depth += 1
        try:
            count = self.api_counts.get(prefix, 0)
            forward_name = f"{prefix}{count}.forward"
            collect = self.selection.get(api_name)
            if collect is None:
                collect = self.selection[api_name] = self.api_selected(api_name)
            dumper = self.dumper
            if collect:
                self.inner += 1
                try:
                    if dumper.enter_selected(forward_name):
                        if self.collect_stacks:
                            # The walk and its cache are in C++ (skip 0: from this frame up).
                            dumper.add_call_stack(forward_name, 0, _format_stack)
                        dumper.record_forward_inputs(forward_name, args, kwargs)
                    if self.stop_at_first:
                        self.check_records()
                finally:
                    self.inner -= 1
            out = func(*args, **kwargs)
            self.inner += 1
            try:
                if self.construct_on:
                    self.update_construct(forward_name, self.api_parent, is_api=True)
                if collect:
                    recorded = args + tuple(kwargs.values()) if distributed else _as_tuple(out)
                    dumper.record_forward_outputs(forward_name, recorded)
                    if self.check_any:
                        self.check_records()
                else:
                    dumper.leave(forward_name)
                if self.track_casts and api_name in _api_list.CAST_APIS and args:
                    self.note_cast(forward_name, args[0], out)
                if self.dump_backward:
                    self.hook_api_backward(prefix, count, collect, out)
            finally:
                self.inner -= 1
            self.api_counts[prefix] = count + 1
            return out
        finally:
            self.depth -= 1

    def note_cast(self, name, source, result):
        """casts.json: records `name` when it narrowed `source` into `result`. Its statistics are
        taken now, even with async_dump (a handful of tensors per step)."""
        if not _narrowing(source, result):
            return
        deferred, self.async_stats = self.async_stats, False
        try:
            frames = self.stack_frames() if self.config.extra_info else []
            self.dumper.add_cast(name, source, result, frames)
        finally:
            self.async_stats = deferred

    def hook_api_backward(self, prefix, count, collect, out):
        """`collect`: whether the API is recorded (api_selected, cached per API in call_api)."""
        var = _first_tensor(out)
        if var is None or not (var.requires_grad and torch.is_grad_enabled()) or var.grad_fn is None:
            return
        backward_name = f"{prefix}{count}.backward"

        def hook(grad_inputs, grad_outputs):
            self.inner += 1
            try:
                self.update_construct(backward_name, self.api_parent, is_api=True)
                if collect:
                    self.dumper.record_backward(backward_name, grad_outputs, grad_inputs)
                    if self.check_any:
                        self.check_records()
            finally:
                self.inner -= 1

        var.grad_fn.register_hook(hook)

    def wrap_apis(self):
        import torch.nn.functional as F

        owners = {"Functional": [F], "Tensor": [torch.Tensor], "Torch": [torch]}
        if torch.distributed.is_available():
            import torch.distributed as dist

            owners["Distributed"] = [dist]
        for prefix_kind, names in _api_list.API_NAMES.items():
            if prefix_kind == "Tensor":
                names = list(names) + sorted(_api_list.CAST_ONLY)
            for owner in owners.get(prefix_kind, []):
                for name in names:
                    original = getattr(owner, name, None)
                    if original is None or not callable(original) or isinstance(original, type):
                        continue
                    wrapper = self.make_wrapper(f"{prefix_kind}.{name}.", name, original,
                                                prefix_kind == "Distributed")
                    setattr(owner, name, wrapper)
                    self.wrapped.append((owner, name, original))

    def make_wrapper(self, prefix, api_name, original, distributed):
        """The C++ wrapper of `original` (recorded while this runtime runs), with the function's
        attributes as functools.wraps gives them and the original in _numprobe_original."""
        wrapper = _numprobe.ApiWrapper(self, prefix, api_name, original, distributed,
                                       api_name in _api_list.CAST_APIS)
        functools.update_wrapper(wrapper, original)
        # As the Python function wrapper had: its own module where the original names none.
        wrapper.__dict__.setdefault("__module__", __name__)
        wrapper._numprobe_original = original
        return wrapper

    def wrap_custom_api(self, owner, name, prefix):
        """msprobe's register_custom_api: owner.name is recorded as {prefix}.{name}.{n}."""
        original = getattr(owner, name)
        if getattr(original, "_numprobe_original", None) is not None:
            return
        setattr(owner, name, self.make_wrapper(f"{prefix}.{name}.", name, original, False))
        self.wrapped.append((owner, name, original))

    def unwrap_custom_api(self, owner, name):
        for i, (o, n, original) in enumerate(self.wrapped):
            if o is owner and n == name:
                setattr(owner, name, original)
                del self.wrapped[i]
                return

    def unwrap_apis(self):
        for owner, name, original in reversed(self.wrapped):
            setattr(owner, name, original)
        self.wrapped = []

    # ---- L0: modules ----
    def hook_model(self, model):
        models = model if isinstance(model, (list, tuple)) else [model]
        for index, root in enumerate(models):
            if not isinstance(root, torch.nn.Module):
                raise TypeError(f"start(model=...) expects torch.nn.Module, got {type(root).__name__}")
            if any(root is r for r in self.model_roots):
                continue
            self.model_roots.append(root)
            for path, module in root.named_modules():
                if module is root or getattr(module, "_numprobe_prefix", None) is not None:
                    continue
                index_part = f"{index}." if isinstance(model, (list, tuple)) else ""
                module._numprobe_prefix = f"Module.{index_part}{path}.{type(module).__name__}."
                module._numprobe_calls = []
                module.register_forward_pre_hook(_module_pre_hook)
                module.register_forward_hook(_module_forward_hook)

    def module_backward_enabled(self):
        # msprobe records module backward entries at L0, and at mix with torch >= 2 (on torch 1.x
        # its mix dumps have none: the fixture dumps show it), so numprobe does the same.
        if not self.config.dump_backward:
            return False
        return self.level == "L0" or (self.level == "mix" and _TORCH_2)

    def module_pre(self, module, args):
        prefix = module._numprobe_prefix
        index = self.module_counts.get(prefix, -1) + 1
        self.module_counts[prefix] = index
        name = f"{prefix}forward.{index}"
        parent = self.module_stack[-1] if self.module_stack else None
        self.module_nodes.append((name, parent))
        self.module_stack.append(name)
        self.api_parent = name
        self.dumper.enter(name)
        if self.dumper.active and self.dumper.selected(name):
            self.collect_stack(name)
        bw_hook = None
        if self.module_backward_enabled():
            bw_hook = _backward_hook(module, self._module_backward(prefix, index))
            args = bw_hook.setup_input_hook(args)
        module._numprobe_calls.append((name, bw_hook))
        return args

    def _module_backward(self, prefix, index):
        name = f"{prefix}backward.{index}"

        def hook(module, grad_input, grad_output):
            self.inner += 1
            try:
                self.update_construct(name)
                self.dumper.add_construct(name, None)
                self.dumper.record_backward(name, grad_output, grad_input)
                if self.check_any:
                    self.check_records()
            finally:
                self.inner -= 1

        return hook

    def module_post(self, module, args, output):
        name, bw_hook = module._numprobe_calls.pop()
        prefix = module._numprobe_prefix
        params = {n: p for n, p in module.named_parameters(recurse=False)}
        self.dumper.record_forward(name, _as_tuple(args), {}, _as_tuple(output), params)
        if self.check_any:
            self.check_records()
        if params and self.config.dump_backward:
            self.hook_param_grads(prefix[:-1], params)
        self.update_construct(name)
        if self.module_stack and self.module_stack[-1] == name:
            self.module_stack.pop()
        self.api_parent = self.module_stack[-1] if self.module_stack else None
        if bw_hook is not None:
            return bw_hook.setup_output_hook(output)
        return None

    def hook_param_grads(self, module_name, params):
        for param_name, param in params.items():
            if not param.requires_grad:
                continue
            key = f"{module_name}.{param_name}"
            old = self.param_handles.pop(key, None)
            if old is not None:
                old.remove()
            expanded = param.expand_as(param)
            if expanded.grad_fn is None:
                continue
            accumulator = expanded.grad_fn.next_functions[0][0]
            self.param_handles[key] = accumulator.register_hook(
                self._param_grad_hook(module_name, param_name, param))

    def _param_grad_hook(self, module_name, param_name, param):
        def hook(*_):
            # msprobe's index: bumped each time the module's first-seen parameter fires again.
            state = self.grad_hook_calls.get(module_name)
            if state is None:
                state = self.grad_hook_calls[module_name] = [0, param_name]
            elif state[1] == param_name:
                state[0] += 1
            entry = f"{module_name}.parameters_grad.{state[0]}"
            self.inner += 1
            try:
                self.dumper.record_param_grad(entry, param_name, param.grad)
                if self.check_any:
                    self.check_records()
            finally:
                self.inner -= 1

        return hook

    # ---- L2: aten ops through the dispatcher ----
    def start_dispatch(self):
        if self.dispatch_mode is None:
            self.dispatch_mode = _make_dispatch_mode(self)
            self.dispatch_mode.__enter__()

    def stop_dispatch(self):
        if self.dispatch_mode is not None:
            mode, self.dispatch_mode = self.dispatch_mode, None
            mode.__exit__(None, None, None)

    def call_aten(self, func, args, kwargs):
        op_name = str(func.__name__)  # "convolution.default"
        prefix = f"Aten.{op_name}."
        count = self.api_counts.get(prefix, 0)
        name = f"{prefix}{count}.forward"
        self.inner += 1
        try:
            self.dumper.record_forward_inputs(name, tuple(args), dict(kwargs))
        finally:
            self.inner -= 1
        out = func(*args, **kwargs)
        self.inner += 1
        try:
            self.dumper.record_forward_outputs(name, _as_tuple(out))
            if self.check_any:
                self.check_records()
        finally:
            self.inner -= 1
        self.api_counts[prefix] = count + 1
        return out


def _format_stack(frames):
    """stack.json's lines of a stack, [(code, lineno), ...] innermost first, as msprobe writes
    them; numprobe's own frames are left out."""
    lines = []
    for code, lineno in frames:
        path = code.co_filename
        if path.startswith(_PACKAGE_DIR):
            continue
        source = linecache.getline(path, lineno).strip()
        if source:
            lines.append(f"File {path}, line {lineno}, in {code.co_name}, \n {source}")
    return lines


def _module_pre_hook(module, args):
    rt = CURRENT
    if (rt is None or not rt.running or rt.inner or _PROCESS_ID != rt.pid
            or getattr(module, "_numprobe_prefix", None) is None):
        return None
    rt.inner += 1
    try:
        return rt.module_pre(module, args)
    finally:
        rt.inner -= 1


def _module_forward_hook(module, args, output):
    rt = CURRENT
    calls = getattr(module, "_numprobe_calls", None)
    if rt is None or rt.inner or not calls:
        return None
    rt.inner += 1
    try:
        return rt.module_post(module, args, output)
    finally:
        rt.inner -= 1


def _make_dispatch_mode(runtime):
    from torch.utils._python_dispatch import TorchDispatchMode

    class _NumprobeDispatch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if not runtime.running or runtime.inner:
                return func(*args, **kwargs)
            return runtime.call_aten(func, args, kwargs)

    return _NumprobeDispatch()
