"""sim.nets.fastnet against a torch-autograd reference: same weights, batches and dropout masks, same results."""
import threading

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from numba.core.caching import NullCache

from sim.core.data import feature_matrix, make_classification, make_regression, split
from sim.nets import fastnet
from sim.nets.fastnet import ACTIVATIONS, OPTIMIZERS, FastNet, constant_guess_loss, regularizer

LR = {"sgd": 0.1, "momentum": 0.05, "adam": 0.01, "adamw": 0.01}
OUTPUTS = [("regression", True), ("binary", False), ("binary", True), ("softmax", False), ("softmax", True)]
N_TRAIN, BATCH, EPOCHS = 47, 10, 10  # 5 mini-batches an epoch (the last of 7 points): 50 steps
HIDDEN = (5, 3)


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """The reference's tiny ops on one thread: on a busy machine a second one only spins."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _data(kind: str, seed: int = 0):
    """3 features of random points, train and test targets of the kind (3 classes for softmax)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (N_TRAIN + 20, 3))
    if kind == "regression":
        y = np.tanh(X[:, 0] - 2 * X[:, 1] * X[:, 2])
    elif kind == "binary":
        y = (X[:, 0] * X[:, 1] > 0).astype(float)
    else:
        y = np.digitize(X[:, 0] + X[:, 2], [-0.5, 0.5]).astype(float)
    return X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:]


def _n_out(kind: str) -> int:
    return 3 if kind == "softmax" else 1


