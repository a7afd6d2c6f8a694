"""The transformer-block lab's live runs as standalone scripts: the "residual" section's race (a deep tiny
transformer, Pre-LN against Post-LN, each without and with warmup: sim.transformers.blocks.DepthTrainer) and the
"moe" section's (a Mixture-of-Experts layer with no balancing, the auxiliary loss and the expert bias:
sim.transformers.moe.MoETrainer). Each section's models start from the same weights and see the same batches."""
from __future__ import annotations

from sim.codegen import header, main_block
from sim.codegen import section as code_section
from sim.codegen.attention import ANSWERS, IGNORE, IMPORTS, INIT, TASK_DATA, describe, fill

SECTIONS = ("residual", "moe")
MOE_BATCH = 256  # tokens per step (labs/blocks/moe.py)

DEPTH_MODEL = '''

class Attention(nn.Module):
    """nanoGPT's causal self-attention: one q/k/v projection and PyTorch's fused attention."""

    def __init__(self, d, n_head, g):
        super().__init__()
        self.n_head, self.qkv, self.proj = n_head, linear(d, 3 * d, g), linear(d, d, g)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n_head, C // self.n_head).permute(2, 0, 3, 1, 4)  # (B, nh, T, hs)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, nh, T, hs)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))  # (B, T, C)


class Block(nn.Module):
    """Pre-LN: x + f(LN(x)), the residual stream never normalised. Post-LN: LN(x + f(x)), every sum normalised."""

    def __init__(self, d, pre, g):
        super().__init__()
        self.pre, self.ln1, self.ln2 = pre, nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = Attention(d, 2, g)
        self.up, self.down = linear(d, 4 * d, g), linear(4 * d, d, g)

    def ffn(self, x):
        return self.down(F.gelu(self.up(x)))  # (B, T, 4C) inside

    def forward(self, x):  # x (B, T, C)
        if self.pre:
            x = x + self.attn(self.ln1(x))
            return x + self.ffn(self.ln2(x))
        x = self.ln1(x + self.attn(x))
        return self.ln2(x + self.ffn(x))


class DeepTransformer(nn.Module):
    """Token + learned position embeddings, the blocks, a final LayerNorm (Pre-LN only), the head."""

    def __init__(self, vocab, block_size, d, n_layer, pre, g):
        super().__init__()
        self.tok, self.pos = embedding(vocab, d, g), embedding(block_size, d, g)
        self.blocks = nn.ModuleList(Block(d, pre, g) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(d) if pre else nn.Identity()
        self.head = linear(d, vocab, g, bias=False)

    def forward(self, idx):  # idx (B, T)
        x = self.tok(idx) + self.pos.weight[: idx.size(1)]  # (B, T, C)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))  # (B, T, vocab)


def main(steps):
    runs = {}  # name -> (model, warmup steps, batch generator, optimizer)
    for name, pre, warmup in (("pre", True, 0), ("pre+warmup", True, $warmup), ("post", False, 0),
                              ("post+warmup", False, $warmup)):
        model = DeepTransformer(len(VOCAB), $block, $width, $layers, pre, torch.Generator().manual_seed($seed))
        optimizer = torch.optim.Adam(model.parameters(), lr=$lr, fused=True)
        runs[name] = (model, warmup, torch.Generator().manual_seed($seed), optimizer)
    for step in range(1, steps + 1):
        losses = {}
        for name, (model, warmup, g, optimizer) in runs.items():
            for group in optimizer.param_groups:  # linear warmup: lr x step / warmup for the first steps
                group["lr"] = $lr * min(1.0, step / warmup) if warmup else $lr
            x, y = get_batch(16, g)
            logits = model(x)  # (16, T, vocab)
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), ignore_index=-100)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses[name] = loss.item()
        print(json.dumps({"step": step, "loss": losses}))
        runs = {n: r for n, r in runs.items() if math.isfinite(losses[n])}  # a diverged run stops
        if not runs:
            return
'''

