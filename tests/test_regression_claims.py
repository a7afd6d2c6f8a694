"""Issue 41 for the regression lab: every sentence that says what a run or a computation shows agrees with the
numbers beside it, checked on the lab's own engine (sim.fitting.regression, as the page builds its runs) at its
defaults over 5 seeds and at other settings: the learning-rate advice against what gradient descent then does, why a
stopped run stopped, absolute error's jitter, the outliers' pull on the two losses, the temperature rule against
the fit, the underdetermined fit, the worked example; and nothing read at the cursor's step is drawn below the live
view while it plays (the residuals, the path on the loss surface)."""
import json

import numpy as np
import pytest

from apptools import live_advance, open_lab, texts
from labs.regression.live import divergence_text
from labs.regression.schema import SCHEMA
from labs.regression.views import num
from sim.fitting import claims
from sim.fitting import regression as reg
from sim.fitting.regression_data import NOTES_EXAMPLE, make_dataset
from ui.i18n import catalogue, language

PAGE = "labs/regression/page.py"
EN, ZH = catalogue("en"), catalogue("zh")
DEFAULTS = {p.name: p.default for p in SCHEMA}
SEEDS = range(5)
DATA = ("dataset", "n", "noise", "seed", "outliers", "outlier_size")  # make_dataset's arguments, in order


def settings(**changes) -> dict:
    return {**DEFAULTS, **changes}


def data_of(v: dict):
    return make_dataset(*(v[k] for k in DATA))


def model_of(v: dict, data) -> reg.ModelConfig:
    """The page's model (labs/regression/page.py model_controls): δ in the data set's unit."""
    return reg.ModelConfig(degree=v["degree"], standardize=v["standardize"], loss=v["loss"],
                           delta=v["delta"] * data.scale)


def gd_run(**changes) -> reg.GDRun:
    """The page's gradient-descent run of these settings (page.gd_config), at w = b = 0."""
    v = settings(**changes)
    data = data_of(v)
    batch = None if v["batch_size"] == "full" else v["batch_size"]
    return reg.GDRun(data.x, data.y, reg.GDConfig(model=model_of(v, data), lr=v["lr"], batch_size=batch,
                                                  seed=v["seed"]))


# ---------- the learning-rate advice against the run ----------
ADVICE = ([dict(seed=s) for s in SEEDS]  # the defaults: η = 0.1 on the line, "safe"
          + [dict(dataset="study_score", lr=0.01), dict(degree=3, standardize=True, seed=2)]
          + [dict(lr=0.5, seed=s) for s in SEEDS] + [dict(lr=0.01, dataset="temperature"), dict(lr=0.03,
                                                                                              dataset="study_score")]
          + [dict(lr=1.0, seed=0), dict(dataset="area_price", lr=0.001), dict(degree=12, lr=0.0001, seed=1)]
          + [dict(loss="huber", seed=s) for s in SEEDS]
          + [dict(loss="huber", dataset="temperature", lr=0.003), dict(loss="huber", outliers=3, lr=0.2)]
          + [dict(loss="huber", lr=1.0, seed=s) for s in SEEDS]
          + [dict(loss="huber", lr=3.0, dataset="temperature", seed=1), dict(loss="huber", dataset="area_price",
                                                                           lr=0.001)]
          # mini-batches of one point: "safe" and "still converges" for full batches, yet these runs diverge
          + [dict(batch_size=1, degree=3, standardize=True, lr=0.3, seed=s) for s in range(3)]
          + [dict(batch_size=1, lr=0.5, seed=0), dict(batch_size=4, seed=1)])


def top_direction(run: reg.GDRun) -> np.ndarray:
    """The eigenvector of the squared loss's Hessian (1/n)[X 1]ᵀ[X 1] with the largest eigenvalue λ."""
    A = np.hstack([run.X, np.ones((len(run.X), 1))])
    return np.linalg.eigh(A.T @ A / len(A))[1][:, -1]


