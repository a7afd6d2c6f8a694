"""The sequence-models lab's live run (sim.core.live.LiveRun): the RNN, the LSTM, the causal transformer and Mamba
learning the same memory task from the same batches, one optimizer step of one model per step, in turn (as the
block lab's DepthRun: a tick moves the picture as often whatever the number of models)."""
from __future__ import annotations

import numpy as np

from sim.sequence.encdec import STYLES, EncDecTrainer, text_task
from sim.sequence.memory import KINDS, MemoryConfig, MemoryTask, MemoryTrainer, reach
from sim.transformers.live import InTurn

ATTN_WIDTH, ATTN_LAYERS, ATTN_HEADS = 32, 1, 2  # the transformer: one block reads a key anywhere in its context
MAMBA_WIDTH, MAMBA_STATE = 16, 8  # Mamba: one selective layer, 16 channels of 8 state numbers each


def memory_run(distance: int, hidden: int, lr: float, seed: int, batch_size: int = 32) -> MemoryRun:
    """The four models on MemoryTask(distance): the RNN and LSTM with `hidden` state numbers, the transformer one
    block of width 32, Mamba one selective layer of width 16 (state 8 per channel); Adam at `lr`, batches of
    batch_size, the same batches for all four (one seed)."""
    task = MemoryTask(distance)
    fixed = {"attn": MemoryConfig("attn", hidden=ATTN_WIDTH, layers=ATTN_LAYERS, heads=ATTN_HEADS),
             "mamba": MemoryConfig("mamba", hidden=MAMBA_WIDTH, state=MAMBA_STATE)}
    configs = [fixed.get(k, MemoryConfig(k, hidden=hidden)) for k in KINDS]
    return MemoryRun([MemoryTrainer(task, c, lr, batch_size, seed) for c in configs])


def window_run(distance: int, window: int, layers: int, seed: int, lr: float = 3e-3, batch_size: int = 32) -> MemoryRun:
    """Full causal attention against the same transformer with a causal window mask (each position sees itself and
    `window` positions back), both `layers` blocks of width 32, on MemoryTask(distance), the same batches; the
    window model's reach is layers × window positions."""
    task = MemoryTask(distance)
    if not 1 <= window <= distance or not 1 <= layers <= 4:
        raise ValueError("invalid:window")
    c = {"hidden": ATTN_WIDTH, "layers": layers, "heads": ATTN_HEADS}
    return MemoryRun([MemoryTrainer(task, MemoryConfig("attn", **c), lr, batch_size, seed),
                      MemoryTrainer(task, MemoryConfig("window", window=window, **c), lr, batch_size, seed)])


class MemoryRun(InTurn):
    trainers: list[MemoryTrainer]

    @property
    def task(self) -> MemoryTask:
        return self.trainers[0].task

    def trainer(self, kind: str) -> MemoryTrainer:
        return next(tr for tr in self.trainers if tr.config.kind == kind)

    def frame(self) -> dict:
        """Per model: its kind, steps, loss and moving-accuracy curves (decimated), accuracy per distance 1..D, the
        longest distance it holds (sim.sequence.memory.reach), recent loss, diverged or not."""
        runs = []
        for tr in self.trainers:
            steps, loss, acc = tr.curves()
            by_d = tr.accuracy_by_distance()
            runs.append({"kind": tr.config.kind, "steps": tr.steps, "curve": np.asarray(steps, dtype=np.int32),
                         "loss": np.asarray(loss, dtype=np.float32), "acc": np.asarray(acc, dtype=np.float32),
                         "by_distance": by_d.astype(np.float32), "reach": reach(by_d), "recent": tr.recent_loss(),
                         "diverged": tr.diverged})
        return {"steps": self.steps, "distance": self.task.distance, "keys": self.task.keys, "runs": runs}


def encdec_run(text: str, layers: int, width: int, lr: float, seed: int) -> EncDecRun:
    """The encoder (BERT-style) and the decoder (GPT-style) on the same windows of CORPORA[text], in turn."""
    task = text_task(text)
    return EncDecRun([EncDecTrainer(task, s, layers, width, lr, seed) for s in STYLES])


class EncDecRun(InTurn):
    trainers: list[EncDecTrainer]

    def trainer(self, style: str) -> EncDecTrainer:
        return next(tr for tr in self.trainers if tr.style == style)

    def frame(self) -> dict:
        """Per style: its name, steps, loss curve (decimated), recent loss, diverged or not."""
        runs = []
        for tr in self.trainers:
            steps, loss = tr.curves()
            runs.append({"kind": tr.style, "steps": tr.steps, "curve": np.asarray(steps, dtype=np.int32),
                         "loss": np.asarray(loss, dtype=np.float32), "recent": tr.recent_loss(),
                         "diverged": tr.diverged})
        return {"steps": self.steps, "runs": runs}
