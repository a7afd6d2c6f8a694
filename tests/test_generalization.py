"""Generalisation engine: splits, K folds, the degree sweep, the live network, leakage, and their pictures."""
import json

import numpy as np
import pytest
import torch
from sklearn.model_selection import KFold
from sklearn.neighbors import KNeighborsClassifier

from sim.fitting import leakage
from sim.fitting.fit import FitConfig, FitTrainer, l2_penalty
from sim.fitting.generalization import (
    GRID,
    LIVE_CURVE_POINTS,
    NOISE_CELLS,
    CurveData,
    FitRun,
    capacity_sweep,
    cross_validate,
    curve_data,
    cv_summary,
    degree_sweep,
    fit_errors,
    flip_labels,
    kfold_indices,
    mse,
    noisy_points,
    odd_test_share,
    poly_fit,
    sweep_draw_seeds,
    three_way_split,
    true_curve,
    weight_histogram,
)
from sim.plots import generalization as plots


# ---------- splits and folds ----------
@pytest.mark.parametrize("n,k", [(10, 2), (10, 3), (17, 5), (40, 10), (7, 7)])
def test_kfold_validation_folds_are_disjoint_and_cover_every_index_once(n, k):
    folds = kfold_indices(n, k, seed=3)
    assert len(folds) == k
    val = np.concatenate([v for _, v in folds])
    assert sorted(val.tolist()) == list(range(n))  # each index validates exactly once
    for tr, va in folds:
        assert set(tr).isdisjoint(va) and len(tr) + len(va) == n
    # the same fold sizes as scikit-learn's KFold
    assert sorted(len(v) for _, v in folds) == sorted(len(v) for _, v in KFold(k).split(np.zeros(n)))


def test_kfold_is_seeded_and_rejects_impossible_k():
    a, b = kfold_indices(20, 4, 1), kfold_indices(20, 4, 1)
    assert all(np.array_equal(x[1], y[1]) for x, y in zip(a, b, strict=True))
    assert not all(np.array_equal(x[1], y[1]) for x, y in zip(a, kfold_indices(20, 4, 2), strict=True))
    for n, k in ((5, 1), (5, 6)):
        with pytest.raises(ValueError):
            kfold_indices(n, k, 0)


def test_three_way_split_uses_the_articles_example_shares():
    tr, va, te = three_way_split(100, 0.75, 0.10, seed=0)  # the article's split(data, ratio=[0.75, 0.10, 0.15])
    assert (len(tr), len(va), len(te)) == (75, 10, 15)
    assert sorted(np.concatenate([tr, va, te]).tolist()) == list(range(100))


@pytest.mark.parametrize("train,val", [(0.8, 0.2), (0.9, 0.2), (0.0, 0.5)])
def test_three_way_split_refuses_an_empty_part(train, val):
    with pytest.raises(ValueError):
        three_way_split(40, train, val, 0)


def test_curve_data_keeps_test_and_new_data_apart():
    data = curve_data(40, 0.5, 0.6, 0.2, 0)
    assert (len(data.train), len(data.val), len(data.test)) == (24, 8, 8)
    assert sorted(data.dev.tolist()) == sorted(np.concatenate([data.train, data.val]).tolist())
    assert not np.isin(data.x_new, data.x).any()


# ---------- polynomials, sweep, cross-validation ----------
def test_poly_fit_matches_numpy_polyfit():
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, 30)
    y = np.sin(x) + rng.normal(0, 0.1, 30)
    grid = np.linspace(-3, 3, 50)
    for degree in (1, 3, 7):
        np.testing.assert_allclose(poly_fit(x, y, degree)(grid), np.polyval(np.polyfit(x, y, degree), grid),
                                   rtol=1e-6, atol=1e-8)


