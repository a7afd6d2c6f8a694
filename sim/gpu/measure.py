"""Device detection (the device banner: CPU, or the CUDA device's name, SMs, L2, memory) and attention measurement."""
from __future__ import annotations

import ctypes
import ctypes.util
import gc
import math
import os
import platform
import statistics
import threading
import time
from dataclasses import dataclass, field, replace

from sim.gpu.calls import attention_call, make_inputs


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


# --- Measuring attention: time, peak memory, and (through ncu) the bytes each memory level moved ---

IMPLS = ("naive", "tiled_torch", "flash_triton", "sdpa_flash", "sdpa_math")
DTYPE_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4}
MEASURE_LOCK = threading.Lock()  # one measurement at a time on this server: users would disturb each other's timings
MATERIALISING = ("naive", "sdpa_math")  # implementations that hold N×N matrices
# the longest one click may hold MEASURE_LOCK (calibration, warm-up, repetitions, counters): the server is shared.
# A GPU's calls take milliseconds; nearly all of its minute goes to Nsight Compute's replays.
CLICK_LIMIT_S = {"cpu": 20.0, "cuda": 60.0}
NCU_MIN_S = 10.0  # ncu starts a Python with torch and replays every kernel: not started with less time than this left

# every code a Measurement's `error` may hold, with the params its message reads (sim.gpu.report checks uploaded
# reports against this, so the page never meets a code without its params)
ERROR_PARAMS = {
    "unavailable": ("reason",),
    "too_large": ("needed_bytes", "free_bytes"),  # and, for the N×N implementations, the arithmetic of memory_needed
    "out_of_memory": ("needed_bytes", "free_bytes"),
    "busy": (),
    # estimate = one call timed at cal_n, cal_bh (cal_ms) × factor (units at n over cal_units at cal_n) × calls
    "too_slow": ("seconds", "limit_s", "n", "bh", "cal_n", "cal_bh", "cal_ms", "work", "units", "cal_units", "factor",
                 "calls"),
    "over_time": ("first_call_s", "left_s", "limit_s"),  # the warm-up call showed the first repetition would not fit
}
ERROR_CODES = tuple(ERROR_PARAMS)
UNAVAILABLE_REASONS = ("forward_only", "flash_triton_needs_cuda", "sdpa_flash_needs_cuda", "sdpa_flash_needs_half")
WORK_KINDS = ("flops", "block_pairs")  # what a call's time is proportional to (see work_units)
# why a run has no counters (sim.gpu.ncu's reasons, this module's and the bench's), besides "failed: <detail>"
COUNTER_REASONS = ("not_requested", "no_cuda", "forward_only", "no_time", "quick", "no_ncu", "not_permitted",
                   "too_many_kernels")


@dataclass(frozen=True)
class Measurement:
    """One implementation measured at one size. A field is None when it was not measured; `error` says why not."""

    impl: str
    device: str  # the device's name
    config: dict  # B, H, N, d, dtype, causal and the kernel's block sizes
    time_ms: float | None  # median over repetitions, caches flushed between them (CUDA)
    peak_bytes: int | None  # memory beyond the inputs (the output included) at the peak: see memory_source
    flops: int  # 4·B·H·N²·d, halved with the causal mask, ×3.5 with the backward (FlashAttention's benchmarks)
    hbm_read_bytes: int | None  # from ncu: dram__bytes_read.sum over every kernel
    hbm_write_bytes: int | None  # dram__bytes_write.sum
    l2_bytes: int | None  # lts__t_bytes.sum: all traffic at L2
    l1_bytes: int | None  # l1tex__t_bytes.sum
    source: str  # e.g. "measured · CUDA events · NVIDIA H200" or "measured · CPU · <cpu>"
    counters_source: str | None = None  # e.g. "measured · counters (ncu, --cache-control all) · NVIDIA H200"
    counters_reason: str | None = None  # why there are no counters
    error: str | None = None  # nothing measured: one of ERROR_CODES
    error_params: dict = field(default_factory=dict)  # fills the translated message (the arithmetic, the reason)
    # how peak_bytes was measured: "measured · torch.cuda.max_memory_allocated · <device>" or
    # "measured · CPU (peak RSS) · <cpu>" (the process's resident-memory high-water mark: every thread counts)
    memory_source: str | None = None

    @property
    def tflops_per_s(self) -> float | None:
        return self.flops / self.time_ms / 1e9 if self.time_ms else None


