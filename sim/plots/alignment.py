"""Figures of the assistant lab's pipeline section: the live frame (losses, shares, reward, KL of every stage on one
step axis), the SFT loss mask of one example, and the side-by-side answers as table rows."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from sim.plots.palette import AMBER, BLUE, BROWN, GREEN, GUIDE, PALETTE, PURPLE, RED
from sim.plots.panels import series, xy_panel

STAGE_COLORS = {"pretrain": GUIDE, "sft": BLUE, "reward": BROWN, "dpo": GREEN, "rlhf": PURPLE, "hack": RED}
MARGIN = dict(l=50, r=10, t=40, b=40)
# the shares are the live view's figure (what each stage made of the model, and what the settings beside it
# change): wider and taller than the other panels, which are narrower than a phone and of a narrower shape, so the
# shares stay the largest where a phone narrows it to its width and where the presenter view caps the height; one
# other panel fits beside it on a laptop. Every panel's legend is below its plot area (up to seven stages' lines:
# inside, the legend covered the curves where the shares reach 1), so the heights hold two or three rows of it
MAIN_PANEL, SIDE_PANEL = (460, 392), (270, 250)


def pipeline_frame(frame: Mapping, labels: Mapping[str, str]) -> dict:
    """The live view of PipelineRun.frame(): four panels on the run's step axis (0 to the run's step). Shares, the
    largest (the format share of the pretrained and SFT models, the rule-following share of SFT, DPO, RLHF and RLHF
    without KL, the reward model's held-out accuracy); loss of the stages that minimise one (pretraining, SFT, the
    reward model's Bradley-Terry loss, DPO); the (normalised) reward of the answers of DPO, RLHF and RLHF without
    KL; their KL from the SFT model.
    labels: "step", "loss", "share", "reward", "kl", "loss_title", "share_title", "reward_title", "kl_title",
    "format", "follows", "accuracy", "caption" ({step} {total} {stage}), each stage's name, and "dpo_loss" (the DPO
    loss curve's name: it says when the loss holds the chosen answers' NLL term too)."""
    stages = {s["stage"]: s for s in frame["stages"]}
    total = frame["total"]
    # the step axis grows with the run (the newest step at the right edge, so every step moves the picture)
    span = (0, max(frame["steps"], 20))

    def line(stage: str, name: str, label: str, dash: bool = False, color: str | None = None) -> list[dict]:
        c = stages[stage]["curves"].get(name)
        if c is None or not len(c[0]):
            return []
        return [series(c[0], c[1], color=color or STAGE_COLORS[stage], label=label, dash=dash)]

    def boundaries(lo: float, hi: float) -> list[dict]:
        return [series([s["start"], s["start"]], [lo, hi], color=GUIDE, width=0.5, dash=True)
                for s in frame["stages"][1:] if s["start"] <= frame["steps"]]

    share_lines = (line("pretrain", "format", f"{labels['pretrain']}: {labels['format']}", dash=True)
                   + line("sft", "format", f"{labels['sft']}: {labels['format']}", dash=True)
                   + [x for s in ("sft", "dpo", "rlhf", "hack")
                      for x in line(s, "follows", f"{labels[s]}: {labels['follows']}")]
                   + line("reward", "accuracy", f"{labels['reward']}: {labels['accuracy']}"))
    shares = xy_panel(labels["share_title"], share_lines + boundaries(0, 1), x_label=labels["step"],
                      y_label=labels["share"], x_range=span, y_range=(0.0, 1.0), width=MAIN_PANEL[0],
                      height=MAIN_PANEL[1], legend="below")
    losses = [x for s, name in (("pretrain", labels["pretrain"]), ("sft", labels["sft"]), ("reward", labels["reward"]),
                                ("dpo", labels["dpo_loss"])) for x in line(s, "loss", name)]
    top = max((max([v for v in x["y"] if v is not None], default=0.0) for x in losses), default=1.0)
    side = dict(x_label=labels["step"], x_range=span, width=SIDE_PANEL[0], height=SIDE_PANEL[1], legend="below")
    loss = xy_panel(labels["loss_title"], losses + boundaries(0, top), y_label=labels["loss"], **side)
    policy = ("dpo", "rlhf", "hack")
    reward = xy_panel(labels["reward_title"], [x for s in policy for x in line(s, "reward", labels[s])],
                      y_label=labels["reward"], **side)
    kl = xy_panel(labels["kl_title"], [x for s in policy for x in line(s, "kl", labels[s])], y_label=labels["kl"],
                  **side)
    caption = labels["caption"].format(step=frame["steps"], total=total, stage=labels[frame["stage"]])
    return {"epoch": frame["steps"], "caption": caption, "panels": [shares, loss, reward, kl]}


def mask_figure(tokens: Sequence[str], targets: Sequence[str], mask: np.ndarray,
                labels: Mapping[str, str]) -> go.Figure:
    """One SFT example: the input tokens, the target under each (the next token) and the loss mask (1: counted),
    as a row of cells coloured by the mask. labels: "title", "input", "target", "mask"."""
    m = np.asarray(mask, dtype=float)[None, :]
    text = [[f"{a} → {b}<br>{int(v)}" for a, b, v in zip(tokens, targets, m[0], strict=True)]]
    fig = go.Figure(go.Heatmap(z=m, text=text, texttemplate="%{text}", zmin=0, zmax=1, showscale=False,
                               colorscale=[[0, PALETTE["rule"]], [1, AMBER]], xgap=3,
                               hovertemplate=f"{labels['mask']} %{{z}}<extra></extra>"))
    fig.update_layout(title=labels["title"], height=170, margin=MARGIN,
                      xaxis=dict(title=f"{labels['input']} → {labels['target']} · {labels['mask']}",
                                 showticklabels=False), yaxis=dict(showticklabels=False))
    return fig


def side_by_side_rows(prompts: Sequence[str], answers: Mapping[str, Sequence[str]],
                      follows: Mapping[str, Sequence[bool]], names: Mapping[str, str], prompt_label: str,
                      marks: tuple[str, str] = ("✓", "✗")) -> list[dict]:
    """Rows of the side-by-side table: the prompt, then each stage's answer marked by the rule (✓ / ✗)."""
    return [{prompt_label: p, **{names[s]: f"{a[i]} {marks[0] if follows[s][i] else marks[1]}"
                                 for s, a in answers.items()}} for i, p in enumerate(prompts)]

