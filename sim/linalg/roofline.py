"""CPU against GPU, measured: matrix-product throughput against size on this CPU (1 thread and all threads), the
arithmetic intensity (FLOPs per byte moved) of a matrix product and of an element-wise addition, and the roofline
built from two measured roofs, the compute peak (the fastest product timed) and the memory bandwidth (the fastest
large copy or addition timed).

Bytes are the least traffic each operation needs: every input read once and the output written once."""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from sim.linalg.matmul import _LOCK, cpu_threads, flops

SWEEP_SIZES = (64, 128, 256, 512, 1024, 2048)  # square sizes n of the sweep (n×n times n×n)
STREAM_ELEMENTS = 2**24  # float32 elements per array of the bandwidth and addition timings (64 MiB each)
FLOAT32 = 4
MIN_BATCH_S = 0.02  # a timed batch repeats the operation until it lasts at least this long
BUDGET_S = 0.5  # no further batch of one timing starts after this long
Progress = Callable[[int, int, str], None]  # (steps done, steps in all, what is being timed)
# The H100 SXM's two kinds of arithmetic unit (NVIDIA H100 datasheet and architecture whitepaper): 132 SMs, each with
# 128 FP32 CUDA cores and 4 Tensor Cores. The CUDA cores' FP32 peak is 67 TFLOP/s (16,896 cores × 2 FLOPs a fused
# multiply-add × 1.98 GHz boost); bf16 matrix products run on the Tensor Cores, whose dense peak is the 989.5 TFLOP/s
# of sim.gpu.memsim.GPUS.
H100_CUDA_CORES = 16_896  # the article's figure
H100_TENSOR_CORES = 528
H100_FP32_FLOPS = 67e12


# ---------- counts from the sizes ----------
def matmul_bytes(n: int, dtype_bytes: int = FLOAT32) -> int:
    """n×n times n×n: A and B read once, C written once."""
    return 3 * n * n * dtype_bytes


def add_flops(elements: int) -> int:
    """c = a + b: one addition per element."""
    return elements


def add_bytes(elements: int, dtype_bytes: int = FLOAT32) -> int:
    """c = a + b: a and b read, c written."""
    return 3 * elements * dtype_bytes


def copy_bytes(elements: int, dtype_bytes: int = FLOAT32) -> int:
    """dst ← src: src read, dst written."""
    return 2 * elements * dtype_bytes


def intensity(flop_count: float, byte_count: float) -> float:
    """Arithmetic intensity: floating-point operations per byte moved."""
    return flop_count / byte_count


def matmul_intensity(n: int, dtype_bytes: int = FLOAT32) -> float:
    """2n³ / (3n²·bytes) = n / (1.5·bytes): grows with n, every number read is used n times."""
    return intensity(flops(n, n, n), matmul_bytes(n, dtype_bytes))


def add_intensity(dtype_bytes: int = FLOAT32) -> float:
    """1 / (3·bytes), whatever the size: every number read is used once."""
    return intensity(add_flops(1), add_bytes(1, dtype_bytes))


def attainable(op_intensity: float, peak_flops: float, bytes_per_s: float) -> float:
    """The roofline: an operation cannot go faster than the compute peak, nor than the bytes it needs can arrive."""
    return min(peak_flops, op_intensity * bytes_per_s)


def ridge(peak_flops: float, bytes_per_s: float) -> float:
    """The intensity where the two roofs meet: below it an operation waits for memory, above it for arithmetic."""
    return peak_flops / bytes_per_s


def bound(op_intensity: float, ridge_intensity: float) -> str:
    """Which roof limits an operation: "compute" at or right of the ridge (it waits for arithmetic), else "memory"."""
    return "compute" if op_intensity >= ridge_intensity else "memory"


def roof_curve(peak_flops: float, bytes_per_s: float, lo: float = 0.01, hi: float = 1000.0,
               points: int = 61) -> tuple[list[float], list[float]]:
    """The roof drawn from intensity lo to hi (geometric steps, the ridge included): (intensities, attainable)."""
    xs = sorted({lo * (hi / lo) ** (i / (points - 1)) for i in range(points)} | {ridge(peak_flops, bytes_per_s)})
    xs = [x for x in xs if lo <= x <= hi]
    return xs, [attainable(x, peak_flops, bytes_per_s) for x in xs]


# ---------- timings ----------
def best_seconds(f: Callable[[], object], batches: int = 3, min_batch_s: float = MIN_BATCH_S,
                 budget_s: float = BUDGET_S) -> float:
    """Seconds of one call of f: after a warm-up call, the fastest of up to `batches` batches, each repeating f until
    it lasts min_batch_s (so that a tiny product is not lost in the timer's resolution), divided by its repeats.
    Batches stop once budget_s has passed (one batch at least), so that a large size on a busy machine stays short;
    a warm-up call that alone lasts budget_s is the answer."""
    start = time.perf_counter()
    f()
    once = max(time.perf_counter() - start, 1e-9)
    if once >= budget_s:
        return once  # one call already took the whole budget: a warm-up is a small part of so long a call
    repeats = max(1, math.ceil(min_batch_s / once))
    best, begun = math.inf, time.perf_counter()
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(repeats):
            f()
        best = min(best, (time.perf_counter() - start) / repeats)
        if time.perf_counter() - begun >= budget_s:
            break
    return best


