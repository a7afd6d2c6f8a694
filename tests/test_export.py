"""sim.core.export: history CSV and weights JSON survive a round trip."""

import io
import json

import numpy as np
import pandas as pd
import pytest

from sim.core.export import HISTORY_COLUMNS, history_csv, weights_json


def test_history_csv_round_trip() -> None:
    history = [
        {"epoch": 0, "train_loss": 0.693, "test_loss": None, "train_acc": 0.5, "test_acc": None},
        {"epoch": 1, "train_loss": np.float32(0.25), "test_loss": 0.3, "train_acc": 0.875,
         "test_acc": 0.8, "lr": 0.1},  # extra keys are not exported
        {"epoch": 2, "train_loss": 0.125},  # missing keys are empty cells
    ]
    text = history_csv(history)
    assert text.splitlines()[0] == ",".join(HISTORY_COLUMNS)
    assert text.splitlines()[1] == "0,0.693,,0.5,"
    frame = pd.read_csv(io.StringIO(text))
    assert list(frame.columns) == list(HISTORY_COLUMNS)
    assert frame["epoch"].tolist() == [0, 1, 2]
    np.testing.assert_allclose(frame["train_loss"], [0.693, 0.25, 0.125])
    np.testing.assert_allclose(frame["test_loss"], [np.nan, 0.3, np.nan])
    np.testing.assert_allclose(frame["test_acc"], [np.nan, 0.8, np.nan])


def test_history_csv_empty_has_header_only() -> None:
    assert history_csv([]) == ",".join(HISTORY_COLUMNS) + "\n"


def test_weights_json_round_trip() -> None:
    rng = np.random.default_rng(0)
    layers = [
        (rng.standard_normal((4, 2)).astype(np.float32), rng.standard_normal(4).astype(np.float32)),
        (rng.standard_normal((3, 4)), rng.standard_normal(3)),
    ]
    config = {"hidden": (4,), "activation": "tanh", "lr": np.float64(0.03)}
    meta = {"epoch": np.int64(12), "features": ["x1", "x2"], "classes": ["猫", "狗", "鸟"],
            "date": "2025-01-01T12:00:00"}
    doc = json.loads(weights_json(config, layers, meta))
    assert doc["config"] == {"hidden": [4], "activation": "tanh", "lr": 0.03}
    assert doc["meta"] == {"epoch": 12, "features": ["x1", "x2"], "classes": ["猫", "狗", "鸟"],
                           "date": "2025-01-01T12:00:00"}
    assert len(doc["layers"]) == 2
    for (W, b), layer in zip(layers, doc["layers"], strict=True):
        np.testing.assert_array_equal(np.asarray(layer["W"], dtype=W.dtype), W)  # exact, out x in
        np.testing.assert_array_equal(np.asarray(layer["b"], dtype=b.dtype), b)


def test_weights_json_diverged_values_become_null() -> None:
    W = np.array([[np.nan, 1.0], [np.inf, -np.inf]])
    text = weights_json({}, [(W, np.array([0.0, np.nan]))], {"loss": float("nan")})
    doc = json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} is not JSON"))
    assert doc["layers"][0] == {"W": [[None, 1.0], [None, None]], "b": [0.0, None]}
    assert doc["meta"] == {"loss": None}


def test_weights_json_rejects_transposed_layer() -> None:
    with pytest.raises(ValueError):
        weights_json({}, [(np.zeros((2, 4)), np.zeros(4))], {})
