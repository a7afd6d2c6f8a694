"""The classification lab's results under the live view: loss curves, evaluation (tuned on the validation set,
the test set evaluated once, on request), what the model is called, why cross-entropy, how many features an input
is, downloads. Each reads the model at the session's step (the cursor's: sim.core.live.Cursor.model), copied out
once per page run (Snapshot), so the shared run is not held while the figures are drawn."""
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import streamlit as st

from labs.classification.live import KEY, playing_curve
from sim.core.export import VAL_HISTORY_COLUMNS, history_csv, weights_json
from sim.core.live import Cursor
from sim.nets import metrics
from sim.nets.losses import logit_gradients
from sim.nets.training import (
    ClassifierConfig,
    affine_formula,
    collapse_linear,
    feature_examples,
    holdout_report,
    model_notes,
)
from sim.plots.curves import accuracy_curves, loss_curves
from sim.plots.evaluation import confusion_figure, pr_figure, roc_figure
from sim.plots.losses import gradient_figure
from ui import charts
from ui.i18n import lang, t
from ui.urlstate import PageState

REFRESH_S = 3.0  # how often the Plotly curves catch up while training (a redraw costs the browser ~100 ms)
ss = st.session_state


@dataclass(frozen=True)
class Snapshot:
    """What the panels read of the model at the cursor's step."""

    config: ClassifierConfig
    epoch: int
    n_classes: int  # columns of predict_proba: k classes (2 for binary), or 1 (regression)
    n_out: int  # the network's outputs
    layers: list  # [(W (out, in), b (out,))], copies
    history: list[dict]
    y_val: np.ndarray
    proba_val: np.ndarray  # class probabilities on the validation points (m, k)


def snapshot(cursor: Cursor) -> Snapshot:
    """The model at the cursor's step (sim.core.live.Cursor.model: replayed from a checkpoint when behind the run),
    read once for every session at that step (Cursor.memo: a class following its teacher is there together)."""
    def read(run) -> Snapshot:
        tr = run.trainer
        return Snapshot(tr.config, tr.epoch, tr.n_classes, int(tr.net.sizes[-1]), tr.layers(), list(tr.history),
                        tr.y_val, tr.predict_proba(tr.X_val))

    return cursor.memo("snapshot", read)


def curves_panel(cursor: Cursor) -> None:
    @st.fragment(run_every=REFRESH_S if cursor.playing else None)
    def panel():
        # playing: the curve of the newest frame the live view drew (it equals the run's at that epoch); paused:
        # the whole history of the model at the cursor's step
        labels = {k: t(f"cls.plot.{k}") for k in ("epoch", "loss", "accuracy", "train", "val")}

        def figures(history: list[dict], problem: str) -> tuple:
            return (loss_curves(history, labels, held_out="val"),
                    accuracy_curves(history, labels, held_out="val") if problem == "classification" else None)

        history = playing_curve(cursor) if cursor.playing else None
        if history is None:  # drawn once for every session at this step and in this language
            loss, acc = cursor.memo(("curves", lang()), lambda run: figures(run.trainer.history,
                                                                           run.trainer.config.problem))
        else:
            with cursor.model_near() as (_, run):  # only its config: the same at every step
                loss, acc = figures(history, run.trainer.config.problem)
        c1, c2 = st.columns(2)
        charts.plotly_chart(c1, loss, key="cls.loss_fig")
        if acc is not None:
            charts.plotly_chart(c2, acc, key="cls.acc_fig")

    panel()


def evaluation_panel(state: PageState, cursor: Cursor, snap: Snapshot) -> None:
    if snap.config.problem != "classification":
        st.info(t("cls.eval_regression"))
        return
    # everything here is tuned on the validation set; the test set waits for final_test_panel's one evaluation
    y, proba = snap.y_val, snap.proba_val
    k = proba.shape[1]
    thr = state.widget("threshold") if k == 2 else None  # also while playing: the live boundary draws it
    if cursor.playing:  # read at the cursor's step, which the view playing on its own channel has left behind
        st.caption(t("cls.playing"))
        return
    labels = {k_: t(f"cls.plot.{k_}") for k_ in ("true", "predicted", "count", "fpr", "tpr", "precision", "recall",
                                                  "chance")}
    names = [t("cls.class", c=c) for c in range(k)]
    if k == 2:
        m = metrics.binary_metrics(y, proba[:, 1], thr)
        labels["threshold"] = t("cls.plot.threshold", thr=f"{thr:.2f}")
        cols = st.columns(6)
        for col, name in zip(cols, ("accuracy", "precision", "recall", "f1"), strict=False):
            col.metric(t(f"cls.metric.{name}"), f"{getattr(m, name):.3f}")
        majority = metrics.majority_accuracy(y)
        cols[4].metric(t("cls.metric.majority"), f"{majority:.3f}", help=t("cls.metric.majority_help"))
        cols[5].metric(t("cls.metric.n_val"), len(y))
        if majority >= 0.8:  # a constant answer already scores this: accuracy says little, the PR curve more
            st.warning(t("cls.imbalance_note", share=f"{majority:.0%}"))
        cm, roc, pr = cursor.memo(("eval", lang(), thr), lambda _: binary_figures(y, proba, m, names, labels))
        c1, c2, c3 = st.columns(3)
        charts.plotly_chart(c1, cm, key="cls.cm")
        if roc is None:  # the validation set holds a single class: no curve can be drawn
            c2.info(t("cls.single_class_val"))
        else:
            charts.plotly_chart(c2, roc, key="cls.roc")
            charts.plotly_chart(c3, pr, key="cls.pr")
        st.caption(t("cls.threshold_help"))
    else:
        pred = proba.argmax(axis=1)
        c1, c2 = st.columns(2)
        c1.metric(t("cls.metric.accuracy"), f"{metrics.accuracy(y, pred):.3f}")
        c2.metric(t("cls.metric.n_val"), len(y))
        charts.plotly_chart(st, confusion_figure(metrics.confusion_matrix(y, pred, k), names, labels), key="cls.cm")
    final_test_panel(cursor, thr)


