"""The same tiny GPT trained twice, from the same initial weights and batch draws, on the raw corpus and on the
cleaned one (a live run, sim.core.live.LiveRun): its training loss, its loss on clean held-out lines, and its loss
on the test set, which the raw corpus has leaked into. A model that saw test lines scores well on them (a test score
that lies) and memorises repeated lines (training loss below the held-out loss)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from sim.core.history import decimate
from sim.dedup.clean import Cleaned
from sim.dedup.corpus import Corpus
from sim.language.lm import TokenTask, shift_targets
from sim.language.tokenizer import CharTokenizer
from sim.transformers.transformer import LMTrainer, TransformerConfig

CONTEXT = 32  # characters the model reads
WIDTH, LAYERS, HEADS = 64, 2, 4
BATCH = 16
LR = 5e-3
EVAL_EVERY = 25  # steps between held-out and test losses
MAX_STEPS = 2000  # the run stops here
MODELS = ("raw", "clean")
EVALS = ("heldout", "test", "leaked")  # clean held-out lines, the whole test set, its lines that leaked
# nats: two models' held-out-minus-test gaps closer than this are read as the same (at the first evaluations, before
# either model has learnt the corpus, the two gaps differ by about 0.01)
GAP_MARGIN = 0.02


def corpus_text(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def char_tokenizer(corpus: Corpus) -> CharTokenizer:
    """Every character of the raw corpus, the test set and the held-out lines."""
    return CharTokenizer.train(corpus_text(corpus.lines) + corpus_text(corpus.test_lines)
                               + corpus_text(corpus.heldout))


def windows(ids: torch.Tensor, length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Windows of length + 1 tokens every `length` tokens (every token scored once), as (inputs, targets)."""
    starts = torch.arange(0, len(ids) - length, length)
    return shift_targets(torch.stack([ids[s: s + length + 1] for s in starts.tolist()]))


@torch.no_grad()
def window_loss(trainer: LMTrainer, batch: tuple[torch.Tensor, torch.Tensor]) -> float:
    """Mean next-token cross-entropy of the model over the windows."""
    x, y = batch
    trainer.model.eval()
    logits = trainer.model(x)
    trainer.model.train()
    return float(F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1)))


@dataclass
class CleaningRun:
    """The two trainers stepped together; a step is one optimizer step of each."""

    trainers: dict[str, LMTrainer]
    evals: dict[str, tuple[torch.Tensor, torch.Tensor]]  # "heldout", "test" -> fixed windows
    max_steps: int = MAX_STEPS
    history: dict[str, list[tuple[int, float, float]]] = field(default_factory=dict)  # model -> (step, held, test)

    @property
    def steps(self) -> int:
        return self.trainers["raw"].steps

    @property
    def stopped(self) -> bool:
        return self.steps >= self.max_steps or any(t.diverged for t in self.trainers.values())

    def shared(self) -> tuple:
        return (self.evals, *(t.task for t in self.trainers.values()))

    def advance(self, n: int) -> None:
        for _ in range(n):
            if self.stopped:
                return
            for name, trainer in self.trainers.items():
                trainer.step(1)
                if trainer.steps % EVAL_EVERY == 0 or trainer.steps == 1:
                    self.history.setdefault(name, []).append(
                        (trainer.steps, *(window_loss(trainer, self.evals[k]) for k in EVALS)))

    def frame(self) -> dict:
        """Per model: the training curve (decimated), held-out and test losses (float32 arrays) and the latest
        numbers."""
        out = {"steps": self.steps, "models": {}}
        for name, trainer in self.trainers.items():
            pick = decimate(trainer.history, "step", ("loss",), 200)
            h = self.history.get(name, [])
            out["models"][name] = {
                "train": (np.array([p["step"] for p in pick], np.int32),
                          np.array([p["loss"] for p in pick], np.float32)),
                "eval_steps": np.array([e[0] for e in h], np.int32),
                **{k: np.array([e[1 + i] for e in h], np.float32) for i, k in enumerate(EVALS)},
                "loss": trainer.recent_loss(),
                "tokens": int(len(trainer.task.train_ids)),
            }
        return out


def cleaning_run(corpus: Corpus, cleaned: Cleaned, seed: int, max_steps: int = MAX_STEPS) -> CleaningRun:
    """The raw and the cleaned corpus as two tasks of one tokenizer; both models start from the same weights and
    draw their batches from generators of the same seed."""
    tok = char_tokenizer(corpus)
    texts = {"raw": corpus_text(corpus.lines), "clean": corpus_text([corpus.lines[i] for i in cleaned.kept])}
    held = torch.tensor(tok.encode(corpus_text(corpus.heldout)))
    test = torch.tensor(tok.encode(corpus_text(corpus.test_lines)))
    if min(len(tok.encode(t)) for t in texts.values()) < 4 * CONTEXT:
        raise ValueError("invalid:too_little_left")
    config = TransformerConfig(vocab_size=len(tok), block_size=CONTEXT, n_layer=LAYERS, n_head=HEADS, d_model=WIDTH,
                               d_ff=4 * WIDTH)
    trainers = {}
    for name in MODELS:
        ids = torch.tensor(tok.encode(texts[name]))
        task = TokenTask(tok, ids, held, CONTEXT, name=name)
        trainers[name] = LMTrainer(config, task, lr=LR, batch_size=BATCH, seed=seed)
    leaked = torch.tensor(tok.encode(corpus_text([corpus.test_lines[j] for j in corpus.leaked])))
    evals = {"heldout": windows(held, CONTEXT), "test": windows(test, CONTEXT), "leaked": windows(leaked, CONTEXT)}
    return CleaningRun(trainers, evals, max_steps)


def read(frame: dict) -> list[tuple[str, dict]]:
    """What the frame's latest evaluation says, as sayings: each model's held-out loss minus its test loss (above 0:
    the test looks easier to it than new text), the corpora's sizes, and whether the raw model's gap exceeds the
    cleaned model's by more than GAP_MARGIN (its test score flattered by the lines it saw), falls short of it by more,
    or neither. Empty before the first evaluation."""
    m = frame["models"]
    if not len(m["raw"]["test"]):
        return []
    gap = {n: round(float(m[n]["heldout"][-1] - m[n]["test"][-1]), 3) for n in MODELS}
    diff = round(gap["raw"] - gap["clean"], 3)
    verdict = "shows" if diff > GAP_MARGIN else "reversed" if diff < -GAP_MARGIN else "none"
    return [("asst.data.live.read", {"step": int(m["raw"]["eval_steps"][-1]), "raw_gap": f"{gap['raw']:+.3f}",
                                     "clean_gap": f"{gap['clean']:+.3f}", "raw_tokens": f"{m['raw']['tokens']:,}",
                                     "clean_tokens": f"{m['clean']['tokens']:,}"}),
            (f"asst.data.live.leak_{verdict}", {"diff": f"{abs(diff):.3f}", "margin": GAP_MARGIN})]
