#!/usr/bin/env python3
"""Golden .pt files written by real torch.save (Debian's torch 1.13.1), for torch_pt_golden_test.

For every file FILE it writes FILE.raw, the bytes of each tensor it holds (C order, as
tensor.contiguous() holds them; bf16 through .view(torch.int16)), and expected.json lists per
file the tensors in the order numprobe must return them: name (nested containers flattened with
dots, as numprobe names them), dtype, shape, device and the byte range in FILE.raw.

Only objects made here are pickled; nothing is ever unpickled except by torch.load of these very
files (to check that names and values are what the file really holds). Deterministic: fixed
seeds, no timestamps.
"""
import argparse
import collections
import json
import os

import torch
from torch import nn


class Net(nn.Module):
    """A small CNN; pickled whole (torch.save(model)) for numprobe's inert mode."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Sequential(nn.Flatten(), nn.Linear(4 * 6 * 6, 10))

    def forward(self, x):
        return self.fc(torch.relu(self.bn(self.conv1(x))))


def key_text(key):
    if isinstance(key, str):
        return key
    if isinstance(key, tuple):
        inner = ", ".join(repr(k) for k in key)
        return "(" + inner + (",)" if len(key) == 1 else ")")
    return repr(key)


def flatten(obj, prefix, out):
    """Tensors in obj, named as numprobe names them."""
    join = (lambda p: prefix + "." + p) if prefix else (lambda p: p)
    if isinstance(obj, torch.Tensor):
        out.append((prefix, obj))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            flatten(v, join(key_text(k)), out)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            flatten(v, join(str(i)), out)


def raw_bytes(t):
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().tobytes()
    return t.numpy().tobytes()


def every_dtype():
    g = torch.Generator().manual_seed(3)
    base = torch.randn(2, 3, generator=g, dtype=torch.float64) * 100
    out = collections.OrderedDict()
    for dt in [torch.float64, torch.float32, torch.float16, torch.bfloat16]:
        out[str(dt)[6:]] = base.to(dt)
    out["float32_special"] = torch.tensor([float("inf"), float("-inf"), float("nan"), -0.0, 1e-45])
    for dt in [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]:
        out[str(dt)[6:]] = torch.tensor([[0, 1, -2], [100, -128, 127]]).to(dt)
    out["int64_extremes"] = torch.tensor([-(2**63), 2**63 - 1, 2**40])
    out["bool"] = torch.tensor([[True, False, True], [False, False, True]])
    out["complex64"] = torch.complex(base.float(), -base.float())
    out["complex128"] = torch.complex(base, base * 2)
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    out_dir = p.parse_args().out
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    files = []

    def save(name, obj, inert=False, strict_error=None, expect=None, **kwargs):
        path = os.path.join(out_dir, name)
        torch.save(obj, path, **kwargs)
        # What the file holds, as torch itself loads it (our own file, just written).
        loaded = torch.load(path)
        tensors = []
        flatten(expect(loaded) if expect else loaded, "", tensors)
        entry = {"file": name, "inert": inert, "tensors": []}
        if strict_error:
            entry["strict_error"] = strict_error
        with open(path + ".raw", "wb") as raw:
            offset = 0
            for tname, t in tensors:
                data = raw_bytes(t)
                raw.write(data)
                entry["tensors"].append({
                    "name": tname, "dtype": str(t.dtype)[6:], "shape": list(t.shape),
                    "device": str(t.device), "offset": offset, "nbytes": len(data)})
                offset += len(data)
        files.append(entry)

    net = Net()
    with torch.no_grad():
        net.bn.running_mean.uniform_(-1, 1)
        net.bn.running_var.uniform_(0.5, 2)
    save("cnn.pt", net.state_dict())
    save("cnn_proto4.pt", net.state_dict(), pickle_protocol=4)
    save("cnn_proto5.pt", net.state_dict(), pickle_protocol=5)

    layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0)
    save("transformer.pt", layer.state_dict())

    # Optimizers after one step: SGD keeps momentum buffers, Adam a step tensor and two moments.
    for opt_name, make in [("sgd", lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9)),
                           ("adam", lambda ps: torch.optim.Adam(ps, lr=1e-3))]:
        model = nn.Linear(4, 3)
        opt = make(model.parameters())
        model(torch.randn(5, 4)).pow(2).sum().backward()
        opt.step()
        save(f"{opt_name}.pt", {"model": model.state_dict(), "optimizer": opt.state_dict()})

    t = [torch.randn(2, 2) for _ in range(4)]
    save("nested.pt", {"a": [(t[0], t[1]), (t[2],)], "b": {"c": t[3], 1: torch.arange(3),
                                                        (2, "x"): torch.ones(1)},
                       "n": 5, "s": "text"})

    base = torch.arange(12, dtype=torch.float32)
    save("shared.pt", {"base": base, "view": base[2:8].view(2, 3), "again": base})

    m = torch.arange(20, dtype=torch.int32).reshape(4, 5)
    save("views.pt", {"transposed": m.t(), "sliced": m[1:, ::2], "column": m[:, 1],
                      "expanded": torch.arange(3.0).expand(4, 3)})

    save("parameter.pt", nn.Parameter(torch.randn(3, 2)))
    save("dtypes.pt", every_dtype())
    save("bf16.pt", torch.tensor([1.0, -2.5, float("inf"), float("nan"), -0.0, 1e-40, 3e38],
                                 dtype=torch.bfloat16))
    save("misc.pt", {"scalar": torch.tensor(3.5), "int_scalar": torch.tensor(7),
                     "empty": torch.zeros(0, 3), "list": [torch.tensor([1, 2])]})

    legacy = every_dtype()
    legacy["shared_view"] = legacy["float32"][1]
    save("legacy.pt", legacy, _use_new_zipfile_serialization=False)
    save("legacy_proto4.pt", {"w": torch.randn(3, 3), "b": torch.ones(3, dtype=torch.int64)},
         _use_new_zipfile_serialization=False, pickle_protocol=4)

    # Whole modules: only inert mode reads them; the names are those of state_dict().
    save("model.pt", Net(), inert=True, strict_error="global '__main__.Net' is not allowed",
         expect=lambda m: m.state_dict())
    save("legacy_model.pt", Net(), inert=True, strict_error="is not allowed",
         expect=lambda m: m.state_dict(), _use_new_zipfile_serialization=False)

    with open(os.path.join(out_dir, "expected.json"), "w") as f:
        json.dump({"torch_version": torch.__version__, "files": files}, f, indent=1)


if __name__ == "__main__":
    main()
