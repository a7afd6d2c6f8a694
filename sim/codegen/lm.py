"""The language-model lab's live run (its "train" section) as a standalone script: the built-in language's text drawn
from its seed (sim.language.grammar) or the user's own text read from a file, the character or BPE tokenizer
(sim.language.tokenizer), and the tiny GPT trained on windows of the first 90 % of the tokens
(sim.language.lm.make_task, lm_trainer)."""
from __future__ import annotations

from sim.codegen import header, main_block
from sim.codegen import section as code_section
from sim.codegen.attention import describe, fill, gpt_code
from sim.language.grammar import grammar
from sim.language.lm import BATCH, SYNTHETIC_CHARS

IMPORTS = """import argparse
import json
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
"""
IMPORTS_OWN = IMPORTS.replace("import numpy as np\n", "")

GRAMMARS = {  # sim.language.grammar's rules, as written there
    "en": '''NOUNS = ((" cat", 0.3), (" dog", 0.25), (" bird", 0.2), (" girl", 0.15), (" boy", 0.1))
ADJS = ((" small", 0.4), (" red", 0.3), (" old", 0.2), (" happy", 0.1))
RULES = {  # state -> [(word, probability, next state)]
    "start": [(" the", 0.6, "s_adj"), (" a", 0.4, "s_adj")],
    "s_adj": [*((w, 0.4 * p, "s_noun") for w, p in ADJS), *((w, 0.6 * p, "verb") for w, p in NOUNS)],
    "s_noun": [(w, p, "verb") for w, p in NOUNS],
    "verb": [(" sees", 0.4, "o_det"), (" likes", 0.3, "o_det"), (" chases", 0.2, "o_det"), (" sleeps", 0.1, "end")],
    "o_det": [(" the", 0.5, "o_adj"), (" a", 0.5, "o_adj")],
    "o_adj": [*((w, 0.3 * p, "o_noun") for w, p in ADJS), *((w, 0.7 * p, "end") for w, p in NOUNS)],
    "o_noun": [(w, p, "end") for w, p in NOUNS],
    "end": [(".", 0.8, "start"), (" and", 0.2, "start")],
}
''',
    "zh": '''NOUNS = (("小猫", 0.3), ("小狗", 0.25), ("老师", 0.2), ("学生", 0.15), ("妈妈", 0.1))
RULES = {  # state -> [(word, probability, next state)]
    "start": [*((w, 0.7 * p, "verb") for w, p in NOUNS), ("今天", 0.3, "subj")],
    "subj": [(w, p, "verb") for w, p in NOUNS],
    "verb": [("喜欢", 0.4, "obj"), ("看见", 0.3, "obj"), ("追", 0.2, "obj"), ("睡觉", 0.1, "end")],
    "obj": [("一只鸟", 0.3, "end"), ("一条鱼", 0.2, "end"), ("苹果", 0.2, "end"),
            *((w, 0.3 * p, "end") for w, p in NOUNS)],
    "end": [("。", 0.8, "start"), ("，然后", 0.2, "start")],
}
''',
}

SYNTHETIC = '''

def synthetic_text(seed):
    """The built-in language: $words words drawn from state to state (each word decides the next state), cut to
    $chars characters."""
    rng, state, words = np.random.default_rng(seed), "start", []
    for _ in range($words):
        options = RULES[state]
        word, _, state = options[rng.choice(len(options), p=[p for _, p, _ in options])]
        words.append(word)
    return "".join(words)[:$chars]
'''

OWN = '''

def own_text(path):
    """The user's text (UTF-8, as the lab reads an upload), its first 200,000 characters."""
    with open(path, encoding="utf-8-sig") as f:
        return f.read().replace("\\r\\n", "\\n")[:200_000]
'''

CHAR = '''

def tokenize(text):
    """Character tokens: the sorted characters of the text, token id = index."""
    chars = sorted(set(text))
    return [chars.index(c) for c in text], len(chars)
'''

