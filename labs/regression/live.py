"""The regression lab's live gradient descent (sim.fitting.regression.LiveGD) on ui.live_run.live_lab: its spec,
its frames in the page's words, and the benchmark's run (benchmarks/classroom.py)."""
from collections.abc import Callable

import streamlit as st

from labs.regression.views import data_labels, num, param_labels
from sim.core.live import Cursor, LiveSpec
from sim.fitting import claims
from sim.fitting import regression as reg
from sim.fitting.regression_data import RegressionData
from sim.plots import regression as plots
from ui import live_run
from ui.i18n import t
from ui.live_plots import frames_view


def live_spec(data: RegressionData, data_key: tuple, gd: reg.GDConfig, speed: int) -> LiveSpec:
    """The run of these settings from w = b = 0 (sessions with equal settings share one): a frame per `speed`
    epochs (at speed 1 every epoch is drawn, the early zig-zag of a large learning rate included); Step: one epoch."""
    return LiveSpec("reg", (data_key, gd), lambda: reg.LiveGD(data, gd), speed=speed, step_size=1)


def frame_labels(data: RegressionData, config: reg.ModelConfig) -> dict:
    return {**data_labels(data), **param_labels(config), "epoch": t("reg.epoch"),
            **{k: t(f"reg.live.{k}") for k in ("fit", "loss", "path")}}


def drawn(frame: dict, data: RegressionData, background: tuple | None, labels: dict) -> dict:
    """A run's frame (sim.fitting.regression.gd_frame, with its step) as the live view draws it, in the page's
    language."""
    caption = t("reg.live.caption", epoch=frame["epoch"], loss=num(frame["loss"]))
    return {**plots.live_frame(frame, data, background, labels, caption), "step": frame["step"], "run": frame["run"],
            "n": frame["n"]}


def divergence_text(gd: reg.GDRun) -> str:
    """Why a stopped run stopped, in the words its case allows (sim.fitting.claims.divergence_case)."""
    case = claims.divergence_case(gd)
    if case == "overflow":
        return t("reg.issue.overflow")
    key = {"grew": "reg.diverged", "capped": "reg.diverged_capped", "overflowed": "reg.diverged_overflowed"}[case]
    loss = gd.config.model.loss
    return t(key, epoch=gd.epoch, loss=num(gd.history[-1]), start=num(gd.start_loss), lr=num(gd.config.lr),
             loss_name=t(f"reg.loss.{loss}"))


def live_panel(spec: LiveSpec, data: RegressionData, config: reg.ModelConfig, background: tuple | None) -> Cursor:
    def messages(cursor: Cursor) -> None:
        if cursor.stopped and cursor.error is None:
            with cursor.model() as run:  # where it stopped
                st.error(divergence_text(run.gd), icon=":material/error:")

    labels = frame_labels(data, config)
    show = frames_view(spec, lambda f: drawn(f, data, background, labels), key="reg.live", stopped="diverged")

    return live_run.live_lab(spec, show, prefix="reg", messages=messages)


def bench_spec(seed: int | None = None) -> tuple[LiveSpec, Callable[[list[dict]], object]]:
    """The lab's default gradient-descent run (seed: another seed; it draws the data and orders the batches, as the
    page's seed does) and what a playing page does with its frames, for benchmarks/classroom.py."""
    from labs.regression.schema import SCHEMA
    from sim.fitting.regression_data import make_dataset

    v = {p.name: p.default for p in SCHEMA}
    if seed is not None:
        v["seed"] = seed
    data_key = tuple(v[k] for k in ("dataset", "n", "noise", "seed", "outliers", "outlier_size"))
    data = make_dataset(*data_key)
    config = reg.ModelConfig(degree=v["degree"], standardize=v["standardize"], loss=v["loss"],
                             delta=v["delta"] * data.scale)
    gd = reg.GDConfig(model=config, lr=v["lr"], batch_size=None if v["batch_size"] == "full" else v["batch_size"],
                      seed=v["seed"])
    background = reg.path_background(reg.GDRun(data.x, data.y, gd))

    spec = live_spec(data, data_key, gd, v["speed"])

    def draw(frames: list[dict]) -> list[dict]:
        labels = frame_labels(data, config)  # in the language of the thread that draws
        return live_run.drawn_once(spec, frames, lambda f: drawn(f, data, background, labels))

    return spec, draw
