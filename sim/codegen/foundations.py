"""The foundations lab's two trainings as PyTorch files (float64, as the lab).

"embeddings": skip-gram with negative sampling on the built-in language's text (sim.language.embeddings.EmbedRun):
the same grammar and text (its sampler and seed), the same initial vectors, pairs and negatives (one numpy Generator
of the seed, drawn in the lab's order), plain SGD on the batch's mean loss; the loss of a step is that batch's loss,
before its update. The language is the page's, read from the link's `lang` (English without one).

"loop": the training loop with and without optimizer.zero_grad() (sim.autograd.loop.train) on the backprop
section's network (weights, input and target drawn by Python's random.Random(seed), as micrograd does); the loss of
a step is the loss of the forward pass before that step's update, of each run.
"""
from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from sim.codegen import header, main_block

SECTIONS = ("embeddings", "loop")

# the grammars of sim.language.grammar, written out: state -> [(word, probability, next state)]
_NOUNS_EN = ((" cat", 0.3), (" dog", 0.25), (" bird", 0.2), (" girl", 0.15), (" boy", 0.1))
_ADJS_EN = ((" small", 0.4), (" red", 0.3), (" old", 0.2), (" happy", 0.1))
_NOUNS_ZH = (("小猫", 0.3), ("小狗", 0.25), ("老师", 0.2), ("学生", 0.15), ("妈妈", 0.1))
GRAMMARS = {
    "en": {
        "start": [(" the", 0.6, "s_adj"), (" a", 0.4, "s_adj")],
        "s_adj": [*((w, 0.4 * p, "s_noun") for w, p in _ADJS_EN), *((w, 0.6 * p, "verb") for w, p in _NOUNS_EN)],
        "s_noun": [(w, p, "verb") for w, p in _NOUNS_EN],
        "verb": [(" sees", 0.4, "o_det"), (" likes", 0.3, "o_det"), (" chases", 0.2, "o_det"),
                 (" sleeps", 0.1, "end")],
        "o_det": [(" the", 0.5, "o_adj"), (" a", 0.5, "o_adj")],
        "o_adj": [*((w, 0.3 * p, "o_noun") for w, p in _ADJS_EN), *((w, 0.7 * p, "end") for w, p in _NOUNS_EN)],
        "o_noun": [(w, p, "end") for w, p in _NOUNS_EN],
        "end": [(".", 0.8, "start"), (" and", 0.2, "start")],
    },
    "zh": {
        "start": [*((w, 0.7 * p, "verb") for w, p in _NOUNS_ZH), ("今天", 0.3, "subj")],
        "subj": [(w, p, "verb") for w, p in _NOUNS_ZH],
        "verb": [("喜欢", 0.4, "obj"), ("看见", 0.3, "obj"), ("追", 0.2, "obj"), ("睡觉", 0.1, "end")],
        "obj": [("一只鸟", 0.3, "end"), ("一条鱼", 0.2, "end"), ("苹果", 0.2, "end"),
                *((w, 0.3 * p, "end") for w, p in _NOUNS_ZH)],
        "end": [("。", 0.8, "start"), ("，然后", 0.2, "start")],
    },
}
ACTIVATIONS = {"tanh": "nn.Tanh", "relu": "nn.ReLU", "sigmoid": "nn.Sigmoid"}


def language(link: str) -> str:
    """The page's language, from its link's `lang` (en without one)."""
    lang = parse_qs(urlsplit(link).query).get("lang", ["en"])[0]
    return lang if lang in GRAMMARS else "en"


def _rules(lang: str) -> str:
    lines = ["RULES = {  # state -> [(word, probability, next state)]: a probabilistic regular grammar"]
    for state, options in GRAMMARS[lang].items():
        lines.append(f"    {state!r}: [")
        line = "       "
        for option in options:
            item = f" {option!r},"
            if len(line) + len(item) > (116 if lang == "en" else 80):  # a Chinese character is two columns wide
                lines.append(line)
                line = "       "
            line += item
        lines += [line, "    ],"]
    return "\n".join(lines + ["}"])


def script(params: dict, link: str) -> str:
    section = params["section"]
    if section == "embeddings":
        return embeddings(params, link)
    if section == "loop":
        return loop(params, link)
    raise LookupError(f"the {section} section has no training to write out")


