"""Inside the transformer block: normalisation (BatchNorm, LayerNorm, RMSNorm), position encodings (sinusoidal,
learned, RoPE), initialisation and depth, the FFN (GELU against SwiGLU), Pre-LN against Post-LN trained side by
side, and the KV cache of MHA, GQA, MQA and MLA."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from sim.core.history import LossCurve
from sim.core.models import embedding, linear
from sim.transformers.attention import positional_encoding
from sim.transformers.shapes import kv_cache_bytes, trace_shapes
from sim.transformers.transformer import IGNORE, FeedForward

# ---------- normalisation ----------
NORMS = ("batch", "layer", "rms")


def rms_norm(x: torch.Tensor, weight: torch.Tensor | None = None, eps: float = 1e-6) -> torch.Tensor:
    """x / sqrt(mean(x²) + eps) over the last axis, times `weight`: LayerNorm without the mean (Zhang & Sennrich)."""
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return y if weight is None else y * weight


def layer_norm(x: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """(x - mean) / sqrt(var + eps) over the last axis (each token's own features), no γ and β."""
    mu = x.mean(-1, keepdim=True)
    var = (x - mu).pow(2).mean(-1, keepdim=True)  # biased, as LayerNorm uses
    return (x - mu) / torch.sqrt(var + eps)


def batch_norm(x: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """x (B, T, d): each feature over every sample and position of the batch (training mode), no γ and β."""
    mu = x.mean((0, 1), keepdim=True)
    var = (x - mu).pow(2).mean((0, 1), keepdim=True)
    return (x - mu) / torch.sqrt(var + eps)


def normalise(x: torch.Tensor, kind: str, eps: float = 1e-5) -> torch.Tensor:
    return {"batch": batch_norm, "layer": layer_norm, "rms": rms_norm}[kind](x, eps=eps)


def norm_group(kind: str, shape: tuple[int, int, int], cell: tuple[int, int, int]) -> np.ndarray:
    """(B, T, d) True where a number shares its mean and scale with `cell` (b, t, j): the numbers averaged over."""
    mask = np.zeros(shape, dtype=bool)
    b, t, j = cell
    if kind == "batch":
        mask[:, :, j] = True  # one feature, across the batch and every position
    else:
        mask[b, t, :] = True  # one token's own features
    return mask


@dataclass(frozen=True)
class NormView:
    x: np.ndarray  # (B, T, d) the input
    y: np.ndarray  # (B, T, d) normalised
    group: np.ndarray  # (B, T, d) bool, the numbers averaged together with the chosen cell
    mean: float | None  # the group's mean (None for RMSNorm, which does not subtract one)
    scale: float  # what the group is divided by: sqrt(var + eps), or the RMS
    cell: tuple[int, int, int]


def norm_view(kind: str, B: int, T: int, d: int, cell: tuple[int, int, int], seed: int, eps: float = 1e-5) -> NormView:
    """A random (B, T, d) tensor whose features have different offsets and scales, normalised by `kind`."""
    g = torch.Generator().manual_seed(seed)
    offset = torch.randn(d, generator=g) * 2.0  # features differ, as real activations' do
    scale = torch.rand(d, generator=g) * 2.0 + 0.5
    x = (torch.randn(B, T, d, generator=g) * scale + offset).double()
    y = normalise(x, kind, eps)
    group = norm_group(kind, (B, T, d), cell)
    vals = x.numpy()[group]
    if kind == "rms":
        mean, sc = None, float(np.sqrt((vals ** 2).mean() + eps))
    else:
        mean, sc = float(vals.mean()), float(np.sqrt(vals.var() + eps))
    return NormView(x.numpy(), y.numpy(), group, mean, sc, cell)


# ---------- position encodings ----------
POSITIONS = ("sinusoidal", "learned", "rope")


def sinusoidal(T: int, d: int) -> torch.Tensor:
    """(T, d) the original Transformer's position vectors (sin on even columns, cos on odd)."""
    return positional_encoding(T, d)


def rope_frequencies(d: int, base: float = 10000.0) -> torch.Tensor:
    """(d/2,) θ_i = base^(-2i/d): pair i turns by θ_i radians per position."""
    return base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)


def rope(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotary position embedding: x (..., T, d), d even; pair (2i, 2i+1) of the vector at position p is turned by
    the angle p·θ_i. Lengths are kept, and q_m·k_n depends on m − n only."""
    d = x.shape[-1]
    if d % 2:
        raise ValueError("invalid:rope_odd")
    angle = positions.to(torch.float64)[:, None] * rope_frequencies(d, base)  # (T, d/2)
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]  # (..., T, d/2)
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)  # (..., T, d)


def rope_pairs(vec: torch.Tensor, positions: torch.Tensor, base: float = 10000.0) -> np.ndarray:
    """(P, d/2, 2) the pairs of one vector after RoPE at each position: the points drawn turning per frequency."""
    rot = rope(vec.expand(len(positions), -1), positions, base)  # (P, d)
    return rot.reshape(len(positions), -1, 2).numpy()


def rope_scores(q: torch.Tensor, k: torch.Tensor, m: int, n: int, shifts: list[int], base: float = 10000.0
                ) -> list[tuple[int, int, int, float]]:
    """(m + s, n + s, m − n, q_{m+s}·k_{n+s}) for each shift s: the same number down the column."""
    out = []
    for s in shifts:
        qm = rope(q[None], torch.tensor([m + s]), base)[0]
        kn = rope(k[None], torch.tensor([n + s]), base)[0]
        out.append((m + s, n + s, m - n, float(qm @ kn)))
    return out


SHIFTS = (0, 1, 2, 7)  # the shifts of the lab's table, in multiples of the user's shift


def shifted_scores(q: torch.Tensor, k: torch.Tensor, m: int, n: int, shift: int, base: float = 10000.0
                   ) -> list[tuple[int, int, int, float]]:
    """rope_scores at the lab's shifts (SHIFTS × shift): the same number down the column."""
    return rope_scores(q, k, m, n, [j * shift for j in SHIFTS], base)


def vectors(d: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A query and a key (d,) drawn from `seed` (float64, so equal numbers print equal)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(d, generator=g, dtype=torch.float64), torch.randn(d, generator=g, dtype=torch.float64)


class PositionAttention(nn.Module):
    """One causal attention head over token embeddings, with one of POSITIONS: sinusoidal or learned vectors added
    to the tokens, or RoPE turning q and k. `max_len` rows of the learned table; rows past the trained length are
    never trained."""

    def __init__(self, pos: str, vocab: int, d: int, max_len: int, generator: torch.Generator):
        super().__init__()
        if pos not in POSITIONS:
            raise ValueError("invalid:pos")
        self.pos, self.d = pos, d
        self.tok = embedding(vocab, d, generator)
        if pos == "learned":
            self.table = embedding(max_len, d, generator)
        self.register_buffer("sin_table", sinusoidal(max_len, d), persistent=False)
        self.q, self.k = linear(d, d, False, generator), linear(d, d, False, generator)
        self.v, self.head = linear(d, d, False, generator), linear(d, vocab, False, generator)
        self.last_weights: torch.Tensor | None = None

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        B, T = idx.shape
        x = self.tok(idx)  # (B, T, d)
        if self.pos == "learned":
            x = x + self.table.weight[:T]
        elif self.pos == "sinusoidal":
            x = x + self.sin_table[:T]
        q, k = self.q(x), self.k(x)  # (B, T, d)
        if self.pos == "rope":
            at = torch.arange(T)
            q, k = rope(q, at), rope(k, at)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)  # (B, T, T)
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        w = scores.softmax(-1)
        self.last_weights = w.detach()
        return self.head(w @ self.v(self.tok(idx)))  # (B, T, vocab): values are the tokens alone


@dataclass(frozen=True)
class PositionResult:
    pos: str
    accuracy: np.ndarray  # (test_len,) share right per position (position 0 is not scored: NaN)
    weights: np.ndarray  # (test_len, test_len) attention of one test sequence
    train_len: int
    loss: float  # last training loss

    @property
    def inside(self) -> float:
        """Share right within the trained length."""
        return float(np.nanmean(self.accuracy[1:self.train_len]))

    @property
    def beyond(self) -> float:
        """Share right past the trained length; NaN when nothing past it was read."""
        past = self.accuracy[self.train_len:]
        return float(np.nanmean(past)) if len(past) else math.nan


def position_experiment(pos: str, train_len: int, test_len: int, steps: int = 300, seed: int = 0,
                        vocab: int = 16, d: int = 32, batch: int = 32, lr: float = 0.01) -> PositionResult:
    """Train one attention head to output the previous token (a purely relative rule) on sequences of train_len,
    then read sequences of test_len: does the rule still hold past the trained length?"""
    g = torch.Generator().manual_seed(seed)
    model = PositionAttention(pos, vocab, d, max(train_len, test_len), torch.Generator().manual_seed(seed))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss = torch.tensor(float("nan"))
    for _ in range(steps):
        idx = torch.randint(vocab, (batch, train_len), generator=g)
        y = torch.cat([torch.full((batch, 1), IGNORE), idx[:, :-1]], 1)  # (B, T): the token before
        loss = F.cross_entropy(model(idx).reshape(-1, vocab), y.reshape(-1), ignore_index=IGNORE)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    with torch.no_grad():
        idx = torch.randint(vocab, (256, test_len), generator=g)
        right = (model(idx).argmax(-1)[:, 1:] == idx[:, :-1]).double().mean(0).numpy()
        acc = np.concatenate([[np.nan], right])
        weights = model.last_weights[0].numpy()
    return PositionResult(pos, acc, weights, train_len, loss.item())


# ---------- initialisation and depth ----------
INITS = ("default", "xavier", "he")
HIST_SAMPLES = 8192
ACTS = {"tanh": torch.tanh, "relu": torch.relu, "gelu": F.gelu}


def init_weight(w: torch.Tensor, init: str, generator: torch.Generator) -> None:
    """PyTorch's default (U(±1/√fan_in): variance 1/(3·fan_in)), Xavier/Glorot normal (2/(fan_in + fan_out)) or
    He/Kaiming normal (2/fan_in)."""
    if init == "default":
        nn.init.kaiming_uniform_(w, a=math.sqrt(5), generator=generator)
    elif init == "xavier":
        nn.init.xavier_normal_(w, generator=generator)
    elif init == "he":
        nn.init.kaiming_normal_(w, nonlinearity="relu", generator=generator)
    else:
        raise ValueError(f"unknown init {init}")


@dataclass(frozen=True)
class InitStats:
    acts: list[np.ndarray]  # per layer, its outputs (after the activation), the first HIST_SAMPLES of the batch's
    grads: list[np.ndarray]  # per layer, the loss gradient with respect to those outputs (as many)
    act_std: np.ndarray  # (depth,)
    grad_std: np.ndarray  # (depth,)


def init_stats(depth: int, width: int, init: str, act: str, seed: int = 0, n: int | None = None) -> InitStats:
    """A plain MLP of `depth` layers (no residuals, no norms) at initialisation: what each layer outputs for random
    inputs, and the gradient that reaches it back from a random regression loss."""
    # inputs: enough values for the histograms, no more (the cost is n·width²)
    n = n or max(64, 2 * HIST_SAMPLES // width)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, width, generator=g)
    target = torch.randn(n, width, generator=g)
    hs, h = [], x
    for _ in range(depth):
        w = torch.empty(width, width)
        init_weight(w, init, g)
        h = ACTS[act](h @ w.requires_grad_().T)
        h.retain_grad()
        hs.append(h)
    (0.5 * (h - target).pow(2).sum(1).mean()).backward()
    act_std = np.array([float(a.detach().std()) for a in hs])
    grad_std = np.array([float(a.grad.std()) for a in hs])
    sample = slice(None, HIST_SAMPLES)  # the histograms need a few thousand values a layer, not all of them
    return InitStats([a.detach().numpy().ravel()[sample] for a in hs], [a.grad.numpy().ravel()[sample] for a in hs],
                     act_std, grad_std)


# ---------- the FFN ----------
FFNS = ("gelu", "swiglu")


class SwiGLU(nn.Module):
    """LLaMA's FFN: down(silu(gate(x)) * up(x)); three matrices, no biases."""

    def __init__(self, d_model: int, d_ff: int, generator: torch.Generator | None = None):
        super().__init__()
        self.gate = linear(d_model, d_ff, False, generator)
        self.up = linear(d_model, d_ff, False, generator)
        self.down = linear(d_ff, d_model, False, generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))  # (B, T, C) -> (B, T, d_ff) -> (B, T, C)


def swiglu_hidden(d_model: int, multiple_of: int = 8) -> int:
    """LLaMA's hidden width: two thirds of 4·d, rounded up to a multiple, so SwiGLU costs about what a 4× GELU FFN
    costs."""
    h = int(2 * 4 * d_model / 3)
    return multiple_of * math.ceil(h / multiple_of)


def ffn_params(kind: str, d_model: int, d_ff: int) -> int:
    """Parameters of one FFN: GELU 2·d·d_ff + d_ff + d (with biases), SwiGLU 3·d·d_ff (none)."""
    if kind == "gelu":
        return 2 * d_model * d_ff + d_ff + d_model
    if kind == "swiglu":
        return 3 * d_model * d_ff
    raise ValueError(f"unknown FFN {kind}")


def ffn_module(kind: str, d_model: int, d_ff: int) -> nn.Module:
    """The real module (built on the meta device: nothing allocated), whose parameters the tests count."""
    with torch.device("meta"):
        return FeedForward(d_model, d_ff) if kind == "gelu" else SwiGLU(d_model, d_ff)


def ffn_trace(kind: str, d_model: int, d_ff: int, rows: int) -> list[tuple[str, tuple, tuple]]:
    """(step, input shape, output shape) of each call inside the real FFN module on a batch of `rows` tokens
    (rows, d_model), traced on the meta device: up-projection, activation (and gate), down-projection."""
    steps = trace_shapes(ffn_module(kind, d_model, d_ff), torch.zeros(rows, d_model, device="meta"))
    return [(s.name, s.in_shapes[0], s.out_shape) for s in steps]


# ---------- KV cache ----------
KV_KINDS = ("mha", "gqa", "mqa", "mla")
DEEPSEEK_V2_MLA = (128, 128, 512, 64)  # DeepSeek-V2's heads, head dimension, latent d_c and RoPE key d_R: the
# sizes of the article's "about 57×" (2·128·128 numbers per token per layer against 512 + 64)


def kv_bytes_per_token_layer(kind: str, n_head: int, d_head: int, n_kv_head: int, d_c: int, d_rope: int,
                             dtype_bytes: int) -> int:
    """Bytes one token leaves in one layer's cache. MHA: K and V of every head (2·n_h·d_h numbers); GQA: of n_kv
    groups; MQA: of one; MLA (DeepSeek-V2): one compressed latent of d_c plus a shared RoPE key of d_rope."""
    if kind == "mla":
        return (d_c + d_rope) * dtype_bytes
    kv = {"mha": n_head, "gqa": n_kv_head, "mqa": 1}[kind]
    return kv_cache_bytes(1, 1, n_head * d_head, n_head, kv, dtype_bytes)


def kv_ratios(per_token: dict[str, int]) -> dict[str, float]:
    """How many times fewer numbers MLA caches than each of MHA, GQA and MQA (kv_bytes_per_token_layer's values)."""
    return {kind: per_token[kind] / per_token["mla"] for kind in KV_KINDS if kind != "mla"}


# ---------- Pre-LN against Post-LN ----------
LN_MODES = ("pre", "post")


@dataclass(frozen=True)
class DepthConfig:
    vocab_size: int  # distinct tokens
    block_size: int  # longest sequence
    n_layer: int = 12  # blocks
    n_head: int = 2  # heads per block
    d_model: int = 32  # width
    ln: str = "pre"  # "pre": x + f(LN(x)) (GPT-2 on); "post": LN(x + f(x)) (the 2017 Transformer)


class CausalSelfAttention(nn.Module):
    """nanoGPT's attention: one q/k/v projection and PyTorch's fused causal attention (few ops: a 12-block model
    steps fast enough to be watched live)."""

    def __init__(self, d_model: int, n_head: int, generator: torch.Generator):
        super().__init__()
        if n_head < 1 or d_model % n_head:
            raise ValueError("invalid:heads")
        self.n_head = n_head
        self.qkv = linear(d_model, 3 * d_model, generator=generator)
        self.proj = linear(d_model, d_model, generator=generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n_head, C // self.n_head).permute(2, 0, 3, 1, 4)  # (B, nh, T, hs)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, nh, T, hs)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))  # (B, T, C)


class DepthBlock(nn.Module):
    """A transformer block with its LayerNorms before the sub-layers (Pre-LN) or after the residual sum (Post-LN)."""

    def __init__(self, c: DepthConfig, generator: torch.Generator):
        super().__init__()
        self.pre = c.ln == "pre"
        self.ln1, self.ln2 = nn.LayerNorm(c.d_model), nn.LayerNorm(c.d_model)
        self.attn = CausalSelfAttention(c.d_model, c.n_head, generator)
        self.ffn = FeedForward(c.d_model, 4 * c.d_model, generator=generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.pre:  # the residual stream itself is never normalised
            x = x + self.attn(self.ln1(x))  # (B, T, C)
            return x + self.ffn(self.ln2(x))
        x = self.ln1(x + self.attn(x))  # (B, T, C): every sum is normalised, so is the path gradients take back
        return self.ln2(x + self.ffn(x))


class DeepTransformer(nn.Module):
    """Token + learned position embeddings, n_layer DepthBlocks, a final LayerNorm for Pre-LN only (Post-LN's last
    block already ends in one), and the head."""

    def __init__(self, c: DepthConfig, generator: torch.Generator):
        super().__init__()
        if c.ln not in LN_MODES:
            raise ValueError("invalid:ln")
        self.tok = embedding(c.vocab_size, c.d_model, generator)
        self.pos = embedding(c.block_size, c.d_model, generator)
        self.blocks = nn.ModuleList(DepthBlock(c, generator) for _ in range(c.n_layer))
        self.ln_f = nn.LayerNorm(c.d_model) if c.ln == "pre" else nn.Identity()
        self.head = linear(c.d_model, c.vocab_size, False, generator)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tok(idx) + self.pos.weight[: idx.shape[1]]  # (B, T, C)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))  # (B, T, vocab)


class DepthTrainer(LossCurve):
    """Adam on a DeepTransformer with linear warmup over `warmup` steps; records the loss and each block's gradient
    norm (at initialisation and after every step)."""

    def __init__(self, config: DepthConfig, task, lr: float, warmup: int, seed: int = 0, batch_size: int = 16):
        self.config, self.task, self.lr, self.warmup, self.batch_size = config, task, lr, warmup, batch_size
        self.model = DeepTransformer(config, torch.Generator().manual_seed(seed))
        self.generator = torch.Generator().manual_seed(seed)  # the batches: the same for every arrangement
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr, fused=True)  # one kernel a step
        self.steps, self.diverged = 0, False
        self.history: list[dict] = []
        x, y = task.batch(batch_size, torch.Generator().manual_seed(seed + 1))
        self._loss(x, y).backward()
        self.init_norms = self.grad_norms()  # before any step
        self.norms = self.init_norms
        self.optimizer.zero_grad(set_to_none=True)

    def _loss(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        logits = self.model(x)
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), ignore_index=IGNORE)

    def grad_norms(self) -> np.ndarray:
        """(n_layer,) the L2 norm of each block's parameter gradients."""
        with torch.no_grad():
            norms = [nn.utils.get_total_norm([p.grad for p in b.parameters() if p.grad is not None])
                     for b in self.model.blocks]
            return torch.stack(norms).numpy()

    def lr_at(self, step: int) -> float:
        return self.lr * min(1.0, (step + 1) / self.warmup) if self.warmup else self.lr

    def step(self, n: int = 1) -> None:
        for _ in range(n):
            if self.diverged:
                return
            for group in self.optimizer.param_groups:
                group["lr"] = self.lr_at(self.steps)
            x, y = self.task.batch(self.batch_size, self.generator)
            loss = self._loss(x, y)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.norms = self.grad_norms()
            self.optimizer.step()
            self.record(loss.item())


def init_gradient_ratio(pre: DepthTrainer, post: DepthTrainer) -> tuple[float, float]:
    """(smallest, largest) over the blocks of Post-LN's gradient norm at initialisation divided by Pre-LN's (two
    runs from the same weights and batch)."""
    ratio = np.asarray(post.init_norms, dtype=np.float64) / np.asarray(pre.init_norms, dtype=np.float64)
    return float(ratio.min()), float(ratio.max())

