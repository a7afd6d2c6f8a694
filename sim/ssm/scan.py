"""The selective scan of a Mamba layer, per channel, with Mamba's discretisation.

For each channel i of the input u (L steps, d channels) the layer keeps a state h of n numbers. At step t the
step size Δ[t, i] turns the continuous parameters into a discrete update: Ā = exp(Δ A[i]) (how much of the state
is kept, elementwise), B̄ = Δ B[t] (how the input enters: the simplification Mamba's code uses; the paper's
zero-order hold puts zoh_scale on it). Then

    h_t = Ā ⊙ h_{t-1} + B̄ u[t, i],        y[t, i] = C[t] · h_t + D[i] u[t, i].

B, C and Δ depend on the step (the "selective" part: the input decides what to keep and what to read out); A and
D do not. `selective_scan` runs the recurrence step by step (L sequential steps, a state of fixed size: what a
recurrent model does at inference) or, with parallel=True, as an associative scan in ⌈log2 L⌉ rounds of
elementwise products over all steps at once (how training runs it on parallel hardware). Both give the same y;
both are differentiable with torch's autograd.
"""
from __future__ import annotations

import torch


def _check(u, delta, A, B, C, D) -> tuple[torch.Tensor, ...]:
    u, delta, A, B, C = (torch.as_tensor(x) for x in (u, delta, A, B, C))
    if u.dim() != 2:
        raise ValueError(f"u must be (L, d), got shape {tuple(u.shape)}")
    L, d = u.shape
    if A.dim() != 2 or A.shape[0] != d:
        raise ValueError(f"A must be (d, n) = ({d}, n), got shape {tuple(A.shape)}")
    n = A.shape[1]
    for name, x, want in (("delta", delta, (L, d)), ("B", B, (L, n)), ("C", C, (L, n))):
        if tuple(x.shape) != want:
            raise ValueError(f"{name} must be {want}, got shape {tuple(x.shape)}")
    if D is not None:
        D = torch.as_tensor(D)
        if tuple(D.shape) != (d,):
            raise ValueError(f"D must be ({d},) or None, got shape {tuple(D.shape)}")
    return u, delta, A, B, C, D


def discretise(delta: torch.Tensor, A: torch.Tensor, B: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(Ā, B̄), each (L, d, n): Ā = exp(Δ A) (zero-order hold), B̄ = Δ B (Mamba's simplification)."""
    return torch.exp(delta[:, :, None] * A[None]), delta[:, :, None] * B[:, None, :]


def zoh_scale(delta: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
    """(L, d, n) the factor the Mamba paper's zero-order hold puts on Δ B: its B̄ = (ΔA)⁻¹(exp(ΔA) − I) · ΔB is, for a
    diagonal A (d, n) of nonzero entries, (exp(Δ A) − 1) / (Δ A) · Δ B elementwise; near 1 (the simplification
    B̄ = Δ B) where Δ A is small."""
    x = delta[:, :, None] * A[None]
    return torch.expm1(x) / x


def _combine_scan(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """h with h_t = a_t h_{t-1} + b_t (h_{-1} = 0), along dim 0, as an inclusive scan of the affine maps
    x -> a_t x + b_t (Hillis–Steele: round k composes each step with the one 2^k before it)."""
    L, k = a.shape[0], 1
    while k < L:
        b = torch.cat([b[:k], a[k:] * b[:-k] + b[k:]])
        a = torch.cat([a[:k], a[k:] * a[:-k]])
        k *= 2
    return b


def selective_scan(u, delta, A, B, C, D=None, *, parallel: bool = False) -> torch.Tensor:
    """y (L, d) of the selective scan: u and delta (L, d), A (d, n), B and C (L, n), D (d,) or None.

    parallel=False runs the recurrence (L steps in order); parallel=True the associative scan (⌈log2 L⌉ rounds).
    Raises ValueError on shapes that do not fit together.
    """
    u, delta, A, B, C, D = _check(u, delta, A, B, C, D)
    a, bbar = discretise(delta, A, B)
    b = bbar * u[:, :, None]  # the input's push into the state at each step: (L, d, n)
    if parallel:
        h = _combine_scan(a, b)  # (L, d, n): every step's state at once
        y = (h * C[:, None, :]).sum(-1)
    else:
        state = b.new_zeros(b.shape[1:])
        ys = []
        for t in range(u.shape[0]):
            state = a[t] * state + b[t]
            ys.append(state @ C[t])
        y = torch.stack(ys) if ys else b.new_zeros(u.shape)
    return y if D is None else y + D * u


def selective_scan_batch(u, delta, A, B, C, D=None) -> torch.Tensor:
    """y (N, L, d) of N independent selective scans at once, run as the associative scan: u and delta (N, L, d),
    A (d, n), B and C (N, L, n), D (d,) or None. Sequence k's y equals selective_scan(u[k], delta[k], A, B[k], C[k],
    D) (tested); differentiable, so a model can train through it."""
    if u.dim() != 3 or delta.shape != u.shape or A.dim() != 2 or A.shape[0] != u.shape[2]:
        raise ValueError("u and delta must be (N, L, d) and A (d, n)")
    N, L, d = u.shape
    if B.shape != (N, L, A.shape[1]) or C.shape != B.shape:
        raise ValueError(f"B and C must be {(N, L, A.shape[1])}")
    a = torch.exp(delta[..., None] * A)  # (N, L, d, n): Ā
    b = (delta * u)[..., None] * B[:, :, None, :]  # B̄ u
    h = _combine_scan(a.transpose(0, 1), b.transpose(0, 1)).transpose(0, 1)  # (N, L, d, n)
    y = (h * C[:, :, None, :]).sum(-1)
    return y if D is None else y + D * u