BPE = '''

def most_frequent_pair(ids):
    """The most frequent adjacent pair of ids and its count; a tie goes to the pair that occurs first."""
    codes, first, counts = np.unique((ids[:-1] << 32) | ids[1:], return_index=True, return_counts=True)
    best = codes[counts == counts.max()][np.argmin(first[counts == counts.max()])]
    return (int(best >> 32), int(best & 0xFFFFFFFF)), int(counts.max())


def merge(ids, pair, new_id):
    """Every occurrence of pair, left to right and without overlaps, replaced by new_id."""
    hits = np.flatnonzero((ids[:-1] == pair[0]) & (ids[1:] == pair[1]))
    if pair[0] == pair[1]:  # in a run "a a a" only the first two merge
        keep, last = [], -2
        for i in hits.tolist():
            if i != last + 1:
                keep.append(i)
                last = i
        hits = np.asarray(keep, dtype=np.int64)
    out = ids.copy()
    out[hits] = new_id
    drop = np.ones(len(ids), dtype=bool)
    drop[hits + 1] = False
    return out[drop]


def tokenize(text):
    """Byte-level BPE (minbpe): the UTF-8 bytes, then $merges merges of the most frequent pair, learned on the text's
    first 100,000 bytes and applied in the order learned."""
    def as_bytes(s):
        return np.frombuffer(s.encode("utf-8"), dtype=np.uint8).astype(np.int64)

    ids, merges = as_bytes(text.encode("utf-8")[:100_000].decode("utf-8", errors="ignore")), []
    for new_id in range(256, $vocab):
        if len(ids) < 2:
            break
        pair, _ = most_frequent_pair(ids)
        ids = merge(ids, pair, new_id)
        merges.append(pair)
    ids = as_bytes(text)
    for new_id, pair in enumerate(merges, start=256):
        ids = merge(ids, pair, new_id)
    return ids.tolist(), 256 + len(merges)
'''

LOOP = '''
BLOCK = $context  # tokens the model reads


def get_batch(ids, n, g):
    """n random windows of the training tokens: inputs x (n, BLOCK), targets y (n, BLOCK) the next token of each."""
    starts = torch.randint(len(ids) - BLOCK, (n,), generator=g)
    seq = torch.stack([ids[s: s + BLOCK + 1] for s in starts.tolist()])  # (n, BLOCK + 1)
    return seq[:, :-1], seq[:, 1:]


def main(steps):
    text = $text
    train = text[: int(len(text) * 0.9)]  # the last 10 % is the lab's validation text
    ids, vocab = tokenize(train)
    ids = torch.tensor(ids)
    model = GPT(vocab, BLOCK, $width, $layers, $heads, True, torch.Generator().manual_seed($seed))
    g = torch.Generator().manual_seed($seed)  # draws the batches
    optimizer = torch.optim.Adam(model.parameters(), lr=$lr, fused=True)
    for step in range(1, steps + 1):
        x, y = get_batch(ids, $batch, g)
        logits = model(x)  # ($batch, BLOCK, vocab)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        print(json.dumps({"step": step, "loss": loss.item()}))
        if not math.isfinite(loss.item()):
            return  # diverged: the lab stops the run here
'''

OWN_MAIN = '''

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--text", required=True, help="the text file the lab was given (UTF-8)")
    args = parser.parse_args()
    main(args.steps, args.text)
'''


def script(params: dict, link: str) -> str:
    """The standalone script of the language-model lab's live run (the "train" section)."""
    v = params
    code_section(v, ("train",), "language-model", "train")  # NoScript for a section without a live run
    own, bpe = v["source"] == "own", v["tokenizer"] == "bpe"
    if own:
        source, text = OWN, "own_text(path)"
        what = "your own text (the file given with --text, as uploaded or pasted into the lab)"
    else:
        words = int(SYNTHETIC_CHARS / grammar(v["language"]).chars_per_word() * 1.3) + 8
        source = GRAMMARS[v["language"]] + fill(SYNTHETIC, words=words, chars=SYNTHETIC_CHARS)
        text = f"synthetic_text({v['seed']})"
        what = f"the built-in {v['language']!r} language (text seed {v['seed']}), whose entropy is known"
    tokens = fill(BPE, vocab=v["vocab"], merges=v["vocab"] - 256) if bpe else CHAR
    lines = [f"The language-model lab's train section: a tiny GPT learning {what}, "
             f"{'BPE tokens (' + str(v['vocab']) + ' in the vocabulary)' if bpe else 'one token per character'}: "
             f"context {v['context']}, {v['layers']} blocks, {v['heads']} heads, width {v['width']}, Adam lr "
             f"{v['lr']}, batches of {BATCH}, seed {v['t_seed']}. The lab's validation curve is left out."]
    loop = fill(LOOP, context=v["context"], text=text, width=v["width"], layers=v["layers"], heads=v["heads"],
                seed=v["t_seed"], lr=v["lr"], batch=BATCH)
    if own:
        loop = loop.replace("def main(steps):", "def main(steps, path):")
    return (header("Language-model lab, tiny GPT", link) + describe(lines) + (IMPORTS_OWN if own else IMPORTS)
            + ("" if own else "\n") + source + tokens + gpt_code("learned") + loop
            + (OWN_MAIN if own else main_block(300)))
