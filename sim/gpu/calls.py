"""One attention call by implementation name, and its inputs: shared by the measurements (sim.gpu.measure) and the
driver Nsight Compute runs (sim.gpu.ncu), so that neither imports the other for them."""
from __future__ import annotations


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
        from sim.gpu.kernels import naive_attention

        return naive_attention(q, k, v, causal)
    if impl == "tiled_torch":
        from sim.gpu.kernels import tiled_attention

        return tiled_attention(q, k, v, causal, block_m, block_n)
    if impl == "flash_triton":
        from sim.gpu.kernels import flash_attention

        return flash_attention(q, k, v, causal, block_m, block_n, num_warps, num_stages)
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backend = {"sdpa_flash": SDPBackend.FLASH_ATTENTION, "sdpa_math": SDPBackend.MATH}[impl]
    with sdpa_kernel(backend):  # forced: raises instead of silently falling back to another backend
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
