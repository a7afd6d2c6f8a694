"""The transformer-block lab's live section Pre-LN against Post-LN (with and without warmup): one live run stepping
the four models in turn (sim.transformers.live.DepthRun); the MoE's is in moe.py."""
from collections.abc import Callable

import streamlit as st

from labs.blocks.schema import SCHEMA
from sim.core.live import Cursor, LiveSpec
from sim.plots.blocks import depth_frame
from sim.transformers.blocks import LN_MODES, DepthConfig, DepthTrainer, init_gradient_ratio
from sim.transformers.claims import depth_reading, init_ratio_case
from sim.transformers.live import DepthRun
from sim.transformers.tasks import LETTERS, lab_task
from ui import live_plots, live_run
from ui.i18n import t
from ui.urlstate import PageState

DEPTH_LABELS = ("step", "loss", "layer", "grad_norm", "loss_title", "norm_title", "init_title", "caption")


def frame_at(cursor: Cursor) -> dict:
    """The frame of the cursor's step (what the page says about the runs matches what it draws)."""
    return cursor.frame()


def in_turn_spec(key: str, settings: tuple, build: Callable[[], object], speed: int, models: int) -> LiveSpec:
    """A run of several models stepped in turn: a step is one model's optimizer step and a tick `speed` of them, so
    the picture moves as often whatever the number of models; Step trains every model `speed` steps."""
    return LiveSpec(key, settings, build, speed=speed, step_size=speed * models)


# ---------- Pre-LN against Post-LN ----------
def depth_name(ln: str, warmup: int) -> str:
    return t(f"blk.res.run.{ln}") + (t("blk.res.run.warmup", w=warmup) if warmup else "")


def depth_spec(v: dict) -> LiveSpec:
    """The four runs of these settings: Pre-LN and Post-LN, each without and with warmup, from the same weights."""
    v = dict(v)
    arrangements = [(ln, w) for ln in LN_MODES for w in (0, v["r_warmup"])]

    def build() -> DepthRun:
        task = lab_task(v["r_task"], 5, 16)
        return DepthRun([DepthTrainer(DepthConfig(len(task.vocab), task.block_size, v["r_layers"], 2, v["r_width"], ln),
                                      task, v["r_lr"], w, v["r_seed"]) for ln, w in arrangements])

    settings = tuple(v[n] for n in ("r_task", "r_layers", "r_width", "r_lr", "r_warmup", "r_seed"))
    return in_turn_spec("blk.depth", settings, build, v["r_speed"], len(arrangements))


def depth_labels() -> dict[str, str]:
    return {k: t(f"blk.res.fig.{k}") for k in DEPTH_LABELS}


def depth_drawn(frame: dict, labels: dict) -> dict:
    """A DepthRun frame (with its "step", "run", "n") as the live view draws it, in the page's language."""
    runs = [(depth_name(r["ln"], r["warmup"]), r["curve"][0].tolist(), r["curve"][1].tolist(), r["norms"],
             r["init_norms"], r["recent"]) for r in frame["runs"]]
    return {**depth_frame(runs, labels), "step": frame["step"], "run": frame["run"], "n": frame["n"]}


def residual_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:  # depth, step size and warmup beside the runs; the task, width, pace and seed folded
        for name in ("r_layers", "r_lr", "r_warmup"):
            state.widget(name, fold=False)
        with state.more(side):
            for name in ("r_task", "r_width", "r_speed", "r_seed"):
                state.widget(name)
    v = state.values
    labels = depth_labels()

    def messages(cursor: Cursor) -> None:
        for r in frame_at(cursor)["runs"]:
            if r["diverged"]:
                st.error(t("blk.res.diverged", name=depth_name(r["ln"], r["warmup"]), step=r["steps"]))

    spec = depth_spec(v)
    with figure:
        cursor = live_run.live_lab(spec, live_plots.frames_view(spec, lambda f: depth_drawn(f, labels)),
                                   prefix="blk", messages=messages, n=v["r_speed"])
    with cursor.model() as run:  # the gradients at initialisation: the same at every step
        pre, post = (next(tr for tr in run.trainers if tr.config.ln == ln) for ln in ("pre", "post"))
        lo, hi = init_gradient_ratio(pre, post)
        guess = pre.task.guess_loss()
    st.markdown(t(f"blk.res.explain.{init_ratio_case(lo, hi)}", lo=f"{lo:.1f}", hi=f"{hi:.1f}") + " "
                + t("blk.res.watch", letters=len(LETTERS), guess=f"{guess:.2f}"))
    if cursor.playing:  # a playing view is not rerun with the page: a sentence here would describe a step it left
        st.caption(t("blk.playing"))
    else:
        for line in depth_lines(frame_at(cursor), guess):
            st.markdown(line)
    st.markdown(t("blk.res.intro"))


def depth_lines(frame: dict, guess: float) -> list[str]:
    """What each run of a DepthRun frame shows (sim.transformers.claims.depth_reading), in the page's words: its loss
    against guessing's and how its gradient reaches block 1; nothing for a run that has not stepped or diverged
    (messages() says so)."""
    lines = []
    for r in frame["runs"]:
        read = depth_reading(r, guess)
        if read.case in ("start", "diverged"):
            continue
        lines.append(t(f"blk.res.now.{read.case}", name=depth_name(r["ln"], r["warmup"]), steps=read.steps,
                       loss=f"{read.loss:.3f}", guess=f"{guess:.2f}")
                     + " " + t(f"blk.res.grad.{read.gradient}", ratio=f"{read.ratio:.3g}"))
    return lines


def bench_spec(seed: int | None = None) -> tuple[LiveSpec, Callable[[list[dict]], object]]:
    """The section's default run (seed: another training seed) and what a playing page does with its frames, for
    benchmarks/classroom.py."""
    v = {p.name: p.default for p in SCHEMA}
    if seed is not None:
        v["r_seed"] = seed
    spec = depth_spec(v)
    return spec, lambda frames: live_run.drawn_once(spec, frames, lambda f: depth_drawn(f, depth_labels()))
