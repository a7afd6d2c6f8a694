"""Issue 41 for the generalisation lab: every sentence that says what a run or a computation shows agrees with the
numbers beside it, checked on the lab's own engine (sim.fitting.generalization, fit and leakage, as the page calls
them) at its defaults over 5 seeds and at other settings: what the capacity sweep shows (and where the figure marks
under- and over-fitting), which estimate cross-validation beat, what a live network's losses show when paused, how
many flipped labels it has memorised, what each leakage protocol's report does and what makes it leak; and no
reading of the cursor's model is shown while its run plays."""
import numpy as np
import pytest

from apptools import open_lab, texts
from labs.generalization import labels
from labs.generalization.leak_view import summary
from labs.generalization.live import run_reading
from labs.generalization.schema import SCHEMA
from sim.core.history import DIVERGED
from sim.core.threads import configure_threads
from sim.fitting import claims, leakage
from sim.fitting.fit import FitConfig, FitTrainer
from sim.fitting.generalization import (
    capacity_sweep,
    cross_validate,
    curve_data,
    cv_summary,
    fit_errors,
    noisy_points,
)
from sim.plots import generalization as plots
from ui.i18n import catalogue, language

configure_threads()  # as the app: one intra-op thread (a second one only spins on a busy machine)

PAGE = "labs/generalization/page.py"
EN, ZH = catalogue("en"), catalogue("zh")
DEFAULTS = {p.name: p.default for p in SCHEMA}
SEEDS = range(5)
DATA = ("n", "noise", "train", "val", "seed")  # curve_data's arguments, in order: the page's data key


def settings(**changes) -> dict:
    return {**DEFAULTS, **changes}


def data_key(v: dict) -> tuple:
    return tuple(v[k] for k in DATA)


# ---------- the capacity sweep ----------
CAPACITY = [dict(seed=s) for s in SEEDS] + [dict(n=300), dict(noise=0.0), dict(n=20, seed=3)]


@pytest.fixture(scope="module")
def sweeps() -> dict:
    """The page's sweep (cached_sweep: capacity_sweep of the data key) of each setting."""
    return {str(c): capacity_sweep(*data_key(settings(**c))) for c in CAPACITY}


@pytest.mark.parametrize("changes", CAPACITY, ids=str)
def test_the_capacity_sentence_and_the_figures_regions_agree_with_the_averaged_curve(changes, sweeps):
    """gen.cap.shows.u: "falls to its lowest at degree {best} ({low}) and climbs to {high} by degree {peak}";
    .slight: "rises only a little past it"; .level: "no more than 10 %"; .rounding: "falls to rounding level". The
    figure marks over-fitting only where the curve rises past its lowest, under-fitting only below it. The intro's
    "training error can only fall as the degree rises" holds for the averaged curve too. Before, the page said
    "validation error falls, then rises again" and marked over-fitting at every setting, noise 0 included."""
    sweep = sweeps[str(changes)]
    r = claims.capacity_reading(sweep.degrees, sweep.val)
    assert r.best == sweep.best and r.low == sweep.val.min() and r.top == sweep.degrees[-1]
    past = sweep.val[sweep.degrees >= r.best]
    assert r.high == past.max() and r.peak >= r.best
    low, high = float(f"{r.low:.3g}"), float(f"{r.high:.3g}")  # as the sentence prints them
    expected = {"u": high >= claims.CLIMB * low, "slight": claims.RISE * low < high < claims.CLIMB * low,
                "level": high <= claims.RISE * low * 1.001, "rounding": low < claims.ROUNDING}
    assert expected[r.case]
    with language("en"):
        sweep_labels, fit_labels = labels.capacity(sweep, len(curve_data(*data_key(settings(**changes))).train), 3)
    fig = plots.sweep_figure(sweep.degrees, sweep.train, sweep.val, sweep.new, sweep.best, 3, sweep.interpolating,
                             sweep_labels)
    notes = [a.text for a in fig.layout.annotations]
    assert (EN["gen.cap.over"] in notes) == r.over == (r.case in ("u", "slight"))
    assert (EN["gen.cap.under"] in notes) == r.under == (r.best > sweep.degrees[0])
    assert np.all(np.diff(sweep.train) <= 1e-9 * sweep.train[0])  # nested least squares: never rises
    if sweep.interpolating is not None:  # "a polynomial of degree n−1 passes through all n training points"
        assert sweep.train[-1] < 1e-12


