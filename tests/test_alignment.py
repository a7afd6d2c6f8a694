"""sim.alignment against independent references: the Bradley-Terry and DPO losses by hand and in their papers' forms,
their gradients against finite differences, the task's rule and the SFT mask by hand, answer log-probabilities token by
token, and the first stages of the pipeline reaching their targets."""
import math

import numpy as np
import pytest
import torch

from sim.alignment import bradley_terry_loss, dpo_loss
from sim.alignment import task as tk
from sim.alignment.pipeline import (
    CONFIG,
    STAGES,
    PipelineRun,
    answer_logps,
    answer_token_logps,
    raw_rewards,
    reward_model,
    sample,
    scores,
    sft_loss,
)
from sim.transformers.transformer import TinyTransformer


def sigma(x: float) -> float:
    return 1 / (1 + math.exp(-x))


# ---------- the losses ----------
def test_bradley_terry_by_hand():
    rc, rr = torch.tensor([2.0, 0.0, -1.0]), torch.tensor([1.0, 1.0, -1.0])
    by_hand = (-math.log(sigma(1.0)) - math.log(sigma(-1.0)) + math.log(2)) / 3
    assert bradley_terry_loss(rc, rr).item() == pytest.approx(by_hand, rel=1e-6)


def test_bradley_terry_is_the_papers_choice_probability():
    """Bradley & Terry (1952): P(c preferred to r) = exp(r_c) / (exp(r_c) + exp(r_r)); the loss is -log of it."""
    g = torch.Generator().manual_seed(0)
    rc, rr = torch.randn(50, generator=g, dtype=torch.float64), torch.randn(50, generator=g, dtype=torch.float64)
    p = torch.exp(rc) / (torch.exp(rc) + torch.exp(rr))
    assert bradley_terry_loss(rc, rr).item() == pytest.approx(float(-torch.log(p).mean()), rel=1e-12)
    big = bradley_terry_loss(torch.tensor([1000.0]), torch.tensor([-1000.0]))
    assert big.item() == 0.0 and torch.isfinite(bradley_terry_loss(torch.tensor([-1000.0]), torch.tensor([1000.0])))


def test_dpo_by_hand():
    pc, pr, rc, rr = torch.tensor([-2.0, -3.0]), torch.tensor([-4.0, -1.0]), torch.tensor([-3.0, -3.0]), \
        torch.tensor([-3.0, -2.0])
    beta = 0.5
    m = [(-2 + 3) - (-4 + 3), (-3 + 3) - (-1 + 2)]  # 2, -1
    by_hand = (-math.log(sigma(beta * m[0])) - math.log(sigma(beta * m[1]))) / 2
    assert dpo_loss(pc, pr, rc, rr, beta).item() == pytest.approx(by_hand, rel=1e-6)


def test_dpo_is_the_papers_formula_with_probabilities():
    """Rafailov et al. (2023), eq. 7: -log sigma(beta log(pi(y_w)/ref(y_w)) - beta log(pi(y_l)/ref(y_l)))."""
    g = torch.Generator().manual_seed(1)
    probs = torch.rand(4, 30, generator=g, dtype=torch.float64) * 0.9 + 0.05
    pi_w, pi_l, ref_w, ref_l = probs
    beta = 0.3
    z = beta * torch.log(pi_w / ref_w) - beta * torch.log(pi_l / ref_l)
    paper = -torch.log(1 / (1 + torch.exp(-z))).mean()
    ours = dpo_loss(*torch.log(probs), beta)
    assert ours.dim() == 0 and ours.item() == pytest.approx(paper.item(), rel=1e-12)


def test_dpo_at_the_reference_is_log_two_and_moves_towards_the_chosen():
    pc, pr = torch.tensor([-2.0, -5.0], requires_grad=True), torch.tensor([-3.0, -1.0], requires_grad=True)
    loss = dpo_loss(pc, pr, pc.detach(), pr.detach(), beta=0.7)
    assert loss.item() == pytest.approx(math.log(2))
    loss.backward()
    assert (pc.grad < 0).all() and (pr.grad > 0).all()  # descending raises the chosen, lowers the rejected
    assert pc.grad.numpy() == pytest.approx(-0.7 * 0.5 / 2)  # d/dm -log sigma(beta m) at m = 0, over a batch of 2


