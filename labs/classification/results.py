"""The classification lab's results under the live view: loss curves, evaluation, why cross-entropy, downloads."""
from datetime import datetime, timezone

import numpy as np
import streamlit as st

from sim import metrics
from sim.export import history_csv, weights_json
from sim.losses import logit_gradients
from sim.plots.curves import accuracy_curves, loss_curves
from sim.plots.evaluation import confusion_figure, pr_figure, roc_figure
from sim.plots.losses import gradient_figure
from sim.training import Trainer
from ui.i18n import t
from ui.player import Player
from ui.urlstate import PageState

REFRESH_S = 3.0  # how often the Plotly curves catch up while training (a redraw costs the browser ~100 ms)


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
            c2.plotly_chart(roc_figure(fpr, tpr, metrics.auc(fpr, tpr), (m.fpr, m.recall), labels),
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
