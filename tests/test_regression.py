"""Regression engine against independent references: numpy.linalg.lstsq, torch autograd, scikit-learn,
and the course notes' worked example."""
import random

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from scipy.optimize import minimize
from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

from sim.core.upload import UploadError
from sim.fitting.regression import (
    COND_LIMIT,
    CURVE_POINTS,
    LOSSES,
    GDConfig,
    GDRun,
    ModelConfig,
    axis,
    curve,
    design_matrix,
    diagnose,
    explain_step,
    feature_map,
    fit,
    gd_step,
    gradient,
    least_squares,
    loss_surface,
    loss_value,
    lr_advice,
    lr_limits,
    outlier_fits,
    parameter_count,
    path_background,
    polynomial_features,
    regression_metrics,
    robust_fit,
    rule_scores,
    scores,
    squared_loss_contours,
    squared_loss_conventions,
)
from sim.fitting.regression_data import DATASETS, NOTES_EXAMPLE, make_dataset, parse_regression_csv

NOTES_X, NOTES_Y = np.array([[1.0], [2.0]]), np.array([2.0, 3.0])


# ---------- the notes' worked example ----------
def test_worked_example_one_step():
    w, b = gd_step(np.zeros(1), 0.0, NOTES_X, NOTES_Y, 0.1)
    np.testing.assert_allclose(w, [0.4])
    assert b == pytest.approx(0.25)


def test_worked_example_every_number():
    s = explain_step(np.zeros(1), 0.0, NOTES_X, NOTES_Y, 0.1)
    np.testing.assert_allclose(s.y_hat, [0, 0])
    np.testing.assert_allclose(s.residuals, [-2, -3])
    np.testing.assert_allclose(s.grad_w, [-4])  # (1/2)(−2·1 − 3·2): L = 1/(2n) Σ r², no factor 2
    assert s.grad_b == pytest.approx(-2.5)
    np.testing.assert_allclose(s.w_new, [0.4])
    assert s.b_new == pytest.approx(0.25)
    assert s.loss_before == pytest.approx((4 + 9) / 4) and s.loss_after < s.loss_before


def test_the_example_implies_the_half_loss_and_the_notes_mse_doubles_the_step():
    x, y, lr = NOTES_EXAMPLE
    c = squared_loss_conventions(np.zeros(1), 0.0, x, y, lr)
    # the notes print w = 0.4, b = 0.25 after one step: only L = 1/(2n) Σ r² gives them
    half = c["half"]
    assert half.loss == pytest.approx((4 + 9) / 4)  # residuals -2, -3
    assert half.grad_w[0] == pytest.approx((-2 * 1 - 3 * 2) / 2) and half.grad_b == pytest.approx((-2 - 3) / 2)
    assert half.w_new[0] == pytest.approx(0.4) and half.b_new == pytest.approx(0.25)
    # the notes' own definition, the mean of the squared residuals: twice the loss, twice the gradient
    mean = c["mean"]
    assert mean.loss == pytest.approx((4 + 9) / 2)
    assert mean.grad_w[0] == pytest.approx(2 * (-2 * 1 - 3 * 2) / 2) and mean.grad_b == pytest.approx(-5.0)
    assert mean.w_new[0] == pytest.approx(0.8) and mean.b_new == pytest.approx(0.5)
    # and the lab's own step is the half convention
    s = explain_step(np.zeros(1), 0.0, x, y, lr)
    assert s.w_new[0] == pytest.approx(half.w_new[0]) and s.loss_before == pytest.approx(half.loss)


# ---------- least squares ----------
@pytest.mark.parametrize("n,p,seed", [(50, 1, 0), (20, 3, 1), (200, 6, 2), (7, 6, 3)])
def test_least_squares_matches_lstsq(n, p, seed):
    rng = np.random.default_rng(seed)
    X, y = rng.normal(size=(n, p)) * rng.uniform(0.1, 10, p), rng.normal(size=n)
    w, b = least_squares(X, y)
    ref, *_ = np.linalg.lstsq(np.hstack([X, np.ones((n, 1))]), y, rcond=None)
    np.testing.assert_allclose(np.append(w, b), ref, rtol=1e-8, atol=1e-10)


