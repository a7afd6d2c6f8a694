"""The language-model lab's engine: a text tokenised into a training task, the tiny GPT's run with its validation
loss, sampling (temperature, top-k, top-p), per-token losses, and the scaling sweep of tiny models.

The model and its trainer are the attention lab's (sim.transformers.transformer.TinyTransformer, LMTrainer).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from sim.core.errors import CodedError
from sim.core.history import decimate
from sim.core.upload import MAX_BYTES
from sim.language.grammar import grammar
from sim.language.tokenizer import make_tokenizer, tokens_per_char
from sim.transformers.transformer import LMTrainer, TransformerConfig

MAX_UPLOAD_BYTES = MAX_BYTES  # a text file, or a pasted text: the uploads' one limit (2 MB)
MIN_TEXT_CHARS = 200
SYNTHETIC_CHARS = 30_000  # the lab's text of the built-in language
BATCH = 16  # windows per optimizer step: half the cost of 32 per frame, about the same time to the floor
VAL_WINDOWS = 64  # most validation windows per evaluation (the same ones every time)
EVAL_EVERY = 50  # optimizer steps between validation losses
CURVE_EVERY = 50  # a live frame's training curve is decimated this often; the steps since are added as they are


class TextError(CodedError):
    """A text the lab cannot learn from: too_large {size, limit}, not_text {}, too_short {found, min}."""

    CODES = ("too_large", "not_text", "too_short")


def read_text(raw: bytes) -> str:
    """The user's file as text: UTF-8 (a BOM is dropped), at most 2 MB, at least MIN_TEXT_CHARS characters."""
    if len(raw) > MAX_UPLOAD_BYTES:
        raise TextError("too_large", {"size": len(raw), "limit": MAX_UPLOAD_BYTES})
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise TextError("not_text") from None
    if "\x00" in text:
        raise TextError("not_text")
    return check_text(text)


def check_text(text: str) -> str:
    text = text.replace("\r\n", "\n")
    if len(text.strip()) < MIN_TEXT_CHARS:
        raise TextError("too_short", {"found": len(text.strip()), "min": MIN_TEXT_CHARS})
    return text


# ---------- sampling ----------
def next_token_probs(logits: torch.Tensor, temperature: float = 1.0, top_k: int = 0,
                     top_p: float = 1.0) -> torch.Tensor:
    """The distribution a sampler draws from, for logits (..., V).

    temperature divides the logits (0: all mass on the argmax); top_k > 0 keeps the k most likely tokens; top_p < 1
    keeps the smallest set of most likely tokens whose probability reaches top_p (the "nucleus"); what is kept is
    renormalised.
    """
    logits = logits.double()
    if temperature <= 0:
        return F.one_hot(logits.argmax(-1), logits.size(-1)).double()
    probs = torch.softmax(logits / temperature, dim=-1)
    if 0 < top_k < probs.size(-1):
        kth = probs.topk(top_k, dim=-1).values[..., -1:]
        probs = torch.where(probs >= kth, probs, torch.zeros_like(probs))
        probs = probs / probs.sum(-1, keepdim=True)
    if top_p < 1.0:
        sorted_p, order = probs.sort(dim=-1, descending=True)
        before = sorted_p.cumsum(-1) - sorted_p  # mass of the tokens ranked above each one
        keep_sorted = before < top_p  # a token is kept while the mass above it has not yet reached top_p
        keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
        probs = torch.where(keep, probs, torch.zeros_like(probs))
        probs = probs / probs.sum(-1, keepdim=True)
    return probs


def sample_token(logits: torch.Tensor, temperature: float, top_k: int, top_p: float,
                 generator: torch.Generator) -> int:
    """One token id drawn from next_token_probs of a (V,) logits vector."""
    probs = next_token_probs(logits, temperature, top_k, top_p)
    return int(torch.multinomial(probs.float(), 1, generator=generator))


# ---------- the text as a task of the tiny GPT ----------
ARTICLE_SENTENCE = "我今天吃了一碗面"  # the article's example of how pretraining text labels itself


