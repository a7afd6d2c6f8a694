"""The attention lab's live runs as a standalone script: the tiny transformer of the "train" section (one model) or
of the "compare" section (a causal and an open model in lockstep), on the lab's task, with the page's settings and
seed (sim.transformers.transformer.lab_trainer, sim.transformers.tasks).

gpt_code() is the tiny GPT itself (sim.transformers.transformer.TinyTransformer written out), shared with the
language-model and assistant labs' scripts."""
from __future__ import annotations

import textwrap
from string import Template

from sim.codegen import header, main_block
from sim.codegen import section as code_section

SECTIONS = ("train", "compare")
LETTERS, SEP = "abcdefgh", "|"
CORPORA = {  # sim.transformers.tasks.CORPORA: the text task's default training texts
    "en": "the cat chases the dog. the dog chases the cat. the cat sat on the mat. the dog sat on the log. ",
    "zh": "猫追狗，狗追猫。猫坐在垫子上，狗坐在木头上。小猫追小狗，小狗追小猫。",
}
ANSWERS = {"copy": "p", "reverse": "p[::-1]", "sort": '"".join(sorted(p))', "repeat": "p * 2"}


def fill(template: str, **values) -> str:
    return Template(template).substitute(**values)


def describe(lines: list[str]) -> str:
    """The file's docstring: what it trains (each line a paragraph, wrapped)."""
    text = "\n".join(textwrap.fill(line, 116) for line in lines).replace('"""', "")
    return f'"""{text}\n"""\n'


IMPORTS = """import argparse
import json
import math

import torch
import torch.nn.functional as F
from torch import nn
"""

INIT = '''

def linear(n_in, n_out, g, bias=True):
    """nn.Linear with torch's default init, W and b ~ U(-1/sqrt(n_in), 1/sqrt(n_in)), drawn from generator g."""
    layer = nn.Linear(n_in, n_out, bias=bias)
    nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=g)
    if bias:
        nn.init.uniform_(layer.bias, -1 / math.sqrt(n_in), 1 / math.sqrt(n_in), generator=g)
    return layer


def embedding(n, d, g):
    """nn.Embedding with torch's default init, every entry ~ N(0, 1), drawn from generator g."""
    table = nn.Embedding(n, d)
    nn.init.normal_(table.weight, generator=g)
    return table
'''

SINUSOIDAL = '''

def sinusoidal(T, d):
    """(T, d) the original Transformer's fixed position vectors: sin on even columns, cos on odd."""
    pos = torch.arange(T, dtype=torch.float32)[:, None]
    freq = torch.exp(-math.log(10000.0) * torch.arange(0, d, 2, dtype=torch.float32) / d)
    pe = torch.zeros(T, d)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq[: d // 2])
    return pe
'''

MODEL = '''

class SelfAttention(nn.Module):
    """Multi-head self-attention with separate q, k, v and output projections (drawn in that order)."""

    def __init__(self, d, n_head, causal$args, g):
        super().__init__()
        self.n_head, self.causal$fields = n_head, causal$args
        self.q, self.k, self.v, self.o = (linear(d, d, g) for _ in range(4))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = (p(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for p in (self.q, self.k, self.v))
        att = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(q.size(-1)))  # (B, H, T, T) scores
        if self.causal:  # a position reads itself and the ones before it$window_doc
            mask = torch.ones(T, T, dtype=torch.bool).tril()$window_mask
            att = att.masked_fill(~mask, float("-inf"))
        y = torch.softmax(att, dim=-1) @ v  # (B, H, T, hs)
        return self.o(y.transpose(1, 2).contiguous().view(B, T, C))  # (B, T, C): the heads side by side


class Block(nn.Module):
    """Pre-LN block: x + attention(LN(x)), then x + FFN(LN(x)), the FFN $ffn x wider with GELU."""

    def __init__(self, d, n_head, causal$args, g):
        super().__init__()
        self.ln1, self.attn = nn.LayerNorm(d), SelfAttention(d, n_head, causal$args, g)
        self.ln2, self.up, self.down = nn.LayerNorm(d), linear(d, $ffn * d, g), linear($ffn * d, d, g)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))  # (B, T, C)
        return x + self.down(F.gelu(self.up(self.ln2(x))))  # (B, T, C)


class GPT(nn.Module):
    """Token embeddings + $pos_name position vectors, n_layer blocks, a final LayerNorm, next-token logits."""

    def __init__(self, vocab, block_size, d, n_layer, n_head, causal$args, g):
        super().__init__()
        self.tok = embedding(vocab, d, g)
        $pos_init
        self.blocks = nn.ModuleList(Block(d, n_head, causal$args, g) for _ in range(n_layer))
        self.ln_f, self.head = nn.LayerNorm(d), linear(d, vocab, g, bias=False)

    def forward(self, idx):  # idx (B, T) token ids
        x = self.tok(idx) + $pos_read  # (B, T, C)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))  # (B, T, vocab)
'''
POS = {
    "learned": ("learned", "self.pos = embedding(block_size, d, g)", "self.pos(torch.arange(idx.size(1)))"),
    "sinusoidal": ("fixed sinusoidal", 'self.register_buffer("pos", sinusoidal(block_size, d))',
                   "self.pos[: idx.size(1)]"),
}


