"""The generalisation lab's words for sim.plots.generalization's figures and frames, in the user's language.

A "template" here is a catalogue text with its {placeholders} left in: the frame builder fills them.
"""
from sim.fitting.claims import capacity_reading
from sim.fitting.generalization import Sweep
from ui.i18n import t


def parts() -> dict:
    return {"train": t("gen.part.train"), "val": t("gen.part.val"), "test": t("gen.part.test"),
            "truth": t("gen.truth"), "x": "x", "y": "y"}


def cv() -> dict:
    return {"fold_title": t("gen.cv.fold_title"), "scores_title": t("gen.cv.scores"), "x": "x",
            "fold": t("gen.cv.fold_axis"), "mse": t("gen.mse"), "train": t("gen.part.train"),
            "val": t("gen.part.val"), "test": t("gen.part.test"), "mean": t("gen.cv.mean_line"),
            "caption": t("gen.cv.caption")}


def capacity(sweep: Sweep, n_train: int, degree: int) -> tuple[dict, dict]:
    """sim.plots.generalization.capacity_figures' two label sets: the sweep's and the fit's (under- and over-fitting
    marked only where the sweep shows them: sim.fitting.claims.capacity_reading)."""
    reading = capacity_reading(sweep.degrees, sweep.val)
    return ({"degree": t("gen.degree"), "mse": t("gen.mse"), "train": t("gen.part.train"), "val": t("gen.part.val"),
             "new": t("gen.new_data"), "best": t("gen.cap.best", d=sweep.best), "chosen": t("gen.cap.chosen"),
             "under": t("gen.cap.under") if reading.under else "", "over": t("gen.cap.over") if reading.over else "",
             "interpolating": t("gen.cap.interpolating", n=n_train, d=sweep.interpolating or 0),
             "band": t("gen.cap.band", draws=sweep.draws), "this_val": t("gen.cap.this_val")},
            parts() | {"fit": t("gen.cap.fit", d=degree)})


def curve() -> dict:
    """sim.plots.generalization.curve_frame's."""
    return {"fit": {"title": t("gen.live.fit"), "train": t("gen.part.train"), "val": t("gen.part.val"), "x": "x"},
            "loss": {"title": t("gen.live.loss"), "train": t("gen.part.train"), "val": t("gen.part.val"),
                     "epoch": t("gen.epoch"), "best": t("gen.best_epoch")},
            "caption": t("gen.live.caption")}


def regularization() -> dict:
    """sim.plots.generalization.regularization_frame's."""
    return curve() | {"weights": {"title": t("gen.reg.weights"), "weight": t("gen.reg.weight"),
                                  "zero": t("gen.reg.zero")},
                      "zeros": t("gen.reg.zeros")}


def noise() -> dict:
    """sim.plots.generalization.noise_frame's."""
    return {"boundary": {"title": t("gen.noise.boundary")},
            "acc": {"title": t("gen.noise.acc"), "train": t("gen.part.train"), "val": t("gen.part.val"),
                    "epoch": t("gen.epoch"), "best": t("gen.best_epoch")},
            "caption": t("gen.noise.caption")}


def leak_example(scenario: str) -> dict:
    """The words of a leakage scenario's picture of one draw."""
    if scenario == "scaling":
        return {"train": t("gen.leak.scaling.train"), "test": t("gen.leak.scaling.test"),
                "new": t("gen.leak.scaling.new"), "u": t("gen.leak.scaling.u"), "v": t("gen.leak.scaling.v")}
    if scenario == "group":
        return {"random": t("gen.leak.group.leaky"), "group": t("gen.leak.group.honest"),
                "person": t("gen.leak.group.person"), "record": t("gen.leak.group.record"),
                "train": t("gen.part.train"), "test": t("gen.part.test")}
    return {"shuffled": t("gen.leak.time.leaky"), "future": t("gen.leak.time.honest"), "train": t("gen.part.train"),
            "test": t("gen.part.test"), "day": t("gen.leak.time.day"), "regime": t("gen.leak.time.regime")}


def leak_bars(scenario: str) -> dict:
    """The words of a leakage scenario's bars: the protocols' names ("leaky", "honest") and the axes'."""
    return ({k: t(f"gen.leak.{k}") for k in ("reported", "new", "accuracy", "chance")}
            | {"leaky": t(f"gen.leak.{scenario}.leaky"), "honest": t(f"gen.leak.{scenario}.honest")})