def test_least_squares_on_polynomial_features_matches_polyfit():
    rng = np.random.default_rng(4)
    x = rng.uniform(-2, 2, 40)
    y = x ** 3 - x + rng.normal(0, 0.1, 40)
    w, b = least_squares(polynomial_features(x, 3), y)
    np.testing.assert_allclose(np.append(w[::-1], b), np.polyfit(x, y, 3), rtol=1e-8)


def test_underdetermined_fit_passes_through_every_point():
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])
    y = np.array([1.0, -1.0, 2.0, 0.0, 3.0])
    w, b = least_squares(polynomial_features(x, 12), y)
    np.testing.assert_allclose(polynomial_features(x, 12) @ w + b, y, atol=1e-8)


def test_polynomial_features():
    X = polynomial_features(np.array([2.0, -1.0]), 4)
    np.testing.assert_array_equal(X, [[2, 4, 8, 16], [-1, 1, -1, 1]])
    assert polynomial_features(np.arange(5.0), 12).shape == (5, 12)
    with pytest.raises(ValueError):
        polynomial_features(np.arange(3.0), 0)


def test_standardised_feature_map():
    x = np.random.default_rng(5).uniform(30, 150, (80, 1))
    X = feature_map(x, 5, standardize=True)(x)
    np.testing.assert_allclose(X.mean(axis=0), 0, atol=1e-9)
    np.testing.assert_allclose(X.std(axis=0), 1, atol=1e-9)
    np.testing.assert_array_equal(feature_map(x, 2, standardize=False)(x), polynomial_features(x, 2))


# ---------- losses and gradients against torch autograd ----------
def _torch_loss(r: torch.Tensor, loss: str, delta: float) -> torch.Tensor:
    zero = torch.zeros_like(r)
    if loss == "mse":
        return 0.5 * F.mse_loss(r, zero)  # 1/(2n) Σ r²
    if loss == "huber":
        return F.huber_loss(r, zero, delta=delta)
    return F.l1_loss(r, zero)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("seed", range(3))
def test_gd_step_matches_torch_autograd(loss, seed):
    rng = np.random.default_rng(seed)
    X, y = rng.normal(size=(30, 4)), rng.normal(size=30) * 3
    w, b, lr, delta = rng.normal(size=4), float(rng.normal()), 0.05, 0.8
    tw = torch.tensor(w, requires_grad=True)
    tb = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    value = _torch_loss(torch.tensor(X) @ tw + tb - torch.tensor(y), loss, delta)
    value.backward()
    w_new, b_new = gd_step(w, b, X, y, lr, loss, delta)
    np.testing.assert_allclose(w_new, (tw - lr * tw.grad).detach().numpy(), rtol=1e-12)
    assert b_new == pytest.approx(float((tb - lr * tb.grad).detach()), rel=1e-12)
    assert loss_value(X @ w + b - y, loss, delta) == pytest.approx(value.item(), rel=1e-12)


def test_default_gd_step_is_full_batch_squared_loss():
    rng = np.random.default_rng(6)
    X, y, w = rng.normal(size=(10, 2)), rng.normal(size=10), rng.normal(size=2)
    gw, gb = gradient(w, 0.3, X, y)
    r = X @ w + 0.3 - y
    np.testing.assert_allclose(gw, X.T @ r / 10)
    assert gb == pytest.approx(r.mean())


# ---------- robust losses ----------
@pytest.mark.parametrize("loss", ["huber", "mae"])
def test_robust_fit_is_a_minimum(loss):
    d = make_dataset("linear", 60, 0.3, 1, outliers=3, outlier_size=6)
    X = polynomial_features(d.x, 2)
    w, b = robust_fit(X, d.y, loss, 1.5)
    best = loss_value(X @ w + b - d.y, loss, 1.5)
    rng = np.random.default_rng(7)
    for _ in range(50):  # no nearby parameters do better
        dw, db = rng.normal(0, 1e-3, 2), rng.normal(0, 1e-3)
        assert loss_value(X @ (w + dw) + b + db - d.y, loss, 1.5) >= best - 1e-12
    if loss == "huber":  # smooth: the gradient vanishes
        gw, gb = gradient(w, b, X, d.y, loss, 1.5)
        np.testing.assert_allclose(np.append(gw, gb), 0, atol=1e-8)


