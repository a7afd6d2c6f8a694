"""What the pipeline section says of a run, chosen from the run's own measurements: every stage's latest figures, the
answers RLHF without the KL penalty gives (with the reward model's scores of them, against rule-following answers to
the same prompts) and how that policy compares with the penalised one, and what the DPO curve holds.

Each function returns sayings: (i18n key, params) pairs, a param being a number, a text or a list of sayings; the
page fills them in (labs.assistant.say). The wording is picked by comparing the figures as they are shown (rounded),
so a sentence never contradicts the numbers beside it.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import torch

from sim.alignment import task as tk
from sim.alignment.pipeline import EVAL_EVERY, PipelineRun, _gen, outcome
from sim.core.text import md

Said = tuple[str, dict]
TOP = 3  # answers of the policy without the penalty named
# what an answer is, by the first of the rule's checks it fails: an end mark where a letter should be, the format
# broken otherwise, a letter repeated, another first letter than the prompt's; or it follows the rule
KINDS = ("ends_early", "malformed", "repeats", "other_first", "follows")


def pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.0%}"


def num(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def summary(run: PipelineRun, beta: float, kl_weight: float) -> list[Said]:
    """The head, then one line for each stage measured so far (its latest measurement, as the curves end)."""
    o = outcome(run)
    out: list[Said] = [("asst.pipe.sum.head", {"n": len(run.eval_prompts), "every": EVAL_EVERY,
                                                "pool": f"{len(run.train_prompts):,}",
                                                "all": f"{len(run.train_prompts) + len(run.eval_prompts):,}"})]
    out.append(("asst.pipe.sum.pretrain", {"format": pct(o["pretrain_format"])}))
    if o["sft_format"] is not None:
        out.append(("asst.pipe.sum.sft", {"format": pct(o["sft_format"]), "follows": pct(o["sft_follows"])}))
    if o["rm_accuracy"] is not None:
        out.append(("asst.pipe.sum.reward", {"accuracy": pct(o["rm_accuracy"]), "pairs": len(run.held_out)}))
    for s, setting in (("dpo", {"beta": beta}), ("rlhf", {"kl_weight": kl_weight}), ("hack", {})):
        if run.last(s, "follows") is not None:
            extra = {"distinct": pct(o["hack_distinct"])} if s == "hack" else {}
            out.append((f"asst.pipe.sum.{s}", {"follows": pct(run.last(s, "follows")),
                                               "reward": num(run.last(s, "reward")), "kl": num(run.last(s, "kl")),
                                               **setting, **extra}))
    return out


@dataclass(frozen=True)
class Answers:
    """A policy's answers to the held-out prompts at its latest measurement, with the reward model's reward of each
    and the first check of the rule each fails (KINDS); and rule-following answers to the same prompts (drawn at
    random: the prompt's letter first, two other letters) with their mean reward."""

    step: int  # the step they were measured at
    texts: list[str]
    rewards: np.ndarray
    kinds: np.ndarray
    references: list[str]
    reference: float

    def top(self, n: int = TOP) -> list[tuple[str, int, float]]:
        """The n most frequent answers: (answer, how many prompts got it, its mean reward)."""
        counts = Counter(self.texts).most_common(n)
        return [(a, k, float(np.mean([r for x, r in zip(self.texts, self.rewards, strict=True) if x == a])))
                for a, k in counts]

    def count(self, kind: str) -> int:
        return int((self.kinds == kind).sum())


def trained(run: PipelineRun, stage: str) -> bool:
    """The stage has been measured after at least one of its steps (its first measurement is the model it starts
    from)."""
    c = run.curves[stage].get("format" if stage != "reward" else "accuracy")
    return c is not None and c[0][-1] > run.starts[stage]


@torch.no_grad()
def answers(run: PipelineRun, stage: str) -> Answers | None:
    """The stage's answers as measured last (the ones its latest curve points and the summary count), or None before
    it has trained a step or without a reward model."""
    if run.rm is None or not trained(run, stage):
        return None
    c = run.curves[stage]["follows"]
    p, a = run.eval_prompts, run.answers[stage]
    j = tk.judge(p, a)
    early = (a[:, :tk.ANSWER_LEN] == tk.END_ID).any(dim=1).numpy()
    kinds = np.select([early, ~j.formatted, ~j.distinct, ~j.starts], KINDS[:-1], KINDS[-1])
    good = tk.answers(p, _gen(run.seed, "reference answers"), True)
    return Answers(int(c[0][-1]), [tk.decode(x) for x in a], run.reward(p, a).numpy(), kinds,
                   [tk.decode(x) for x in good], float(run.reward(p, good).mean()))


def hacking(run: PipelineRun, kl_weight: float) -> list[Said]:
    """What RLHF without the KL penalty did, once it has trained: its most frequent answers and their rewards, what
    its answers break, whether the reward model scores its rule-breaking answers above rule-following ones (the
    flaw it found) or not, whether it collapsed onto one answer, and its reward and rule share against RLHF's."""
    h = answers(run, "hack")
    if h is None:
        return []
    n, distinct = len(h.texts), len(set(h.texts))
    top = [("asst.pipe.hack.item", {"answer": md(a), "n": k, "reward": num(r)}) for a, k, r in h.top()]
    kinds = [(f"asst.pipe.hack.kind.{k}", {"k": h.count(k)}) for k in KINDS if h.count(k)]
    out: list[Said] = [("asst.pipe.hack.top" if distinct > 1 else "asst.pipe.hack.top_one",
                        {"steps": h.step - run.starts["hack"], "n": n, "top": top, "distinct": distinct,
                         "kinds": kinds})]
    bad = h.kinds != "follows"
    if not bad.any():
        out.append(("asst.pipe.hack.all_follow", {}))
    else:
        r_bad, r_ok = num(float(h.rewards[bad].mean())), num(h.reference)
        out.append(("asst.pipe.hack.found" if float(r_bad) > float(r_ok) else "asst.pipe.hack.not_found",
                    {"bad": r_bad, "ok": r_ok}))
    answer, k, _ = h.top(1)[0]
    if 2 * k >= n and distinct > 1:
        out.append(("asst.pipe.hack.collapsed", {"answer": md(answer), "k": k, "n": n}))
    hack = {m: run.last("hack", m) for m in ("reward", "follows", "kl")}
    rlhf = {m: run.last("rlhf", m) for m in ("reward", "follows", "kl")}
    more = float(num(hack["reward"])) > float(num(rlhf["reward"]))
    worse = round(100 * hack["follows"]) < round(100 * rlhf["follows"])
    out.append((f"asst.pipe.hack.{'more' if more else 'less'}_{'worse' if worse else 'better'}",
                {"hack": num(hack["reward"]), "rlhf": num(rlhf["reward"]), "hack_follows": pct(hack["follows"]),
                 "rlhf_follows": pct(rlhf["follows"]), "hack_kl": num(hack["kl"]), "rlhf_kl": num(rlhf["kl"]),
                 "kl": kl_weight}))
    if kl_weight == 0:
        out.append(("asst.pipe.hack.same_kl", {}))
    return out


def dpo_note(nll_weight: float) -> Said:
    """What DPO's loss (and its curve) holds at this setting: the chosen answers' likelihood term too (as RPO adds
    it), or DPO alone."""
    return ("asst.pipe.dpo.rpo", {"w": nll_weight}) if nll_weight else ("asst.pipe.dpo.alone", {})


def dpo_format(run: PipelineRun) -> list[Said]:
    """Once DPO has trained, the share of its answers in the format against SFT's (latest measurements)."""
    if not trained(run, "dpo"):
        return []
    return [("asst.pipe.dpo.format", {"dpo": pct(run.last("dpo", "format")), "sft": pct(run.last("sft", "format"))})]
