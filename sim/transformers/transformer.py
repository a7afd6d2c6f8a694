"""A tiny GPT (nanoGPT layout: pre-LN blocks with residual connections, learned or sinusoidal position encoding)
and its stepwise trainer for the attention lab."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from sim.core.history import LossCurve
from sim.core.models import Dropout, embedding, linear
from sim.core.text import md
from sim.transformers.attention import MultiHeadAttention, fmt, positional_encoding

IGNORE = -100  # targets that are not scored (cross_entropy's ignore_index)
ACTIVATIONS = {"gelu": nn.GELU, "relu": nn.ReLU}
POSITIONS = ("learned", "sinusoidal")  # a trained table of position vectors (GPT-2), or the fixed sin/cos one


@dataclass(frozen=True)
class TransformerConfig:
    vocab_size: int  # number of distinct tokens
    block_size: int  # longest sequence the model reads (rows of the position embedding)
    n_layer: int  # transformer blocks
    n_head: int  # attention heads per block; must divide d_model
    d_model: int  # width of every token's vector
    d_ff: int  # width of the feed-forward hidden layer (usually 4 * d_model)
    causal: bool = True  # mask the future; False lets every position read the whole sequence
    dropout: float = 0.0  # on the embeddings and on each sub-layer's output
    pos: str = "learned"  # position encoding, one of POSITIONS


class FeedForward(nn.Module):
    """Position-wise MLP: up-projection, non-linearity, down-projection; tokens do not mix here."""

    def __init__(self, d_model: int, d_ff: int, activation: str = "gelu", generator: torch.Generator | None = None):
        super().__init__()
        self.up = linear(d_model, d_ff, generator=generator)
        self.act = ACTIVATIONS[activation]()
        self.down = linear(d_ff, d_model, generator=generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(self.act(self.up(x)))  # (B, T, C) -> (B, T, d_ff) -> (B, T, C)


class Block(nn.Module):
    """Pre-LN transformer block: each sub-layer (attention, then FFN) reads a LayerNorm'd copy of x, and a residual
    connection adds its result back onto x."""

    def __init__(self, config: TransformerConfig, generator: torch.Generator | None = None):
        super().__init__()
        self.ln1 = nn.LayerNorm(config.d_model)  # ones and zeros: nothing random
        self.attn = MultiHeadAttention(config.d_model, config.n_head, causal=config.causal, generator=generator)
        self.ln2 = nn.LayerNorm(config.d_model)
        self.ffn = FeedForward(config.d_model, config.d_ff, generator=generator)
        self.drop = Dropout(config.dropout, generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.drop(self.attn(self.ln1(x)))  # (B, T, C)
        x = x + self.drop(self.ffn(self.ln2(x)))  # (B, T, C)
        return x


class TinyTransformer(nn.Module):
    """Token embeddings + position encoding, n_layer blocks, final norm, and a head giving next-token logits.

    The position encoding is a learned embedding table (config.pos "learned") or the original Transformer's fixed
    sinusoidal table (sim.transformers.attention.positional_encoding; "sinusoidal", nothing to train). Every random
    number (initial weights, then dropout masks) comes from `generator`, drawn in the order the modules are built;
    None draws from torch's global RNG.
    """

    def __init__(self, config: TransformerConfig, generator: torch.Generator | None = None):
        super().__init__()
        self.config = config
        self.tok_emb = embedding(config.vocab_size, config.d_model, generator)
        if config.pos not in POSITIONS:
            raise ValueError("invalid:pos")
        if config.pos == "learned":
            self.pos_emb = embedding(config.block_size, config.d_model, generator)
        else:  # a buffer: it moves with the model but is no parameter
            self.register_buffer("pos_table", positional_encoding(config.block_size, config.d_model), persistent=False)
        self.drop = Dropout(config.dropout, generator)
        self.blocks = nn.ModuleList(Block(config, generator) for _ in range(config.n_layer))
        self.ln_f = nn.LayerNorm(config.d_model)
        self.lm_head = linear(config.d_model, config.vocab_size, bias=False, generator=generator)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        B, T = idx.shape
        if T > self.config.block_size:
            raise ValueError("invalid:too_long")
        x = self.drop(self.tok_emb(idx) + self.positions(T))  # (B, T, C)
        for block in self.blocks:
            x = block(x)  # (B, T, C)
        return self.lm_head(self.ln_f(x))  # (B, T, vocab)

    def positions(self, T: int) -> torch.Tensor:
        """(T, C) the position vectors added to the first T tokens."""
        if self.config.pos == "learned":
            return self.pos_emb(torch.arange(T, device=self.tok_emb.weight.device))
        return self.pos_table[:T]

    @torch.no_grad()
    def generate(self, idx: torch.Tensor, max_new_tokens: int, greedy: bool = True, temperature: float = 1.0,
                 generator: torch.Generator | None = None) -> torch.Tensor:
        """Append max_new_tokens tokens to idx (B, T), each from the logits at the last position."""
        for _ in range(max_new_tokens):
            logits = self(idx[:, -self.config.block_size:])[:, -1, :]  # (B, vocab)
            if greedy:
                nxt = logits.argmax(dim=-1, keepdim=True)  # (B, 1)
            else:
                probs = torch.softmax(logits / temperature, dim=-1)
                nxt = torch.multinomial(probs, 1, generator=generator)  # (B, 1)
            idx = torch.cat([idx, nxt], dim=1)
        return idx

    def attention_maps(self) -> list[torch.Tensor]:
        """Each block's attention weights (B, H, T, T) from the last forward pass."""
        return [block.attn.last_weights for block in self.blocks]


