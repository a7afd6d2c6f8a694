"""Shape tracing of real modules: every tensor a forward pass makes, with its parameters, FLOPs and bytes.

trace_shapes runs the module under a TorchFunctionMode, so each torch call (F.linear, view, transpose,
matmul, softmax, ...) is recorded as it really happens, attributed to the innermost module running it.
On the "meta" device tensors have shapes but no data, so any size can be traced without allocating.

Validation errors are `ShapeError(code, params)` with no English text: the page translates `code`.
Codes and their params:
  not_positive {name, value}      heads_divide {d_model, n_head, options}
  kv_heads_divide {n_head, n_kv_head, options}
"""
from __future__ import annotations

import linecache
import os
import sys
from dataclasses import dataclass, replace

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from sim.core.errors import CodedError
from sim.core.models import embedding

ERROR_CODES = ("not_positive", "heads_divide", "kv_heads_divide", "id_range")
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
SIZES = ("batch", "seq_len", "d_model", "n_head", "n_kv_head", "d_ff", "vocab_size", "n_layer")

# ops that only reinterpret or move data: no arithmetic
LAYOUT_OPS = {"view", "reshape", "transpose", "permute", "contiguous", "getitem", "expand", "unsqueeze", "squeeze",
              "flatten", "unflatten", "split", "chunk", "t", "T", "mT", "narrow", "select", "clone", "to", "type",
              "detach", "embedding", "arange", "ones", "zeros", "full", "empty", "ones_like", "zeros_like", "tril",
              "triu", "dropout"}
# FLOPs per output element, one per arithmetic operation. Rough on purpose: at any real size the
# matmuls dominate; these only keep the small ops from reading as free.
ELEMENTWISE_FLOPS = {
    "add": 1, "sub": 1, "mul": 1, "div": 1, "neg": 1, "pow": 1, "sqrt": 1, "rsqrt": 1, "exp": 1, "log": 1,
    "abs": 1, "relu": 1, "masked_fill": 1, "where": 1, "eq": 1, "ne": 1, "lt": 1, "le": 1, "gt": 1, "ge": 1,
    "logical_not": 1, "invert": 1, "maximum": 1, "minimum": 1, "clamp": 1, "tanh": 1,
    "sigmoid": 4, "silu": 4,  # exp, add, divide (and multiply for SiLU)
    "gelu": 8,  # the tanh approximation: cube, multiply-adds, tanh
    "softmax": 5, "log_softmax": 5,  # max, subtract, exp, sum, divide
    "layer_norm": 7,  # mean, subtract, square, mean, normalise, scale, shift
    "rms_norm": 4,  # square, mean, normalise, scale
}
FACTORIES = {"ones", "zeros", "full", "empty", "arange", "eye", "rand", "randn", "randint", "linspace", "tensor"}
REDUCTIONS = {"sum", "mean", "var", "std", "amax", "amin", "norm"}  # one FLOP per input element
_REFLECTED = {"radd", "rsub", "rmul", "rtruediv", "rmatmul", "iadd", "isub", "imul", "itruediv"}
_TORCH_DIR = os.path.dirname(torch.__file__)


class ShapeError(CodedError):
    """Sizes that cannot make a model: `code` names the reason, `params` fills the translated message."""

    CODES = ERROR_CODES


@dataclass(frozen=True)
class ShapeStep:
    """One tensor made by one torch call during the forward pass."""

    name: str  # a leaf module's path for its own op ("blocks.0.attn.q_proj"), else path + "." + op ("blocks.0.add")
    op: str  # the torch function: linear, view, transpose, matmul, softmax, add, ...
    out_shape: tuple[int, ...]
    module: str  # path of the innermost module running ("" = the traced module itself)
    in_shapes: tuple[tuple[int, ...], ...]  # every tensor argument, parameters and buffers included
    sources: tuple[int, ...]  # steps whose outputs this step reads; -1 - k is the k-th traced input
    params: int  # parameters this step reads for the first time in the trace (shared weights count once)
    flops: int | None  # floating-point operations; None where no counting rule exists for the op
    bytes: int  # size of the output tensor
    view: bool  # the output shares memory with an input (view, transpose): nothing is allocated
    code: str  # the source line that made the call

    @property
    def new_bytes(self) -> int:
        """Memory this step allocates: none for a view."""
        return 0 if self.view else self.bytes


