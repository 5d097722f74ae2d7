"""numprobe's pre-check (msprobe's acc_check): which APIs of a run lose precision, found by
re-running every API of an L1 dump in its recorded dtypes and in float64, before and without a
baseline run; and the static plan of a lower precision from one fp32 statistics run.

    import numprobe
    result = numprobe.precheck("dump/step0/rank0/dump.json", out="precheck_out")
    result.failed            # APIs whose verdict is error
    result.to_pandas()       # one row per output, msprobe's columns and numprobe's

    numprobe.precheck_plan(model, batch, "fp16", optimizer=opt)   # or from a dump:
    numprobe.precheck.plan_dump("fp32_stats_dump", "fp16")

The replay runs only the torch APIs numprobe's capture wraps (an allow-list bound in code); an
API a dump names outside it is skipped with a warning. Custom APIs registered for capture
(PrecisionDebugger.register_custom_api) are replayed only when passed in `custom_apis`.
The functions never print: progress goes to the `progress` callback.
"""
import json
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor

from .. import _numprobe
from ._replay import Context, check_api

__all__ = ["PrecheckResult", "precheck", "compare", "plan", "plan_dump"]


class PrecheckResult:
    """What a pre-check wrote: `files` (result_csv, details_csv, json), `summary` (counts of API
    verdicts), `apis` (one dict per API with its rows), `warnings`."""

    def __init__(self, files, summary, apis, warnings, mode):
        self.files = files
        self.summary = summary
        self.apis = apis
        self.warnings = warnings
        self.mode = mode

    @property
    def failed(self):
        """Names of the APIs whose numprobe verdict is error."""
        return [a["api"] for a in self.apis if a["verdict"] == "error"]

    def verdict(self, api):
        for a in self.apis:
            if a["api"] == api:
                return a["verdict"]
        raise KeyError(api)

    def rows(self):
        for a in self.apis:
            for r in a["forward_rows"] + a["backward_rows"]:
                yield a["api"], r

    def to_pandas(self):
        import pandas as pd

        from_columns = ["cosine", "max_abs_err", "dual_100", "dual_1000", "dual_10000",
                        "error_rate", "error_balance", "rmse", "small_value_err_ratio",
                        "max_rel_err", "mean_rel_err", "inf_nan_err_ratio", "rel_err_ratio",
                        "abs_err_ratio", "max_ulp_err", "mean_ulp_err", "ulp_err_proportion"]
        records = []
        for api, r in self.rows():
            rec = {"api": api, "name": r["name"], "bench_dtype": r["bench_dtype"],
                   "device_dtype": r["device_dtype"], "shape": r["shape"]}
            rec.update(dict(zip(from_columns, r["columns"])))
            rec.update({k: r[k] for k in ("status", "standard", "standard_result", "verdict",
                                          "reason", "message", "device")})
            records.append(rec)
        return pd.DataFrame.from_records(records)

    def __repr__(self):
        s = self.summary
        return (f"PrecheckResult({s['apis']} APIs: {s['pass']} pass, {s['warning']} warning, "
                f"{s['error']} error, {s['skip']} skipped)")


