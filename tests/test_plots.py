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