def test_sweep_training_error_falls_and_degree_n_minus_1_interpolates():
    data = curve_data(20, 0.5, 0.6, 0.2, 1)  # 12 training points
    sweep = degree_sweep(data)
    assert sweep.degrees[-1] == sweep.interpolating == 11
    # nested least-squares models: a higher degree can only fit the training points better
    assert np.all(np.diff(sweep.train) <= 1e-9)
    assert sweep.train[-1] < 1e-12  # the seeds' example: n points, a degree n-1 polynomial through all of them
    assert sweep.best == sweep.degrees[np.argmin(sweep.val)]
    assert sweep.val[-1] > sweep.val.min() * 3  # chasing the noise costs on validation


def test_capacity_sweep_at_the_page_defaults_is_the_notes_u_shape():
    # the notes: training error keeps falling with capacity; validation error falls, then rises
    from labs.generalization.schema import SCHEMA

    d = {p.name: p.default for p in SCHEMA}
    sweep = capacity_sweep(d["n"], d["noise"], d["train"], d["val"], d["seed"])
    m = int(np.argmin(sweep.val))
    assert sweep.best == sweep.degrees[m] and 1 < sweep.best < sweep.degrees[-1]  # an interior degree
    assert np.all(np.diff(sweep.val[:m + 1]) < 0)  # falls to it (degree 2 beats degree 1)...
    assert np.all(np.diff(sweep.val[m:]) > 0)  # ...and rises after it, all the way
    assert sweep.val[-1] > 3 * sweep.val[m]
    assert np.all(np.diff(sweep.train) <= 1e-9)  # training error never rises with the degree
    assert sweep.draws > 1 and sweep.val_low is not None and np.all(sweep.val_low <= sweep.val_high)


def test_capacity_sweep_is_the_log_mean_of_each_draws_polyfit_errors():
    n, noise, train, val, seed, draws = 40, 0.5, 0.6, 0.2, 3, 6
    sweep = capacity_sweep(n, noise, train, val, seed, draws=draws)
    seeds = sweep_draw_seeds(seed, draws)
    assert seeds[0] == seed and len(set(seeds)) == draws
    errors = {"train": [], "val": []}
    for s in seeds:
        data = curve_data(n, noise, train, val, s)
        x, y, xv, yv = data.train_val()
        rows = [(np.mean((np.polyval(c, x) - y) ** 2), np.mean((np.polyval(c, xv) - yv) ** 2))
                for c in (np.polyfit(x, y, deg) for deg in range(1, 7))]
        errors["train"].append([r[0] for r in rows])
        errors["val"].append([r[1] for r in rows])
    for part, values in errors.items():
        values = np.array(values)  # (draws, 6)
        np.testing.assert_allclose(getattr(sweep, part)[:6], np.exp(np.log(values).mean(axis=0)), rtol=1e-6)
    np.testing.assert_allclose(sweep.val_low[:6], np.percentile(errors["val"], 25, axis=0), rtol=1e-6)
    np.testing.assert_allclose(sweep.val_high[:6], np.percentile(errors["val"], 75, axis=0), rtol=1e-6)
    np.testing.assert_allclose(sweep.this_val[:6], errors["val"][0], rtol=1e-6)  # the data set shown
    one = capacity_sweep(n, noise, train, val, seed, draws=1)  # one draw: the shown data set's own sweep
    assert one.draws == 1 and np.array_equal(one.val, degree_sweep(curve_data(n, noise, train, val, seed)).val)


def test_true_curve_is_a_shifted_sine_so_even_powers_help():
    x = np.linspace(-3, 3, 7)
    np.testing.assert_allclose(true_curve(x), 2 * np.sin(np.pi * x / 3 + 0.7))
    assert np.abs(true_curve(x) + true_curve(-x)).max() > 1  # not odd: x² has something to fit


