"""An API's arguments rebuilt from its dump.json entry: tensors read from the dump's tensor files
(tensor mode, through numprobe's restricted readers) or generated from their recorded statistics
(statistics mode, by the C++ generator: Max and Min exactly, Mean and Norm as closely as the range
allows, deterministic per seed and tensor name), and every other argument as recorded. Types are
mapped through fixed tables: nothing a dump holds is imported or looked up by name."""
import os

import torch

from .. import _numprobe
from ..pytorch._tensors import DTYPE_MAP

TENSOR_TYPES = frozenset({"torch.Tensor", "torch.nn.parameter.Parameter"})

_TORCH_DTYPES = {
    "torch.float64": torch.float64, "torch.double": torch.float64,
    "torch.float32": torch.float32, "torch.float": torch.float32,
    "torch.float16": torch.float16, "torch.half": torch.float16,
    "torch.bfloat16": torch.bfloat16,
    "torch.int64": torch.int64, "torch.long": torch.int64,
    "torch.int32": torch.int32, "torch.int": torch.int32,
    "torch.int16": torch.int16, "torch.short": torch.int16,
    "torch.int8": torch.int8, "torch.uint8": torch.uint8,
    "torch.bool": torch.bool,
    "torch.complex64": torch.complex64, "torch.complex128": torch.complex128,
}
_MEMORY_FORMATS = {
    "torch.contiguous_format": torch.contiguous_format,
    "torch.channels_last": torch.channels_last,
    "torch.preserve_format": torch.preserve_format,
}
_NUMBER_TYPES = frozenset({"int", "float", "bool", "str", "complex"})
_BY_NUMPROBE_ID = {v: k for k, v in DTYPE_MAP.items()}


class Unsupported(Exception):
    """An argument the replay cannot rebuild; the API is skipped with this message."""


def torch_dtype(name):
    dtype = _TORCH_DTYPES.get(name)
    if dtype is None:
        raise Unsupported(f"dtype {name!r} is not supported by the replay")
    return dtype


def is_tensor_leaf(value):
    return isinstance(value, dict) and value.get("type") in TENSOR_TYPES


def _number(value):
    """A recorded statistic as a float (bool statistics are any/all), or None."""
    if value is None:
        return None
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    raise Unsupported(f"statistic {value!r} is not a number")


