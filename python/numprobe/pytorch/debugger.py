"""PrecisionDebugger: msprobe's PyTorch API on numprobe's capture core.

    from numprobe.pytorch import PrecisionDebugger
    debugger = PrecisionDebugger(config_path="config.json")
    for batch in data:
        debugger.start(model)
        ...forward, backward, optimizer step...
        debugger.stop()
        debugger.step()
"""
import atexit
import json
import os
import random
import shutil
import sys

import torch

from .. import _numprobe
from . import _closed_loop, _runtime, _tensors

_DEFAULTS = {"task": "statistics", "level": "L1", "rank": [], "step": []}


def _build_config(config_path, task, dump_path, level, step):
    if config_path is not None:
        config = _numprobe.DumpConfig.load(os.fspath(config_path))
    else:
        base = dict(_DEFAULTS)
        base["dump_path"] = os.fspath(dump_path) if dump_path is not None else "./numprobe_dump"
        config = _numprobe.DumpConfig.parse(json.dumps(base))
    if task is not None:
        config.override("task", json.dumps(task))
    if dump_path is not None:
        config.override("dump_path", json.dumps(os.fspath(dump_path)))
    if level is not None:
        config.override("level", json.dumps(level))
    if step is not None:
        config.override("step", json.dumps(list(step) if isinstance(step, (list, tuple)) else [step]))
    return config


class FirstDivergence(SystemExit):
    """stop_at_first: the run left its bench_path's golden at `notice["name"]`. A SystemExit
    (status 1), so that a training loop's `except Exception` does not carry on past it; the
    verdict is printed and the dump written before it is raised."""

    def __init__(self, notice):
        super().__init__(1)
        self.notice = notice


def _megabytes(n):
    return f"{n / 1e6:.1f} MB"


def incremental_line(summary):
    """One line on what an incremental dump judged and the bytes it did not write."""
    first = summary["first_divergence"]
    where = (f"first divergence {first} (step {summary['first_divergence_step']})" if first
             else "no divergence")
    return (f"numprobe: incremental dump against {summary['bench'] or '(no golden)'}: "
            f"{summary['tensors_judged']} tensors judged, {summary['tensors_over_tolerance']} over "
            f"tolerance in {summary['entries_over_tolerance']} entries; "
            f"{summary['tensors_written']} written ({_megabytes(summary['bytes_written'])}), "
            f"{_megabytes(summary['bytes_not_written'])} not written; {where}")


def _current_rank():
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank()
    return None


