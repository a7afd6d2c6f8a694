"""The optimiser race on a real model: the same tanh MLP 2 → width → width → k, the same initial weights and the
same mini-batches of a classification data set (sim.core.data), trained once per optimiser, a few steps at a time.

Each racer is one run: SGD, heavy-ball momentum (torch.optim.SGD), Adam, AdamW (torch.optim), Lion (the published
rule, the Lion class below) or Muon (torch.optim.Muon on the hidden width × width matrix, the only 2-D weight
that is neither the input nor the output layer, and AdamW on the rest). While it trains, a racer measures the
wall-clock of each step (forward, backward and update; the update alone too) and holds the loss of the whole
training set after each step (a loss above DIVERGED times its start, or not finite, ends the racer);
`state_bytes` counts the bytes its optimisers' state tensors hold.

A racer can follow a learning-rate schedule (sim.optim.optimizers.schedule, as a factor of its learning rates per
step): the schedules section trains one racer per schedule. A loss that is no longer finite ends that racer
(`diverged`); the others go on. Everything runs on the CPU in float32 (float64 if asked, for the tests), with its
own generators (the global RNG is not touched).

A race (or a schedules race) is one live run (sim.core.live.LiveRun): RaceRun steps every racer, its frame holds each
racer's compact view. Everything it computes is a pure function of its settings, however its steps are grouped,
except the wall-clock figures (the ms per step, and the ms curve), which measure the machine as it runs.
"""
from __future__ import annotations

import math
import statistics
import time
from collections import deque
from dataclasses import dataclass

import numpy as np
import torch

from sim.core.data import make_classification, n_classes
from sim.core.history import CAP, kept_after_compaction, minmax_indices
from sim.optim.muon import init_mlp, mlp_loss
from sim.optim.optimizers import NS_STEPS, RACE_LRS, RACERS, SCHEDULES, schedule, schedule_args

MOMENTUM = 0.9  # heavy ball's β
BETAS = (0.9, 0.999)  # Adam's and AdamW's
LION_BETAS = (0.9, 0.99)
MUON_MOMENTUM = 0.95  # torch.optim.Muon's default, Nesterov
POINTS = 200
NOISE = 0.1
DIVERGED = 10.0  # a whole-set loss above this many times the loss at step 0 (or not finite) ends the racer
KEYS = ("loss", "ms", "lr")  # what the history records per step
EXACT = ("loss", "lr")  # the recorded values that do not depend on the clock: what a long history is compacted on
POINTS_DRAWN = {"loss": 160, "ms": 40, "lr": 100}  # the most points of each curve a frame carries (min–max decimated)
WARMUP = 5  # the first steps include torch's one-off set-up (the state's allocation): not in the ms curve
TIMED = 50  # the wall-clock figures are medians of the last TIMED steps (robust to a busy machine)


@dataclass(frozen=True)
class RaceConfig:
    """What every racer of one race shares."""

    dataset: str = "spiral"  # a name in sim.core.data.CLASSIFICATION_DATASETS
    width: int = 32  # neurons of each of the two hidden layers
    batch: int = 32  # points per step, drawn at random; ≥ POINTS: the whole set (full batch)
    seed: int = 0  # the data, the initial weights and the batches
    weight_decay: float = 0.01  # AdamW's, Lion's and Muon's (and the AdamW beside Muon); SGD, momentum, Adam: none
    dtype: torch.dtype = torch.float32

    def __post_init__(self):
        n_classes(self.dataset)  # raises ValueError("invalid:dataset")
        if not (self.width >= 1 and self.batch >= 1 and math.isfinite(self.weight_decay) and self.weight_decay >= 0):
            raise ValueError("invalid:race")


