"""Figures of the optimiser lab: paths racing on a 2-D surface (animated in the browser with Plotly frames),
loss against steps, the momentum phase diagram, learning-rate schedules, optimiser-state memory, Muon's
Newton–Schulz spectrum, and Adam's L2 against AdamW's decoupled weight decay.

Built from plain arrays and the engine's Surface (its .value, .bounds, .minimum); no torch.
"""
from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from sim.plots.curves import compact_layout
from sim.plots.palette import ALARM, AMBER, BLUE, BROWN, GOOD, GREEN, GUIDE, INK, ORANGE, PURPLE, RED, WHITE, rgba, tint
from sim.plots.panels import series, xy_panel

COLOURS = {"sgd": RED, "momentum": ORANGE, "nesterov": AMBER, "adagrad": BROWN, "rmsprop": PURPLE, "adam": BLUE,
           "adamw": GREEN, "lion": INK, "muon": PURPLE}
HEIGHT = 460
MAX_FRAMES = 60  # animation frames of the path figure (steps are sampled evenly beyond that)
CONTOUR_SCALE = [[0.0, WHITE], [1.0, tint(GUIDE, 0.75)]]  # greys only, so no path colour is in the background


def colour(name: str) -> str:
    return COLOURS.get(name, GUIDE)


def finite_part(points: np.ndarray) -> np.ndarray:
    """The rows of a path before its first non-finite one (a diverged path ends there)."""
    bad = ~np.isfinite(points).all(axis=-1)
    return points[:int(np.argmax(bad))] if bad.any() else points


