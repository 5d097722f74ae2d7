#!/usr/bin/env python3
"""Golden inputs of `numprobe diff` and the figures it must report, computed here with numpy.

A small PyTorch model (Conv1d, Conv2d, BatchNorm2d, LayerNorm, GroupNorm, Embedding, PReLU, Linear)
is built with a fixed seed and its state_dict written by real torch.save. The same weights are
converted the way TroubleShooter's convert_weight does: a MindSpore .ckpt (protobuf bytes written
here by the checkpoint.proto layout) with MindSpore names (BatchNorm weight/bias/running_mean/
running_var -> gamma/beta/moving_mean/moving_variance, LayerNorm/GroupNorm -> gamma/beta,
Embedding weight -> embedding_table, PReLU weight -> a, Conv1d weight expanded to 4-d with a unit
dim, num_batches_tracked dropped), plus a .safetensors (written by the spec with struct/json: the
package is not installed) and a .npz with PyTorch names.

Files (written into --out):
  model.pt model.ckpt model.safetensors model.npz   the same weights
  perturbed.safetensors   model.safetensors with lin.weight[2, 3] += 0.01 and lin.weight[0, 0]
                          += 1e-6 (inside the default tolerance)
  renamed.npz             model.npz with lin.bias renamed to linear.bias and ln.bias left out
  map.json                {"lin.bias": "linear.bias"}
  map_ts.json             the same in TroubleShooter's list form, with one value transform
  grads_a/ grads_b/       unnamed gradients as .npy files named differently on each side; B has
                          one extra tensor (shape [7]) inserted in the middle
  dump_a/ dump_b/         msprobe-like dump trees: step0/rank0/dump_tensor_data/*.npy
  truncated.safetensors   a header length larger than the file (bad input)
  expected.json           the figures of the perturbed pair (A = perturbed, B = model), the pairs
                          expected from shape alignment, and the tensor names of each file
"""
import argparse
import json
import os
import struct

import numpy as np
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 16)
        self.conv1d = torch.nn.Conv1d(4, 8, 3)
        self.conv2d = torch.nn.Conv2d(3, 4, 3)
        self.bn = torch.nn.BatchNorm2d(4)
        self.ln = torch.nn.LayerNorm(16)
        self.gn = torch.nn.GroupNorm(2, 8)
        self.act = torch.nn.PReLU()
        self.lin = torch.nn.Linear(16, 5)


MS_DTYPE = {np.dtype("float32"): "Float32", np.dtype("float16"): "Float16",
            np.dtype("int64"): "Int64", np.dtype("int32"): "Int32"}
ST_DTYPE = {np.dtype("float32"): "F32", np.dtype("float16"): "F16", np.dtype("int64"): "I64"}


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, wire, payload):
    key = varint((num << 3) | wire)
    if wire == 2:
        return key + varint(len(payload)) + payload
    return key + payload


def write_ckpt(path, tensors):
    """checkpoint.proto: Checkpoint{repeated Value value=1}; Value{tag=1, TensorProto tensor=2};
    TensorProto{repeated int64 dims=1 (unpacked, as proto2 writes it), tensor_type=2,
    tensor_content=3}."""
    out = bytearray()
    for name, arr in tensors:
        dims = b"".join(field(1, 0, varint(d)) for d in arr.shape) if arr.ndim else field(1, 0, varint(0))
        proto = dims + field(2, 2, MS_DTYPE[arr.dtype].encode()) + field(3, 2, arr.tobytes())
        value = field(1, 2, name.encode()) + field(2, 2, proto)
        out += field(1, 2, value)
    with open(path, "wb") as f:
        f.write(out)


def write_safetensors(path, tensors):
    header = {}
    offset = 0
    blobs = []
    for name, arr in tensors:
        data = np.ascontiguousarray(arr).tobytes()
        header[name] = {"dtype": ST_DTYPE[arr.dtype], "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def ms_name(name):
    """TroubleShooter's weight_mapping_lib rules for this model."""
    module, leaf = name.rsplit(".", 1)
    if module in ("bn",):
        return module + "." + {"weight": "gamma", "bias": "beta", "running_mean": "moving_mean",
                               "running_var": "moving_variance"}[leaf]
    if module in ("ln", "gn"):
        return module + "." + {"weight": "gamma", "bias": "beta"}[leaf]
    if module == "emb":
        return "emb.embedding_table"
    if module == "act":
        return "act.a"
    return name


def ulp_ordinal_f32(x):
    bits = x.astype(np.float32).view(np.int32).astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)


