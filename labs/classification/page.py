"""Classification lab: a TensorFlow-Playground-class network trained live, with its boundary."""
import random
from datetime import datetime, timezone

import numpy as np
import streamlit as st

from sim import metrics
from sim.data import CLASSIFICATION_DATASETS, REGRESSION_DATASETS
from sim.export import history_csv, weights_json
from sim.losses import logit_gradients
from sim.plots.curves import accuracy_curves, loss_curves
from sim.plots.evaluation import confusion_figure, pr_figure, roc_figure
from sim.plots.losses import gradient_figure
from sim.training import ClassifierConfig, Trainer
from sim.upload import MAX_BYTES, UploadError, parse_points_csv
from ui import live, live_run
from ui.i18n import t, t_md
from ui.player import Player
from labs.classification.schema import PAGE, SCHEMA
from ui.urlstate import PageState

REFRESH_S = 3.0  # how often the Plotly curves catch up while training (a redraw costs the browser ~100 ms)
ss = st.session_state


# ---------- model ----------
def regenerate() -> None:
    ss["cls.seed"] = random.randrange(1_000_000)


def clear_upload() -> None:
    ss["cls.upload"] = None


def make_config(v: dict) -> ClassifierConfig:
    loss = "squared_error" if v["problem"] == "regression" else v["loss"]
    return ClassifierConfig(
        problem=v["problem"], dataset=v["dataset"], n=v["n"], noise=v["noise"], train_ratio=v["train_ratio"],
        batch_size=v["batch_size"], features=v["features"], hidden=v["hidden"], activation=v["activation"],
        lr=v["lr"], regularization=v["regularization"], reg_rate=v["reg_rate"], loss=loss,
        optimizer=v["optimizer"], dropout=v["dropout"], seed=v["seed"])


def current_player(v: dict) -> Player | None:
    """The session's run (player.model: its Trainer); a new one when the settings change, the old one on bad input."""
    if not v["features"]:
        st.warning(t("cls.no_features"))
        return ss.get("cls.player")
    upload = ss.get("cls.upload")
    config = make_config(v)
    try:
        player = live_run.current_player(
            "cls", (config, id(upload)), lambda: live.player_for(Trainer(config, data=upload and (upload.X, upload.y))))
    except ValueError as e:
        st.error(t("cls.bad_config", detail=str(e)))
        return ss.get("cls.player")
    player.speed = live.EPOCHS_PER_FRAME * v["speed"]
    return player


# ---------- widgets ----------
def hidden_layers(state: PageState) -> None:
    """TensorFlow Playground's layer editor: how many hidden layers, then the neurons in each."""
    hidden = state.values["hidden"]
    ss.setdefault("cls.n_layers", len(hidden))
    cols = st.columns([2, 1, 1, 1, 1, 1, 1])
    n = cols[0].number_input(t("cls.hidden"), 0, 6, key="cls.n_layers")
    for i in range(n):
        ss.setdefault(f"cls.layer{i}", hidden[i] if i < len(hidden) else 4)
        cols[i + 1].number_input(t("cls.layer", i=i + 1), 1, 8, key=f"cls.layer{i}")
    state.set("hidden", tuple(int(ss[f"cls.layer{i}"]) for i in range(n)))