def attention_flops(B: int, H: int, N: int, d: int, causal: bool, backward: bool = False) -> int:
    """4·B·H·N²·d (QKᵀ and PV, 2 FLOPs per multiply-add), halved with the causal mask; forward + backward counts
    3.5 times the forward (five matmuls in the backward, with S recomputed, against two), as FlashAttention's
    benchmarks count it.
    """
    flops = 4 * B * H * N * N * d
    flops = flops // 2 if causal else flops
    return flops * 7 // 2 if backward else flops


def memory_needed(impl: str, B: int, H: int, N: int, d: int, dtype: str, causal: bool,
                  backward: bool = False) -> dict:
    """Bytes one call allocates beyond its inputs, and the arithmetic behind it (for the refusal message).

    naive keeps S and P (two N×N matrices per (batch, head)) at once; PyTorch's math backend does too, in float32
    (it upcasts half precision by default). The others hold O(N): their output and blocks. With the backward,
    the materialising ones hold up to four (P saved by the forward, dP, dS and a temporary of the softmax's
    backward; about 3.1 to 3.5 measured on the CPU), and the gradients of q, k, v add three outputs' worth.
    """
    elem = DTYPE_BYTES[dtype]
    output = B * H * N * d * elem * (4 if backward else 1)  # O, and dQ, dK, dV with the backward
    if impl not in MATERIALISING:
        return {"needed_bytes": output, "output_bytes": output}
    matrices = 4 if backward else 2
    matrix_elem = max(elem, 4) if impl == "sdpa_math" else elem
    per_head = N * N * matrix_elem  # one N×N matrix of one (batch, head)
    mask = N * N if causal and impl == "naive" else 0  # the boolean mask, shared by every head
    return {"needed_bytes": matrices * B * H * per_head + mask + output, "matrix_bytes_per_head": per_head,
            "matrices": matrices, "batch_heads": B * H, "N": N, "bytes_per_element": matrix_elem,
            "mask_bytes": mask, "output_bytes": output}


