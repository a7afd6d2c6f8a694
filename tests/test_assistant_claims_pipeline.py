"""The assistant lab's pipeline section says what its run shows (issue 41): every sentence is picked by
sim.alignment.report from the run's own measurements, and agrees with the numbers it shows. Runs: the page's own
pipeline_spec at the defaults over 5 seeds and at 2 other settings, each stage a few steps long (the sentences must
agree with the numbers whatever the run did; the full-length runs' figures are in benchmarks/assistant_pipeline.py)."""
import re

import numpy as np
import pytest
import torch

from labs.assistant.pipeline import PARAMS, frame_labels, pipeline_spec
from labs.assistant.say import said, say
from sim.alignment import pipeline as pl
from sim.alignment import report
from sim.alignment import task as tk
from sim.core.threads import configure_threads
from ui.i18n import catalogue, language

configure_threads()  # as the app: one intra-op thread (a second one only spins on a busy machine)
DEFAULTS = {p.name: p.default for p in PARAMS}
SHORT = {"pretrain": 12, "sft": 11, "reward": 10, "dpo": 12, "rlhf": 11, "hack": 12}
SETTINGS = [{"pipe_seed": s} for s in range(5)] + [{"pipe_kl": 0.0, "pipe_seed": 5},
                                                   {"pipe_nll": 0.0, "pipe_beta": 4.0, "pipe_seed": 6}]
CODE = re.compile(r"`+ (.*?) `+")  # an answer quoted as code (sim.core.text.md)


def as_shown(x: str) -> float:
    """A number as the page shows it ("83%", "1.74", "-0.02") as a float."""
    return float(x.rstrip("%")) / 100 if x.endswith("%") else float(x)


@pytest.fixture(scope="module")
def recorded():
    """(settings, the finished short run, the prompts it trained on) for each setting, built as the page builds it;
    the prompts: those of SFT's demonstrations ("sft") and of every answer sampled ("sampled")."""
    out = []
    for s in SETTINGS:
        v = {**DEFAULTS, **s}
        seen: dict[str, list[torch.Tensor]] = {"sft": [], "sampled": []}
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(pl, "sft_loss", lambda model, seq, mask, f=pl.sft_loss, seen=seen: (
                seen["sft"].append(seq[:, :5]), f(model, seq, mask))[1])
            mp.setattr(pl, "sample", lambda model, p, g, greedy=False, f=pl.sample, seen=seen: (
                seen["sampled"].append(p), f(model, p, g, greedy))[1])
            run = pipeline_spec(v, steps=SHORT).build()
            run.advance(run.total)
        assert run.stopped and not run.diverged
        out.append((v, run, seen))
    return out


@pytest.fixture(scope="module")
def runs(recorded):
    return [(v, run) for v, run, _ in recorded]


def by_rule(prompt: str, answer: str) -> str:
    """An answer's kind, by the rule written out on the text (independent of tk.judge)."""
    letters, end = answer[:3], answer[3]
    if "." in letters:
        return "ends_early"
    if not all(c in tk.LETTERS for c in letters) or end != ".":
        return "malformed"
    if len(set(letters)) < 3:
        return "repeats"
    return "follows" if letters[0] == prompt[0] else "other_first"


# ---------- 4: the evaluation prompts are held out for real ----------
def test_the_evaluation_prompts_are_held_out_from_every_training_stage(recorded):
    """Fails on the old engine: its 128 evaluation prompts were draws with replacement (125 distinct at seed 0), all
    among SFT's training prompts and 35 among the preference pairs'."""
    key = lambda p: {tuple(r) for r in p.tolist()}  # noqa: E731
    for _, run, seen in recorded:
        held = key(run.eval_prompts)
        assert len(held) == len(run.eval_prompts) == pl.EVAL_PROMPTS  # distinct
        assert held.isdisjoint(key(run.train_prompts)) and len(held | key(run.train_prompts)) == 8 * 7 * 6 * 6
        assert seen["sft"] and held.isdisjoint(set().union(*map(key, seen["sft"])))  # SFT's demonstrations
        assert held.isdisjoint(key(run.train_pairs.prompt))  # the reward model's and DPO's pairs
        assert key(run.held_out.prompt) <= held  # the reward model is scored on held-out prompts too
        trained = [p for p in seen["sampled"] if p.size(0) == pl.BATCH]  # RLHF's (measurements answer all 128)
        assert len(trained) == SHORT["rlhf"] + SHORT["hack"] and held.isdisjoint(set().union(*map(key, trained)))


