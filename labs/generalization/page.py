"""Generalisation lab: splits and cross-validation, leakage, capacity, regularisation, label noise."""
import random
from collections.abc import Callable

import numpy as np
import streamlit as st

from sim import leakage
from sim.data import DOMAIN, make_classification, split
from sim.fit import FitConfig, FitTrainer
from sim.generalization import GRID, CurveData, cross_validate, curve_data, degree_sweep, flip_labels, mse, \
    plane_grid, poly_fit, true_curve
from sim.plots import generalization as plots
from ui import live_run
from ui.components import in_fragment_rerun
from ui.i18n import t
from ui.live_plots import show_frames
from ui.player import Player
from labs.generalization.schema import PAGE, SCHEMA
from ui.urlstate import PageState

CV_TICK_S = 0.8  # one fold per tick, slow enough to follow
NOISE_POINTS, NOISE_GRID = 300, 25  # label-noise run: points (half train, half validation), boundary cells a side
# sim.data's noise only jitters the moons; for circle and xor it would flip labels, which is this section's own job
SPREAD = {"moons": 0.15}
DEFAULTS = {p.name: p.default for p in SCHEMA}
ss = st.session_state


def regenerate() -> None:
    ss["gen.seed"] = random.randrange(1_000_000)


# ---------- data ----------
@st.cache_data(max_entries=64, show_spinner=False)
def cached_curve_data(n: int, noise: float, train: float, val: float, seed: int) -> CurveData:
    return curve_data(n, noise, train, val, seed)


def current_data(v: dict) -> CurveData:
    """The split data of the settings; on an impossible split, a message and the last split that worked."""
    want = (v["n"], v["noise"], v["train"], v["val"], v["seed"])
    try:
        ss["gen.data"] = cached_curve_data(*want)
        ss["gen.data_key"] = want
    except ValueError:
        st.error(t("gen.split_empty", train=f"{v['train']:.0%}", val=f"{v['val']:.0%}"))
        if "gen.data" not in ss:  # nothing worked yet in this session: the default split
            ss["gen.data_key"] = (v["n"], v["noise"], DEFAULTS["train"], DEFAULTS["val"], v["seed"])
            ss["gen.data"] = cached_curve_data(*ss["gen.data_key"])
    return ss["gen.data"]


def data_controls(state: PageState) -> None:
    cols = st.columns([2, 2, 2, 2, 2, 1.5], vertical_alignment="bottom")
    for col, name in zip(cols, ("n", "noise", "train", "val", "seed")):
        state.widget(name, container=col)
    cols[5].button(t("gen.regenerate"), on_click=regenerate, icon=":material/casino:")
    test = 1 - state.values["train"] - state.values["val"]
    if 1e-9 < test and not 0.1 - 1e-9 <= test <= 0.2 + 1e-9:
        st.caption(t("gen.test_outside", test=f"{test:.0%}"))


def part_labels() -> dict:
    return {"train": t("gen.part.train"), "val": t("gen.part.val"), "test": t("gen.part.test"),
            "truth": t("gen.truth"), "x": "x", "y": "y"}


def parts(data: CurveData) -> dict:
    return {"train": data.train, "val": data.val, "test": data.test}


# ---------- live runs (shared by the capacity, regularisation and label-noise sections) ----------
def restore_best(name: str) -> None:
    player = ss[f"gen.{name}.player"]
    player.pause()
    with player.lock:
        player.model.restore_best()
    player.refresh()
    st.rerun()  # the whole page follows the restored model


def run_status(trainer: FitTrainer) -> str:
    if trainer.diverged:
        return t("gen.run.diverged", best=trainer.best_epoch)
    if trainer.stopped:
        return t("gen.run.stopped", epoch=trainer.epoch, best=trainer.best_epoch)
    if trainer.finished:
        return t("gen.run.finished", epoch=trainer.epoch)
    return ""


