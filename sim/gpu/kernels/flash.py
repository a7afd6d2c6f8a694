"""A fused FlashAttention-2 forward kernel in Triton, written to be read next to the IO simulator.

One program (a thread block on the GPU) per (row block i, batch·head): the simulator's `tiled` schedule, with
the same grid order (row block fastest), so its L2 model's waves are this kernel's waves. Each step's comment
names the simulator's event it corresponds to. S, the running max and sum and the O accumulator never leave
the chip; HBM sees Q_i once, K_j and V_j once per needed block, O_i once.
"""
import math

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634  # exp(x) = exp2(x·log2 e): exp2 is the GPU's native instruction


@triton.jit
def _flash_fwd(Q, K, V, O,  # noqa: E741  (O: the output, as Q, K, V, in the FlashAttention paper)
               stride_qb, stride_qh, stride_qn, stride_qd,
               stride_kb, stride_kh, stride_kn, stride_kd,
               stride_vb, stride_vh, stride_vn, stride_vd,
               stride_ob, stride_oh, stride_on, stride_od,
               H, N, D, qk_scale,
               CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
               DOT_PRECISION: tl.constexpr):
    i = tl.program_id(0)  # row block: the simulator's program i
    bh = tl.program_id(1)  # which (batch, head)
    b, h = bh // H, bh % H
    rows = i * BLOCK_M + tl.arange(0, BLOCK_M)  # (BLOCK_M,) query positions; past N on a partial edge block
    dims = tl.arange(0, BLOCK_D)  # (BLOCK_D,) head dimensions, padded to a power of two
    row_ok = rows[:, None] < N
    dim_ok = dims[None, :] < D

    # event "load Q": Q_i, HBM -> SRAM, once per program
    q_ptrs = Q + b * stride_qb + h * stride_qh + rows[:, None] * stride_qn + dims[None, :] * stride_qd
    q = tl.load(q_ptrs, mask=row_ok & dim_ok, other=0.0)  # (BLOCK_M, BLOCK_D)

    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)  # running row max (in log2 units)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)  # running sum of exp2(s - m_i)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)  # unnormalised O_i, on chip until the end

    # event "skip": with the causal mask, blocks after the one holding this block's last query are never loaded
    hi = N
    if CAUSAL:
        hi = tl.minimum((i + 1) * BLOCK_M, N)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)  # (BLOCK_N,) key positions of block j
        col_ok = cols[None, :] < N
        # events "load K", "load V": K_j and V_j, HBM (-> L2) -> SRAM
        k_ptrs = K + b * stride_kb + h * stride_kh + cols[None, :] * stride_kn + dims[:, None] * stride_kd
        kt = tl.load(k_ptrs, mask=col_ok & (dims[:, None] < D), other=0.0)  # (BLOCK_D, BLOCK_N) K_jᵀ
        v_ptrs = V + b * stride_vb + h * stride_vh + cols[:, None] * stride_vn + dims[None, :] * stride_vd
        v = tl.load(v_ptrs, mask=(cols[:, None] < N) & dim_ok, other=0.0)  # (BLOCK_N, BLOCK_D)

        # event "compute": S_ij = Q_i K_jᵀ · scale, on chip; keys past N (partial edge block) get no weight
        s = tl.dot(q, kt, input_precision=DOT_PRECISION) * qk_scale  # (BLOCK_M, BLOCK_N)
        keep = col_ok
        if CAUSAL:
            keep = keep & (cols[None, :] <= rows[:, None])
        s = tl.where(keep, s, float("-inf"))

        # online softmax: new running max, rescale what was accumulated under the old one
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])  # (BLOCK_M, BLOCK_N)
        alpha = tl.math.exp2(m_i - m_new)  # 0 on the first block (m_i = -inf)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None], input_precision=DOT_PRECISION)  # acc·α + P V_j
        m_i = m_new

    # event "store O": O_i = acc / l_i, SRAM -> HBM, once per program
    o = acc / l_i[:, None]
    o_ptrs = O + b * stride_ob + h * stride_oh + rows[:, None] * stride_on + dims[None, :] * stride_od
    tl.store(o_ptrs, o.to(O.dtype.element_ty), mask=row_ok & dim_ok)


def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False, block_m: int = 64,
                    block_n: int = 64, num_warps: int = 4, num_stages: int = 2) -> torch.Tensor:
    """softmax(q kᵀ / √d) v for q, k, v of shape (B, H, N, d) in one fused kernel (CUDA, or TRITON_INTERPRET=1).

    block_m and block_n: powers of two, at least 16 (tl.dot's smallest tile).
    """
    for name, block in (("block_m", block_m), ("block_n", block_n)):
        if block < 16 or block & (block - 1):
            raise ValueError(f"{name} must be a power of two >= 16, got {block}")
    if not q.is_cuda and not triton.knobs.runtime.interpret:
        raise RuntimeError("flash_attention needs a CUDA device, or TRITON_INTERPRET=1 set before it is imported")
    B, H, N, d = q.shape
    o = torch.empty_like(q)
    grid = (triton.cdiv(N, block_m), B * H)  # row block fastest, as in the simulator's launch order
    _flash_fwd[grid](q, k, v, o, *q.stride(), *k.stride(), *v.stride(), *o.stride(), H, N, d,
                     LOG2E / math.sqrt(d), CAUSAL=causal, BLOCK_M=block_m, BLOCK_N=block_n,
                     BLOCK_D=max(16, triton.next_power_of_2(d)),
                     # float32 in full precision (tensor cores would round it to tf32); halves use them as they are
                     DOT_PRECISION="ieee" if q.dtype == torch.float32 else "tf32",
                     num_warps=num_warps, num_stages=num_stages)
    return o