def test_gradients_against_finite_differences():
    g = torch.Generator().manual_seed(2)
    args = [torch.randn(6, generator=g, dtype=torch.float64, requires_grad=True) for _ in range(4)]
    assert torch.autograd.gradcheck(lambda a, b, c, d: dpo_loss(a, b, c, d, 0.4), args)
    assert torch.autograd.gradcheck(bradley_terry_loss, args[:2])
    # and one partial derivative by a central difference written out
    x = [a.detach().clone() for a in args]
    eps = 1e-6
    up, down = [a.clone() for a in x], [a.clone() for a in x]
    up[0][3] += eps
    down[0][3] -= eps
    numeric = (dpo_loss(*up, 0.4) - dpo_loss(*down, 0.4)).item() / (2 * eps)
    y = [a.clone().requires_grad_(True) for a in x]
    dpo_loss(*y, 0.4).backward()
    assert y[0].grad[3].item() == pytest.approx(numeric, rel=1e-6)


# ---------- the task ----------
def test_text_keeps_its_law_and_prompts_their_shape():
    g = torch.Generator().manual_seed(3)
    s = tk.fluent_letters(500, 12, g).numpy()
    assert s.min() >= 0 and s.max() < tk.N_LETTERS
    assert (s[:, 1:] != s[:, :-1]).all() and (s[:, 2:] != s[:, :-2]).all()
    assert len(np.unique(s[:, 5])) == tk.N_LETTERS  # every letter is used
    p = tk.prompts(10, g)
    assert p.shape == (10, 5) and (p[:, 4] == tk.SEP_ID).all()
    x, y = tk.text_batch(4, g)
    assert x.shape == y.shape == (4, tk.SEQ_LEN - 1) and torch.equal(x[:, 1:], y[:, :-1])


def test_all_prompts_are_every_fluent_quadruple_once():
    import itertools

    by_hand = [q for q in itertools.product(range(tk.N_LETTERS), repeat=4)
               if all(q[i] != q[i - 1] for i in range(1, 4)) and all(q[i] != q[i - 2] for i in range(2, 4))]
    p = tk.all_prompts()
    assert len(by_hand) == 8 * 7 * 6 * 6 == len(p) and p[:, :4].tolist() == [list(q) for q in by_hand]
    assert (p[:, 4] == tk.SEP_ID).all()
    drawn = {tuple(r) for r in tk.prompts(4000, torch.Generator().manual_seed(6)).tolist()}
    assert drawn <= {tuple(r) for r in p.tolist()}  # prompts() draws from the same set


def test_the_rule_by_hand():
    p = torch.tensor([tk.encode("dhfg="), tk.encode("dhfg="), tk.encode("dhfg="), tk.encode("dhfg="),
                      tk.encode("dhfg="), tk.encode("abca=")])
    a = torch.tensor([tk.encode(x) for x in ("dab.", "add.", "ddd.", "dabe", "d=b.", "bca.")])
    j = tk.judge(p, a)
    assert j.formatted.tolist() == [True, True, True, False, False, True]
    assert j.distinct.tolist() == [True, False, False, False, False, True]
    assert j.starts.tolist() == [True, False, True, False, False, False]
    assert j.has_target.tolist() == [True, True, True, False, False, True]
    assert j.follows.tolist() == [True, False, False, False, False, False]


def test_preference_pairs_follow_and_break_the_rule():
    g = torch.Generator().manual_seed(4)
    d = tk.preferences(tk.prompts(400, g), g)
    assert tk.judge(d.prompt, d.chosen).follows.all()
    rej = tk.judge(d.prompt, d.rejected)
    assert not rej.follows.any() and not (d.rejected[:, :3] == d.prompt[:, :1]).any()
    assert 0.15 < 1 - rej.formatted.mean() < 0.35  # a quarter of the rejected answers are malformed too
    demos = tk.answers(d.prompt, torch.Generator().manual_seed(5), None)
    share = tk.judge(d.prompt, demos).follows.mean()
    assert tk.judge(d.prompt, demos).distinct.all() and 0.06 < share < 0.2  # by chance: 1 in 8