def live_section(name: str, config: FitConfig, data_key: tuple, make: Callable[[], tuple], speed: int,
                 draw: Callable[[FitTrainer], dict]) -> None:
    """One section's run (a new one when its settings or its data changed): Play / Pause / Step / Restore best /
    Reset and its live panels, drawn by draw(trainer)."""
    player = live_run.current_player(f"gen.{name}", (config, data_key), lambda: make_player(FitTrainer(config, *make())))
    player.speed = speed
    trainer = player.model
    player.snapshot = lambda: draw(trainer)  # what a frame shows may change without the model changing

    def restore_button(bar) -> None:
        bar.button(t("gen.restore"), on_click=restore_best, args=(name,), icon=":material/history:",
                   disabled=trainer.finished or trainer.best_epoch == trainer.epoch, key=f"gen.{name}.restore",
                   help=t("gen.restore_help"))

    def messages() -> None:
        message = run_status(trainer)
        if message:
            (st.error if trainer.diverged else st.success)(message)

    def show(frames: list[dict], seq: int, status: str) -> None:
        status = ("diverged" if trainer.diverged else "paused") if status == "stopped" else status
        show_frames(frames, key=f"gen.{name}.view", seq=seq, status=status)

    live_run.live_view("gen", f"gen.{name}", player, show, lambda: trainer.finished, extra_buttons=restore_button,
                       messages=messages, n=speed)


def make_player(trainer: FitTrainer) -> Player:
    return Player(trainer.step, lambda: {}, lambda: trainer.finished, model=trainer)  # a frame per `speed` epochs


def curve_frame(trainer: FitTrainer, data: CurveData, extra: list[dict] | None = None, caption: str = "") -> dict:
    """A frame of a run on the 1-D curve: its fit over the points and its loss curves (then any extra panels)."""
    last = trainer.history[-1]
    size = plots.THREE_UP if extra else plots.TWO_UP
    fit = plots.fit_panel(data.x[data.train], data.y[data.train], data.x[data.val], data.y[data.val], GRID,
                          trainer.predict(GRID), true_curve(GRID), plots.padded_range(data.y),
                          {"title": t("gen.live.fit"), "train": t("gen.part.train"), "val": t("gen.part.val"),
                           "x": "x"}, size)
    losses = plots.curves_panel(trainer.history, "loss", trainer.best_epoch,
                                {"title": t("gen.live.loss"), "train": t("gen.part.train"), "val": t("gen.part.val"),
                                 "epoch": t("gen.epoch"), "best": t("gen.best_epoch")}, log_y=True, size=size)
    head = t("gen.live.caption", epoch=trainer.epoch, train=f"{last['train_loss']:.4f}", val=f"{last['val_loss']:.4f}",
             best=trainer.best_epoch, best_val=f"{trainer.best_val:.4f}")
    return {"epoch": trainer.epoch, "caption": "  ·  ".join(filter(None, [head, caption])),
            "panels": [fit, losses, *(extra or [])]}


def curve_run_data(data: CurveData) -> Callable[[], tuple]:
    return lambda: (data.x[data.train], data.y[data.train], data.x[data.val], data.y[data.val])


# ---------- sections ----------
def split_section(state: PageState) -> None:
    st.markdown(t("gen.split.intro"))
    data_controls(state)
    data = current_data(state.values)
    st.plotly_chart(plots.split_figure(data.x, data.y, parts(data), GRID, true_curve(GRID), part_labels()),
                    key="gen.split_fig")
    st.subheader(t("gen.cv.title"))
    st.markdown(t("gen.cv.intro"))
    c1, c2 = st.columns(2)
    k = state.widget("k", container=c1)
    degree = state.widget("degree", container=c2)
    folds = cross_validate(data, degree, k, state.values["seed"])
    cv_view(folds, data, k, (ss["gen.data_key"], degree, k))
    scores = np.array([f.score for f in folds])
    f = poly_fit(data.x[data.train], data.y[data.train], degree)
    cols = st.columns(3)
    cols[0].metric(t("gen.cv.mean", k=k), f"{scores.mean():.3f} ± {scores.std():.3f}")
    cols[1].metric(t("gen.cv.holdout"), f"{mse(f, data.x[data.val], data.y[data.val]):.3f}")
    cols[2].metric(t("gen.cv.new"), f"{mse(f, data.x_new, data.y_new):.3f}")
    st.caption(t("gen.cv.note"))