class LMTrainer(LossCurve):
    """Trains a TinyTransformer on a task (sim.transformers.tasks.Task) a few steps at a time; records the loss of
    every step."""

    def __init__(self, config: TransformerConfig, task, lr: float = 3e-3, batch_size: int = 32, seed: int = 0):
        self.config, self.task, self.batch_size, self.lr = config, task, batch_size, lr
        # the model's own generator (initial weights, dropout), never the global RNG other sessions share
        self.model = TinyTransformer(config, torch.Generator().manual_seed(seed))
        self.generator = torch.Generator().manual_seed(seed)  # draws the training batches
        # fused: one kernel per step for all parameters, which saves a sixth of a tiny model's step time
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr, fused=True)
        self.steps = 0
        self.history: list[dict] = []  # {"step": int, "loss": float} per optimizer step (bounded: sim.core.history)
        self.diverged = False

    def step(self, n: int = 1) -> None:
        """n optimizer steps on fresh batches; stops for good when the loss is no longer finite."""
        self.model.train()
        for _ in range(n):
            if self.diverged:
                return
            self._step()

    def _step(self) -> None:
        x, y = self.task.batch(self.batch_size, self.generator)
        logits = self.model(x)  # (B, T, vocab)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), ignore_index=IGNORE)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.record(loss.item())

    @torch.no_grad()
    def attention(self, text: str) -> list[torch.Tensor]:
        """Per layer, the (H, T, T) attention weights of the model reading `text` (the last block_size tokens)."""
        self.model.eval()
        self.model(torch.tensor([self.task.vocab.encode(text)[-self.config.block_size:]]))
        return [w[0] for w in self.model.attention_maps()]

    def complete(self, prompt: str, n: int, greedy: bool = True, temperature: float = 1.0, seed: int = 0) -> str:
        """The model's continuation of `prompt` by n tokens."""
        self.model.eval()
        idx = torch.tensor([self.task.vocab.encode(prompt)])
        out = self.model.generate(idx, n, greedy=greedy, temperature=temperature,
                                  generator=torch.Generator().manual_seed(seed))
        return self.task.vocab.decode(out[0, idx.size(1):])

    @torch.no_grad()
    def generation_accuracy(self, n: int = 64, seed: int = 12345) -> float:
        """Share of n fresh prompts the model answers exactly right when generating greedily (generated tasks)."""
        self.model.eval()
        prompts = self.task.random_prompts(n, torch.Generator().manual_seed(seed))
        idx = torch.tensor([self.task.vocab.encode(self.task.prompt_text(p)) for p in prompts])
        answers = [self.task.answer(p) for p in prompts]
        out = self.model.generate(idx, len(answers[0]))[:, idx.size(1):]
        return sum(self.task.vocab.decode(row) == a for row, a in zip(out, answers, strict=True)) / n

    @torch.no_grad()
    def position_table(self) -> np.ndarray:
        """(block_size, d_model) the position vectors the model adds now: learned ones change as it trains."""
        return self.model.positions(self.config.block_size).detach().cpu().numpy().copy()

    def view(self, probe: str) -> RunView:
        """What the lab's live view draws of this run, with the attention maps of the model reading `probe`."""
        return RunView(causal=self.config.causal, steps=self.steps, recent_loss=self.recent_loss(), curve=self.curve(),
                       maps=[m.numpy() for m in self.attention(probe)], tokens=list(probe[-self.config.block_size:]),
                       floor=self.task.loss_floor())


@dataclass(frozen=True)
class RunView:
    """One run as the live view draws it: plain values and NumPy arrays only (for sim.plots)."""

    causal: bool  # trained with the causal mask
    steps: int  # optimizer steps so far
    recent_loss: float | None  # LMTrainer.recent_loss
    curve: tuple[list[int], list[float]]  # LMTrainer.curve: steps and losses, decimated
    maps: list[np.ndarray]  # per layer, the (H, T, T) attention weights of the probe
    tokens: list[str]  # the probe's characters the model read (its last block_size)
    floor: float | None  # the task's loss floor (Task.loss_floor)