def test_no_choice_and_no_score_but_the_tests_looks_at_the_test_part():
    # the notes: tune on the validation set; the test set is used once, at the end
    data = curve_data(40, 0.5, 0.6, 0.2, 4)
    y = data.y.copy()
    y[data.test] += 100.0  # wreck the test points: nothing chosen or shown elsewhere may move
    wrecked = CurveData(data.x, y, data.train, data.val, data.test, data.x_new, data.y_new)
    a, b = degree_sweep(data), degree_sweep(wrecked)
    assert a.best == b.best and np.array_equal(a.val, b.val) and np.array_equal(a.train, b.train)
    assert [f.score for f in cross_validate(data, 3, 5, 4)] == [f.score for f in cross_validate(wrecked, 3, 5, 4)]
    assert fit_errors(data, 5).val == fit_errors(wrecked, 5).val
    # what a network sees
    assert all(np.array_equal(u, v) for u, v in zip(data.train_val(), wrecked.train_val(), strict=True))


def test_sweep_figure_shades_the_draws_spread_draws_this_data_set_and_caps_the_axis():
    data = curve_data(40, 0.5, 0.6, 0.2, 0)
    sweep = capacity_sweep(40, 0.5, 0.6, 0.2, 0, draws=8)
    words = {k: k for k in ("train", "val", "test", "truth", "x", "y", "fit", "degree", "mse", "new", "best",
                            "chosen", "under", "over", "interpolating", "band", "this_val")}
    swept, _ = plots.capacity_figures(data, sweep, fit_errors(data, 3), 3, words, words)
    traces = {tr.name: tr for tr in swept.data}
    assert list(traces["val"].y) == pytest.approx(sweep.val)
    assert list(traces["band"].y) == pytest.approx(np.concatenate([sweep.val_high, sweep.val_low[::-1]]))
    assert list(traces["this_val"].y) == pytest.approx(sweep.this_val)
    top = swept.layout.yaxis.range[1]
    assert top == pytest.approx(np.log10(1e3 * sweep.val.min()) + 0.2) and top < np.log10(sweep.val.max())
    single, _ = plots.capacity_figures(data, degree_sweep(data), fit_errors(data, 3), 3, words, words)
    assert {tr.name for tr in single.data} == {"train", "val", "new"}  # one draw: no band


def test_sweep_of_many_points_stops_at_max_degree():
    sweep = degree_sweep(curve_data(200, 0.3, 0.8, 0.1, 0), max_degree=12)
    assert sweep.degrees[-1] == 12 and sweep.interpolating is None
    assert sweep.new.argmin() + 1 in range(3, 9)  # the sine wants a middle degree, not 1, not 12


def test_cross_validation_scores_every_dev_point_once_with_independent_fits():
    data = curve_data(40, 0.5, 0.6, 0.2, 2)
    folds = cross_validate(data, degree=3, k=4, seed=2)
    validated = np.concatenate([f.val for f in folds])
    assert sorted(validated.tolist()) == sorted(data.dev.tolist())
    assert not np.isin(data.test, validated).any() and not any(np.isin(data.test, f.train).any() for f in folds)
    for f in folds:
        ref = np.polyval(np.polyfit(data.x[f.train], data.y[f.train], 3), data.x[f.val])
        assert f.score == pytest.approx(np.mean((ref - data.y[f.val]) ** 2), rel=1e-6)


def test_flip_labels_flips_exactly_the_share_asked():
    y = np.arange(200) % 2
    noisy, flipped = flip_labels(y, 0.25, 0)
    assert flipped.sum() == 50 and np.all(noisy[flipped] == 1 - y[flipped]) and np.all(noisy[~flipped] == y[~flipped])
    assert flip_labels(y, 0.0, 0)[1].sum() == 0
    with pytest.raises(ValueError):
        flip_labels(y, 1.5, 0)


# ---------- the live network ----------
def curve_run(config: FitConfig, data: CurveData | None = None) -> FitTrainer:
    data = data or curve_data(40, 0.5, 0.6, 0.2, 0)
    return FitTrainer(config, data.x[data.train], data.y[data.train], data.x[data.val], data.y[data.val])