def embeddings(v: dict, link: str) -> str:
    lang = language(link)
    return (header(f"Foundations lab, word embeddings ({lang})", link) + f'''\
"""Word vectors learnt by skip-gram with negative sampling (word2vec) on a synthetic language's text.

loss(c, o, n_1..n_k) = -log sigmoid(u_o · v_c) - sum_j log sigmoid(-u_nj · v_c)   (v: word vectors, u: context vectors)
"""
import argparse
import json

import numpy as np
import torch
import torch.nn.functional as F

DIM, LR, SEED = {v["emb_dim"]}, {v["emb_lr"]!r}, {v["emb_seed"]}
WINDOW, NEGATIVES, BATCH = 2, 5, 32  # neighbours up to WINDOW words away; NEGATIVES drawn words per pair
{_rules(lang)}


def make_corpus(n_words=20_000):
    """The text (the same for every SEED), its pairs of words at most WINDOW apart, the negatives' distribution."""
    words = list(dict.fromkeys(w for options in RULES.values() for w, _, _ in options))
    rng, state, ids = np.random.default_rng(12345), "start", []
    for _ in range(n_words):
        options = RULES[state]
        word, _, state = options[rng.choice(len(options), p=[p for _, p, _ in options])]
        ids.append(words.index(word))
    ids = np.array(ids, dtype=np.int64)
    pairs = np.concatenate([np.stack([ids[max(0, -o):len(ids) - max(0, o)], ids[max(0, o):len(ids) + min(0, o)]], 1)
                            for o in range(-WINDOW, WINDOW + 1) if o != 0])  # (P, 2): centre, context
    freq = np.bincount(ids, minlength=len(words)) ** 0.75  # word2vec: the unigram distribution to the power 3/4
    return words, pairs, np.cumsum(freq / freq.sum())


words, pairs, noise = make_corpus()
V = len(words)
rng = np.random.default_rng(SEED)  # the initial vectors, then each step's pairs and negatives
W_in = torch.tensor((rng.random((V, DIM)) - 0.5) / DIM, requires_grad=True)  # (V, DIM) word vectors
W_out = torch.zeros(V, DIM, dtype=torch.float64, requires_grad=True)  # (V, DIM) context vectors
optimizer = torch.optim.SGD([W_in, W_out], lr=LR)


def main(steps):
    for step in range(1, steps + 1):
        pick = pairs[rng.integers(0, len(pairs), BATCH)]  # (BATCH, 2)
        neg = np.minimum(np.searchsorted(noise, rng.random((BATCH, NEGATIVES)), side="right"), V - 1)
        v = W_in[torch.from_numpy(pick[:, 0])]  # (B, DIM)
        u_o = W_out[torch.from_numpy(pick[:, 1])]  # (B, DIM)
        u_n = W_out[torch.from_numpy(neg)]  # (B, NEGATIVES, DIM)
        s_o, s_n = (v * u_o).sum(-1), torch.einsum("bkd,bd->bk", u_n, v)  # (B,), (B, NEGATIVES)
        loss = (F.softplus(-s_o).sum() + F.softplus(s_n).sum()) / BATCH  # -log sigmoid(s) = softplus(-s)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(json.dumps({{"step": step, "loss": loss.item()}}))
        if not (W_in.abs().max() < 1e6 and W_out.abs().max() < 1e6):  # the lab stops a run whose vectors blow up
            break
''' + main_block(1000))


def loop(v: dict, link: str) -> str:
    sizes = [v["n_in"]] + [v["width"]] * v["layers"] + [1]
    return (header("Foundations lab, the training loop with and without zero_grad()", link) + f'''\
"""The same network trained twice on one sample with SGD: calling optimizer.zero_grad() before each backward(),
and forgetting it (then .grad adds up every step's gradient). "loss" maps each run to its loss at that step.
"""
import argparse
import json
import math
import random

import torch
from torch import nn

SIZES = {sizes!r}  # inputs, hidden layers, one output
ACTIVATION, SEED, LR = {ACTIVATIONS[v["act"]]}, {v["seed"]}, {v["l_lr"]!r}


def draw():
    """The seed's weights, biases (uniform in [-1, 1], as micrograd), input and target."""
    rng = random.Random(SEED)
    pairs = list(zip(SIZES[:-1], SIZES[1:], strict=True))
    weights = [[[rng.uniform(-1, 1) for _ in range(a)] for _ in range(b)] for a, b in pairs]
    biases = [[rng.uniform(-1, 1) for _ in range(b)] for b in SIZES[1:]]
    x = [round(rng.uniform(-1, 1), 2) for _ in range(SIZES[0])]
    return weights, biases, x, round(rng.uniform(-1, 1), 2)


def make_net(weights, biases):
    layers = []
    for i, (W, b) in enumerate(zip(weights, biases, strict=True)):
        linear = nn.Linear(len(W[0]), len(W), dtype=torch.float64)
        with torch.no_grad():
            linear.weight.copy_(torch.tensor(W, dtype=torch.float64))
            linear.bias.copy_(torch.tensor(b, dtype=torch.float64))
        layers += [linear, ACTIVATION()] if i < len(weights) - 1 else [linear]
    return nn.Sequential(*layers)


def main(steps):
    weights, biases, x, y = draw()
    x, y = torch.tensor([x], dtype=torch.float64), torch.tensor([[y]], dtype=torch.float64)  # (1, n_in), (1, 1)
    runs = {{}}
    for name in ("with_zero_grad", "without_zero_grad"):
        net = make_net(weights, biases)
        runs[name] = (net, torch.optim.SGD(net.parameters(), lr=LR))
    stopped = set()
    for step in range(1, steps + 1):
        losses = {{}}
        for name, (net, optimizer) in runs.items():
            if name in stopped:
                continue
            if name == "with_zero_grad":
                optimizer.zero_grad()
            loss = ((net(x) - y) ** 2).sum()
            loss.backward()
            finite = all(torch.isfinite(p.grad).all() for p in net.parameters())
            if not (finite and math.isfinite(loss.item()) and loss.item() <= 1e10):  # diverged: the run stops
                stopped.add(name)
                continue
            losses[name] = loss.item()
            optimizer.step()
        print(json.dumps({{"step": step, "loss": losses}}))
''' + main_block(v["l_steps"]))