def test_the_sweep_shows_each_reading_somewhere(sweeps):
    """The teaching point (a clear U) shows at the defaults; many points give a shallow rise, no noise none."""
    cases = {str(c): claims.capacity_reading(sweeps[str(c)].degrees, sweeps[str(c)].val).case for c in CAPACITY}
    assert {cases[str(dict(seed=s))] for s in SEEDS} == {"u"}
    assert cases[str(dict(n=300))] == "slight" and cases[str(dict(noise=0.0))] == "rounding"
    at = open_lab(PAGE, "en", section="capacity")
    sweep = sweeps[str(dict(seed=0))]
    r = claims.capacity_reading(sweep.degrees, sweep.val)
    assert EN["gen.cap.shows.u"].format(best=r.best, low=f"{r.low:.3g}", peak=r.peak, high=f"{r.high:.3g}",
                                        top=r.top) in texts(at)
    assert not at.exception


# ---------- cross-validation against the single split ----------
CV = [dict(seed=s) for s in SEEDS] + [dict(n=300, seed=1), dict(degree=1, k=10, seed=2)]


@pytest.mark.parametrize("changes", CV, ids=str)
def test_the_cv_sentence_names_the_estimate_that_came_closer(changes):
    """gen.cv.closer.cv / .holdout / .level: which of the two metrics beside it is nearer the new-data MSE (the third
    metric), by how much: the numbers it prints are those differences."""
    v = settings(**changes)
    data = curve_data(*data_key(v))
    mean, _ = cv_summary(cross_validate(data, v["degree"], v["k"], v["seed"]))
    fit = fit_errors(data, v["degree"])
    r = claims.cv_reading(mean, fit.val, fit.new)
    shown = {name: float(f"{value:.3f}") for name, value in (("cv", mean), ("holdout", fit.val), ("new", fit.new))}
    cv_miss, holdout_miss = abs(shown["cv"] - shown["new"]), abs(shown["holdout"] - shown["new"])
    tolerance = 0.0015  # the metrics print three decimals
    assert abs(cv_miss - r.cv_miss) <= tolerance and abs(holdout_miss - r.holdout_miss) <= tolerance
    if r.case == "cv":
        assert r.cv_miss * claims.LEVEL < r.holdout_miss and cv_miss < holdout_miss
    elif r.case == "holdout":
        assert r.holdout_miss * claims.LEVEL < r.cv_miss and holdout_miss < cv_miss
    else:
        assert r.cv_miss <= claims.LEVEL * r.holdout_miss and r.holdout_miss <= claims.LEVEL * r.cv_miss


def test_the_split_section_says_which_estimate_came_closer():
    """Either can: over the defaults' five seeds the single split wins some, cross-validation others."""
    cases = set()
    for s in SEEDS:
        data = curve_data(*data_key(settings(seed=s)))
        mean, _ = cv_summary(cross_validate(data, 3, 5, s))
        fit = fit_errors(data, 3)
        cases.add(claims.cv_reading(mean, fit.val, fit.new).case)
    assert {"cv", "holdout"} <= cases
    data = curve_data(*data_key(settings()))
    mean, _ = cv_summary(cross_validate(data, 3, 5, 0))
    fit = fit_errors(data, 3)
    r = claims.cv_reading(mean, fit.val, fit.new)
    at = open_lab(PAGE, "en")
    assert EN[f"gen.cv.closer.{r.case}"].format(cv=f"{r.cv_miss:.3f}", holdout=f"{r.holdout_miss:.3f}") in texts(at)