class PrecisionDebugger:
    """Captures a PyTorch run into msprobe's dump format. One instance per process (a second
    construction returns the first, as msprobe's singleton does)."""

    _instance = None

    def __new__(cls, *args, **kwargs):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
            cls._instance._initialized = False
        return cls._instance

    def __init__(self, config_path=None, task=None, dump_path=None, level=None, step=None):
        if self._initialized:
            return
        config = _build_config(config_path, task, dump_path, level, step)
        for line in config.warnings:  # documented keys numprobe does not honour, one line each
            print(f"numprobe: warning: {line}", file=sys.stderr)
        _tensors.register()
        self.config = config
        self.dumper = _numprobe.Dumper(config, rank=_current_rank())
        self._runtime = _runtime._Runtime(config, self.dumper)
        # The closed-loop dialect's compare / report / config_check at stop() (_closed_loop.py).
        self._loop = _closed_loop.ClosedLoop(config) if config.closed_loop_dialect else None
        self._resumed = False  # the current step was begun by step(), not by start()
        self._runtime.on_divergence = self._stop_at_divergence
        _runtime.CURRENT = self._runtime
        if config.level in ("L1", "mix"):
            self._runtime.wrap_apis()
        if config.is_deterministic:
            seed_all(config.seed, mode=True)
        self._initialized = True
        atexit.register(self._at_exit)

    @classmethod
    def _reset(cls):
        """Tests: undoes the wrapping and forgets the instance."""
        inst = cls._instance
        if inst is not None and inst._initialized:
            inst._runtime.running = False
            inst._runtime.stop_dispatch()
            inst._runtime.unwrap_apis()
            inst.dumper.close()
            for root in inst._runtime.model_roots:
                for module in root.modules():
                    if hasattr(module, "_numprobe_prefix"):
                        module._numprobe_prefix = None
            _runtime.CURRENT = None
        cls._instance = None

    @property
    def task(self):
        return self.config.task

    @property
    def level(self):
        return self.config.level

    def start(self, model=None):
        rt = self._runtime
        rank = _current_rank()
        if rank is not None:
            self.dumper.set_rank(rank)
        if model is not None and self.config.level in ("L0", "mix"):
            rt.hook_model(model)
        elif model is None and self.config.level == "L0" and not rt.model_roots:
            raise _numprobe.UsageError("level L0 needs start(model=...)")
        self.dumper.start()
        rt.running = True
        self._resumed = False
        if self._loop is not None:
            self._loop.pending = True
        if self.config.level == "L2":
            rt.start_dispatch()

    def register_custom_api(self, module, api, api_prefix=None):
        """Records `module.api` at L1/mix as {api_prefix}.{api}.{n} (msprobe's
        register_custom_api; the prefix defaults to the module's name)."""
        prefix = api_prefix if api_prefix is not None else getattr(module, "__name__", str(module))
        self._runtime.wrap_custom_api(module, api, prefix)

    def restore_custom_api(self, module, api):
        """Undoes register_custom_api."""
        self._runtime.unwrap_custom_api(module, api)

    def stop(self):
        """Ends recording (dump.json and its companions are written). With a closed-loop config,
        also the end of the run: compare against compare.base_path with report.html written into
        dump_path, and config_check (_closed_loop.py)."""
        resumed = self._resumed
        self._stop_recording()
        self._print_incremental()
        if self._loop is not None:
            if resumed and self.dumper.entry_count == 0:
                self._drop_empty_step()
            # The step's files are made durable in the background; the compare below reads
            # them once they are (with the journal's written marker).
            self.dumper.flush()
            self._loop.finish(self._loop_model())

    def _print_incremental(self):
        summary = self.dumper.incremental_summary
        if summary is not None:
            print(incremental_line(summary), file=sys.stderr, flush=True)

    def _stop_at_divergence(self, notice):
        """stop_at_first: the verdict, the dump written, then the run ends (FirstDivergence)."""
        sys.stdout.flush()
        sys.stderr.write(notice["report"])
        sys.stderr.write("numprobe: stop_at_first: the run stops at its first divergence\n")
        sys.stderr.flush()
        self._stop_recording()
        self._print_incremental()
        raise FirstDivergence(notice)

    def _drop_empty_step(self):
        """The step that step() began recorded nothing (stop() came right after the last step()):
        its folder goes, so that the dump tree has no empty trailing step."""
        rank_dir = self.dumper.rank_dir
        if os.path.isdir(rank_dir) and not os.path.exists(os.path.join(rank_dir, "debug.json")):
            self.dumper.step_forward()  # closes the step's journal: nothing more is written there
            shutil.rmtree(rank_dir)
            try:
                os.rmdir(os.path.dirname(rank_dir))
            except OSError:  # other ranks' folders are there
                pass

    def _stop_recording(self):
        rt = self._runtime
        rt.running = False
        rt.stop_dispatch()
        _tensors.flush(rt)
        self.dumper.stop()

    def _loop_model(self):
        roots = self._runtime.model_roots
        return roots[0] if roots else None

    def forward_backward_dump_end(self):
        """msprobe 8.x's alias of stop()."""
        self.stop()

    def step(self):
        rt = self._runtime
        # A closed-loop config is written for start() once, step() per step, stop() at the end:
        # recording goes on into the next step.
        resume = rt.running and self._loop is not None
        rt.running = False
        rt.stop_dispatch()
        _tensors.flush(rt)
        self.dumper.step_forward()
        rt.reset_step()
        if resume:
            self.start()
            self._resumed = True

    def save(self, var, name, save_backward=True):
        """Records `var` (a tensor, number, string or a nested structure of them) into debug.json
        as '{name}.{n}.debug', and a tensor's gradient as '{name}_grad.{n}.debug' when it
        requires grad (msprobe's save)."""
        if not isinstance(name, str) or not isinstance(save_backward, bool):
            raise ValueError("save(var, name: str, save_backward: bool)")
        rt = self._runtime
        count = rt.api_counts.get(("save", name), 0)
        rt.api_counts[("save", name)] = count + 1
        # debug.json is written as it is recorded: its statistics are fetched now, even with
        # async_dump.
        rt.inner += 1
        deferred, rt.async_stats = rt.async_stats, False
        try:
            self.dumper.record_debug(f"{name}.{count}", var)
        finally:
            rt.inner -= 1
            rt.async_stats = deferred
        if save_backward and isinstance(var, torch.Tensor) and var.requires_grad:
            grad_name = f"{name}_grad.{count}"

            def hook(grad):
                rt.inner += 1
                deferred, rt.async_stats = rt.async_stats, False
                try:
                    self.dumper.record_debug(grad_name, grad)
                finally:
                    rt.inner -= 1
                    rt.async_stats = deferred

            var.register_hook(hook)

    def _at_exit(self):
        if self._initialized and PrecisionDebugger._instance is self:
            try:
                _tensors.flush(self._runtime)
                self.dumper.close()
            except _numprobe.Error:
                pass
            # `numprobe run` ends its steps without stop(): the closed loop runs at exit.
            if self._loop is not None and self._loop.pending:
                self._loop.finish(self._loop_model())


def seed_all(seed=1234, mode=False, rm_dropout=False):
    """Seeds Python, numpy and torch; `mode` turns on deterministic algorithms; `rm_dropout`
    sets dropout probabilities to 0 (as msprobe does) for run-to-run comparisons."""
    if not isinstance(seed, int) or not 0 <= seed <= 2**32 - 1:
        raise ValueError(f"seed must be an integer in 0..2^32-1, got {seed!r}")
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    try:
        import numpy as np

        np.random.seed(seed)
    except ImportError:
        pass
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    if mode:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    if rm_dropout:
        import torch.nn.functional as F

        for name in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                     "feature_alpha_dropout"):
            original = getattr(F, name, None)
            if original is None:
                continue

            def no_dropout(input, p=0.5, training=True, inplace=False, _f=original):
                return _f(input, 0.0, training, inplace)

            setattr(F, name, no_dropout)
