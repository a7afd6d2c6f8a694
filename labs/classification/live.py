"""The classification lab's live view: the run of the page's settings (labs.classification.run, shared by every
session with the same settings through ui.live_run.live_lab), drawn by a canvas component (live_view.js) from the
run's frames, in the page's language.

While playing, the network, the loss curve and the points go to the browser at most every STATIC_EVERY_S (None in
between; the browser keeps the last ones): they are two thirds of an update, and a class of browsers on small
laptops must parse every update. They come from the newest frame that has them (every run.NET_EVERY epochs);
paused, from the model at the cursor's step.
"""
from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import streamlit as st

from labs.classification.config import make_config
from labs.classification.run import (
    EPOCHS_PER_FRAME,
    GRID_RES,
    THUMB_RES,
    ClassifierRun,
    curve_records,
    points,
    static,
)
from labs.classification.schema import SCHEMA
from sim.core.live import Cursor, LiveSpec
from sim.nets.claims import overshoot_numbers
from sim.nets.training import ClassifierConfig, Trainer
from sim.plots import live as enc
from ui import live_run
from ui.components import live_component
from ui.i18n import t
from ui.live_plots import a11y_words

KEY = "cls"  # the run's session keys (cls.cursor, ...) and its buttons' (cls.play, cls.step, ...)
STATIC_EVERY_S = 0.5
# what the canvas draws of a frame
FRAME_KEYS = ("epoch", "grid", "train_loss", "val_loss", "val_acc", "step", "run", "n")
ss = st.session_state

_component = live_component("mlsim_live_view", "live_view.js", "live_view.css", Path(__file__).parent)


def data_digest(data: tuple[np.ndarray, np.ndarray] | None) -> str | None:
    """A fingerprint of uploaded points: two sessions that upload the same file share one run."""
    if data is None:
        return None
    h = hashlib.sha256()
    for a in data:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def live_spec(v: dict, data: tuple[np.ndarray, np.ndarray] | None = None) -> LiveSpec:
    """The run of the page's values v (on the uploaded points `data`, if any): `speed` × EPOCHS_PER_FRAME epochs a
    frame, Step one epoch (as TensorFlow Playground's). Its build raises ValueError on settings that cannot
    train (no feature, a set too small to split)."""
    try:
        config: ClassifierConfig | None = make_config(v)
        error = None
    except ValueError as e:
        config, error = None, e

    def build() -> ClassifierRun:
        if error is not None:
            raise error
        return ClassifierRun(Trainer(config, data=data))

    settings = (config, data_digest(data)) if error is None else ("invalid", str(error))
    return LiveSpec(KEY, settings, build, unit=EPOCHS_PER_FRAME, speed=v["speed"], step_size=1)


def words(config: ClassifierConfig, status: str, uploaded: bool = False) -> dict:
    """The view's words in the page's language: the header's labels, the input features, the layers' titles, and
    what a screen reader hears (the canvases' names and the live text: templates whose {arch}, {epoch}, {train},
    {val}, {acc}, {inputs} the view fills from the network and the frame it draws)."""
    n_hidden = len(config.hidden)
    dataset = str(t("cls.a11y.uploaded") if uploaded else t(f"cls.dataset.{config.dataset}"))
    # plain text for an accessible name (no Markdown escapes): the data set's name put in, the rest left to the view
    a11y = {f"a11y_{k}": str(t(f"cls.a11y.{k}")).replace("{dataset}", dataset) for k in ("net", "curve", "live", "acc")}
    a11y["a11y_boundary"] = str(t(f"cls.a11y.boundary.{config.problem}")).replace("{dataset}", dataset)
    return {"labels": {"epoch": t("cls.epoch"), "train_loss": t("cls.train_loss"), "val_loss": t("cls.val_loss"),
                       "status": t(f"cls.status.{status}"), **a11y},
            "inputs": [t(f"cls.features.{f}") for f in config.features],
            "titles": [t("cls.net.inputs")] + [t("cls.net.layer", i=i + 1) for i in range(n_hidden)]
            + [t("cls.net.output")]}


def newest_static(frames: list[dict]) -> tuple[int, dict] | None:
    """(step, {"net", "curve"}) of the newest frame that has the network and the curve."""
    for f in reversed(frames):
        if "net" in f:
            return f["step"], {"net": f["net"], "curve": f["curve"]}
    return None


def payload(frames: list[dict], *, seq: int, status: str, config: ClassifierConfig, n_outputs: int,
            threshold: float, discretize: bool, show_val: bool, static_part: dict | None = None,
            data_points: dict | None = None, uploaded: bool = False) -> dict:
    """What the component receives: the frames (boundary bytes, losses), and when given the network, the loss
    curve (static_part: run.static's) and the points (run.points'); None for those keeps the browser's last.
    uploaded: the run is on uploaded points (the canvases' names say so instead of the data set's name)."""
    w = words(config, status, uploaded)
    problem = config.problem
    data = {"seq": seq, "status": status, "problem": problem, "res": GRID_RES,
            "channels": enc.grid_channels(n_outputs, problem), "threshold": threshold, "discretize": discretize,
            "show_val": show_val, "frames": [{k: f[k] for k in FRAME_KEYS if k in f} for f in frames],
            "labels": w["labels"], "curve": None, "points": data_points, "net": None, "a11y": a11y_words()}
    if static_part is not None:
        net = static_part["net"]
        data["net"] = {"sizes": net["sizes"], "titles": w["titles"], "inputs": w["inputs"], "thumbs": net["thumbs"],
                       "thumbs_res": THUMB_RES, "weights": enc.weight_lists(net["weights"]), "wmax": net["wmax"]}
        data["curve"] = enc.curve_panel(curve_records(static_part["curve"]), w["labels"])
    return data


