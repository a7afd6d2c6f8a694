"""The optimiser lab's linked views as pure functions: the loss chart's step brush and the phase diagram's click
read from st.altair_chart's selection state (empty and malformed ones included), the Altair specs they come from,
and the highlighted stretch drawn on the paths."""
import math

import numpy as np
import pytest

from sim.optim.optimizers import diverged_at, path, surface
from sim.plots import optimizers as plots

LABELS = {k: k for k in ("x", "y", "start", "minimum", "diverged", "play", "pause", "step", "loss")}


def brush(lo, hi):
    return {"selection": {plots.BRUSH: {"step": [lo, hi]}}}


def click(step, beta):
    return {"selection": {plots.PICK: [{"step": step, "beta": beta}]}}


@pytest.mark.parametrize("state, expected", [
    (brush(10.3, 40.7), (11, 40)),  # the whole steps inside the brush
    (brush(40.7, 10.3), (11, 40)),  # dragged right to left
    (brush(-5, 30), (0, 30)), (brush(90, 1e9), (90, 100)),  # held to the path's steps
    (brush("12", "20"), (12, 20)),  # numbers as text
])
def test_brushed_steps(state, expected):
    assert plots.brushed_steps(state, 100) == expected


@pytest.mark.parametrize("state", [
    None, {}, "steps", 3, {"selection": {}}, {"selection": None}, {"selection": {plots.BRUSH: {}}},
    {"selection": {plots.BRUSH: {"step": []}}}, {"selection": {plots.BRUSH: {"step": [1.0]}}},
    {"selection": {plots.BRUSH: {"step": [1, 2, 3]}}}, brush("a", 4), brush(math.nan, 4), brush(1, math.inf),
    brush(5.2, 5.8),  # no whole step inside
    brush(200, 300),  # beyond the last step
    {"selection": {plots.BRUSH: {"x": [1, 5]}}}, {"selection": {"other": {"step": [1, 5]}}},
])
def test_an_empty_or_malformed_brush_is_none(state):
    assert plots.brushed_steps(state, 100) is None


def test_picked_point_rounds_and_holds_to_the_sliders_range():
    lo, hi = (0.01, 0.0), (4.0, 0.99)
    assert plots.picked_point(click(1.2345, 0.4567), lo, hi) == (1.23, 0.46)
    assert plots.picked_point(click(9.0, -0.3), lo, hi) == (4.0, 0.0)
    assert plots.picked_point(click("0.5", "0.25"), lo, hi) == (0.5, 0.25)
    assert plots.picked_point({"selection": {plots.PICK: [{"step": 2, "beta": 0.5}, {"step": 1, "beta": 0}]}},
                              lo, hi) == (2.0, 0.5)  # the first of several


@pytest.mark.parametrize("state", [
    None, {}, [], {"selection": {}}, {"selection": {plots.PICK: []}}, {"selection": {plots.PICK: {}}},
    {"selection": {plots.PICK: [{}]}}, {"selection": {plots.PICK: [{"step": 1}]}}, click(None, 0.5),
    click("x", 0.5), click(math.nan, 0.5), click(1.0, math.inf), {"selection": {plots.PICK: ["1, 2"]}},
])
def test_an_empty_or_malformed_click_is_none(state):
    assert plots.picked_point(state, (0.01, 0.0), (4.0, 0.99)) is None


def test_loss_chart_carries_the_losses_the_colours_and_the_brush():
    surf = surface("quadratic")
    runs = {"sgd": path("sgd", surf, None, 50, lr=1.0), "adam": path("adam", surf, None, 50)}
    ends = {o: diverged_at(p) for o, p in runs.items()}
    gaps = {o: plots.losses(surf, p)[0] for o, p in runs.items()}
    chart = plots.loss_chart(gaps, {"sgd": "SGD", "adam": "Adam"}, LABELS, ends)
    spec = chart.to_dict()
    assert spec["params"][0]["name"] == plots.BRUSH and spec["params"][0]["select"]["encodings"] == ["x"]
    lines, crosses = spec["layer"]
    rows, ended = (layer.data for layer in chart.layer)
    np.testing.assert_allclose(rows[rows["name"] == "Adam"]["loss"], np.maximum(gaps["adam"], 1e-12))
    assert (rows["name"] == "SGD").sum() == ends["sgd"]  # the diverged part is left out
    assert lines["encoding"]["color"]["scale"]["range"] == [plots.COLOURS["sgd"], plots.COLOURS["adam"]]
    assert ended.to_dict("records") == [{"step": ends["sgd"] - 1, "loss": pytest.approx(gaps["sgd"][ends["sgd"] - 1]),
                                         "name": "diverged"}]
    assert lines["encoding"]["y"]["scale"]["type"] == "log"


def test_the_brushed_stretch_is_drawn_over_every_path():
    surf = surface("quadratic", 10.0, 20.0)
    runs = {o: path(o, surf, None, 60) for o in ("sgd", "momentum")}
    plain = plots.paths_figure(surf, runs, {o: o for o in runs}, LABELS)
    fig = plots.paths_figure(surf, runs, {o: o for o in runs}, LABELS, highlight=(10, 25))
    extra = fig.data[len(plain.data):]
    assert len(extra) == 2 and all(not tr.showlegend for tr in extra)
    for tr, (o, p) in zip(extra, runs.items(), strict=True):
        np.testing.assert_allclose(np.column_stack([tr.x, tr.y]), p[10:26])
        assert tr.line.width > 3 and tr.line.color == plots.rgba(plots.COLOURS[o], 0.45)
    assert len(fig.frames) == len(plain.frames)  # the animation still redraws only the paths
