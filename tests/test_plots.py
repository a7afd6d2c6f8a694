"""sim.plots.curves and sim.plots.evaluation: the traces carry the data and the labels passed in."""

import numpy as np
import plotly.graph_objects as go
import pytest

from sim.plots.curves import TEST_COLOR, TRAIN_COLOR, accuracy_curves, loss_curves
from sim.plots.evaluation import confusion_figure, pr_figure, roc_figure

CURVE_LABELS = {"epoch": "轮次", "loss": "损失", "accuracy": "准确率", "train": "训练", "test": "测试"}
EVAL_LABELS = {"true": "真实", "predicted": "预测", "count": "数量", "fpr": "假阳性率", "tpr": "真阳性率",
               "chance": "随机", "threshold": "当前阈值", "precision": "精确率", "recall": "召回率"}
HISTORY = [
    {"epoch": e, "train_loss": 1 / (e + 1), "test_loss": 1.2 / (e + 1), "train_acc": 0.5 + e / 20,
     "test_acc": 0.45 + e / 20}
    for e in range(0, 10, 2)
]


def _by_name(fig: go.Figure) -> dict[str, go.Scatter]:
    return {trace.name: trace for trace in fig.data}


def test_loss_curves_traces_and_hover() -> None:
    fig = loss_curves(HISTORY, CURVE_LABELS)
    traces = _by_name(fig)
    assert set(traces) == {"训练", "测试"}
    for split, colour in (("train", TRAIN_COLOR), ("test", TEST_COLOR)):
        trace = traces[CURVE_LABELS[split]]
        assert list(trace.x) == [0, 2, 4, 6, 8]
        assert list(trace.y) == [h[f"{split}_loss"] for h in HISTORY]
        assert trace.line.color == colour
        for word in ("轮次", "损失", CURVE_LABELS[split]):
            assert word in trace.hovertemplate
    assert fig.layout.xaxis.title.text == "轮次" and fig.layout.yaxis.title.text == "损失"
    assert fig.layout.yaxis.type == "linear"
    assert 260 <= fig.layout.height <= 320


def test_loss_curves_log_toggle() -> None:
    assert loss_curves(HISTORY, CURVE_LABELS, log_y=True).layout.yaxis.type == "log"


def test_accuracy_curves_fixed_unit_axis() -> None:
    fig = accuracy_curves(HISTORY, CURVE_LABELS)
    trace = _by_name(fig)["测试"]
    assert list(trace.y) == [h["test_acc"] for h in HISTORY]
    assert "准确率" in trace.hovertemplate
    assert tuple(fig.layout.yaxis.range) == (0, 1)


def test_missing_test_split_is_left_out() -> None:
    history = [{"epoch": e, "train_loss": 0.5, "test_loss": None} for e in range(3)]
    assert set(_by_name(loss_curves(history, CURVE_LABELS))) == {"训练"}


def test_long_history_gives_a_bounded_figure_that_keeps_the_spike() -> None:
    n = 50_000
    history = [{"epoch": e, "train_loss": 1 / e, "test_loss": 2 / e, "train_acc": 1 - 1 / e, "test_acc": 0.9}
               for e in range(1, n + 1)]
    history[31_000]["test_loss"] = 7.0
    for fig in (loss_curves(history, CURVE_LABELS), accuracy_curves(history, CURVE_LABELS)):
        assert sum(len(trace.x) for trace in fig.data) <= 2 * 1000
        for trace in fig.data:
            assert trace.x[0] == 1 and trace.x[-1] == n
    test = _by_name(loss_curves(history, CURVE_LABELS))["测试"]
    assert max(test.y) == 7.0 and min(test.y) == 2 / n


@pytest.mark.parametrize("builder", [loss_curves, accuracy_curves])
def test_empty_history_gives_axes_without_traces(builder) -> None:
    fig = builder([], CURVE_LABELS)
    assert len(fig.data) == 0
    assert fig.layout.xaxis.title.text == "轮次"
    fig.to_json()


def test_confusion_figure() -> None:
    cm = np.array([[5, 1], [2, 7]])
    fig = confusion_figure(cm, ["cat", "dog"], EVAL_LABELS)
    heat = fig.data[0]
    np.testing.assert_array_equal(heat.z, cm)
    np.testing.assert_array_equal(heat.text, cm)
    assert list(heat.x) == list(heat.y) == ["cat", "dog"]
    for word in ("真实", "预测", "数量"):
        assert word in heat.hovertemplate
    assert fig.layout.xaxis.title.text == "预测" and fig.layout.yaxis.title.text == "真实"
    assert fig.layout.yaxis.autorange == "reversed"