def _load_dump(api_info):
    """The dump.json document (rebuilt from the capture journal when the run was killed)."""
    folder, name = os.path.split(os.path.abspath(api_info))
    if name == "dump.json":
        text, _, _ = _numprobe.load_dump_json(folder)
    else:
        with open(api_info, encoding="utf-8") as f:
            text = f.read()
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise _numprobe.FormatError(f"{api_info}: malformed JSON: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), dict):
        raise _numprobe.FormatError(f"{api_info}: no \"data\" object")
    return doc, folder


def _split_entries(data):
    """msprobe's parse_json_info_forward_backward: API entries by name without the direction."""
    forward, backward = {}, {}
    for name, entry in data.items():
        if "Module" in name or not isinstance(entry, dict):
            continue
        base, _, direction = name.rpartition(".")
        if direction == "forward":
            forward[base] = entry
        elif direction == "backward":
            backward[base] = entry
    return forward, backward


def _filter_repeats(forward):
    """msprobe's -f: an API call whose arguments (statistics other than Max/Min included) equal an
    earlier call of the same API is dropped."""
    kept, seen = {}, {}
    for name, entry in forward.items():
        base = name.rsplit(".", 1)[0]
        args = [{k: v for k, v in a.items() if k not in ("Max", "Min")} if isinstance(a, dict) else a
                for a in entry.get("input_args") or []]
        key = json.dumps([args, entry.get("input_kwargs")], sort_keys=True, default=str)
        if key in seen.setdefault(base, set()):
            continue
        seen[base].add(key)
        kept[name] = entry
    return kept


def _read_config(path):
    """white_list, black_list and error_data_path from msprobe's config.json (acc_check task)."""
    if path is None:
        return {}
    with open(path, encoding="utf-8") as f:
        config = json.load(f)
    section = config.get("acc_check") or config.get("run_ut") or {}
    return {k: section.get(k) for k in ("white_list", "black_list", "error_data_path")}


_WORKER = None  # (ctx, forward, backward, threads) of a pool's worker, inherited through fork


def _work(api):
    import torch

    ctx, forward, backward, threads = _WORKER
    torch.set_num_threads(threads)
    return check_api(ctx, api, forward[api], backward.get(api))


class _Run:
    """What every process of a pre-check derives alike from the dump and the options: the API
    entries to replay, in dump order, and how to replay them."""

    def __init__(self, api_info, *, filter_api, config, white_list, black_list, seed, device,
                 custom_apis, save_error_data):
        doc, self.folder = _load_dump(api_info)
        self.mode = ("tensor" if doc.get("task") == "tensor" or doc.get("dump_data_dir")
                     else "statistics")
        self.forward, self.backward = _split_entries(doc["data"])
        if filter_api:
            self.forward = _filter_repeats(self.forward)
        self.settings = _read_config(config)
        self.white = list(white_list or []) + list(self.settings.get("white_list") or [])
        self.black = list(black_list or []) + list(self.settings.get("black_list") or [])
        self.seed, self.device, self.custom = seed, device, dict(custom_apis or {})
        self.save_error_data = save_error_data

    def context(self, result_dir, timestamp):
        """The replay's Context; failing APIs' data go to ut_error_data{timestamp}/ beside the
        result CSV (or in the config's error_data_path)."""
        error_dir = None
        if self.save_error_data:
            base = self.settings.get("error_data_path") or result_dir
            error_dir = os.path.join(base, "ut_error_data" + timestamp)
        return Context(mode=self.mode, tensor_dir=os.path.join(self.folder, "dump_tensor_data"),
                       seed=self.seed, device=self.device, custom=self.custom,
                       white_list=self.white, black_list=self.black, error_dir=error_dir)

    def todo(self, done):
        return [api for api in self.forward if api not in done]

    def replay(self, ctx, todo, n, threads):
        """(api_result, warning) of each API of `todo`, in its order; `n` processes."""
        import torch

        saved_threads = torch.get_num_threads()
        try:
            if n <= 1 or len(todo) <= 1:
                torch.set_num_threads(threads)
                for api in todo:
                    yield check_api(ctx, api, self.forward[api], self.backward.get(api))
                return
            global _WORKER
            _WORKER = (ctx, self.forward, self.backward, threads)
            pool = ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("fork"))
            try:
                futures = [pool.submit(_work, api) for api in todo]
                for future in futures:  # in dump order, as n=1 gives them
                    yield future.result()
            finally:
                pool.shutdown(cancel_futures=True)
                _WORKER = None
        finally:
            torch.set_num_threads(saved_threads)


def _open_writer(out, csv_path, timestamp=None):
    if csv_path:
        return _numprobe.PrecheckWriter.resume(os.fspath(csv_path))
    return _numprobe.PrecheckWriter.create(os.fspath(out),
                                           timestamp or time.strftime("%Y%m%d%H%M%S"))


def _finish(run, writer, api_info, results, total, progress):
    """Writes `results` (`total` (api_result, warning) in dump order) and the JSON twin."""
    warnings = []
    for i, (api_result, warning) in enumerate(results):
        writer.append(api_result)
        if warning:
            warnings.append(warning)
        if progress is not None:
            progress(i + 1, total, api_result["api"])
    summary = writer.finish(os.path.abspath(api_info), run.mode, run.seed, run.device, warnings)
    return PrecheckResult(writer.files, summary, writer.apis(), warnings, run.mode)


