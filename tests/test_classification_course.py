"""The classification lab against the course: three-way split (tune on validation, test once), AdamW's weight
decay shown, the λΣw² convention, what the model is called (logistic regression, a linear net stays linear),
and class imbalance (accuracy looks good, the PR curve does not)."""
import numpy as np
import pytest

from apptools import live_model, open_lab, texts
from apptools import metrics as page_metrics
from sim.core.data import make_classification, split
from sim.nets import metrics
from sim.nets.training import ClassifierConfig, Trainer, affine_formula, collapse_linear, holdout_report, model_notes
from ui.i18n import catalogue

CLS = "labs/classification/page.py"
KEY = "cls"  # the lab's live run: live_model(at, KEY) is the model at the session's step
EN = catalogue("en")


def cls_page(lang="en", **query):
    return open_lab(CLS, lang, **query)



# --- 1. train / validation / test ------------------------------------------------------------------


def test_three_disjoint_sets_and_the_old_training_set():
    config = ClassifierConfig(n=500, train_ratio=0.6, val_ratio=0.5, seed=3)
    t = Trainer(config)
    assert (len(t.X_train), len(t.X_val), len(t.X_test)) == (300, 100, 100)
    X, _ = make_classification("circle", 500, 0.0, 3)
    rows = lambda A: {tuple(r) for r in A}  # noqa: E731
    assert not rows(t.X_train) & rows(t.X_val) and not rows(t.X_val) & rows(t.X_test)
    assert not rows(t.X_train) & rows(t.X_test)
    # an old link (train_ratio only) trains on exactly the points it trained on before validation existed
    np.testing.assert_array_equal(t.X_train, X[split(500, 0.6, 3)[0]])


def test_training_is_monitored_on_validation_and_never_reads_the_test_set():
    t = Trainer(ClassifierConfig(n=200, seed=1))
    t.step(5)
    p = t.predict_proba(t.X_val)
    assert t.history[-1]["val_acc"] == pytest.approx(np.mean(p.argmax(1) == t.y_val))
    assert "test_loss" not in t.history[-1] and "test_acc" not in t.history[-1]
    # relabelling the test set changes nothing of training or its record
    u = Trainer(ClassifierConfig(n=200, seed=1))
    u.y_test = 1 - u.y_test
    u.step(5)
    assert u.history == t.history


def test_test_evaluation_only_on_request_and_dropped_when_the_model_changes():
    from sklearn.metrics import average_precision_score, roc_auc_score

    t = Trainer(ClassifierConfig(n=300, dataset="gauss", noise=0.3, seed=2))
    t.step(3)
    assert t.current_test_evaluation() is None
    r = t.evaluate_test(threshold=0.4)
    p = t.predict_proba(t.X_test)[:, 1]
    assert r["epoch"] == 3 and r["n"] == len(t.y_test) and r["threshold"] == 0.4
    assert r["accuracy"] == pytest.approx(np.mean((p >= 0.4) == t.y_test))
    assert r["auc"] == pytest.approx(roc_auc_score(t.y_test, p))
    assert r["ap"] == pytest.approx(average_precision_score(t.y_test, p))
    assert t.current_test_evaluation() is r
    t.step(1)
    assert t.current_test_evaluation() is None  # the model changed: the old figures no longer apply


def test_test_report_of_several_classes_is_accuracy():
    proba = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [0.3, 0.4, 0.3]])
    assert holdout_report(np.array([0, 2, 0]), proba, 0.5) == {"threshold": None, "n": 3, "accuracy": 2 / 3}


def test_the_default_split_is_one_the_notes_teach():
    """The notes: 60-80 % training, 10-20 % validation, 10-20 % test (the generalisation lab's own ranges)."""
    from labs.classification.schema import SCHEMA
    from labs.generalization.schema import SCHEMA as GEN

    default = {p.name: p.default for p in SCHEMA}
    train, val = default["train_ratio"], (1 - default["train_ratio"]) * default["val_ratio"]
    gen = {p.name: p for p in GEN}
    assert gen["train"].lo <= train <= gen["train"].hi and gen["val"].lo <= val <= gen["val"].hi
    assert 0.1 <= 1 - train - val <= 0.2
    at = cls_page()
    with live_model(at, KEY) as run:
        assert (len(run.trainer.y_train), len(run.trainer.y_val), len(run.trainer.y_test)) == (350, 75, 75)
    assert EN["cls.split_sizes"].format(train=350, val=75, test=75) in texts(at)


