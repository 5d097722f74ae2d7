"""numprobe's PyTorch layer, with msprobe's API: PrecisionDebugger and seed_all."""
from .debugger import FirstDivergence, PrecisionDebugger, seed_all

__all__ = ["FirstDivergence", "PrecisionDebugger", "seed_all"]
