"""sim.core.models and sim.nets.training against hand computations, NumPy forwards and torch.optim."""

import dataclasses

import numpy as np
import pytest
import torch

from sim.core.data import CLASSIFICATION_DATASETS, feature_matrix, make_classification, split_sizes
from sim.core.models import MLP
from sim.nets.training import OVERSHOOT, ClassifierConfig, Trainer


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


ACTS = {"relu": lambda x: np.maximum(x, 0), "tanh": np.tanh, "sigmoid": sigmoid, "linear": lambda x: x}


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def numpy_forward(layers, X, activation):
    """Hidden activations and logits of an MLP from its (W (out, in), b) list."""
    outs, h = [], X.astype(np.float64)
    for i, (W, b) in enumerate(layers):
        h = h @ W.T + b
        if i < len(layers) - 1:
            h = ACTS[activation](h)
        outs.append(h)
    return outs


def full_batch_trainer(**overrides) -> Trainer:
    """A trainer whose single mini-batch is the whole training set (30 of 60 points), so one epoch is one update."""
    config = ClassifierConfig(**{"n": 60, "batch_size": 30, "train_ratio": 0.5, **overrides})
    return Trainer(config)


def set_layers(trainer: Trainer, layers):
    trainer.net.set_layers(layers)


# --- config -----------------------------------------------------------------------------------


def test_defaults_are_the_playgrounds_but_the_split_the_notes():
    c = ClassifierConfig()
    assert (c.dataset, c.n, c.noise, c.batch_size) == ("circle", 500, 0.0, 10)
    # the Playground trains on half; the notes teach 60-80 % training and 10-20 % for each of the others
    assert c.train_ratio == 0.7 and split_sizes(c.n, c.train_ratio, c.val_ratio) == (350, 75, 75)
    assert (c.features, c.hidden, c.activation, c.lr) == (("x1", "x2"), (4, 2), "tanh", 0.03)
    assert (c.regularization, c.reg_rate, c.optimizer, c.dropout) == ("none", 0.0, "sgd", 0.0)
    assert (c.problem, c.loss, c.seed) == ("classification", "cross_entropy", 0)
    # the held-out half is cut in two (validation, test); AdamW keeps torch's default decay, now visible
    assert (c.val_ratio, c.weight_decay) == (0.5, 0.01)


@pytest.mark.parametrize(
    "field,value",
    [
        ("problem", "ranking"),
        ("dataset", "plane"),  # a regression dataset for classification
        ("n", 1),
        ("noise", -0.1),
        ("train_ratio", 1.0),
        ("val_ratio", 0.0),
        ("val_ratio", 1.0),
        ("weight_decay", -0.01),
        ("weight_decay", float("inf")),
        ("batch_size", 0),
        ("features", ()),
        ("features", ("x1", "x1")),
        ("features", ("x3",)),
        ("hidden", (4, 0)),
        ("activation", "gelu"),
        ("lr", 0.0),
        ("lr", float("nan")),
        ("regularization", "l3"),
        ("reg_rate", -1.0),
        ("loss", "hinge"),
        ("optimizer", "lion"),
        ("dropout", 1.0),
        ("seed", -1),
    ],
)
def test_impossible_values_raise_a_short_code(field, value):
    with pytest.raises(ValueError, match=f"^invalid:{field}$"):
        ClassifierConfig(**{field: value})


def test_lists_become_tuples_and_config_is_hashable():
    c = ClassifierConfig(hidden=[3, 3], features=["x1", "x1x2"])
    assert c.hidden == (3, 3) and c.features == ("x1", "x1x2")
    assert hash(c) == hash(ClassifierConfig(hidden=(3, 3), features=("x1", "x1x2")))


# --- model ------------------------------------------------------------------------------------


@pytest.mark.parametrize("activation", ["relu", "tanh", "sigmoid", "linear"])
@pytest.mark.parametrize("hidden", [(), (3,), (8, 5, 2)])
def test_mlp_matches_numpy_forward(activation, hidden):
    model = MLP(3, hidden, 2, activation, 0.0, torch.Generator().manual_seed(0))
    X = np.random.default_rng(0).uniform(-6, 6, (17, 3)).astype(np.float32)
    layers = [(layer.weight.detach().numpy().T, layer.bias.detach().numpy()) for layer in model.layers]
    outs = model.forward_all(torch.from_numpy(X))
    expected = numpy_forward(layers, X, activation)
    assert len(outs) == len(hidden) + 1
    for out, ref in zip(outs, expected, strict=True):
        np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(model(torch.from_numpy(X)).detach().numpy(), outs[-1].detach().numpy())


