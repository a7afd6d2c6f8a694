"""Classification lab: a TensorFlow-Playground-class network trained live, with its boundary."""
import random

import streamlit as st

from labs.classification import live
from labs.classification.results import (
    curves_panel,
    downloads,
    evaluation_panel,
    features_panel,
    model_notes_panel,
    snapshot,
    why_cross_entropy,
)
from labs.classification.schema import PAGE, SCHEMA
from sim.core.data import CLASSIFICATION_DATASETS, REGRESSION_DATASETS, split_sizes
from sim.core.upload import parse_points_csv
from ui.i18n import t
from ui.upload import upload_box
from ui.urlstate import PageState

ss = st.session_state


# ---------- model ----------
def regenerate() -> None:
    ss["cls.seed"] = random.randrange(1_000_000)


# ---------- widgets ----------
def hidden_layers(state: PageState) -> None:
    """TensorFlow Playground's layer editor: how many hidden layers, then the neurons in each (two to a row, to fit
    the controls column)."""
    hidden = state.values["hidden"]
    ss.setdefault("cls.n_layers", len(hidden))
    n = st.number_input(t("cls.hidden"), 0, 6, key="cls.n_layers")
    for row in range(0, n, 2):
        for i, col in zip(range(row, min(n, row + 2)), st.columns(2), strict=False):
            ss.setdefault(f"cls.layer{i}", hidden[i] if i < len(hidden) else 4)
            col.number_input(t("cls.layer", i=i + 1), 1, 8, key=f"cls.layer{i}")
    state.set("hidden", tuple(int(ss[f"cls.layer{i}"]) for i in range(n)))


def main_controls(state: PageState) -> None:
    """What a class changes most, beside the boundary: the data, the network, how fast it learns."""
    names = CLASSIFICATION_DATASETS if state.values["problem"] == "classification" else REGRESSION_DATASETS
    state.widget("dataset", options=names, fold=False)
    hidden_layers(state)
    for name in ("lr", "activation"):
        state.widget(name, fold=False)


def data_controls(state: PageState) -> None:
    for name in ("noise", "train_ratio", "val_ratio", "batch_size", "n"):
        state.widget(name)
    upload = ss.get("cls.upload")
    try:  # the course's three sets, as counts: fit on train, tune on validation, test once at the end
        sizes = split_sizes(len(upload.y) if upload else state.values["n"], *(state.values[k] for k in
                                                                                ("train_ratio", "val_ratio")))
        st.caption(t("cls.split_sizes", train=sizes[0], val=sizes[1], test=sizes[2]))
    except ValueError:
        st.caption(t("cls.split_too_small"))
    state.widget("seed")
    st.button(t("cls.regenerate"), on_click=regenerate, icon=":material/casino:", width="stretch")
    problem = state.values["problem"]
    upload_box("cls", lambda raw: parse_points_csv(raw, problem=problem),
               lambda data: t("cls.upload_used", n=len(data.y)), context=problem)


def model_controls(state: PageState) -> None:
    v = state.values
    for name in ("problem", "features", "optimizer", "weight_decay", "loss", "regularization", "reg_rate", "dropout"):
        if name == "loss" and v["problem"] == "regression":
            # regression trains on squared error only; the classification choice stays stored
            st.selectbox(t("cls.loss"), [t("cls.loss.squared_error")], disabled=True, key="cls.loss_regression")
        elif name == "weight_decay":  # AdamW's own hyper-parameter: the other optimizers have none
            state.widget(name, disabled=v["optimizer"] != "adamw")
            st.caption(t("cls.weight_decay_help" if v["optimizer"] == "adamw" else "cls.weight_decay_off"))
        else:
            state.widget(name)
        if name == "reg_rate":  # the penalty added to the loss, in the course's convention
            st.caption(t(f"cls.reg_formula.{v['regularization']}"))


# ---------- page ----------
def main() -> None:
    state = PageState(PAGE, SCHEMA)
    with state.frame(t("cls.title"), t("cls.intro"), t("cls.about")):
        figure, side = state.stage()
        with side:
            main_controls(state)
            with state.more(side):
                model_controls(state)
                st.subheader(t("cls.data"))
                data_controls(state)
                for name in ("discretize", "show_test", "speed"):
                    state.widget(name)
        with figure:
            cursor = live.live_panel(state.values, ss.get("cls.upload"))
            if cursor is None:  # no model could be built from these settings; the message says why
                return
            snap = snapshot(cursor)  # the model at this session's step
            model_notes_panel(snap, cursor.playing)
            curves_panel(cursor)  # in the figure's column: each curve smaller than the boundary
        # one panel at a time: hidden tabs would still re-render their charts on every live update
        panel = state.widget("panel", fold=False, label_visibility="collapsed")
        {"eval": lambda: evaluation_panel(state, cursor, snap), "why_ce": lambda: why_cross_entropy(state),
         "features": lambda: features_panel(snap), "download": lambda: downloads(snap)}[panel]()


main()