def test_first_update_is_torch_adam_on_the_l2_penalised_loss():
    run = curve_run(FitConfig(hidden=(8, 8), lr=0.01, l2=0.01))
    params = [p.detach().clone().requires_grad_() for p in run._params]
    ref = torch.optim.Adam(params, lr=0.01)
    x, t = run._x_all[:run.n_train], run._t_all[:run.n_train]
    (w1, w2, w3, b1, b2, b3) = params
    h = torch.tanh(torch.tanh(x @ w1 + b1) @ w2 + b2)
    loss = torch.nn.functional.mse_loss(h @ w3 + b3, t) + 0.01 * sum((w * w).sum() for w in (w1, w2, w3))
    loss.backward()
    ref.step()
    run.step(1)
    for mine, theirs in zip(run._params, params, strict=True):
        torch.testing.assert_close(mine.detach(), theirs.detach())


def test_l2_penalty_is_lambda_times_the_sum_of_squares_by_hand():
    w1 = torch.tensor([[1.0, -2.0], [0.5, 0.0]], requires_grad=True)
    w2 = torch.tensor([[3.0]], requires_grad=True)
    penalty = l2_penalty([w1, w2], 0.1)
    assert penalty.item() == pytest.approx(0.1 * (1 + 4 + 0.25 + 0 + 9))  # no ½: 1.425
    penalty.backward()
    torch.testing.assert_close(w1.grad, torch.tensor([[0.2, -0.4], [0.1, 0.0]]))  # 2λw
    torch.testing.assert_close(w2.grad, torch.tensor([[0.6]]))


def test_training_objective_is_mse_plus_lambda_sum_w2_on_weights_only():
    lam = 0.01
    runs = [curve_run(FitConfig(hidden=(8, 8), l2=l2)) for l2 in (0.0, lam)]  # the same seed: the same weights
    objective = [r.objective() for r in runs]
    w = runs[1].weights().astype(np.float64)
    assert objective[1].item() - objective[0].item() == pytest.approx(lam * np.sum(w ** 2), rel=1e-5)
    x, t = runs[0]._x_all[:runs[0].n_train], runs[0]._t_all[:runs[0].n_train]
    assert objective[0].item() == pytest.approx(torch.mean((runs[0].model(x) - t) ** 2).item(), rel=1e-6)  # mean, no ½
    grads = [torch.autograd.grad(o, r._params) for o, r in zip(objective, runs, strict=True)]
    n_weights = len(runs[1]._weights)
    for i, (g0, g1, p) in enumerate(zip(*grads, runs[1]._params, strict=True)):
        expected = 2 * lam * p.detach() if i < n_weights else torch.zeros_like(p)  # biases are not penalised
        torch.testing.assert_close(g1 - g0, expected, rtol=1e-4, atol=1e-7)


def test_early_stopping_restores_the_best_checkpoint():
    run = curve_run(FitConfig(patience=30))
    run.step(2000)
    assert run.stopped and run.finished
    assert run.epoch == run.best_epoch + 30
    best = next(h for h in run.history if h["epoch"] == run.best_epoch)
    assert min(h["val_loss"] for h in run.history) == best["val_loss"]
    data = curve_data(40, 0.5, 0.6, 0.2, 0)
    val = np.mean((run.predict(data.x[data.val]) - data.y[data.val]) ** 2)
    assert val == pytest.approx(best["val_loss"], rel=1e-4)  # the model now is the best epoch's
    epoch = run.epoch
    run.step(10)
    assert run.epoch == epoch  # a finished run does not train on


def test_overfitting_shows_as_a_rising_validation_loss():
    run = curve_run(FitConfig(max_epochs=1500))
    run.step(1500)
    last = run.history[-1]
    assert run.finished and not run.stopped
    assert last["train_loss"] < 0.5 * run.history[run.best_epoch]["train_loss"]
    assert last["val_loss"] > 1.5 * run.best_val


def test_l1_proximal_step_zeroes_weights_and_more_with_larger_lambda():
    zeros = []
    for l1 in (0.0, 1e-4, 1e-3):
        run = curve_run(FitConfig(hidden=(16, 16), l1=l1, max_epochs=300))
        run.step(300)
        zeros.append(int((run.weights() == 0).sum()))
    assert zeros[0] == 0 < zeros[1] < zeros[2]