MOE = '''
D_IN, D, HIDDEN, CLASSES, CLUSTERS = 8, 16, 16, 4, $clusters  # features, width, expert width, labels, clusters
EXPERTS, K, CAPACITY = $experts, $k, $cf  # experts, experts per token, capacity factor


class ClusterTask:
    """Tokens from CLUSTERS blobs; each cluster labels its tokens by its own random linear rule of the noise."""

    def __init__(self, seed):
        g = torch.Generator().manual_seed(seed + 10_000)
        self.centres = torch.randn(CLUSTERS, D_IN, generator=g) * 2.0
        self.rules = torch.randn(CLUSTERS, CLASSES, D_IN, generator=g)

    def batch(self, n, g):
        cluster = torch.randint(CLUSTERS, (n,), generator=g)
        noise = torch.randn(n, D_IN, generator=g)
        x = self.centres[cluster] + 0.3 * noise  # (n, D_IN)
        return x, torch.einsum("ncd,nd->nc", self.rules[cluster], noise).argmax(-1)


class MoE(nn.Module):
    """A router sends each token to its top-K experts (FFNs), at most `cap` tokens per expert; the bias only chooses."""

    def __init__(self, g):
        super().__init__()
        self.router = linear(D, EXPERTS, g, bias=False)
        self.experts = nn.ModuleList(nn.Sequential(linear(D, HIDDEN, g), nn.GELU(), linear(HIDDEN, D, g))
                                     for _ in range(EXPERTS))
        self.register_buffer("bias", torch.zeros(EXPERTS))

    def forward(self, x):  # x (T, D)
        probs = self.router(x).softmax(-1)  # (T, E)
        index = (probs + self.bias).topk(K, dim=-1).indices  # (T, K) the chosen experts
        gates = probs.gather(-1, index)  # (T, K)
$renorm        cap = max(1, int(x.shape[0] * K / EXPERTS * CAPACITY))  # slots per expert
        onehot = F.one_hot(index.T.reshape(-1), EXPERTS)  # (K*T, E): first choices first, in token order
        keep = ((onehot.cumsum(0) * onehot).sum(-1) - 1 < cap).reshape(K, -1).T  # (T, K) got a slot
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            tok, slot = torch.nonzero((index == e) & keep, as_tuple=True)
            if len(tok):
                out = out.index_add(0, tok, gates[tok, slot, None] * expert(x[tok]))
        self.probs, self.index = probs, index
        return out  # a token dropped everywhere gets 0 and keeps only its residual


class Model(nn.Module):
    def __init__(self, g):
        super().__init__()
        self.inp, self.ln1, self.ln2 = linear(D_IN, D, g), nn.LayerNorm(D), nn.LayerNorm(D)
        self.moe, self.head = MoE(g), linear(D, CLASSES, g)

    def forward(self, x):  # x (T, D_IN)
        h = self.inp(x)  # (T, D)
        h = h + self.moe(self.ln1(h))
        return self.head(self.ln2(h))  # (T, CLASSES)


def main(steps):
    task, runs = ClusterTask($seed), {}
    for mode in ("none", "aux", "bias"):
        model = Model(torch.Generator().manual_seed($seed))
        optimizer = torch.optim.Adam(model.parameters(), lr=$lr, fused=True)
        runs[mode] = (model, torch.Generator().manual_seed($seed + 1), optimizer)
    for step in range(1, steps + 1):
        losses = {}
        for mode, (model, g, optimizer) in runs.items():
            x, label = task.batch($batch, g)
            loss = F.cross_entropy(model(x), label)
            counts = torch.bincount(model.moe.index.reshape(-1), minlength=EXPERTS)  # (E,) tokens per expert
            total = loss
            if mode == "aux":  # Switch Transformer: E * sum_i f_i P_i, 1 when balanced
                f = counts.float() / model.moe.index.numel()
                total = loss + $alpha * (EXPERTS * (f * model.moe.probs.mean(0)).sum())
            optimizer.zero_grad(set_to_none=True)
            total.backward()
            optimizer.step()
            if mode == "bias":  # DeepSeek-V3: nudge each expert's bias against its load, outside the gradient
                counts = counts.double()
                model.moe.bias -= $gamma * torch.sign(counts - counts.mean()).float()
            losses[mode] = loss.item()
        print(json.dumps({"step": step, "loss": losses}))
        runs = {m: r for m, r in runs.items() if math.isfinite(losses[m])}  # a diverged run stops
        if not runs:
            return
'''


def script(params: dict, link: str) -> str:
    """The standalone script of the live run the params' section shows (residual or moe)."""
    v = params
    section = code_section(v, SECTIONS, "transformer-block")
    if section == "moe":
        lines = [f"The transformer-block lab's moe section: a Mixture-of-Experts ({v['m_experts']} experts, top "
                 f"{v['m_k']}, capacity factor {v['m_cf']}) learning tokens from {v['m_clusters']} clusters, trained "
                 f"three times from the same weights and batches: no balancing, the auxiliary loss (alpha "
                 f"{v['m_alpha']}) and the expert bias (gamma {v['m_gamma']}); Adam lr {v['m_lr']}, batches of "
                 f"{MOE_BATCH} tokens, seed {v['m_seed']}."]
        body = fill(MOE, clusters=v["m_clusters"], experts=v["m_experts"], k=v["m_k"], cf=v["m_cf"], seed=v["m_seed"],
                    lr=v["m_lr"], batch=MOE_BATCH, alpha=v["m_alpha"], gamma=v["m_gamma"],
                    renorm="        gates = gates / gates.sum(-1, keepdim=True)  # renormalised over the K\n"
                    if v["m_k"] > 1 else "")
        return (header("Transformer-block lab, Mixture-of-Experts", link) + describe(lines) + IMPORTS + INIT
                + body + main_block(300))
    task, length = v["r_task"], 5
    repeat = task == "repeat"
    data = fill(TASK_DATA, length=length, task=task, sep="" if repeat else ' and "|"',
                sep_add="" if repeat else " + SEP", answer=ANSWERS[task], scored="only the answer scored",
                ignore=fill(IGNORE, n=length - 1 if repeat else length))
    lines = [f"The transformer-block lab's residual section: a deep tiny transformer ({v['r_layers']} blocks, width "
             f"{v['r_width']}, 2 heads) on the {task} task, trained four times from the same weights and batches: "
             f"Pre-LN and Post-LN, each without and with {v['r_warmup']} steps of linear warmup; Adam lr {v['r_lr']}, "
             f"batches of 16, seed {v['r_seed']}."]
    body = fill(DEPTH_MODEL, warmup=v["r_warmup"], block=3 * length - 1 if repeat else 2 * length,
                width=v["r_width"], layers=v["r_layers"], seed=v["r_seed"], lr=v["r_lr"])
    return (header("Transformer-block lab, Pre-LN against Post-LN", link) + describe(lines) + IMPORTS + data + INIT
            + body + main_block(300))