def test_huber_resists_an_outlier_that_drags_least_squares():
    clean = make_dataset("linear", 40, 0.2, 3)
    dirty = make_dataset("linear", 40, 0.2, 3, outliers=1, outlier_size=10)
    assert dirty.outlier.sum() == 1 and np.array_equal(clean.x, dirty.x)
    slopes = {}
    for loss in ("mse", "huber"):
        slopes[loss] = [fit(d.x, d.y, ModelConfig(loss=loss, delta=1.5)).w[0] for d in (clean, dirty)]
    drag_ls = abs(slopes["mse"][1] - slopes["mse"][0])
    drag_huber = abs(slopes["huber"][1] - slopes["huber"][0])
    assert drag_ls > 0.1 and drag_huber < drag_ls / 3


# ---------- diagnostics ----------
def test_degree_twelve_on_five_points_is_underdetermined():
    d = make_dataset("sine", 5, 0.1, 0)
    result = fit(d.x, d.y, ModelConfig(degree=12))
    assert ("underdetermined", {"n": 5, "k": 13}) in result.issues
    assert np.isfinite(result.w).all()


def test_raw_high_powers_are_ill_conditioned_and_standardising_helps():
    d = make_dataset("area_price", 100, 0.3, 0)
    raw = fit(d.x, d.y, ModelConfig(degree=8))
    assert [code for code, _ in raw.issues] == ["ill_conditioned"]
    assert float(raw.issues[0][1]["cond"]) > COND_LIMIT
    assert fit(d.x, d.y, ModelConfig(degree=3, standardize=True)).issues == []


def test_constant_column_and_overflow_are_reported():
    X = np.column_stack([np.arange(10.0), np.ones(10)])
    assert diagnose(X)[0] == ("constant_column", {"column": 2})
    huge = np.linspace(-1, 1, 12)[:, None] * 1e300
    assert fit(huge, np.arange(12.0), ModelConfig(degree=3)).issues == [("overflow", {})]


@pytest.mark.parametrize("factor,converges", [(0.95, True), (1.05, False)])
def test_lr_limit_separates_convergence_from_divergence(factor, converges):
    d = make_dataset("linear", 30, 0.3, 2)
    _, diverge = lr_limits(d.x)
    run = GDRun(d.x, d.y, GDConfig(lr=factor * diverge))
    run.step(3000)
    assert run.diverged is not converges
    if converges:
        w, b = least_squares(d.x, d.y)
        np.testing.assert_allclose(np.append(run.w, run.b), np.append(w, b), rtol=1e-3)


def test_lr_limits_match_the_hessian_and_survive_huge_values(capfd):
    X = make_dataset("linear", 30, 0.3, 2).x
    A = np.hstack([X, np.ones((len(X), 1))])
    lam = np.linalg.eigvalsh(A.T @ A / len(X)).max()  # the Hessian's largest eigenvalue, directly
    np.testing.assert_allclose(lr_limits(X), (1 / lam, 2 / lam), rtol=1e-10)
    # values whose squares overflow: AᵀA is inf, so eigvalsh failed ("did not converge") or LAPACK
    # printed "illegal value" on the server's output; the limits are ~0 (every rate is too large)
    for huge in (np.linspace(-6, 6, 12)[:, None] * 1e200, np.linspace(-6, 6, 12)[:, None] ** 3 * 1e300):
        zigzag, diverge = lr_limits(huge)
        assert 0 <= zigzag < diverge < 1e-300 or zigzag == diverge == 0
    assert lr_limits(np.full((5, 1), np.inf)) == (0.0, 0.0)
    assert squared_loss_contours(np.linspace(-6, 6, 12)[:, None] * 1e200, np.arange(12.0), np.array([1.0])) == []
    assert "illegal value" not in capfd.readouterr().err


