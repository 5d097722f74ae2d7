"""The model of the pre-check tests: faithful float32 ops plus two custom ops registered for
capture, one faithful and one that silently computes in float16 (a kernel whose float32 path uses
half precision). Imported by the capture script and by the tests."""
import types

import torch
import torch.nn as nn
import torch.nn.functional as F


def faithful_center(x):
    """x minus its row mean, in x's dtype."""
    return x - x.mean(dim=-1, keepdim=True)


def imprecise_center(x):
    """The same, but a float32 input is computed in float16 (its values around 1000 keep a
    resolution of 0.5 there)."""
    if x.dtype == torch.float32:
        h = x.to(torch.float16)
        return (h - h.mean(dim=-1, keepdim=True)).to(x.dtype)
    return faithful_center(x)


# The namespace the model calls through, so that register_custom_api can wrap its functions.
ops = types.SimpleNamespace(faithful_center=faithful_center, imprecise_center=imprecise_center)
CUSTOM_APIS = {"Custom.faithful_center": faithful_center,
               "Custom.imprecise_center": imprecise_center}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x):
        h = self.fc1(x) + 1000.0
        a = ops.faithful_center(h)
        b = ops.imprecise_center(h)
        return self.fc2(F.gelu(a) * b)


def batch():
    torch.manual_seed(1)
    return torch.randn(4, 16)