def cv_start() -> None:
    ss["gen.cv.shown"] = 1
    ss["gen.cv.playing"] = True
    st.rerun()


def cv_pause() -> None:
    """Stop the folds' animation; a full rerun if it was playing, so its fragment's timer stops too."""
    if ss.get("gen.cv.playing"):
        ss["gen.cv.playing"] = False
        st.rerun()


def cv_step(k: int) -> None:
    ss["gen.cv.shown"] = ss["gen.cv.shown"] % k + 1
    cv_pause()


def cv_view(folds: list, data: CurveData, k: int, key: tuple) -> None:
    """The folds one by one: each fold's points and curve, and its score joining the others."""
    if ss.get("gen.cv.key") != key:  # new data or settings: show the finished result
        ss["gen.cv.key"], ss["gen.cv.shown"], ss["gen.cv.playing"] = key, k, False
    labels = {"fold_title": "", "scores_title": t("gen.cv.scores"), "x": "x", "fold": t("gen.cv.fold_axis"),
              "mse": t("gen.mse"), "train": t("gen.part.train"), "val": t("gen.part.val"),
              "test": t("gen.part.test"), "mean": t("gen.cv.mean_line")}

    @st.fragment(run_every=CV_TICK_S if ss.get("gen.cv.playing") else None)
    def panel():
        playing = ss.get("gen.cv.playing", False)
        if playing and in_fragment_rerun():
            ss["gen.cv.shown"] = min(ss["gen.cv.shown"] + 1, k)
        shown = ss["gen.cv.shown"]
        bar = st.container(horizontal=True)
        if playing:
            bar.button(t("gen.pause"), on_click=cv_pause, icon=":material/pause:",
                       key="gen.cv.pause")
        else:
            bar.button(t("gen.cv.play"), on_click=cv_start, icon=":material/play_arrow:", type="primary",
                       key="gen.cv.play")
        bar.button(t("gen.cv.step"), on_click=cv_step, args=(k,), icon=":material/skip_next:", key="gen.cv.step")
        fold = folds[shown - 1]
        scores = [f.score for f in folds[:shown]]
        labels["fold_title"] = t("gen.cv.fold_title", i=shown, k=k)
        caption = t("gen.cv.caption", i=shown, k=k, score=f"{fold.score:.3f}", mean=f"{np.mean(scores):.3f}",
                    std=f"{np.std(scores):.3f}")
        panels = plots.cv_panels(data.x, data.y, fold.train, fold.val, data.test, GRID, fold.predict(GRID),
                                 true_curve(GRID), scores, k, labels)
        ss["gen.cv.seq"] = ss.get("gen.cv.seq", 0) + 1
        show_frames([{"caption": caption, "panels": panels}], key="gen.cv.view", seq=ss["gen.cv.seq"],
                    status="playing" if playing else "paused")
        if playing and shown >= k:
            ss["gen.cv.playing"] = False
            st.rerun()  # whole page, so this fragment's timer stops

    panel()


@st.cache_data(max_entries=32, show_spinner=False)
def cached_leak(scenario: str, knob: float, seed: int) -> leakage.Leak:
    make = {"scaling": leakage.scaling_leak, "group": leakage.group_leak, "time": leakage.time_leak}[scenario]
    return make(knob, seed)