def test_playground_init():
    model = MLP(2, (8, 8), 1, "tanh", 0.0, torch.Generator().manual_seed(0))
    for layer in model.layers:
        w = layer.weight.detach()
        assert w.abs().max() <= 0.5 and w.std() > 0.2  # U(-0.5, 0.5) has std 0.29
        assert torch.all(layer.bias == 0.1)


def test_dropout_only_while_training():
    model = MLP(2, (8, 8), 1, "tanh", 0.5, torch.Generator().manual_seed(0))
    x = torch.ones(64, 2)
    trained = model.forward_all(x)[0].detach()
    assert not torch.equal(model(x), model(x))
    model.eval()
    clean = model.forward_all(x)[0].detach()
    np.testing.assert_array_equal(model(x).detach().numpy(), model(x).detach().numpy())
    assert torch.all(clean != 0)
    dropped = trained == 0
    assert 0.3 < dropped.float().mean() < 0.7
    torch.testing.assert_close(trained[~dropped], 2 * clean[~dropped])  # survivors scaled by 1 / (1 - p)


# --- one optimizer step against a hand computation --------------------------------------------


def test_one_sgd_step_of_logistic_regression_uses_p_minus_y():
    t = full_batch_trainer(hidden=(), lr=0.5, dataset="gauss")
    (W, b), = t.layers()
    X, y = t.X_train.astype(np.float64), t.y_train
    p = sigmoid(X @ W[0] + b[0])
    # d(mean BCE)/d logit = (p - y) / N, the course notes' p - y
    grad_w, grad_b = X.T @ (p - y) / len(y), np.mean(p - y)
    t.step()
    (W1, b1), = t.layers()
    np.testing.assert_allclose(W1[0], W[0] - 0.5 * grad_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b1, b - 0.5 * grad_b, rtol=1e-5, atol=1e-6)
    loss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    assert t.history[0]["epoch"] == 1
    assert t.history[0]["train_loss"] < loss  # the record is taken after the update


def test_one_sgd_step_of_softmax_regression():
    t = full_batch_trainer(hidden=(), lr=0.3, dataset="blobs3")
    (W, b), = t.layers()
    X, y = t.X_train.astype(np.float64), t.y_train
    delta = (softmax(X @ W.T + b) - np.eye(3)[y]) / len(y)  # d(mean CE)/d logits
    t.step()
    (W1, b1), = t.layers()
    np.testing.assert_allclose(W1, W - 0.3 * delta.T @ X, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b1, b - 0.3 * delta.sum(axis=0), rtol=1e-5, atol=1e-6)


def test_squared_error_classification_gradient():
    t = full_batch_trainer(hidden=(), lr=1.0, loss="squared_error", dataset="gauss")
    (W, b), = t.layers()
    X, y = t.X_train.astype(np.float64), t.y_train
    p = sigmoid(X @ W[0] + b[0])
    dz = 2 * (p - y) * p * (1 - p) / len(y)  # mean of (p - y)², through the sigmoid
    t.step()
    np.testing.assert_allclose(t.layers()[0][0][0], W[0] - X.T @ dz, rtol=1e-5, atol=1e-6)
    assert t.history[0]["train_loss"] == pytest.approx(
        np.mean((sigmoid(X @ t.layers()[0][0][0] + t.layers()[0][1][0]) - y) ** 2), rel=1e-4
    )