@pytest.mark.parametrize("changes", ADVICE, ids=str)
def test_the_learning_rate_advice_forecasts_only_what_the_run_then_does(changes):
    """reg.lr.ok: "safe" (it converges, never turning back along the steepest direction); reg.lr.zigzag: "the path
    zig-zags ... It still converges"; reg.lr.diverge: "gradient descent diverges"; reg.lr.huber_ok: "no full-batch
    step reverses the one before it". Huber's large steps and mini-batches get the limits and an invitation, never a
    forecast: before, η = 1 on Huber's loss read "diverges" (it does not) and a mini-batch of one at η = 0.3 read
    "safe" (it diverges)."""
    run = gd_run(**changes)
    kind = reg.lr_advice(run).kind
    start = run.path_array()[0]
    run.step(300)
    path = run.path_array()
    if kind in ("ok", "zigzag"):
        w, b = reg.least_squares(run.X, run.y)
        along = (path - np.append(w, b)) @ top_direction(run)  # the error along the steepest direction
        along = along[np.abs(along) > 1e-9 * np.abs(along[0])]  # (past rounding)
        flips = np.sign(along[1:]) != np.sign(along[:-1])
        assert flips.all() if kind == "zigzag" else not flips.any()
        # it converges: every epoch lowers the loss, and the error along that direction shrinks
        assert not run.diverged and np.all(np.diff(run.history) <= 1e-12 * run.start_loss)
        assert abs(along[-1]) < 1e-3 * abs(along[0])
    elif kind == "diverge":
        assert run.diverged
    elif kind == "huber_ok":
        steps = np.diff(path, axis=0)
        assert not run.diverged and (np.sum(steps[1:] * steps[:-1], axis=1) >= -1e-12).all()
    else:  # "huber_large", "minibatch": the limits and "press Play to see what this run does"
        assert kind in ("huber_large", "minibatch")
        for cat in (EN, ZH):
            assert "{zigzag}" in cat[f"reg.lr.{kind}"] and "{diverge}" in cat[f"reg.lr.{kind}"]
        assert "Play" in EN[f"reg.lr.{kind}"] and "播放" in ZH[f"reg.lr.{kind}"]
        assert "diverges." not in EN[f"reg.lr.{kind}"] and "safe" not in EN[f"reg.lr.{kind}"]
    assert np.array_equal(start, np.zeros_like(start))


def test_the_invitations_cover_runs_that_do_either():
    """Huber at η ≥ 1/λ and mini-batch runs include ones that diverge and ones that do not: no fixed forecast fits."""
    outcomes = {}
    for changes in ADVICE:
        run = gd_run(**changes)
        kind = reg.lr_advice(run).kind
        run.step(300)
        outcomes.setdefault(kind, set()).add(run.diverged)
    assert outcomes["minibatch"] == {True, False} and outcomes["huber_large"] == {False}
    assert outcomes["ok"] == outcomes["zigzag"] == outcomes["huber_ok"] == {False} and outcomes["diverge"] == {True}
    kinds = [reg.lr_advice(gd_run(**changes)).kind for changes in ADVICE]
    assert all(kinds.count(kind) >= 7 for kind in ("ok", "zigzag", "huber_ok", "huber_large"))  # 5 seeds and 2 more
    assert all(kinds.count(kind) >= 3 for kind in ("diverge", "minibatch"))


@pytest.mark.parametrize("changes", [dict(seed=s) for s in SEEDS] + [dict(dataset="sine", degree=3,
                         standardize=True), dict(dataset="quadratic", degree=2, standardize=True, seed=2)], ids=str)
def test_absolute_error_keeps_jittering_by_less_with_a_smaller_step(changes):
    """reg.lr.mae: "the steps do not shrink as the path nears the minimum: with a fixed η it keeps jittering around
    it, by less with a smaller η" (squared error's steps do shrink there)."""
    def late_steps(run: reg.GDRun) -> tuple[float, float]:
        """Mean step length over epochs 400-500 and over 500-600."""
        run.step(600)
        steps = np.linalg.norm(np.diff(run.path_array(), axis=0), axis=1)
        return steps[400:500].mean(), steps[500:].mean()

    jitter = {}
    for lr in (0.1, 0.03, 0.01):
        run = gd_run(loss="mae", lr=lr, **changes)
        assert reg.lr_advice(run).kind == "mae"
        before, jitter[lr] = late_steps(run)
        assert jitter[lr] > 0.8 * before  # not shrinking
    assert jitter[0.1] > jitter[0.03] > jitter[0.01] > 0
    before, after = late_steps(gd_run(lr=0.1, **changes))
    assert after <= 0.7 * before  # squared error's steps shrink near its minimum (to nothing, once it is there)


# ---------- why a run stopped ----------
STOPPED = ([dict(lr=1.0, seed=s) for s in SEEDS] + [dict(dataset="temperature", lr=0.03),
           dict(dataset="study_score", lr=0.1, batch_size=4, seed=3)]
           + [dict(loss="huber", degree=12, lr=0.0001, batch_size=1, seed=s) for s in (0, 1)]
           + [dict(loss="mae", dataset="area_price", degree=5, lr=0.0001)])