def leakage_section(state: PageState) -> None:
    st.markdown(t("gen.leak.intro"))
    bar_labels = {k: t(f"gen.leak.{k}") for k in ("reported", "new", "accuracy", "chance")}
    figures = {
        "scaling": (plots.spare_features_figure, {"train": t("gen.leak.scaling.train"),
                                                  "test": t("gen.leak.scaling.test"), "new": t("gen.leak.scaling.new"),
                                                  "u": t("gen.leak.scaling.u"), "v": t("gen.leak.scaling.v")}),
        "group": (plots.records_figure, {"random": t("gen.leak.group.leaky"), "group": t("gen.leak.group.honest"),
                                         "person": t("gen.leak.group.person"), "record": t("gen.leak.group.record"),
                                         "train": t("gen.part.train"), "test": t("gen.part.test")}),
        "time": (plots.timeline_figure, {"shuffled": t("gen.leak.time.leaky"), "future": t("gen.leak.time.honest"),
                                         "train": t("gen.part.train"), "test": t("gen.part.test"),
                                         "day": t("gen.leak.time.day"), "regime": t("gen.leak.time.regime")}),
    }
    for scenario, knob in (("scaling", "strength"), ("group", "records"), ("time", "spell")):
        with st.container(border=True):
            st.subheader(t(f"gen.leak.{scenario}.title"))
            st.markdown(t(f"gen.leak.{scenario}.text"))
            value = state.widget(knob)
            leak = cached_leak(scenario, value, state.values["seed"])
            draw, labels = figures[scenario]
            c1, c2 = st.columns(2)
            c1.plotly_chart(draw(leak.example, labels), key=f"gen.leak.{scenario}.example")
            names = {"leaky": t(f"gen.leak.{scenario}.leaky"), "honest": t(f"gen.leak.{scenario}.honest")}
            c2.plotly_chart(plots.leak_figure((leak.leaky.reported, leak.leaky.new),
                                              (leak.honest.reported, leak.honest.new), bar_labels | names),
                            key=f"gen.leak.{scenario}.bars")
            gap = {name: f"{(s.reported - s.new) * 100:+.0f} ± {s.spread * 100:.0f}"
                   for name, s in (("leaky", leak.leaky), ("honest", leak.honest))}
            st.caption(t("gen.leak.summary", leaky=names["leaky"], honest=names["honest"],
                         lr=f"{leak.leaky.reported:.0%}", ln=f"{leak.leaky.new:.0%}", gap=gap["leaky"],
                         hr=f"{leak.honest.reported:.0%}", hn=f"{leak.honest.new:.0%}", hgap=gap["honest"],
                         repeats=leakage.REPEATS))


@st.cache_data(max_entries=64, show_spinner=False)
def cached_sweep(data_key: tuple):
    return degree_sweep(cached_curve_data(*data_key))


def capacity_section(state: PageState) -> None:
    st.markdown(t("gen.cap.intro"))
    data_controls(state)
    data = current_data(state.values)
    degree = state.widget("degree")
    sweep = cached_sweep(ss["gen.data_key"])
    labels = {"degree": t("gen.degree"), "mse": t("gen.mse"), "train": t("gen.part.train"), "val": t("gen.part.val"),
              "new": t("gen.new_data"), "best": t("gen.cap.best", d=sweep.best), "chosen": t("gen.cap.chosen"),
              "under": t("gen.cap.under"), "over": t("gen.cap.over"),
              "interpolating": t("gen.cap.interpolating", n=len(data.train), d=sweep.interpolating or 0)}
    f = poly_fit(data.x[data.train], data.y[data.train], degree)
    c1, c2 = st.columns(2)
    c1.plotly_chart(plots.sweep_figure(sweep.degrees, sweep.train, sweep.val, sweep.new, sweep.best, degree,
                                       sweep.interpolating, labels), key="gen.sweep_fig")
    c2.plotly_chart(plots.fit_figure(data.x, data.y, parts(data), GRID, f(GRID), true_curve(GRID),
                                     part_labels() | {"fit": t("gen.cap.fit", d=degree)}), key="gen.fit_fig")
    cols = st.columns(3)
    for col, (name, x, y) in zip(cols, (("train", data.x[data.train], data.y[data.train]),
                                        ("val", data.x[data.val], data.y[data.val]),
                                        ("new", data.x_new, data.y_new))):
        col.metric(t(f"gen.cap.metric.{name}", d=degree), f"{mse(f, x, y):.4f}")
    st.subheader(t("gen.es.title"))
    st.markdown(t("gen.es.intro"))
    v = state.values
    cols = st.columns(4)
    for col, name in zip(cols, ("width", "lr", "patience", "speed")):
        state.widget(name, container=col)
    config = FitConfig(hidden=(v["width"],) * 2, lr=v["lr"], patience=v["patience"], seed=v["seed"])
    live_section("cap", config, ss["gen.data_key"], curve_run_data(data), v["speed"], lambda tr: curve_frame(tr, data))