def surface_grid(surf, n: int = 120) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x, y and log10(1 + f − min f) of the surface on an n × n grid of its bounds (the contour's shading)."""
    xs, ys, z = surf.grid(n)
    z = np.asarray(z, dtype=float)
    return xs, ys, np.log10(1.0 + z - np.nanmin(z))


def frame_steps(steps: int, most: int = MAX_FRAMES) -> list[int]:
    """The steps the animation shows: every step up to `most`, else `most` evenly spaced ones, always the last."""
    return sorted(set(np.linspace(0, steps, min(steps, most) + 1).round().astype(int).tolist()))


def _clipped(points: np.ndarray, surf) -> np.ndarray:
    """A path's finite rows, each coordinate held to a little beyond the bounds (a diverging path leaves them)."""
    (x0, x1), (y0, y1) = surf.bounds
    pad = 0.05 * max(x1 - x0, y1 - y0)
    p = finite_part(points)
    return np.column_stack([np.clip(p[:, 0], x0 - pad, x1 + pad), np.clip(p[:, 1], y0 - pad, y1 + pad)]) \
        if len(p) else p


def _path_traces(paths: dict[str, np.ndarray], surf, names: dict[str, str], upto: int | None) -> list[go.Scatter]:
    out = []
    for name, points in paths.items():
        p = _clipped(points if upto is None else points[:upto + 1], surf)
        out.append(go.Scatter(x=p[:, 0], y=p[:, 1], mode="lines+markers", name=names[name],
                              line=dict(color=colour(name), width=3), marker=dict(size=4, color=colour(name)),
                              hovertemplate=f"{names[name]}<br>x=%{{x:.3g}}, y=%{{y:.3g}}<extra></extra>"))
    return out


def _highlight_traces(paths: dict[str, np.ndarray], surf, names: dict[str, str], steps: tuple[int, int]
                      ) -> list[go.Scatter]:
    """Steps first … last of each path, drawn wide and translucent over it (no legend entry)."""
    first, last = steps
    out = []
    for name, points in paths.items():
        p = _clipped(points[:last + 1], surf)[first:]
        out.append(go.Scatter(x=p[:, 0], y=p[:, 1], mode="lines", name=f"{names[name]} {first}–{last}",
                              line=dict(color=rgba(colour(name), 0.45), width=12), showlegend=False,
                              hoverinfo="skip"))
    return out


def _end_markers(paths: dict[str, np.ndarray], surf, diverged: dict[str, int | None], label: str) -> go.Scatter:
    """A cross where each diverged path ends."""
    ends = [(name, _clipped(p, surf)) for name, p in paths.items() if diverged.get(name) is not None]
    ends = [(name, p[-1]) for name, p in ends if len(p)]
    return go.Scatter(x=[e[1][0] for e in ends], y=[e[1][1] for e in ends], mode="markers", name=label,
                      marker=dict(symbol="x", size=16, color=ALARM, line=dict(width=2, color=ALARM)),
                      text=[label] * len(ends), hovertemplate="%{text}<extra></extra>", showlegend=bool(ends))


def paths_figure(surf, paths: dict[str, np.ndarray], names: dict[str, str], labels: dict,
                 diverged: dict[str, int | None] | None = None, animate: bool = True,
                 highlight: tuple[int, int] | None = None) -> go.Figure:
    """The surface's contours, the start and the minimum, and one path per optimiser in its colour.

    With `animate`, Plotly frames redraw the paths step by step in the browser (play button and step slider);
    the figure first shows every path in full. `highlight` (first, last step) draws that stretch of every path
    again, wide and translucent (the steps brushed on the loss chart). labels: x, y, start, minimum, diverged,
    play, pause, step.
    """
    diverged = diverged or {}
    xs, ys, z = surface_grid(surf)
    fig = go.Figure(go.Contour(x=xs, y=ys, z=z, colorscale=CONTOUR_SCALE, showscale=False, ncontours=24,
                               contours=dict(coloring="heatmap"), line=dict(color=rgba(GUIDE, 0.6), width=0.5),
                               hoverinfo="skip"))
    fixed = len(fig.data)
    fig.add_traces(_path_traces(paths, surf, names, None))
    start = next(iter(paths.values()))[0] if paths else np.array(surf.start)
    minimum = np.atleast_2d(np.asarray(surf.minimum, dtype=float))
    fig.add_trace(go.Scatter(x=[start[0]], y=[start[1]], mode="markers", name=labels["start"],
                             marker=dict(symbol="circle-open", size=14, color=INK, line=dict(width=2))))
    fig.add_trace(go.Scatter(x=minimum[:, 0], y=minimum[:, 1], mode="markers", name=labels["minimum"],
                             marker=dict(symbol="star", size=14, color=GOOD)))
    fig.add_trace(_end_markers(paths, surf, diverged, labels["diverged"]))
    if highlight is not None:
        fig.add_traces(_highlight_traces(paths, surf, names, highlight))
    compact_layout(fig, labels["x"], labels["y"], HEIGHT)
    (x0, x1), (y0, y1) = surf.bounds
    fig.update_xaxes(range=[x0, x1], constrain="domain")
    fig.update_yaxes(range=[y0, y1])
    steps = max((len(p) - 1 for p in paths.values()), default=0)
    if animate and paths and steps:
        shown = list(range(fixed, fixed + len(paths)))
        stops = frame_steps(steps)
        # a frame carries only the paths' points up to its step, to 4 decimals (the browser keeps each trace's
        # colour and name). Built without plotly's per-value validation (`_validate=False`): the values are
        # plain float arrays made here, and validating 60 frames × 8 paths took ~400 ms of a slider change.
        fig._validate = False
        cut = [[np.round(_clipped(points[:k + 1], surf), 4) for points in paths.values()] for k in stops]
        fig.frames = [go.Frame(data=[go.Scatter(x=p[:, 0], y=p[:, 1], _validate=False) for p in ps],
                               traces=shown, name=str(k), _validate=False) for k, ps in zip(stops, cut, strict=True)]
        fig._validate = True
        play = dict(frame=dict(duration=80, redraw=False), transition=dict(duration=0), fromcurrent=True)
        fig.update_layout(
            margin=dict(b=140),
            updatemenus=[dict(type="buttons", direction="left", x=0, y=-0.24, xanchor="left", yanchor="top",
                              showactive=False, pad=dict(t=0, r=8),
                              buttons=[dict(label=labels["play"], method="animate", args=[None, play]),
                                       dict(label=labels["pause"], method="animate",
                                            args=[[None], dict(mode="immediate", frame=dict(duration=0))])])],
            sliders=[dict(active=len(stops) - 1, x=0.25, len=0.75, y=-0.2, yanchor="top", pad=dict(t=0),
                          currentvalue=dict(prefix=labels["step"] + " ", xanchor="right", font=dict(size=12)),
                          steps=[dict(label=str(k), method="animate",
                                      args=[[str(k)], dict(mode="immediate", frame=dict(duration=0, redraw=False),
                                                           transition=dict(duration=0))]) for k in stops])])
    return fig


def loss_figure(losses: dict[str, np.ndarray], names: dict[str, str], labels: dict,
                diverged: dict[str, int | None] | None = None, log: bool = True) -> go.Figure:
    """f(x_t) − f* against step t (log scale, or linear for a surface without a minimum) for each optimiser;
    a cross where a diverged one ends. labels: step, loss, diverged."""
    diverged = diverged or {}
    fig = go.Figure()
    cross_x, cross_y = [], []
    for name, loss in losses.items():
        loss = np.asarray(loss, dtype=float)
        ok = np.isfinite(loss)
        gap = np.where(ok, np.maximum(loss, 1e-12) if log else loss, np.nan)
        steps = np.arange(len(loss))
        fig.add_trace(go.Scatter(x=steps, y=gap, mode="lines", name=names[name], line=dict(color=colour(name), width=2),
                                 hovertemplate=f"{names[name]}<br>%{{x}}: %{{y:.3g}}<extra></extra>"))
        if diverged.get(name) is not None and ok.any():
            last = int(np.flatnonzero(ok)[-1])
            cross_x.append(last)
            cross_y.append(gap[last])
    fig.add_trace(go.Scatter(x=cross_x, y=cross_y, mode="markers", name=labels["diverged"], showlegend=bool(cross_x),
                             marker=dict(symbol="x", size=14, color=ALARM)))
    compact_layout(fig, labels["step"], labels["loss"], HEIGHT)
    fig.update_yaxes(type="log" if log else "linear", exponentformat="power")
    return fig


SCHEDULE_COLOURS = {"constant": GUIDE, "step": ORANGE, "cosine": BLUE, "wsd": GREEN}


def schedule_figure(curves: dict[str, np.ndarray], names: dict[str, str], labels: dict) -> go.Figure:
    """Learning rate against step, one line per schedule. labels: step, lr."""
    fig = go.Figure()
    for name, lr in curves.items():
        fig.add_trace(go.Scatter(x=np.arange(len(lr)), y=np.asarray(lr, dtype=float), mode="lines", name=names[name],
                                 line=dict(color=SCHEDULE_COLOURS.get(name, INK), width=2.5,
                                           dash="dot" if name == "constant" else None),
                                 hovertemplate=f"{names[name]}<br>%{{x}}: %{{y:.3g}}<extra></extra>"))
    return compact_layout(fig, labels["step"], labels["lr"], 380)


def state_bytes_figure(state_bytes: dict[str, float], names: dict[str, str], labels: dict) -> go.Figure:
    """Bytes of optimiser state per parameter, one bar per optimiser. labels: bytes."""
    keys = list(state_bytes)
    fig = go.Figure(go.Bar(x=[names[k] for k in keys], y=[state_bytes[k] for k in keys],
                           marker_color=[colour(k) for k in keys], text=[f"{state_bytes[k]:g} B" for k in keys],
                           textposition="outside", hovertemplate="%{x}: %{y:g} B<extra></extra>"))
    top = max(state_bytes.values(), default=1) or 1
    compact_layout(fig, None, labels["bytes"], 420)  # taller than the tables below it, also on a phone
    fig.update_yaxes(range=[0, top * 1.25])
    return fig


def gb(n_bytes: float) -> str:
    """Decimal gigabytes, as the article counts (140 GB for 70 B parameters at 2 B)."""
    v = n_bytes / 1e9
    return f"{v:,.0f} GB" if v >= 100 else f"{v:,.3g} GB"


def fmt(v: float, digits: int = 4) -> str:
    """A number for a formula: short, and inf / nan readable."""
    if v is None or not math.isfinite(v):
        return r"\infty" if v is not None and v > 0 else "?"
    return f"{v:.{digits}g}".replace("e-0", "e-").replace("e+0", "e+")


def losses(surf, points: np.ndarray) -> tuple[np.ndarray, bool]:
    """f − f(minimum) along a path (NaN after divergence), and whether a log scale fits (the surface has a
    minimum); a surface without one (the saddle) gives f itself."""
    p = np.asarray(points, dtype=float)
    f = np.asarray(surf.value(np.nan_to_num(p)), dtype=float)
    f[~np.isfinite(p).all(axis=-1)] = np.nan
    if surf.minimum is None:
        return f, False
    return f - surf.value(np.asarray(surf.minimum, dtype=float)), True


def vec(v) -> str:
    """A 2-vector for a formula: (a, b)."""
    return r"\left(" + r",\ ".join(fmt(float(c)) for c in np.asarray(v).reshape(2)) + r"\right)"


def update_latex(opt: str, rec: dict, hyper: dict) -> str:
    """The optimiser's update rule at one step of `trace` (rec), each line symbols = numbers (LaTeX, aligned).

    hyper: the hyper-parameters the path ran with (lr, beta, beta1, beta2, alpha, eps, weight_decay)."""
    t, g, s = rec["step"], rec["grad"], rec["state"]
    h = {k: fmt(v) for k, v in hyper.items()}
    lines = [rf"t &= {t},\quad \theta_{{t-1}} = {vec(rec['theta'])},\quad g_t = \nabla f(\theta_{{t-1}}) = {vec(g)}"]
    given = rf"\eta = {h['lr']}"  # the hyper-parameters of the last line, written after it
    if opt == "momentum":
        lines.append(rf"v_t &= \beta v_{{t-1}} + g_t = {vec(s['buf'])}\quad (\beta = {h['beta']})")
        step = r"\eta\, v_t"
    elif opt == "nesterov":
        lines.append(rf"v_t &= \beta v_{{t-1}} + g_t = {vec(s['buf'])}\quad (\beta = {h['beta']})")
        lines.append(rf"d_t &= g_t + \beta v_t = {vec(s['d'])}")
        step = r"\eta\, d_t"
    elif opt == "adagrad":
        lines.append(rf"s_t &= s_{{t-1}} + g_t^2 = {vec(s['sum'])}")
        step = r"\eta\, g_t / (\sqrt{s_t} + \epsilon)"
    elif opt == "rmsprop":
        lines.append(rf"s_t &= \alpha s_{{t-1}} + (1-\alpha) g_t^2 = {vec(s['square_avg'])}"
                     rf"\quad (\alpha = {h['alpha']})")
        step = r"\eta\, g_t / (\sqrt{s_t} + \epsilon)"
    elif opt in ("adam", "adamw"):
        if opt == "adam" and hyper.get("weight_decay"):
            lines.append(rf"g_t &\leftarrow g_t + \lambda \theta_{{t-1}}\quad (\lambda = {h['weight_decay']})")
        lines.append(rf"m_t &= \beta_1 m_{{t-1}} + (1-\beta_1) g_t = {vec(s['m'])}\quad (\beta_1 = {h['beta1']})")
        lines.append(rf"v_t &= \beta_2 v_{{t-1}} + (1-\beta_2) g_t^2 = {vec(s['v'])}\quad (\beta_2 = {h['beta2']})")
        lines.append(rf"\hat m_t &= m_t / (1-\beta_1^{{t}}) = {vec(s['m_hat'])},\quad "
                     rf"\hat v_t = v_t / (1-\beta_2^{{t}}) = {vec(s['v_hat'])}")
        step = r"\eta\, \hat m_t / (\sqrt{\hat v_t} + \epsilon)"
        if opt == "adamw":  # decoupled: θ ← (1 − ηλ)θ, i.e. ηλθ subtracted beside the adaptive step
            step += r" - \eta\lambda\theta_{t-1}"
            given += rf",\ \lambda = {h['weight_decay']}"
    elif opt == "lion":
        lines.append(rf"c_t &= \beta_1 m_{{t-1}} + (1-\beta_1) g_t = {vec(s['c'])}\quad (\beta_1 = {h['beta1']})")
        lines.append(rf"m_t &= \beta_2 m_{{t-1}} + (1-\beta_2) g_t = {vec(s['m'])}\quad (\beta_2 = {h['beta2']})")
        step = r"\eta\,(\operatorname{sign}(c_t) + \lambda\theta_{t-1})"
        given += rf",\ \lambda = {h['weight_decay']}"
    else:
        step = r"\eta\, g_t"
    lines.append(rf"\theta_t &= \theta_{{t-1}} - {step} = {vec(rec['theta'])} + {vec(rec['update'])}"
                 rf" = {vec(rec['theta_new'])}\quad ({given})")
    return r"\begin{aligned}" + r" \\ ".join(lines) + r"\end{aligned}"


def memory_rows(n_params: float, state_bytes: dict[str, float], base_bytes: float) -> list[dict]:
    """Per optimiser: its state's bytes per parameter, that state for n_params (GB), and the whole training
    state with it in mixed precision: base_bytes per parameter (weights, gradients, master copy) plus the state."""
    return [{"optimizer": k, "bytes": b, "state_gb": gb(n_params * b), "total_gb": gb(n_params * (base_bytes + b))}
            for k, b in state_bytes.items()]


def steps_to(rate: float, factor: float = 1e3) -> float:
    """Steps for an error shrinking like rate^k to fall `factor`-fold (inf when rate ≥ 1)."""
    return math.log(factor) / -math.log(rate) if 0 < rate < 1 else (0.0 if rate == 0 else math.inf)


def momentum_latex(alpha: float, beta: float, kappa: float, optimum: tuple[float, float, float], gd_best: float,
                   crit: tuple[float, float], rates: tuple[float, float]) -> dict[str, str]:
    """Distill's results ("Why Momentum Really Works") as formulas with the current numbers, λ₁ = 1, λₙ = κ.

    optimum: (α*, β*, rate*); crit: critical β for λ₁ and λₙ;
    rates: (momentum's rate, GD's rate at this α)."""
    a_opt, b_opt, r_opt = optimum
    return {
        "eigen": rf"\lambda_1 = 1,\quad \lambda_n = \kappa = {fmt(kappa)},\quad \alpha = {fmt(alpha)},"
                 rf"\quad \beta = {fmt(beta)}",
        "gd": rf"0 < \alpha\lambda_n < 2:\quad \alpha\lambda_n = {fmt(alpha * kappa)}",
        "momentum": rf"0 < \alpha\lambda_n < 2 + 2\beta:\quad \alpha\lambda_n = {fmt(alpha * kappa)},"
                    rf"\quad 2 + 2\beta = {fmt(2 + 2 * beta)}",
        "critical": rf"\beta_c = (1 - \sqrt{{\alpha\lambda}})^2:\quad \lambda_1 \to {fmt(crit[0])},"
                    rf"\quad \lambda_n \to {fmt(crit[1])}",
        "optimal": rf"\begin{{aligned}}\alpha^* &= \Big(\frac{{2}}{{\sqrt{{\lambda_1}} + \sqrt{{\lambda_n}}}}\Big)^2"
                   rf" = {fmt(a_opt)} \\ \beta^* &= \Big(\frac{{\sqrt{{\kappa}} - 1}}{{\sqrt{{\kappa}} + 1}}\Big)^2"
                   rf" = {fmt(b_opt)}\end{{aligned}}",
        "rates": rf"\frac{{\sqrt{{\kappa}} - 1}}{{\sqrt{{\kappa}} + 1}} = {fmt(r_opt)}\quad \longleftrightarrow\quad "
                 rf"\frac{{\kappa - 1}}{{\kappa + 1}} = {fmt(gd_best)}",
        "now": rf"\rho(\alpha, \beta) = {fmt(rates[0])},\quad \rho(\alpha, 0) = {fmt(rates[1])}",
    }


def singular_values_figure(sv: np.ndarray, labels: dict) -> go.Figure:
    """Singular values of each Newton–Schulz iterate: sv[k] (largest first) at step k, one line per singular
    value's rank, on a log axis, with 1 (orthogonal) marked. labels: step, sigma, one."""
    sv = np.asarray(sv, dtype=float)
    steps = np.arange(len(sv))
    fig = go.Figure()
    for i in range(sv.shape[1]):
        share = 1.0 - 0.6 * i / max(1, sv.shape[1] - 1)  # the largest darkest
        fig.add_trace(go.Scatter(x=steps, y=sv[:, i], mode="lines+markers", showlegend=False,
                                 line=dict(color=tint(BLUE, share), width=1.5), marker=dict(size=5),
                                 hovertemplate=f"σ{i + 1}<br>%{{x}}: %{{y:.3g}}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[steps[0], steps[-1]], y=[1.0, 1.0], mode="lines", name=labels["one"],
                             line=dict(color=GOOD, width=2, dash="dash"), hoverinfo="skip"))
    compact_layout(fig, labels["step"], labels["sigma"], 380)
    fig.update_xaxes(dtick=1)
    fig.update_yaxes(type="log", exponentformat="power")
    return fig


def orthogonality_figure(err: np.ndarray, spread: np.ndarray, labels: dict) -> go.Figure:
    """Per Newton–Schulz step: ‖XXᵀ − I‖_F and the singular values' spread σ_max/σ_min (both 0 / 1 when X
    is orthogonal), on a log axis. labels: step, error, spread."""
    steps = np.arange(len(err))
    fig = go.Figure()
    for y, name, col in ((err, labels["error"], ORANGE), (spread, labels["spread"], BLUE)):
        fig.add_trace(go.Scatter(x=steps, y=np.asarray(y, dtype=float), mode="lines+markers", name=name,
                                 line=dict(color=col, width=2),
                                 hovertemplate=f"{name}<br>%{{x}}: %{{y:.3g}}<extra></extra>"))
    compact_layout(fig, labels["step"], None, 380)
    fig.update_xaxes(dtick=1)
    fig.update_yaxes(type="log", exponentformat="power")
    return fig


def weights_figure(paths: dict[str, np.ndarray], names: dict[str, str], labels: dict) -> go.Figure:
    """Each weight against the step: θ₁ solid, θ₂ dashed, one colour per optimiser; 1 (the loss's minimum,
    no decay) marked. labels: step, weight, theta1, theta2, target."""
    fig = go.Figure()
    steps = 0
    for name, p in paths.items():
        p = np.asarray(p, dtype=float)
        steps = max(steps, len(p) - 1)
        for j, dash in ((0, None), (1, "dash")):
            label = f"{names[name]}: {labels[f'theta{j + 1}']}"
            fig.add_trace(go.Scatter(x=np.arange(len(p)), y=p[:, j], mode="lines", name=label,
                                     line=dict(color=colour(name), width=2.5, dash=dash),
                                     hovertemplate=f"{label}<br>%{{x}}: %{{y:.4g}}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[0, steps], y=[1.0, 1.0], mode="lines", name=labels["target"],
                             line=dict(color=GUIDE, width=1.5, dash="dot"), hoverinfo="skip"))
    return compact_layout(fig, labels["step"], labels["weight"], 400)


def decay_figure(effective: dict[str, np.ndarray], names: dict[str, str], labels: dict, reference: float) -> go.Figure:
    """The effective weight decay per step of each parameter under each optimiser (grouped bars, log axis), and
    η·λ (what AdamW gives every parameter) as a line. labels: theta1, theta2, decay, reference."""
    params = [labels["theta1"], labels["theta2"]]
    fig = go.Figure()
    for name, eff in effective.items():
        eff = np.asarray(eff, dtype=float)
        fig.add_trace(go.Bar(x=params, y=eff, name=names[name], marker_color=colour(name),
                             text=[f"{v:.2g}" for v in eff], textposition="outside",
                             hovertemplate=f"{names[name]}<br>%{{x}}: %{{y:.3g}}<extra></extra>"))
    fig.add_trace(go.Scatter(x=params, y=[reference, reference], mode="lines", name=labels["reference"],
                             line=dict(color=INK, width=1.5, dash="dot"), hoverinfo="skip"))
    compact_layout(fig, None, labels["decay"], 400)
    fig.update_layout(barmode="group")
    fig.update_yaxes(type="log", exponentformat="power")
    return fig


def spread(sv: np.ndarray) -> np.ndarray:
    """σ_max/σ_min of each row of singular values (inf where σ_min is 0)."""
    sv = np.asarray(sv, dtype=float)
    with np.errstate(divide="ignore"):
        return sv.max(axis=1) / sv.min(axis=1)


def race_frame(views: list[dict], names: dict[str, str], labels: dict, scheduled: bool = False) -> dict:
    """One frame of the live race (sim.optim.race.Racer.view or Racer.frame of each racer: a curve's steps and values
    as lists or arrays): the whole-set losses overlaid (from 0 to the loss at step 0), and beside them the median
    wall-clock per step of each racer or, for the schedules race (`scheduled`), the learning rate each run used.
    names: racer label -> shown name; colours by optimiser (schedules: by schedule).
    labels: step, loss, ms, lr, loss_title, ms_title, lr_title, caption ({step}), racer ({name} {loss} {ms})."""
    colours = SCHEDULE_COLOURS if scheduled else COLOURS
    second = "lr" if scheduled else "ms"

    def lines(key: str) -> list[dict]:
        return [series(*v["curves"][key], color=colours.get(v["label"], INK), label=names[v["label"]],
                       dash=v["label"] == "constant", width=2.5) for v in views]

    start = max((float(y[0]) for v in views for y in (v["curves"]["loss"][1],) if len(y) and math.isfinite(y[0])),
                default=1.0)
    # the loss is the race's figure: wider and taller than the other panel, which is narrower than a phone, so it
    # stays the larger one where a phone narrows the loss to its width and where the presenter view caps the height
    panels = [xy_panel(labels["loss_title"], lines("loss"), x_label=labels["step"], y_label=labels["loss"],
                       width=460, height=340, y_range=(0.0, 1.1 * start)),  # from 0 to the start: progress at a glance
              xy_panel(labels[f"{second}_title"], lines(second), x_label=labels["step"], y_label=labels[second],
                       width=300, height=222)]
    if not scheduled:  # from 0, so a racer twice as slow is drawn twice as high; up to twice the slowest's now
        top = max((v["ms"] for v in views if v["ms"] is not None), default=0.0)
        panels[1]["y_range"] = [0.0, 2.0 * top or 1.0]
    steps = max((v["steps"] for v in views), default=0)
    racers = " · ".join(labels["racer"].format(name=names[v["label"]],
                                               loss=fmt(v["loss"], 3) if v["loss"] is not None else "–",
                                               ms=fmt(v["ms"], 2) if v["ms"] is not None else "–") for v in views)
    return {"epoch": steps, "caption": f"{labels['caption'].format(step=steps)} · {racers}", "panels": panels}


# ---------------------------------------------------------------------------------------------------------------
# Linked views (Altair, with Streamlit's selection events): the loss chart's step brush, the phase diagram's click.
# Their data are DataFrames: st.altair_chart sends those as Arrow beside the spec, so Altair's schema validation
# never walks the thousands of rows (inline values cost seconds per redraw).

BRUSH = "steps"  # the loss chart's interval selection on the step axis
PICK = "pick"  # the phase diagram's point selection (a click)


def loss_chart(losses: dict[str, np.ndarray], names: dict[str, str], labels: dict,
               diverged: dict[str, int | None] | None = None, log: bool = True) -> alt.LayerChart:
    """f(x_t) − f* against step t per optimiser (as loss_figure), in Altair, with an interval selection BRUSH on the
    step axis (drag to pick a stretch of steps; the page highlights it on the paths). labels: step, loss,
    diverged."""
    diverged = diverged or {}
    parts, ends = [], []
    for name, loss in losses.items():
        loss = np.asarray(loss, dtype=float)
        ok = np.isfinite(loss)
        gap = np.where(ok, np.maximum(loss, 1e-12) if log else loss, np.nan)
        parts.append(pd.DataFrame({"step": np.flatnonzero(ok), "loss": gap[ok], "name": names[name]}))
        if diverged.get(name) is not None and ok.any():
            last = int(np.flatnonzero(ok)[-1])
            ends.append({"step": last, "loss": float(gap[last]), "name": labels["diverged"]})
    rows = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["step", "loss", "name"])
    order = [names[n] for n in losses]
    colours = alt.Scale(domain=order, range=[colour(n) for n in losses])
    y = alt.Y("loss:Q", title=labels["loss"], scale=alt.Scale(type="log" if log else "linear"))
    brush = alt.selection_interval(name=BRUSH, encodings=["x"])
    lines = alt.Chart(rows).mark_line(strokeWidth=2).encode(
        x=alt.X("step:Q", title=labels["step"]), y=y,
        color=alt.Color("name:N", scale=colours, sort=order, legend=alt.Legend(title=None, orient="top")),
        tooltip=[alt.Tooltip("name:N", title=" "), alt.Tooltip("step:Q", title=labels["step"]),
                 alt.Tooltip("loss:Q", title=labels["loss"], format=".3g")]).add_params(brush)
    crosses = alt.Chart(pd.DataFrame(ends, columns=["step", "loss", "name"])).mark_point(
        shape="cross", size=160, color=ALARM, filled=True).encode(x="step:Q", y=y,
                                                                  tooltip=[alt.Tooltip("name:N", title=" ")])
    return alt.layer(lines, crosses).properties(height=HEIGHT - 60)