def test_roc_figure() -> None:
    fpr, tpr = np.array([0, 0, 0.5, 1]), np.array([0, 0.5, 1, 1])
    fig = roc_figure(fpr, tpr, 0.875, (0.5, 1.0), EVAL_LABELS)
    traces = _by_name(fig)
    curve = traces["AUC = 0.875"]
    np.testing.assert_array_equal(curve.x, fpr)
    np.testing.assert_array_equal(curve.y, tpr)
    assert "假阳性率" in curve.hovertemplate and "真阳性率" in curve.hovertemplate
    assert (traces["当前阈值"].x, traces["当前阈值"].y) == ((0.5,), (1.0,))
    assert (traces["随机"].x, traces["随机"].y) == ((0, 1), (0, 1))


def test_pr_figure() -> None:
    precision, recall = np.array([2 / 3, 0.5, 1, 1]), np.array([1, 0.5, 0.5, 0])
    fig = pr_figure(precision, recall, 5 / 6, (0.5, 0.5), EVAL_LABELS)
    curve = _by_name(fig)["AP = 0.833"]
    np.testing.assert_array_equal(curve.x, recall)
    np.testing.assert_array_equal(curve.y, precision)
    assert curve.line.shape == "hv"
    assert "精确率" in curve.hovertemplate and "召回率" in curve.hovertemplate
    assert fig.layout.xaxis.title.text == "召回率"


def test_empty_evaluation_inputs_do_not_raise() -> None:
    for fig in (
        confusion_figure(np.zeros((0, 0), dtype=int), [], EVAL_LABELS),
        roc_figure([], [], None, None, EVAL_LABELS),
        pr_figure([], [], None, None, EVAL_LABELS),
    ):
        fig.to_json()
    assert "当前阈值" not in _by_name(roc_figure([], [], None, None, EVAL_LABELS))


# ---------- sim.plots.regression: the regression page's figures ----------
REG_LABELS = {k: k.upper() for k in ("x", "y", "data", "outlier", "fit", "truth", "fit_all", "fit_clean", "fitted",
                                     "residual", "count", "vs_x", "vs_fit", "hist", "w", "b", "loss", "path", "start",
                                     "optimum", "epoch")}


def test_regression_fit_view_draws_the_polyfit_curve_and_the_truth() -> None:
    from sim.fitting import regression as reg
    from sim.fitting.regression_data import make_dataset
    from sim.plots.regression import fit_view

    d = make_dataset("linear", 30, 0.3, 1, outliers=2, outlier_size=5.0)
    fig = fit_view(d, reg.fit(d.x, d.y, reg.ModelConfig(degree=2)), REG_LABELS)
    traces = _by_name(fig)
    assert set(traces) == {"DATA", "OUTLIER", "FIT", "TRUTH"}
    grid = np.linspace(d.x.min(), d.x.max(), reg.CURVE_POINTS)
    np.testing.assert_allclose(traces["FIT"].x, grid)
    np.testing.assert_allclose(traces["FIT"].y, np.polyval(np.polyfit(d.x[:, 0], d.y, 2), grid), rtol=1e-9)
    np.testing.assert_allclose(traces["TRUTH"].y, 1.5 * grid + 1.0)  # the linear set's trend
    assert len(traces["OUTLIER"].x) == 2 and len(traces["DATA"].x) == 28
    temp = make_dataset("temperature", 20, 0.3, 1)
    assert "TRUTH" not in _by_name(fit_view(temp, reg.fit(temp.x, temp.y, reg.ModelConfig()), REG_LABELS))