class Lion(torch.optim.Optimizer):
    """Lion (Chen et al. 2023): c = β₁m + (1 − β₁)g; θ ← θ − η(sign(c) + λθ); m ← β₂m + (1 − β₂)g."""

    def __init__(self, params, lr: float = 1e-4, betas: tuple[float, float] = LION_BETAS, weight_decay: float = 0.0):
        super().__init__(params, {"lr": lr, "betas": betas, "weight_decay": weight_decay})

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            lr, (b1, b2), wd = group["lr"], group["betas"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["exp_avg"] = torch.zeros_like(p)
                m = state["exp_avg"]
                c = m.mul(b1).add_(p.grad, alpha=1.0 - b1)
                p.add_(torch.sign(c).add_(p, alpha=wd), alpha=-lr)
                m.mul_(b2).add_(p.grad, alpha=1.0 - b2)


def hidden_matrices(params: list[torch.Tensor]) -> list[torch.Tensor]:
    """The 2-D weights between hidden layers: every weight but the first (input) and the last (output) layer's."""
    weights = [p for p in params if p.ndim == 2]
    return weights[1:-1]


def make_optimizers(name: str, params: list[torch.Tensor], lr: float, weight_decay: float,
                    rest_lr: float = RACE_LRS["adamw"]) -> list[torch.optim.Optimizer]:
    """The racer's optimisers over `params` (init_mlp's order). Muon: Muon(lr) on the hidden matrices and
    AdamW(rest_lr) on the rest, as Muon is used in practice. torch's fused implementations where there is one: one
    kernel per step for all parameters, 2–4 times faster than a loop over these small tensors (the same rule)."""
    if name == "sgd":
        return [torch.optim.SGD(params, lr=lr, fused=True)]
    if name == "momentum":
        return [torch.optim.SGD(params, lr=lr, momentum=MOMENTUM, fused=True)]
    if name == "adam":
        return [torch.optim.Adam(params, lr=lr, betas=BETAS, fused=True)]
    if name == "adamw":
        return [torch.optim.AdamW(params, lr=lr, betas=BETAS, weight_decay=weight_decay, fused=True)]
    if name == "lion":
        return [Lion(params, lr=lr, weight_decay=weight_decay)]
    if name == "muon":
        hidden = hidden_matrices(params)
        rest = [p for p in params if all(p is not h for h in hidden)]
        return [torch.optim.Muon(hidden, lr=lr, weight_decay=weight_decay, momentum=MUON_MOMENTUM,
                                 ns_steps=NS_STEPS),
                torch.optim.AdamW(rest, lr=rest_lr, betas=BETAS, weight_decay=weight_decay, fused=True)]
    raise ValueError(f"unknown racer {name!r}; one of {', '.join(RACERS)}")


def tensor_bytes(state: dict) -> int:
    """Bytes of the tensors in an optimizer's state (per parameter: its buffers and its step counter)."""
    return sum(v.numel() * v.element_size() for s in state.values() for v in s.values() if torch.is_tensor(v))


class Racer:
    """One run of the race: `name`'s optimiser(s) training the config's MLP, `step(n)` at a time."""

    def __init__(self, name: str, config: RaceConfig, lr: float, lr_factors: np.ndarray | None = None,
                 label: str | None = None, rest_lr: float = RACE_LRS["adamw"], max_steps: int | None = None):
        """rest_lr: Muon's AdamW on the parameters that are no hidden matrix; lr_factors: the schedule, a factor of
        the learning rates per step; the run ends after max_steps steps (with a schedule: after its last)."""
        self.name, self.config, self.lr = name, config, float(lr)
        self.label = label or name  # what the race calls it (a schedule's name in the schedules race)
        if not all(math.isfinite(v) and v > 0 for v in (self.lr, rest_lr)):
            raise ValueError("invalid:lr")
        X, y = make_classification(config.dataset, POINTS, NOISE, config.seed)
        self.X, self.y = torch.tensor(X / 6.0, dtype=config.dtype), torch.tensor(y)
        sizes = [2, config.width, config.width, n_classes(config.dataset)]
        self.params = [p.to(config.dtype).requires_grad_() for p in init_mlp(config.seed, sizes)]
        self.optimizers = make_optimizers(name, self.params, self.lr, config.weight_decay, rest_lr)
        self.base_lrs = [[g["lr"] for g in o.param_groups] for o in self.optimizers]
        self.lr_factors = None if lr_factors is None else np.asarray(lr_factors, dtype=np.float64)
        self.max_steps = len(self.lr_factors) if self.lr_factors is not None else max_steps
        self.generator = torch.Generator().manual_seed(config.seed)  # the batches: the same for every racer
        self.steps = 0
        self.start_loss = self.full_loss()
        # columns of the history, NaN for no value: the whole-set loss after each step, the median ms per step so far
        # (TIMED), the learning rate used; compacted as sim.core.history does once longer than its CAP
        self.columns: dict[str, list[float]] = {"step": [0], "loss": [self.start_loss], "ms": [math.nan],
                                                "lr": [math.nan]}
        self.step_s: deque[float] = deque(maxlen=TIMED)  # wall-clock of whole steps
        self.update_s: deque[float] = deque(maxlen=TIMED)  # of the optimisers' step() alone
        self.diverged_at: int | None = None

    @property
    def n_params(self) -> int:
        return sum(p.numel() for p in self.params)

    @property
    def diverged(self) -> bool:
        return self.diverged_at is not None

    @property
    def finished(self) -> bool:
        """The run has made its max_steps steps."""
        return self.max_steps is not None and self.steps >= self.max_steps

    @property
    def done(self) -> bool:
        return self.diverged or self.finished

    @torch.no_grad()
    def full_loss(self) -> float:
        return mlp_loss(self.params, self.X, self.y).item()

    def batch(self) -> tuple[torch.Tensor, torch.Tensor]:
        n = len(self.y)
        if self.config.batch >= n:
            return self.X, self.y
        idx = torch.randint(0, n, (self.config.batch,), generator=self.generator)
        return self.X[idx], self.y[idx]

    def current_lr_factor(self) -> float:
        return 1.0 if self.lr_factors is None else float(self.lr_factors[min(self.steps, len(self.lr_factors) - 1)])

    def step(self, n: int = 1) -> None:
        """n optimiser steps; a racer that diverged or finished its schedule does nothing."""
        for _ in range(n):
            if self.done:
                return
            self._step()

    def _step(self) -> None:
        factor = self.current_lr_factor()
        for opt, lrs in zip(self.optimizers, self.base_lrs, strict=True):
            for group, lr in zip(opt.param_groups, lrs, strict=True):
                group["lr"] = lr * factor
        x, y = self.batch()
        t0 = time.perf_counter()
        for opt in self.optimizers:
            opt.zero_grad(set_to_none=True)
        loss = mlp_loss(self.params, x, y)
        loss.backward()
        t1 = time.perf_counter()
        for opt in self.optimizers:
            opt.step()
        t2 = time.perf_counter()
        self.step_s.append(t2 - t0)
        self.update_s.append(t2 - t1)
        self.steps += 1
        value = self.full_loss()
        if not value <= DIVERGED * self.start_loss or not all(torch.isfinite(p).all() for p in self.params):
            self.diverged_at, value = self.steps, math.nan
        ms = self.ms_per_step() if self.steps > WARMUP else math.nan
        for key, v in (("step", self.steps), ("loss", value), ("ms", ms), ("lr", self.lr * factor)):
            self.columns[key].append(v)
        if len(self.columns["step"]) > CAP:
            # on the loss and the learning rate only: which steps stay must not depend on the clock
            keep = kept_after_compaction(self.columns["step"], np.column_stack([self.columns[k] for k in EXACT]))
            self.columns = {k: [c[i] for i in keep] for k, c in self.columns.items()}

    @property
    def history(self) -> list[dict]:
        """The recorded steps as dicts {"step", "loss", "ms", "lr"} (NaN: no value)."""
        return [dict(zip(self.columns, row, strict=True)) for row in zip(*self.columns.values(), strict=True)]

    def state_bytes(self) -> int:
        """Bytes held by the optimisers' state (0 before the first step: torch allocates it then)."""
        return sum(tensor_bytes(o.state) for o in self.optimizers)

    def step_counters(self) -> tuple[int, int]:
        """(how many, bytes) of the step counters in the optimisers' state: torch's Adam and AdamW keep one per
        parameter tensor; SGD, momentum, Lion and Muon keep none."""
        steps = [s["step"] for o in self.optimizers for s in o.state.values() if torch.is_tensor(s.get("step"))]
        return len(steps), sum(v.numel() * v.element_size() for v in steps)

    def ms_per_step(self) -> float | None:
        """Median wall-clock of the last TIMED steps, in ms (None before a step)."""
        return statistics.median(self.step_s) * 1e3 if self.step_s else None

    def update_ms(self) -> float | None:
        """Median wall-clock of the optimisers' step() alone over the last TIMED steps, in ms."""
        return statistics.median(self.update_s) * 1e3 if self.update_s else None

    def curve(self, max_points: int = POINTS_DRAWN["loss"]) -> tuple[list[int], list[float]]:
        """Steps and whole-set losses, min–max decimated to at most max_points (a diverged racer ends in NaN)."""
        return self.curves({"loss": max_points})["loss"]

    def curves(self, max_points: dict[str, int] = POINTS_DRAWN) -> dict[str, tuple[list[int], list[float]]]:
        """Per recorded value named in max_points: its steps and values, each min–max decimated on its own to at
        most max_points[key] (NaN: no value)."""
        steps = np.asarray(self.columns["step"], dtype=np.float64)
        out = {}
        for key, most in max_points.items():
            values = np.asarray(self.columns[key], dtype=np.float64)
            idx = minmax_indices(steps, values, most)
            out[key] = (steps[idx].astype(int).tolist(), values[idx].tolist())
        return out

    def view(self, curves: tuple[str, ...] = KEYS) -> dict:
        """What the live view and the table show of this racer: plain values only (for sim.plots); "curves" holds
        the recorded values named in `curves`, decimated to POINTS_DRAWN."""
        return {"name": self.name, "label": self.label, "steps": self.steps, "loss": self.last_loss(),
                "start_loss": self.start_loss, "ms": self.ms_per_step(), "update_ms": self.update_ms(),
                "state_bytes": self.state_bytes(), "counters": self.step_counters(), "params": self.n_params,
                "diverged_at": self.diverged_at, "finished": self.finished,
                "curves": self.curves({k: POINTS_DRAWN[k] for k in curves})}

    def frame(self, curves: tuple[str, ...] = ("loss", "ms")) -> dict:
        """What the live view draws of this racer, compact (a trajectory keeps hundreds of frames): its label, steps,
        latest loss and ms per step, learning rate, how it ended, and the curves named in `curves` as (int32 steps,
        float32 values) arrays, decimated to POINTS_DRAWN."""
        out = {}
        for key, (steps, values) in self.curves({k: POINTS_DRAWN[k] for k in curves}).items():
            out[key] = (np.asarray(steps, dtype=np.int32), np.asarray(values, dtype=np.float32))
        return {"label": self.label, "steps": self.steps, "loss": self.last_loss(), "ms": self.ms_per_step(),
                "lr": self.lr, "diverged_at": self.diverged_at, "finished": self.finished, "curves": out}

    def last_loss(self) -> float | None:
        """The latest finite whole-set loss (a diverged racer's before it diverged)."""
        return next((v for v in reversed(self.columns["loss"][-5:]) if math.isfinite(v)), None)


def race(names, config: RaceConfig, lrs: dict[str, float], steps: int | None = None) -> list[Racer]:
    """One racer per optimiser in `names`, each with its learning rate from `lrs` (RACE_LRS where missing) for
    `steps` steps (None: no end); Muon's AdamW part takes AdamW's."""
    lr = {**RACE_LRS, **lrs}
    return [Racer(n, config, lr[n], rest_lr=lr["adamw"], max_steps=steps) for n in names]


def schedule_race(optimizer: str, config: RaceConfig, lr: float, steps: int, warmup: int, floor: float,
                  decay: float) -> list[Racer]:
    """One racer per schedule in SCHEDULES, all with `optimizer` at peak learning rate `lr` for `steps` steps;
    warmup, floor (a share of the peak) and decay (WSD: the share of steps before the decay) as the schedules
    section's curves (sim.optim.optimizers.schedule)."""
    args = schedule_args(steps, warmup, floor, decay)
    return [Racer(optimizer, config, lr, schedule(s, steps, 1.0, **args[s]), label=s, rest_lr=lr) for s in SCHEDULES]


class RaceRun:
    """A race as one live run (sim.core.live.LiveRun): advance(n) steps every racer n steps, one racer after the other
    (a racer that diverged or finished does nothing); it has stopped once every racer has. `curves`: the recorded
    values its frame carries ("loss" and "ms" for the race, "loss" and "lr" for the schedules race)."""

    def __init__(self, racers: list[Racer], curves: tuple[str, ...] = ("loss", "ms")):
        self.racers, self.curves = list(racers), tuple(curves)

    @property
    def steps(self) -> int:
        """Steps made: every racer still running has made this many (all start at 0 and step together)."""
        return max((r.steps for r in self.racers), default=0)

    @property
    def stopped(self) -> bool:
        return all(r.done for r in self.racers)

    def shared(self) -> tuple:
        """The data set and the schedules' factors: they never change (a checkpoint references them)."""
        return tuple(x for r in self.racers for x in (r.X, r.y, r.lr_factors) if x is not None)

    def advance(self, n: int) -> None:
        for r in self.racers:
            r.step(n)

    def frame(self) -> dict:
        """Each racer's compact view (Racer.frame), in the race's order: numbers and arrays, the page adds the words."""
        return {"steps": self.steps, "racers": [r.frame(self.curves) for r in self.racers]}
