"""The classification lab's live run (sim.core.live.LiveRun): a Trainer stepped some epochs at a time, and its
frames in no language: the boundary as bytes, the losses, and every NET_EVERY epochs the network's thumbnails and
link weights and the loss curve. No Streamlit here: the tests and the benchmarks build the run as the page does.
"""
from __future__ import annotations

import numpy as np

from sim.core.history import decimate
from sim.nets.training import HISTORY_KEYS, Trainer, _grid_points
from sim.plots import live as enc

GRID_RES = 50  # boundary resolution sent per frame (the browser smooths it to 360 px)
THUMB_RES = 20  # resolution of the neuron thumbnails
EPOCHS_PER_FRAME = 5  # at speed 1: 5 epochs a frame × 30 frames a second = 150 epochs a second
# the network, its link weights and the loss curve go into the frames at epochs that are multiples of this (and
# at the first): every 15 frames at speed 1 (twice a second), every 3 at speeds 5 and 10; a multiple of every
# speed's frame step (5, 10, 25, 50 epochs) up to 75 · 2, so a playing view meets one at least every 150 epochs
NET_EVERY = 15 * EPOCHS_PER_FRAME
CURVE_POINTS = 600  # the curve in a frame: min–max decimated to this many epochs (a chart is a few hundred px wide)
BOUNDED = {"tanh": (-1.0, 1.0), "sigmoid": (0.0, 1.0)}


class ClassifierRun:
    """A Trainer as a live run: `steps` are epochs, Step trains one (as TensorFlow Playground's does)."""

    def __init__(self, trainer: Trainer):
        self.trainer = trainer
        # the boundary grid's feature matrix: the same every frame (Trainer.predict_grid builds it each call)
        self._grid_x = trainer._features(_grid_points(GRID_RES))

    @property
    def steps(self) -> int:
        return self.trainer.epoch

    @property
    def stopped(self) -> bool:
        return self.trainer.diverged

    def shared(self) -> tuple:
        """The data and its feature matrices: never changed by training, so checkpoints reference them."""
        t = self.trainer
        return t.X_train, t.y_train, t.X_val, t.y_val, t.X_test, t.y_test, t._x_train, t._x_val, self._grid_x

    def advance(self, n: int) -> None:
        self.trainer.step(epochs=n)

    def frame(self) -> dict:
        """The boundary, the losses and the validation accuracy (None for a regression) now; at the first epoch and
        every NET_EVERY also `static()`."""
        t = self.trainer
        last = t.history[-1] if t.history else {}
        grid = t.net.forward_all(self._grid_x)[-1].reshape(GRID_RES, GRID_RES, -1)  # Trainer.predict_grid's values
        out = {"epoch": t.epoch, "grid": enc.encode_grid(grid, t.config.problem),
               "train_loss": last.get("train_loss"), "val_loss": last.get("val_loss"), "val_acc": last.get("val_acc")}
        if t.epoch % NET_EVERY == 0:
            out.update(static(t))
        return out


def static(trainer: Trainer) -> dict:
    """What changes slowly and costs most to send: the network (thumbnails, link weights) and the loss curve."""
    return {"net": network(trainer), "curve": curve_arrays(trainer.history)}


def network(trainer: Trainer) -> dict:
    """Layer sizes, a thumbnail (bytes) of what each input feature, neuron and output computes over the plane, and
    the link weights (float32, row-major per layer) with the magnitude that draws a full-width link."""
    problem, activation = trainer.config.problem, trainer.config.activation
    thumbs = [enc.encode_map(m) for m in np.moveaxis(trainer.input_grids(THUMB_RES), -1, 0)]
    grids = trainer._grid(THUMB_RES)  # the hidden layers' activations and the outputs, one forward pass
    for layer in grids[:-1]:
        thumbs += [enc.encode_map(m, BOUNDED.get(activation)) for m in np.moveaxis(layer, -1, 0)]
    out = grids[-1]
    if problem == "regression":
        thumbs.append(enc.encode_map(out[..., 0], (-1.0, 1.0)))
    elif out.shape[-1] == 2:
        thumbs.append(enc.encode_map(out[..., 1], (0.0, 1.0)))
    else:
        thumbs += [enc.encode_map(out[..., c], (0.0, 1.0)) for c in range(out.shape[-1])]
    layers = trainer.layers()
    weights, wmax = enc.link_weight_arrays(layers)
    sizes = [int(layers[0][0].shape[1])] + [int(W.shape[0]) for W, _ in layers]
    return {"sizes": sizes, "thumbs": thumbs, "weights": weights, "wmax": wmax}


def curve_arrays(history: list[dict], max_points: int = CURVE_POINTS) -> dict[str, np.ndarray]:
    """The history min–max decimated to max_points epochs, as arrays: "epoch" (int32) and each of HISTORY_KEYS
    (float32, NaN where a value is None: accuracy of a regression)."""
    pick = decimate(history, "epoch", HISTORY_KEYS, max_points)
    out = {"epoch": np.array([h["epoch"] for h in pick], dtype=np.int32)}
    for k in HISTORY_KEYS:
        out[k] = np.array([np.nan if h[k] is None else h[k] for h in pick], dtype=np.float32)
    return out


def curve_records(curve: dict[str, np.ndarray]) -> list[dict]:
    """curve_arrays back as history records (None for NaN), for the figures that draw a history."""
    columns = {k: [None if v != v else v for v in curve[k].astype(float).tolist()] for k in HISTORY_KEYS}
    return [{"epoch": e, **{k: columns[k][i] for k in HISTORY_KEYS}} for i, e in enumerate(curve["epoch"].tolist())]


def points(trainer: Trainer) -> dict:
    """The training and validation points as bytes (never the test set's: it stays unseen until the one final
    evaluation). They never change in a run."""
    problem = trainer.config.problem
    train_xy, train_y = enc.encode_points(trainer.X_train, trainer.y_train, problem)
    val_xy, val_y = enc.encode_points(trainer.X_val, trainer.y_val, problem)
    return {"train_xy": train_xy, "train_y": train_y, "val_xy": val_xy, "val_y": val_y}