def figures(a, b, rtol=1e-4, atol=1e-4):
    a64 = a.astype(np.float64).ravel()
    b64 = b.astype(np.float64).ravel()
    d = np.abs(a64 - b64)
    rel32 = np.abs((a.astype(np.float32) - b.astype(np.float32)) / b.astype(np.float32))
    return {
        "allclose_ratio": float(np.isclose(a64, b64, rtol=rtol, atol=atol).mean()),
        "close": int(np.isclose(a64, b64, rtol=rtol, atol=atol).sum()),
        "cosine": float(a64 @ b64 / (np.linalg.norm(a64) * np.linalg.norm(b64))),
        "mean_abs_diff": float(d.mean()),
        "max_abs_diff": float(d.max()),
        "worst_index": int(d.argmax()),
        "max_rel_err": float(rel32.max()),
        "rmse": float(np.sqrt(np.mean(d * d))),
        "max_ulp": int(np.abs(ulp_ordinal_f32(a) - ulp_ordinal_f32(b)).max()),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    out = p.parse_args().out
    torch.manual_seed(7)
    net = Net()
    with torch.no_grad():  # non-trivial BatchNorm statistics
        net.bn.running_mean.copy_(torch.randn(4))
        net.bn.running_var.copy_(torch.rand(4) + 0.5)
        net.bn.num_batches_tracked.fill_(3)
        net.act.weight.fill_(0.2)
    sd = net.state_dict()
    torch.save(sd, os.path.join(out, "model.pt"))
    arrays = [(k, v.numpy()) for k, v in sd.items()]
    float_arrays = [(k, v) for k, v in arrays if not k.endswith("num_batches_tracked")]

    ckpt = []
    for k, v in float_arrays:
        if k == "conv1d.weight":
            v = np.expand_dims(v, 2)  # MindSpore's Conv1d weight: (out, in, 1, k)
        ckpt.append((ms_name(k), v))
    write_ckpt(os.path.join(out, "model.ckpt"), ckpt)
    write_safetensors(os.path.join(out, "model.safetensors"), arrays)
    np.savez(os.path.join(out, "model.npz"), **dict(arrays))

    lin = sd["lin.weight"].numpy().copy()
    lin[2, 3] += np.float32(0.01)
    lin[0, 0] += np.float32(1e-6)
    perturbed = [(k, lin if k == "lin.weight" else v) for k, v in arrays]
    write_safetensors(os.path.join(out, "perturbed.safetensors"), perturbed)

    renamed = {("linear.bias" if k == "lin.bias" else k): v for k, v in arrays if k != "ln.bias"}
    np.savez(os.path.join(out, "renamed.npz"), **renamed)
    with open(os.path.join(out, "map.json"), "w") as f:
        json.dump({"lin.bias": "linear.bias"}, f)
    with open(os.path.join(out, "map_ts.json"), "w") as f:
        json.dump([{"lin.bias": "linear.bias", "lin.weight": "lin.weight"},
                   {"conv1d.weight": "troubleshooter.migrator.mapping.expand_dims"}], f)

    rng = np.random.default_rng(3)
    shapes = [(16, 4), (16,), (8, 16), (8,), (3, 3)]
    grads = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    os.makedirs(os.path.join(out, "grads_a"), exist_ok=True)
    os.makedirs(os.path.join(out, "grads_b"), exist_ok=True)
    for i, g in enumerate(grads):
        np.save(os.path.join(out, "grads_a", f"grad_{i}.npy"), g)
    b_list = grads[:2] + [rng.standard_normal(7).astype(np.float32)] + grads[2:]
    for i, g in enumerate(b_list):  # numbered past 9: natural order must keep 10 after 9
        np.save(os.path.join(out, "grads_b", f"ms_{i + 8}_backward.npy"), g)
    aligned = [[f"grad_{i}", f"ms_{(i if i < 2 else i + 1) + 8}_backward"] for i in range(5)]

    dump_names = ["Functional.conv2d.0.forward.output.0", "Torch.add.1.forward.output.0"]
    for side in ("dump_a", "dump_b"):
        d = os.path.join(out, side, "step0", "rank0", "dump_tensor_data")
        os.makedirs(d, exist_ok=True)
        for i, n in enumerate(dump_names):
            np.save(os.path.join(d, n + ".npy"), grads[i])
        with open(os.path.join(out, side, "step0", "rank0", "dump.json"), "w") as f:
            json.dump({"task": "tensor", "level": "L1", "dump_data_dir": d, "data": {}}, f)

    with open(os.path.join(out, "truncated.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", 4096) + b'{"a":')

    expected = {
        "torch_names": [k for k, _ in arrays],
        "ckpt_names": [k for k, _ in ckpt],
        "perturbed": {"name": "lin.weight", **figures(lin, sd["lin.weight"].numpy())},
        "aligned": aligned,
        "extra_b_grad": "ms_10_backward",
        "dump_names": ["step0/rank0/" + n for n in dump_names],
    }
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)


if __name__ == "__main__":
    main()
