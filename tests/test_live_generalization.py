"""The generalisation lab's live runs (sim.fitting.generalization.FitRun: the capacity, regularisation and
label-noise sections) on the live-run contract (sim.core.live): each a pure function of its settings however its
epochs are grouped, and every cursor on a shared run sees exactly what a private run shows at its step, in frames
and in the model read through cursor.model()."""

import numpy as np
import pytest
from live_contract import assert_grouping_invariant, assert_same, check_two_cursors

from benchmarks.classroom import lab_spec
from labs.generalization.live import live_spec
from sim.core.live import LiveSpec
from sim.fitting.fit import FitConfig
from sim.fitting.generalization import GRID, NOISE_CELLS, FitRun, curve_data, noisy_points

CURVE_KEY = (40, 0.5, 0.6, 0.2, 0)
NOISE_KEY = ("moons", 0.2, 0)
SETTINGS = {  # name -> (section, its run): each section, early stopping, dropout's random masks, an L1 step
    "cap": ("cap", FitConfig(hidden=(16, 16), lr=0.01, patience=40)),
    "reg_dropout_l1": ("reg", FitConfig(hidden=(16, 16), lr=0.01, l2=1e-3, l1=1e-4, dropout=0.3, seed=2)),
    "noise": ("noise", FitConfig(task="binary", hidden=(16, 16), lr=0.01, seed=1)),
}


def spec(name: str, speed: int = 3) -> LiveSpec:
    section, config = SETTINGS[name]
    if section == "noise":
        return live_spec(section, config, NOISE_KEY, noisy_points(*NOISE_KEY).train_val, speed)
    return live_spec(section, config, CURVE_KEY, curve_data(*CURVE_KEY).train_val, speed)


def probe(run: FitRun) -> tuple:
    """What the page reads of the model at its step: its predictions, weights, history and best epoch."""
    tr = run.trainer
    cells = NOISE_CELLS if run.view == "boundary" else GRID
    return tr.predict(cells), tr.weights(), tuple(tuple(h.items()) for h in tr.history), tr.best_epoch, tr.finished


@pytest.mark.parametrize("name", SETTINGS)
def test_epochs_grouped_any_way_give_the_same_run(name):
    assert_grouping_invariant(spec(name), [(1, 1), (3, 9), (10, 1), (7, 30)])


@pytest.mark.parametrize("name", SETTINGS)
def test_two_cursors_on_one_shared_run_see_what_a_private_run_shows(name):
    frames, probes = check_two_cursors(spec(name), probe)
    assert frames >= 8 and probes >= 8


def test_early_stopping_and_divergence_end_the_run_at_a_step_whose_frame_never_changes():
    s = spec("cap")
    run = s.build()
    run.advance(5000)
    tr = run.trainer
    assert run.stopped and tr.stopped and run.steps == tr.epoch == tr.best_epoch + 40
    again = s.build()
    again.advance(run.steps)
    assert_same(again.frame(), run.frame())
    huge = live_spec("cap", FitConfig(hidden=(8,), lr=0.03), ("huge",),
                     lambda: (np.array([0.0, 1.0, 2.0]), np.array([1e30, 0.0, 1.0]), np.array([1.5]), np.array([0.0])),
                     1).build()  # squared targets of 1e60 overflow float32: diverged from the start
    assert huge.stopped and huge.steps == 0 and huge.frame()["diverged"]


@pytest.mark.parametrize("name,view", [("cap", "pred"), ("reg_dropout_l1", "weights"), ("noise", "classes")])
def test_a_frame_is_compact_and_has_no_words(name, view):
    run = spec(name).build()
    run.advance(400)
    frame = run.frame()
    epochs, train, val = frame["curves"]
    assert len(epochs) == len(train) == len(val) <= 160 and train.dtype == np.float32 and epochs[-1] == run.steps
    assert view in frame and not any(isinstance(v, str) for v in frame.values())
    if view == "classes":
        assert frame["classes"].dtype == np.uint8 and len(frame["classes"]) == (len(NOISE_CELLS) + 7) // 8
    if view == "weights":
        hist = frame["weights"]
        assert hist["counts"].sum() + hist["zeros"] == hist["size"] == run.trainer.weights().size


@pytest.mark.parametrize("section", ["cap", "reg", "noise"])
def test_the_benchmark_runs_the_pages_default_and_another_seed_another_run(section):
    lab = "generalization" if section == "cap" else f"generalization_{section}"
    same, _ = lab_spec(lab)
    other, draw = lab_spec(lab, seed=7)
    assert same.settings != other.settings and same.key == other.key == f"gen.{section}"
    run = other.build()
    run.advance(3)
    from ui.i18n import language

    with language("en"):
        shown = draw([{**run.frame(), "step": 3, "run": 1, "n": 3}])
    assert shown[0]["epoch"] == 3 and shown[0]["panels"] and shown[0]["step"] == 3