def _op_name(func) -> str:
    name = getattr(func, "__name__", str(func))
    if name == "__get__":  # a property that returns a tensor, such as .T
        name = getattr(func.__self__, "__name__", name)
    if name.startswith("__") and name.endswith("__"):
        name = name[2:-2]
        name = name[1:] if name in _REFLECTED else name
    name = name.rstrip("_")  # in-place variants (add_, masked_fill_) are their op
    return {"truediv": "div", "floordiv": "div"}.get(name, name)


def _tensors(obj) -> list[torch.Tensor]:
    """The tensors in a call's arguments, in order, looking inside lists, tuples and dicts."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for item in obj for t in _tensors(item)]
    if isinstance(obj, dict):
        return [t for item in obj.values() for t in _tensors(item)]
    return []


def _storage(t: torch.Tensor) -> int:
    # the storage's identity: views, transposes, detach and a no-op .to share it with their input.
    # (data_ptr() cannot tell: on "meta" every tensor's is 0)
    return t.untyped_storage()._cdata


def _flops(op: str, args: tuple, kwargs: dict, ins: list[torch.Tensor], out: torch.Tensor) -> int | None:
    if op == "linear":  # x (..., k) @ W.T (k, n) + b: 2·m·n·k, and m·n for the bias
        bias = args[2] if len(args) > 2 else kwargs.get("bias")
        return 2 * out.numel() * ins[0].shape[-1] + (out.numel() if bias is not None else 0)
    if op in ("matmul", "mm", "bmm"):  # (…, m, k) @ (…, k, n): 2·m·n·k per matrix in the batch
        return 2 * out.numel() * ins[0].shape[-1]
    if op in ("addmm", "baddbmm"):
        return 2 * out.numel() * ins[1].shape[-1] + out.numel()
    if op == "scaled_dot_product_attention":  # q·kᵀ and weights·v, with a softmax between
        q, k, v = ins[:3]
        batch_rows = out.numel() // out.shape[-1]  # every query row of every head
        return batch_rows * k.shape[-2] * (2 * q.shape[-1] + 2 * v.shape[-1] + ELEMENTWISE_FLOPS["softmax"])
    if op in LAYOUT_OPS:
        return 0
    if op in ELEMENTWISE_FLOPS:
        return ELEMENTWISE_FLOPS[op] * out.numel()
    if op in REDUCTIONS:
        return ins[0].numel()
    return None


def _caller_line() -> str:
    """The source line outside torch (and outside this file) that made the current call."""
    frame = sys._getframe(2)
    while frame and (frame.f_code.co_filename.startswith(_TORCH_DIR) or frame.f_code.co_filename == __file__):
        frame = frame.f_back
    return linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip() if frame else ""


class _Recorder(TorchFunctionMode):
    """Records a ShapeStep for every tensor a torch call returns."""

    def __init__(self, inputs: tuple[torch.Tensor, ...]):
        super().__init__()
        # on "meta", a tensor the forward makes without naming a device (a causal mask) goes there too,
        # so a (T, T) mask of a huge T is never allocated on the CPU
        self.meta = any(x.is_meta for x in inputs)
        self.steps: list[ShapeStep] = []
        self.modules: list[tuple[str, bool]] = [("", False)]  # (path, is a leaf) of the modules running
        self.producer = {id(x): -1 - k for k, x in enumerate(inputs)}
        self.alive: list[torch.Tensor] = list(inputs)  # held until the trace ends, so no id() is reused
        self.seen_params: set[int] = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        op = _op_name(func)
        if self.meta and op in FACTORIES and kwargs.get("device") is None:
            kwargs = {**kwargs, "device": "meta"}
        out = func(*args, **kwargs)
        outs = _tensors(out) if isinstance(out, (torch.Tensor, tuple, list)) else []
        if outs:
            self._record(op, args, kwargs, outs)
        return out

    def _record(self, op: str, args: tuple, kwargs: dict, outs: list[torch.Tensor]) -> None:
        ins = _tensors(args) + _tensors(kwargs)
        fresh = [p for p in ins if isinstance(p, nn.Parameter) and id(p) not in self.seen_params]
        self.seen_params.update(id(p) for p in fresh)
        sources = tuple(dict.fromkeys(self.producer[id(t)] for t in ins if id(t) in self.producer))
        path, leaf = self.modules[-1]
        name = path if leaf and path else ".".join(filter(None, (path, op)))
        code = _caller_line()
        storages = {_storage(t) for t in ins}
        for i, out in enumerate(outs):
            first = i == 0  # a call's parameters and FLOPs go to its first output
            view = _storage(out) in storages
            self.producer[id(out)] = len(self.steps)
            self.alive.append(out)
            self.steps.append(ShapeStep(
                name=name if len(outs) == 1 else f"{name}[{i}]", op=op, out_shape=tuple(out.shape), module=path,
                in_shapes=tuple(tuple(t.shape) for t in ins), sources=sources,
                params=sum(p.numel() for p in fresh) if first else 0,
                flops=_flops(op, args, kwargs, ins, out) if first else 0,
                bytes=out.numel() * out.element_size(), view=view, code=code))


def trace_shapes(module: nn.Module, *inputs: torch.Tensor) -> list[ShapeStep]:
    """Run module(*inputs) once and return every tensor it made, in execution order."""
    recorder = _Recorder(inputs)

    def leave(*_) -> None:  # a forward hook that returned something would replace the module's output
        recorder.modules.pop()

    hooks = []
    for path, m in module.named_modules():
        leaf = next(m.children(), None) is None
        hooks.append(m.register_forward_pre_hook(lambda *_, p=path, lf=leaf: recorder.modules.append((p, lf))))
        hooks.append(m.register_forward_hook(leave))
    try:
        with torch.no_grad(), recorder:
            module(*inputs)
    finally:
        for h in hooks:
            h.remove()
    return recorder.steps


def follow(steps: list[ShapeStep], start: int, within: str) -> list[int]:
    """Step `start`, then its first reader, that one's first reader, ... while inside module `within`."""
    path = [start]
    while True:
        nxt = next((j for j in range(path[-1] + 1, len(steps)) if path[-1] in steps[j].sources), None)
        if nxt is None or not steps[nxt].module.startswith(within):
            return path
        path.append(nxt)


