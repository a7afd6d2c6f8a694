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
    """TensorFlow Playground's layer editor: how many hidden layers, then the neurons in each."""
    hidden = state.values["hidden"]
    ss.setdefault("cls.n_layers", len(hidden))
    cols = st.columns([2, 1, 1, 1, 1, 1, 1])
    n = cols[0].number_input(t("cls.hidden"), 0, 6, key="cls.n_layers")
    for i in range(n):
        ss.setdefault(f"cls.layer{i}", hidden[i] if i < len(hidden) else 4)
        cols[i + 1].number_input(t("cls.layer", i=i + 1), 1, 8, key=f"cls.layer{i}")
    state.set("hidden", tuple(int(ss[f"cls.layer{i}"]) for i in range(n)))


def data_controls(state: PageState) -> None:
    names = CLASSIFICATION_DATASETS if state.values["problem"] == "classification" else REGRESSION_DATASETS
    state.widget("dataset", options=names)
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
    rows = (("problem", "lr", "activation", "optimizer", "weight_decay"),
            ("loss", "regularization", "reg_rate", "dropout", None))
    v = state.values
    for names in rows:
        for col, name in zip(st.columns(len(names)), names, strict=True):
            if name == "loss" and v["problem"] == "regression":
                # regression trains on squared error only; the classification choice stays stored
                col.selectbox(t("cls.loss"), [t("cls.loss.squared_error")], disabled=True, key="cls.loss_regression")
            elif name == "weight_decay":  # AdamW's own hyper-parameter: the other optimizers have none
                state.widget(name, container=col, disabled=v["optimizer"] != "adamw")
                col.caption(t("cls.weight_decay_help" if v["optimizer"] == "adamw" else "cls.weight_decay_off"))
            elif name:
                state.widget(name, container=col)
            if name == "reg_rate":  # the penalty added to the loss, in the course's convention
                col.caption(t(f"cls.reg_formula.{v['regularization']}"))


# ---------- page ----------
def main() -> None:
    state = PageState(PAGE, SCHEMA)
    with state.frame(t("cls.title"), t("cls.intro")):
        with state.controls():
            model_controls(state)
        left, right = state.columns([1, 4], controls=0, gap="medium")
        with state.controls(left):
            st.subheader(t("cls.data"))
            data_controls(state)
        with right:
            with state.controls():
                state.widget("features")
                hidden_layers(state)
            cursor = live.live_panel(state.values, ss.get("cls.upload"))
            if cursor is None:  # no model could be built from these settings; the message says why
                return
            with state.controls():
                for name, col in zip(("discretize", "show_test", "speed"), st.columns(3), strict=True):
                    state.widget(name, container=col)
            snap = snapshot(cursor)  # the model at this session's step
            model_notes_panel(snap)
        curves_panel(cursor)
        # one panel at a time: hidden tabs would still re-render their charts on every live update
        panel = state.widget("panel", fold=False, label_visibility="collapsed")
        {"eval": lambda: evaluation_panel(state, cursor, snap), "why_ce": lambda: why_cross_entropy(state),
         "features": lambda: features_panel(snap), "download": lambda: downloads(snap)}[panel]()


main()
