"""sim.plots.sequence: each figure draws exactly the numbers it is given (the live frame's panels, the masks cell by
cell, the shares and reach per pattern, the gradients on a log axis, the gates, the worked scan's rows, the memory
and timing curves)."""
import numpy as np

from benchmarks import KeyLabels
from sim.plots.sequence import (
    gates_figure,
    gradient_figure,
    masks_figure,
    memory_frame,
    parallel_figure,
    reach_figure,
    scan_rows,
    share_figure,
    state_figure,
    timing_figure,
)
from sim.sequence import masks
from sim.ssm.cost import worked_scan

L = KeyLabels(caption="step {step}", reach="{name}: {reach}", share="{share}", title="L={layers}")


def run(kind, acc):
    return {"kind": kind, "name": kind.upper(), "curve": np.array([1, 2, 3], dtype=np.int32),
            "loss": np.array([2.0, 1.0, 0.5], dtype=np.float32), "acc": np.array([0.1, 0.5, 0.9], dtype=np.float32),
            "by_distance": np.array(acc, dtype=np.float32), "reach": 2}


def test_the_live_frame_draws_loss_accuracy_and_accuracy_by_distance():
    f = memory_frame([run("rnn", [1.0, 0.5, np.nan, 0.2]), run("attn", [1.0] * 4)], 4, 0.125, L)
    by_d, loss, acc = f["panels"]
    for other in (loss, acc):  # accuracy by distance is the view's figure: larger than the others, on every screen
        assert by_d["width"] > other["width"] <= 300 and by_d["height"] > other["height"]
        assert by_d["width"] / by_d["height"] > other["width"] / other["height"]  # presenter: same height, wider
    assert f["epoch"] == 3 and f["caption"] == "step 3 · RNN: 2 · ATTN: 2"
    assert loss["series"][0]["y"] == [2.0, 1.0, 0.5] and acc["y_range"] == [0.0, 1.0]
    assert by_d["series"][0]["x"] == [1.0, 2.0, 3.0, 4.0] and by_d["series"][0]["y"] == [1.0, 0.5, None, 0.2]
    assert by_d["series"][-1]["y"] == [0.125, 0.125] and by_d["series"][-1]["dash"]  # chance
    assert [s["color"] for s in loss["series"]] != [loss["series"][0]["color"]] * 2


def test_masks_are_drawn_cell_by_cell_with_their_share():
    ms = {"window": masks.window(10, 2), "bigbird": masks.bigbird(10, 1, (0,), 2, 3)}
    fig = masks_figure(ms, L)
    for trace, m in zip(fig.data, ms.values(), strict=True):
        assert np.array_equal(np.asarray(trace.z), m.astype(np.uint8))
    assert f"{ms['window'].mean():.1%}" in fig.layout.annotations[0].text


def test_share_reach_state_and_timing_curves_hold_their_numbers():
    share = share_figure([16, 32], {"full": [1.0, 1.0], "window": [0.3, 0.15]}, L)
    assert list(share.data[1].y) == [0.3, 0.15] and share.layout.yaxis.type == "log"
    reach = reach_figure({"window": np.array([3, 4, 4])}, 2, L)
    assert list(reach.data[0].y) == [3, 4, 4] and reach.layout.title.text == "L=2"
    state = state_figure([1, 10, 100], 500.0, [10.0, 100.0, 1000.0], L)
    assert list(state.data[0].y) == [10.0, 100.0, 1000.0] and list(state.data[1].y) == [500.0] * 3
    timing = timing_figure([64, 128], {"recurrence": [0.001, 0.002], "scan": [0.003, 0.004]}, L)
    assert list(timing.data[0].y) == [1.0, 2.0] and timing.data[1].name == "scan"


def test_gradients_on_a_log_axis_with_zeros_left_out():
    fig = gradient_figure({"rnn": ("RNN", np.array([0.0, 1e-6, 1e-3, 1.0]))}, 1, L)
    assert fig.layout.yaxis.type == "log" and np.isnan(fig.data[0].y[0]) and list(fig.data[0].y[1:]) == [1e-6, 1e-3, 1]


def test_gates_are_drawn_units_by_position():
    g = {"forget": np.random.default_rng(0).random((6, 3)), "cell": np.linspace(-2, 1, 18).reshape(6, 3)}
    fig = gates_figure(g, 2, L)
    assert np.allclose(np.asarray(fig.data[0].z), g["forget"].T) and (fig.data[0].zmin, fig.data[0].zmax) == (0, 1)
    assert fig.data[1].zmin == -2 and fig.data[1].zmax == 2  # the cell state: symmetric around 0
    four = gates_figure({n: g["forget"] for n in ("input", "forget", "output")} | {"cell": g["cell"]}, 2,
                        L)
    grads = gradient_figure({"rnn": ("RNN", np.ones(6))}, 2, L)
    assert len(four.data) == 4 and four.layout.height < grads.layout.height  # two to a row: a phone shows both


def test_the_worked_scan_rows_write_every_number():
    w = worked_scan(3, 4, 2)
    rows = scan_rows(w, L)
    assert len(rows) == 4 and rows[2]["t"] == 2
    assert rows[2]["y"] == f"{w.y[2]:.3f}" and rows[2]["h"] == f"[{w.h[2][0]:.3f}, {w.h[2][1]:.3f}]"


def test_the_parallel_figure_draws_times_and_steps():
    fig = parallel_figure([16, 32], {"rnn": [0.001, 0.002], "attention": [0.0005, 0.004]},
                          {"rnn": [16, 32], "attention": [1, 1]}, L)
    assert [list(d.y) for d in fig.data] == [[1.0, 2.0], [16, 32], [0.5, 4.0], [1, 1]]
    assert fig.layout.xaxis.type == fig.layout.yaxis2.type == "log"