def precheck(api_info, out=".", *, n=1, csv_path=None, filter_api=False, save_error_data=False,
             config=None, white_list=None, black_list=None, seed=1234, device="auto",
             custom_apis=None, threads=1, progress=None):
    """Pre-checks every forward API of `api_info` (a dump.json, statistics or tensor mode).

    out: folder of accuracy_checking_result_{ts}.csv, accuracy_checking_details_{ts}.csv and
        precheck_{ts}.json. csv_path: continue the run of that result CSV instead.
    n: processes; results equal those of n=1 (each API's inputs depend only on `seed` and its
        name, and each process runs torch with `threads` threads).
    filter_api: skip calls that repeat an earlier call's arguments. config: msprobe's config.json
        (its acc_check white_list, black_list, error_data_path); white_list / black_list: API names.
    save_error_data: save the inputs and outputs of failing APIs (ut_error_data{ts}/ in out).
    device: "auto" (CUDA where the dump's tensors were on CUDA and it is available), "cpu", "cuda".
    custom_apis: {"Prefix.api": fn or (fn, reference_fn)} for APIs registered for capture by
        register_custom_api; reference_fn computes the benchmark (default: fn in float64).
    progress: called as progress(done, total, api) after each API.
    Raises numprobe.Error for an unreadable dump or result CSV.
    """
    run = _Run(api_info, filter_api=filter_api, config=config, white_list=white_list,
               black_list=black_list, seed=seed, device=device, custom_apis=custom_apis,
               save_error_data=save_error_data)
    writer = _open_writer(out, csv_path)
    files = writer.files
    ctx = run.context(os.path.dirname(files["result_csv"]), files["timestamp"])
    todo = run.todo(writer.done)
    return _finish(run, writer, api_info, run.replay(ctx, todo, n, threads), len(todo), progress)


def _replay_shard(api_info, shard_file, index, count, *, out=".", csv_path=None, timestamp,
                  n=1, threads=1, progress=None, **options):
    """One MPI process's share of a pre-check (`mpirun numprobe precheck -api_info ...`, run by
    the numprobe command): the APIs index, index + count, ... of what is left to run, replayed and
    written to `shard_file` as JSON lines ({"index", "result", "warning"}; floats exact, NaN and
    Inf included). Nothing else is written but the failing APIs' data (save_error_data), into the
    folder the whole run names with `timestamp`."""
    run = _Run(api_info, **options)
    if csv_path:  # opened to read what is done; nothing is appended here
        resumed = _numprobe.PrecheckWriter.resume(os.fspath(csv_path))
        done = resumed.done
        result_dir = os.path.dirname(resumed.files["result_csv"])
        timestamp = resumed.files["timestamp"]
        del resumed
    else:
        done, result_dir = set(), os.fspath(out)
    ctx = run.context(result_dir, timestamp)
    todo = run.todo(done)
    mine = list(range(index, len(todo), count))
    with open(shard_file, "w", encoding="utf-8") as f:
        results = run.replay(ctx, [todo[i] for i in mine], n, threads)
        for finished, (i, (api_result, warning)) in enumerate(zip(mine, results), 1):
            f.write(json.dumps({"index": i, "result": api_result, "warning": warning}) + "\n")
            if progress is not None:
                progress(finished, len(mine), api_result["api"])


def _merge_shards(api_info, shard_files, *, out=".", csv_path=None, timestamp, progress=None,
                  **options):
    """Process 0's half of an MPI pre-check: the shards' results, in dump order, written as one
    process writes them (the same files, byte for byte)."""
    run = _Run(api_info, **options)
    writer = _open_writer(out, csv_path, timestamp)
    todo = run.todo(writer.done)
    results = [None] * len(todo)
    for path in shard_files:
        with open(path, encoding="utf-8") as f:
            for line in f:
                record = json.loads(line)
                i = record.get("index")
                if not isinstance(i, int) or not 0 <= i < len(todo) or results[i] is not None \
                        or record["result"].get("api") != todo[i]:
                    raise _numprobe.FormatError(f"{path}: a shard's results do not match the dump")
                results[i] = (record["result"], record.get("warning"))
    missing = [todo[i] for i, r in enumerate(results) if r is None]
    if missing:
        raise _numprobe.FormatError(f"no shard replayed {missing[0]} ({len(missing)} APIs)")
    return _finish(run, writer, api_info, results, len(results), progress)


