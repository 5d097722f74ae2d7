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
        raise _numprobe.UnsupportedError(f"numprobe has no dtype for {dtype}") from None


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


# async_dump: pending statistics are fetched at the latest after this many tensors (bounded
# device memory: 4 values each), and pending host copies (md5, tensor files) once they hold this
# many bytes of pinned memory.
MAX_PENDING_SLOTS = 1 << 16
MAX_PENDING_HOST_BYTES = 1 << 30


def _reduce(tensors):
    """Stacked statistics of each tensor on its device (no transfer): [(part or None, kind)]."""
    out = []
    for t in tensors:
        t = t.detach()
        if t.is_meta or t.numel() == 0 or t.dtype in _FLOAT8:
            out.append((None, "null"))
        elif t.is_complex():
            a = t.abs()
            out.append((torch.stack([a.max(), a.min(), a.mean()]).to(torch.float64), "complex"))
        elif t.dtype == torch.bool:
            out.append((torch.stack([t.any(), t.all()]).to(torch.float64),
                        "bool0" if t.dim() == 0 else "bool"))
        elif t.dim() == 0:
            out.append((t.reshape(1).to(torch.float64),
                        "scalar_float" if t.is_floating_point() else "scalar_int"))
        elif t.is_floating_point():
            out.append((torch.stack([t.max(), t.min(), t.mean(), t.norm()]).to(torch.float64),
                        "float"))
        else:
            out.append((torch.stack([t.max(), t.min()]).to(torch.float64), "int"))
    return out


_WIDTH = {"null": 0, "complex": 3, "bool": 2, "bool0": 2, "scalar_float": 1, "scalar_int": 1,
          "float": 4, "int": 2}


def _decode(flat, kinds):
    """Reads [max, min, mean, norm] per kind from the fetched values, as msprobe writes them."""
    out, pos = [], 0
    for kind in kinds:
        v = flat[pos:pos + _WIDTH[kind]]
        pos += _WIDTH[kind]
        if kind == "null":
            stats = [None] * 4
        elif kind == "complex":
            stats = v + [None]
        elif kind == "bool":
            stats = [bool(v[0]), bool(v[1]), None, None]
        elif kind == "bool0":
            stats = [bool(v[0])] * 4
        elif kind == "scalar_float":
            stats = [v[0]] * 4
        elif kind == "scalar_int":
            stats = [int(v[0])] * 4
        elif kind == "float":
            stats = v
        else:
            stats = [int(v[0]), int(v[1]), None, None]
        out.append(stats)
    return out


def _copy_stream(rt, device):
    """The stream async_dump copies `device`'s tensors to the host on, one per device, so that
    the copies overlap the compute stream's next kernels instead of waiting for them."""
    stream = rt.copy_streams.get(device)
    if stream is None:
        stream = rt.copy_streams[device] = torch.cuda.Stream(device=device)
    return stream


def _host_copy_later(rt, t):
    """async_dump: a host copy of device tensor `t` started on the copy stream (pinned memory),
    complete once flush() has synchronised that stream."""
    t = t.detach()
    if t.device.type != "cuda":  # the forced device path of the tests: a plain copy
        return t.to("cpu", copy=True).contiguous()
    stream = _copy_stream(rt, t.device)
    stream.wait_stream(torch.cuda.current_stream(t.device))  # `t` as the op left it
    with torch.cuda.stream(stream):
        host = torch.empty(t.shape, dtype=t.dtype, pin_memory=True)
        host.copy_(t, non_blocking=True)
    t.record_stream(stream)  # its memory is not reused before the copy has read it
    return host


def device_batch(tensors, need_data):
    """Statistics of `tensors` reduced on their device in one stacked computation per call and
    fetched with a single transfer; msprobe's rules (dtype precision, bool any/all, 0-d, empty,
    fp8 -> null). Returns [(stats, host_copy_or_None)]. With async_dump the values stay on the
    device: stats is then a slot number that flush() resolves, and the host copies that md5 and
    tensor files need (need_data) are made on a copy stream and handed over then too. The caller
    asks for data only for entries that use it (C++ Dumper::NeedsData: md5, tensor files)."""
    rt = _runtime()
    with _Inner(_runtime):
        with torch.no_grad():
            reduced = _reduce(tensors)
            parts = [p for p, _ in reduced if p is not None]
            if rt is not None and rt.async_stats:
                if (len(rt.pending_kinds) >= MAX_PENDING_SLOTS
                        or rt.pending_host_bytes >= MAX_PENDING_HOST_BYTES):
                    flush(rt)
                out = []
                if parts:
                    rt.pending_parts.append(torch.cat(parts))
                for t, (part, kind) in zip(tensors, reduced):
                    if part is None and not need_data:
                        out.append(([None] * 4, None))
                        continue
                    host = None
                    if need_data and not t.is_meta:
                        host = _host_copy_later(rt, t)
                        rt.pending_host_bytes += host.numel() * host.element_size()
                        rt.host_copies += 1
                    out.append((len(rt.pending_kinds), None))
                    rt.pending_kinds.append(kind if part is not None else "null")
                    rt.pending_hosts.append(host)
                return out
            flat = torch.cat(parts).cpu().tolist() if parts else []
            if rt is not None and parts:
                rt.device_transfers += 1
            out = []
            for t, stats in zip(tensors, _decode(flat, [k for _, k in reduced])):
                host = None
                if need_data and not t.is_meta:
                    host = t.detach().to("cpu").contiguous()
                    if rt is not None:
                        rt.host_copies += 1
                out.append((stats, host))
            return out


def flush(rt):
    """async_dump: fetches every pending statistic in one transfer, waits for the pending host
    copies, and hands both to the dumper, which then writes their files and md5s and journals the
    waiting records in order."""
    if not rt.pending_kinds:
        return
    with _Inner(lambda: rt):
        with torch.no_grad():
            flat = torch.cat(rt.pending_parts).cpu().tolist() if rt.pending_parts else []
    for stream in rt.copy_streams.values():
        stream.synchronize()
    if rt.pending_parts:
        rt.device_transfers += 1
    kinds, hosts = rt.pending_kinds, rt.pending_hosts
    rt.pending_parts, rt.pending_kinds, rt.pending_hosts = [], [], []
    rt.pending_host_bytes = 0
    data = hosts if any(h is not None for h in hosts) else None
    rt.dumper.resolve_pending(_decode(flat, kinds), data)


def register():
    # The C type's own stride and data_ptr: torch.Tensor.stride is a wrapped API at L1.
    base = getattr(torch._C, "TensorBase", None) or torch._C._TensorBase
    _numprobe.register_torch(torch.Tensor, torch.Size, DTYPE_MAP, fallback, device_batch,
                             stride=base.stride, data_ptr=base.data_ptr)