def test_learning_rate_hundred_diverges_and_keeps_finite_parameters():
    d = make_dataset("linear", 30, 0.3, 0)
    run = GDRun(d.x, d.y, GDConfig(lr=100.0))
    run.step(50)
    assert run.diverged and run.epoch < 10
    assert np.isfinite(run.w).all() and np.isfinite(run.history).all()
    epoch = run.epoch
    run.step(5)
    assert run.epoch == epoch  # stopped for good


def test_minibatch_gd_is_seeded_and_reaches_the_least_squares_fit():
    d = make_dataset("quadratic", 80, 0.2, 4)
    config = GDConfig(model=ModelConfig(degree=2, standardize=True), lr=0.05, batch_size=8, seed=3)
    a, b = GDRun(d.x, d.y, config), GDRun(d.x, d.y, config)
    a.step(300)
    b.step(300)
    np.testing.assert_array_equal(a.w, b.w)
    ref = fit(d.x, d.y, config.model)
    grid = np.linspace(-3, 3, 7)[:, None]
    np.testing.assert_allclose(a.as_fit().predict(grid), ref.predict(grid), atol=0.1)
    assert len(a.history) == len(a.path) == 301


def test_metrics_match_scikit_learn():
    rng = np.random.default_rng(8)
    y, y_hat = rng.normal(size=50), rng.normal(size=50)
    m = regression_metrics(y, y_hat)
    assert m["mse"] == pytest.approx(mean_squared_error(y, y_hat))
    assert m["rmse"] == pytest.approx(np.sqrt(mean_squared_error(y, y_hat)))
    assert m["mae"] == pytest.approx(mean_absolute_error(y, y_hat))
    assert m["r2"] == pytest.approx(r2_score(y, y_hat))
    assert regression_metrics(np.ones(4), np.zeros(4))["r2"] is None


def test_loss_surface_and_contours():
    d = make_dataset("linear", 25, 0.4, 5)
    w_grid, b_grid = np.linspace(-1, 3, 5), np.linspace(-2, 2, 4)
    Z = loss_surface(d.x, d.y, w_grid, b_grid, "huber", 1.0)
    assert Z.shape == (4, 5)
    assert Z[2, 3] == pytest.approx(loss_value(w_grid[3] * d.x[:, 0] + b_grid[2] - d.y, "huber", 1.0))
    levels = np.array([2.0, 5.0])
    for level, (ws, bs) in zip(levels, squared_loss_contours(d.x, d.y, levels), strict=True):
        on = [loss_value(w * d.x[:, 0] + b - d.y) for w, b in zip(ws, bs, strict=True)]
        np.testing.assert_allclose(on, level, rtol=1e-9)
    assert squared_loss_contours(np.ones((5, 1)), np.arange(5.0), levels) == []


# ---------- data ----------
@pytest.mark.parametrize("name", DATASETS)
def test_datasets_are_seeded_and_shaped(name):
    a, b = make_dataset(name, 40, 0.3, 9), make_dataset(name, 40, 0.3, 9)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.y, b.y)
    assert a.x.shape == (40, 2 if name == "temperature" else 1) and a.y.shape == (40,)
    assert len(a.columns) == a.x.shape[1] + 1 and not a.outlier.any()
    assert not np.array_equal(a.y, make_dataset(name, 40, 0.3, 10).y)


def test_outliers_move_only_chosen_points_among_large_x():
    clean = make_dataset("linear", 50, 0.2, 1)
    dirty = make_dataset("linear", 50, 0.2, 1, outliers=3, outlier_size=4)
    assert dirty.outlier.sum() == 3
    np.testing.assert_allclose(dirty.y[~dirty.outlier], clean.y[~dirty.outlier])
    np.testing.assert_allclose(dirty.y[dirty.outlier] - clean.y[dirty.outlier], 4 * clean.scale)
    assert (dirty.x[dirty.outlier, 0] >= np.quantile(clean.x[:, 0], 0.69)).all()
    assert make_dataset("linear", 2, 0.2, 1, outliers=5, outlier_size=1).outlier.sum() == 2