@pytest.mark.parametrize("changes", STOPPED, ids=str)
def test_a_stopped_run_says_why_in_the_words_its_numbers_allow(changes):
    """reg.diverged (squared error): "the loss grew from {start} to {loss} ... each step overshoots by more than the
    last": the loss rose over the last epochs. reg.diverged_capped (Huber, absolute error): "the loss reached
    {loss}, more than a million times where it started ... long enough to land far from the minimum"."""
    run = gd_run(**changes)
    run.step(300)
    assert run.diverged
    case = claims.divergence_case(run)
    loss, start = run.history[-1], run.start_loss
    if changes.get("loss", "mse") == "mse":
        assert case == "grew" and loss > start and np.all(np.diff(run.history[-3:]) > 0)
    else:
        assert case == "capped" and loss > reg.DIVERGED * start
        m = run.config.model
        best = np.append(*reg.robust_fit(run.X, run.y, m.loss, m.delta))
        assert np.linalg.norm(run.path_array()[-1] - best) > np.linalg.norm(best)  # farther than w = b = 0 was
    key = {"grew": "reg.diverged", "capped": "reg.diverged_capped"}[case]
    with language("en"):
        text = divergence_text(run)
    assert text == EN[key].format(epoch=run.epoch, loss=num(loss), start=num(start), lr=num(run.config.lr),
                                  loss_name=EN[f"reg.loss.{run.config.model.loss}"])


def test_a_first_step_that_overflows_does_not_claim_the_loss_grew():
    """Inputs near 1e160: the first step's loss is infinite, so no finite loss above the start is left. The page said
    "the loss grew from 0.5 to 0.5"; it says the next step's loss overflowed (and with inputs whose squares
    overflow at the start, the overflow message)."""
    x = np.linspace(-6, 6, 12)[:, None] * 1e160
    run = reg.GDRun(x, np.arange(12.0), reg.GDConfig(lr=0.1))
    run.step(5)
    assert run.diverged and run.epoch == 0 and run.history[-1] == run.start_loss
    assert claims.divergence_case(run) == "overflowed"
    with np.errstate(over="ignore"):
        squares = x ** 2
    assert claims.divergence_case(reg.GDRun(squares, np.arange(12.0), reg.GDConfig(lr=0.1))) == "overflow"


# ---------- the outliers, the temperature rule, the underdetermined fit, the worked example ----------
OUTLIERS = ([dict(outliers=3, seed=s) for s in SEEDS] + [dict(outliers=2, outlier_size=1.0, delta=5.0),
            dict(dataset="quadratic", degree=2, outliers=5, outlier_size=-8.0, seed=4)])


def outlier_sentence(changes: dict) -> tuple[str, float, float]:
    v = settings(**changes)
    data = data_of(v)
    config = model_of(v, data)
    mse, huber = (reg.outlier_fits(data, config, loss).shift for loss in ("mse", "huber"))
    return claims.outlier_verdict(mse, huber), mse, huber


@pytest.mark.parametrize("changes", OUTLIERS, ids=str)
def test_the_outliers_sentence_agrees_with_the_two_shifts_shown(changes):
    """reg.outliers_compare.less: "the outliers move the Huber fit less than the squared-error fit: {huber} against
    {mse}" (the two numbers each panel prints); .level: about equally; .more: Huber more."""
    verdict, mse, huber = outlier_sentence(changes)
    shown_mse, shown_huber = float(num(mse)), float(num(huber))
    if verdict == "less":
        assert shown_huber < shown_mse / claims.LEVEL
    elif verdict == "more":
        assert shown_huber > shown_mse * claims.LEVEL
    else:
        assert shown_mse / claims.LEVEL <= shown_huber <= shown_mse * claims.LEVEL


def test_outliers_within_huber_delta_move_both_fits_alike():
    """The teaching point shows at the defaults with outliers (Huber is pulled less), not when δ exceeds the
    outliers' size: there Huber treats them as squared error does, and the page says so."""
    assert {outlier_sentence(dict(outliers=3, seed=s))[0] for s in SEEDS} == {"less"}
    assert outlier_sentence(dict(outliers=2, outlier_size=1.0, delta=5.0))[0] == "level"
    at = open_lab(PAGE, "en", panel="outliers", outliers="2", outlier_size="1", delta="5")
    verdict, mse, huber = outlier_sentence(dict(outliers=2, outlier_size=1.0, delta=5.0))
    assert EN[f"reg.outliers_compare.{verdict}"].format(mse=num(mse), huber=num(huber)) in texts(at)
    assert not at.exception


RULE = ([dict(dataset="temperature", seed=s) for s in SEEDS] + [dict(dataset="temperature", loss="mae", seed=2),
        dict(dataset="temperature", n=200, noise=1.0, loss="huber", delta=0.1)])