def binary_figures(y: np.ndarray, proba: np.ndarray, m, names: list[str], labels: dict) -> tuple:
    """The confusion matrix at the threshold, and the ROC and PR curves (None for a validation set of one class)."""
    cm = confusion_figure([[m.tn, m.fp], [m.fn, m.tp]], names, labels)
    roc, pr = metrics.roc_curve(y, proba[:, 1]), metrics.pr_curve(y, proba[:, 1])
    if roc is None:
        return cm, None, None
    (fpr, tpr, _), (prec, rec, _) = roc, pr
    return (cm, roc_figure(fpr, tpr, metrics.auc(fpr, tpr), (m.fpr, m.recall), labels),
            pr_figure(prec, rec, metrics.average_precision(y, proba[:, 1]), (m.recall, m.precision), labels))


def final_test_panel(cursor: Cursor, threshold: float | None) -> None:
    """The test set, evaluated once on request at the threshold chosen on validation, of the model at the cursor's
    step; shown while the session stays at that step of that run (the session's own: runs are shared)."""
    st.subheader(t("cls.test.title"))
    st.caption(t("cls.test.why"))
    at = (cursor.traj.key, cursor.pos)
    if st.button(t("cls.test.button"), icon=":material/fact_check:", key="cls.test_button"):
        with cursor.model() as run:
            tr = run.trainer
            report = holdout_report(tr.y_test, tr.predict_proba(tr.X_test), 0.5 if threshold is None else threshold)
            ss[f"{KEY}.test_eval"] = (at, {"epoch": tr.epoch, **report})
    done = ss.get(f"{KEY}.test_eval")
    result = done[1] if done is not None and done[0] == at else None
    if result is None:
        st.info(t("cls.test.stale" if done is not None else "cls.test.not_yet"))
        return
    names = [n for n in ("accuracy", "precision", "recall", "f1", "auc", "ap") if n in result]
    for col, name in zip(st.columns(len(names) + 1), names + ["n_test"], strict=True):
        value = result["n" if name == "n_test" else name]
        col.metric(t(f"cls.metric.{name}"), "—" if value is None else (value if name == "n_test" else f"{value:.3f}"))
    if result["threshold"] is not None:
        st.caption(t("cls.test.at", epoch=result["epoch"], thr=f"{result['threshold']:.2f}"))
    else:
        st.caption(t("cls.test.at_epoch", epoch=result["epoch"]))


def model_notes_panel(snap: Snapshot, playing: bool) -> None:
    """What the course calls this model, one sentence each (from its settings); for a linear net, its one equivalent
    linear map, paused only: its weights are the cursor's step's, which a playing view has left behind."""
    for key in model_notes(snap.config, snap.n_classes):
        st.caption(t(f"cls.note.{key}"))
        if key == "linear" and snap.n_classes <= 2 and not playing:  # one logit (binary) or one value (regression)
            W, b = collapse_linear(snap.layers)
            names = [t(f"cls.features.{f}") for f in snap.config.features]
            st.caption(t("cls.note.linear_formula", formula=affine_formula(W[0], float(b[0]), names)))


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
    charts.plotly_chart(right, gradient_figure(grid, logit_gradients(grid, 1.0), p, labels), key="cls.ce_fig")


def features_panel(snap: Snapshot) -> None:
    """How many input features this lab's points, the notes' shopper and the article's picture are, and what that
    costs a model: logistic regression, and the network as set here."""
    config = snap.config
    rows = feature_examples(config.features, config.hidden, snap.n_out)
    names = ", ".join(t(f"cls.features.{f}") for f in config.features)
    st.markdown(t("cls.feat.intro", purchase=rows[1]["logistic"]))
    col = {k: t(f"cls.feat.col.{k}") for k in ("example", "shape", "features", "logistic", "network")}
    st.dataframe({col["example"]: [t(f"cls.feat.{r['name']}", names=names) for r in rows],
                  col["shape"]: [" × ".join(str(n) for n in r["shape"]) for r in rows],
                  **{col[k]: [f"{r[k]:,}" for r in rows] for k in ("features", "logistic", "network")}},
                 hide_index=True, key="cls.feat_df")
    image = rows[-1]
    if image["first_layer"] is None:
        st.caption(t("cls.feat.note_linear", n=f"{image['features']:,}"))
    else:
        st.caption(t("cls.feat.note", n=f"{image['features']:,}", h=config.hidden[0], first=f"{image['first_layer']:,}",
                     lab=f"{rows[0]['network']:,}"))


def downloads(snap: Snapshot) -> None:
    c1, c2 = st.columns(2)
    c1.download_button(t("cls.download_curves"), history_csv(snap.history, VAL_HISTORY_COLUMNS), "curves.csv",
                       "text/csv", icon=":material/show_chart:", disabled=not snap.history)
    meta = {"epoch": snap.epoch, "features": list(snap.config.features), "outputs": snap.n_classes,
            "date": datetime.now(UTC).isoformat(timespec="seconds")}
    c2.download_button(t("cls.download_weights"), weights_json(vars(snap.config), snap.layers, meta),
                       "weights.json", "application/json", icon=":material/data_object:")