class InputBuilder:
    """Rebuilds the values of one dump: `mode` is "tensor" (read the files in `tensor_dir`) or
    "statistics"; `seed` drives the generated tensors."""

    def __init__(self, mode, tensor_dir, seed):
        self.mode = mode
        self.tensor_dir = tensor_dir
        self.seed = seed
        self.devices = set()  # devices the tensor files say the tensors lived on

    def tensor(self, leaf, key):
        out = self._tensor(leaf, key)
        # What the recorded run said, for the backward replay.
        out._numprobe_requires_grad = bool(leaf.get("requires_grad")) and out.is_floating_point()
        return out

    def _tensor(self, leaf, key):
        dtype = torch_dtype(leaf.get("dtype"))
        shape = leaf.get("shape")
        if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
            raise Unsupported(f"{key}: malformed shape {shape!r}")
        data_name = leaf.get("data_name")
        if self.mode == "tensor" and isinstance(data_name, str) and data_name:
            return self._read(data_name, dtype, shape, key)
        return self._generate(leaf, dtype, shape, key)

    def _read(self, data_name, dtype, shape, key):
        # A file name inside dump_tensor_data only: no folders, no way out of it.
        if os.path.basename(data_name) != data_name or data_name in (".", ".."):
            raise Unsupported(f"{key}: data_name {data_name!r} is not a file name")
        path = os.path.join(self.tensor_dir, data_name)
        tensors = _numprobe.read_tensor_file(path)
        if len(tensors) != 1:
            raise Unsupported(f"{key}: {data_name} holds {len(tensors)} tensors, not one")
        _, dtype_id, file_shape, data, device = tensors[0]
        file_dtype = _BY_NUMPROBE_ID.get(dtype_id)
        if file_dtype is None:
            raise Unsupported(f"{key}: {data_name} has a dtype torch lacks")
        if torch.Size(file_shape).numel() != torch.Size(shape).numel():
            raise Unsupported(f"{key}: {data_name} has shape {list(file_shape)}, dump.json says {shape}")
        if device:
            self.devices.add(device.split(":")[0])
        if len(data) == 0:
            out = torch.empty(file_shape, dtype=file_dtype)
        else:
            out = torch.frombuffer(bytearray(data), dtype=file_dtype).reshape(file_shape)
        return out.reshape(shape).to(dtype)

    def _generate(self, leaf, dtype, shape, key):
        if dtype.is_complex:
            raise Unsupported(f"{key}: complex tensors cannot be generated from statistics")
        out = torch.empty(shape, dtype=dtype)
        seed = _numprobe.precheck_seed(self.seed, key)
        _numprobe.precheck_generate(out.data_ptr(), DTYPE_MAP[dtype], out.numel(),
                                    _number(leaf.get("Max")), _number(leaf.get("Min")),
                                    _number(leaf.get("Mean")), _number(leaf.get("Norm")), seed)
        return out

    def value(self, leaf, key):
        """A recorded argument as a Python value (tensors on the CPU in their recorded dtype)."""
        if leaf is None:
            return None
        if isinstance(leaf, list):
            return [self.value(item, f"{key}.{i}") for i, item in enumerate(leaf)]
        if not isinstance(leaf, dict):
            raise Unsupported(f"{key}: unexpected {type(leaf).__name__} in dump.json")
        kind = leaf.get("type")
        if kind in TENSOR_TYPES:
            return self.tensor(leaf, key)
        if kind in _NUMBER_TYPES or (isinstance(kind, str) and kind.startswith("numpy.")):
            return leaf.get("value")
        if kind == "slice":
            value = leaf.get("value")
            if not isinstance(value, list) or len(value) != 3:
                raise Unsupported(f"{key}: malformed slice")
            return slice(*value)
        if kind in ("ellipsis", "Ellipsis") or leaf.get("value") == "...":
            return Ellipsis
        if kind == "torch.Size":
            return torch.Size(leaf.get("value"))
        if kind == "torch.dtype":
            return torch_dtype(leaf.get("value"))
        if kind == "torch.device":
            return DEVICE_PLACEHOLDER
        if kind == "torch.memory_format":
            fmt = _MEMORY_FORMATS.get(leaf.get("format"))
            if fmt is None:
                raise Unsupported(f"{key}: memory format {leaf.get('format')!r}")
            return fmt
        raise Unsupported(f"{key}: arguments of type {kind!r} are not replayed")


class _DevicePlaceholder:
    """A torch.device argument: replaced by the device each run uses."""

    def __repr__(self):
        return "<device>"


DEVICE_PLACEHOLDER = _DevicePlaceholder()


def build_call(builder, entry, name):
    """(args, kwargs) of forward entry `name` (msprobe's naming: positional arguments are
    {name}.input.{i}, keyword arguments {name}.input.{k})."""
    args = entry.get("input_args") or []
    kwargs = entry.get("input_kwargs") or {}
    if not isinstance(args, list) or not isinstance(kwargs, dict):
        raise Unsupported(f"{name}: malformed input_args/input_kwargs")
    built_args = [builder.value(a, f"{name}.input.{i}") for i, a in enumerate(args)]
    built_kwargs = {k: builder.value(v, f"{name}.input.{k}") for k, v in kwargs.items()}
    return built_args, built_kwargs


def map_tensors(value, fn):
    """`value` with fn applied to every tensor (lists, tuples and dicts followed)."""
    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, list):
        return [map_tensors(v, fn) for v in value]
    if isinstance(value, tuple):
        return tuple(map_tensors(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: map_tensors(v, fn) for k, v in value.items()}
    return value


def tensors_in(value):
    """The tensors of `value` in argument order (msprobe's order of input gradients)."""
    out = []
    if isinstance(value, torch.Tensor):
        out.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            out.extend(tensors_in(v))
    elif isinstance(value, dict):
        for v in value.values():
            out.extend(tensors_in(v))
    return out
