"""Why cross-entropy: each loss and its gradient with respect to the logit, by autograd."""
from __future__ import annotations

import numpy as np


def logit_gradients(p: np.ndarray, y: float) -> dict[str, np.ndarray]:
    """For sigmoid outputs p = σ(z) and label y: per-point losses and dL/dz, by torch autograd.

    Cross-entropy gives dL/dz = p − y; squared error (p − y)² gives 2(p − y)·p(1 − p), which
    vanishes where the sigmoid saturates, even when the prediction is badly wrong.
    """
    import torch
    import torch.nn.functional as F

    q = torch.as_tensor(np.clip(p, 1e-6, 1 - 1e-6), dtype=torch.float64)
    z = torch.logit(q).requires_grad_(True)  # the logit that gives probability p
    target = torch.full_like(q, float(y))
    losses = {"cross_entropy": F.binary_cross_entropy_with_logits(z, target, reduction="none"),
              "squared_error": (torch.sigmoid(z) - target) ** 2}
    out = {}
    for name, loss in losses.items():
        (grad,) = torch.autograd.grad(loss.sum(), z)  # points are independent: the sum gives each one's
        out[name], out[f"{name}_grad"] = loss.detach().numpy(), grad.numpy()
    return out
