"""Pretraining -> SFT -> reward model -> DPO and RLHF on the tiny GPT of sim.transformers, as one live run
(sim.core.live.LiveRun): its steps go through the stages in turn, each stage one optimizer step a step.

1. pretrain: next-token loss on the letter text (sim.alignment.task); the model never sees "=" or ".".
2. sft: from the pretrained model, the same loss on prompt-answer demonstrations, counted on the answer tokens only
   (task.sft_mask); the demonstrations have the format, and follow the rule only by chance (1 in 8).
3. reward: a copy of the SFT model with a one-number head, trained with the Bradley-Terry loss on preference pairs
   (the chosen answer follows the rule, the rejected does not contain the letter); its reward for
   an answer is the sum of its scores at the answer's tokens, and its accuracy is measured on held-out pairs.
4. dpo: from the SFT model, the DPO loss on the same pairs, the SFT model as the frozen reference (plus, with a
   weight, the chosen answers' log-likelihood: see PipelineRun).
5. rlhf: from the SFT model, REINFORCE with a baseline against the reward model, the reward less kl_weight times the
   sampled answer's log-ratio to the SFT model. REINFORCE, not PPO: each batch of answers is sampled from the policy
   being trained and used for one step only, and then PPO's ratio is 1 and its clipped objective has the same
   gradient; the baseline (the batch's mean reward) only lowers the variance.
6. hack: the same as 5 with the KL weight at 0, which is where reward hacking may show.

Every stage is measured on EVAL_PROMPTS held-out prompts: distinct prompts of the 2,016 possible ones that SFT, the
preference pairs (the reward model's held-out pairs aside) and RLHF never draw.
"""
from __future__ import annotations

import copy
import zlib

import numpy as np
import torch
import torch.nn.functional as F

from sim.alignment import task as tk
from sim.alignment.losses import bradley_terry_loss, dpo_loss
from sim.core.models import linear
from sim.transformers.transformer import TinyTransformer, TransformerConfig

STAGES = ("pretrain", "sft", "reward", "dpo", "rlhf", "hack")
STEPS = {"pretrain": 300, "sft": 200, "reward": 150, "dpo": 200, "rlhf": 250, "hack": 200}
POLICY_STAGES = ("dpo", "rlhf", "hack")  # tuned from the SFT model, measured against the reward model and the rule
SAMPLED = ("pretrain", "sft", "dpo", "rlhf", "hack")  # the models whose answers are compared side by side
CONFIG = TransformerConfig(vocab_size=len(tk.VOCAB), block_size=tk.SEQ_LEN, n_layer=2, n_head=2, d_model=32, d_ff=64)
LR = {"pretrain": 3e-3, "sft": 2e-3, "reward": 1e-3, "dpo": 1e-3, "rlhf": 4e-3, "hack": 4e-3}
BATCH = 64
EVAL_EVERY = 10  # steps of a stage between two measurements
EVAL_PROMPTS = 128  # distinct prompts held out: measured on, never trained on after pretraining
TRAIN_PAIRS, HELD_OUT_PAIRS = 512, 256  # the held-out pairs' prompts are the held-out prompts
MAX_STEPS = {"pretrain": 2000, "sft": 2000, "reward": 2000, "dpo": 2000, "rlhf": 2000, "hack": 2000}


def _seed(*parts) -> int:
    return zlib.crc32(repr(parts).encode())


def _gen(*parts) -> torch.Generator:
    return torch.Generator().manual_seed(_seed(*parts))


def answer_token_logps(model: TinyTransformer, prompt: torch.Tensor, answer: torch.Tensor) -> torch.Tensor:
    """(n, GEN_LEN) log p(answer token | prompt, earlier answer tokens) under `model`."""
    seq = torch.cat([prompt, answer], dim=1)
    logits = model(seq[:, :-1])[:, tk.ANSWER_AT - 1:]  # the positions that predict the answer's tokens
    return torch.log_softmax(logits, dim=-1).gather(-1, answer.unsqueeze(-1)).squeeze(-1)


def answer_logps(model: TinyTransformer, prompt: torch.Tensor, answer: torch.Tensor) -> torch.Tensor:
    """(n,) log pi(answer | prompt): the sum over the answer's tokens."""
    return answer_token_logps(model, prompt, answer).sum(dim=1)


@torch.no_grad()
def sample(model: TinyTransformer, prompt: torch.Tensor, generator: torch.Generator | None,
           greedy: bool = False) -> torch.Tensor:
    """(n, GEN_LEN) answers: GEN_LEN tokens drawn one after another (temperature 1), or the most likely each time."""
    was = model.training
    model.eval()
    seq = prompt
    for _ in range(tk.GEN_LEN):
        logits = model(seq)[:, -1]
        nxt = logits.argmax(-1, keepdim=True) if greedy else torch.multinomial(torch.softmax(logits, -1), 1,
                                                                               generator=generator)
        seq = torch.cat([seq, nxt], dim=1)
    model.train(was)
    return seq[:, prompt.size(1):]