def upload_box(problem: str) -> None:
    with st.expander(t("cls.upload")):
        st.caption(t("cls.upload_help"))
        file = st.file_uploader(t("cls.upload_file"), type=["csv", "txt"], key="cls.file",
                                max_upload_size=MAX_BYTES // 2**20)
        tag = file and (file.file_id, problem)
        if file is not None and ss.get("cls.upload_tag") != tag:
            ss["cls.upload_tag"] = tag
            try:
                ss["cls.upload"] = parse_points_csv(file.getvalue(), problem=problem)
            except UploadError as e:
                ss["cls.upload_error"] = (e.code, e.params)  # the data in use stays as it was,
                if ss.get("cls.upload_problem") != problem:  # unless it was read for the other problem type
                    ss["cls.upload"] = None
            else:
                ss["cls.upload_problem"] = problem
                ss.pop("cls.upload_error", None)
        if ss.get("cls.upload_error"):
            code, params = ss["cls.upload_error"]
            st.error(t_md(f"upload.{code}", **params))
        if ss.get("cls.upload") is not None:
            st.success(t("cls.upload_used", n=len(ss["cls.upload"].y)))
            st.button(t("cls.upload_clear"), on_click=clear_upload)


def data_controls(state: PageState) -> None:
    names = CLASSIFICATION_DATASETS if state.values["problem"] == "classification" else REGRESSION_DATASETS
    state.widget("dataset", options=names)
    for name in ("noise", "train_ratio", "batch_size", "n"):
        state.widget(name)
    state.widget("seed")
    st.button(t("cls.regenerate"), on_click=regenerate, icon=":material/casino:", width="stretch")
    upload_box(state.values["problem"])


def model_controls(state: PageState) -> None:
    rows = (("problem", "lr", "activation", "optimizer"), ("loss", "regularization", "reg_rate", "dropout"))
    for names in rows:
        for col, name in zip(st.columns(len(names)), names):
            if name == "loss" and state.values["problem"] == "regression":
                # regression trains on squared error only; the classification choice stays stored
                col.selectbox(t("cls.loss"), [t("cls.loss.squared_error")], disabled=True, key="cls.loss_regression")
            else:
                state.widget(name, container=col)


# ---------- live view ----------
def live_panel(state: PageState, player: Player) -> None:
    trainer = player.model

    def messages() -> None:
        if trainer.diverged:
            st.error(t(f"cls.diverged.{trainer.divergence}", lr=trainer.config.lr,
                       loss=f"{trainer.recent_train_loss():.2f}", base=f"{trainer.baseline_loss:.2f}"))

    def show(frames: list[dict], seq: int, status: str) -> None:
        status = "diverged" if status == "stopped" else status
        n_hidden = len(trainer.config.hidden)
        with player.lock:
            live.show(trainer, frames, seq=seq, status=status, threshold=state.values["threshold"],
                      discretize=state.values["discretize"], show_test=state.values["show_test"],
                      labels={"epoch": t("cls.epoch"), "train_loss": t("cls.train_loss"),
                              "test_loss": t("cls.test_loss"), "status": t(f"cls.status.{status}")},
                      input_labels=[t(f"cls.features.{f}") for f in trainer.config.features],
                      titles=[t("cls.net.inputs")] + [t("cls.net.layer", i=i + 1) for i in range(n_hidden)]
                      + [t("cls.net.output")])

    live_run.live_view("cls", "cls", player, show, lambda: trainer.diverged, messages=messages)


# ---------- results ----------
def curves_panel(player: Player) -> None:
    @st.fragment(run_every=REFRESH_S if player.playing else None)
    def panel():
        with player.lock:  # the run's thread appends to the history and compacts it
            history = list(player.model.history)
        labels = {k: t(f"cls.plot.{k}") for k in ("epoch", "loss", "accuracy", "train", "test")}
        c1, c2 = st.columns(2)
        c1.plotly_chart(loss_curves(history, labels), key="cls.loss_fig")
        if player.model.config.problem == "classification":
            c2.plotly_chart(accuracy_curves(history, labels), key="cls.acc_fig")

    panel()


def evaluation_panel(state: PageState, trainer: Trainer) -> None:
    if trainer.config.problem != "classification":
        st.info(t("cls.eval_regression"))
        return
    y = trainer.y_test
    proba = trainer.predict_proba(trainer.X_test)
    k = proba.shape[1]
    labels = {k_: t(f"cls.plot.{k_}") for k_ in ("true", "predicted", "count", "fpr", "tpr", "precision", "recall",
                                                  "chance")}
    names = [t("cls.class", c=c) for c in range(k)]
    if k == 2:
        thr = state.widget("threshold")
        m = metrics.binary_metrics(y, proba[:, 1], thr)
        labels["threshold"] = t("cls.plot.threshold", thr=f"{thr:.2f}")
        cols = st.columns(5)
        for col, name in zip(cols, ("accuracy", "precision", "recall", "f1")):
            col.metric(t(f"cls.metric.{name}"), f"{getattr(m, name):.3f}")
        cols[4].metric(t("cls.metric.n_test"), len(y))
        roc, pr = metrics.roc_curve(y, proba[:, 1]), metrics.pr_curve(y, proba[:, 1])
        c1, c2, c3 = st.columns(3)
        c1.plotly_chart(confusion_figure([[m.tn, m.fp], [m.fn, m.tp]], names, labels), key="cls.cm")
        if roc is None:  # the test set holds a single class: no curve can be drawn
            c2.info(t("cls.single_class_test"))
        else:
            fpr, tpr, _ = roc
            c2.plotly_chart(roc_figure(fpr, tpr, metrics.auc(fpr, tpr), (m.fp / max(1, m.fp + m.tn), m.recall), labels),
                            key="cls.roc")
            prec, rec, _ = pr
            c3.plotly_chart(pr_figure(prec, rec, metrics.average_precision(y, proba[:, 1]),
                                      (m.recall, m.precision), labels), key="cls.pr")
        st.caption(t("cls.threshold_help"))
    else:
        pred = proba.argmax(axis=1)
        st.metric(t("cls.metric.accuracy"), f"{metrics.accuracy(y, pred):.3f}")
        st.plotly_chart(confusion_figure(metrics.confusion_matrix(y, pred, k), names, labels), key="cls.cm")


def why_cross_entropy(state: PageState) -> None:
    """The gradient at the logit under each loss, for a positive example the model gives probability p."""
    st.markdown(t("cls.why_ce"))
    left, right = st.columns([1, 2])
    with left:
        p = state.widget("ce_p")
        at = logit_gradients(np.array([p]), 1.0)
        for name in ("cross_entropy", "squared_error"):
            st.metric(t(f"cls.loss.{name}"), f"{at[name][0]:.3f}", help=t("cls.ce_metric_help"))
            st.caption(t("cls.ce_grad", grad=f"{at[name + '_grad'][0]:+.4f}"))
    grid = np.linspace(0.005, 0.995, 199)
    labels = {"p": t("cls.ce_p_axis"), "grad": t("cls.ce_grad_axis"),
              "cross_entropy": t("cls.loss.cross_entropy"), "squared_error": t("cls.loss.squared_error")}
    right.plotly_chart(gradient_figure(grid, logit_gradients(grid, 1.0), p, labels), key="cls.ce_fig")


def downloads(trainer: Trainer) -> None:
    c1, c2 = st.columns(2)
    c1.download_button(t("cls.download_curves"), history_csv(trainer.history), "curves.csv", "text/csv",
                       icon=":material/show_chart:", disabled=not trainer.history)
    meta = {"epoch": trainer.epoch, "features": list(trainer.config.features), "outputs": trainer.n_classes,
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    c2.download_button(t("cls.download_weights"), weights_json(vars(trainer.config), trainer.layers(), meta),
                       "weights.json", "application/json", icon=":material/data_object:")


# ---------- page ----------
def main() -> None:
    state = PageState(PAGE, SCHEMA)
    with state.frame(t("cls.title"), t("cls.intro")):
        model_controls(state)
        left, right = st.columns([1, 4], gap="medium")
        with left:
            st.subheader(t("cls.data"))
            data_controls(state)
        with right:
            state.widget("features")
            hidden_layers(state)
            player = current_player(state.values)
            if player is None:  # no model could be built from these settings; the error says why
                return
            live_panel(state, player)
            for name, col in zip(("discretize", "show_test", "speed"), st.columns(3)):
                state.widget(name, container=col)
        curves_panel(player)
        # one panel at a time: hidden tabs would still re-render their charts on every live update
        panel = state.widget("panel", label_visibility="collapsed")
        with player.lock:  # the run may be training on its own thread
            {"eval": lambda: evaluation_panel(state, player.model), "why_ce": lambda: why_cross_entropy(state),
             "download": lambda: downloads(player.model)}[panel]()


main()
