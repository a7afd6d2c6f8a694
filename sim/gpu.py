"""Device detection (the device banner: CPU, or the CUDA device's name, SMs, L2, memory) and attention measurement."""
from __future__ import annotations

import gc
import os
import platform
import statistics
import threading
import time
from dataclasses import dataclass, field, replace


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
ERROR_CODES = ("unavailable", "too_large", "out_of_memory", "busy")
MEASURE_LOCK = threading.Lock()  # one measurement at a time on this server: users would disturb each other's timings
MATERIALISING = ("naive", "sdpa_math")  # implementations that hold N×N matrices


@dataclass(frozen=True)
class Measurement:
    """One implementation measured at one size. A field is None when it was not measured; `error` says why not."""

    impl: str
    device: str  # the device's name
    config: dict  # B, H, N, d, dtype, causal and the kernel's block sizes
    time_ms: float | None  # median over repetitions, caches flushed between them (CUDA)
    peak_bytes: int | None  # memory allocated beyond the inputs (the output included) at the peak
    flops: int  # 4·B·H·N²·d, halved with the causal mask, ×3.5 with the backward (FlashAttention's benchmarks)
    hbm_read_bytes: int | None  # from ncu: dram__bytes_read.sum over every kernel
    hbm_write_bytes: int | None  # dram__bytes_write.sum
    l2_bytes: int | None  # lts__t_bytes.sum: all traffic at L2
    l1_bytes: int | None  # l1tex__t_bytes.sum
    source: str  # e.g. "measured · CUDA events · NVIDIA H200" or "measured · CPU · <cpu>"
    counters_source: str | None = None  # e.g. "measured · counters (ncu, --cache-control all) · NVIDIA H200"
    counters_reason: str | None = None  # why there are no counters
    error: str | None = None  # nothing measured: "unavailable", "too_large", "out_of_memory" or "busy"
    error_params: dict = field(default_factory=dict)  # fills the translated message (the arithmetic, the reason)

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


def make_inputs(B: int, H: int, N: int, d: int, dtype: str, device: str, seed: int = 0):
    """q, k, v of shape (B, H, N, d), standard normal, seeded."""
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    return tuple(torch.randn(B, H, N, d, generator=g, device=device, dtype=getattr(torch, dtype)) for _ in range(3))


def attention_call(impl: str, q, k, v, causal: bool, block_m: int = 64, block_n: int = 64, num_warps: int = 4,
                   num_stages: int = 2):
    """Run one implementation on q, k, v (B, H, N, d)."""
    import torch.nn.functional as F

    if impl == "naive":
        from sim.kernels import naive_attention

        return naive_attention(q, k, v, causal)
    if impl == "tiled_torch":
        from sim.kernels import tiled_attention

        return tiled_attention(q, k, v, causal, block_m, block_n)
    if impl == "flash_triton":
        from sim.kernels import flash_attention

        return flash_attention(q, k, v, causal, block_m, block_n, num_warps, num_stages)
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backend = {"sdpa_flash": SDPBackend.FLASH_ATTENTION, "sdpa_math": SDPBackend.MATH}[impl]
    with sdpa_kernel(backend):  # forced: raises instead of silently falling back to another backend
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def _unavailable(impl: str, cuda: bool, dtype: str, backward: bool) -> str | None:
    """Why impl cannot run here, or None."""
    if backward and impl in ("tiled_torch", "flash_triton"):
        return "forward_only"  # ours have no backward written (autograd through the torch loop would keep every block)
    if impl == "flash_triton" and not cuda:
        return "flash_triton_needs_cuda"  # the Triton interpreter runs it on a CPU, but far too slowly to time
    if impl == "sdpa_flash" and not cuda:
        return "sdpa_flash_needs_cuda"  # PyTorch's flash backend has CUDA kernels only
    if impl == "sdpa_flash" and dtype == "float32":
        return "sdpa_flash_needs_half"  # and for float16 and bfloat16 only
    return None


def _time_cuda(fn, repeats: int, flush_bytes: int) -> float:
    """Median milliseconds by CUDA events; a buffer larger than L2 is written before each repetition."""
    import torch

    flush = torch.empty(flush_bytes, dtype=torch.uint8, device="cuda")
    times = []
    for _ in range(repeats):
        flush.zero_()  # evicts the inputs from L2: every repetition starts cold
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def _time_cpu(fn, repeats: int) -> float:
    """Median milliseconds of wall-clock time (no cache flush: the CPU's caches are small next to N×N)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def _peak_cuda(fn) -> int:
    """Most bytes allocated during fn beyond those allocated before it (the inputs), by torch's allocator."""
    import torch

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()  # the inputs
    out = fn()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    del out
    return peak