def lab_trainer(task, layers: int, heads: int, width: int, lr: float, seed: int, causal: bool = True,
                pos: str = "learned") -> LMTrainer:
    """The lab's run: a TinyTransformer sized for `task` (feed-forward 4 × width, position encoding `pos`), Adam on
    batches of 32."""
    config = TransformerConfig(vocab_size=len(task.vocab), block_size=task.block_size, n_layer=layers, n_head=heads,
                               d_model=width, d_ff=4 * width, causal=causal, pos=pos)
    return LMTrainer(config, task, lr=lr, batch_size=32, seed=seed)


def generation_report(trainers: list[LMTrainer], prompt: str, labels: dict) -> list[str]:
    """What each run generates from `prompt` as Markdown lines: a text's greedy and sampled continuations, or a
    generated task's answer next to the right one with the run's exact-answer rate.

    labels: templates "generated_text" ({run} {prompt} {greedy} {sampled}) and "generated" ({run} {prompt} {got}
    {answer} {mark} {acc}), and the run names "run.causal_short" and "run.open_short".
    """
    lines = []
    for tr in trainers:
        run, task = labels["run.causal_short" if tr.config.causal else "run.open_short"], tr.task
        if task.name == "text":
            lines.append(labels["generated_text"].format(
                run=run, prompt=md(prompt), greedy=md(tr.complete(prompt, 40)),
                sampled=md(tr.complete(prompt, 40, greedy=False, seed=1))))
        else:
            answer = task.answer(prompt)
            got = tr.complete(task.prompt_text(prompt), len(answer))
            lines.append(labels["generated"].format(
                run=run, prompt=md(task.prompt_text(prompt)), got=md(got), answer=md(answer),
                mark="✅" if got == answer else "❌", acc=f"{tr.generation_accuracy():.0%}"))
    return lines


# ---------- the notes' FFN example: x = [1, 2] -> h = [5, 2] -> y = [5, 9] ----------
# The notes' text keeps x, h and y but lost its weight matrices (a formula image); these 2×2 weights reproduce them.
NOTES_FFN_X = (1.0, 2.0)
NOTES_W_UP = ((1.0, 2.0), (2.0, 0.0))  # (d, h), used as x @ W_up: [1, 2] -> [1 + 4, 2 + 0] = [5, 2]
NOTES_W_DOWN = ((1.0, 1.0), (0.0, 2.0))  # (h, d): [5, 2] -> [5 + 0, 5 + 4] = [5, 9]


@torch.no_grad()
def notes_ffn() -> tuple[FeedForward, dict[str, torch.Tensor]]:
    """A FeedForward(2, 2, relu) holding the notes' weights (no biases), its stages on x = [1, 2], and the weights."""
    ffn = FeedForward(2, 2, activation="relu")
    ffn.up.weight.copy_(torch.tensor(NOTES_W_UP).T)  # nn.Linear stores (out, in)
    ffn.down.weight.copy_(torch.tensor(NOTES_W_DOWN).T)
    ffn.up.bias.zero_()
    ffn.down.bias.zero_()
    x = torch.tensor(NOTES_FFN_X)
    h = ffn.up(x)
    a = ffn.act(h)
    return ffn, {"x": x, "w_up": ffn.up.weight.T.detach(), "h": h, "relu": a, "w_down": ffn.down.weight.T.detach(),
                 "y": ffn.down(a)}


NOTES_BATCH_ROWS = 8  # the notes: a batch of 8 tokens through the same FFN


@torch.no_grad()
def notes_ffn_batch(rows: int = NOTES_BATCH_ROWS, seed: int = 0) -> dict[str, torch.Tensor]:
    """The notes' FFN (notes_ffn) on a batch X (rows, 2): row 0 is the notes' x = [1, 2], the other rows small whole
    numbers drawn from `seed`. Every stage on the whole batch at once, H = X·W_up, A = ReLU(H), Y = A·W_down, and
    "loop": Y computed one row at a time, for comparison."""
    ffn, _ = notes_ffn()
    g = torch.Generator().manual_seed(seed)
    X = torch.cat([torch.tensor([NOTES_FFN_X]), torch.randint(-3, 4, (rows - 1, 2), generator=g).float()])
    H = ffn.up(X)  # (rows, h)
    A = ffn.act(H)
    return {"X": X, "H": H, "A": A, "Y": ffn.down(A), "loop": torch.stack([ffn(x) for x in X])}


def notes_ffn_text() -> str:
    """The notes' FFN example stage by stage (notes_ffn), as a code block."""
    _, s = notes_ffn()
    return (f"x      = {fmt(s['x'], 0)}\nW_up   = {fmt(s['w_up'], 0)}\n"
            f"h      = x·W_up      = {fmt(s['h'], 0)}\nReLU(h)              = {fmt(s['relu'], 0)}\n"
            f"W_down = {fmt(s['w_down'], 0)}\ny      = ReLU(h)·W_down = {fmt(s['y'], 0)}")