def test_the_sft_mask_by_hand():
    assert tk.sft_mask().tolist() == [0, 0, 0, 0, 1, 1, 1, 1]  # targets h f g = | a e f . of "dhfg=aef."


def test_sft_loss_counts_the_answer_tokens_only():
    model = TinyTransformer(CONFIG, torch.Generator().manual_seed(0))
    seq = torch.tensor([tk.encode("dhfg=aef."), tk.encode("abcd=bce.")])
    logits = model(seq[:, :-1])
    by_hand = []
    for b in range(2):
        for t in range(tk.SEQ_LEN - 1):
            if t >= tk.ANSWER_AT - 1:  # predicts an answer token
                by_hand.append(-torch.log_softmax(logits[b, t], -1)[seq[b, t + 1]])
    assert sft_loss(model, seq, tk.sft_mask()).item() == pytest.approx(torch.stack(by_hand).mean().item(), rel=1e-6)


def test_answer_logps_token_by_token():
    model = TinyTransformer(CONFIG, torch.Generator().manual_seed(1)).eval()
    prompt, answer = torch.tensor([tk.encode("dhfg=")]), torch.tensor([tk.encode("dab.")])
    total = 0.0
    for k in range(tk.GEN_LEN):  # the model reads the prompt and the answer so far, one token at a time
        ctx = torch.cat([prompt, answer[:, :k]], dim=1)
        total += torch.log_softmax(model(ctx)[0, -1], -1)[answer[0, k]].item()
    assert answer_token_logps(model, prompt, answer).shape == (1, tk.GEN_LEN)
    assert answer_logps(model, prompt, answer).item() == pytest.approx(total, rel=1e-5)


def test_greedy_sampling_and_the_reward_model_by_hand():
    model = TinyTransformer(CONFIG, torch.Generator().manual_seed(2)).eval()
    prompt = torch.tensor([tk.encode("dhfg=")])
    a = sample(model, prompt, None, greedy=True)
    seq = prompt
    for _ in range(tk.GEN_LEN):
        seq = torch.cat([seq, model(seq)[:, -1].argmax(-1, keepdim=True)], dim=1)
    assert torch.equal(a, seq[:, 5:])
    rm = reward_model(model, torch.Generator().manual_seed(3))
    per_position = rm(torch.cat([prompt, a], dim=1))[0, :, 0]
    assert raw_rewards(rm, prompt, a).item() == pytest.approx(per_position[5:].sum().item(), rel=1e-6)
    p8 = prompt.repeat(8, 1)
    e = scores(model, p8, sample(model, p8, torch.Generator().manual_seed(0)), ref=model)
    assert e["kl"] == pytest.approx(0.0, abs=1e-6) and 0 <= e["follows"] <= e["distinct"] <= e["format"] <= 1


def test_bad_settings_are_refused():
    for kw in ({"beta": 0.0}, {"kl_weight": -1.0}, {"steps": {"pretrain": 5}}, {"nll_weight": 99.0}):
        with pytest.raises(ValueError):
            PipelineRun(0, **kw)


def test_pretraining_ignores_the_format_sft_teaches_it_and_the_reward_model_ranks_held_out_pairs():
    run = PipelineRun(0)
    run.advance(run.starts["dpo"])
    assert run.stage() == "dpo"
    assert run.curves["pretrain"]["format"][1][-1] == 0.0  # the pretrained model never ends an answer
    assert run.last("sft", "format") >= 0.9
    assert run.last("sft", "follows") < 0.3  # the demonstrations follow the rule only by chance
    assert run.last("reward", "accuracy") >= 0.85
    assert set(run.snapshots) == {"pretrain", "sft"} and list(run.curves) == list(STAGES)