def test_page_tunes_on_validation_and_tests_once_on_request():
    at = cls_page(n="200", train_ratio="0.5", val_ratio="0.4")
    with live_model(at, KEY) as run:
        assert (len(run.trainer.y_train), len(run.trainer.y_val), len(run.trainer.y_test)) == (100, 40, 60)
    shown = page_metrics(at)
    assert shown[EN["cls.metric.n_val"]] == "40" and EN["cls.metric.n_test"] not in shown
    assert EN["cls.split_sizes"].format(train=100, val=40, test=60) in texts(at)
    assert EN["cls.test.not_yet"] in texts(at) and "validation set" in EN["cls.threshold_help"]
    for _ in range(2):
        next(b for b in at.button if b.label == EN["cls.step"]).click().run()
    next(b for b in at.button if b.label == EN["cls.test.button"]).click().run()
    shown = page_metrics(at)
    assert shown[EN["cls.metric.n_test"]] == "60" and EN["cls.metric.ap"] in shown
    # the model at the session's step (epoch 2), as a run of its own built from the same settings shows it
    from labs.classification.live import live_spec
    from labs.classification.schema import SCHEMA

    own = live_spec({**{p.name: p.default for p in SCHEMA}, "n": 200, "train_ratio": 0.5, "val_ratio": 0.4}).build()
    own.advance(2)
    tr = own.trainer
    report = holdout_report(tr.y_test, tr.predict_proba(tr.X_test), at.slider(key="cls.threshold").value)
    assert shown[EN["cls.metric.auc"]] == f"{report['auc']:.3f}" and shown[EN["cls.metric.ap"]] == f"{report['ap']:.3f}"
    assert EN["cls.test.at"].format(epoch=2, thr=f"{report['threshold']:.2f}") in texts(at)
    at.run()  # the result stays while the model is the same
    assert page_metrics(at)[EN["cls.metric.n_test"]] == "60"
    next(b for b in at.button if b.label == EN["cls.step"]).click().run()
    assert EN["cls.metric.n_test"] not in page_metrics(at) and EN["cls.test.stale"] in texts(at)
    assert not at.exception


def test_old_links_keep_working():
    at = cls_page(train_ratio="0.9", show_test="1", optimizer="adamw")  # no val_ratio, no weight_decay
    with live_model(at, KEY) as run:
        trainer = run.trainer
    assert not at.exception and not at.error
    assert not [w for w in at.warning if EN["cls.val_ratio"] in w.value or EN["cls.train_ratio"] in w.value]
    assert (len(trainer.y_train), len(trainer.y_val), len(trainer.y_test)) == (450, 25, 25)
    assert at.toggle(key="cls.show_test").value and trainer.net.decay == 0.01  # AdamW's decay as before


# --- 2. AdamW's weight decay -----------------------------------------------------------------------


def test_no_hidden_weight_decay():
    """Before, AdamW with "Regularisation: none" still decayed by 0.01 whatever was chosen."""
    t = Trainer(ClassifierConfig(optimizer="adamw", weight_decay=0.0))
    assert (t.net.l1, t.net.l2, t.net.decay) == (0.0, 0.0, 0.0)
    t = Trainer(ClassifierConfig(optimizer="adamw", regularization="l2", reg_rate=0.1, weight_decay=0.03))
    assert (t.net.l2, t.net.decay) == (0.1, 0.03)  # L2 stays in the loss, the decay is AdamW's own
    assert Trainer(ClassifierConfig(optimizer="adam", weight_decay=0.1)).net.decay == 0.0


def test_weight_decay_sits_next_to_the_optimizer_and_is_in_the_url():
    at = cls_page()
    assert at.select_slider(key="cls.weight_decay").disabled  # SGD has no weight decay of its own
    assert EN["cls.weight_decay_off"] in texts(at)
    at = cls_page(optimizer="adamw", weight_decay="0.1")
    assert not at.select_slider(key="cls.weight_decay").disabled
    with live_model(at, KEY) as run:
        assert run.trainer.net.decay == 0.1
    assert EN["cls.weight_decay_help"] in texts(at) and "Loshchilov" in EN["cls.weight_decay_help"]
    at.select_slider(key="cls.weight_decay").set_value(0.0).run()
    assert at.query_params["weight_decay"] == "0.0" or at.query_params["weight_decay"] == "0"
    with live_model(at, KEY) as run:
        assert run.trainer.net.decay == 0.0


# --- 3. λΣw² ---------------------------------------------------------------------------------------


def test_l2_formula_is_stated_next_to_the_rate():
    at = cls_page(regularization="l2", reg_rate="0.1")
    assert EN["cls.reg_formula.l2"] in texts(at) and "λ·Σw²" in EN["cls.reg_formula.l2"]
    assert "½" not in EN["cls.reg_formula.l2"] and "λ·Σw²" in catalogue("zh")["cls.reg_formula.l2"]


# --- 4. what the model is called -------------------------------------------------------------------