def shape_chain(steps: list[ShapeStep], path: list[int]) -> list[int]:
    """The steps of `path` that change the shape: the chain one writes down on paper."""
    return [j for k, j in enumerate(path) if k == 0 or steps[j].out_shape != steps[path[k - 1]].out_shape]


def block_of(module: str) -> tuple[str, int] | None:
    """("blocks", 3) for a module inside "blocks.3"; None outside any numbered list of modules."""
    parts = module.split(".")
    k = next((k for k, part in enumerate(parts) if part.isdigit()), None)
    return None if k is None else (".".join(parts[:k]), int(parts[k]))


def collapse_repeats(steps: list[ShapeStep]) -> tuple[list[ShapeStep], str, int]:
    """Keep the first of identical repeated blocks (modules "<list>.0", "<list>.1", ...).

    Returns the kept steps (sources renumbered; a read of a dropped block's output points at the same
    step of block 0), the list's path ("blocks", "" if none) and how many identical blocks were folded
    into block 0 (1: nothing dropped).
    """
    tags = [block_of(s.module) for s in steps]
    lists = {tag[0] for tag in tags if tag}
    if len(lists) != 1:
        return steps, "", 1
    prefix = lists.pop()
    members: dict[int, list[int]] = {}
    for i, tag in enumerate(tags):
        if tag:
            members.setdefault(tag[1], []).append(i)
    n = len(members)
    signature = [(steps[i].op, steps[i].out_shape) for i in members.get(0, [])]
    if n < 2 or sorted(members) != list(range(n)) or any(
            [(steps[i].op, steps[i].out_shape) for i in members[k]] != signature for k in members):
        return steps, prefix, 1
    same_in_block0 = {i: members[0][j] for k in range(1, n) for j, i in enumerate(members[k])}
    kept = [i for i, tag in enumerate(tags) if not tag or tag[1] == 0]
    new_index = {old: new for new, old in enumerate(kept)}

    def renumber(src: int) -> int:
        return src if src < 0 else new_index[same_in_block0.get(src, src)]

    return [replace(steps[i], sources=tuple(dict.fromkeys(map(renumber, steps[i].sources)))) for i in kept], prefix, n


