"""sim.nets.metrics against scikit-learn on random data with tied scores, and hand-worked cases."""

import numpy as np
import pytest
from sklearn import metrics as skm

from sim.nets import metrics


def _random_case(seed: int, n: int = 200, k: int = 2) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    p = np.round(rng.random(n), 1)  # one decimal: many ties
    return y, p


@pytest.mark.parametrize("seed", range(5))
def test_confusion_matrix_matches_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    y_true, y_pred = rng.integers(0, 4, 100), rng.integers(0, 4, 100)
    cm = metrics.confusion_matrix(y_true, y_pred, 4)
    np.testing.assert_array_equal(cm, skm.confusion_matrix(y_true, y_pred, labels=range(4)))
    assert cm.dtype == np.int64


def test_confusion_matrix_counts_absent_classes() -> None:
    cm = metrics.confusion_matrix([0, 0, 1], [0, 1, 1], 3)
    np.testing.assert_array_equal(cm, [[1, 1, 0], [0, 1, 0], [0, 0, 0]])


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.5, 0.95, 1.1])
def test_binary_metrics_match_sklearn(seed: int, threshold: float) -> None:
    y, p = _random_case(seed)
    m = metrics.binary_metrics(y, p, threshold)
    y_pred = (p >= threshold).astype(int)
    prec, rec, f1, _ = skm.precision_recall_fscore_support(
        y, y_pred, average="binary", zero_division=0
    )
    assert (m.precision, m.recall, m.f1) == pytest.approx((prec, rec, f1))
    assert m.accuracy == pytest.approx(skm.accuracy_score(y, y_pred))
    assert m.accuracy == pytest.approx(metrics.accuracy(y, y_pred))
    tn, fp, fn, tp = skm.confusion_matrix(y, y_pred, labels=[0, 1]).ravel()
    assert (m.tp, m.fp, m.tn, m.fn) == (tp, fp, tn, fn)


def test_binary_metrics_hand_worked() -> None:
    # scores 0.9 0.8 0.6 0.4 0.2 with labels 1 0 1 1 0, threshold 0.5:
    # predicted 1 1 1 0 0 -> tp 2, fp 1, fn 1, tn 1
    m = metrics.binary_metrics([1, 0, 1, 1, 0], [0.9, 0.8, 0.6, 0.4, 0.2], 0.5)
    assert (m.tp, m.fp, m.tn, m.fn) == (2, 1, 1, 1)
    assert m.precision == pytest.approx(2 / 3)
    assert m.recall == pytest.approx(2 / 3)
    assert m.f1 == pytest.approx(2 / 3)
    assert m.accuracy == pytest.approx(3 / 5)
    assert m.fpr == pytest.approx(1 / 2)  # one of the two negatives (0.8, 0.2) called positive


def test_fpr_is_the_roc_point_of_the_threshold() -> None:
    y, p = _random_case(0)
    fpr, tpr, thresholds = skm.roc_curve(y, p)
    for i in range(1, len(thresholds)):  # sklearn's first threshold is +inf
        m = metrics.binary_metrics(y, p, thresholds[i])
        assert (m.fpr, m.recall) == pytest.approx((fpr[i], tpr[i]))
    assert metrics.binary_metrics([1, 1], [0.9, 0.1], 0.5).fpr == 0.0  # no negatives: 0/0 counts as 0


def test_binary_metrics_threshold_is_inclusive() -> None:
    assert metrics.binary_metrics([1], [0.5], 0.5).tp == 1


def test_binary_metrics_zero_division_is_zero() -> None:
    m = metrics.binary_metrics([0, 0], [0.1, 0.2], 0.5)  # nothing predicted, nothing positive
    assert (m.precision, m.recall, m.f1, m.accuracy) == (0.0, 0.0, 0.0, 1.0)
    empty = metrics.binary_metrics([], [], 0.5)
    assert (empty.tp, empty.precision, empty.accuracy) == (0, 0.0, 0.0)


def test_accuracy_of_nothing_is_zero() -> None:
    assert metrics.accuracy([], []) == 0.0