def test_temperature_rows_are_consecutive_days():
    d = make_dataset("temperature", 30, 0.3, 2)
    np.testing.assert_array_equal(d.x[1:, 0], d.x[:-1, 1])  # yesterday becomes the day before
    np.testing.assert_array_equal(d.x[1:, 1], d.y[:-1])  # tomorrow becomes yesterday
    np.testing.assert_array_equal(np.diff(d.day), 1)


# ---------- uploads ----------
def _csv(header: str, rows) -> bytes:
    return (header + "\n" + "\n".join(",".join(str(c) for c in row) for row in rows) + "\n").encode()


def test_upload_one_and_two_inputs():
    d = parse_regression_csv(_csv("area,price", [(30 + i, 2 * i + 1) for i in range(12)]))
    assert d.x.shape == (12, 1) and d.columns == ("area", "price") and d.uploaded
    d = parse_regression_csv(_csv("target,t1,t2", [(i, i % 5, i * 2) for i in range(12)]))
    assert d.x.shape == (12, 2) and d.columns == ("t1", "t2", "target")
    np.testing.assert_array_equal(d.y, np.arange(12))


@pytest.mark.parametrize("raw,code", [
    (_csv("x", [(i,) for i in range(12)]), "missing_columns"),
    (_csv("a,b,c,y", [(i, i, i, i) for i in range(12)]), "too_many_columns"),
    (_csv("x,y", [(1, i) for i in range(12)]), "constant_feature"),
    (_csv("x,y", [(i, 4) for i in range(12)]), "constant_label"),
    (_csv("x,y", [(i, i) for i in range(11)] + [("abc", 1)]), "non_numeric"),
    (_csv("x,y", [(i, i) for i in range(11)] + [(1, "n/a")]), "label_not_numeric"),
    (_csv("x,y", [(i, i) for i in range(5)]), "too_few_rows"),
    (_csv("x,y", [(i, i) for i in range(11)] + [(1, "inf")]), "nan"),
    (b"\xff\xfe\x00", "not_text"), (b"  \n", "empty"), (_csv("1,2", [(i, i) for i in range(12)]), "no_header"),
])
def test_upload_errors(raw, code):
    with pytest.raises(UploadError) as info:
        parse_regression_csv(raw)
    assert info.value.code == code


def test_upload_fuzz_raises_only_upload_errors():
    rng = random.Random(0)
    alphabet = "0123456789.,-e;\tx\n \"nainf"
    for _ in range(300):
        raw = "x,y\n" + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 200)))
        try:
            d = parse_regression_csv(raw.encode())
        except UploadError:
            continue
        fit(d.x, d.y, ModelConfig(degree=rng.randint(1, 12), standardize=rng.random() < 0.5))


# ---------- what the page shows (sim.fitting.regression's page functions) ----------
def test_notes_example_is_the_notes_data():
    x, y, lr = NOTES_EXAMPLE
    np.testing.assert_array_equal(x, NOTES_X)
    np.testing.assert_array_equal(y, NOTES_Y)
    assert lr == 0.1


def test_design_matrix_parameter_count_and_raw_inputs():
    d = make_dataset("temperature", 12, 0.3, 1)
    assert parameter_count(d.x, 3) == 2 * 3 + 1 and parameter_count(d.x[:, :1], 1) == 2
    X = design_matrix(d.x, ModelConfig(degree=2))
    np.testing.assert_allclose(X, np.column_stack([d.x[:, 0], d.x[:, 0] ** 2, d.x[:, 1], d.x[:, 1] ** 2]))
    assert ModelConfig().inputs_as_is and np.array_equal(design_matrix(d.x, ModelConfig()), d.x)
    assert not ModelConfig(degree=2).inputs_as_is and not ModelConfig(standardize=True).inputs_as_is
    Z = design_matrix(d.x, ModelConfig(standardize=True))
    np.testing.assert_allclose(Z, (d.x - d.x.mean(axis=0)) / d.x.std(axis=0))