def gpt_code(pos: str = "learned", window: bool = False, ffn: int = 4) -> str:
    """The seeded init helpers and the tiny GPT (with the position encoding `pos`); window: its attention takes a
    `window` too (a causal model's positions then read only the `window` positions before them; 0: all); ffn: the
    feed-forward layer's width over the model's."""
    name, init, read = POS[pos]
    return INIT + (SINUSOIDAL if pos == "sinusoidal" else "") + fill(
        MODEL, pos_name=name, pos_init=init, pos_read=read, ffn=ffn, args=", window" if window else "",
        fields=", self.window" if window else "",
        window_doc=", the last `window` of them at most" if window else "",
        window_mask="\n            mask = mask.triu(-self.window) if self.window else mask" if window else "")


TEXT_DATA = '''
TEXT = $text
VOCAB = "".join(sorted(set(TEXT)))  # token id = index of the character
BLOCK = $context  # characters the model reads


def get_batch(n, g):
    """n random windows of the text: inputs x (n, BLOCK), targets y (n, BLOCK) the next character of each."""
    ids = torch.tensor([VOCAB.index(c) for c in TEXT])
    starts = torch.randint(len(ids) - BLOCK, (n,), generator=g)
    seq = torch.stack([ids[s: s + BLOCK + 1] for s in starts.tolist()])  # (n, BLOCK + 1)
    return seq[:, :-1], seq[:, 1:]
'''

TASK_DATA = '''
LETTERS, SEP = "abcdefgh", "|"
VOCAB = LETTERS + SEP  # token id = index of the character
LENGTH = $length  # letters per prompt


def example(p):
    """The $task task: the prompt$sep, then its answer."""
    return p$sep_add + $answer


def get_batch(n, g):
    """n random prompts with their answers: inputs x (n, T), next-token targets y (n, T), $scored."""
    prompts = torch.randint(len(LETTERS), (n, LENGTH), generator=g).tolist()
    seq = torch.tensor([[VOCAB.index(c) for c in example("".join(LETTERS[i] for i in p))] for p in prompts])
    x, y = seq[:, :-1], seq[:, 1:].clone()  # (n, T)
$ignore    return x, y
'''
IGNORE = ("    y[:, :$n] = -100  # the random prompt letters cannot be predicted: not scored (ignore_index)\n")

LOOP = '''

def main(steps):
    model = GPT(len(VOCAB), $block, $width, $layers, $heads, $causal, torch.Generator().manual_seed($seed))
    g = torch.Generator().manual_seed($seed)  # draws the batches
    optimizer = torch.optim.Adam(model.parameters(), lr=$lr, fused=True)
    for step in range(1, steps + 1):
        x, y = get_batch(32, g)
        logits = model(x)  # (32, T, vocab)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), ignore_index=-100)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        print(json.dumps({"step": step, "loss": loss.item()}))
        if not math.isfinite(loss.item()):
            return  # diverged: the lab stops the run here
'''

PAIR_LOOP = '''

def main(steps):
    runs = {}  # name -> (model, batch generator, optimizer): both draw the same batches
    for name, causal in (("causal", True), ("open", False)):
        model = GPT(len(VOCAB), $block, $width, $layers, $heads, causal, torch.Generator().manual_seed($seed))
        optimizer = torch.optim.Adam(model.parameters(), lr=$lr, fused=True)
        runs[name] = (model, torch.Generator().manual_seed($seed), optimizer)
    for step in range(1, steps + 1):
        losses = {}
        for name, (model, g, optimizer) in runs.items():
            x, y = get_batch(32, g)
            logits = model(x)  # (32, T, vocab)
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))  # every token scored
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses[name] = loss.item()
        print(json.dumps({"step": step, "loss": losses}))
        if not all(math.isfinite(v) for v in losses.values()):
            return  # diverged: the lab stops both here
'''


def script(params: dict, link: str) -> str:
    """The standalone script of the attention lab's live run the params' section shows."""
    v = params
    section = code_section(v, SECTIONS, "attention", "train")
    task, compare = v["task"], section == "compare"
    if task == "text":
        block = v["context"]
        data = fill(TEXT_DATA, text=repr(CORPORA[v["corpus"]]), context=block)
        what = (f"the text task on the {v['corpus']!r} corpus (its built-in text: a text edited on the page is not in "
                f"the link), windows of {block} characters")
    else:
        length, repeat = v["length"], task == "repeat"
        block = 3 * length - 1 if repeat else 2 * length
        shown = "" if compare else fill(IGNORE, n=length - 1 if repeat else length)
        data = fill(TASK_DATA, length=length, task=task, sep="" if repeat else ' and "|"',
                    sep_add="" if repeat else " + SEP", answer=ANSWERS[task],
                    scored="every token scored" if compare else "only the answer scored", ignore=shown)
        what = f"the {task} task, prompts of {length} letters"
    kind = "a causal and an open (unmasked)" if compare else "a causal" if v["causal"] else "an open (unmasked)"
    lines = [f"The attention lab's {section} section: {kind} tiny transformer, "
             f"trained live on {what}: "
             f"{v['layers']} block(s), {v['t_heads']} heads, width {v['width']}, {v['pos']} positions, "
             f"Adam lr {v['lr']}, batches of 32, seed {v['t_seed']}."]
    return (header("Attention lab, tiny transformer", link) + describe(lines) + IMPORTS + data + gpt_code(v["pos"])
            + fill(PAIR_LOOP if compare else LOOP, block=block, width=v["width"], layers=v["layers"],
                   heads=v["t_heads"], seed=v["t_seed"], lr=v["lr"], causal=v["causal"])
            + main_block(300))