@pytest.mark.parametrize("regularization,term", [("l1", np.sign), ("l2", lambda w: 2 * w)])  # λΣw²: 2λw
def test_penalty_adds_rate_times_its_derivative_to_weights_only(regularization, term):
    rate, lr = 0.2, 0.1
    plain = full_batch_trainer(hidden=(3,), lr=lr)
    reg = full_batch_trainer(hidden=(3,), lr=lr, regularization=regularization, reg_rate=rate)
    before = plain.layers()
    plain.step()
    reg.step()
    for (W0, _), (Wp, bp), (Wr, br) in zip(before, plain.layers(), reg.layers(), strict=True):
        np.testing.assert_allclose(Wr, Wp - lr * rate * term(W0), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(br, bp, rtol=1e-6, atol=1e-7)
    # history losses are data loss only, without the penalty
    assert reg.history[0]["train_loss"] == pytest.approx(plain.history[0]["train_loss"], rel=0.05)


def adamw_weights_only(weights, biases, lr, decay):
    groups = [{"params": weights, "weight_decay": decay}, {"params": biases, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr)


@pytest.mark.parametrize(
    "overrides,reference",
    [
        ({"optimizer": "momentum"}, lambda w, b, lr: torch.optim.SGD(w + b, lr=lr, momentum=0.9)),
        ({"optimizer": "adam"}, lambda w, b, lr: torch.optim.Adam(w + b, lr=lr)),
        ({"optimizer": "adamw"}, lambda w, b, lr: adamw_weights_only(w, b, lr, decay=0.01)),  # default decay
        ({"optimizer": "adamw", "weight_decay": 0.0}, lambda w, b, lr: adamw_weights_only(w, b, lr, decay=0.0)),
        (
            # L2 stays a loss term (λΣw²) and AdamW's own decay is applied besides, decoupled
            {"optimizer": "adamw", "regularization": "l2", "reg_rate": 0.3, "weight_decay": 0.03},
            lambda w, b, lr: adamw_weights_only(w, b, lr, decay=0.03),
        ),
        (
            {"optimizer": "adam", "regularization": "l1", "reg_rate": 0.01},
            lambda w, b, lr: torch.optim.Adam(w + b, lr=lr),
        ),
    ],
)
def test_optimizers_match_torch_optim(overrides, reference):
    t = full_batch_trainer(hidden=(4,), activation="relu", lr=0.05, **overrides)
    Ws = [torch.tensor(W.T, requires_grad=True) for W, _ in t.layers()]
    bs = [torch.tensor(b, requires_grad=True) for _, b in t.layers()]
    opt = reference(Ws, bs, 0.05)
    x = torch.from_numpy(feature_matrix(t.X_train, t.config.features).astype(np.float64))
    y = torch.from_numpy(t.y_train).double()
    for _ in range(5):
        logit = torch.relu(x @ Ws[0] + bs[0]) @ Ws[1] + bs[1]
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logit[:, 0], y)
        if t.config.regularization == "l1":
            loss = loss + t.config.reg_rate * sum(w.abs().sum() for w in Ws)
        if t.config.regularization == "l2":
            loss = loss + t.config.reg_rate * sum((w * w).sum() for w in Ws)
        opt.zero_grad()
        loss.backward()
        opt.step()
    t.step(5)
    for (W, b), Wr, br in zip(t.layers(), Ws, bs, strict=True):
        np.testing.assert_allclose(W, Wr.detach().numpy().T, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(b, br.detach().numpy(), rtol=1e-4, atol=1e-6)


def test_mini_batches_update_once_per_batch():
    # 25 training points in batches of 10: updates of 10, 10 and 5 points per epoch
    t = Trainer(ClassifierConfig(n=50, train_ratio=0.5, batch_size=10, hidden=(), lr=0.1, optimizer="adam"))
    t.step(2)
    assert t.net.t[0] == 6 and t.epoch == 2  # Adam's step count: one per update


# --- training behaviour -----------------------------------------------------------------------


@pytest.mark.parametrize("dataset,epochs", [("circle", 200), ("xor", 200), ("gauss", 30)])
def test_default_network_learns(dataset, epochs):
    t = Trainer(ClassifierConfig(dataset=dataset))
    t.step(epochs)
    assert t.epoch == epochs and len(t.history) == epochs
    assert t.history[-1]["val_acc"] > 0.9
    assert t.history[-1]["train_loss"] < t.history[0]["train_loss"]


def test_history_records_and_accuracy_by_hand():
    t = Trainer(ClassifierConfig(n=100))
    t.step(3)
    assert [r["epoch"] for r in t.history] == [1, 2, 3]
    assert set(t.history[0]) == {"epoch", "train_loss", "val_loss", "train_acc", "val_acc"}
    p = t.predict_proba(t.X_val)  # the history is the validation set's, never the test set's
    assert t.history[-1]["val_acc"] == pytest.approx(np.mean(p.argmax(1) == t.y_val))
    logp = np.log(np.clip(p[np.arange(len(p)), t.y_val], 1e-12, 1))
    assert t.history[-1]["val_loss"] == pytest.approx(-logp.mean(), rel=1e-4)


def test_regression_reduces_loss_and_has_no_accuracy():
    t = Trainer(ClassifierConfig(problem="regression", dataset="plane"))
    t.step(30)
    assert t.n_classes == 1
    assert t.history[-1]["train_loss"] < 0.2 * t.history[0]["train_loss"]
    assert t.history[-1]["val_acc"] is None and t.history[-1]["train_acc"] is None
    values = t.predict_proba(t.X_val)
    assert values.shape == (len(t.X_val), 1)
    assert np.mean((values[:, 0] - t.y_val) ** 2) == pytest.approx(t.history[-1]["val_loss"], rel=1e-4)


def test_same_seed_same_run_other_seed_other_run():
    config = ClassifierConfig(n=100, dropout=0.2)
    a, b, c = Trainer(config), Trainer(config), Trainer(dataclasses.replace(config, seed=1))
    for t in (a, b, c):
        t.step(5)
    assert a.history == b.history
    assert a.history != c.history


def test_predictions_leave_training_untouched():
    config = ClassifierConfig(n=100, dropout=0.3)
    quiet, busy = Trainer(config), Trainer(config)
    for _ in range(4):
        quiet.step()
        busy.step()
        p1, p2 = busy.predict_proba(busy.X_test), busy.predict_proba(busy.X_test)
        np.testing.assert_array_equal(p1, p2)  # no dropout at prediction
        busy.predict_grid(20)
        busy.grid_activations(20)
    assert quiet.history == busy.history


def test_uploaded_data_is_used_as_given():
    X, y = make_classification("blobs3", 90, 0.0, seed=4)
    t = Trainer(ClassifierConfig(dataset="circle", n=500), data=(X, y))
    assert t.n_classes == 3 and len(t.X_train) + len(t.X_val) + len(t.X_test) == 90
    together = np.concatenate([t.X_train, t.X_val, t.X_test])
    np.testing.assert_array_equal(together[np.lexsort(together.T)], X[np.lexsort(X.T)])
    t.step(2)
    assert t.predict_grid(5).shape == (5, 5, 3)


# --- divergence -------------------------------------------------------------------------------


@pytest.mark.parametrize("dataset", ["spiral", "xor"])
@pytest.mark.parametrize("lr", [10.0, 1e5])
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.parametrize("network", [{}, {"hidden": (8, 8), "activation": "relu"}])
def test_huge_learning_rates_never_leave_nan(dataset, lr, optimizer, network):
    t = Trainer(ClassifierConfig(dataset=dataset, lr=lr, optimizer=optimizer, **network))
    t.step(20)
    for record in t.history:
        assert all(np.isfinite(v) for k, v in record.items() if k != "epoch")
    for W, b in t.layers():
        assert np.all(np.abs(W) <= 1e6) and np.all(np.abs(b) <= 1e6)  # also false for NaN
    assert np.all(np.isfinite(t.predict_grid(10)))


def test_exploding_weights_are_divergence_even_with_a_finite_loss():
    # dead ReLUs keep the loss finite while the weights run off to ~1e15
    t = Trainer(ClassifierConfig(dataset="spiral", lr=10.0, hidden=(8, 8, 8, 8), activation="relu"))
    t.step(150)
    assert t.diverged and t.epoch < 150
    assert max(np.abs(W).max() for W, _ in t.layers()) <= 1e6


def test_divergence_restores_the_state_before_the_failing_epoch():
    config = ClassifierConfig(problem="regression", dataset="plane", lr=3.0, hidden=(8, 8), activation="linear")
    t = Trainer(config)
    before = t.layers()
    for _ in range(50):
        before = t.layers()
        t.step()
        if t.diverged:
            break
    assert t.diverged
    for (W, b), (W0, b0) in zip(t.layers(), before, strict=True):
        np.testing.assert_array_equal(W, W0)
        np.testing.assert_array_equal(b, b0)
    epoch, history = t.epoch, list(t.history)
    assert epoch == len(history)
    t.step(3)  # a no-op now
    assert t.epoch == epoch and t.history == history
    for (W, b), (W0, b0) in zip(t.layers(), before, strict=True):
        np.testing.assert_array_equal(W, W0)
        np.testing.assert_array_equal(b, b0)


def test_a_non_finite_weight_is_divergence_even_with_a_finite_loss():
    t = Trainer(ClassifierConfig(n=100, hidden=(3,)))
    layers = t.layers()
    layers[0][0][0, 0] = np.inf  # tanh saturates to ±1: outputs and loss stay finite
    set_layers(t, layers)
    t.step()
    assert t.diverged and t.epoch == 0 and t.history == []


def test_sane_learning_rate_does_not_diverge():
    t = Trainer(ClassifierConfig(n=100))
    t.step(20)
    assert not t.diverged and t.epoch == 20


@pytest.mark.parametrize("dataset", ["circle", "xor", "spiral"])
def test_learning_rate_ten_on_the_defaults_is_divergence_by_overshooting(dataset):
    # the saturated tanh net stays finite, but its loss jumps far above a constant guess's
    t = Trainer(ClassifierConfig(dataset=dataset, lr=10.0))
    t.step(100)
    assert t.diverged and t.divergence == "overshoot"
    assert t.recent_train_loss() > OVERSHOOT * t.baseline_loss
    epoch = t.epoch
    t.step(5)
    assert t.epoch == epoch  # stopped for good


@pytest.mark.parametrize("dataset", CLASSIFICATION_DATASETS)
@pytest.mark.parametrize("loss", ["cross_entropy", "squared_error"])
def test_ordinary_training_is_never_called_overshooting(dataset, loss):
    t = Trainer(ClassifierConfig(dataset=dataset, loss=loss, noise=0.3, lr=0.1))
    t.step(60)
    assert not t.diverged


def test_constant_guess_loss_is_the_entropy_of_the_class_shares():
    t = Trainer(ClassifierConfig(dataset="blobs3", n=300))
    share = np.bincount(t.y_train, minlength=3) / len(t.y_train)
    assert t.baseline_loss == pytest.approx(-(share * np.log(share)).sum(), rel=1e-5)
    r = Trainer(ClassifierConfig(problem="regression", dataset="plane"))
    assert r.baseline_loss == pytest.approx(np.var(r.y_train), rel=1e-4)


# --- grids ------------------------------------------------------------------------------------


def test_predict_grid_orientation_with_a_hand_set_model():
    t = Trainer(ClassifierConfig(hidden=()))
    set_layers(t, [(np.array([[0.0, 1.0]], np.float32), np.array([0.0], np.float32))])  # logit = x2
    grid = t.predict_grid(7)
    assert grid.shape == (7, 7, 2)
    np.testing.assert_allclose(grid[0, :, 1], sigmoid(6.0), rtol=1e-6)  # row 0 is the top, y = +6
    np.testing.assert_allclose(grid[-1, :, 1], sigmoid(-6.0), rtol=1e-5)
    np.testing.assert_allclose(grid[3, :, 1], 0.5)
    set_layers(t, [(np.array([[1.0, 0.0]], np.float32), np.array([0.0], np.float32))])  # logit = x1
    grid = t.predict_grid(7)
    np.testing.assert_allclose(grid[:, 0, 1], sigmoid(-6.0), rtol=1e-5)  # column 0 is x = -6
    np.testing.assert_allclose(grid[:, -1, 1], sigmoid(6.0), rtol=1e-6)
    np.testing.assert_allclose(grid.sum(axis=2), 1.0, rtol=1e-6)


def test_grids_match_pointwise_predictions():
    t = Trainer(ClassifierConfig(hidden=(5, 3), features=("x1", "x2", "x1x2", "sinx1")))
    t.step(2)
    res = 9
    axis = np.linspace(-6, 6, res)
    points = np.array([[x, y] for y in axis[::-1] for x in axis], dtype=np.float32)
    grid = t.predict_grid(res).reshape(-1, 2)
    np.testing.assert_allclose(grid, t.predict_proba(points), rtol=1e-5, atol=1e-6)
    hidden_ref = numpy_forward(t.layers(), feature_matrix(points, t.config.features), "tanh")[:-1]
    acts = t.grid_activations(res)
    assert [a.shape for a in acts] == [(res, res, 5), (res, res, 3)]
    for act, ref in zip(acts, hidden_ref, strict=True):
        np.testing.assert_allclose(act.reshape(-1, act.shape[-1]), ref, rtol=1e-4, atol=1e-5)
    inputs = t.input_grids(res)
    assert inputs.shape == (res, res, 4)
    assert inputs[0, 0, 0] == -6 and inputs[0, -1, 0] == 6 and inputs[0, 0, 1] == 6 and inputs[-1, 0, 1] == -6
    np.testing.assert_allclose(inputs[..., 2], inputs[..., 0] * inputs[..., 1], rtol=1e-6)


def test_softmax_grid_sums_to_one():
    t = Trainer(ClassifierConfig(dataset="spiral3", hidden=(6,)))
    t.step(3)
    grid = t.predict_grid(30)
    assert grid.shape == (30, 30, 3)
    np.testing.assert_allclose(grid.sum(axis=2), 1.0, rtol=1e-5)
    assert np.all(grid >= 0)


def test_layers_are_copies_in_out_in_shape():
    t = Trainer(ClassifierConfig(hidden=(4, 2), features=("x1", "x2", "x1sq")))
    shapes = [(W.shape, b.shape) for W, b in t.layers()]
    assert shapes == [((4, 3), (4,)), ((2, 4), (2,)), ((1, 2), (1,))]
    W, _ = t.layers()[0]
    W[:] = 99
    assert not np.any(t.layers()[0][0] == 99)
