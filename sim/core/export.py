"""Downloads of a training run: the loss/accuracy history as CSV, the weights as JSON."""

import csv
import io
import json
import math

import numpy as np

HISTORY_COLUMNS = ("epoch", "train_loss", "test_loss", "train_acc", "test_acc")
# the classification lab's runs are monitored on their validation set (sim.nets.training.HISTORY_KEYS)
VAL_HISTORY_COLUMNS = ("epoch", "train_loss", "val_loss", "train_acc", "val_acc")


def history_csv(history: list[dict], columns: tuple[str, ...] = HISTORY_COLUMNS) -> str:
    """One row per history entry in `columns` order; None or a missing key is an empty cell."""
    out = io.StringIO()
    writer = csv.DictWriter(out, columns, restval="", extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: v for k, v in entry.items() if v is not None} for entry in history)
    return out.getvalue()


def _jsonable(value: object) -> object:
    """Plain JSON values: arrays to nested lists, NumPy scalars to Python, NaN/inf to null."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (np.ndarray, np.generic)):
        return _jsonable(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None  # a diverged run still gives valid JSON
    return value


def weights_json(config: dict, layers: list[tuple[np.ndarray, np.ndarray]], meta: dict) -> str:
    """{"config", "layers": [{"W": out x in, "b": out}], "meta"} as indented JSON.

    `meta` is written as given (the page passes epoch, features, classes and an ISO date);
    NumPy values anywhere become plain JSON and non-finite numbers become null.
    """
    for W, b in layers:
        if W.ndim != 2 or b.shape != (W.shape[0],):
            raise ValueError(f"layer shapes W {W.shape}, b {b.shape} are not (out, in), (out,)")
    document = {
        "config": config,
        "layers": [{"W": W, "b": b} for W, b in layers],
        "meta": meta,
    }
    return json.dumps(_jsonable(document), indent=2, ensure_ascii=False)
