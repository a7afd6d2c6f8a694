"""The live runs of the attention lab and of the transformer-block lab (sim.core.live.LiveRun): one run per live
view, however many models it compares. Each is a pure function of its settings and seed however its steps are
grouped into advance() calls, and its frame holds numbers and arrays only (the page adds the words).

- AttentionRun: one tiny transformer (the "train" view), or a causal and an open one on the same task stepped
  together (the "compare" view); a step is an optimizer step of every model.
- DepthRun (Pre-LN against Post-LN, with and without warmup) and MoERun (three balancing modes): the models step in
  turn, a step being one model's optimizer step, so a tick of `speed` steps is one tick's work whatever the number of
  models (the lab's Step trains every model `speed` steps: speed × models).
"""
from __future__ import annotations

import numpy as np

from sim.transformers.blocks import DepthTrainer
from sim.transformers.moe import MoETrainer
from sim.transformers.transformer import LMTrainer


def curve(trainer) -> tuple[np.ndarray, np.ndarray]:
    """A trainer's loss curve (LossCurve.curve: min–max decimated) as (int32 steps, float32 losses)."""
    steps, losses = trainer.curve()
    return np.asarray(steps, dtype=np.int32), np.asarray(losses, dtype=np.float32)


def as_bytes(values, top: float = 1.0) -> np.ndarray:
    """Values in [0, top] as one byte each (uint8, 255 = top): what a heatmap panel sends (sim.plots.panels), so a
    frame keeps them at a quarter of float32's size and draws exactly the same cells."""
    unit = np.clip(np.nan_to_num(np.asarray(values, dtype=float) / top, nan=0.0), 0.0, 1.0)
    return np.rint(unit * 255).astype(np.uint8)


def from_bytes(data: np.ndarray, top: float = 1.0) -> np.ndarray:
    """as_bytes undone (to the byte's precision)."""
    return data.astype(float) / 255 * top


# ---------- the attention lab ----------
class AttentionRun:
    """The attention lab's run: its trainers (sim.transformers.transformer.LMTrainer, one task) stepped together;
    it stops when one of them diverges. The frame carries the attention maps of the task's default probe."""

    def __init__(self, trainers: list[LMTrainer]):
        self.trainers = trainers
        task = trainers[0].task
        self.probe = task.read_probe(task.default_probe())[0]  # the text the frames' maps read

    @property
    def task(self):
        return self.trainers[0].task

    @property
    def steps(self) -> int:
        return self.trainers[0].steps

    @property
    def stopped(self) -> bool:
        return any(tr.diverged for tr in self.trainers)

    def shared(self) -> tuple:
        return (self.task,)  # its text and vocabulary never change

    def advance(self, n: int) -> None:
        for _ in range(n):
            if self.stopped:
                return
            for tr in self.trainers:
                tr.step(1)

    def maps(self, probe: str) -> list[np.ndarray]:
        """Per model, its attention weights reading `probe` (its last block_size characters): (layers, heads, T, T)
        as bytes (as_bytes)."""
        return [as_bytes(np.stack([m.numpy() for m in tr.attention(probe)])) for tr in self.trainers]

    def frame(self) -> dict:
        """steps; the task's loss floor; the probe the maps read; per model: causal or not, its recent loss, its loss
        curve and its maps of the probe."""
        return {"steps": self.steps, "floor": self.task.loss_floor(), "probe": self.probe,
                "runs": [{"causal": tr.config.causal, "recent": tr.recent_loss(), "curve": curve(tr), "maps": m}
                         for tr, m in zip(self.trainers, self.maps(self.probe), strict=True)]}


# ---------- the transformer-block lab: models stepped in turn ----------
class InTurn:
    """Several trainers, one optimizer step of one of them per step, in turn; stopped when all have diverged (a
    diverged one's turns pass without a step)."""

    def __init__(self, trainers: list):
        self.trainers = trainers
        self.steps = 0  # turns taken

    @property
    def stopped(self) -> bool:
        return all(tr.diverged for tr in self.trainers)

    def shared(self) -> tuple:
        return tuple({id(tr.task): tr.task for tr in self.trainers}.values())  # the tasks never change

    def advance(self, n: int) -> None:
        for _ in range(n):
            if self.stopped:
                return
            self._turn(self.trainers[self.steps % len(self.trainers)])
            self.steps += 1

    def _turn(self, trainer) -> None:
        trainer.step(1)


class DepthRun(InTurn):
    """Pre-LN and Post-LN, each without and with warmup (sim.transformers.blocks.DepthTrainer), in turn."""

    trainers: list[DepthTrainer]

    def frame(self) -> dict:
        """Per model: its arrangement ("pre"/"post") and warmup, steps, loss curve, gradient norm per block now and at
        initialisation, recent loss, diverged or not."""
        return {"steps": self.steps, "runs": [
            {"ln": tr.config.ln, "warmup": tr.warmup, "steps": tr.steps, "curve": curve(tr),
             "norms": np.asarray(tr.norms, dtype=np.float32), "init_norms": np.asarray(tr.init_norms, dtype=np.float32),
             "recent": tr.recent_loss(), "diverged": tr.diverged} for tr in self.trainers]}


def load_top(n_experts: int) -> float:
    """The top of the expert-load heatmap's colour scale (sim.plots.blocks.moe_frame): 3 × the fair share."""
    return min(1.0, 3.0 / n_experts)


class MoERun(InTurn):
    """The MoE under each balancing mode (sim.transformers.moe.MoETrainer), in turn."""

    trainers: list[MoETrainer]

    def _turn(self, trainer: MoETrainer) -> None:
        trainer.step(1)
        trainer.model.moe.last = None  # the last routing holds graph tensors, which a checkpoint cannot copy

    def frame(self) -> dict:
        """Per model: its mode, steps, loss curve, each expert's share over training (bytes, 255 = load_top), where
        each cluster's tokens went in the last batch, the load imbalance, dead experts, the share of assignments
        dropped lately, diverged or not."""
        runs = []
        for tr in self.trainers:
            runs.append({"mode": tr.mode, "steps": tr.steps, "curve": curve(tr),
                         "load": as_bytes(tr.load_matrix()[0], load_top(tr.c.n_experts)),
                         "by_cluster": np.asarray(tr.by_cluster, dtype=np.float32), "imbalance": tr.imbalance(),
                         "dead": tr.dead_experts(), "dropped": tr.recent(tr.dropped), "diverged": tr.diverged})
        return {"steps": self.steps, "runs": runs}