def regularization_section(state: PageState) -> None:
    st.markdown(t("gen.reg.intro"))
    data_controls(state)
    data = current_data(state.values)
    v = state.values
    cols = st.columns(3)
    for col, name in zip(cols, ("l2", "l1", "dropout")):
        state.widget(name, container=col)
    cols = st.columns(3)
    for col, name in zip(cols, ("width", "lr", "speed")):
        state.widget(name, container=col)
    config = FitConfig(hidden=(v["width"],) * 2, lr=v["lr"], l2=v["l2"], l1=v["l1"], dropout=v["dropout"],
                       seed=v["seed"])
    hist_labels = {"title": t("gen.reg.weights"), "weight": t("gen.reg.weight"), "zero": t("gen.reg.zero")}

    def draw(trainer: FitTrainer) -> dict:
        w = trainer.weights()
        zeros = t("gen.reg.zeros", z=int((w == 0).sum()), m=w.size)
        return curve_frame(trainer, data, [plots.weights_panel(w, hist_labels)], zeros)

    live_section("reg", config, ss["gen.data_key"], curve_run_data(data), v["speed"], draw)
    st.caption(t("gen.reg.note"))


@st.cache_data(max_entries=32, show_spinner=False)
def noisy_points(dataset: str, flip: float, seed: int) -> tuple:
    X, y = make_classification(dataset, NOISE_POINTS, SPREAD.get(dataset, 0.0), seed)
    tr, va = split(NOISE_POINTS, 0.5, seed)
    y_noisy, flipped = flip_labels(y[tr], flip, seed)
    return X[tr], y_noisy, flipped, X[va], y[va]


def label_noise_section(state: PageState) -> None:
    st.markdown(t("gen.noise.intro"))
    v = state.values
    cols = st.columns(5)
    for col, name in zip(cols, ("dataset", "flip", "width", "lr", "speed")):
        state.widget(name, container=col)
    points = noisy_points(v["dataset"], v["flip"], v["seed"])
    X_tr, y_tr, flipped, X_va, y_va = points
    config = FitConfig(task="binary", hidden=(v["width"],) * 2, lr=v["lr"], seed=v["seed"])
    cells = plane_grid(NOISE_GRID)
    acc_labels = {"title": t("gen.noise.acc"), "train": t("gen.part.train"), "val": t("gen.part.val"),
                  "epoch": t("gen.epoch"), "best": t("gen.best_epoch")}

    def draw(trainer: FitTrainer) -> dict:
        last = trainer.history[-1]
        predicted = (trainer.predict(cells) > 0.5).astype(int)
        boundary = plots.boundary_panel(cells[:, 0], cells[:, 1], predicted, X_tr, y_tr, flipped, DOMAIN,
                                        {"title": t("gen.noise.boundary")})
        acc = plots.curves_panel(trainer.history, "acc", trainer.best_epoch, acc_labels, y_range=(0.0, 1.0))
        caption = t("gen.noise.caption", epoch=trainer.epoch, train=f"{last['train_acc']:.1%}",
                    val=f"{last['val_acc']:.1%}", gap=f"{(last['train_acc'] - last['val_acc']) * 100:+.1f}")
        return {"epoch": trainer.epoch, "caption": caption, "panels": [boundary, acc]}

    live_section("noise", config, (v["dataset"], v["flip"], v["seed"]), lambda: (X_tr, y_tr, X_va, y_va), v["speed"],
                 draw)
    st.caption(t("gen.noise.note", flipped=int(flipped.sum()), n=len(y_tr)))


# ---------- page ----------
SECTIONS = {"split": split_section, "leakage": leakage_section, "capacity": capacity_section,
            "regularization": regularization_section, "label_noise": label_noise_section}


def main() -> None:
    state = PageState(PAGE, SCHEMA)
    with state.frame(t("nav.generalization"), t("gen.intro")):
        # one section at a time: hidden tabs would still re-render their charts on every live update
        section = state.widget("section", label_visibility="collapsed")
        SECTIONS[section](state)


main()
