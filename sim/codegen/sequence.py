"""The sequence-models lab's live runs as standalone scripts: the "memory" (and "why") section's race of an RNN, an
LSTM, a causal transformer and a Mamba layer on the memory task (sim.sequence.live.memory_run), the "sparse"
section's full against window attention on it (window_run), and the "encdec" section's encoder (BERT-style) against
decoder (GPT-style) on one text (encdec_run). Each run's models see the same batches."""
from __future__ import annotations

from sim.codegen import header, main_block
from sim.codegen import section as code_section
from sim.codegen.attention import CORPORA, IMPORTS, INIT, describe, fill, gpt_code
from sim.sequence.live import ATTN_HEADS, ATTN_LAYERS, ATTN_WIDTH, MAMBA_STATE, MAMBA_WIDTH

SECTIONS = ("memory", "why", "sparse", "encdec")

MEMORY_TASK = '''
KEYS, NOISE = 8, 8  # symbols to remember, symbols of the noise around them
QUERY, VOCAB = KEYS + NOISE, KEYS + NOISE + 1  # the query mark ends every sequence
DISTANCE = $distance  # the longest distance between the key and the query
T = DISTANCE + 1  # tokens per sequence


def get_batch(n, g):
    """n noise sequences, each with a key d ~ U{1..DISTANCE} steps before the query: x (n, T), the keys y (n,)."""
    x = KEYS + torch.randint(0, NOISE, (n, T), generator=g)
    y = torch.randint(0, KEYS, (n,), generator=g)
    d = torch.randint(1, DISTANCE + 1, (n,), generator=g)
    x[torch.arange(n), T - 1 - d] = y
    x[:, -1] = QUERY
    return x, y
'''

TRANSFORMER = '''

class Transformer(nn.Module):
    """The tiny GPT with one pre-LN block: causal self-attention ($heads heads), a GELU FFN; learned positions."""

    def __init__(self, d, g, n_head=$heads):
        super().__init__()
        self.n_head, self.tok, self.pos = n_head, embedding(VOCAB, d, g), embedding(T, d, g)
        self.ln1 = nn.LayerNorm(d)
        self.q, self.k, self.v, self.o = (linear(d, d, g) for _ in range(4))
        self.ln2, self.up, self.down = nn.LayerNorm(d), linear(d, 4 * d, g), linear(4 * d, d, g)
        self.ln_f, self.head = nn.LayerNorm(d), linear(d, VOCAB, g, bias=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(T))  # (B, T, C)
        B, _, C = x.shape
        h = self.ln1(x)
        q, k, v = (p(h).view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for p in (self.q, self.k, self.v))
        att = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(q.size(-1)))  # (B, H, T, T) scores
        att = att.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))  # no peeking ahead
        y = torch.softmax(att, dim=-1) @ v  # (B, H, T, hs)
        x = x + self.o(y.transpose(1, 2).contiguous().view(B, T, C))  # (B, T, C)
        x = x + self.down(F.gelu(self.up(self.ln2(x))))
        return self.head(self.ln_f(x))[:, -1, :KEYS]  # (B, KEYS): the key symbols' logits at the query
'''

READER = '''

class Reader(GPT):
    """The tiny GPT reading a sequence: the key symbols' logits at the query, (B, KEYS)."""

    def forward(self, idx):
        return super().forward(idx)[:, -1, :KEYS]
'''