def test_the_summary_says_held_out_and_counts_them(runs):
    for v, run in runs:
        head = report.summary(run, v["pipe_beta"], v["pipe_kl"])[0]
        assert head[0] == "asst.pipe.sum.head"
        assert head[1]["n"] == len({tuple(r) for r in run.eval_prompts.tolist()}) == 128
        assert head[1]["pool"] == "1,888" and head[1]["all"] == "2,016"
    for lang in ("en", "zh"):
        assert "128" not in catalogue(lang)["asst.pipe.sum.head"]  # the count is the run's, not written in


def test_the_summary_lines_are_the_latest_measurements(runs):
    for v, run in runs:
        lines = dict(report.summary(run, v["pipe_beta"], v["pipe_kl"]))
        for s in ("dpo", "rlhf", "hack"):
            p = lines[f"asst.pipe.sum.{s}"]
            assert as_shown(p["follows"]) == pytest.approx(run.curves[s]["follows"][1][-1], abs=0.005)
            assert as_shown(p["reward"]) == pytest.approx(run.curves[s]["reward"][1][-1], abs=0.005)
        assert lines["asst.pipe.sum.reward"]["pairs"] == len(run.held_out)
        with language("en"):
            text = said(report.summary(run, v["pipe_beta"], v["pipe_kl"]), "\n")
        assert "only" not in text and "still" not in text  # no word that assumes an outcome


# ---------- 3: reward hacking, described from the run's own answers and rewards ----------
def test_the_hacking_text_describes_the_answers_the_policy_gave(runs):
    """Fails on the old text: it quoted `ddd.` and said the reward model learnt "that letter is good" whatever the
    run did (at seed 0 the old policy answered `aaa.`, `cbc.`, ..., scored below rule-following answers; at seed 1
    it gave `ffh.` to every prompt and earned less reward than the penalised policy)."""
    for v, run in runs:
        h = report.answers(run, "hack")
        prompts = [tk.decode(p) for p in run.eval_prompts]
        kinds = [by_rule(p, a) for p, a in zip(prompts, h.texts, strict=True)]
        assert list(h.kinds) == kinds
        assert np.mean([k == "follows" for k in kinds]) == pytest.approx(run.last("hack", "follows"))
        assert h.rewards.mean() == pytest.approx(run.last("hack", "reward"), abs=1e-5)  # the summary's reward
        sayings = report.hacking(run, v["pipe_kl"])
        top = dict(sayings)["asst.pipe.hack.top" if len(set(h.texts)) > 1 else "asst.pipe.hack.top_one"]
        assert sum(p["k"] for _, p in top["kinds"]) == top["n"] == len(prompts)
        for key, p in top["kinds"]:
            assert p["k"] == kinds.count(key.rsplit(".", 1)[1])
        for _, item in top["top"]:  # each quoted answer: one the policy gave, how often, its mean reward
            answer = CODE.findall(item["answer"])[0]
            mine = [r for x, r in zip(h.texts, h.rewards, strict=True) if x == answer]
            assert item["n"] == len(mine) > 0 and as_shown(item["reward"]) == pytest.approx(np.mean(mine), abs=0.005)
        for lang in ("en", "zh"):
            with language(lang):
                text = said(sayings)
            assert set(CODE.findall(text)) <= set(h.texts), text  # no answer quoted that the policy did not give
        assert "ddd." not in catalogue("en")["asst.pipe.hacking"]


def test_the_exploit_verdict_follows_the_rewards(runs):
    """"found" only when the reward model scores the rule-breaking answers above rule-following ones to the same
    prompts, as the two numbers in the sentence show."""
    seen = set()
    for v, run in runs:
        h = report.answers(run, "hack")
        said_ = dict(report.hacking(run, v["pipe_kl"]))
        bad = h.kinds != "follows"
        verdict = next(k for k in said_ if k in ("asst.pipe.hack.found", "asst.pipe.hack.not_found",
                                                  "asst.pipe.hack.all_follow"))
        seen.add(verdict)
        if not bad.any():
            assert verdict == "asst.pipe.hack.all_follow"
            continue
        p = said_[verdict]
        assert as_shown(p["bad"]) == pytest.approx(h.rewards[bad].mean(), abs=0.005)
        prompts = [tk.decode(q) for q in run.eval_prompts]
        assert all(by_rule(q, a) == "follows" for q, a in zip(prompts, h.references, strict=True))
        good = torch.tensor([tk.encode(a) for a in h.references])
        assert as_shown(p["ok"]) == pytest.approx(float(run.reward(run.eval_prompts, good).mean()), abs=0.005)
        assert (verdict == "asst.pipe.hack.found") == (as_shown(p["bad"]) > as_shown(p["ok"]))
    assert seen


