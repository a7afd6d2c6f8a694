"""The generalisation lab's live runs (capacity, regularisation and label-noise sections), on ui.live_run.live_lab.

Each section's run is a sim.fitting.generalization.FitRun, shared by every session with the same settings. Restore
best is this session's own: its run becomes the shared run at the epoch shown with the best checkpoint put back (a
run of its own settings, that epoch included, which has stopped there), until Reset or a change of settings.
"""
import copy
from collections.abc import Callable

import streamlit as st

from labs.generalization import labels
from sim.core.live import Cursor, LiveSpec
from sim.fitting import claims
from sim.fitting.fit import FitConfig, FitTrainer
from sim.fitting.generalization import CurveData, FitRun, NoisyPoints
from sim.plots import generalization as plots
from ui import live_run
from ui.i18n import t
from ui.live_plots import show_frames

ss = st.session_state
VIEWS = {"cap": "curve", "reg": "weights", "noise": "boundary"}  # what each section's frame draws (FitRun)


def live_spec(name: str, config: FitConfig, data_key: tuple, make: Callable[[], tuple], speed: int) -> LiveSpec:
    """Section `name`'s run of these settings on the data make() returns (named by data_key): a frame per `speed`
    epochs, and Step trains as many."""
    view = VIEWS[name]
    return LiveSpec(f"gen.{name}", (config, data_key, view), lambda: FitRun(FitTrainer(config, *make()), view),
                    speed=speed)


def drawer(name: str, data: CurveData | NoisyPoints) -> Callable[[dict], dict]:
    """What draws a frame of section `name`'s run (FitRun.frame, with its step) in the page's language."""
    if name == "noise":
        words = labels.noise()
        return lambda f: _framed(plots.noise_frame(f, data, words), f)
    if name == "reg":
        words = labels.regularization()
        return lambda f: _framed(plots.regularization_frame(f, data, words), f)
    words = labels.curve()
    return lambda f: _framed(plots.curve_frame(f, data, words), f)


def _framed(drawn: dict, frame: dict) -> dict:
    return {**drawn, "step": frame["step"], "run": frame["run"], "n": frame["n"]}


# ---------- Restore best: this session's run becomes the shared one restored at the epoch shown ----------
def restore_best(name: str, settings: tuple, cursor: Cursor) -> None:
    cursor.pause()
    with cursor.model() as run:  # the run at the epoch shown
        restored = copy.deepcopy(run, {id(x): x for x in run.shared()})
    restored.trainer.restore_best()
    ss[f"gen.{name}.restored"] = {"settings": settings, "epoch": restored.steps, "run": restored, "serial": None}
    st.rerun()  # the whole page follows the restored model


def with_restore(name: str, spec: LiveSpec) -> LiveSpec:
    """spec, or where this session restored the best checkpoint of spec's run, that restored run (a run of its own:
    spec's settings and the epoch). A Reset (the cursor's serial changed) or new settings go back to spec."""
    restored = ss.get(f"gen.{name}.restored")
    if restored is None:
        return spec
    cursor = live_run.cursor_of(spec.key)
    reset = restored["serial"] is not None and (cursor is None or cursor.serial != restored["serial"])
    if restored["settings"] != spec.settings or reset:
        del ss[f"gen.{name}.restored"]
        return spec
    run = restored["run"]
    return LiveSpec(spec.key, (spec.settings, "best_at", restored["epoch"]),
                    lambda: copy.deepcopy(run, {id(x): x for x in run.shared()}), speed=spec.speed)


def run_status(trainer: FitTrainer) -> str:
    if trainer.diverged:
        return t("gen.run.diverged", best=trainer.best_epoch)
    if trainer.stopped:
        return t("gen.run.stopped", epoch=trainer.epoch, best=trainer.best_epoch)
    if trainer.finished:
        return t("gen.run.finished", epoch=trainer.epoch)
    return ""


