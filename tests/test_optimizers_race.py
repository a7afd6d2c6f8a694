"""The race on a real model (sim/optim/race.py): each racer's updates against the update rules written out here in
float64 (SGD, heavy ball, Adam, AdamW, Lion's published rule, Muon's momentum + Newton–Schulz + AdamW on the rest), its
state bytes against a count from the parameters' shapes, divergence ending one racer, the schedules race's
learning rates, and the live frame (sim.plots.optimizers.race_frame) against the racers' own numbers."""
import math

import numpy as np
import pytest
import torch
from torch.optim._muon import _zeropower_via_newtonschulz  # private in torch 2.13

from sim.optim.muon import init_mlp, mlp_loss
from sim.optim.optimizers import (
    NS_COEFFICIENTS,
    NS_EPS,
    RACE_LRS,
    RACERS,
    SCHEDULES,
    path,
    schedule,
    schedule_args,
    surface,
)
from sim.optim.race import (
    BETAS,
    LION_BETAS,
    MOMENTUM,
    MUON_MOMENTUM,
    Lion,
    RaceConfig,
    Racer,
    hidden_matrices,
    race,
    schedule_race,
)
from sim.plots.optimizers import COLOURS, SCHEDULE_COLOURS, race_frame

CFG = RaceConfig(dataset="spiral", width=8, batch=16, seed=3, weight_decay=0.1, dtype=torch.float64)
STEPS = 20
LABELS = {k: k for k in ("step", "loss", "ms", "lr", "loss_title", "ms_title", "lr_title")} | {
    "caption": "step {step}", "racer": "{name} {loss} {ms}"}


def reference_params(cfg: RaceConfig) -> list[torch.Tensor]:
    return [p.to(cfg.dtype) for p in init_mlp(cfg.seed, [2, cfg.width, cfg.width, 2])]


def batches(racer: Racer, cfg: RaceConfig, steps: int):
    """The racer's data and the batches it draws, drawn again here from a generator of the same seed."""
    gen = torch.Generator().manual_seed(cfg.seed)
    for _ in range(steps):
        idx = torch.randint(0, len(racer.y), (cfg.batch,), generator=gen)
        yield racer.X[idx], racer.y[idx]


def grads(params: list[torch.Tensor], x, y) -> list[torch.Tensor]:
    ps = [p.detach().clone().requires_grad_() for p in params]
    mlp_loss(ps, x, y).backward()
    return [p.grad for p in ps]


class Reference:
    """The update rules written out, one tensor at a time, in float64."""

    def __init__(self, name: str, lr: float, wd: float):
        self.name, self.lr, self.wd, self.t, self.state = name, lr, wd, 0, {}

    def adam(self, i, p, g, lr, decoupled):
        b1, b2 = BETAS
        if decoupled:
            p = p * (1 - lr * self.wd)
        m, v = self.state.get(i, (torch.zeros_like(p), torch.zeros_like(p)))
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        self.state[i] = (m, v)
        m_hat, v_hat = m / (1 - b1 ** self.t), v / (1 - b2 ** self.t)
        return p - lr * m_hat / (v_hat.sqrt() + 1e-8)

    def step(self, params, gs, hidden_ids=()):
        self.t += 1
        out = []
        for i, (p, g) in enumerate(zip(params, gs, strict=True)):
            if self.name == "sgd":
                out.append(p - self.lr * g)
            elif self.name == "momentum":
                buf = MOMENTUM * self.state[i] + g if i in self.state else g
                self.state[i] = buf
                out.append(p - self.lr * buf)
            elif self.name in ("adam", "adamw"):
                out.append(self.adam(i, p, g, self.lr, self.name == "adamw"))
            elif self.name == "lion":
                b1, b2 = LION_BETAS
                m = self.state.get(i, torch.zeros_like(p))
                c = b1 * m + (1 - b1) * g
                out.append(p - self.lr * (torch.sign(c) + self.wd * p))
                self.state[i] = b2 * m + (1 - b2) * g
            elif i in hidden_ids:  # Muon
                buf = self.state.get(i, torch.zeros_like(p))
                buf = buf + (1 - MUON_MOMENTUM) * (g - buf)  # lerp
                self.state[i] = buf
                update = g + MUON_MOMENTUM * (buf - g)  # Nesterov: lerp(g, buf, μ)
                o = _zeropower_via_newtonschulz(update, NS_COEFFICIENTS, 5, NS_EPS).double()  # see test_optimizers
                adjusted = self.lr * math.sqrt(max(1.0, p.shape[0] / p.shape[1]))
                out.append(p * (1 - self.lr * self.wd) - adjusted * o)
            else:  # Muon's AdamW on the rest
                out.append(self.adam(i, p, g, RACE_LRS["adamw"], True))
        return out