def totals(steps: list[ShapeStep]) -> dict[str, int]:
    """Parameters, FLOPs (ops without a rule count 0, and are counted in "uncounted"), the bytes of every
    output, and the bytes newly allocated (views excluded)."""
    return {"params": sum(s.params for s in steps), "flops": sum(s.flops or 0 for s in steps),
            "bytes": sum(s.bytes for s in steps), "new_bytes": sum(s.new_bytes for s in steps),
            "uncounted": sum(s.flops is None for s in steps)}


# ---------- the lab's model ----------
@dataclass(frozen=True)
class ShapeConfig:
    batch: int = 2  # B: sequences per forward pass
    seq_len: int = 5  # T: tokens per sequence (also the model's context, block_size)
    d_model: int = 8  # C: width of the residual stream
    n_head: int = 4  # h: attention heads; d_h = d_model / h (the notes' letters: their H is d_model)
    n_kv_head: int = 4  # KV heads for the KV-cache arithmetic (grouped-query attention); n_head = plain MHA
    d_ff: int = 32  # hidden width of the feed-forward network
    vocab_size: int = 64  # V: rows of the token embedding, columns of the logits
    n_layer: int = 2  # transformer blocks
    dtype: str = "float32"  # a key of DTYPES: bytes per value of weights, activations and the KV cache
    tie_embeddings: bool = False  # the output head reuses the token embedding's (V, C) matrix (GPT-2 does)

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_head

    @property
    def dtype_bytes(self) -> int:
        return DTYPES[self.dtype].itemsize


PRESETS = {
    "notes": ShapeConfig(),  # the course notes' example: B = 2, T = 5, d_model = 8, 4 heads of d_h = 2
    # the notes' four tokens: [1, 4, 6] stays [1, 4, 6] through every one of 24 blocks
    "tokens": ShapeConfig(batch=1, seq_len=4, d_model=6, n_head=2, n_kv_head=2, d_ff=24, vocab_size=64, n_layer=24),
    # GPT-2 small as published: 124,439,808 parameters, the head tied to the token embedding
    # (untied, the head would add its own 50257 × 768 = 38.6 M)
    "gpt2": ShapeConfig(batch=1, seq_len=1024, d_model=768, n_head=12, n_kv_head=12, d_ff=3072, vocab_size=50257,
                        n_layer=12, tie_embeddings=True),
    # a long context: the (T, T) scores grow with T² while everything else grows with T
    "long": ShapeConfig(batch=1, seq_len=32768, d_model=4096, n_head=32, n_kv_head=8, d_ff=16384, vocab_size=32000,
                        n_layer=32, dtype="bfloat16"),
}


def divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


def near(options: list[int], k: int, count: int = 4) -> list[int]:
    """The `count` options closest to k, in increasing order."""
    return sorted(sorted(options, key=lambda o: (abs(o - k), o))[:count])