def free_memory(cuda: bool) -> int:
    """Bytes that can still be allocated: free device memory, or the RAM Linux reports available."""
    if cuda:
        import torch

        torch.cuda.empty_cache()
        return torch.cuda.mem_get_info()[0]
    with open("/proc/meminfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return _system_memory() or 0


def _unavailable(impl: str, cuda: bool, dtype: str, backward: bool) -> str | None:
    """Why impl cannot run here (one of UNAVAILABLE_REASONS), or None."""
    if backward and impl in ("tiled_torch", "flash_triton"):
        return "forward_only"  # ours have no backward written (autograd through the torch loop would keep every block)
    if impl == "flash_triton" and not cuda:
        return "flash_triton_needs_cuda"  # the Triton interpreter runs it on a CPU, but far too slowly to time
    if impl == "sdpa_flash" and not cuda:
        return "sdpa_flash_needs_cuda"  # PyTorch's flash backend has CUDA kernels only
    if impl == "sdpa_flash" and dtype == "float32":
        return "sdpa_flash_needs_half"  # and for float16 and bfloat16 only
    return None


def _use_cuda(device: str | None) -> bool:
    import torch

    return torch.cuda.is_available() and device != "cpu"


def _runner(impl: str, B: int, H: int, N: int, d: int, dtype: str, causal: bool, cuda: bool, backward: bool,
            blocks: tuple[int, int, int, int]):
    """Fresh inputs and a function of no arguments that runs one call on them (forward, or forward + backward)."""
    import torch

    q, k, v = make_inputs(B, H, N, d, dtype, "cuda" if cuda else "cpu")
    for x in (q, k, v):
        x.requires_grad_(backward)
    d_out = torch.randn_like(q) if backward else None  # allocated with the inputs: not in the peak

    def run():
        out = attention_call(impl, q, k, v, causal, *blocks)
        # the gradients are returned, not accumulated in .grad: every repetition allocates the same
        return (out, torch.autograd.grad(out, (q, k, v), d_out)) if backward else out

    return run


# --- Peak memory without recording every allocation ---

_LIBC: ctypes.CDLL | None | bool = None


def _malloc_trim() -> None:
    """Hand glibc's free heap pages back to the OS, so that the next call's allocations touch fresh pages (which the
    resident-set peak counts) instead of reusing resident ones. Nothing where there is no glibc."""
    global _LIBC
    if _LIBC is None:
        try:
            _LIBC = ctypes.CDLL(ctypes.util.find_library("c"))
            _LIBC.malloc_trim.argtypes = [ctypes.c_size_t]
        except (OSError, AttributeError, TypeError):
            _LIBC = False
    if _LIBC:
        _LIBC.malloc_trim(0)


def _status_bytes(key: str) -> int | None:
    """A kB field of /proc/self/status (VmRSS, VmHWM) in bytes; None off Linux."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _peak_start(cuda: bool) -> int | None:
    """Start watching the peak; returns the base (bytes held now), or None where the peak cannot be measured.

    CUDA: torch's allocator, whose peak counter is reset. CPU: Linux's resident-set high-water mark VmHWM, reset to
    the current resident set by writing 5 to /proc/self/clear_refs. Neither records anything per operation.
    """
    if cuda:
        import torch

        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        return torch.cuda.memory_allocated()
    _malloc_trim()
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
    except OSError:
        return None
    return _status_bytes("VmRSS")


def _peak_end(cuda: bool, base: int | None) -> int | None:
    """Bytes at the peak since _peak_start beyond its base."""
    if base is None:
        return None
    if cuda:
        import torch

        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - base
    hwm = _status_bytes("VmHWM")
    return None if hwm is None else max(0, hwm - base)


def peak_bytes(fn, cuda: bool = False) -> int | None:
    """Peak memory of one call of fn beyond what was held before it (its result included, then freed): torch's
    allocator on CUDA, the process's peak resident set on the CPU (other threads' allocations count too)."""
    base = _peak_start(cuda)
    out = fn()
    peak = _peak_end(cuda, base)
    del out
    return peak


def memory_source(cuda: bool, name: str) -> str:
    return (f"measured · torch.cuda.max_memory_allocated · {name}" if cuda
            else f"measured · CPU (peak RSS) · {name}")


# --- The time guard: each implementation's own rate, timed at a small N, scaled to the size asked for ---

CAL_TARGET_S = 0.05  # a calibration call this long is past the fixed costs of a call (launches, Python)
CAL_MAX_N = 16384
# the FLOPs of a calibration's first call at most: beyond them B·H is cut for the calibration and the time scaled
# back up by B·H (such calls are compute-bound, so it scales linearly)
CAL_MAX_FLOPS = {"cpu": 1e9, "cuda": 1e12}
CAL_MAX_BYTES = {"cpu": 2**27, "cuda": 2**30}  # a calibration step allocates at most this, and 1/4 of the free memory
CAL_MAX_AGE_S = 600  # then calibrated again: the load on a shared server changes
_CALIBRATIONS: dict[tuple, Calibration] = {}  # read and written with MEASURE_LOCK held
_CALIBRATIONS_KEPT = 512


@dataclass(frozen=True)
class Calibration:
    """One call of an implementation timed at a small N, for one device, B·H, d, dtype, mask, pass and blocks."""

    n: int  # the N timed
    bh: int  # the B·H timed
    seconds: float  # one call there (the faster of two)
    units: int  # work units there (work_units)
    at: float = 0.0  # time.monotonic() when it was measured


def block_pairs(N: int, block_m: int, block_n: int, causal: bool) -> int:
    """(query block, key block) pairs tiled_attention's loop visits at N: the causal mask skips the blocks above the
    diagonal."""
    rows = -(-N // block_m)
    if not causal:
        return rows * -(-N // block_n)
    return sum(-(-min(N, m0 + block_m) // block_n) for m0 in range(0, N, block_m))


def work_units(impl: str, B: int, H: int, N: int, d: int, causal: bool, block_m: int, block_n: int,
               backward: bool = False) -> tuple[str, int]:
    """What one call's time is proportional to as N grows: ("block_pairs", B·H × pairs) for the torch tiled loop
    (a dozen small kernels a pair, each costing about the same at a given B·H and block size), ("flops", FLOPs)
    for the others."""
    if impl == "tiled_torch":
        return "block_pairs", B * H * block_pairs(N, block_m, block_n, causal)
    return "flops", attention_flops(B, H, N, d, causal, backward)


def _call_seconds(run, cuda: bool) -> float:
    if cuda:
        import torch

        torch.cuda.synchronize()
    start = time.perf_counter()
    run()
    if cuda:
        torch.cuda.synchronize()
    return time.perf_counter() - start


def _calibration_start(impl: str, bh: int, d: int, causal: bool, blocks: tuple, backward: bool,
                       cuda: bool) -> tuple[int, int]:
    """The calibration's first N (the tiled loop's: one full block, so that its pairs cost what they will) and its
    B·H (cut to keep that first call under CAL_MAX_FLOPS)."""
    n = max(blocks[0], blocks[1]) if impl == "tiled_torch" else 16
    per_head = attention_flops(1, 1, n, d, causal, backward)
    return n, max(1, min(bh, int(CAL_MAX_FLOPS["cuda" if cuda else "cpu"] // per_head)))


def _calibrate(impl: str, bh: int, d: int, dtype: str, causal: bool, blocks: tuple, backward: bool,
               cuda: bool) -> Calibration:
    """Time one call (the faster of two) at N = n₀, 2n₀, 4n₀, … until a call takes CAL_TARGET_S, N reaches
    CAL_MAX_N or the next step would allocate more than CAL_MAX_BYTES (or a quarter of the free memory). Cached for
    CAL_MAX_AGE_S; call it with MEASURE_LOCK held.

    Each step costs at most about four times the one before, so a calibration takes well under a second.
    """
    n, bh = _calibration_start(impl, bh, d, causal, blocks, backward, cuda)
    key = (cuda, impl, bh, d, dtype, causal, blocks, backward)
    cached = _CALIBRATIONS.get(key)
    if cached and time.monotonic() - cached.at < CAL_MAX_AGE_S:
        return cached
    cap = min(free_memory(cuda) // 4, CAL_MAX_BYTES["cuda" if cuda else "cpu"])
    point = None
    while True:
        inputs = 4 * bh * n * d * DTYPE_BYTES[dtype]
        if point and memory_needed(impl, 1, bh, n, d, dtype, causal, backward)["needed_bytes"] + inputs > cap:
            break
        run = _runner(impl, 1, bh, n, d, dtype, causal, cuda, backward, blocks)
        if point is None:
            run()  # compilation, cuBLAS heuristics, the allocator's first blocks
        seconds = min(_call_seconds(run, cuda), _call_seconds(run, cuda))
        point = Calibration(n, bh, seconds, work_units(impl, 1, bh, n, d, causal, blocks[0], blocks[1], backward)[1],
                            time.monotonic())
        del run
        if seconds >= CAL_TARGET_S or n >= CAL_MAX_N:
            break
        n *= 2
    _CALIBRATIONS.pop(key, None)
    if len(_CALIBRATIONS) >= _CALIBRATIONS_KEPT:
        del _CALIBRATIONS[next(iter(_CALIBRATIONS))]
    _CALIBRATIONS[key] = point
    return point


def _estimate(impl: str, B: int, H: int, N: int, d: int, dtype: str, causal: bool, blocks: tuple, backward: bool,
              cuda: bool, repeats: int) -> dict:
    """The time guard's arithmetic (the params of a "too_slow" refusal but the limit); MEASURE_LOCK held."""
    cal = _calibrate(impl, B * H, d, dtype, causal, blocks, backward, cuda)
    work, units = work_units(impl, B, H, N, d, causal, blocks[0], blocks[1], backward)
    factor = units / cal.units
    calls = repeats + 1  # the warm-up, then the repetitions (each measures the peak too)
    return {"seconds": cal.seconds * factor * calls, "n": N, "bh": B * H, "cal_n": cal.n, "cal_bh": cal.bh,
            "cal_ms": cal.seconds * 1e3, "work": work, "units": units, "cal_units": cal.units, "factor": factor,
            "calls": calls}