@pytest.mark.parametrize("name", [n for n in RACERS if n != "muon"])
def test_each_racer_steps_as_its_rule_for_20_steps(name):
    lr = RACE_LRS[name]
    racer = Racer(name, CFG, lr)
    ref, params = Reference(name, lr, CFG.weight_decay if name in ("adamw", "lion") else 0.0), reference_params(CFG)
    for p, q in zip(racer.params, params, strict=True):
        assert torch.equal(p.detach(), q)  # the same initial weights
    for x, y in batches(racer, CFG, STEPS):
        params = ref.step(params, grads(params, x, y))
        racer.step(1)
        for p, q in zip(racer.params, params, strict=True):
            np.testing.assert_allclose(p.detach().numpy(), q.numpy(), rtol=1e-9, atol=1e-12)
    assert racer.steps == STEPS and not racer.diverged


def test_muon_racer_steps_the_hidden_matrix_as_torch_muon_and_adamw_the_rest():
    """Muon's momentum, Nesterov, decay and learning-rate rule written out, with torch's (bfloat16) Newton–Schulz,
    whose float64 twin sim.optim.optimizers.newton_schulz is tested against it in test_optimizers.py."""
    racer = Racer("muon", CFG, RACE_LRS["muon"], rest_lr=RACE_LRS["adamw"])
    hidden = hidden_matrices(racer.params)
    assert len(hidden) == 1 and hidden[0] is racer.params[2] and hidden[0].shape == (CFG.width, CFG.width)
    muon, adamw = racer.optimizers
    assert isinstance(muon, torch.optim.Muon) and muon.param_groups[0]["params"] == hidden
    assert len(adamw.param_groups[0]["params"]) == len(racer.params) - 1
    ref = Reference("muon", RACE_LRS["muon"], CFG.weight_decay)
    for x, y in batches(racer, CFG, STEPS):
        params = [p.detach().clone() for p in racer.params]  # each step from the racer's weights
        expected = ref.step(params, grads(params, x, y), hidden_ids=(2,))
        racer.step(1)
        for p, q in zip(racer.params, expected, strict=True):
            np.testing.assert_allclose(p.detach().numpy(), q.numpy(), rtol=1e-9, atol=1e-12)
    # the hidden matrix's step is orthogonalised: the float64 Newton–Schulz of the same update, to bfloat16's
    # precision where it matters (the update's large directions), as torch's runs in bfloat16
    update = expected[2] - params[2] * (1 - RACE_LRS["muon"] * CFG.weight_decay)
    sv = np.linalg.svd(update.numpy() / -RACE_LRS["muon"], compute_uv=False)
    assert 0.5 < sv.max() < 1.5


def test_lion_class_follows_the_published_rule_on_a_surface_for_100_steps():
    """The torch Lion of the race against sim.optim.optimizers' Lion path (itself tested against the published rule)."""
    surf = surface("rosenbrock")
    expected = path("lion", surf, None, 100, lr=0.01, beta1=0.9, beta2=0.99, weight_decay=0.1)
    theta = torch.tensor(surf.start, dtype=torch.float64, requires_grad=True)
    opt = Lion([theta], lr=0.01, betas=(0.9, 0.99), weight_decay=0.1)
    for t in range(1, 101):
        theta.grad = torch.tensor(surf.df(*theta.detach().tolist()), dtype=torch.float64)
        opt.step()
        np.testing.assert_allclose(theta.detach().numpy(), expected[t], rtol=1e-12, atol=1e-12)


def test_state_bytes_are_the_bytes_each_optimiser_holds():
    cfg = RaceConfig(width=16, batch=32)  # float32
    racers = race(RACERS, cfg, {}, steps=None)
    shapes = [tuple(p.shape) for p in racers[0].params]
    numel = [math.prod(s) for s in shapes]
    n, k = sum(numel), len(shapes)
    hidden = numel[2]
    expected = {"sgd": 0, "momentum": 4 * n, "adam": 8 * n + 4 * k, "adamw": 8 * n + 4 * k, "lion": 4 * n,
                # Muon: one buffer for the hidden matrix (no step count); AdamW's two moments and a step on the rest
                "muon": 4 * hidden + 8 * (n - hidden) + 4 * (k - 1)}
    for r in racers:
        assert r.state_bytes() == 0  # torch makes the state at the first update
        r.step(2)
        assert r.state_bytes() == expected[r.name], r.name
        assert r.n_params == n
    direct = sum(v.numel() * v.element_size() for s in racers[2].optimizers[0].state.values() for v in s.values())
    assert racers[2].state_bytes() == direct