@pytest.mark.parametrize("changes", RULE, ids=str)
def test_the_temperature_rule_sentence_agrees_with_both_rmses(changes):
    """reg.temperature_rule.better / .worse / .level: the fit's RMSE against the person's rule, both printed. Least
    squares minimises the squared error over a family that holds the rule: it never does worse; gradient descent's
    first epochs do."""
    v = settings(**changes)
    data = data_of(v)
    rule = reg.rule_scores(data)["rmse"]
    fits = {"exact": reg.fit(data.x, data.y, model_of(v, data))}
    for epochs in (1, 3):
        run = gd_run(**changes, lr=0.001)
        run.step(epochs)
        fits[epochs] = run.as_fit()
    for name, model in fits.items():
        fit = reg.scores(data, model)["rmse"]
        verdict = claims.rule_verdict(rule, fit)
        shown_rule, shown_fit = float(num(rule)), float(num(fit))
        if verdict == "better":
            assert shown_fit < shown_rule
        elif verdict == "worse":
            assert shown_fit > shown_rule
        else:
            assert abs(shown_fit - shown_rule) <= 0.01 * shown_rule
        if name == "exact" and v["loss"] == "mse":
            assert verdict == "better"
        if name == 1:
            assert verdict == "worse"  # one epoch from w = 0 at a small η: nowhere near


@pytest.mark.parametrize("changes", [dict(n=5, degree=12, seed=s) for s in SEEDS]
                         + [dict(n=3, degree=4, dataset="quadratic"), dict(n=4, degree=3, dataset="temperature")],
                         ids=str)
def test_an_underdetermined_fit_passes_through_every_point(changes):
    """reg.issue.underdetermined: "{n} points but {k} parameters: infinitely many curves pass through every point,
    and the one with the smallest weights is shown"."""
    v = settings(**changes)
    data = data_of(v)
    model = reg.fit(data.x, data.y, model_of(v, data))
    (code, params), *_ = model.issues
    assert code == "underdetermined" and params == {"n": v["n"], "k": reg.parameter_count(data.x, v["degree"])}
    assert np.abs(model.predict(data.x) - data.y).max() < 1e-6 * data.scale


def test_the_worked_example_moves_both_predictions_up_towards_their_targets():
    """reg.step_example_done: "After one update w = {w} and b = {b}, the values the notes print; both predictions
    moved up, towards their targets"."""
    x, y, lr = NOTES_EXAMPLE
    s = reg.explain_step([0.0], 0.0, x, y, lr)
    after = x[:, 0] * s.w_new[0] + s.b_new
    assert (num(s.w_new[0]), num(s.b_new)) == ("0.4", "0.25")
    assert np.all(after > s.y_hat) and np.all(after < y)


# ---------- nothing read at the cursor's step while the run plays ----------
def shown(at, key: str) -> bool:
    try:
        return at.get_by_key(key) is not None
    except KeyError:
        return False


def trace_names(at, key: str) -> list:
    return [trace.get("name") for trace in json.loads(at.get_by_key(key).proto.spec)["data"]]


def test_the_residuals_and_the_path_below_wait_while_the_run_plays():
    """While the live view plays on its own channel the page is not rerun: residuals or a path computed from the
    cursor's model at this page run would stay below later epochs' frames. They are drawn paused only."""
    at = open_lab(PAGE, "en", solver="gd", lr="0.3")
    live_advance(at, "reg", 5)
    at.run()
    assert shown(at, "reg.resid_fig") and EN["reg.playing"] not in texts(at)
    at.button(key="reg.play").click().run()
    assert at.session_state["reg.cursor"].playing and not at.exception
    assert not shown(at, "reg.resid_fig") and EN["reg.playing"] in texts(at) and not at.metric
    at.segmented_control(key="reg.panel").set_value("surface").run()
    assert EN["reg.plot.path"] not in trace_names(at, "reg.surface_fig") and EN["reg.surface_playing"] in texts(at)
    at.button(key="reg.play").click().run()  # Pause: the path again, for the epoch now on screen
    assert EN["reg.plot.path"] in trace_names(at, "reg.surface_fig") and EN["reg.surface_playing"] not in texts(at)
    assert at.metric and not at.exception


def test_features_that_overflow_say_so_instead_of_blaming_the_step():
    """Squares of inputs near 1e200 overflow before any update: the step view said "with η = 0.1 every update
    overshoots by more than the last", and the live run "the loss grew from — to —". Both say the numbers overflow."""
    at = open_lab(PAGE, "en", solver="gd", panel="step", step_data="current", degree="2")
    huge = "x,y\n" + "\n".join(f"{i}e200,{i}" for i in range(-6, 6))
    at.file_uploader(key="reg.file").upload("h.csv", huge.encode(), "text/csv").run()
    shown = texts(at)
    assert EN["reg.issue.overflow"] in shown and EN["reg.step_overflow"].split("{")[0] not in shown
    assert EN["reg.diverged"].split("{")[0] not in shown and not at.exception