def reward_model(sft: TinyTransformer, generator: torch.Generator) -> TinyTransformer:
    """A copy of the SFT model whose head gives one score per position instead of next-token logits."""
    rm = copy.deepcopy(sft)
    rm.lm_head = linear(CONFIG.d_model, 1, generator=generator)
    return rm


def raw_rewards(rm: TinyTransformer, prompt: torch.Tensor, answer: torch.Tensor) -> torch.Tensor:
    """(n,) the reward model's reward: the sum of its scores at the answer's tokens."""
    seq = torch.cat([prompt, answer], dim=1)
    return rm(seq)[:, tk.ANSWER_AT:, 0].sum(dim=1)


def sft_loss(model: TinyTransformer, seq: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of next tokens counted where mask is 1 (the answer's tokens): sum(mask * nll) / sum(mask)."""
    logits = model(seq[:, :-1])
    nll = F.cross_entropy(logits.reshape(-1, logits.size(-1)), seq[:, 1:].reshape(-1), reduction="none")
    m = mask.expand(seq.size(0), -1).reshape(-1)
    return (nll * m).sum() / m.sum()


class PipelineRun:
    """The whole pipeline as one live run. Settings: seed, DPO's beta, RLHF's KL weight, the weight of the chosen
    answers' own log-likelihood added to DPO's loss (0: DPO as published; 1 by default: DPO + NLL, as "RPO", Pang et
    al. 2024, and TRL's rpo_alpha: without it this small model also pushes probability off the rejected answers onto
    malformed ones), and the steps of each stage."""

    def __init__(self, seed: int = 0, beta: float = 1.0, kl_weight: float = 0.5, nll_weight: float = 1.0,
                 steps: dict | None = None):
        if not (0 < beta <= 10 and 0 <= kl_weight <= 10 and 0 <= nll_weight <= 10):
            raise ValueError("invalid:settings")
        self.seed, self.beta, self.kl_weight, self.nll_weight = seed, beta, kl_weight, nll_weight
        self.stage_steps = dict(STEPS if steps is None else steps)
        if set(self.stage_steps) != set(STAGES) or any(not 1 <= self.stage_steps[s] <= MAX_STEPS[s] for s in STAGES):
            raise ValueError("invalid:steps")
        self.starts = dict(zip(STAGES, np.cumsum([0] + [self.stage_steps[s] for s in STAGES[:-1]]).tolist(),
                               strict=True))
        self.total = sum(self.stage_steps.values())
        self.steps = 0
        self.model = TinyTransformer(CONFIG, _gen(seed, "init"))
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=LR["pretrain"])
        self.batches = _gen(seed, "batches")
        everything = tk.all_prompts()
        order = torch.randperm(len(everything), generator=_gen(seed, "eval prompts"))
        self.eval_prompts = everything[order[:EVAL_PROMPTS]]
        self.train_prompts = everything[order[EVAL_PROMPTS:]]  # what SFT, the training pairs and RLHF draw from
        g = _gen(seed, "train pairs")
        self.train_pairs = tk.preferences(_draw(self.train_prompts, TRAIN_PAIRS, g), g)
        g = _gen(seed, "held-out pairs")
        self.held_out = tk.preferences(_draw(self.eval_prompts, HELD_OUT_PAIRS, g), g)
        self.answers: dict[str, torch.Tensor] = {}  # stage -> its answers to the held-out prompts, latest measured
        self.snapshots: dict[str, TinyTransformer] = {}  # stage -> its model when it finished
        self.rm: TinyTransformer | None = None
        self.reward_shift, self.reward_scale = 0.0, 1.0
        self.ref: TinyTransformer | None = None
        # curves: stage -> name -> (global steps, values)
        self.curves: dict[str, dict[str, tuple[list[int], list[float]]]] = {s: {} for s in STAGES}
        self.diverged = False
        self._measure("pretrain")

    # ---- the contract ----
    @property
    def stopped(self) -> bool:
        return self.steps >= self.total or self.diverged

    def shared(self) -> tuple:
        return (self.eval_prompts, self.train_prompts, self.train_pairs, self.held_out)

    def stage(self, step: int | None = None) -> str:
        """The stage a step belongs to (the one training now, or the last when all are done)."""
        step = self.steps if step is None else step
        return next((s for s in reversed(STAGES) if step >= self.starts[s]), STAGES[0])

    def advance(self, n: int) -> None:
        for _ in range(n):
            if self.stopped:
                return
            s = self.stage()
            loss = getattr(self, f"_step_{s}")()
            if not np.isfinite(loss):
                self.diverged = True
                return
            self._record(s, "loss", loss)
            self.steps += 1
            done = self.steps - self.starts[s]
            if done == self.stage_steps[s]:
                self._finish(s)
            elif done % EVAL_EVERY == 0:
                self._measure(s)

    # ---- stages ----
    def _opt_step(self, loss: torch.Tensor) -> float:
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def _step_pretrain(self) -> float:
        x, y = tk.text_batch(BATCH, self.batches)
        logits = self.model(x)
        return self._opt_step(F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1)))

    def _step_sft(self) -> float:
        p = _draw(self.train_prompts, BATCH, self.batches)
        seq = torch.cat([p, tk.answers(p, self.batches, None)], dim=1)
        return self._opt_step(sft_loss(self.model, seq, tk.sft_mask()))

    def _pairs(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        i = torch.randint(0, TRAIN_PAIRS, (BATCH,), generator=self.batches)
        d = self.train_pairs
        return d.prompt[i], d.chosen[i], d.rejected[i]

    def _step_reward(self) -> float:
        p, c, r = self._pairs()
        return self._opt_step(bradley_terry_loss(raw_rewards(self.model, p, c), raw_rewards(self.model, p, r)))

    def _step_dpo(self) -> float:
        p, c, r = self._pairs()
        with torch.no_grad():
            ref_c, ref_r = answer_logps(self.ref, p, c), answer_logps(self.ref, p, r)
        pi_c = answer_logps(self.model, p, c)
        loss = dpo_loss(pi_c, answer_logps(self.model, p, r), ref_c, ref_r, self.beta)
        if self.nll_weight:
            loss = loss - self.nll_weight * pi_c.mean() / tk.GEN_LEN
        return self._opt_step(loss)

    def _step_rlhf(self, kl_weight: float | None = None) -> float:
        kl_weight = self.kl_weight if kl_weight is None else kl_weight
        p = _draw(self.train_prompts, BATCH, self.batches)
        a = sample(self.model, p, self.batches)
        logp = answer_logps(self.model, p, a)
        with torch.no_grad():
            r = self.reward(p, a)
            kl = logp.detach() - answer_logps(self.ref, p, a)  # a sample of the KL from the SFT model
            shaped = r - kl_weight * kl
            # the baseline: the batch's mean; divided by the batch's spread, so the step's size does not follow the
            # reward's scale
            advantage = (shaped - shaped.mean()) / shaped.std().clamp_min(1e-3)
        self._opt_step(-(advantage * logp).mean())
        return float(r.mean())  # RLHF's curve is its reward, not its surrogate loss

    def _step_hack(self) -> float:
        return self._step_rlhf(kl_weight=0.0)

    # ---- moving between stages ----
    def _finish(self, s: str) -> None:
        self._measure(s)
        if s in SAMPLED:
            self.snapshots[s] = copy.deepcopy(self.model).eval()
        nxt = STAGES[STAGES.index(s) + 1] if s != STAGES[-1] else None
        if nxt is None:
            return
        if nxt == "reward":
            self.ref = self.snapshots["sft"]
            self.model = reward_model(self.ref, _gen(self.seed, "reward head"))
        else:
            if s == "reward":
                self.rm = self.model.eval()
                for q in self.rm.parameters():
                    q.requires_grad_(False)
                self._normalise_rewards()
            if nxt in POLICY_STAGES:
                self.model = copy.deepcopy(self.snapshots["sft"]).train()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=LR[nxt])
        self.batches = _gen(self.seed, "batches", nxt)
        self._measure(nxt)

    @torch.no_grad()
    def _normalise_rewards(self) -> None:
        """Shift and scale the reward model's output so that the SFT model's answers score 0 on average with a spread
        of 1 (as InstructGPT normalises its reward model): a KL weight then means the same for every seed."""
        a = sample(self.ref, self.eval_prompts, _gen(self.seed, "reward scale"))
        r = raw_rewards(self.rm, self.eval_prompts, a)
        self.reward_shift, self.reward_scale = float(r.mean()), float(r.std().clamp_min(1e-3))

    def reward(self, prompt: torch.Tensor, answer: torch.Tensor) -> torch.Tensor:
        """(n,) the trained reward model's normalised reward."""
        return (raw_rewards(self.rm, prompt, answer) - self.reward_shift) / self.reward_scale

    def _record(self, s: str, name: str, value: float) -> None:
        xs, ys = self.curves[s].setdefault(name, ([], []))
        xs.append(self.steps)
        ys.append(float(value))

    @torch.no_grad()
    def _measure(self, s: str) -> None:
        """The stage's measurements at this step, on fixed prompts and answers drawn with a generator of this step."""
        if s == "reward":
            d = self.held_out
            self._record(s, "accuracy", float((raw_rewards(self.model, d.prompt, d.chosen)
                                               > raw_rewards(self.model, d.prompt, d.rejected)).float().mean()))
            return
        a = sample(self.model, self.eval_prompts, _gen(self.seed, "eval", self.steps))
        self.answers[s] = a
        m = scores(self.model, self.eval_prompts, a, self.reward if self.rm is not None else None, self.ref)
        for k, v in m.items():
            self._record(s, k, v)

    # ---- reading ----
    def frame(self) -> dict:
        """Per stage: its first step, its steps, and its curves as arrays (global steps, values); the stage now."""
        stages = []
        for s in STAGES:
            curves = {k: (np.asarray(x, dtype=np.int32), np.asarray(y, dtype=np.float32))
                      for k, (x, y) in self.curves[s].items()}
            stages.append({"stage": s, "start": self.starts[s], "steps": self.stage_steps[s], "curves": curves})
        return {"steps": self.steps, "total": self.total, "stage": self.stage(), "stopped": self.stopped,
                "diverged": self.diverged, "stages": stages}

    def last(self, s: str, name: str) -> float | None:
        c = self.curves[s].get(name)
        return c[1][-1] if c and c[1] else None

    def models(self) -> dict[str, TinyTransformer]:
        """The models there are at this step: finished stages' snapshots, and the one training now (as it is)."""
        out = dict(self.snapshots)
        s = self.stage()
        if s in SAMPLED and s not in out:
            out[s] = self.model
        return out

    @torch.no_grad()
    def answers_side_by_side(self, prompt: torch.Tensor) -> dict[str, list[str]]:
        """Each model's greedy answer to each prompt (n, 5), as text: stage -> [answer, ...]."""
        return {s: [tk.decode(a) for a in sample(m, prompt, None, greedy=True)] for s, m in self.models().items()}

    @torch.no_grad()
    def side_by_side(self, n: int) -> tuple[list[str], dict[str, list[str]], dict[str, list[bool]]]:
        """The first n evaluation prompts as text, each model's greedy answer to them (stage order), and whether
        each answer follows the rule."""
        prompt = self.eval_prompts[:n]
        models = self.models()
        answers, follows = {}, {}
        for s in SAMPLED:
            if s in models:
                a = sample(models[s], prompt, None, greedy=True)
                answers[s] = [tk.decode(x) for x in a]
                follows[s] = tk.judge(prompt, a).follows.tolist()
        return [tk.decode(p) for p in prompt], answers, follows


