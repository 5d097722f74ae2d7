"""Hands torch values to the C++ converter: the dtype table, the converter for types C++ does not
know (dtypes, devices, process groups, numpy values), and the batched statistics of device
tensors (one stacked reduction per op, fetched with one transfer)."""
import dataclasses
import zlib

import torch

from .. import _numprobe

_TORCH_TO_NUMPROBE = {
    torch.float64: "f64", torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.int64: "i64", torch.int32: "i32", torch.int16: "i16", torch.int8: "i8",
    torch.uint8: "u8", torch.bool: "bool", torch.complex64: "c64", torch.complex128: "c128",
}
for _name, _np_name in (("float8_e4m3fn", "f8_e4m3fn"), ("float8_e5m2", "f8_e5m2"),
                        ("float8_e4m3fnuz", "f8_e4m3fnuz"), ("float8_e5m2fnuz", "f8_e5m2fnuz"),
                        ("uint16", "u16"), ("uint32", "u32"), ("uint64", "u64")):
    if hasattr(torch, _name):
        _TORCH_TO_NUMPROBE[getattr(torch, _name)] = _np_name

DTYPE_MAP = {dt: _numprobe.DTYPES[name] for dt, name in _TORCH_TO_NUMPROBE.items()}
_FLOAT8 = {dt for dt, name in _TORCH_TO_NUMPROBE.items() if name.startswith("f8")}


def numprobe_dtype(dtype):
    try:
        return DTYPE_MAP[dtype]
    except KeyError:
        raise _numprobe.Error(f"unsupported: numprobe has no dtype for {dtype}") from None


_MEMORY_FORMATS = {torch.contiguous_format: "contiguous_format", torch.channels_last: "channels_last",
                   torch.channels_last_3d: "channels_last_3d", torch.preserve_format: "preserve_format"}


def _process_group_info(group):
    import torch.distributed as dist

    info = {"type": "torch.ProcessGroup"}
    try:
        ranks = dist.get_process_group_ranks(group)
    except Exception:  # older torch: only the default group can be described
        ranks = list(range(dist.get_world_size(group)))
    info["group_ranks"] = ranks
    info["group_id"] = f"{zlib.crc32(str(ranks).encode('utf-8')):08x}"
    return info


def fallback(obj):
    """Types the C++ converter leaves to Python: returns ("plain", type, value), ("literal", json)
    or ("value", replacement), or None for null."""
    if isinstance(obj, torch.dtype):
        return ("plain", "torch.dtype", str(obj))
    if isinstance(obj, torch.device):
        return ("plain", "torch.device", f"{obj.type}:{obj.index}")
    if isinstance(obj, torch.memory_format):
        return ("literal", {"type": "torch.memory_format", "format": _MEMORY_FORMATS.get(obj)})
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return ("value", {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)})
    try:
        import torch.distributed as dist

        if dist.is_available() and isinstance(obj, dist.ProcessGroup):
            return ("literal", _process_group_info(obj))
        if dist.is_available() and isinstance(obj, dist.ReduceOp):
            return ("literal", {"type": "torch.distributed.ReduceOp", "value": str(obj)})
    except (ImportError, AttributeError):
        pass
    module = type(obj).__module__
    if module == "numpy":
        import numpy as np

        if isinstance(obj, np.ndarray):
            return ("value", torch.from_numpy(obj))
        if isinstance(obj, np.generic):
            return ("plain", type(obj).__name__, obj.item())
    return None


class _Inner:
    """Marks numprobe's own torch calls so that the API wrappers pass them through."""

    def __init__(self, runtime_getter):
        self._get = runtime_getter

    def __enter__(self):
        rt = self._get()
        if rt is not None:
            rt.inner += 1

    def __exit__(self, *exc):
        rt = self._get()
        if rt is not None:
            rt.inner -= 1


def _runtime():
    from . import _runtime as r

    return r.CURRENT


def device_batch(tensors, need_data):
    """Statistics of `tensors` reduced on their device in one stacked computation per call and
    fetched with a single transfer; msprobe's rules (dtype precision, bool any/all, 0-d, empty,
    fp8 -> null). Returns [(stats, host_copy_or_None)]."""
    with _Inner(_runtime):
        with torch.no_grad():
            parts, kinds = [], []
            for t in tensors:
                t = t.detach()
                if t.is_meta or t.numel() == 0 or t.dtype in _FLOAT8:
                    kinds.append("null")
                    continue
                if t.is_complex():
                    a = t.abs()
                    parts.append(torch.stack([a.max(), a.min(), a.mean()]).to(torch.float64))
                    kinds.append("complex")
                elif t.dtype == torch.bool:
                    parts.append(torch.stack([t.any(), t.all()]).to(torch.float64))
                    kinds.append("bool0" if t.dim() == 0 else "bool")
                elif t.dim() == 0:
                    parts.append(t.reshape(1).to(torch.float64))
                    kinds.append("scalar_float" if t.is_floating_point() else "scalar_int")
                elif t.is_floating_point():
                    parts.append(torch.stack([t.max(), t.min(), t.mean(), t.norm()]).to(torch.float64))
                    kinds.append("float")
                else:
                    parts.append(torch.stack([t.max(), t.min()]).to(torch.float64))
                    kinds.append("int")
            flat = torch.cat(parts).cpu().tolist() if parts else []
            out, pos = [], 0
            for t, kind in zip(tensors, kinds):
                if kind == "null":
                    stats = [None] * 4
                elif kind == "complex":
                    stats = flat[pos:pos + 3] + [None]
                    pos += 3
                elif kind == "bool":
                    stats = [bool(flat[pos]), bool(flat[pos + 1]), None, None]
                    pos += 2
                elif kind == "bool0":
                    stats = [bool(flat[pos])] * 4
                    pos += 2
                elif kind == "scalar_float":
                    stats = [flat[pos]] * 4
                    pos += 1
                elif kind == "scalar_int":
                    stats = [int(flat[pos])] * 4
                    pos += 1
                elif kind == "float":
                    stats = flat[pos:pos + 4]
                    pos += 4
                else:
                    stats = [int(flat[pos]), int(flat[pos + 1]), None, None]
                    pos += 2
                host = None
                if need_data and not t.is_meta:
                    host = t.detach().to("cpu").contiguous()
                out.append((stats, host))
            return out


def register():
    _numprobe.register_torch(torch.Tensor, torch.Size, DTYPE_MAP, fallback, device_batch)