def check_model(c: ShapeConfig) -> None:
    """Raise ShapeError if these sizes cannot make the model (KV heads are checked by check_kv_heads)."""
    for name in SIZES:
        value = getattr(c, name)
        if not isinstance(value, int) or value < 1:
            raise ShapeError("not_positive", {"name": name, "value": value})
    if c.d_model % c.n_head:
        raise ShapeError("heads_divide", {"d_model": c.d_model, "n_head": c.n_head,
                                          "options": near(divisors(c.d_model), c.n_head)})


def check_kv_heads(c: ShapeConfig) -> None:
    """Grouped-query attention shares each K/V head among n_head / n_kv_head query heads."""
    if c.n_kv_head > c.n_head or c.n_head % c.n_kv_head:
        raise ShapeError("kv_heads_divide", {"n_head": c.n_head, "n_kv_head": c.n_kv_head,
                                             "options": divisors(c.n_head)})


def build_model(c: ShapeConfig, device: str = "meta") -> nn.Module:
    """The lab's real TinyTransformer with these sizes; on "meta" it holds no data at any size."""
    from sim.transformers.transformer import TinyTransformer, TransformerConfig

    check_model(c)
    config = TransformerConfig(vocab_size=c.vocab_size, block_size=c.seq_len, n_layer=c.n_layer, n_head=c.n_head,
                               d_model=c.d_model, d_ff=c.d_ff, causal=True, dropout=0.0)
    with torch.device(device):
        model = TinyTransformer(config, torch.Generator())
    model = model.to(DTYPES[c.dtype]).eval()
    if c.tie_embeddings:  # one Parameter in both places: counted once, and the head still multiplies by it
        model.lm_head.weight = model.tok_emb.weight  # both (V, C)
    return model


@dataclass(frozen=True)
class ModelTrace:
    """The lab's model traced: embeddings, block 0 and the head step by step, and the whole model's totals."""

    steps: list[ShapeStep]  # later blocks folded onto block 0 (see collapse_repeats)
    block: str  # path of the list of blocks ("blocks")
    n_layer: int  # blocks in the model: block 0's figures count n_layer times in `totals`
    traced_layers: int  # blocks actually run; the model's other blocks are identical copies
    totals: dict[str, int]  # the whole model, as totals() gives them


# blocks actually run: two show one block feeding the next and that they are identical; meta kernels cost
# ~1 ms a call, so tracing all of a 96-block model would take seconds for figures block 0 already has
TRACED_LAYERS = 2


def trace_model(c: ShapeConfig, device: str = "meta") -> ModelTrace:
    """Trace the lab's model on a batch of token ids (B, T)."""
    traced = min(c.n_layer, TRACED_LAYERS)
    model = build_model(replace(c, n_layer=traced), device)
    steps = trace_shapes(model, torch.zeros(c.batch, c.seq_len, dtype=torch.long, device=device))
    kept, prefix, folded = collapse_repeats(steps)
    assert folded == traced or traced == 1, "the traced blocks differ"
    outside = totals([s for s in kept if block_of(s.module) is None])
    block = totals([s for s in kept if block_of(s.module) is not None])
    return ModelTrace(steps=kept, block=prefix, n_layer=c.n_layer, traced_layers=traced,
                      totals={k: outside[k] + c.n_layer * block[k] for k in outside})


def memory_needed(trace: ModelTrace, dtype_bytes: int) -> int:
    """What a real forward pass that keeps its activations (as training does) would hold: weights + new tensors."""
    return trace.totals["params"] * dtype_bytes + trace.totals["new_bytes"]


# the notes' Q through attention at B = 2, T = 5, H = 8, h = 4: projected, view, transpose, the scores, weights·V,
# and "transpose back" to [B, T, C] (in code a transpose, then a view)
NOTES_CHAIN = ((2, 5, 8), (2, 5, 4, 2), (2, 4, 5, 2), (2, 4, 5, 5), (2, 4, 5, 2), (2, 5, 8))


# ---------- the notes' embedding lookup: ids [4, 18, 7] ----------
NOTES_IDS = (4, 18, 7)
LOOKUP_MAX_VALUES = 1 << 22  # tables up to this many values are made on the CPU to show numbers (16 MiB in fp32)