def test_axis_is_the_input_the_day_or_the_row():
    line = make_dataset("linear", 20, 0.3, 0)
    along, kind = axis(line)
    assert kind == "input" and np.array_equal(along, line.x[:, 0])
    temp = make_dataset("temperature", 20, 0.3, 0)
    along, kind = axis(temp)
    assert kind == "day" and np.array_equal(along, temp.day)
    up = parse_regression_csv(b"a,b,y\n" + b"".join(f"{i},{i * i % 7},{i % 5}\n".encode() for i in range(10)))
    along, kind = axis(up)
    assert kind == "row" and along.tolist() == list(range(1, 11))


@pytest.mark.parametrize("degree", [1, 3])
def test_curve_of_one_input_is_polyfit_on_an_even_grid(degree):
    d = make_dataset("quadratic", 40, 0.3, 2)
    cx, cy = curve(d, fit(d.x, d.y, ModelConfig(degree=degree)))
    assert len(cx) == CURVE_POINTS and cx[0] == d.x.min() and cx[-1] == d.x.max()
    np.testing.assert_allclose(np.diff(cx), (d.x.max() - d.x.min()) / (CURVE_POINTS - 1))
    np.testing.assert_allclose(cy, np.polyval(np.polyfit(d.x[:, 0], d.y, degree), cx), rtol=1e-9, atol=1e-9)


def test_curve_of_two_inputs_is_the_predictions_in_day_order():
    d = make_dataset("temperature", 30, 0.3, 4)
    cx, cy = curve(d, fit(d.x, d.y, ModelConfig()))
    order = np.argsort(d.day)
    A = np.column_stack([d.x, np.ones(len(d.y))])
    coef, *_ = np.linalg.lstsq(A, d.y, rcond=None)
    np.testing.assert_array_equal(cx, d.day[order])
    np.testing.assert_allclose(cy, (A @ coef)[order], rtol=1e-9)


def test_scores_and_the_temperature_rule():
    d = make_dataset("temperature", 50, 0.3, 3)
    model = fit(d.x, d.y, ModelConfig())
    m = scores(d, model)
    assert m["mse"] == pytest.approx(mean_squared_error(d.y, model.predict(d.x)))
    assert m["r2"] == pytest.approx(r2_score(d.y, model.predict(d.x)))
    rule = rule_scores(d)
    assert rule["rmse"] == pytest.approx(np.sqrt(np.mean(((d.x[:, 0] + d.x[:, 1]) / 2 - d.y) ** 2)))
    assert rule_scores(make_dataset("linear", 10, 0.3, 0)) is None


def test_lr_advice_against_the_two_by_two_hessian():
    d = make_dataset("linear", 25, 0.3, 6)
    x = d.x[:, 0]
    # λ_max of [[mean x², mean x], [mean x, 1]] from the quadratic's roots
    a, c, m = np.mean(x * x), 1.0, np.mean(x)
    lam = (a + c) / 2 + np.sqrt(((a - c) / 2) ** 2 + m * m)
    for lr, kind in ((0.9 / lam, "ok"), (1.1 / lam, "zigzag"), (1.9 / lam, "zigzag"), (2.1 / lam, "diverge")):
        advice = lr_advice(GDRun(d.x, d.y, GDConfig(lr=lr)))
        assert advice.kind == kind
        assert advice.zigzag == pytest.approx(1 / lam) and advice.diverge == pytest.approx(2 / lam)
        huber = lr_advice(GDRun(d.x, d.y, GDConfig(ModelConfig(loss="huber"), lr=lr))).kind
        assert huber == ("huber_ok" if kind == "ok" else "huber_large")  # Huber is no more curved, and capped
    assert lr_advice(GDRun(d.x, d.y, GDConfig(ModelConfig(loss="mae"), lr=100.0))).kind == "mae"
    assert lr_advice(GDRun(d.x, d.y, GDConfig(lr=0.1, batch_size=8))).kind == "minibatch"
    assert lr_advice(GDRun(d.x, d.y, GDConfig(lr=0.1, batch_size=25))).kind == "ok"  # a batch of all 25: full