def test_l1_step_is_the_soft_threshold():
    run = curve_run(FitConfig(hidden=(4, 4), l1=0.05, lr=0.01))
    run.step(3)
    before = [w.detach().clone() for w in run._weights]
    run._l1_step()
    n = len(run._weights)  # the weights, then the biases, in the Adam state
    for w0, w, v, step in zip(before, run._weights, run._v[:n], run._steps[:n], strict=True):
        threshold = 0.01 * 0.05 / ((v / (1 - 0.999 ** step)).sqrt() + 1e-8)
        expected = torch.where(w0.abs() <= threshold, torch.zeros_like(w0), w0 - threshold * w0.sign())
        torch.testing.assert_close(w.detach(), expected)


def test_l2_and_dropout_shrink_the_overfit():
    runs = {name: curve_run(FitConfig(lr=0.01, max_epochs=1000, **kw)) for name, kw in
            (("none", {}), ("l2", {"l2": 0.01}), ("dropout", {"dropout": 0.3}))}
    for run in runs.values():
        run.step(1000)
    data = curve_data(40, 0.5, 0.6, 0.2, 0)
    new = {name: np.mean((r.predict(data.x_new) - data.y_new) ** 2) for name, r in runs.items()}
    assert new["l2"] < new["none"] and new["dropout"] < new["none"]
    assert np.linalg.norm(runs["l2"].weights()) < np.linalg.norm(runs["none"].weights())


def test_label_noise_opens_a_gap_between_train_and_validation():
    from sim.core.data import make_classification, split
    gaps = []
    for fraction in (0.0, 0.3):
        X, y = make_classification("moons", 200, 0.15, 0)
        tr, va = split(200, 0.5, 0)
        noisy, _ = flip_labels(y[tr], fraction, 0)
        run = FitTrainer(FitConfig(task="binary", lr=0.01, max_epochs=800), X[tr], noisy, X[va], y[va])
        run.step(800)
        last = run.history[-1]
        assert 0 <= last["val_acc"] <= 1
        gaps.append(last["train_acc"] - last["val_acc"])
    assert gaps[1] > gaps[0] + 0.1


def test_a_diverging_run_stops_with_the_best_weights():
    run = curve_run(FitConfig(hidden=(8,)))
    run.step(20)
    best = run.weights() if run.best_epoch == run.epoch else None
    with torch.no_grad():
        run._weights[0].fill_(float("inf"))  # what an exploding update would leave behind
    run.step(5)
    assert run.diverged and run.finished and run.epoch == 20 and np.isfinite(run.weights()).all()
    if best is not None:
        np.testing.assert_array_equal(run.weights(), best)
    data = curve_data(40, 0.5, 0.6, 0.2, 0)
    huge = FitTrainer(FitConfig(hidden=(8,)), data.x[data.train], data.y[data.train] * 1e30,
                      data.x[data.val], data.y[data.val])  # squared targets of 1e60 overflow float32
    assert huge.diverged and huge.finished


@pytest.mark.parametrize("bad", [{"task": "ranking"}, {"hidden": ()}, {"lr": 0.0}, {"l1": -1.0}, {"dropout": 1.0},
                                 {"patience": -1}, {"max_epochs": 0}, {"activation": "gelu"}])
def test_invalid_config_is_refused(bad):
    with pytest.raises(ValueError):
        FitConfig(**bad)


# ---------- leakage ----------
def test_knn_matches_scikit_learn():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 4)), rng.integers(0, 2, 200)
    Q = rng.normal(size=(50, 4))
    ref = KNeighborsClassifier(leakage.K_NEIGHBOURS).fit(X, y).predict(Q)
    assert np.array_equal(leakage.knn_predict(X, y, Q), ref)


@pytest.mark.parametrize("scenario,strong,neutral", [
    (leakage.scaling_leak, 10.0, 1.0), (leakage.group_leak, 10, 1), (leakage.time_leak, 20, 2)])
