"""The two preference losses of the pipeline, written from their papers' formulas.

Bradley-Terry (1952), as InstructGPT (Ouyang et al. 2022) trains its reward model: the probability that a person
prefers answer c to answer r is sigma(r_c - r_r), and the loss is its negative log, averaged over the pairs.
DPO (Rafailov et al. 2023): the same model of preferences with the reward replaced by beta times the policy's
log-ratio to a frozen reference, log pi(y|x) - log pi_ref(y|x); no reward model and no sampling.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


def bradley_terry_loss(r_chosen: torch.Tensor, r_rejected: torch.Tensor) -> torch.Tensor:
    """mean over pairs of -log sigma(r_chosen - r_rejected), a torch scalar (logsigmoid: no overflow)."""
    return -F.logsigmoid(r_chosen - r_rejected).mean()


def dpo_margin(policy_chosen_logps: torch.Tensor, policy_rejected_logps: torch.Tensor,
               ref_chosen_logps: torch.Tensor, ref_rejected_logps: torch.Tensor) -> torch.Tensor:
    """(pi_c - ref_c) - (pi_r - ref_r) per pair: how much more the policy than the reference favours the chosen."""
    return (policy_chosen_logps - ref_chosen_logps) - (policy_rejected_logps - ref_rejected_logps)


def dpo_loss(policy_chosen_logps: torch.Tensor, policy_rejected_logps: torch.Tensor,
             ref_chosen_logps: torch.Tensor, ref_rejected_logps: torch.Tensor, beta: float) -> torch.Tensor:
    """Batch mean of -log sigma(beta((pi_c - r_c) - (pi_r - r_r))), a torch scalar; the log-probabilities are of whole
    answers (sums over their tokens)."""
    margin = dpo_margin(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps)
    return -F.logsigmoid(beta * margin).mean()
