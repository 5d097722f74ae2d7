"""The APIs the replay may call: exactly those numprobe's capture wraps (pytorch/_api_list.py),
bound here, once, to their torch callables. A dump names an API only as a key into this table:
no name read from a dump ever reaches getattr or an import, so a dump cannot make the replay run
anything else. Names a dump holds that are not in the table are skipped with a warning.

Some wrapped APIs are not replayed: communication (needs the other ranks), random samplers whose
output depends on the generator state (dropout is the exception: msprobe judges it by its share of
zeros), and bookkeeping calls whose result is no computation (to, numpy, stride, __setitem__).
"""
import torch
import torch.nn.functional as F

from ..pytorch import _api_list

# msprobe's prefixes and the objects the capture wraps under them.
_OWNERS = {"Functional": F, "Torch": torch, "Tensor": torch.Tensor}

# Wrapped, but no computation to check, or not reproducible from recorded inputs.
NOT_REPLAYED = frozenset("""to numpy stride __setitem__ rrelu rrelu_ gumbel_softmax
fractional_max_pool2d fractional_max_pool3d""".split())
# Random masks: compared by their share of zeros (msprobe's dropout rule).
DROPOUT = frozenset("""dropout dropout1d dropout2d dropout3d alpha_dropout feature_alpha_dropout
feature_dropout""".split())
# msprobe's acc_check skips these prefixes (no single-process replay).
UNSUPPORTED_PREFIXES = frozenset({"Distributed", "MindSpeed", "NPU", "Aten", "VF", "Module"})


def _build():
    table = {}
    for prefix, owner in _OWNERS.items():
        for name in _api_list.API_NAMES[prefix]:
            if name in NOT_REPLAYED:
                continue
            fn = getattr(owner, name, None)  # name from the fixed list above, never from a dump
            fn = getattr(fn, "_numprobe_original", fn)  # the unwrapped API while capture runs
            if fn is not None and callable(fn) and not isinstance(fn, type):
                table[(prefix, name)] = fn
    return table


_TABLE = _build()


def lookup(prefix, name):
    """The callable of API `prefix`.`name`, or None when it is not in the allow-list."""
    return _TABLE.get((prefix, name))


def allowed():
    """The (prefix, name) pairs the replay may run."""
    return sorted(_TABLE)
