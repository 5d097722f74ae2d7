"""config-check from inside a training script: a snapshot of the run's environment as the script
sees it once it has set itself up (its seeds, determinism switches, hyperparameters and model
weights), in the same format and with the same item names as `numprobe config-check collect`,
so that `numprobe config-check compare A B` reads either.

    from numprobe import config_check
    torch.manual_seed(1234)
    config_check.collect(f"snapshot_rank{rank}.json", model=model, hyperparameters=args,
                         configs=["config.yaml"], data=["data/shard0.bin"])

Everything the command line records is recorded too (environment with secrets masked, Python and
library versions, torch's build flags: the probe runs this script's own interpreter); what only
the live process knows is taken from it and wins over the probe's fresh-interpreter defaults.

    result = config_check.compare("snapshot_npu.json", "snapshot_gpu.json")
    for item in result.differences(): print(item["category"], item["name"], item["a"], item["b"])
    result.save("out")   # config_check_{ts}.csv and .json, as `numprobe config-check compare`
"""
import hashlib
import json
import os
import sys
import tempfile

from . import _numprobe

__all__ = ["CheckResult", "collect", "compare"]


def _digest(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()[:16]


def _live_facts(torch):
    """Facts of this process that a fresh interpreter cannot see: CATEGORY.NAME=VALUE strings,
    with the same names as the command line's probe."""
    import random

    facts = {
        "pip.torch.backends.cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "pip.torch.backends.cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
        "pip.torch.get_default_dtype": torch.get_default_dtype(),
        "pip.torch.get_num_threads": torch.get_num_threads(),
        "random.torch.are_deterministic_algorithms_enabled":
            torch.are_deterministic_algorithms_enabled(),
        "random.torch.backends.cudnn.deterministic": torch.backends.cudnn.deterministic,
        "random.torch.backends.cudnn.benchmark": torch.backends.cudnn.benchmark,
        "random.torch.initial_seed": torch.initial_seed(),
        # The generators' states, so that two runs that drew a different number of random
        # values before this point (or seeded differently) show it.
        "random.torch.rng_state": _digest(torch.get_rng_state().numpy().tobytes()),
        "random.python.random.state": _digest(repr(random.getstate()).encode()),
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        facts["random.torch.cuda.rng_state"] = _digest(
            b"".join(s.numpy().tobytes() for s in torch.cuda.get_rng_state_all()))
    if "numpy" in sys.modules:
        state = sys.modules["numpy"].random.get_state()
        facts["random.numpy.random.state"] = _digest(state[1].tobytes() + repr(state[2:]).encode())
    return [f"{name}={value}" for name, value in facts.items()]


def _weight_facts(model, prefix):
    from .pytorch._tensors import numprobe_dtype

    facts = []
    for name, tensor in model.state_dict().items():
        t = tensor.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        text = _numprobe.tensor_fingerprint(t.data_ptr(), numprobe_dtype(t.dtype), list(t.shape),
                                            list(t.stride()))
        facts.append(f"weights.{prefix}:{name}={text}")
    return facts


def _hyperparameter_dict(hyperparameters):
    if hyperparameters is None:
        return None
    if isinstance(hyperparameters, dict):
        return hyperparameters
    if hasattr(hyperparameters, "__dict__"):  # argparse.Namespace, simple config objects
        return {k: v for k, v in vars(hyperparameters).items() if not k.startswith("_")}
    raise TypeError("hyperparameters must be a dict or an object with attributes "
                    f"(argparse.Namespace), not {type(hyperparameters).__name__}")


def collect(output=None, *, model=None, model_name="model", hyperparameters=None, configs=(),
            data=(), weights=(), command=None, set=(), python=None, tensor_stats=True):
    """Collects a snapshot and returns it as a dict; also writes it (atomically) to `output`.

    model: a torch.nn.Module whose state_dict is fingerprinted by statistics, as items
        "<model_name>:<tensor name>" of the weights category (as a weight file's tensors).
    hyperparameters: a dict (nested dicts become dotted names) or an argparse.Namespace; names
        containing "seed" go to the random category, as with config files.
    configs, data, weights: paths, as `numprobe config-check collect --config/--data/--weights`.
    command: the run's argv for hyperparameters given as flags (default: sys.argv).
    set: extra "CATEGORY.NAME=VALUE" items; they win over everything else.
    python: the interpreter probed for versions and build flags (default: this one, so that its
        packages are the ones recorded); False to skip the probe.
    Raises numprobe.Error for an unreadable path or a malformed config file.
    """
    facts = []
    torch = sys.modules.get("torch")
    if torch is None and model is not None:
        import torch
    if torch is not None:
        facts += _live_facts(torch)
    if model is not None:
        facts += _weight_facts(model, model_name)
    facts += list(set)
    config_paths = [os.fspath(p) for p in configs]
    hyper = _hyperparameter_dict(hyperparameters)
    with tempfile.TemporaryDirectory(prefix="numprobe-config-check-") as tmp:
        if hyper is not None:
            path = os.path.join(tmp, "hyperparameters.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(hyper, f, default=str)
            config_paths.append(path)  # last: the script's own values win over its files
        interpreter = "" if python is False else (python or sys.executable)
        text = _numprobe.collect_snapshot(
            config_paths, [os.fspath(p) for p in data], [os.fspath(p) for p in weights],
            list(sys.argv if command is None else command), facts, interpreter, tensor_stats,
            None if output is None else os.fspath(output))
    return json.loads(text)


class CheckResult:
    """`numprobe config-check compare A B`: ``items`` (one dict per item: category, name, name_b,
    a, b, level pass/warning/error, note; A is checked, B the baseline), ``summary`` (category ->
    worst level), ``differs`` (any warning or error)."""

    def __init__(self, report):
        self._report = report
        self.items = report.items
        self.summary = report.summary
        self.differs = report.differs

    def __iter__(self):
        return iter(self.items)

    def __len__(self):
        return len(self.items)

    def differences(self):
        """The items that are not pass, in the report's order."""
        return [i for i in self.items if i["level"] != "pass"]

    def to_pandas(self):
        """The items as a pandas DataFrame (needs pandas)."""
        import pandas

        return pandas.DataFrame(self.items)

    def save(self, dir=".", *, xlsx=False, timestamp=None):
        """Writes config_check_{ts}.csv and .json (and .xlsx with xlsx=True) into `dir`, as
        `numprobe config-check compare A B -o dir` does; returns their paths."""
        from .analysis import file_timestamp

        paths = self._report.save(os.fspath(dir), timestamp or file_timestamp(), xlsx)
        return [os.fspath(p) for p in paths]

    def __repr__(self):
        return (f"<numprobe.config_check.CheckResult {len(self.items)} items, "
                f"{len(self.differences())} differ>")


def compare(a, b):
    """`numprobe config-check compare A B`: snapshot A (checked) against snapshot B (the
    baseline). Raises numprobe.NotFoundError / FormatError for a missing or malformed snapshot."""
    return CheckResult(_numprobe._config_check_compare(os.fspath(a), os.fspath(b)))