def estimate_seconds(impl: str, B: int, H: int, N: int, d: int, dtype: str = "float16", causal: bool = False, *,
                     block_m: int = 64, block_n: int = 64, num_warps: int = 4, num_stages: int = 2,
                     repeats: int = 10, backward: bool = False, device: str | None = None,
                     wait_s: float = 30.0) -> dict | None:
    """Seconds measure_attention would hold the lock for its calls at this size, and the arithmetic: one call timed
    here at a small N for this implementation (and device, B, H, d, dtype, mask, pass and blocks; cached) × the
    work at N over the work there × calls. 0 s for a run refused before running (unavailable here, or larger than
    the free memory). None when the lock stays busy for wait_s (the calibration measures)."""
    cuda = _use_cuda(device)
    if _unavailable(impl, cuda, dtype, backward):
        return {"seconds": 0.0}
    if memory_needed(impl, B, H, N, d, dtype, causal, backward)["needed_bytes"] > free_memory(cuda):
        return {"seconds": 0.0}
    if not MEASURE_LOCK.acquire(timeout=wait_s):
        return None
    try:
        return _estimate(impl, B, H, N, d, dtype, causal, (block_m, block_n, num_warps, num_stages), backward, cuda,
                         repeats)
    finally:
        MEASURE_LOCK.release()