def live_section(name: str, config: FitConfig, data_key: tuple, data: CurveData | NoisyPoints,
                 speed: int) -> Cursor | None:
    """One section's run (a new one when its settings or its data changed): Play / Pause / Step / Restore best /
    Reset and its live panels. Returns this session's cursor on it."""
    base = live_spec(name, config, data_key, data.train_val, speed)
    spec = with_restore(name, base)
    draw = drawer(name, data)

    def restore_button(bar, cursor: Cursor) -> None:
        frame = cursor.frame()
        done = frame["finished"] or frame["best_epoch"] == frame["epoch"]
        bar.button(t("gen.restore"), on_click=restore_best, args=(name, base.settings, cursor),
                   icon=":material/history:", disabled=done, key=f"gen.{name}.restore", help=t("gen.restore_help"))

    def messages(cursor: Cursor) -> None:
        if cursor.stopped and cursor.error is None:
            with cursor.model() as run:  # where it stopped
                message, diverged = run_status(run.trainer), run.trainer.diverged
            if message:
                (st.error if diverged else st.success)(message)

    def show(frames: list[dict], seq: int, status: str, cursor: Cursor) -> None:
        if status == "stopped":
            status = "diverged" if frames[-1]["diverged"] else "paused"
        show_frames(live_run.drawn_once(spec, frames, draw), key=f"gen.{name}.view", seq=seq, status=status)

    cursor = live_run.live_lab(spec, show, prefix="gen", extra_buttons=restore_button, messages=messages, n=speed)
    restored = ss.get(f"gen.{name}.restored")
    if restored is not None and restored["serial"] is None and cursor is not None:
        restored["serial"] = cursor.serial  # a Reset from here on goes back to the shared run
    if cursor is not None and not cursor.playing:
        # paused or stopped only: a playing view is not rerun with the page, so a sentence here would describe an
        # epoch the view has left (a press of Play or Pause reruns the whole page)
        with cursor.model() as run:
            text = run_reading(name, run.trainer, data)
        if text:
            st.caption(text)
    return cursor


def run_reading(name: str, trainer: FitTrainer, data: CurveData | NoisyPoints) -> str:
    """What section `name`'s run shows at its epoch (sim.fitting.claims), in the page's words; "" at epoch 0."""
    last = trainer.history[-1]
    if trainer.epoch == 0:
        return ""
    if name == "noise":
        r = claims.noise_reading((trainer.predict(data.X_train) > 0.5).astype(int), data.y_train, data.flipped)
        return t(f"gen.noise.now.{r.case}", epoch=trainer.epoch, m=r.memorised, f=r.flipped,
                 rest=r.flipped - r.memorised, train=f"{last['train_acc']:.1%}", val=f"{last['val_acc']:.1%}")
    r = claims.curve_reading(trainer.history, trainer.best_epoch, trainer.best_val)
    loss = plots.loss_text  # as the live view's caption prints them
    return t(f"gen.curve.{r.case}", epoch=r.epoch, best=r.best, best_val=loss(r.best_val), val=loss(r.val),
             best_train=loss(r.best_train), train=loss(r.train))


def bench_spec(seed: int | None = None, name: str = "cap") -> tuple[LiveSpec, Callable[[list[dict]], object]]:
    """Section `name`'s run at the lab's defaults (seed: another seed; it draws the data and the initial weights, as
    the page's seed does) and what a playing page does with its frames, for benchmarks/classroom.py (the capacity
    section's is the lab's; "generalization_reg" and "generalization_noise" there give the other two)."""
    from labs.generalization.schema import SCHEMA
    from sim.fitting.generalization import curve_data, noisy_points

    v = {p.name: p.default for p in SCHEMA}
    if seed is not None:
        v["seed"] = seed
    hidden = (v["width"],) * 2
    if name == "noise":
        data, data_key = noisy_points(v["dataset"], v["flip"], v["seed"]), (v["dataset"], v["flip"], v["seed"])
        config = FitConfig(task="binary", hidden=hidden, lr=v["lr"], seed=v["seed"])
    else:
        data_key = (v["n"], v["noise"], v["train"], v["val"], v["seed"])
        data = curve_data(*data_key)
        config = (FitConfig(hidden=hidden, lr=v["lr"], patience=v["patience"], seed=v["seed"]) if name == "cap" else
                  FitConfig(hidden=hidden, lr=v["lr"], l2=v["l2"], l1=v["l1"], dropout=v["dropout"], seed=v["seed"]))
    spec = live_spec(name, config, data_key, data.train_val, v["speed"])
    draw = None

    def drawn(frames: list[dict]) -> list[dict]:
        nonlocal draw
        draw = draw or drawer(name, data)  # its words in the language of the thread that draws
        return live_run.drawn_once(spec, frames, draw)

    return spec, drawn