# ---------- the live networks, paused ----------
CURVE_RUNS = [dict(seed=s) for s in SEEDS] + [dict(width=8), dict(lr=0.03, seed=2), dict(width=4, lr=0.001)]
PAUSES = (40, 150)  # epochs at which the page is paused


@pytest.fixture(scope="module")
def curve_snapshots() -> dict:
    """The capacity section's run of each setting (page: FitConfig(hidden, lr, patience, seed) on the data key's
    curve data) paused at each of PAUSES: (history, best epoch, best validation loss, the reading's text)."""
    out = {}
    for c in CURVE_RUNS:
        v = settings(**c)
        data = curve_data(*data_key(v))
        trainer = FitTrainer(FitConfig(hidden=(v["width"],) * 2, lr=v["lr"], patience=v["patience"],
                                       seed=v["seed"]), *data.train_val())
        for epoch in PAUSES:
            trainer.step(epoch - trainer.epoch)
            with language("en"):
                text = run_reading("cap", trainer, data)
            out[str(c), epoch] = (list(trainer.history), trainer.best_epoch, trainer.best_val, text)
    return out


@pytest.mark.parametrize("changes", CURVE_RUNS, ids=str)
def test_the_paused_reading_of_a_curve_run_agrees_with_its_losses(changes, curve_snapshots):
    """gen.curve.falling: "the validation loss is the lowest so far"; .not_yet: "has not yet gone below where it
    started"; .overfit: "was lowest at epoch {best} ... and is {val} now, while training loss fell from {best_train}
    to {train}: the network has been over-fitting since epoch {best}"; .both; .level: "within 10 % of its lowest".
    Its numbers are the live caption's (plots.loss_text)."""
    for epoch in PAUSES:
        history, best, best_val, text = curve_snapshots[str(changes), epoch]
        r = claims.curve_reading(history, best, best_val)
        vals = [h["val_loss"] for h in history]
        assert best_val == min(vals) and r.val == vals[-1] and r.epoch == history[-1]["epoch"]
        at_best = next(h for h in history if h["epoch"] == best)  # kept: the history is not thinned this early
        if r.case == "falling":
            assert best == r.epoch and r.val == best_val
        elif r.case == "not_yet":
            assert best == 0 < r.epoch
        elif r.case in ("overfit", "both"):
            assert r.val > claims.RISE * best_val
            assert (r.train < at_best["train_loss"]) == (r.case == "overfit")
        else:
            assert r.case == "level" and best < r.epoch and r.val <= claims.RISE * best_val
        loss = plots.loss_text
        assert text == EN[f"gen.curve.{r.case}"].format(epoch=r.epoch, best=best, best_val=loss(best_val),
                                                        val=loss(r.val), best_train=loss(at_best["train_loss"]),
                                                        train=loss(r.train))


def test_curve_runs_show_both_a_falling_and_a_rising_validation_loss(curve_snapshots):
    """The teaching point (validation rising while training falls) shows in some of the defaults' runs by epoch 150;
    at epoch 40 some are still improving, and a narrow slow network has not yet improved on its start: the sentence
    follows."""
    cases = {claims.curve_reading(*snap[:3]).case for snap in curve_snapshots.values()}
    assert {"falling", "overfit", "not_yet"} <= cases  # not_yet: a narrow net at a small step, 150 epochs in


NOISE_RUNS = ([(dict(seed=s), 100) for s in SEEDS] + [(dict(lr=0.03), 400), (dict(flip=0.0, seed=2), 60),
              (dict(dataset="xor", flip=0.3, lr=0.03, seed=1), 400)])


