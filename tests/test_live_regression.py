"""The regression lab's live run (sim.fitting.regression.LiveGD) on the live-run contract (sim.core.live): a pure
function of its settings however its epochs are grouped, and every cursor on a shared run sees exactly what a
private run shows at its step, in frames and in the model read through cursor.model()."""

import numpy as np
import pytest
from live_contract import assert_grouping_invariant, assert_same, check_two_cursors

from benchmarks.classroom import lab_spec
from labs.regression.live import bench_spec, live_spec
from sim.core.live import LiveSpec
from sim.fitting import regression as reg
from sim.fitting.regression_data import make_dataset

DATA_KEY = ("linear", 40, 0.3, 2, 1, 5.0)
SETTINGS = {  # name -> (data, the run): full batch with its (w, b) path, mini-batches (a generator), a divergence
    "full_batch": (DATA_KEY, reg.GDConfig(lr=0.5)),
    "minibatch_huber": (DATA_KEY, reg.GDConfig(reg.ModelConfig(loss="huber"), lr=0.1, batch_size=8, seed=3)),
    "degree_3_standardised": (("sine", 50, 0.3, 1, 0, 5.0),
                              reg.GDConfig(reg.ModelConfig(degree=3, standardize=True), lr=0.3, batch_size=16)),
    "diverges": (("area_price", 30, 0.3, 0, 0, 5.0), reg.GDConfig(lr=100.0)),
}


def spec(name: str, speed: int = 2) -> LiveSpec:
    data_key, gd = SETTINGS[name]
    return live_spec(make_dataset(*data_key), data_key, gd, speed)


def prober(name: str):
    """What the page reads of the run at its step: the fit's predictions and metrics on the data, the path, the
    loss."""
    data = make_dataset(*SETTINGS[name][0])

    def probe(run: reg.LiveGD) -> tuple:
        fit = run.gd.as_fit()
        return (fit.predict(data.x), tuple(reg.scores(data, fit).values()), run.gd.path_array(), run.gd.epoch,
                run.gd.history[-1], run.gd.diverged)

    return probe


@pytest.mark.parametrize("name", SETTINGS)
def test_epochs_grouped_any_way_give_the_same_run(name):
    assert_grouping_invariant(spec(name), [(1, 1), (3, 9), (10, 1), (7, 30)])


@pytest.mark.parametrize("name", SETTINGS)
def test_two_cursors_on_one_shared_run_see_what_a_private_run_shows(name):
    frames, probes = check_two_cursors(spec(name), prober(name), play=name != "diverges")
    assert frames >= 8 and probes >= 8


def test_a_diverging_run_stops_every_cursor_at_the_epoch_it_diverged_with_its_last_finite_weights():
    s = spec("diverges")
    run = s.build()
    run.advance(50)
    assert run.stopped and run.steps < 10 and run.gd.epoch in (run.steps, run.steps - 1)
    assert np.isfinite(run.gd.w).all() and run.frame()["diverged"]
    again = s.build()
    again.advance(run.steps)
    assert again.stopped  # the step that diverged is a step: its frame is taken once and never changes
    assert_same(again.frame(), run.frame())


def test_a_frame_is_compact_and_has_no_words():
    run = spec("full_batch").build()
    run.advance(1000)
    frame = run.frame()
    curve_x, curve_y = frame["curve"]
    assert curve_y.dtype == np.float32 and len(curve_y) == reg.CURVE_POINTS and curve_x is run.along  # shared
    epochs, losses = frame["losses"]
    assert len(epochs) == len(losses) == len(frame["path"]) <= reg.LIVE_HISTORY and epochs[-1] == 1000
    assert frame["path"].dtype == np.float32 and frame["path"].shape[1] == 2
    assert not any(isinstance(v, str) for v in frame.values())
    assert spec("degree_3_standardised").build().frame()["path"] is None  # more than one weight: no (w, b) path


def test_the_benchmark_runs_the_pages_default_and_another_seed_another_run():
    assert lab_spec("regression")[0].settings == bench_spec()[0].settings
    same, _ = bench_spec()
    other, draw = bench_spec(seed=7)
    assert same.settings != other.settings
    run = other.build()
    run.advance(3)
    from ui.i18n import language

    with language("en"):
        shown = draw([{**run.frame(), "step": 3, "run": 1, "n": 3}])
    assert shown[0]["epoch"] == 3 and shown[0]["caption"].startswith("epoch 3") and len(shown[0]["panels"]) == 3
