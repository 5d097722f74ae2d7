#!/usr/bin/env python3
"""Writes the demo's sample tensor files with real numpy and torch (run with /usr/bin/python3):
a .npy, an .npz, a .safetensors (written by the spec: u64 header length, JSON, data), and a
torch.save checkpoint of a small CNN, with one activation that holds a NaN and an Inf."""
import json
import os
import struct
import sys

import numpy as np
import torch


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, arr in tensors.items():
        data = np.ascontiguousarray(arr).tobytes()
        header[name] = {"dtype": {"float32": "F32", "int64": "I64", "float16": "F16"}[arr.dtype.name],
                        "shape": list(arr.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "np", "source": "numprobe demo"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    np.save(os.path.join(out, "embedding.npy"), rng.standard_normal((64, 32)).astype(np.float32))
    act = rng.standard_normal((4, 16)).astype(np.float16)
    act[1, 3] = np.nan
    act[2, 5] = np.inf
    np.savez_compressed(os.path.join(out, "activations.npz"), hidden=act,
                        mask=rng.integers(0, 2, (4, 16)).astype(bool))
    write_safetensors(os.path.join(out, "head.safetensors"),
                      {"head.weight": rng.standard_normal((10, 32)).astype(np.float32),
                       "head.bias": np.zeros(10, np.float32),
                       "steps": np.array([1, 2, 3], np.int64)})
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                              torch.nn.Linear(144, 10)).to(torch.bfloat16)
    torch.save(net.state_dict(), os.path.join(out, "cnn_bf16.pt"))


if __name__ == "__main__":
    main()