@dataclass(frozen=True)
class Lookup:
    """The lab model's token embedding looked up at some ids."""

    ids: tuple[int, ...]
    table_shape: tuple[int, ...]  # (V, C)
    out_shape: tuple[int, ...]  # (len(ids), C)
    rows: torch.Tensor | None  # (len(ids), C) what the lookup returned; None for a table too large to make here
    rows_are_table_rows: bool | None  # row i is exactly the table's row ids[i]; None without numbers


@torch.no_grad()
def embedding_lookup(c: ShapeConfig, ids: tuple[int, ...] = NOTES_IDS) -> Lookup:
    """Look `ids` up in the token embedding the lab's model starts with (build_model draws it first from a fresh
    torch.Generator(), so this table is that one): (V, C) table, (len(ids),) ids -> (len(ids), C). Past
    LOOKUP_MAX_VALUES values the table is made on the meta device: shapes, no numbers. ShapeError "id_range" for an
    id the vocabulary does not hold."""
    check_model(c)
    if max(ids) >= c.vocab_size:
        raise ShapeError("id_range", {"id": max(ids), "vocab_size": c.vocab_size})
    device = "cpu" if c.vocab_size * c.d_model <= LOOKUP_MAX_VALUES else "meta"
    with torch.device(device):
        table = embedding(c.vocab_size, c.d_model, torch.Generator() if device == "cpu" else None)
    table = table.to(DTYPES[c.dtype])
    rows = table(torch.tensor(ids, device=device))  # (len(ids), C)
    if device == "meta":
        return Lookup(ids, tuple(table.weight.shape), tuple(rows.shape), None, None)
    same = all(torch.equal(rows[i], table.weight[k]) for i, k in enumerate(ids))
    return Lookup(ids, tuple(table.weight.shape), tuple(rows.shape), rows, same)