@pytest.mark.parametrize("changes,epochs", NOISE_RUNS, ids=str)
def test_the_label_noise_reading_counts_the_flipped_labels_the_network_answers(changes, epochs):
    """gen.noise.now.memorised: "answers the flipped label on {m} of the {f} flipped points: it has learnt them by
    heart"; .clean: "answers the true class on {rest} of the {f}"; .partly; .none. Its accuracies are the live
    caption's."""
    v = settings(**changes)
    points = noisy_points(v["dataset"], v["flip"], v["seed"])
    trainer = FitTrainer(FitConfig(task="binary", hidden=(v["width"],) * 2, lr=v["lr"], seed=v["seed"]),
                         *points.train_val())
    trainer.step(epochs)
    predicted = trainer.predict(points.X_train) > 0.5
    flipped = np.flatnonzero(points.flipped)
    m = sum(predicted[i] == bool(points.y_train[i]) for i in flipped)  # the flipped label answered, point by point
    r = claims.noise_reading(predicted.astype(int), points.y_train, points.flipped)
    assert (r.memorised, r.flipped) == (m, len(flipped)) == (m, round(v["flip"] * len(points.y_train)))
    share = m / max(len(flipped), 1)
    assert {"none": len(flipped) == 0, "memorised": share >= 0.8, "clean": len(flipped) and share <= 0.2,
            "partly": 0.2 < share < 0.8}[r.case]
    last = trainer.history[-1]
    with language("en"):
        text = run_reading("noise", trainer, points)
    assert text == EN[f"gen.noise.now.{r.case}"].format(epoch=epochs, m=m, f=len(flipped), rest=len(flipped) - m,
                                                        train=f"{last['train_acc']:.1%}", val=f"{last['val_acc']:.1%}")
    if changes.get("lr") == 0.03:  # the teaching point: a fast run memorises the flipped labels
        assert r.case == "memorised"
    elif changes.get("flip") != 0.0:  # 100 epochs in at the defaults: it follows the clean pattern
        assert r.case == "clean"


def test_the_divergence_message_names_both_of_its_causes():
    """gen.run.diverged: a loss or a weight past DIVERGED (10⁶) or infinite ends the run, not only an infinite loss."""
    assert DIVERGED == 1e6
    assert "10⁶" in EN["gen.run.diverged"] and "weight" in EN["gen.run.diverged"] and "权重" in ZH["gen.run.diverged"]


# ---------- leakage ----------
LEAKS = [("scaling", 10.0, s) for s in SEEDS] + [("group", 2, 0), ("time", 15, 4)]


@pytest.fixture(scope="module")
def leaks() -> dict:
    """The page's Leak of each (scenario, knob, seed) (cached_leak: leakage.leak)."""
    return {case: leakage.leak(*case) for case in LEAKS}


@pytest.mark.parametrize("case", LEAKS, ids=str)
def test_the_leak_summary_says_what_each_protocols_gap_shows(case, leaks):
    """gen.leak.protocol.flatters: "reports {reported}, new data get {new} ({gap} points): the report flatters";
    .close; .under; gen.leak.draws: "Means over {draws} independent draws". The time series averages 10 draws: the
    page said 5."""
    leak = leaks[case]
    with language("en"):
        names = labels.leak_bars(case[0])
        text = summary(leak, names)
    for name, s in (("leaky", leak.leaky), ("honest", leak.honest)):
        verdict = claims.protocol_verdict(s, leak.draws)
        gap = float(f"{s.gap * 100:+.0f}")  # the points the sentence prints
        if verdict == "flatters":
            assert gap >= 100 * claims.NOTICE and s.gap * np.sqrt(leak.draws) > claims.SIGNIFICANT * s.spread
        elif verdict == "under":
            assert gap <= -100 * claims.NOTICE
        else:
            assert abs(s.gap) < max(claims.NOTICE, claims.SIGNIFICANT * s.spread / np.sqrt(leak.draws))
        assert EN[f"gen.leak.protocol.{verdict}"].format(name=names[name], reported=f"{s.reported:.0%}",
                                                         new=f"{s.new:.0%}",
                                                         gap=f"{s.gap * 100:+.0f} ± {s.spread * 100:.0f}") in text
    draws = {"scaling": leakage.REPEATS, "group": leakage.REPEATS, "time": 2 * leakage.REPEATS}[case[0]]
    assert leak.draws == draws and EN["gen.leak.draws"].format(draws=draws) in text