def compare(npu, gpu, out=None):
    """precheck-compare (msprobe's api_precision_compare): the details CSV `npu` judged against
    the reference device's `gpu`. Writes the result files into `out` when given; returns a dict
    with "apis" (forward/backward results per API), "failed", "warnings" and the file paths."""
    return _numprobe.precheck_compare(os.fspath(npu), os.fspath(gpu),
                                      None if out is None else os.fspath(out),
                                      time.strftime("%Y%m%d%H%M%S"))


def plan_dump(dump, dtype, settings=None, out=None):
    """The static plan of `dtype` (fp16, bf16, fp8_e4m3, fp8_e5m2) for an fp32 statistics dump:
    a dict with "findings" (severity, kind, op, tensor, detail, advice). `settings` is a
    precheck_settings.json path (default: the one beside the dump, if any)."""
    return _numprobe.precheck_plan(os.fspath(dump), dtype,
                                   None if settings is None else os.fspath(settings),
                                   None if out is None else os.fspath(out),
                                   time.strftime("%Y%m%d%H%M%S"))


def plan(model, batch, dtype, *, optimizer=None, scaler=None, autocast=None, loss_fn=None,
         dump_path=None, out=None):
    """The static plan of `dtype` for `model` on one sample `batch`: one fp32 forward (and
    backward, through `loss_fn(output)` or output.sum()) is captured in statistics mode, the
    optimizer's settings (type, lr, eps, weight_decay of its first parameter group), the loss
    scaler and the autocast flag are recorded beside it, and the dump is planned (plan_dump).
    The captured run does not step the optimizer. Returns plan_dump's dict."""
    import tempfile

    import torch

    from ..pytorch import PrecisionDebugger

    if PrecisionDebugger._instance is not None:
        raise _numprobe.UsageError("precheck plan needs the capture to itself; "
                              "a PrecisionDebugger is already active in this process")
    root = dump_path or tempfile.mkdtemp(prefix="numprobe-plan-")
    debugger = PrecisionDebugger(task="statistics", level="L1", dump_path=root, step=[0])
    try:
        debugger.start(model)
        inputs = batch if isinstance(batch, (tuple, list)) else (batch,)
        output = model(*inputs)
        loss = loss_fn(output) if loss_fn is not None else (
            output.float().sum() if isinstance(output, torch.Tensor) else None)
        if loss is not None and loss.requires_grad:
            loss.backward()
        debugger.stop()
    finally:
        PrecisionDebugger._reset()
        model.zero_grad(set_to_none=True)
    settings = {"autocast": autocast, "loss_scaling": None, "loss_scale": None}
    if optimizer is not None:
        group = optimizer.param_groups[0]
        settings["optimizer"] = {"type": type(optimizer).__name__,
                                 "lr": _scalar(group.get("lr")), "eps": _scalar(group.get("eps")),
                                 "weight_decay": _scalar(group.get("weight_decay"))}
    if scaler is not None:
        settings["loss_scaling"] = bool(getattr(scaler, "is_enabled", lambda: True)())
        if settings["loss_scaling"] and hasattr(scaler, "get_scale"):
            settings["loss_scale"] = float(scaler.get_scale())
    else:
        settings["loss_scaling"] = False
    dumps = [os.path.join(dirpath, "dump.json") for dirpath, _, names in os.walk(root)
             if "dump.json" in names]
    if not dumps:
        raise _numprobe.NotFoundError(f"the captured run wrote no dump under {root}")
    for d in dumps:
        with open(os.path.join(os.path.dirname(d), "precheck_settings.json"), "w") as f:
            json.dump(settings, f)
    return plan_dump(root, dtype, out=out)


def _scalar(value):
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


class _CallableModule(type(json)):
    """numprobe.precheck is this package and, called, the pre-check itself (DESIGN's
    numprobe.precheck(dump_json))."""

    def __call__(self, *args, **kwargs):
        return precheck(*args, **kwargs)


import sys as _sys  # noqa: E402

_sys.modules[__name__].__class__ = _CallableModule