def test_each_leak_flatters_the_reported_score_and_vanishes_at_its_neutral_setting(scenario, strong, neutral):
    leak = scenario(strong, 0)
    assert leak.leaky.reported - leak.leaky.new > 0.1  # the leaky protocol promises more than new data give
    assert abs(leak.honest.reported - leak.honest.new) < 0.06  # the honest one predicts new data
    off = scenario(neutral, 0)
    assert abs(off.leaky.reported - off.honest.reported) < 0.06  # nothing to leak: the protocols agree
    assert abs(off.leaky.new - off.honest.new) < 0.06


# ---------- pictures ----------
def test_panels_are_plain_json_and_say_what_they_show():
    run = curve_run(FitConfig(hidden=(8, 8), l1=1e-3, max_epochs=600))
    run.step(600)
    w = run.weights()
    frame = FitRun(run, "weights").frame()
    assert frame["weights"]["counts"].sum() + frame["weights"]["zeros"] == w.size == frame["weights"]["size"]
    hist = plots.weights_panel(frame["weights"], {"title": "w", "weight": "value", "zero": "0"})
    assert hist["series"][1]["y"] == [0, int((w == 0).sum())] and (w == 0).sum() > 0
    curves = plots.curves_panel(frame["curves"], run.best_epoch, {"title": "", "train": "t", "val": "v", "epoch": "e",
                                                                  "best": "b"}, log_y=True)
    assert len(curves["series"][0]["x"]) <= LIVE_CURVE_POINTS and curves["series"][2]["x"] == [run.best_epoch] * 2
    assert curves["series"][0]["x"][-1] == 600 and curves["series"][1]["y"][0] == pytest.approx(
        run.history[0]["val_loss"], rel=1e-6)
    json.dumps([hist, curves])


def test_figures_build_for_every_scenario():
    labels = {k: k for k in ("leaky", "honest", "reported", "new", "accuracy", "chance", "train", "test", "u", "v",
                             "random", "group", "person", "record", "shuffled", "future", "day", "regime")}
    for make, builder in ((leakage.scaling_leak, plots.spare_features_figure),
                          (leakage.group_leak, plots.records_figure), (leakage.time_leak, plots.timeline_figure)):
        leak = make(2, 0)
        builder(leak.example, labels).to_json()
        plots.leak_figure((leak.leaky.reported, leak.leaky.new), (leak.honest.reported, leak.honest.new),
                          labels).to_json()
    data = curve_data(30, 0.5, 0.7, 0.15, 0)
    sweep = degree_sweep(data)
    fig = plots.sweep_figure(sweep.degrees, sweep.train, sweep.val, sweep.new, sweep.best, 3, sweep.interpolating,
                             {k: k for k in ("degree", "mse", "train", "val", "new", "best", "chosen", "under", "over",
                                             "interpolating")})
    assert [tr.name for tr in fig.data] == ["train", "val", "new"]
    assert mse(poly_fit(data.x, data.y, 3), data.x, data.y) > 0


# ---------- what the page shows (sim.fitting.generalization's and sim.plots.generalization's views) ----------
def test_parts_and_train_val_are_the_split_by_index():
    data = curve_data(40, 0.5, 0.6, 0.2, 0)
    assert sorted(np.concatenate(list(data.parts.values())).tolist()) == list(range(40))
    assert [len(v) for v in data.parts.values()] == [24, 8, 8]
    x, y, x_val, y_val = data.train_val()
    assert np.array_equal(x, data.x[data.parts["train"]]) and np.array_equal(y, data.y[data.parts["train"]])
    assert np.array_equal(x_val, data.x[data.parts["val"]]) and np.array_equal(y_val, data.y[data.parts["val"]])


@pytest.mark.parametrize("train,val,odd", [(0.6, 0.1, 0.3), (0.8, 0.15, 0.05), (0.6, 0.2, None), (0.7, 0.2, None),
                                           (0.75, 0.1, None), (0.8, 0.2, None), (0.8, 0.25, None)])