RECURRENT = '''

class Recurrent(nn.Module):
    """Embedding, torch's nn.RNN (tanh) or nn.LSTM, a linear read-out of the last hidden state."""

    def __init__(self, cell, hidden, g):
        super().__init__()
        self.emb, self.cell = embedding(VOCAB, 16, g), cell(16, hidden, batch_first=True)
        with torch.no_grad():  # torch's init, U(-1/sqrt(hidden), 1/sqrt(hidden)), from generator g
            for p in self.cell.parameters():
                p.uniform_(-1 / math.sqrt(hidden), 1 / math.sqrt(hidden), generator=g)
        self.head = linear(hidden, KEYS, g)

    def forward(self, x):
        out, _ = self.cell(self.emb(x))  # (B, T, hidden)
        return self.head(out[:, -1])  # (B, KEYS)


def scan(a, b):
    """h_t = a_t h_(t-1) + b_t along dim 0 (h_(-1) = 0), as an associative scan in log2(L) rounds."""
    L, k = a.shape[0], 1
    while k < L:
        b = torch.cat([b[:k], a[k:] * b[:-k] + b[k:]])
        a = torch.cat([a[:k], a[k:] * a[:-k]])
        k *= 2
    return b


class Mamba(nn.Module):
    """A selective SSM layer: the input sets delta, B and C at each step; y from the scan, gated by silu(z)."""

    def __init__(self, g, d=$width, n=$state):
        super().__init__()
        self.emb, self.proj = embedding(VOCAB, d, g), linear(d, 2 * d, g)
        self.dt, self.bc = linear(d, d, g), linear(d, 2 * n, g, bias=False)
        with torch.no_grad():  # delta starts log-uniform in [0.001, 0.1]: its bias is softplus^-1 of that
            dt = torch.exp(torch.rand(d, generator=g) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3))
            self.dt.bias.copy_(dt + torch.log(-torch.expm1(-dt)))
        self.A_log = nn.Parameter(torch.log(torch.arange(1, n + 1, dtype=torch.float32)).repeat(d, 1))  # A = -1..-n
        self.D = nn.Parameter(torch.ones(d))
        self.head = linear(d, KEYS, g)

    def forward(self, x):
        u, z = self.proj(self.emb(x)).chunk(2, -1)  # (B, L, d) each
        u = F.silu(u)
        B, C = self.bc(u).chunk(2, -1)  # (B, L, n) each
        delta = F.softplus(self.dt(u))  # (B, L, d)
        a = torch.exp(delta[..., None] * -torch.exp(self.A_log))  # (B, L, d, n): how much of the state is kept
        b = (delta * u)[..., None] * B[:, :, None, :]  # (B, L, d, n): what enters it
        h = scan(a.transpose(0, 1), b.transpose(0, 1)).transpose(0, 1)  # (B, L, d, n): every step's state
        y = (h * C[:, :, None, :]).sum(-1) + self.D * u  # (B, L, d)
        return self.head(y[:, -1] * F.silu(z[:, -1]))  # (B, KEYS)
'''

LOOP = '''

def main(steps):
    runs = {}  # name -> (model, batch generator, optimizer)
    for name, build in $models:
        model = build(torch.Generator().manual_seed($seed))
        runs[name] = (model, torch.Generator().manual_seed($batches), torch.optim.Adam(model.parameters(), lr=$lr))
    for step in range(1, steps + 1):
        losses = {}
        for name, (model, g, optimizer) in runs.items():
            $loss
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            losses[name] = loss.item()
        print(json.dumps({"step": step, "loss": losses}))
        runs = {n: r for n, r in runs.items() if math.isfinite(losses[n])}  # a diverged run stops
        if not runs:
            return
'''
MEMORY_LOSS = """x, y = get_batch(32, g)
            loss = F.cross_entropy(model(x), y)"""

TEXT_TASK = '''
TEXT = $text
CHARS = "".join(sorted(set(TEXT)))  # token id = index; the [MASK] symbol is one more
MASK, VOCAB, T = len(CHARS), len(CHARS) + 1, $length  # the models read T characters


def windows(n, g):
    """(n, T + 1) windows of the text (read cyclically) at random starts."""
    ids = torch.tensor([CHARS.index(c) for c in TEXT])
    starts = torch.randint(0, len(ids), (n,), generator=g)
    return ids[(starts[:, None] + torch.arange(T + 1)) % len(ids)]


def loss_of(model, causal, x, g):
    """GPT: every position predicts the next character. BERT: 15 % of the positions (at least one a row) masked,
    the model predicts the characters there from both sides (masks drawn from g)."""
    if causal:
        logits = model(x[:, :-1])  # (n, T, VOCAB)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1))
    x = x[:, :-1]
    n, T = x.shape
    picked = torch.rand(n, T, generator=g) < 0.15
    picked[torch.arange(n), torch.randint(0, T, (n,), generator=g)] = True
    logits = model(x.masked_fill(picked, MASK))
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), x.masked_fill(~picked, -100).reshape(-1),
                           ignore_index=-100)
'''
ENCDEC_LOSS = """loss = loss_of(model, name == "gpt", windows(32, g), masking[name])"""