def plan_click(runs: list[tuple[str, dict, bool]], repeats: int, limit_s: float | None = None,
               device: str | None = None, wait_s: float = 30.0) -> dict:
    """The time guard of one click: every run (impl, config with B, H, N, d, dtype, causal, block_m, block_n,
    backward) estimated, and their sum against the click's limit (CLICK_LIMIT_S of the device by default).

    Returns {"seconds": the sum, "limit_s", "refused": sum > limit, "busy": the lock stayed busy, "runs": each run's
    estimate with its "impl" and "backward"}.
    """
    cuda = _use_cuda(device)
    limit_s = CLICK_LIMIT_S["cuda" if cuda else "cpu"] if limit_s is None else limit_s
    estimates = []
    for impl, c, backward in runs:
        e = estimate_seconds(impl, c["B"], c["H"], c["N"], c["d"], c["dtype"], c["causal"],
                             block_m=c.get("block_m", 64), block_n=c.get("block_n", 64),
                             num_warps=c.get("num_warps", 4), num_stages=c.get("num_stages", 2), repeats=repeats,
                             backward=backward, device=device, wait_s=wait_s)
        if e is None:
            return {"seconds": None, "limit_s": limit_s, "refused": False, "busy": True, "runs": estimates}
        estimates.append({**e, "impl": impl, "backward": backward})
    total = sum(e["seconds"] for e in estimates)
    return {"seconds": total, "limit_s": limit_s, "refused": total > limit_s, "busy": False, "runs": estimates}


def _is_oom(error: BaseException) -> bool:
    import torch

    return isinstance(error, torch.OutOfMemoryError) or (
        isinstance(error, RuntimeError) and "not enough memory" in str(error))


def _repeat(run, cuda: bool, repeats: int, deadline: float, flush_bytes: int) -> tuple[list[float], list]:
    """Milliseconds and peak bytes of up to `repeats` calls; stops before a call that would end past `deadline`
    (time.monotonic()), after one call at least.

    CUDA: CUDA events, a buffer larger than L2 written before each call (every call starts cold), the allocator's
    peak. CPU: wall-clock time (no flush: the CPU's caches are small next to N×N), the peak resident set.
    """
    import torch

    flush = torch.empty(flush_bytes, dtype=torch.uint8, device="cuda") if cuda else None
    times, peaks = [], []
    while len(times) < repeats and (not times or time.monotonic() + statistics.median(times) / 1e3 <= deadline):
        if cuda:
            flush.zero_()  # evicts the inputs from L2
            base = _peak_start(True)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            out = run()
            end.record()
            peaks.append(_peak_end(True, base))
            times.append(start.elapsed_time(end))
        else:
            base = _peak_start(False)
            start = time.perf_counter()
            out = run()
            times.append((time.perf_counter() - start) * 1e3)
            peaks.append(_peak_end(False, base))
        del out
    return times, peaks