def test_odd_test_share_is_the_share_left_outside_ten_to_twenty_percent(train, val, odd):
    got = odd_test_share(train, val)
    assert got == pytest.approx(odd) if odd is not None else got is None


def test_fit_errors_match_numpy_polyfit():
    data = curve_data(60, 0.4, 0.6, 0.2, 2)
    fit = fit_errors(data, 4)
    coef = np.polyfit(data.x[data.train], data.y[data.train], 4)
    for got, idx_x, idx_y in ((fit.train, data.x[data.train], data.y[data.train]),
                              (fit.val, data.x[data.val], data.y[data.val]), (fit.new, data.x_new, data.y_new)):
        assert got == pytest.approx(np.mean((np.polyval(coef, idx_x) - idx_y) ** 2), rel=1e-6)
    assert np.allclose(fit.predict(GRID), np.polyval(coef, GRID), atol=1e-8)


def test_cv_summary_is_the_mean_and_population_spread_of_the_scores():
    import statistics

    folds = cross_validate(curve_data(40, 0.5, 0.6, 0.2, 0), 3, 5, 0)
    scores = [f.score for f in folds]
    mean, std = cv_summary(folds)
    assert mean == pytest.approx(statistics.fmean(scores)) and std == pytest.approx(statistics.pstdev(scores))
    assert cv_summary(folds[:1]) == (pytest.approx(scores[0]), 0.0)


def test_noisy_points_flip_only_training_labels_and_split_the_pool_in_half():
    from sim.core.data import make_classification

    points = noisy_points("circle", 0.2, 3)
    X, y = make_classification("circle", 300, 0.0, 3)  # circle: no jitter (flipping is this run's only noise)
    assert len(points.X_train) == len(points.X_val) == 150 and points.flipped.sum() == 30  # 20 % of 150
    rows = {tuple(r): label for r, label in zip(X.tolist(), y.tolist(), strict=True)}
    assert len({tuple(r) for r in np.concatenate([points.X_train, points.X_val]).tolist()}) == 300  # all, once each
    clean = np.array([rows[tuple(r)] for r in points.X_train.tolist()])
    assert np.array_equal(points.y_train, np.where(points.flipped, 1 - clean, clean))
    assert np.array_equal(points.y_val, [rows[tuple(r)] for r in points.X_val.tolist()])
    parts = (points.X_train, points.y_train, points.X_val, points.y_val)
    assert all(a is b for a, b in zip(points.train_val(), parts, strict=True))
    assert NOISE_CELLS.shape == (625, 2) and NOISE_CELLS.min() == -6 and NOISE_CELLS.max() == 6


def test_leak_runs_the_named_scenario_and_gap_is_reported_minus_new():
    a, b = leakage.leak("group", 4, 1), leakage.group_leak(4, 1)
    assert a.leaky == b.leaky and a.honest == b.honest
    s = leakage.Scores(reported=0.9, new=0.65, spread=0.1)
    assert s.gap == pytest.approx(0.25)
    with pytest.raises(ValueError):
        leakage.leak("weather", 1, 0)


def fake_frame(key: str = "loss", view: str = "curve") -> dict:
    """A run's frame (FitRun.frame) known by hand: three epochs, the best at 1, predict(x) = 2·x (first column)."""
    history = [{"epoch": e, f"train_{key}": 1.0 / (e + 1), f"val_{key}": 0.5 / (e + 1)} for e in range(3)]
    frame = {"epoch": 2, "best_epoch": 1, "best_val": 0.25, "last": history[-1], "diverged": False, "stopped": False,
             "finished": False, "curves": (np.arange(3, dtype=np.int32),
                                           *(np.array([h[f"{p}_{key}"] for h in history], np.float32)
                                             for p in ("train", "val")))}
    if view == "boundary":
        frame["classes"] = np.packbits(2.0 * NOISE_CELLS[:, 0] > 0.5)
    else:
        frame["pred"] = (2.0 * GRID).astype(np.float32)
    if view == "weights":
        frame["weights"] = weight_histogram(np.array([0.0, 1.0, -2.0, 0.0, 0.5, 0.0]))
    return frame