@pytest.mark.parametrize("seed", range(8))
def test_roc_curve_matches_sklearn(seed: int) -> None:
    y, p = _random_case(seed)
    fpr, tpr, thr = metrics.roc_curve(y, p)
    sk_fpr, sk_tpr, sk_thr = skm.roc_curve(y, p, drop_intermediate=False)
    np.testing.assert_allclose(fpr, sk_fpr)
    np.testing.assert_allclose(tpr, sk_tpr)
    np.testing.assert_array_equal(thr, sk_thr)
    assert (fpr[0], tpr[0], fpr[-1], tpr[-1]) == (0, 0, 1, 1)
    assert metrics.auc(fpr, tpr) == pytest.approx(skm.roc_auc_score(y, p))


@pytest.mark.parametrize("seed", range(8))
def test_pr_curve_and_ap_match_sklearn(seed: int) -> None:
    y, p = _random_case(seed)
    prec, rec, thr = metrics.pr_curve(y, p)
    sk_prec, sk_rec, sk_thr = skm.precision_recall_curve(y, p, drop_intermediate=False)
    np.testing.assert_allclose(prec, sk_prec)
    np.testing.assert_allclose(rec, sk_rec)
    np.testing.assert_array_equal(thr, sk_thr)
    assert metrics.average_precision(y, p) == pytest.approx(skm.average_precision_score(y, p))


def test_roc_hand_worked_with_tie() -> None:
    # Scores 0.8 (pos), 0.5 (pos), 0.5 (neg), 0.2 (neg): the tie at 0.5 is one diagonal step.
    fpr, tpr, thr = metrics.roc_curve([1, 1, 0, 0], [0.8, 0.5, 0.5, 0.2])
    np.testing.assert_allclose(fpr, [0, 0, 0.5, 1])
    np.testing.assert_allclose(tpr, [0, 0.5, 1, 1])
    np.testing.assert_array_equal(thr, [np.inf, 0.8, 0.5, 0.2])
    assert metrics.auc(fpr, tpr) == pytest.approx(0.875)  # 1 - P(neg beats pos), ties count 1/2


def test_pr_hand_worked() -> None:
    # Scores 0.9 (pos), 0.7 (neg), 0.3 (pos): AP = 1 * 1/2 + 2/3 * 1/2 = 5/6.
    prec, rec, thr = metrics.pr_curve([1, 0, 1], [0.9, 0.7, 0.3])
    np.testing.assert_allclose(prec, [2 / 3, 1 / 2, 1, 1])
    np.testing.assert_allclose(rec, [1, 1 / 2, 1 / 2, 0])
    np.testing.assert_array_equal(thr, [0.3, 0.7, 0.9])
    assert metrics.average_precision([1, 0, 1], [0.9, 0.7, 0.3]) == pytest.approx(5 / 6)


def test_perfect_separation() -> None:
    y, p = [0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9]
    fpr, tpr, _ = metrics.roc_curve(y, p)
    assert metrics.auc(fpr, tpr) == 1.0
    assert metrics.average_precision(y, p) == 1.0


@pytest.mark.parametrize("y", [[0, 0, 0], [1, 1, 1], []])
def test_single_class_gives_none_not_nan(y: list[int]) -> None:
    p = [0.2, 0.5, 0.5][: len(y)]
    assert metrics.roc_curve(y, p) is None
    if 1 in y:  # only positives: PR is still defined, every prediction is correct
        prec, rec, _ = metrics.pr_curve(y, p)
        assert np.all(prec == 1) and np.all(np.isfinite(rec))
        assert metrics.average_precision(y, p) == 1.0
    else:
        assert metrics.pr_curve(y, p) is None
        assert metrics.average_precision(y, p) is None


def test_auc_trapezoid_either_direction() -> None:
    assert metrics.auc([0, 1, 2], [0, 1, 1]) == pytest.approx(1.5)
    assert metrics.auc([2, 1, 0], [1, 1, 0]) == pytest.approx(1.5)
    assert metrics.auc([], []) == 0.0