def test_every_racer_starts_alike_and_measures_its_steps():
    racers = race(RACERS, RaceConfig(width=8), {}, steps=12)
    starts = {r.start_loss for r in racers}
    assert len(starts) == 1 and abs(starts.pop() - math.log(2)) < 0.05  # the same weights, a loss near ln 2
    for r in racers:
        r.step(5)
        assert r.ms_per_step() > 0 and 0 < r.update_ms() < r.ms_per_step()
        r.step(100)
        assert r.steps == 12 and r.finished and r.done
        assert [h["step"] for h in r.history] == list(range(13))
        np.testing.assert_allclose(r.history[-1]["loss"], r.full_loss())


def test_a_diverging_racer_ends_and_the_others_go_on():
    racers = race(("sgd", "adam"), RaceConfig(width=8), {"sgd": 100.0}, steps=None)
    for _ in range(30):
        for r in racers:
            r.step(5)
    sgd, adam = racers
    assert sgd.diverged and sgd.diverged_at <= 150 and sgd.steps == sgd.diverged_at
    assert math.isnan(sgd.history[-1]["loss"]) and sgd.last_loss() is not None
    sgd.step(10)
    assert sgd.steps == sgd.diverged_at  # stays ended, no exception
    assert not adam.diverged and adam.steps == 150


def test_bad_settings_raise_value_errors_the_page_words():
    with pytest.raises(ValueError, match="invalid:dataset"):
        RaceConfig(dataset="bogus")
    with pytest.raises(ValueError, match="invalid:race"):
        RaceConfig(width=0)
    with pytest.raises(ValueError, match="invalid:lr"):
        Racer("adam", RaceConfig(), float("nan"))
    with pytest.raises(ValueError, match="unknown racer"):
        Racer("adagrad", RaceConfig(), 0.1)


def test_schedules_race_uses_each_schedules_rates_and_ends_with_it():
    steps, warmup, floor, decay, lr = 40, 5, 0.1, 0.5, 0.02
    racers = schedule_race("adamw", RaceConfig(width=8), lr, steps, warmup, floor, decay)
    assert [r.label for r in racers] == list(SCHEDULES)
    args = schedule_args(steps, warmup, floor, decay)
    for r in racers:
        r.step(100)
        assert r.finished and r.steps == steps
        used = [h["lr"] for h in r.history[1:]]
        np.testing.assert_allclose(used, lr * schedule(r.label, steps, 1.0, **args[r.label]))
        assert r.optimizers[0].param_groups[0]["lr"] == pytest.approx(used[-1])
    assert len({r.full_loss() for r in racers}) == len(SCHEDULES)  # different rates, different models


def test_race_frame_carries_the_racers_curves_and_colours():
    racers = race(("sgd", "adam", "muon"), RaceConfig(width=8), {}, steps=None)
    for r in racers:
        r.step(30)
    views = [r.view() for r in racers]
    frame = race_frame(views, {n: n.upper() for n in RACERS}, LABELS)
    loss, ms = frame["panels"]
    assert [s["color"] for s in loss["series"]] == [COLOURS[n] for n in ("sgd", "adam", "muon")]
    assert loss["y_range"] == [0.0, pytest.approx(1.1 * racers[0].start_loss)]
    steps, values = racers[1].curve()
    assert loss["series"][1]["x"] == steps
    np.testing.assert_allclose(loss["series"][1]["y"], values, rtol=1e-5)
    assert ms["y_range"][0] == 0.0 and ms["series"][2]["y"][-1] == pytest.approx(racers[2].ms_per_step(), rel=1e-5)
    assert frame["epoch"] == 30 and "SGD" in frame["caption"] and "step 30" in frame["caption"]
    sched = schedule_race("sgd", RaceConfig(width=8), 0.1, 20, 2, 0.1, 0.5)
    for r in sched:
        r.step(20)
    frame = race_frame([r.view() for r in sched], {s: s for s in SCHEDULES}, LABELS, scheduled=True)
    assert [s["color"] for s in frame["panels"][1]["series"]] == [SCHEDULE_COLOURS[s] for s in SCHEDULES]
    assert frame["panels"][1]["title"] == "lr_title"
