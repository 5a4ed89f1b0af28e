"""The machine a benchmark ran on, printed beside every figure: numbers mean little without it."""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata
from pathlib import Path

PACKAGES = ("chromadb", "onnxruntime", "numpy", "tokenizers")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe() -> dict[str, str | int | float]:
    """CPU model, usable cores, OS, Python and the versions of the packages on the measured path."""
    info: dict[str, str | int | float] = {
        "cpu": cpu_model(),
        "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 0,
        "os": f"{platform.system()} {platform.release()}",
        "python": sys.version.split()[0],
        # Other work on the machine skews timings: the 1-minute load average says how busy it was.
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }
    for name in PACKAGES:
        try:
            info[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            info[name] = "not installed"
    return info


def line() -> str:
    return ", ".join(f"{k} {v}" for k, v in describe().items())


def own_peak_mb(pid: int | str = "self") -> float | None:
    """The peak resident memory of process ``pid`` itself, in MB: ``VmHWM``, the high-water mark of its own address
    space, which starts anew at its ``exec``. Not ``ru_maxrss``: Linux carries the parent's high-water mark into a child
    across ``fork`` and ``exec``, so a small child of a large parent reports the parent's size (an import run by
    ``bench/scaling.py``, whose process held 1.8 GB, reported 1,813 MB at every size). None where there is no /proc."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return None
