"""Run at interpreter start by numprobe-autostart.pth (installed packages only): when
NUMPROBE_CONFIG is set, an unmodified script is captured. Without it this costs one getenv."""
import os

if os.environ.get("NUMPROBE_CONFIG"):
    from numprobe.pytorch import _autostart

    _autostart.install(os.environ["NUMPROBE_CONFIG"])
