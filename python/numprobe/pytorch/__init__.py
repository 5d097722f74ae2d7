"""numprobe's PyTorch layer, with msprobe's API: PrecisionDebugger and seed_all."""
from .debugger import PrecisionDebugger, seed_all

__all__ = ["PrecisionDebugger", "seed_all"]