def brushed_steps(state, steps: int) -> tuple[int, int] | None:
    """The whole steps inside the loss chart's brush, from its widget state ({"selection": {BRUSH: {"step": [lo,
    hi]}}}, as st.altair_chart keeps it), clipped to [0, steps]; None for no brush, an empty or a malformed one
    (anything but two finite numbers) or one holding fewer than two steps."""
    try:
        lo, hi = (float(v) for v in state["selection"][BRUSH]["step"])
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    lo, hi = sorted((lo, hi))
    first, last = max(0, math.ceil(lo)), min(int(steps), math.floor(hi))
    return (first, last) if first < last else None


def phase_chart(alphas: np.ndarray, betas: np.ndarray, rates: np.ndarray, current: tuple[float, float],
                optimum: tuple[float, float], labels: dict, x_scale: float = 1.0) -> alt.LayerChart:
    """The momentum phase diagram in Altair: one cell per (α, β) of the grids coloured by the
    convergence rate rates[i, j] of betas[i], alphas[j] (≥ 1: diverges, red), the current (α, β) and the optimum
    marked, x = α · x_scale; a click on a cell is the point selection PICK (fields "step" = α · x_scale and "beta" of
    the cell's centre).
    labels: alpha, beta, rate, current, optimum."""
    rates = np.asarray(rates, dtype=float)
    ax, bs = np.asarray(alphas, dtype=float) * x_scale, np.asarray(betas, dtype=float)
    dx, db = np.gradient(ax) / 2.0, np.gradient(bs) / 2.0
    b, h = np.repeat(bs, len(ax)), np.repeat(db, len(ax))  # row-major as rates: β outer, α inner
    a, w = np.tile(ax, len(bs)), np.tile(dx, len(bs))
    cells = pd.DataFrame({"step": a, "beta": b, "x0": a - w, "x1": a + w, "y0": b - h, "y1": b + h,
                          "rate": np.where(np.isfinite(rates), np.minimum(rates, 1.0), 1.0).reshape(-1)})
    pick = alt.selection_point(name=PICK, fields=["step", "beta"], on="click", clear=False)
    x = alt.X("x0:Q", title=labels["alpha"], scale=alt.Scale(domain=[float(ax[0] - dx[0]), float(ax[-1] + dx[-1])],
                                                            nice=False, zero=False))
    y = alt.Y("y0:Q", title=labels["beta"], scale=alt.Scale(domain=[float(bs[0] - db[0]), float(bs[-1] + db[-1])],
                                                           nice=False, zero=False))
    grid = alt.Chart(cells).mark_rect().encode(
        x=x, x2="x1:Q", y=y, y2="y1:Q",
        color=alt.Color("rate:Q", title=labels["rate"],
                        scale=alt.Scale(domain=[0.0, 0.5, 0.999, 1.0],
                                        range=[tint(BLUE, 0.9), tint(BLUE, 0.35), WHITE, tint(ALARM, 0.55)])),
        tooltip=[alt.Tooltip("step:Q", title=labels["alpha"], format=".3g"),
                 alt.Tooltip("beta:Q", title=labels["beta"], format=".3g"),
                 alt.Tooltip("rate:Q", title=labels["rate"], format=".3f")]).add_params(pick)
    marks = [{"x0": a * x_scale, "y0": b, "name": name, "shape": shape, "fill": col}
             for (a, b), name, shape, col in ((optimum, labels["optimum"], "diamond", GOOD),
                                              (current, labels["current"], "circle", INK))]
    points = alt.Chart(pd.DataFrame(marks)).mark_point(size=220, filled=True, stroke=WHITE, strokeWidth=1.5,
                                                          opacity=1).encode(
        x="x0:Q", y="y0:Q", shape=alt.Shape("name:N", scale=alt.Scale(domain=[m["name"] for m in marks],
                                                                      range=[m["shape"] for m in marks]),
                                            legend=alt.Legend(title=None, orient="top")),
        fill=alt.Fill("name:N", scale=alt.Scale(domain=[m["name"] for m in marks], range=[m["fill"] for m in marks]),
                      legend=None),
        tooltip=[alt.Tooltip("name:N", title=" ")])
    return alt.layer(grid, points).properties(height=420)


def picked_point(state, lo: tuple[float, float], hi: tuple[float, float]) -> tuple[float, float] | None:
    """(α·x_scale, β) of the phase diagram's clicked cell, from its widget state ({"selection": {PICK: [{"step":
    …, "beta": …}]}}, as st.altair_chart keeps it), rounded to 0.01 and held to [lo, hi] per coordinate; None
    for no click, an empty or a malformed selection."""
    try:
        point = state["selection"][PICK][0]
        step, beta = float(point["step"]), float(point["beta"])
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        return None
    if not (math.isfinite(step) and math.isfinite(beta)):
        return None
    return (round(min(hi[0], max(lo[0], step)), 2), round(min(hi[1], max(lo[1], beta)), 2))