def kv_cache_bytes(n_layer: int, seq_len: int, d_model: int, n_head: int, n_kv_head: int, dtype_bytes: int,
                   batch: int = 1) -> int:
    """K and V of every layer for every cached token: layers × 2 × B × T × (kv heads × d_h) × bytes.

    With n_kv_head == n_head this is layers × 2 × B × T × d_model × bytes.
    """
    return n_layer * 2 * batch * seq_len * (n_kv_head * (d_model // n_head)) * dtype_bytes


def kv_cache_options(c: ShapeConfig) -> list[tuple[int, int]]:
    """(KV heads, cache bytes for the batch) for every valid KV head count, from MQA (1) to MHA (n_head)."""
    return [(k, kv_cache_bytes(c.n_layer, c.seq_len, c.d_model, c.n_head, k, c.dtype_bytes, c.batch))
            for k in divisors(c.n_head)]


# ---------- counting by formula: parameters, where the FLOPs go, training memory ----------
def param_counts(c: ShapeConfig) -> dict[str, int]:
    """The lab model's parameters by formula, part by part.

    A block: two layer norms (2·C each), Q, K, V and O projections (C·C + C each), the FFN's two layers
    (C·d_ff + d_ff and d_ff·C + C). "non_embedding" is N as Kaplan et al. count it: everything but the
    token and position embeddings and the output head (which is the token embedding itself when tied).
    """
    C, F = c.d_model, c.d_ff
    block = 2 * 2 * C + 4 * (C * C + C) + (C * F + F) + (F * C + C)
    counts = {"tok_emb": c.vocab_size * C, "pos_emb": c.seq_len * C, "blocks": c.n_layer * block, "ln_f": 2 * C,
              "lm_head": 0 if c.tie_embeddings else c.vocab_size * C}
    counts["total"] = sum(counts.values())
    counts["non_embedding"] = counts["blocks"] + counts["ln_f"]
    return counts


def hidden_matrix_params(c: ShapeConfig) -> int:
    """Parameters in the blocks' 2-D weight matrices, Q, K, V, O (C·C each) and the FFN's two (C·d_ff each): the
    ones Muon takes. The embeddings, the output head, the biases and the norms' gains stay on AdamW."""
    return c.n_layer * (4 * c.d_model * c.d_model + 2 * c.d_model * c.d_ff)


@dataclass(frozen=True)
class FlopsSplit:
    """One forward pass's FLOPs in the parts a formula gives, and what the trace adds on top."""

    tokens: int  # B·T tokens in the pass
    params: int  # every parameter, embeddings included (each shared one once)
    n: int  # N: non-embedding parameters (param_counts' "non_embedding")
    weights: int  # 2N per token: each of those weights is one multiply and one add per token
    attention: int  # Q·Kᵀ and weights·V over the full T×T grid: 2·T·C each per token and layer, so 4·L·B·T²·C
    head: int  # the logits, 2·C·V per token: a matrix product even when its weight is the tied embedding
    other: int  # the traced total minus the three: norms, softmax, GELU, residual adds, the mask
    traced: int  # the traced total

    @property
    def all_params_rule(self) -> int:
        """2 × every parameter × tokens: the rule with the embeddings counted, which is not what runs."""
        return 2 * self.params * self.tokens

    @property
    def forward_per_token(self) -> int:
        return 2 * self.n

    @property
    def training_per_token(self) -> int:
        """Forward 2N, backward about twice that (gradients for the inputs and for the weights): 6N."""
        return 6 * self.n

    @property
    def training_pass(self) -> int:
        """A training step on these tokens: about 3 × the traced forward pass."""
        return 3 * self.traced


def flops_split(c: ShapeConfig, traced: int) -> FlopsSplit:
    """Split a traced forward pass's FLOPs: 2N per token, attention's T² part, the logits head, the rest.

    The token and position lookups copy rows and cost nothing, so counting 2 × every parameter × tokens
    charges them with work that never happens (and leaves attention's T² part out).
    """
    tokens = c.batch * c.seq_len
    counts = param_counts(c)
    n = counts["non_embedding"]
    weights, head = 2 * n * tokens, 2 * c.d_model * c.vocab_size * tokens
    attention = c.n_layer * 2 * (2 * c.batch * c.seq_len * c.seq_len * c.d_model)
    return FlopsSplit(tokens=tokens, params=counts["total"], n=n, weights=weights, attention=attention, head=head,
                      other=traced - weights - attention - head, traced=traced)


# Bytes per parameter of each part of the training state (activations come on top).
# fp32: weights, gradients and Adam's two moments (m, v) all in 4 bytes.
# mixed: fp16/bf16 weights and gradients, an fp32 master copy that the update is applied to, fp32 moments.
# article: what the article's 70 B example counts: bf16 weights and two bf16 moments, no gradients, no master.
TRAINING_STATE = {
    "fp32": {"weights": 4, "grads": 4, "master": 0, "adam_m": 4, "adam_v": 4},
    "mixed": {"weights": 2, "grads": 2, "master": 4, "adam_m": 4, "adam_v": 4},
    "article": {"weights": 2, "grads": 0, "master": 0, "adam_m": 2, "adam_v": 2},
}
# the article's Adam paragraph: a 70 B model, bf16 weights ~140 GB, optimizer state 280 GB, "over 420 GB" (GB = 10⁹ B)
ARTICLE_70B = {"params": 70 * 10 ** 9, "weights": 140 * 10 ** 9, "optimizer": 280 * 10 ** 9, "total": 420 * 10 ** 9}


def training_memory(params: int, precision: str) -> dict[str, int]:
    """Bytes of training state for `params` parameters with Adam: each part of TRAINING_STATE[precision],
    "optimizer" (the two moments) and "total" (every part once; activations not included)."""
    parts = {name: params * b for name, b in TRAINING_STATE[precision].items()}
    return {**parts, "optimizer": parts["adam_m"] + parts["adam_v"], "total": sum(parts.values())}


def bytes_per_param(precision: str) -> int:
    return sum(TRAINING_STATE[precision].values())