def test_model_notes():
    base = ClassifierConfig()
    assert model_notes(ClassifierConfig(hidden=()), 2) == ["logistic_regression", "sigmoid_softmax"]
    assert model_notes(ClassifierConfig(hidden=(), dataset="blobs3"), 3) == ["softmax_regression"]
    assert model_notes(ClassifierConfig(hidden=(), loss="squared_error"), 2) == ["sigmoid_softmax"]
    assert model_notes(ClassifierConfig(problem="regression", dataset="plane", hidden=()), 1) == ["linear_regression"]
    assert model_notes(ClassifierConfig(activation="linear", dropout=0.2), 2) == ["linear", "inverted_dropout",
                                                                                  "sigmoid_softmax"]
    assert model_notes(base, 2) == ["sigmoid_softmax"]


def _logits(trainer, X):
    p = trainer.predict_proba(X)[:, 1]
    return np.log(p) - np.log1p(-p)


def _affine_residual(X, z):
    A = np.column_stack([X, np.ones(len(X))])
    coef, *_ = np.linalg.lstsq(A, z, rcond=None)
    return np.abs(A @ coef - z).max() / max(np.abs(z).max(), 1e-12)


def test_a_trained_linear_activation_network_stays_linear():
    grid = np.stack(np.meshgrid(np.linspace(-6, 6, 25), np.linspace(-6, 6, 25)), -1).reshape(-1, 2)
    linear = Trainer(ClassifierConfig(dataset="xor", activation="linear", hidden=(6, 5, 4), lr=0.03, seed=1))
    curved = Trainer(ClassifierConfig(dataset="xor", activation="tanh", hidden=(6, 5, 4), lr=0.03, seed=1))
    for t in (linear, curved):
        t.step(100)
    assert _affine_residual(grid, _logits(linear, grid)) < 1e-6  # the logit is affine in x1, x2: a straight boundary
    assert _affine_residual(grid, _logits(curved, grid)) > 0.05  # the same net with tanh is not (the test bites)
    # and the one equivalent layer the page shows gives those logits
    W, b = collapse_linear(linear.layers())
    np.testing.assert_allclose(grid @ W[0] + b[0], _logits(linear, grid), rtol=1e-6, atol=1e-6)


def test_collapse_linear_by_hand():
    layers = [(np.array([[1.0, 2.0], [0.0, -1.0]]), np.array([0.5, 1.0])), (np.array([[3.0, 1.0]]), np.array([-2.0]))]
    W, b = collapse_linear(layers)
    np.testing.assert_array_equal(W, [[3.0, 5.0]])  # [3, 1] @ [[1, 2], [0, -1]]
    np.testing.assert_array_equal(b, [1.5 + 1.0 - 2.0])
    assert affine_formula(W[0], float(b[0]), ["x1", "x2"]) == "z = 3·x1 + 5·x2 + 0.5"
    assert affine_formula(np.array([-0.5, 2.0]), -1.25, ["a", "b"]) == "z = −0.5·a + 2·b − 1.25"


def test_page_names_logistic_regression_and_a_linear_network():
    at = cls_page(hidden="none")
    assert EN["cls.note.logistic_regression"] in texts(at) and EN["cls.note.sigmoid_softmax"] in texts(at)
    at = cls_page(activation="linear", dropout="0.2")
    shown = texts(at)
    assert EN["cls.note.linear"] in shown and EN["cls.note.inverted_dropout"] in shown
    with live_model(at, KEY) as run:
        W, b = collapse_linear(run.trainer.layers())
    formula = affine_formula(W[0], float(b[0]), ["x₁", "x₂"])
    assert EN["cls.note.linear_formula"].format(formula=formula) in shown
    assert EN["cls.note.logistic_regression"] not in shown and not at.exception


# --- 5. class imbalance ----------------------------------------------------------------------------


def test_imbalanced_majority_classifier_looks_accurate_but_has_no_precision():
    from sklearn.dummy import DummyClassifier
    from sklearn.metrics import accuracy_score, average_precision_score

    X, y = make_classification("imbalanced", 1000, 0.0, seed=0)
    assert np.mean(y) == pytest.approx(0.1)
    majority = DummyClassifier(strategy="most_frequent").fit(X, y)
    pred, score = majority.predict(X), majority.predict_proba(X)[:, 1]  # always class 0; constant score
    assert metrics.accuracy(y, pred) == pytest.approx(0.9) == accuracy_score(y, pred)
    assert metrics.majority_accuracy(y) == pytest.approx(0.9)
    assert metrics.average_precision(y, score) == pytest.approx(0.1) == average_precision_score(y, score)
    assert metrics.binary_metrics(y, score, 0.5).recall == 0.0


def test_imbalanced_page_warns_that_accuracy_misleads():
    at = cls_page(dataset="imbalanced")
    with live_model(at, KEY) as run:
        y = run.trainer.y_val
    share = metrics.majority_accuracy(y)
    assert share >= 0.8
    assert page_metrics(at)[EN["cls.metric.majority"]] == f"{share:.3f}"
    assert EN["cls.imbalance_note"].format(share=f"{share:.0%}") in [w.value for w in at.warning]
    assert not at.exception
