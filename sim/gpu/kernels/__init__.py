"""Three attention forward passes on (B, H, N, d) tensors: naive (N×N in memory), tiled in torch, fused in Triton.

flash_attention is imported on first use: importing Triton takes a while, and whether its kernel runs compiled or
interpreted (TRITON_INTERPRET=1) is fixed when the kernel is defined.
"""
from sim.gpu.kernels.naive import naive_attention
from sim.gpu.kernels.tiled import tiled_attention

__all__ = ["naive_attention", "tiled_attention", "flash_attention"]


def __getattr__(name: str):
    if name == "flash_attention":
        from sim.gpu.kernels.flash import flash_attention

        return flash_attention
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
