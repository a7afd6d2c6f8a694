"""The live training view: a canvas component fed raw model outputs, a few frames per rerun."""
from __future__ import annotations

import time
from weakref import WeakKeyDictionary

import numpy as np

from sim.plots import live as enc
from ui.components import live_component
from ui.player import Player

GRID_RES = 50  # boundary resolution sent per frame (the browser smooths it to 360 px)
THUMB_RES = 20  # resolution of the neuron thumbnails
EPOCHS_PER_FRAME = 5  # at speed 1: 5 epochs a frame × 30 frames a second = 150 epochs a second
STATIC_EVERY_S = 0.5
_STATIC: WeakKeyDictionary = WeakKeyDictionary()  # trainer -> when its points, curve and network were last sent
BOUNDED = {"tanh": (-1.0, 1.0), "sigmoid": (0.0, 1.0)}

_component = live_component("mlsim_live_view", "live_view.js", "live_view.css")


def frame(trainer) -> dict:
    """One animation frame: the boundary and losses of the model as it is now."""
    last = trainer.history[-1] if trainer.history else {}
    return {"epoch": trainer.epoch, "grid": enc.encode_grid(trainer.predict_grid(GRID_RES), trainer.config.problem),
            "train_loss": last.get("train_loss"), "val_loss": last.get("val_loss")}


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


def player_for(trainer) -> Player:
    """The live-run controller of a classification run: a frame of its boundary per tick of `speed` epochs.

    A tick per frame (the player's default), so each run's thread wakes 30 times a second whatever the speed:
    a class of threads sharing the GIL loses little to waking up. The page sets speed to EPOCHS_PER_FRAME ×
    its slider.
    """
    player = Player(lambda n: trainer.step(epochs=n), lambda: frame(trainer), lambda: trainer.diverged,
                    model=trainer)
    player.step_size = 1  # Step trains one epoch, as TensorFlow Playground's does
    return player


def payload(trainer, frames: list[dict], *, seq: int, status: str, threshold: float, discretize: bool,
            show_val: bool, labels: dict, input_labels: list[str], titles: list[str]) -> dict:
    """What the component receives: the frames, the data points, the loss curve and the current network.

    While playing, the points, the curve and the network go at most every STATIC_EVERY_S per run (None in
    between; the browser keeps the last ones): they are two thirds of an update, and a class of browsers on
    small laptops must parse every update.
    """
    problem = trainer.config.problem
    data = {"seq": seq, "status": status, "problem": problem, "res": GRID_RES,
            "channels": enc.grid_channels(trainer.n_classes, problem), "threshold": threshold,
            "discretize": discretize, "show_val": show_val, "frames": frames, "labels": labels,
            "curve": None, "points": None, "net": None}
    now = time.monotonic()
    if status == "playing" and now - _STATIC.get(trainer, -1e9) < STATIC_EVERY_S:
        return data
    _STATIC[trainer] = now
    train_xy, train_y = enc.encode_points(trainer.X_train, trainer.y_train, problem)
    # the validation points, never the test set's: those stay unseen until the one final evaluation
    val_xy, val_y = enc.encode_points(trainer.X_val, trainer.y_val, problem)
    data.update(curve=enc.curve_panel(trainer.history, labels),
                points={"train_xy": train_xy, "train_y": train_y, "val_xy": val_xy, "val_y": val_y},
                net=_network(trainer, trainer.config.activation, input_labels, titles))
    return data


def show(trainer, frames: list[dict], **kw) -> None:
    """Send the frames and the current network to the browser (same key: updated in place); kw: see payload."""
    _component(data=payload(trainer, frames, **kw), key="live_view", height="content")