def test_path_background_is_the_minimum_and_ellipses_at_quartered_start_losses():
    d = make_dataset("linear", 30, 0.5, 7)
    run = GDRun(d.x, d.y, GDConfig(lr=0.1))
    contours, optimum = path_background(run)
    slope, intercept = np.polyfit(d.x[:, 0], d.y, 1)
    assert optimum == pytest.approx((slope, intercept))
    best = np.mean((slope * d.x[:, 0] + intercept - d.y) ** 2) / 2
    levels = [level for level in np.mean(d.y ** 2) / 2 * 0.25 ** np.arange(6) if level > best]
    assert len(contours) == len(levels) > 0
    for level, (ws, bs) in zip(levels, contours, strict=True):
        on = [np.mean((w * d.x[:, 0] + b - d.y) ** 2) / 2 for w, b in zip(ws, bs, strict=True)]
        np.testing.assert_allclose(on, level, rtol=1e-9)
    huber = path_background(GDRun(d.x, d.y, GDConfig(ModelConfig(loss="huber", delta=0.5))))
    assert huber[0] == [] and huber[1] == pytest.approx(tuple(np.append(*robust_fit(d.x, d.y, "huber", 0.5))))
    assert path_background(GDRun(d.x, d.y, GDConfig(ModelConfig(degree=2)))) is None


def test_run_path_array_and_trained_on():
    d = make_dataset("linear", 20, 0.3, 0)
    run = GDRun(d.x, d.y, GDConfig(lr=0.1))
    run.step(3)
    path = run.path_array()
    assert path.shape == (4, 2) and np.array_equal(path[0], [0, 0])
    run.step(1)
    assert path.shape == (4, 2)  # a copy: the run goes on without it
    assert run.trained_on(d.y, ModelConfig()) and not run.trained_on(d.y, ModelConfig(standardize=True))
    assert not run.trained_on(d.y + 1, ModelConfig()) and not run.trained_on(d.y[:-1], ModelConfig())


def test_outlier_fits_against_polyfit_with_and_without_the_outliers():
    d = make_dataset("linear", 40, 0.3, 8, outliers=3, outlier_size=6.0)
    o = outlier_fits(d, ModelConfig(degree=2, loss="huber", delta=1.5), "mse")
    grid = np.linspace(d.x.min(), d.x.max(), CURVE_POINTS)
    with_all = np.polyval(np.polyfit(d.x[:, 0], d.y, 2), grid)
    clean = ~d.outlier
    without = np.polyval(np.polyfit(d.x[clean, 0], d.y[clean], 2), grid)
    assert o.loss == "mse" and not o.fit.overflow
    np.testing.assert_allclose(o.curve[0], grid)
    np.testing.assert_allclose(o.curve[1], with_all, rtol=1e-9)
    np.testing.assert_allclose(o.clean, without, rtol=1e-9)
    shift = np.sqrt(np.mean((with_all - without) ** 2))
    assert o.shift == pytest.approx(shift) and o.shift_units == pytest.approx(shift / d.scale)
    huber = outlier_fits(d, ModelConfig(degree=2), "huber")
    assert huber.shift < o.shift  # Huber's curve moves less
    A = np.column_stack([np.ones(len(d.y)), d.x[:, 0], d.x[:, 0] ** 2])
    coef = minimize(lambda c: loss_value(A @ c - d.y, "huber", 1.0), np.zeros(3), method="BFGS", tol=1e-12).x
    np.testing.assert_allclose(huber.curve[1], np.polyval(coef[::-1], grid), atol=1e-4)
    none = outlier_fits(make_dataset("linear", 40, 0.3, 8), ModelConfig(), "mse")
    assert none.clean is None and none.shift is None and none.curve is not None


def test_outlier_fits_overflow():
    up = parse_regression_csv(("x,y\n" + "\n".join(f"{i}e300,{i}" for i in range(-6, 6))).encode())
    o = outlier_fits(up, ModelConfig(degree=4), "huber")
    assert o.fit.overflow and o.curve is None and o.shift is None
    assert fit(up.x, up.y, ModelConfig(degree=4)).overflow and not fit(NOTES_X, NOTES_Y, ModelConfig()).overflow
