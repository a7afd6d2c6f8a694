"""Panel builders of the generic live view: the bytes decode back to the values given."""
import base64

import numpy as np
import pytest

from sim.plots.panels import heatmap_panel, series, xy_panel


def decode(b64):
    return np.frombuffer(base64.b64decode(b64), dtype=np.uint8)


def test_series_keeps_values_and_turns_non_finite_into_gaps():
    s = series([0, 1, 2], [1.0, np.nan, np.inf], kind="points", label="fit")
    assert s["x"] == [0.0, 1.0, 2.0] and s["y"] == [1.0, None, None] and s["kind"] == "points"
    with pytest.raises(ValueError):
        series([0], [0], kind="bars")


def test_xy_panel_ranges_are_floats_or_auto():
    p = xy_panel("t", [series([0, 1], [0, 1])], x_range=(0, 2))
    assert p["x_range"] == [0.0, 2.0] and p["y_range"] is None and p["type"] == "xy"


def test_heatmap_scales_between_vmin_and_vmax_row_major():
    values = np.array([[0.0, 0.5], [1.0, 2.0]])
    p = heatmap_panel("w", values, vmin=0.0, vmax=1.0)
    assert (p["rows"], p["cols"]) == (2, 2)
    assert decode(p["data"]).tolist() == [0, 128, 255, 255]  # clipped above vmax


def test_heatmap_mask_is_sent_apart_from_the_values():
    w = np.tril(np.ones((3, 3))) / np.arange(1, 4)[:, None]
    mask = ~np.tril(np.ones((3, 3), bool))
    p = heatmap_panel("causal", w, vmin=0, vmax=1, mask=mask, annotate=True)
    assert decode(p["mask"]).reshape(3, 3).tolist() == mask.astype(int).tolist()
    assert p["text"][0] == "1.00" and p["text"][3] == "0.50"


def test_heatmap_rejects_bad_shapes_and_colormaps():
    with pytest.raises(ValueError):
        heatmap_panel("x", np.zeros(3), vmin=0, vmax=1)
    with pytest.raises(ValueError):
        heatmap_panel("x", np.zeros((2, 2)), vmin=0, vmax=1, colormap="rainbow")