def _peak_cpu(fn) -> int:
    """Peak of live CPU tensor memory during fn, from torch.profiler's memory events.

    Every allocation (+bytes) and free (-bytes) the profiler records is replayed in time order: the peak is
    exact at allocation granularity. The raw kineto events are read because building the per-operator event
    tree costs seconds for the tiled loop's thousands of operators.
    """
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        out = fn()
    del out
    events = prof.profiler.kineto_results.events()
    changes = sorted((e.start_ns(), e.nbytes()) for e in events if e.name() == "[memory]")
    live = peak = 0
    for _, change in changes:
        live += change
        peak = max(peak, live)
    return peak


def _is_oom(error: BaseException) -> bool:
    import torch

    return isinstance(error, torch.OutOfMemoryError) or (
        isinstance(error, RuntimeError) and "not enough memory" in str(error))


def measure_attention(impl: str, B: int, H: int, N: int, d: int, dtype: str = "float16", causal: bool = False, *,
                      block_m: int = 64, block_n: int = 64, num_warps: int = 4, num_stages: int = 2,
                      repeats: int = 10, counters: bool = True, wait_s: float = 30.0,
                      device: str | None = None, backward: bool = False) -> Measurement:
    """Time and peak memory of one forward pass on `device` ("cuda" when there is one, else "cpu"), and its
    traffic from ncu (CUDA). With `backward`, of the forward and the backward of the scalar loss (O · dO).sum()
    for a fixed random dO: the gradients of q, k and v (no counters: ncu profiles the forward only).

    Sizes the memory guard refuses, implementations this device lacks, an out-of-memory error and a busy lock
    come back as a Measurement with `error` set, never as an exception.
    """
    if impl not in IMPLS or dtype not in DTYPE_BYTES:
        raise ValueError(f"unknown implementation {impl!r} or dtype {dtype!r}")
    import torch

    cuda = torch.cuda.is_available() and device != "cpu"
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
    blank = Measurement(impl, name, config, None, None, attention_flops(B, H, N, d, causal, backward), None, None,
                        None, None, source)

    def refused(code: str, **params) -> Measurement:
        assert code in ERROR_CODES, code  # every code has a message in both catalogues
        return replace(blank, error=code, error_params=params)

    reason = _unavailable(impl, cuda, dtype, backward)
    if reason:
        return refused("unavailable", reason=reason)
    if not MEASURE_LOCK.acquire(timeout=wait_s):
        return refused("busy")
    try:
        need = memory_needed(impl, B, H, N, d, dtype, causal, backward)
        free = free_memory(cuda)
        if need["needed_bytes"] > free:
            return refused("too_large", free_bytes=free, **need)
        oom = False
        try:
            q, k, v = make_inputs(B, H, N, d, dtype, "cuda" if cuda else "cpu")
            for x in (q, k, v):
                x.requires_grad_(backward)
            d_out = torch.randn_like(q) if backward else None  # allocated with the inputs: not in the peak

            def run():
                out = attention_call(impl, q, k, v, causal, block_m, block_n, num_warps, num_stages)
                # the gradients are returned, not accumulated in .grad: every repetition allocates the same
                return (out, torch.autograd.grad(out, (q, k, v), d_out)) if backward else out

            run()  # warm-up: Triton compilation, cuBLAS heuristics, the allocator's first blocks
            if cuda:
                peak = _peak_cuda(run)
                time_ms = _time_cuda(run, repeats, 2 * (info.l2_bytes or 2**27))
            else:
                peak = _peak_cpu(run)
                time_ms = _time_cpu(run, repeats)
        except Exception as error:  # noqa: BLE001 - only out-of-memory is expected; anything else is re-raised
            if not _is_oom(error):
                raise
            oom = True  # freed below, once the traceback (which holds the tensors) is gone
        if oom:
            q = k = v = d_out = None
            gc.collect()
            if cuda:
                torch.cuda.empty_cache()
            return refused("out_of_memory", free_bytes=free, **need)
        result = replace(blank, time_ms=time_ms, peak_bytes=peak)
        if not counters:
            return replace(result, counters_reason="not_requested")
        if not cuda:
            return replace(result, counters_reason="no_cuda")
        if backward:
            return replace(result, counters_reason="forward_only")
        from sim.ncu import collect

        found = collect(impl, config)
        if found.values is None:
            return replace(result, counters_reason=found.reason)
        label = f"measured · counters (ncu, --cache-control all, {found.kernels} kernels) · {name}"
        return replace(result, counters_source=label,
                       **{key: int(value) for key, value in found.values.items()})
    finally:
        MEASURE_LOCK.release()