class Reference:
    """The lab's MLP written with torch ops, autograd and torch.optim, in float64."""

    def __init__(self, net: FastNet, activation, kind, squared, optimizer, lr, l1, l2, decay, dropout):
        self.weights = [torch.tensor(W.T, requires_grad=True) for W, _ in net.layers()]  # (in, out)
        self.biases = [torch.tensor(b, requires_grad=True) for _, b in net.layers()]
        self.act = {"relu": torch.relu, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "linear": lambda x: x}[activation]
        self.kind, self.squared, self.l1, self.l2, self.dropout = kind, squared, l1, l2, dropout
        groups = [{"params": self.weights, "weight_decay": decay}, {"params": self.biases, "weight_decay": 0.0}]
        if optimizer in ("sgd", "momentum"):
            momentum = 0.9 if optimizer == "momentum" else 0.0
            self.opt = torch.optim.SGD(self.weights + self.biases, lr=lr, momentum=momentum)
        elif optimizer == "adam":
            self.opt = torch.optim.Adam(self.weights + self.biases, lr=lr, betas=(0.9, 0.999), eps=1e-8)
        else:
            self.opt = torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.999), eps=1e-8)

    def forward_all(self, x, masks=None):
        outs = []
        for layer, (W, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            x = torch.addmm(b, x, W)
            if layer < len(self.weights) - 1:
                x = self.act(x)
                if masks is not None:
                    x = x * masks[layer] / (1 - self.dropout)
            outs.append(x)
        return outs

    def loss(self, z, t):
        if self.kind == "regression":
            return F.mse_loss(z, t.unsqueeze(1))
        if self.kind == "binary":
            t = t.unsqueeze(1)
            return F.mse_loss(torch.sigmoid(z), t) if self.squared else F.binary_cross_entropy_with_logits(z, t)
        labels = t.long()
        if self.squared:
            return F.mse_loss(torch.softmax(z, 1), F.one_hot(labels, z.shape[1]).double())
        return F.cross_entropy(z, labels)

    def train(self, X, y, X_test, y_test, orders, drop_u, batch):
        X, y = torch.from_numpy(X), torch.from_numpy(y)
        widths = [W.shape[1] for W in self.weights[:-1]]
        starts = np.cumsum([0] + widths)
        records = []
        for e, order in enumerate(orders):
            for a in range(0, len(order), batch):
                idx = torch.from_numpy(order[a:a + batch])
                masks = None
                if self.dropout > 0:
                    u = torch.from_numpy(drop_u[e, a:a + batch])
                    masks = [(u[:, s:s + w] >= self.dropout).double() for s, w in zip(starts[:-1], widths, strict=True)]
                loss = self.loss(self.forward_all(X[idx], masks)[-1], y[idx])
                loss = loss + self.l1 * sum(W.abs().sum() for W in self.weights)
                loss = loss + self.l2 * sum((W * W).sum() for W in self.weights)  # the course's λΣw²
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            records.append(self.evaluate(X, y) + self.evaluate(torch.from_numpy(X_test), torch.from_numpy(y_test)))
        top = max(float(p.detach().abs().max()) for p in self.weights + self.biases)
        return np.array(records)[:, [0, 2, 1, 3]], top

    @torch.no_grad()
    def evaluate(self, X, y):
        z = self.forward_all(X)[-1]
        if self.kind == "regression":
            return (float(self.loss(z, y)), np.nan)
        right = (z[:, 0] > 0).double() == y if self.kind == "binary" else z.argmax(1) == y.long()
        return (float(self.loss(z, y)), float(right.double().mean()))

    def layers(self):
        return [(W.detach().numpy().T, b.detach().numpy()) for W, b in zip(self.weights, self.biases, strict=True)]


def _compare(activation, kind, squared, optimizer, regularization, dropout, seed=0, hidden=HIDDEN, batch=BATCH,
             epochs=EPOCHS):
    l1, l2, decay = regularizer(optimizer, regularization, 0.02, weight_decay=0.05)
    sizes = (3, *hidden, _n_out(kind))
    args = (activation, kind, squared, optimizer, LR[optimizer], l1, l2, decay, dropout)
    net = FastNet(sizes, *args, batch_size=batch, seed=seed)
    ref = Reference(net, *args)
    X, y, X_test, y_test = _data(kind, seed)
    rng = np.random.default_rng(seed + 100)
    orders = np.stack([rng.permutation(N_TRAIN) for _ in range(epochs)])
    drop_u = rng.random((epochs, N_TRAIN, sum(hidden)))
    records = net.train_with(X, y, X_test, y_test, orders, drop_u)
    expected, top = ref.train(X, y, X_test, y_test, orders, drop_u, batch)
    assert net.divergence is None and len(records.epoch) == epochs
    for (W, b), (W_ref, b_ref) in zip(net.layers(), ref.layers(), strict=True):
        np.testing.assert_allclose(W, W_ref, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(b, b_ref, rtol=1e-6, atol=1e-6)
    got = np.stack([records.train_loss, records.test_loss, records.train_acc, records.test_acc], axis=1)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    assert records.max_param[-1] == pytest.approx(top, abs=1e-6)
    # the weights moved: the comparison is not trivially between two untrained nets
    assert not np.allclose(net.layers()[0][0], FastNet(sizes, *args, seed=seed).layers()[0][0], atol=1e-3)
    return net, ref


@pytest.mark.parametrize("regularization", ["none", "l1", "l2"])
@pytest.mark.parametrize("kind,squared", OUTPUTS)
@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_matches_torch_reference(optimizer, activation, kind, squared, regularization):
    _compare(activation, kind, squared, optimizer, regularization, dropout=0.0)


@pytest.mark.parametrize("kind,squared", OUTPUTS)
@pytest.mark.parametrize("activation", ["relu", "tanh"])
@pytest.mark.parametrize("optimizer,regularization", [("sgd", "none"), ("momentum", "l1"), ("adam", "l2"),
                                                      ("adamw", "l2")])
def test_matches_torch_reference_with_dropout(optimizer, regularization, activation, kind, squared):
    _compare(activation, kind, squared, optimizer, regularization, dropout=0.3, seed=1)


@pytest.mark.parametrize("batch,epochs", [(1, 2), (3, 3), (8, 5), (30, 20), (47, 20), (64, 20)])
@pytest.mark.parametrize("kind,squared", [("binary", False), ("softmax", True)])
def test_matches_torch_reference_at_every_batch_size(batch, epochs, kind, squared):
    """Batches below WIDE points run the per-point loops, larger ones the vectorised ones; a batch
    larger than the training set is the whole set."""
    _compare("sigmoid", kind, squared, "adamw", "l1", dropout=0.25, batch=batch, epochs=epochs)


def test_no_hidden_layer_and_deep_net():
    """Logistic regression (no hidden layer) and the deepest, widest net of the lab."""
    _compare("relu", "softmax", False, "adam", "l2", dropout=0.0, hidden=())
    _compare("relu", "softmax", False, "adam", "l2", dropout=0.2, hidden=(8,) * 6)


def test_predictions_match_reference_and_shapes():
    for kind, squared in OUTPUTS:
        net, ref = _compare("tanh", kind, squared, "adam", "none", dropout=0.0)
        points = np.random.default_rng(5).uniform(-1, 1, (2500, 3))  # a 50 × 50 grid's worth
        outs = net.forward_all(points)
        expected = [o.detach().numpy() for o in ref.forward_all(torch.from_numpy(points))]
        assert [o.shape for o in outs[:-1]] == [(2500, w) for w in HIDDEN]
        for got, want in zip(outs[:-1], expected[:-1], strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
        z = torch.from_numpy(expected[-1])
        if kind == "binary":
            p = torch.sigmoid(z).numpy()
            want = np.concatenate([1 - p, p], axis=1)
        else:
            want = torch.softmax(z, 1).numpy() if kind == "softmax" else z.numpy()
        assert outs[-1].shape == want.shape == (2500, {"regression": 1, "binary": 2, "softmax": 3}[kind])
        np.testing.assert_allclose(outs[-1], want, rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(net.predict(points), outs[-1])
        if kind != "regression":
            np.testing.assert_allclose(outs[-1].sum(axis=1), 1.0, atol=1e-12)
        X, y, _, _ = _data(kind)
        assert net.evaluate(X, y) == pytest.approx(ref.evaluate(torch.from_numpy(X), torch.from_numpy(y)),
                                                   abs=1e-12, nan_ok=True)


def test_layers_round_trip():
    net = FastNet((7, 8, 4, 1), "relu", "binary", False, "sgd", 0.03, seed=3)
    layers = net.layers()
    assert [(W.shape, b.shape) for W, b in layers] == [((8, 7), (8,)), ((4, 8), (4,)), ((1, 4), (1,))]
    assert all(np.all(np.abs(W) <= 0.5) and np.all(b == 0.1) for W, b in layers)  # Playground init
    other = FastNet((7, 8, 4, 1), "relu", "binary", False, "sgd", 0.03, seed=4)
    other.set_layers(layers)
    np.testing.assert_array_equal(other.params, net.params)
    with pytest.raises(ValueError):
        other.set_layers(layers[:2])


def _circle(seed=0):
    """The lab's default data: 500 points of the circle, half of them for training, features x1, x2."""
    X, y = make_classification("circle", 500, 0.0, seed)
    train, test = split(len(X), 0.5, seed)
    features = feature_matrix(X, ("x1", "x2")).astype(np.float64)
    return features[train], y[train].astype(np.float64), features[test], y[test].astype(np.float64)


def test_invalid_configurations_are_refused():
    good = dict(sizes=(2, 4, 1), activation="tanh", kind="binary", squared=False, optimizer="sgd", lr=0.03)
    FastNet(**good)
    for change in ({"activation": "gelu"}, {"kind": "poisson"}, {"optimizer": "lion"}, {"sizes": (2,)},
                   {"sizes": (2, 0, 1)}, {"sizes": (2, 4, 2)}, {"kind": "softmax"}, {"dropout": 1.0},
                   {"batch_size": 0}):
        with pytest.raises(ValueError):
            FastNet(**{**good, **change})


def test_seed_determinism_and_chunking(monkeypatch):
    """The same seed trains the same run, however the epochs are split into calls and kernel chunks."""
    data = _circle()

    def make(seed=0):
        return FastNet((2, 6, 3, 1), "relu", "binary", False, "adam", 0.03, dropout=0.2, seed=seed)

    whole, parts, chunked, other = make(), make(), make(), make(1)
    r_whole = whole.train(*data, 20)
    r_parts = [parts.train(*data, k) for k in (7, 1, 12)]
    monkeypatch.setattr(fastnet, "CHUNK_VALUES", 1)  # one epoch per kernel call
    r_chunked = chunked.train(*data, 20)
    r_other = other.train(*data, 20)
    for net, records in ((parts, np.concatenate([r.train_loss for r in r_parts])), (chunked, r_chunked.train_loss)):
        np.testing.assert_array_equal(net.params, whole.params)
        np.testing.assert_array_equal(net.m, whole.m)
        np.testing.assert_array_equal(records, r_whole.train_loss)
    np.testing.assert_array_equal(np.concatenate([r.epoch for r in r_parts]), np.arange(1, 21))
    assert whole.epoch == 20
    assert not np.array_equal(r_other.train_loss, r_whole.train_loss)


def _plane(seed=0):
    """The lab's regression data "plane": 500 points, half for training, features x1, x2."""
    X, y = make_regression("plane", 500, 0.0, seed)
    train, test = split(len(X), 0.5, seed)
    features = feature_matrix(X, ("x1", "x2")).astype(np.float64)
    return features[train], y[train].astype(np.float64), features[test], y[test].astype(np.float64)


def test_blowup_restores_the_state_before_that_epoch():
    data = _plane()

    def make():
        return FastNet((2, 8, 8, 1), "tanh", "regression", True, "momentum", 0.25, seed=0)

    net = make()
    for _ in range(100):
        before = net.state()
        records = net.train(*data, 1)
        if net.diverged:
            break
    assert net.divergence == "blowup" and len(records.epoch) == 0 and net.epoch > 3
    for a, b in zip(net.state()["arrays"], before["arrays"], strict=True):
        np.testing.assert_array_equal(a, b)  # parameters, momentum buffers, history ring, epoch count
    assert np.all(np.isfinite(net.params)) and np.abs(net.params).max() <= fastnet.DIVERGED
    # one call over many epochs stops at the same epoch, in the same state
    again = make()
    records = again.train(*data, 100)
    assert again.divergence == "blowup" and len(records.epoch) == net.epoch == again.epoch
    for a, b in zip(again.state()["arrays"], before["arrays"], strict=True):
        np.testing.assert_array_equal(a, b)
    assert len(again.train(*data, 5).epoch) == 0  # stopped for good


def test_relu_at_learning_rate_ten_blows_up_and_keeps_its_initial_weights():
    net = FastNet((2, 8, 8, 1), "relu", "regression", True, "sgd", 10.0, seed=0)
    start = net.params.copy()
    records = net.train(*_plane(), 50)
    assert net.divergence == "blowup" and len(records.epoch) == 0 and net.epoch == 0
    np.testing.assert_array_equal(net.params, start)


def test_a_non_finite_weight_is_blowup_even_with_a_finite_loss():
    net = FastNet((2, 3, 1), "tanh", "binary", False, "adam", 0.03, seed=0)
    layers = net.layers()
    layers[0][0][0, 0] = np.inf  # tanh saturates to ±1: the outputs and the loss stay finite
    net.set_layers(layers)
    assert net.train(*_circle(), 3).epoch.size == 0 and net.divergence == "blowup"
    assert np.isinf(net.params[0]) and net.t[0] == 0  # the state before the epoch, optimizer included


def test_overshoot_keeps_the_weights():
    data = _circle()

    def make():
        return FastNet((2, 4, 2, 1), "tanh", "binary", False, "sgd", 0.03, seed=0)

    net, plain = make(), make()
    baseline = constant_guess_loss("binary", False, data[1], 2)
    records = net.train(*data, 50, overshoot_above=0.0)  # any loss is an overshoot once 10 epochs are in
    assert net.divergence == "overshoot" and len(records.epoch) == fastnet.OVERSHOOT_WINDOW
    plain.train(*data, fastnet.OVERSHOOT_WINDOW, overshoot_above=fastnet.OVERSHOOT * baseline)
    assert plain.divergence is None
    np.testing.assert_array_equal(net.params, plain.params)
    # the rule reads the window across calls: 9 epochs then 1 more also stop
    split_net = make()
    split_net.train(*data, 9, overshoot_above=0.0)
    assert split_net.divergence is None
    assert len(split_net.train(*data, 5, overshoot_above=0.0).epoch) == 1 and split_net.divergence == "overshoot"


@pytest.mark.parametrize("seed", [0, 1])
def test_overshoot_of_a_saturated_tanh_net(seed):
    """lr = 10 on the defaults: the updates throw the tanh net back and forth without a huge number."""
    data = _circle(seed)
    net = FastNet((2, 4, 2, 1), "tanh", "binary", False, "sgd", 10.0, seed=seed)
    baseline = constant_guess_loss("binary", False, data[1], 2)
    records = net.train(*data, 300, overshoot_above=fastnet.OVERSHOOT * baseline)
    assert net.divergence == "overshoot"
    assert records.train_loss[-fastnet.OVERSHOOT_WINDOW:].mean() > fastnet.OVERSHOOT * baseline
    assert np.all(np.isfinite(records.train_loss)) and records.max_param[-1] < fastnet.DIVERGED


def test_constant_guess_loss():
    y = np.array([0, 1, 1, 1, 2, 2], dtype=float)
    share = np.bincount(y.astype(int)) / len(y)
    assert constant_guess_loss("softmax", False, y, 3) == pytest.approx(-(share * np.log(share)).sum())
    one_hot = np.eye(3)[y.astype(int)]
    assert constant_guess_loss("softmax", True, y, 3) == pytest.approx(((one_hot - share) ** 2).mean())
    b = np.array([0, 1, 1, 1], dtype=float)
    p = 0.75
    assert constant_guess_loss("binary", False, b, 2) == pytest.approx(-(p * np.log(p) + (1 - p) * np.log(1 - p)))
    assert constant_guess_loss("binary", True, b, 2) == pytest.approx(((b - p) ** 2).mean())
    r = np.array([0.5, -0.25, 1.0])
    assert constant_guess_loss("regression", True, r, 1) == pytest.approx(r.var())
    assert constant_guess_loss("regression", True, np.ones(4), 1) == 1e-3  # floor


def test_regularizer_rules():
    assert regularizer("sgd", "l1", 0.1) == (0.1, 0.0, 0.0)
    assert regularizer("adam", "l2", 0.1) == (0.0, 0.1, 0.0)
    assert regularizer("momentum", "none", 0.1) == (0.0, 0.0, 0.0)
    # AdamW: L2 stays a loss term, and its weight decay is its own hyper-parameter, nothing hidden
    assert regularizer("adamw", "l2", 0.1, weight_decay=0.01) == (0.0, 0.1, 0.01)
    assert regularizer("adamw", "l1", 0.1, weight_decay=0.0) == (0.1, 0.0, 0.0)
    assert regularizer("adamw", "none", 0.1) == (0.0, 0.0, 0.0)
    assert regularizer("adam", "none", 0.0, weight_decay=0.3) == (0.0, 0.0, 0.0)  # only AdamW has one


def test_l2_is_rate_times_sum_of_squares():
    """One SGD step with L2 moves each weight by lr·2λw on top of the data gradient (λΣw², as the notes)."""
    X, y = np.array([[0.5, -1.0]]), np.array([1.0])
    plain = FastNet((2, 1), "linear", "binary", False, "sgd", 0.1, seed=3)
    l2 = FastNet((2, 1), "linear", "binary", False, "sgd", 0.1, l2=0.2, seed=3)
    w0 = plain.layers()[0][0].copy()
    for net in (plain, l2):
        net.train_with(X, y, X, y, np.array([[0]]), np.empty((0, 0, 0)))
    np.testing.assert_allclose(l2.layers()[0][0] - plain.layers()[0][0], -0.1 * 2 * 0.2 * w0, rtol=1e-12)


def test_adamw_weight_decay_is_decoupled_from_the_gradient():
    """Decoupled (Loshchilov & Hutter): with a zero data gradient an AdamW step only shrinks the weights by
    lr·decay, while the same rate as L2 in the loss would go through Adam's normalisation (a step of ~lr)."""
    X, y = np.zeros((1, 2)), np.array([0.0])  # zero inputs: the weights' data gradient is exactly 0
    decayed = FastNet((2, 1), "linear", "regression", True, "adamw", 0.1, decay=0.5, seed=4)
    coupled = FastNet((2, 1), "linear", "regression", True, "adam", 0.1, l2=0.5 / 2, seed=4)
    w0 = decayed.layers()[0][0].copy()
    for net in (decayed, coupled):
        net.train_with(X, y, X, y, np.array([[0]]), np.empty((0, 0, 0)))
    np.testing.assert_allclose(decayed.layers()[0][0], w0 * (1 - 0.1 * 0.5), rtol=1e-12)
    np.testing.assert_allclose(coupled.layers()[0][0], w0 - 0.1 * np.sign(w0), rtol=1e-6)  # Adam: step ≈ lr


def test_inverted_dropout_scales_kept_units_in_training_and_is_off_in_evaluation():
    """Inverted dropout: in training a kept unit is divided by (1 - p), so a net whose units are all kept
    trains exactly as the same net without dropout whose next layer's weights are divided by (1 - p);
    evaluation uses no mask and no scaling."""
    p = 0.25
    X, y = np.array([[0.3, -0.7], [1.1, 0.4]]), np.array([1.0, 0.0])
    order, kept = np.array([[0, 1]]), np.ones((1, 2, 3))  # every uniform >= p: every unit kept
    dropped = FastNet((2, 3, 1), "tanh", "binary", False, "sgd", 0.5, dropout=p, batch_size=2, seed=5)
    scaled = FastNet((2, 3, 1), "tanh", "binary", False, "sgd", 0.5, batch_size=2, seed=5)
    unscaled = FastNet((2, 3, 1), "tanh", "binary", False, "sgd", 0.5, batch_size=2, seed=5)
    (W1, b1), (W2, b2) = dropped.layers()
    scaled.set_layers([(W1, b1), (W2 / (1 - p), b2)])
    # evaluation: dropout is off, the dropout net predicts as the plain net with the same weights
    np.testing.assert_allclose(dropped.predict(X), unscaled.predict(X), rtol=0, atol=0)
    for net in (dropped, scaled, unscaled):
        net.train_with(X, y, X, y, order, kept if net is dropped else np.empty((0, 0, 0)))
    # the output bias moves by -lr·dL/dz: equal when the forward pass was scaled by 1/(1-p), not otherwise
    assert dropped.layers()[1][1][0] == pytest.approx(scaled.layers()[1][1][0], abs=1e-12)
    assert abs(dropped.layers()[1][1][0] - unscaled.layers()[1][1][0]) > 1e-4


def test_binary_sigmoid_output_is_a_two_class_softmax():
    """sigmoid(z) = softmax([0, z])[1]: the binary net's probabilities are a two-class softmax of (0, z)."""
    net = FastNet((2, 1), "linear", "binary", False, "sgd", 0.1, seed=6)
    X = np.random.default_rng(0).normal(size=(50, 2))
    (W, b), = net.layers()
    z = X @ W[0] + b[0]
    two = torch.softmax(torch.stack([torch.zeros(50, dtype=torch.float64), torch.from_numpy(z)], 1), 1).numpy()
    np.testing.assert_allclose(net.predict(X), two, rtol=1e-12, atol=1e-14)


def test_kernels_release_the_gil_and_compile_once():
    net = FastNet((2, 4, 1), "relu", "regression", True, "adamw", 0.01, dropout=0.1, seed=0)
    X, y, X_test, y_test = _data("regression")
    net.train(X[:, :2], y, X_test[:, :2], y_test, 2)
    net.forward_all(X[:, :2])
    net.evaluate(X[:, :2], y)
    for kernel in (fastnet._train, fastnet._evaluate, fastnet._forward_all):
        assert kernel.targetoptions["nogil"] is True
        assert not isinstance(kernel._cache, NullCache)  # compiled code is stored on disk for the next process
        assert len(kernel.signatures) == 1  # one compiled specialisation, whatever the config


def test_threads_train_independently():
    """Sessions train in threads at once (the GIL is released): each gets exactly its sequential result."""
    data = _circle()

    def make(seed):
        return FastNet((2, 8, 8, 1), "tanh", "binary", False, "adam", 0.01, dropout=0.1, seed=seed)

    expected = []
    for seed in range(4):
        net = make(seed)
        net.train(*data, 30)
        expected.append(net.params)
    nets = [make(seed) for seed in range(4)]
    threads = [threading.Thread(target=net.train, args=(*data, 30)) for net in nets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for net, params in zip(nets, expected, strict=True):
        np.testing.assert_array_equal(net.params, params)


def _map(fn, x):
    return np.array([fn(v) for v in x])


def _ulps(got, want):
    return np.abs(got - want) / np.spacing(np.maximum(np.abs(want), np.finfo(float).tiny))


def test_elementary_functions_match_libm():
    """exp, tanh, sigmoid and log are written out in the kernels (so that loops vectorise): libm's values
    to a few units in the last place, and the same inf/NaN/limits."""
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-1, 1, 3000), rng.uniform(-40, 40, 3000), rng.uniform(-745, 709, 2000),
                        rng.uniform(-1e-6, 1e-6, 1000), [0.0, 1e-300, -1e-300, 0.5 * np.log(2), 20.0, -20.0],
                        [709.7, 709.78, -708.4, -744.4, -745.1]])  # near the largest and below the smallest normal
    assert _ulps(_map(fastnet._exp, x), np.exp(x)).max() <= 1
    assert _ulps(_map(fastnet._tanh, x), np.tanh(x)).max() <= 3
    with np.errstate(over="ignore"):
        sigmoid = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(_map(fastnet._sigmoid, x), sigmoid, rtol=1e-15, atol=0)
    y = np.concatenate([1 + rng.uniform(0, 1, 3000), rng.uniform(1, 100, 3000), np.exp(rng.uniform(0, 700, 1000)),
                        [1.0, np.nextafter(1.0, 2), np.sqrt(2), 2.0]])
    assert _ulps(_map(fastnet._log, y), np.log(y)).max() <= 2
    special = np.array([np.inf, -np.inf, np.nan, 800.0, -800.0, 1e300, -1e300])
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(_map(fastnet._exp, special), np.exp(special))
    np.testing.assert_array_equal(_map(fastnet._tanh, special), np.tanh(special))
    np.testing.assert_array_equal(_map(fastnet._log, [np.inf, np.nan]), [np.inf, np.nan])


@pytest.mark.parametrize("kind,squared", OUTPUTS)
def test_losses_stay_exact_for_huge_logits(kind, squared):
    """Logits in the hundreds (a saturated net): the stable forms give torch's finite losses."""
    net = FastNet((3, _n_out(kind)), "linear", kind, squared, "sgd", 0.1, seed=0)
    X, y, _, _ = _data(kind)
    layers = [(W * 600.0, b * 100.0) for W, b in net.layers()]
    net.set_layers(layers)
    ref = Reference(net, "linear", kind, squared, "sgd", 0.1, 0.0, 0.0, 0.0, 0.0)
    want = ref.evaluate(torch.from_numpy(X), torch.from_numpy(y))
    got = net.evaluate(X, y)
    assert np.isfinite(got[0])
    assert got == pytest.approx(want, rel=1e-12, abs=1e-12, nan_ok=True)