def live_panel(v: dict, upload) -> Cursor | None:
    """The run of the page's values, trained live and shown; returns this session's cursor on it (None when no
    model could be built from the first settings: the message says why)."""
    spec = live_spec(v, upload and (upload.X, upload.y))

    def bad_settings(e: BaseException) -> None:
        if not v["features"]:
            st.warning(t("cls.no_features"))
        else:
            st.error(t("cls.bad_config", detail=str(e)))

    def messages(cursor: Cursor) -> None:
        if cursor.stopped and cursor.error is None:  # at the step the run diverged: the model is the run's head
            with cursor.model() as run:
                text = divergence_text(run.trainer)
            st.error(text)

    def show(frames: list[dict], seq: int, status: str, cursor: Cursor) -> None:
        if status == "stopped":  # diverged; or failed, which the page's error message says (the run is kept)
            status = "diverged" if cursor.error is None else "paused"
        static_part = view_static(cursor, frames, playing=status == "playing")
        config, k, data_points = run_info(cursor)
        _component(data=payload(frames, seq=seq, status=status, config=config, n_outputs=k,
                                threshold=v["threshold"], discretize=v["discretize"], show_val=v["show_test"],
                                static_part=static_part, data_points=data_points if static_part else None,
                                uploaded=upload is not None),
                   key="live_view", height="content")

    return live_run.live_lab(spec, show, prefix="cls", bad_settings=bad_settings, messages=messages)


def divergence_text(trainer: Trainer) -> str:
    """Why the run stopped ("blowup" or "overshoot"), with the numbers that decided it."""
    loss, base = overshoot_numbers(trainer.recent_train_loss(), trainer.baseline_loss)
    return t(f"cls.diverged.{trainer.divergence}", lr=trainer.config.lr, loss=loss, base=base)


def view_static(cursor: Cursor, frames: list[dict], playing: bool) -> dict | None:
    """The network and the curve to send with these frames (the points go with them), or None to keep the browser's.

    Playing: the newest frame's that has them, at most every STATIC_EVERY_S. Paused: always (a full rerun may have
    changed the language), from the shown frame if it has them, else from the model at the cursor's step."""
    found = newest_static(frames)
    if playing:
        last = ss.get(f"{KEY}.static_sent", (None, -1, -1e9))
        if found is None or (last[0] == cursor.serial and last[1] == found[0]) \
                or time.monotonic() - last[2] < STATIC_EVERY_S:
            if found is not None:
                ss[f"{KEY}.curve"] = (cursor.traj.key, found[0], found[1]["curve"])
            return None
        step, part = found
    elif found is not None and found[0] == frames[-1]["step"]:
        step, part = found
    else:
        with cursor.model() as run:  # the model at the step shown
            step, part = run.steps, static(run.trainer)
    ss[f"{KEY}.static_sent"] = (cursor.serial, step, time.monotonic())
    ss[f"{KEY}.curve"] = (cursor.traj.key, step, part["curve"])
    return part


def run_info(cursor: Cursor) -> tuple[ClassifierConfig, int, dict]:
    """The run's config, its outputs and its training and validation points as bytes: the same at every step,
    read once per run (from its newest checkpoint: no replay)."""
    cached = ss.get(f"{KEY}.run_info")
    if cached is None or cached[0] != cursor.traj.key:
        with cursor.model_near() as (_, run):
            tr = run.trainer
            cached = (cursor.traj.key, tr.config, tr.n_classes, points(tr))
        ss[f"{KEY}.run_info"] = cached  # not while the run is locked: a button's callback holds the session's state
    return cached[1:]


def playing_curve(cursor: Cursor) -> list[dict] | None:
    """The history records of the newest curve the live view took from the frames (None: none of this run yet)."""
    got = ss.get(f"{KEY}.curve")
    return curve_records(got[2]) if got is not None and got[0] == cursor.traj.key else None


def bench_spec(seed: int | None = None) -> tuple[LiveSpec, Callable[[list[dict]], object]]:
    """The lab's default run (seed: another seed of the data, split and initial weights) and what a playing page
    does with its frames (the payload as the component would receive it), for benchmarks/classroom.py."""
    v = {p.name: p.default for p in SCHEMA}
    if seed is not None:
        v["seed"] = seed
    spec = live_spec(v)
    run = spec.build()
    config, k, data_points = run.trainer.config, run.trainer.n_classes, points(run.trainer)
    sent = {"at": -1e9}
    seq = iter(range(1, 1 << 62))

    def draw(frames: list[dict]) -> dict:
        found = newest_static(frames)
        send = found is not None and time.monotonic() - sent["at"] >= STATIC_EVERY_S
        if send:
            sent["at"] = time.monotonic()
        return payload(frames, seq=next(seq), status="playing", config=config, n_outputs=k,
                       threshold=v["threshold"], discretize=v["discretize"], show_val=v["show_test"],
                       static_part=found[1] if send else None, data_points=data_points if send else None)

    return spec, draw