def test_the_leak_verdicts_include_a_flattering_honest_report(leaks):
    """The leaky report flatters at every tested setting; at the defaults the honest one is close. But on the
    time series' seed 4 the honest report flatters too (+9 ± 9 points over 10 draws): the page says so. No fixed
    sentence could: the scaling text used to promise that the honest protocol's test score "predicts the new one"."""
    for leak in leaks.values():
        assert claims.protocol_verdict(leak.leaky, leak.draws) == "flatters"
    assert {claims.protocol_verdict(leaks[("scaling", 10.0, s)].honest, 5) for s in SEEDS} == {"close"}
    assert claims.protocol_verdict(leaks[("time", 15, 4)].honest, 10) == "flatters"


@pytest.mark.parametrize("case", LEAKS, ids=str)
def test_what_makes_the_leak_is_measured_on_the_drawn_example(case, leaks):
    """gen.leak.scaling.draw: the leaky scaler divides A by {a}× the honest one's divisor, B by {b}×; group.draw: the
    share of the people tested who also have training records; time.draw: the share of test days with a training
    day beside them, and of those neighbours in the same regime. Recomputed here another way."""
    scenario, knob, _ = case
    example = leaks[case].example
    got = claims.leak_mechanism(scenario, example)
    if scenario == "scaling":
        train, pool = example["train"], np.concatenate([example["train"], example["test"]])
        a, b = (np.sqrt(np.mean((pool[:, j] - pool[:, j].mean()) ** 2) / np.mean((train[:, j] - train[:, j].mean())
                                                                                  ** 2)) for j in (0, 1))
        assert got == pytest.approx({"a": a, "b": b})
        assert a > 1.5 and abs(b - 1) < 0.2  # the test hospital's noise sits in A only
    elif scenario == "group":
        people = [row for row in example["random_test"] if row.any()]
        share = sum(not row.all() for row in people) / len(people)
        assert got == pytest.approx({"both": share})
        assert not any(row.any() and not row.all() for row in example["group_test"])  # "the split by person has none"
        assert share > 0.5  # two records a person, a quarter of the records tested: most tested people on both sides
    else:
        y, test = example["y"], example["shuffled_test"]
        near, pairs = 0, []
        for d in range(1, len(y) - 1):
            if test[d]:
                beside = [n for n in (d - 1, d + 1) if not test[n]]
                near += bool(beside)
                pairs += [y[n] == y[d] for n in beside]
        assert got == pytest.approx({"near": near / test[1:-1].sum(), "same": np.mean(pairs)})
        assert got["near"] < 1  # not "every test day" has a training day just before and just after it


# ---------- nothing read at the cursor's step while a run plays ----------
def test_the_paused_reading_waits_while_the_run_plays():
    """A run's reading is of the cursor's model at this page run: while the view plays on its own channel it would
    describe an epoch the view has left, so it is shown paused (or stopped) only."""
    readings = {EN[f"gen.curve.{case}"].split("{")[0] for case in ("falling", "not_yet", "overfit", "both", "level")}
    at = open_lab(PAGE, "en", section="capacity")
    at.button(key="gen.cap.step").click().run()  # 5 epochs (the default speed)
    assert any(r in texts(at) for r in readings) and not at.exception
    at.button(key="gen.cap.play").click().run()
    assert at.session_state["gen.cap.cursor"].playing
    assert not any(r in texts(at) for r in readings)
    at.button(key="gen.cap.play").click().run()  # Pause: the reading again, for the epoch now on screen
    assert any(r in texts(at) for r in readings) and not at.exception