def _draw(prompts: torch.Tensor, n: int, generator: torch.Generator) -> torch.Tensor:
    """(n, PROMPT_LEN + 1) prompts drawn uniformly, with replacement, from `prompts`."""
    return prompts[torch.randint(0, prompts.size(0), (n,), generator=generator)]


@torch.no_grad()
def scores(model: TinyTransformer, prompt: torch.Tensor, a: torch.Tensor, reward=None,
           ref: TinyTransformer | None = None) -> dict[str, float]:
    """`model`'s answers `a` to the prompts judged by the rule: the shares formatted, of distinct letters and following
    the rule; with a reward (a function of prompts and answers), their mean reward; with a reference, the KL from it
    (the mean over the samples of log pi - log pi_ref, an unbiased estimate of KL(pi || pi_ref))."""
    was = model.training
    model.eval()
    j = tk.judge(prompt, a)
    out = {"format": float(j.formatted.mean()), "distinct": float(j.distinct.mean()),
           "follows": float(j.follows.mean())}
    if reward is not None:
        out["reward"] = float(reward(prompt, a).mean())
    if ref is not None:
        out["kl"] = float((answer_logps(model, prompt, a) - answer_logps(ref, prompt, a)).mean())
    model.train(was)
    return out


def outcome(run: PipelineRun) -> dict[str, float | None]:
    """The figures a finished run is judged by (benchmarks/assistant_pipeline.py, the page's summary)."""
    pre = run.curves["pretrain"]
    return {"pretrain_format": pre["format"][1][-1], "sft_format": run.last("sft", "format"),
            "sft_follows": run.last("sft", "follows"), "rm_accuracy": run.last("reward", "accuracy"),
            "dpo_follows": run.last("dpo", "follows"), "rlhf_follows": run.last("rlhf", "follows"),
            "hack_follows": run.last("hack", "follows"), "hack_distinct": run.last("hack", "distinct"),
            "dpo_format": run.last("dpo", "format"), "sft_distinct": run.last("sft", "distinct"),
            "rlhf_reward": run.last("rlhf", "reward"), "hack_reward": run.last("hack", "reward"),
            "rlhf_kl": run.last("rlhf", "kl"), "hack_kl": run.last("hack", "kl"), "dpo_kl": run.last("dpo", "kl"),
            "sft_reward": _first(run, "dpo", "reward")}


def _first(run: PipelineRun, s: str, name: str) -> float | None:
    c = run.curves[s].get(name)
    return c[1][0] if c and c[1] else None