def shift_targets(seq: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Next-token prediction's inputs and targets from runs of T + 1 tokens (..., T + 1): (..., T) each. Position t
    of the input sees tokens 0…t (the causal mask) and its target is token t + 1."""
    return seq[..., :-1], seq[..., 1:]


def next_token_pairs(tokenizer, text: str) -> list[tuple[list[int], int]]:
    """The training examples one text holds, read off shift_targets row by row: (the ids up to position t,
    the id at t + 1) for every position but the last."""
    x, y = shift_targets(torch.tensor(tokenizer.encode(text), dtype=torch.long))
    return [(x[: t + 1].tolist(), int(y[t])) for t in range(len(y))]


@dataclass
class TokenTask:
    """Windows of `length` tokens of a tokenised text (90 % train, the rest validation) for LMTrainer."""

    tokenizer: object  # sim.language.tokenizer.BPE or CharTokenizer
    train_ids: torch.Tensor
    val_ids: torch.Tensor
    length: int  # tokens the model reads
    floor_per_char: float | None = None  # the text's entropy per character (the synthetic language), else None
    chars_per_token: float = 1.0  # measured on the validation text
    name: str = "text"

    @property
    def vocab(self):
        return self.tokenizer

    @property
    def block_size(self) -> int:
        return self.length

    def batch(self, n: int, generator: torch.Generator, split: str = "train") -> tuple[torch.Tensor, torch.Tensor]:
        ids = self.train_ids if split == "train" else self.val_ids
        starts = torch.randint(len(ids) - self.length, (n,), generator=generator)
        seq = torch.stack([ids[s: s + self.length + 1] for s in starts.tolist()])  # (n, T + 1)
        return shift_targets(seq)

    def loss_floor(self) -> float | None:
        """The least mean loss per token: entropy per character × characters per token (None for a user's text)."""
        return None if self.floor_per_char is None else self.floor_per_char * self.chars_per_token


def make_task(text: str, tokenizer_kind: str, vocab_size: int, context: int,
              floor_per_char: float | None = None) -> TokenTask:
    """The text tokenised (the tokenizer trained on its training part) and split 90/10; ValueError("invalid:...")
    when too short for the context."""
    cut = int(len(text) * 0.9)
    tok = make_tokenizer(tokenizer_kind, text[:cut], vocab_size)
    val_text = text[cut:] if tokenizer_kind == "bpe" else tok.known(text[cut:])
    train, val = tok.encode(text[:cut]), tok.encode(val_text)
    if min(len(train), len(val)) < context + 2:
        raise ValueError("invalid:text_short")
    return TokenTask(tok, torch.tensor(train), torch.tensor(val), context, floor_per_char,
                     len(val_text) / len(val))


def synthetic_text(lang: str, n_chars: int, seed: int) -> tuple[str, float]:
    """The built-in language's text and its exact entropy per character (nats)."""
    g = grammar(lang)
    return g.sample(n_chars, seed), g.entropy_per_char()


PROBE_CHARS = 3000  # characters of each built-in language the tokenizers are compared on


def language_costs(text: str, vocab: int, seed: int, sample: Callable[[str, int], str] | None = None,
                   bpe: Callable[[str, int], object] | None = None) -> dict[str, dict[str, float]]:
    """Tokens per character of each built-in language, on a fresh sample of it (text seed + 1), by language:
    "bytes" (UTF-8), "own" (a BPE of `vocab` tokens trained on that language's text of this seed) and "this" (one
    trained on `text`). sample(lang, seed) and bpe(text, vocab): the built-in text and the tokenizer (a page
    passes its cached ones)."""
    sample = sample or (lambda lang, s: synthetic_text(lang, SYNTHETIC_CHARS, s)[0])
    bpe = bpe or (lambda t, v: make_tokenizer("bpe", t, v))
    chosen, costs = bpe(text, vocab), {}
    for lang in ("en", "zh"):
        probe = sample(lang, seed + 1)[:PROBE_CHARS]
        costs[lang] = {"bytes": len(probe.encode("utf-8")) / len(probe),
                       "own": tokens_per_char(bpe(sample(lang, seed), vocab), probe),
                       "this": tokens_per_char(chosen, probe)}
    return costs


# ---------- the live run ----------
@dataclass
class LMRun:
    """A trainer with its validation losses every EVAL_EVERY steps (the live view's second curve); a live run
    (sim.core.live.LiveRun): its frame is the two curves and the numbers of the live caption."""

    trainer: LMTrainer
    val_history: list[dict] = field(default_factory=list)  # {"step", "loss"}
    # the training curve decimated at the last multiple of CURVE_EVERY steps (decimating thousands of records for
    # every frame cost a third of a step); updated by step(), so a frame is a function of the steps taken alone
    _curve: tuple[np.ndarray, np.ndarray] = field(default_factory=lambda: _arrays(([], [])))
    _curve_step: int = 0

    @property
    def task(self) -> TokenTask:
        return self.trainer.task

    @property
    def steps(self) -> int:
        return self.trainer.steps

    @property
    def stopped(self) -> bool:
        return self.trainer.diverged

    def shared(self) -> tuple:
        return (self.trainer.task,)  # the text's ids and the tokenizer never change

    def step(self, n: int) -> None:
        for _ in range(n):
            self.trainer.step(1)
            if self.trainer.steps % EVAL_EVERY == 0 or self.trainer.steps == 1:
                self.val_history.append({"step": self.trainer.steps, "loss": val_loss(self.trainer)})
            if self.trainer.steps % CURVE_EVERY == 0:
                self._curve, self._curve_step = _arrays(self.trainer.curve()), self.trainer.steps
            if self.trainer.diverged:
                return

    advance = step

    def frame(self) -> dict:
        """The curves (float32 arrays: a trajectory keeps hundreds of frames), the caption's numbers and the floor."""
        tail = [h for h in self.trainer.history[-CURVE_EVERY:] if h["step"] > self._curve_step]
        steps, losses = _arrays(([h["step"] for h in tail], [h["loss"] for h in tail]))
        train = (np.concatenate([self._curve[0], steps]), np.concatenate([self._curve[1], losses]))
        return {"steps": self.trainer.steps, "train": train, "val": _arrays(self.val_curve()),
                "loss": self.trainer.recent_loss(), "val_loss": self.last_val(), "floor": self.task.loss_floor()}

    def val_curve(self, max_points: int = 200) -> tuple[list[int], list[float]]:
        pick = decimate(self.val_history, "step", ("loss",), max_points)
        return [h["step"] for h in pick], [h["loss"] for h in pick]

    def last_val(self) -> float | None:
        return self.val_history[-1]["loss"] if self.val_history else None


def _arrays(curve: tuple[list[int], list[float]]) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(curve[0], dtype=np.int32), np.asarray(curve[1], dtype=np.float32)


@torch.no_grad()
def val_loss(trainer: LMTrainer, max_windows: int = VAL_WINDOWS) -> float:
    """Mean next-token loss on the validation text, each token scored once with at least length/2 tokens before it:
    windows every length/2 tokens, scored on their second half (the entropy floor assumes a known past, and the
    first tokens of a window cannot know where in a sentence they are). A long text: max_windows spread evenly."""
    task: TokenTask = trainer.task
    ids, T = task.val_ids, task.length
    half = T // 2
    starts = torch.arange(0, len(ids) - T, max(1, half))
    if len(starts) > max_windows:
        starts = starts[torch.linspace(0, len(starts) - 1, max_windows).long()]
    x, y = shift_targets(torch.stack([ids[s: s + T + 1] for s in starts.tolist()]))
    trainer.model.eval()
    logits = trainer.model(x)
    trainer.model.train()
    return float(F.cross_entropy(logits[:, half:].reshape(-1, logits.size(-1)), y[:, half:].reshape(-1)))


def lm_trainer(task: TokenTask, layers: int, heads: int, width: int, lr: float, seed: int,
               batch_size: int = BATCH) -> LMTrainer:
    config = TransformerConfig(vocab_size=len(task.tokenizer), block_size=task.length, n_layer=layers, n_head=heads,
                               d_model=width, d_ff=4 * width)
    return LMTrainer(config, task, lr=lr, batch_size=batch_size, seed=seed)


def n_params(trainer: LMTrainer) -> int:
    return sum(p.numel() for p in trainer.model.parameters())


def encode_known(task: TokenTask, text: str) -> list[int]:
    """text's ids, characters the tokenizer does not know left out (character-level)."""
    tok = task.tokenizer
    return tok.encode(tok.known(text) if hasattr(tok, "known") else text)


@torch.no_grad()
def prompt_logits(trainer: LMTrainer, ids: list[int]) -> torch.Tensor:
    """(V,) logits of the token after ids (their last block_size); the empty prompt reads token 0."""
    trainer.model.eval()
    idx = torch.tensor([ids[-trainer.config.block_size:] or [0]])
    out = trainer.model(idx)[0, -1]
    trainer.model.train()
    return out


def generate(trainer: LMTrainer, prompt: str, n: int, temperature: float, top_k: int, top_p: float,
             seed: int) -> str:
    """prompt continued by n tokens drawn with next_token_probs' rules (temperature 0: greedy)."""
    gen = torch.Generator().manual_seed(seed)
    ids = encode_known(trainer.task, prompt)
    start = len(ids)
    for _ in range(n):
        ids.append(sample_token(prompt_logits(trainer, ids), temperature, top_k, top_p, gen))
    return trainer.task.tokenizer.decode(ids[start:])


def top_tokens(probs: torch.Tensor, tokenizer, k: int = 10) -> list[tuple[str, float]]:
    """The k most likely tokens of a (V,) distribution as (its text, probability)."""
    p, idx = probs.topk(min(k, probs.numel()))
    return [(tokenizer.pieces([i])[0], float(q)) for i, q in zip(idx.tolist(), p.tolist(), strict=True)]


@dataclass(frozen=True)
class TokenLosses:
    """A passage read by the model: its tokens, the loss of predicting each one, and each next-token distribution."""

    pieces: list[str]  # the tokens' texts
    losses: list[float | None]  # -log p(token | the tokens before); None for the first (nothing predicts it)
    probs: torch.Tensor  # (T, V): row i is the distribution of the token after token i


@torch.no_grad()
def token_losses(trainer: LMTrainer, text: str) -> TokenLosses:
    """The model reading (the first block_size tokens of) text."""
    ids = encode_known(trainer.task, text)[: trainer.config.block_size]
    if not ids:
        return TokenLosses([], [], torch.zeros(0, len(trainer.task.tokenizer)))
    trainer.model.eval()
    logits = trainer.model(torch.tensor([ids]))[0]  # (T, V)
    trainer.model.train()
    probs = torch.softmax(logits.double(), -1)
    losses = [None] + [-math.log(max(float(probs[i - 1, ids[i]]), 1e-300)) for i in range(1, len(ids))]
    return TokenLosses(trainer.task.tokenizer.pieces(ids), losses, probs)


# ---------- the scaling sweep ----------
@dataclass(frozen=True)
class SweepRun:
    """One model of the sweep trained on one compute budget."""

    budget: float  # C, FLOPs
    width: int
    layers: int
    params: int  # N
    tokens: int  # D = C / (6N), rounded to whole batches
    steps: int
    loss: float  # final validation loss
    curve: tuple[tuple[int, float], ...]  # (tokens seen, validation loss) along the run


SWEEPS_DIR = Path(__file__).resolve().parents[2] / "assets" / "measurements" / "lm"  # the bundled sweeps
SWEEP_CONTEXT = 16  # characters the sweep's models read
SWEEP_VAL_WINDOWS = 128  # a sweep's validation loss: more windows than the live view's, as it is measured 8 times a run
SWEEP_WIDTHS = (4, 8, 16, 32, 64, 128, 192)  # 2 layers: about 7·10² to 9·10⁵ parameters
SWEEP_BUDGETS = (1e9, 3e9, 1e10, 3e10)
LIVE_WIDTHS = (4, 8, 16, 32, 64)
LIVE_BUDGETS = (3e8, 1e9, 3e9)


def sweep(task: TokenTask, budgets, widths, layers: int = 2, lr: float = 3e-3, seed: int = 0,
          batch_size: int = 16, curve_points: int = 8) -> Iterator[SweepRun]:
    """Each width trained on each budget C: D = C/(6N) tokens in batches, then its validation loss (yielded one run
    at a time, so a page can show progress)."""
    for C in budgets:
        for w in widths:
            tr = lm_trainer(task, layers, max(1, min(4, w // 4)), w, lr, seed, batch_size=batch_size)
            N = n_params(tr)
            per_step = batch_size * task.length
            steps = max(1, round(C / (6 * N) / per_step))
            marks = {max(1, round(steps * (i + 1) / curve_points)) for i in range(curve_points)}
            curve = []
            for s in range(1, steps + 1):
                tr.step(1)
                if s in marks:
                    curve.append((s * per_step, val_loss(tr, SWEEP_VAL_WINDOWS)))
                if tr.diverged:
                    break
            yield SweepRun(C, w, layers, N, steps * per_step, steps, curve[-1][1] if curve else math.nan,
                           tuple(curve))


def run_record(run: SweepRun) -> dict:
    """A sweep run as plain JSON values (bundled measurements, the page's charts)."""
    return {"budget": run.budget, "width": run.width, "layers": run.layers, "params": run.params,
            "tokens": run.tokens, "steps": run.steps, "loss": run.loss, "curve": [list(p) for p in run.curve]}


MIN_FIT_STEPS = 50  # shorter training measures Adam's first steps, not what D tokens teach: left out of the fit


def sweep_points(runs: list[dict], min_steps: int = MIN_FIT_STEPS) -> list[tuple[float, float, float]]:
    """(N, D, L) for the loss-surface fit: every point of every run's curve after at least min_steps steps (the
    learning rate is constant, so a run's loss after D' tokens is a measurement of L(N, D'))."""
    out = []
    for r in runs:
        per_step = r["tokens"] / r["steps"]
        out += [(float(r["params"]), float(d), float(v)) for d, v in r["curve"]
                if d / per_step >= min_steps and math.isfinite(v)]
    return out
