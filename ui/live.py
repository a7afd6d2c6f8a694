"""The live training view: a canvas component fed raw model outputs, a few frames per rerun."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import streamlit as st

from sim.plots import live as enc

GRID_RES = 50  # boundary resolution sent per frame (the browser smooths it to 360 px)
THUMB_RES = 20  # resolution of the neuron thumbnails
BOUNDED = {"tanh": (-1.0, 1.0), "sigmoid": (0.0, 1.0)}

_HERE = Path(__file__).parent
# the stylesheet travels inside the script (written into the component's own <style>), which
# works the same whether or not the component is isolated in a shadow root
_STYLE = json.dumps((_HERE / "live_view.css").read_text(encoding="utf-8"))
_component = st.components.v2.component(
    "mlsim_live_view",
    js=f"const STYLE = {_STYLE};\n" + (_HERE / "live_view.js").read_text(encoding="utf-8"),
    isolate_styles=False,  # plain DOM, so page-level tools (and tests) can see the canvases
)


def frame(trainer) -> dict:
    """One animation frame: the boundary and losses of the model as it is now."""
    last = trainer.history[-1] if trainer.history else {}
    return {"epoch": trainer.epoch, "grid": enc.encode_grid(trainer.predict_grid(GRID_RES), trainer.config.problem),
            "train_loss": last.get("train_loss"), "test_loss": last.get("test_loss")}


def _network(trainer, activation: str, input_labels: list[str], titles: list[str]) -> dict:
    problem = trainer.config.problem
    thumbs = [enc.encode_map(m) for m in np.moveaxis(trainer.input_grids(THUMB_RES), -1, 0)]
    for layer in trainer.grid_activations(THUMB_RES):
        thumbs += [enc.encode_map(m, BOUNDED.get(activation)) for m in np.moveaxis(layer, -1, 0)]
    out = trainer.predict_grid(THUMB_RES)
    if problem == "regression":
        thumbs.append(enc.encode_map(out[..., 0], (-1.0, 1.0)))
    elif out.shape[-1] == 2:
        thumbs.append(enc.encode_map(out[..., 1], (0.0, 1.0)))
    else:
        thumbs += [enc.encode_map(out[..., c], (0.0, 1.0)) for c in range(out.shape[-1])]
    layers = trainer.layers()
    weights, wmax = enc.link_weights(layers)
    sizes = [layers[0][0].shape[1]] + [W.shape[0] for W, _ in layers]
    return {"sizes": sizes, "titles": titles, "inputs": input_labels, "thumbs": thumbs,
            "thumbs_res": THUMB_RES, "weights": weights, "wmax": wmax}


def show(trainer, frames: list[dict], *, seq: int, status: str, threshold: float, discretize: bool,
         show_test: bool, labels: dict, input_labels: list[str], titles: list[str]) -> None:
    """Send the frames and the current network to the browser (same key: updated in place)."""
    problem = trainer.config.problem
    train_xy, train_y = enc.encode_points(trainer.X_train, trainer.y_train, problem)
    test_xy, test_y = enc.encode_points(trainer.X_test, trainer.y_test, problem)
    data = {
        "seq": seq, "status": status, "problem": problem, "res": GRID_RES,
        "channels": enc.grid_channels(trainer.n_classes, problem),
        "threshold": threshold, "discretize": discretize, "show_test": show_test,
        "frames": frames, "labels": labels, "curve": enc.curve(trainer.history),
        "points": {"train_xy": train_xy, "train_y": train_y, "test_xy": test_xy, "test_y": test_y},
        "net": _network(trainer, trainer.config.activation, input_labels, titles),
    }
    _component(data=data, key="live_view", height="content")