@dataclass(frozen=True)
class Point:
    """One timed operation: its size, threads, FLOPs and bytes (from the size), and the seconds it took."""

    op: str  # "matmul", "add" or "copy"
    n: int  # matmul: the side n; add/copy: elements per array
    threads: int
    flops: int
    bytes: int
    seconds: float

    @property
    def flops_per_s(self) -> float:
        return self.flops / self.seconds

    @property
    def bytes_per_s(self) -> float:
        return self.bytes / self.seconds

    @property
    def intensity(self) -> float:
        return intensity(self.flops, self.bytes)


def _with_threads(threads: int, f: Callable[[], float]) -> float:
    with _LOCK:
        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            return f()
        finally:
            torch.set_num_threads(before)


def time_matmul_point(n: int, threads: int, batches: int = 3, min_batch_s: float = MIN_BATCH_S) -> Point:
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(n, n, generator=g), torch.randn(n, n, generator=g)
    c = torch.zeros(n, n)  # touched: no first-write page faults in the timing
    seconds = _with_threads(threads, lambda: best_seconds(lambda: torch.mm(a, b, out=c), batches, min_batch_s))
    return Point("matmul", n, threads, flops(n, n, n), matmul_bytes(n), seconds)


def time_add_point(elements: int, threads: int, batches: int = 3, min_batch_s: float = MIN_BATCH_S) -> Point:
    a, b, c = torch.rand(elements), torch.rand(elements), torch.zeros(elements)
    seconds = _with_threads(threads, lambda: best_seconds(lambda: torch.add(a, b, out=c), batches, min_batch_s))
    return Point("add", elements, threads, add_flops(elements), add_bytes(elements), seconds)


def time_copy_point(elements: int, threads: int, batches: int = 3, min_batch_s: float = MIN_BATCH_S) -> Point:
    src, dst = torch.rand(elements), torch.zeros(elements)
    seconds = _with_threads(threads, lambda: best_seconds(lambda: dst.copy_(src), batches, min_batch_s))
    return Point("copy", elements, threads, 0, copy_bytes(elements), seconds)


@dataclass(frozen=True)
class Sweep:
    """What one sweep timed, and the roofline its two measured roofs make."""

    matmul: tuple[Point, ...]  # every size at every thread count, in the order timed
    add: tuple[Point, ...]  # the element-wise addition, at every thread count
    copy: tuple[Point, ...]  # the copy that measures the bandwidth, at every thread count
    threads: tuple[int, ...]
    seconds: float  # wall time of the whole sweep

    def matmul_at(self, threads: int) -> list[Point]:
        return sorted((p for p in self.matmul if p.threads == threads), key=lambda p: p.n)

    @property
    def all_threads(self) -> int:
        return max(self.threads)

    @property
    def peak_point(self) -> Point:
        """The compute roof: the fastest product timed (on a quiet machine, the largest with every thread; on a
        shared one, whichever ran when the cores were free)."""
        return max(self.matmul, key=lambda p: p.flops_per_s)

    @property
    def peak_flops(self) -> float:
        return self.peak_point.flops_per_s

    @property
    def bandwidth_point(self) -> Point:
        """The memory roof: the most bytes per second any large copy or addition moved."""
        return max(self.copy + self.add, key=lambda p: p.bytes_per_s)

    @property
    def bandwidth(self) -> float:
        return self.bandwidth_point.bytes_per_s

    @property
    def ridge(self) -> float:
        return ridge(self.peak_flops, self.bandwidth)

    def attainable(self, op_intensity: float) -> float:
        return attainable(op_intensity, self.peak_flops, self.bandwidth)


def thread_counts() -> tuple[int, ...]:
    """1 thread and every core this process may use (just (1,) on one core)."""
    return tuple(sorted({1, cpu_threads()}))


def run_sweep(sizes: Sequence[int] = SWEEP_SIZES, threads: Sequence[int] | None = None,
              elements: int = STREAM_ELEMENTS, progress: Progress | None = None, batches: int = 3,
              min_batch_s: float = MIN_BATCH_S) -> Sweep:
    """Times C = A @ B (float32) at every size and thread count, then a copy and an addition of `elements` float32
    numbers at every thread count. progress(done, total, label) is called before each timing and once at the end."""
    threads = tuple(threads) if threads else thread_counts()
    jobs = [("matmul", n, k) for k in threads for n in sizes] + [(op, elements, k) for k in threads
                                                                  for op in ("copy", "add")]
    timers = {"matmul": time_matmul_point, "add": time_add_point, "copy": time_copy_point}
    start, done = time.perf_counter(), []
    for i, (op, n, k) in enumerate(jobs):
        if progress:
            progress(i, len(jobs), f"{op} {n} · {k}")
        done.append(timers[op](n, k, batches, min_batch_s))
    if progress:
        progress(len(jobs), len(jobs), "")
    return Sweep(tuple(p for p in done if p.op == "matmul"), tuple(p for p in done if p.op == "add"),
                 tuple(p for p in done if p.op == "copy"), threads, time.perf_counter() - start)