def script(params: dict, link: str) -> str:
    """The standalone script of the live run the params' section shows."""
    v = params
    section = code_section(v, SECTIONS, "sequence-models")
    if section == "encdec":
        seed, lr = v["e_seed"], v["e_lr"]
        size = f'VOCAB, T + 1, {v["e_width"]}, {v["e_layers"]}, 2'
        models = (f'(("bert", lambda g: GPT({size}, False, g)),\n'
                  f'                        ("gpt", lambda g: GPT({size}, True, g)))')
        loop = fill(LOOP, models=models, seed=seed, batches=seed + 1, lr=lr, loss=ENCDEC_LOSS).replace(
            "    runs = {}  # name", f"    masking = {{name: torch.Generator().manual_seed({seed + 2}) for name in "
            '("bert", "gpt")}  # BERT\'s masks\n    runs = {}  # name')
        lines = [f"The sequence-models lab's encdec section: the same tiny transformer ({v['e_layers']} blocks, width "
                 f"{v['e_width']}, 2 heads) trained BERT-style (no mask, masked characters predicted) and GPT-style "
                 f"(causal, next character) on the {v['e_text']!r} text, windows of 16 characters; Adam lr {lr}, "
                 f"gradients clipped to norm 1, batches of 32, seed {seed}."]
        body = fill(TEXT_TASK, text=repr(CORPORA[v["e_text"]]), length=16) + gpt_code("learned") + loop
        return header("Sequence-models lab, encoder against decoder", link) + describe(lines) + IMPORTS + body \
            + main_block(300)
    if section == "sparse":
        distance, seed, lr = v["w_distance"], v["w_seed"], 0.003
        models = (f'(("attn", lambda g: Reader(VOCAB, T, {ATTN_WIDTH}, {v["w_layers"]}, {ATTN_HEADS}, True, 0, g)),\n'
                  f'                        ("window", lambda g: Reader(VOCAB, T, {ATTN_WIDTH}, {v["w_layers"]}, '
                  f'{ATTN_HEADS}, True, {v["w_window"]}, g)))')
        lines = [f"The sequence-models lab's sparse section, trained: a causal transformer ({v['w_layers']} blocks, "
                 f"width {ATTN_WIDTH}) with full attention against the same with each position reading only the "
                 f"{v['w_window']} positions before it, on the memory task (keys up to {distance} steps back); Adam "
                 f"lr {lr}, gradients clipped to norm 1, batches of 32, seed {seed}."]
        body = gpt_code("learned", window=True) + READER
    else:
        distance, seed, lr, hidden = v["m_distance"], v["m_seed"], v["m_lr"], v["m_hidden"]
        models = (f'(("rnn", lambda g: Recurrent(nn.RNN, {hidden}, g)), ("lstm", lambda g: Recurrent(nn.LSTM, '
                  f'{hidden}, g)),\n                        ("attn", lambda g: Transformer({ATTN_WIDTH}, g)), '
                  '("mamba", Mamba))')
        lines = [f"The sequence-models lab's memory race: an RNN and an LSTM ({hidden} state numbers), a causal "
                 f"transformer ({ATTN_LAYERS} block, width {ATTN_WIDTH}) and a Mamba layer (width {MAMBA_WIDTH}, "
                 f"state {MAMBA_STATE}) recalling a key up to {distance} steps back; Adam lr {lr}, gradients clipped "
                 f"to norm 1, batches of 32, seed {seed}."]
        assert ATTN_LAYERS == 1  # Transformer is the engine's TinyTransformer with one block
        body = INIT + fill(TRANSFORMER, heads=ATTN_HEADS) + fill(RECURRENT, width=MAMBA_WIDTH, state=MAMBA_STATE)
    loop = fill(LOOP, models=models, seed=seed, batches=seed + 1, lr=lr, loss=MEMORY_LOSS)
    return (header("Sequence-models lab, memory over distance", link) + describe(lines) + IMPORTS
            + fill(MEMORY_TASK, distance=distance) + body + loop + main_block(300))
