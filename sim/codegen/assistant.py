"""The assistant lab's live run (its "pipeline" section) as a standalone script: the supervised stages of the
pipeline, pretraining on the letter text and then SFT on prompt-answer demonstrations, on the tiny GPT
(sim.alignment.pipeline.PipelineRun's first two stages, sim.alignment.task's data).

The reward model, DPO and RLHF stages that follow in the lab are left out: they would triple the file. The script
stops after SFT; the pipeline's settings (beta, the KL and NLL weights) only act in those later stages."""
from __future__ import annotations

from sim.alignment.pipeline import BATCH, CONFIG, LR, STEPS
from sim.codegen import header, main_block
from sim.codegen import section as code_section
from sim.codegen.attention import describe, fill, gpt_code

SECTIONS = ("pipeline",)
IMPORTS = """import argparse
import json
import math
import zlib

import torch
import torch.nn.functional as F
from torch import nn
"""

DATA = '''
LETTERS, VOCAB = "abcdefgh", "abcdefgh=."  # token id = index in VOCAB; "=" ends a prompt, "." an answer
SEP, END = VOCAB.index("="), VOCAB.index(".")
SEQ_LEN = 9  # a prompt "abcd=" and its answer "efg."


def generator(*parts):
    """A generator seeded from names: each stage draws its batches from its own."""
    return torch.Generator().manual_seed(zlib.crc32(repr(parts).encode()))


def fluent_letters(n, length, g):
    """(n, length) letter ids, each different from the two before it: the text's only law."""
    out = torch.empty(n, length, dtype=torch.long)
    for j in range(length):
        k = min(j, 2)
        pick = torch.randint(0, len(LETTERS) - k, (n,), generator=g)
        if k:  # the pick-th letter not among the previous k
            prev = out[:, j - k:j].sort(dim=1).values
            for c in range(k):
                pick = pick + (pick >= prev[:, c]).long()
        out[:, j] = pick
    return out


def train_prompts(seed):
    """Every fluent 4-letter prompt and "=", less the 128 the lab holds out for measuring."""
    grid = torch.cartesian_prod(*[torch.arange(len(LETTERS))] * 4)  # (8^4, 4)
    fluent = (grid[:, 1:] != grid[:, :-1]).all(dim=1) & (grid[:, 2:] != grid[:, :-2]).all(dim=1)
    everything = torch.cat([grid[fluent], torch.full((int(fluent.sum()), 1), SEP)], dim=1)  # (2016, 5)
    return everything[torch.randperm(len(everything), generator=generator(seed, "eval prompts"))[128:]]


def demonstrations(prompts, n, g):
    """(n, SEQ_LEN) prompts with well-formed answers: three different random letters and "."."""
    p = prompts[torch.randint(0, prompts.size(0), (n,), generator=g)]
    letters = torch.stack([torch.randperm(len(LETTERS), generator=g)[:3] for _ in range(n)])
    return torch.cat([p, letters, torch.full((n, 1), END)], dim=1)
'''

LOOP = '''

def main(steps):
    model = GPT(len(VOCAB), SEQ_LEN, $width, $layers, $heads, True, generator($seed, "init"))
    prompts, step = train_prompts($seed), 0
    for stage, stage_steps, lr, batches in (("pretrain", $pre_steps, $pre_lr, generator($seed, "batches")),
                                            ("sft", $sft_steps, $sft_lr, generator($seed, "batches", "sft"))):
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)  # a fresh optimizer for each stage
        for _ in range(min(stage_steps, steps - step)):
            seq = fluent_letters($b, SEQ_LEN, batches) if stage == "pretrain" else demonstrations(prompts, $b, batches)
            logits = model(seq[:, :-1])  # ($b, SEQ_LEN - 1, vocab): next-token logits
            if stage == "pretrain":  # next-token loss on the letter text, every position
                loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), seq[:, 1:].reshape(-1))
            else:  # the same loss on demonstrations, counted on the answer's tokens only
                nll = F.cross_entropy(logits.reshape(-1, logits.size(-1)), seq[:, 1:].reshape(-1), reduction="none")
                m = (torch.arange(SEQ_LEN - 1) >= 4).float().expand(seq.size(0), -1).reshape(-1)  # answer targets
                loss = (nll * m).sum() / m.sum()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            step += 1
            print(json.dumps({"step": step, "stage": stage, "loss": loss.item()}))
            if not math.isfinite(loss.item()):
                return  # diverged: the lab stops the pipeline here
'''


def script(params: dict, link: str) -> str:
    """The standalone script of the pipeline's pretraining and SFT stages."""
    v = params
    code_section(v, SECTIONS, "assistant")  # NoScript for a section without a live run
    c, seed = CONFIG, v["pipe_seed"]
    lines = [f"The assistant lab's pipeline, its supervised stages: a tiny GPT ({c.n_layer} blocks, {c.n_head} heads, "
             f"width {c.d_model}) pretrained {STEPS['pretrain']} steps on the letter text, then fine-tuned "
             f"{STEPS['sft']} steps (SFT) on demonstrations; Adam, batches of {BATCH}, seed {seed}. The later stages "
             "(reward model, DPO, RLHF) are not in this file."]
    loop = fill(LOOP, width=c.d_model, layers=c.n_layer, heads=c.n_head, seed=seed, pre_steps=STEPS["pretrain"],
                pre_lr=LR["pretrain"], sft_steps=STEPS["sft"], sft_lr=LR["sft"], b=BATCH)
    return (header("Assistant lab, pretraining and SFT", link) + describe(lines) + IMPORTS + DATA
            + gpt_code("learned", ffn=c.d_ff // c.d_model) + loop + main_block(STEPS["pretrain"] + STEPS["sft"]))