def test_regression_residuals_view_holds_the_lstsq_residuals() -> None:
    from sim.fitting import regression as reg
    from sim.fitting.regression_data import make_dataset
    from sim.plots.regression import residuals_view

    d = make_dataset("temperature", 25, 0.3, 2)
    fig = residuals_view(d, reg.fit(d.x, d.y, reg.ModelConfig()), REG_LABELS)
    A = np.column_stack([d.x, np.ones(len(d.y))])
    r = A @ np.linalg.lstsq(A, d.y, rcond=None)[0] - d.y
    np.testing.assert_array_equal(fig.data[0].x, d.x[:, -1])  # against the last input (yesterday)
    np.testing.assert_allclose(fig.data[0].y, r, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(fig.data[-1].x, r, rtol=1e-9, atol=1e-9)  # the histogram


def test_regression_surface_view_is_the_loss_over_the_grid_around_polyfit() -> None:
    from sim.fitting import regression as reg
    from sim.fitting.regression_data import make_dataset
    from sim.plots.regression import surface_view

    d = make_dataset("linear", 30, 0.3, 3)
    fig = surface_view(d, reg.ModelConfig(), None, REG_LABELS)
    contour, optimum = fig.data[0], _by_name(fig)["OPTIMUM"]
    slope, intercept = np.polyfit(d.x[:, 0], d.y, 1)
    assert (optimum.x[0], optimum.y[0]) == pytest.approx((slope, intercept))
    i, j = 11, 52
    w, b = contour.x[j], contour.y[i]
    assert contour.customdata[i][j] == pytest.approx(np.mean((w * d.x[:, 0] + b - d.y) ** 2) / 2)
    assert contour.x[0] < min(0, slope) and contour.x[-1] > max(0, slope)  # the start (0, 0) and the minimum
    path = np.array([[0.0, 0.0], [0.5, 0.2], [1.0, 0.5]])
    assert set(_by_name(surface_view(d, reg.ModelConfig(), path, REG_LABELS))) >= {"PATH", "START", "OPTIMUM"}


def test_regression_outlier_view_draws_both_fits() -> None:
    from sim.fitting import regression as reg
    from sim.fitting.regression_data import make_dataset
    from sim.plots.regression import FIT_COLOR, ROBUST_COLOR, outlier_view

    d = make_dataset("linear", 30, 0.3, 4, outliers=2, outlier_size=8.0)
    for loss, colour in (("mse", FIT_COLOR), ("huber", ROBUST_COLOR)):
        fits = reg.outlier_fits(d, reg.ModelConfig(), loss)
        traces = _by_name(outlier_view(d, fits, REG_LABELS))
        assert traces["FIT_ALL"].line.color == colour and traces["FIT_CLEAN"].line.dash == "dot"
        np.testing.assert_array_equal(traces["FIT_CLEAN"].y, fits.clean)
    clean = ~d.outlier  # the huber case, last: its clean fit is Huber's too, so check the squared loss's here
    grid = np.linspace(d.x.min(), d.x.max(), reg.CURVE_POINTS)
    mse = _by_name(outlier_view(d, reg.outlier_fits(d, reg.ModelConfig(), "mse"), REG_LABELS))
    np.testing.assert_allclose(mse["FIT_CLEAN"].y, np.polyval(np.polyfit(d.x[clean, 0], d.y[clean], 1), grid),
                               rtol=1e-9)
    np.testing.assert_allclose(mse["FIT_ALL"].y, np.polyval(np.polyfit(d.x[:, 0], d.y, 1), grid), rtol=1e-9)
    none = make_dataset("linear", 30, 0.3, 4)
    assert "FIT_CLEAN" not in _by_name(outlier_view(none, reg.outlier_fits(none, reg.ModelConfig(), "mse"), REG_LABELS))


def test_regression_live_panels() -> None:
    import json

    from sim.fitting import regression as reg
    from sim.fitting.regression_data import make_dataset
    from sim.plots.regression import LIVE_FIT, LIVE_HALF, live_panels

    d = make_dataset("linear", 30, 0.3, 5)
    live = reg.LiveGD(d, reg.GDConfig(lr=0.3))
    live.advance(5)
    run = live.gd
    fit, loss, path = live_panels(live.frame(), d, reg.path_background(run), {**REG_LABELS, "fit": "F", "path": "P"})
    assert (fit["title"], loss["title"], path["title"]) == ("F", "LOSS", "P") and loss["width"] == LIVE_HALF[0]
    grid = np.linspace(d.x.min(), d.x.max(), reg.CURVE_POINTS)
    np.testing.assert_allclose(fit["series"][-1]["y"], run.w[0] * grid + run.b, atol=1e-6)
    assert loss["series"][0]["x"] == list(range(6))
    np.testing.assert_allclose(loss["series"][0]["y"], run.history, rtol=1e-5)
    np.testing.assert_allclose(path["series"][-3]["x"], [p[0] for p in run.path], atol=1e-6)
    json.dumps([fit, loss, path])
    deg2 = reg.LiveGD(d, reg.GDConfig(reg.ModelConfig(degree=2), lr=0.01))
    panels = live_panels(deg2.frame(), d, reg.path_background(deg2.gd), REG_LABELS)
    assert len(panels) == 2 and panels[1]["width"] == LIVE_FIT[0]  # no path: the loss spans the row


def test_the_white_template_unvalidated_is_the_validated_one():
    """compact_layout skips Plotly's validation of the template; the figure comes out as with validation."""
    import plotly.graph_objects as go

    from sim.plots.curves import WHITE, compact_layout

    fast = compact_layout(go.Figure(go.Scatter(x=[0, 1], y=[1, 0])), "x", "y")
    slow = go.Figure(go.Scatter(x=[0, 1], y=[1, 0])).update_layout(template=WHITE, height=fast.layout.height,
                                                                     margin=fast.layout.margin,
                                                                     legend=fast.layout.legend, xaxis_title="x",
                                                                     yaxis_title="y")
    assert fast.to_plotly_json() == slow.to_plotly_json()
    assert fast.layout.template.layout.plot_bgcolor == "white"
    fast.update_layout(height=300)  # validation is back on for the caller's own changes
    import pytest

    with pytest.raises(ValueError):
        fast.update_layout(height="tall")