def measure_attention(impl: str, B: int, H: int, N: int, d: int, dtype: str = "float16", causal: bool = False, *,
                      block_m: int = 64, block_n: int = 64, num_warps: int = 4, num_stages: int = 2,
                      repeats: int = 10, counters: bool = True, wait_s: float = 30.0,
                      device: str | None = None, backward: bool = False,
                      limit_s: float | None = None) -> Measurement:
    """Time and peak memory of one forward pass on `device` ("cuda" when there is one, else "cpu"), and its
    traffic from ncu (CUDA). With `backward`, of the forward and the backward of the scalar loss (O · dO).sum()
    for a fixed random dO: the gradients of q, k and v (no counters: ncu profiles the forward only).

    With `limit_s`, the lock is held at most about that long: a run whose estimate (estimate_seconds) is longer is
    refused ("too_slow") before any input is made, repetitions stop before the deadline, and ncu runs only with
    NCU_MIN_S left (then with the time left as its timeout).

    Sizes the guards refuse, implementations this device lacks, an out-of-memory error and a busy lock come back as
    a Measurement with `error` set, never as an exception.
    """
    if impl not in IMPLS or dtype not in DTYPE_BYTES:
        raise ValueError(f"unknown implementation {impl!r} or dtype {dtype!r}")
    import torch

    cuda = _use_cuda(device)
    info = device_info()
    name = info.name if cuda else _cpu_name()
    source = f"measured · CUDA events · {name}" if cuda else f"measured · CPU · {name}"
    config = {"B": B, "H": H, "N": N, "d": d, "dtype": dtype, "causal": causal}
    if backward:
        config["backward"] = True
    if impl in ("tiled_torch", "flash_triton"):
        config |= {"block_m": block_m, "block_n": block_n}
    if impl == "flash_triton":
        config |= {"num_warps": num_warps, "num_stages": num_stages}
    blocks = (block_m, block_n, num_warps, num_stages)
    blank = Measurement(impl, name, config, None, None, attention_flops(B, H, N, d, causal, backward), None, None,
                        None, None, source)

    def refused(code: str, **params) -> Measurement:
        assert set(ERROR_PARAMS[code]) <= set(params), code  # every code has a message in both catalogues
        return replace(blank, error=code, error_params=params)

    reason = _unavailable(impl, cuda, dtype, backward)
    if reason:
        return refused("unavailable", reason=reason)
    if not MEASURE_LOCK.acquire(timeout=wait_s):
        return refused("busy")
    try:
        start = time.monotonic()
        deadline = math.inf if limit_s is None else start + limit_s
        need = memory_needed(impl, B, H, N, d, dtype, causal, backward)
        free = free_memory(cuda)
        if need["needed_bytes"] > free:
            return refused("too_large", free_bytes=free, **need)
        if limit_s is not None:
            estimate = _estimate(impl, B, H, N, d, dtype, causal, blocks, backward, cuda, repeats)
            if estimate["seconds"] > deadline - time.monotonic():
                return refused("too_slow", limit_s=limit_s, **estimate)
        oom = False
        try:
            run = _runner(impl, B, H, N, d, dtype, causal, cuda, backward, blocks)
            first = _call_seconds(run, cuda)  # warm-up: Triton compilation, cuBLAS heuristics, first allocations
            left = deadline - time.monotonic()
            if first > left:
                return refused("over_time", first_call_s=first, left_s=max(0.0, left), limit_s=limit_s)
            times, peaks = _repeat(run, cuda, repeats, deadline, 2 * (info.l2_bytes or 2**27))
        except Exception as error:  # noqa: BLE001 - only out-of-memory is expected; anything else is re-raised
            if not _is_oom(error):
                raise
            oom = True  # freed below, once the traceback (which holds the tensors) is gone
        if oom:
            run = None
            gc.collect()
            if cuda:
                torch.cuda.empty_cache()
            return refused("out_of_memory", free_bytes=free, **need)
        del run
        # the least of the peaks: the other threads of a CPU process can only add to its resident set
        measured = [p for p in peaks if p is not None]
        result = replace(blank, time_ms=statistics.median(times), peak_bytes=min(measured) if measured else None,
                         memory_source=memory_source(cuda, name) if measured else None)
        if not counters:
            return replace(result, counters_reason="not_requested")
        if not cuda:
            return replace(result, counters_reason="no_cuda")
        if backward:
            return replace(result, counters_reason="forward_only")
        left = deadline - time.monotonic()
        if left < NCU_MIN_S:
            return replace(result, counters_reason="no_time")
        from sim.gpu.ncu import collect

        found = collect(impl, config, **({} if limit_s is None else {"timeout_s": left}))
        if found.values is None:
            return replace(result, counters_reason=found.reason)
        label = f"measured · counters (ncu, --cache-control all, {found.kernels} kernels) · {name}"
        return replace(result, counters_source=label,
                       **{key: int(value) for key, value in found.values.items()})
    finally:
        MEASURE_LOCK.release()