def test_views_build_from_sims_objects_with_the_numbers_filled_in():
    data = curve_data(40, 0.5, 0.6, 0.2, 0)
    words = {k: k for k in ("train", "val", "test", "truth", "x", "y", "fit", "degree", "mse", "new", "best",
                            "chosen", "under", "over", "interpolating", "scores_title", "fold", "mean", "title",
                            "epoch", "u", "v", "weight", "zero")}
    split = plots.data_figure(data, words)
    assert sorted(len(tr.x) for tr in split.data if tr.type == "scatter" and tr.name != "truth") == [8, 8, 24]
    sweep, fit = degree_sweep(data), fit_errors(data, 3)
    swept, fitted = plots.capacity_figures(data, sweep, fit, 3, words, words)
    assert list(swept.data[1].y) == pytest.approx(np.maximum(sweep.val, 1e-6))
    coef = np.polyfit(data.x[data.train], data.y[data.train], 3)
    assert np.allclose(fitted.data[-1].y, np.polyval(coef, GRID), atol=1e-8)

    folds = cross_validate(data, 3, 4, 0)
    frame = plots.cv_frame(data, folds, 2, words | {"fold_title": "{i}/{k}", "caption": "{i} {k} {score} {mean} {std}"})
    s1, s2 = folds[0].score, folds[1].score
    assert frame["caption"] == f"2 4 {s2:.3f} {(s1 + s2) / 2:.3f} {abs(s1 - s2) / 2:.3f}"
    assert frame["panels"][0]["title"] == "2/4"
    assert frame["panels"][1]["series"][0]["y"] == pytest.approx([s1, s2], abs=1e-5)

    curve = {"fit": words, "loss": words, "caption": "{epoch}|{train}|{val}|{best}|{best_val}"}
    frame = plots.curve_frame(fake_frame(), data, curve)
    assert frame["caption"] == "2|0.3333|0.1667|1|0.2500" and frame["epoch"] == 2 and len(frame["panels"]) == 2
    assert frame["panels"][0]["series"][-1]["y"] == pytest.approx(2 * GRID, abs=1e-5)  # the run's curve over the grid
    frame = plots.regularization_frame(fake_frame(view="weights"), data, curve | {"weights": words,
                                                                                   "zeros": "{z} of {m}"})
    assert frame["caption"].endswith("  ·  3 of 6") and len(frame["panels"]) == 3
    # one size for all: under any scaling of the page (a phone's width, the presenter view's height) the first, the
    # fit, stays the largest
    assert {(p["width"], p["height"]) for p in frame["panels"]} == {plots.THREE_UP}

    points = noisy_points("moons", 0.2, 0)
    frame = plots.noise_frame(fake_frame("acc", "boundary"), points, {"boundary": words, "acc": words,
                                                                        "caption": "{epoch} {train} {val} {gap}"})
    assert frame["caption"] == "2 33.3% 16.7% +16.7"
    assert {(p["width"], p["height"]) for p in frame["panels"]} == {plots.NOISE_UP}  # the boundary first, square
    # predict > 0.5 where x > 0.25: the cells of class 1 are the grid's columns right of 0.25
    assert len(frame["panels"][0]["series"][1]["x"]) == 25 * int((np.linspace(-6, 6, 25) > 0.25).sum())
    json.dumps(frame)

    leak = leakage.leak("scaling", 10, 0)
    example, bars = plots.leak_figures("scaling", leak, words, {**words, "leaky": "L", "honest": "H",
                                                                "reported": "r", "accuracy": "a", "chance": "c"})
    assert list(bars.data[0].y) == [leak.leaky.reported, leak.honest.reported]
    assert list(bars.data[1].y) == [leak.leaky.new, leak.honest.new] and len(example.data) == 3
