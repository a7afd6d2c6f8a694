"""Device detection: what the device banner shows (CPU, or the CUDA device's name, SMs, L2, memory)."""
from __future__ import annotations

import os
import platform
from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceInfo:
    kind: str  # "cuda" or "cpu"
    name: str  # e.g. "NVIDIA H200" or the CPU model
    cores: int  # SMs on CUDA, logical cores on CPU
    l2_bytes: int | None  # L2 cache size (CUDA only)
    memory_bytes: int | None  # device memory (CUDA) or system memory (CPU)
    torch_version: str


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _system_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def device_info() -> DeviceInfo:
    """Describe the device torch computes on. Imports torch (seconds): call it after the first paint."""
    import torch

    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        return DeviceInfo("cuda", props.name, props.multi_processor_count,
                          getattr(props, "L2_cache_size", None), props.total_memory, torch.__version__)
    return DeviceInfo("cpu", _cpu_name(), os.cpu_count() or 1, None, _system_memory(), torch.__version__)
