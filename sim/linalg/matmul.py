"""What a matrix product costs (2mnk floating-point operations) and how long it takes on this machine's CPU."""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import torch

ARTICLE_N = 4096  # the article's m = n = k
SIZES = (256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536)
MAX_BYTES = 4 * 2**30  # the most the three float32 matrices of one timing may take, whatever memory is free
_LOCK = threading.Lock()  # one timing at a time: two at once would share the cores and both be wrong


def flops(m: int, n: int, k: int) -> int:
    """m·n dot products of length k: k multiplications and k − 1 additions each, about 2mnk."""
    return 2 * m * n * k


def exact_flops(m: int, n: int, k: int) -> int:
    return m * n * (2 * k - 1)


def matrix_bytes(n: int, dtype_bytes: int = 4) -> int:
    """A (n×n), B (n×n) and C (n×n)."""
    return 3 * n * n * dtype_bytes


def available_bytes() -> int | None:
    """MemAvailable from /proc/meminfo (Linux), or None where it cannot be read."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


class TooLarge(Exception):
    def __init__(self, need: int, limit: int):
        super().__init__(f"needs {need} bytes, limit {limit}")
        self.need, self.limit = need, limit


def check_size(n: int) -> None:
    """Refuse a size whose matrices would not fit: at most MAX_BYTES, and at most half the free memory."""
    need, free = matrix_bytes(n), available_bytes()
    limit = MAX_BYTES if free is None else min(MAX_BYTES, free // 2)
    if need > limit:
        raise TooLarge(need, limit)


@dataclass(frozen=True)
class Timing:
    n: int
    threads: int
    seconds: float  # CPU: the fastest of the runs after a warm-up; CUDA: the median, by CUDA events
    gflops: float  # 2n³ / seconds / 1e9
    device: str = "cpu"  # "cpu", or the CUDA device's name (then bf16 and threads = 0)


def time_matmul(n: int, threads: int, repeats: int = 2) -> Timing:
    """C = A @ B in float32 on the CPU with `threads` threads (torch.set_num_threads, restored afterwards)."""
    check_size(n)
    with _LOCK:
        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            g = torch.Generator().manual_seed(0)
            a, b = torch.randn(n, n, generator=g), torch.randn(n, n, generator=g)
            torch.mm(a[: min(n, 512), : min(n, 512)], b[: min(n, 512), : min(n, 512)])  # warm-up: threads, kernels
            best = float("inf")
            for _ in range(repeats):
                start = time.perf_counter()
                torch.mm(a, b)
                best = min(best, time.perf_counter() - start)
        finally:
            torch.set_num_threads(before)
    return Timing(n, threads, best, flops(n, n, n) / best / 1e9)


def cuda_available() -> bool:
    return torch.cuda.is_available()


def time_matmul_cuda(n: int, repeats: int = 5) -> Timing:
    """C = A @ B in bf16 on the CUDA device (the dtype of the published Tensor Core peaks): a warm-up, then the
    median of `repeats` runs timed by CUDA events. Refused (TooLarge) past half the device's free memory."""
    need = 3 * n * n * 2
    free, _ = torch.cuda.mem_get_info()
    if need > free // 2:
        raise TooLarge(need, free // 2)
    with _LOCK:
        g = torch.Generator(device="cuda").manual_seed(0)
        a = torch.randn(n, n, generator=g, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, n, generator=g, device="cuda", dtype=torch.bfloat16)
        torch.mm(a, b)
        torch.cuda.synchronize()
        times = []
        for _ in range(repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            torch.mm(a, b)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
        del a, b
        torch.cuda.empty_cache()
    seconds = sorted(times)[len(times) // 2]
    return Timing(n, 0, seconds, flops(n, n, n) / seconds / 1e9, torch.cuda.get_device_name())


def versus(peak_flops: float, measured_flops: float) -> tuple[str, float]:
    """How a published peak compares with a rate measured here: ("faster", peak ÷ measured) when the peak is higher,
    else ("slower", measured ÷ peak): the factor is always at least 1."""
    return ("faster", peak_flops / measured_flops) if peak_flops >= measured_flops else \
        ("slower", measured_flops / peak_flops)


def cpu_threads() -> int:
    """The cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