def test_the_comparison_with_the_penalised_policy_follows_its_numbers(runs):
    for v, run in runs:
        said_ = dict(report.hacking(run, v["pipe_kl"]))
        key = next(k for k in said_ if k.rsplit(".", 1)[1] in ("more_worse", "more_better", "less_worse",
                                                               "less_better"))
        p = said_[key]
        more, worse = key.rsplit(".", 1)[1].split("_")
        assert (more == "more") == (as_shown(p["hack"]) > as_shown(p["rlhf"]))
        assert (worse == "worse") == (as_shown(p["hack_follows"]) < as_shown(p["rlhf_follows"]))
        assert as_shown(p["hack"]) == pytest.approx(run.last("hack", "reward"), abs=0.005)
        assert as_shown(p["rlhf"]) == pytest.approx(run.last("rlhf", "reward"), abs=0.005)
        assert p["kl"] == v["pipe_kl"] and (("asst.pipe.hack.same_kl" in said_) == (v["pipe_kl"] == 0))
        h = report.answers(run, "hack")
        top, k = max(((a, h.texts.count(a)) for a in set(h.texts)), key=lambda x: x[1])
        collapsed = said_.get("asst.pipe.hack.collapsed")
        assert (collapsed is not None) == (2 * k >= len(h.texts) and len(set(h.texts)) > 1)
        if collapsed:
            assert collapsed["k"] == k and top in collapsed["answer"]


def test_what_the_explanation_says_of_the_pairs_holds(runs):
    """asst.pipe.hacking: the pairs set answers starting with the prompt's letter against answers without it, about a
    quarter of those malformed; no answer of a pair holds the letter twice or an end mark in a letter's place."""
    for _, run in runs:
        d = run.train_pairs
        letter = d.prompt[:, :1]
        assert (d.chosen[:, 0] == letter[:, 0]).all() and not (d.rejected[:, :3] == letter).any()
        assert 0.15 < 1 - tk.judge(d.prompt, d.rejected).formatted.mean() < 0.35
        for a in (d.chosen, d.rejected):
            assert ((a[:, :3] == letter).sum(dim=1) <= 1).all() and not (a[:, :3] == tk.END_ID).any()


def test_the_explanation_assumes_no_outcome():
    for lang in ("en", "zh"):
        text = catalogue(lang)["asst.pipe.hacking"]
        assert "`" not in text  # it quotes no answer: the run's own are quoted beside it
    assert "learnt" not in catalogue("en")["asst.pipe.hacking"]


def test_nothing_is_said_of_a_stage_before_it_has_trained():
    run = pipeline_spec(DEFAULTS, steps=SHORT).build()
    run.advance(SHORT["pretrain"] + 2)
    assert report.hacking(run, 0.5) == [] and report.dpo_format(run) == []
    assert [k for k, _ in report.summary(run, 1.0, 0.5)] == ["asst.pipe.sum.head", "asst.pipe.sum.pretrain",
                                                            "asst.pipe.sum.sft"]


# ---------- 13: the DPO curve says it holds the NLL term ----------
def test_the_dpo_loss_curve_is_named_for_what_it_holds(runs):
    """Fails on the old page: the curve was named "DPO" whatever the NLL weight (1 by default: DPO + NLL, as RPO)."""
    with language("en"):
        assert "NLL" in frame_labels(1.0)["dpo_loss"] and "RPO" in frame_labels(0.5)["dpo_loss"]
        assert frame_labels(0.0)["dpo_loss"] == catalogue("en")["asst.pipe.stage.dpo"]
    assert report.dpo_note(1.0)[0] == "asst.pipe.dpo.rpo" and report.dpo_note(0.0)[0] == "asst.pipe.dpo.alone"
    for _, run in runs:
        (key, p), = report.dpo_format(run)
        assert as_shown(p["dpo"]) == pytest.approx(run.last("dpo", "format"), abs=0.005)
        assert as_shown(p["sft"]) == pytest.approx(run.last("sft", "format"), abs=0.005)
    dpo_loss = {v["pipe_nll"]: run.curves["dpo"]["loss"][1][0] for v, run in runs}
    assert dpo_loss[0.0] == pytest.approx(np.log(2), abs=1e-4)  # DPO alone starts at log 2 (policy = reference)
    assert dpo_loss[1.0] > np.log(2) + 0.1  # with the NLL term: log 2 + the chosen answers' NLL per token


# ---------- 14: the abbreviations are spelled out where the lab first uses them ----------
@pytest.mark.parametrize("lang,key,words", [
    ("en", "asst.sig.rl", ["Reinforcement learning from human feedback (RLHF)"]),
    ("en", "asst.pipe.intro", ["Supervised fine-tuning (SFT)", "Direct Preference Optimization (DPO)",
                               "reinforcement learning from human feedback (RLHF)",
                               "Kullback–Leibler (KL) divergence"]),
    ("zh", "asst.sig.rl", ["基于人类反馈的强化学习（RLHF）"]),
    ("zh", "asst.pipe.intro", ["指令微调（SFT）", "直接偏好优化（DPO）", "基于人类反馈的强化学习（RLHF）",
                               "KL 散度（Kullback–Leibler 散度）"]),
])
def test_abbreviations_are_spelled_out_at_first_use(lang, key, words):
    text = catalogue(lang)[key]
    for w in words:
        assert w in text, (lang, key, w)


def test_every_saying_is_in_both_catalogues(runs):
    keys = set()
    for v, run in runs:
        for s in (report.summary(run, v["pipe_beta"], v["pipe_kl"]) + report.hacking(run, v["pipe_kl"])
                  + [report.dpo_note(v["pipe_nll"])] + report.dpo_format(run)):
            keys.add(s[0])
            for lang in ("en", "zh"):
                with language(lang):
                    assert "{" not in say(s)
    for lang in ("en", "zh"):
        assert keys <= set(catalogue(lang))


class Finished:
    """What report.hacking reads of a run besides its answers: where the stage started and the latest figures."""

    starts = {"hack": 100}

    def __init__(self, hack: tuple[float, float, float], rlhf: tuple[float, float, float]):
        self.figures = {s: dict(zip(("reward", "follows", "kl"), v, strict=True)) for s, v in (("hack", hack),
                                                                                                ("rlhf", rlhf))}

    def last(self, s: str, name: str) -> float:
        return self.figures[s][name]


@pytest.mark.parametrize("texts,rewards,reference,hack,rlhf,kl,want", [
    # every outcome the short runs above do not reach; the figures are the full default runs' (seeds 1 and 0)
    (["ddd."] * 4, [0.16] * 4, 1.72, (0.16, 0.0, 12.86), (1.12, 0.59, 1.15), 0.5,
     ["top_one", "not_found", "less_worse"]),
    (["ca.."] * 3 + ["ce.."], [0.73, 0.73, 0.73, 0.63], 2.81, (0.71, 0.0, 11.8), (2.76, 0.91, 2.15), 0.5,
     ["top", "not_found", "collapsed", "less_worse"]),
    (["hab.", "dde.", "fgh.", "abc."], [1.004, 0.998, 1.5, 1.5], 1.0004, (1.18, 0.5, 3.0), (1.5, 0.5, 1.0), 0.0,
     ["top", "not_found", "less_better", "same_kl"]),  # rule-breaking answers' 1.001 against 1.0004: both "1.00"
    (["dab.", "dce.", "fac.", "abc."], [1.5, 1.2, 1.0, 1.0], 1.0, (1.18, 1.0, 3.0), (1.1, 0.9, 1.0), 0.5,
     ["top", "all_follow", "more_better"]),
])
def test_every_outcome_is_worded_from_its_figures(monkeypatch, texts, rewards, reference, hack, rlhf, kl, want):
    prompts = ["dhfg=", "dgeb=", "fadh=", "abhc="][:len(texts)]
    kinds = np.array([by_rule(p, a) for p, a in zip(prompts, texts, strict=True)])
    h = report.Answers(140, texts, np.array(rewards), kinds, [], reference)
    monkeypatch.setattr(report, "answers", lambda run, stage: h)
    sayings = report.hacking(Finished(hack, rlhf), kl)
    assert [k.rsplit(".", 1)[1] for k, _ in sayings] == want
    with language("en"):
        text = said(sayings)
    assert "{" not in text and f"{hack[0]:.2f}" in text and f"{rlhf[0]:.2f}" in text
