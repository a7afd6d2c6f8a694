"""Classification metrics in NumPy: confusion matrix, precision/recall, ROC and PR curves.

Conventions follow scikit-learn so the numbers can be checked against it: class 1 is the
positive class, a score p is predicted positive when p >= threshold, and any 0/0 ratio is 0.0
(sklearn's ``zero_division=0``). Curves that are undefined because a class is missing return
None instead of NaNs, so a page can say why there is no curve.
"""

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike


def accuracy(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Fraction of predictions equal to the truth; 0.0 for no samples."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    return float(np.mean(y_true == y_pred)) if y_true.size else 0.0


def confusion_matrix(y_true: ArrayLike, y_pred: ArrayLike, k: int) -> np.ndarray:
    """(k, k) int64 counts: rows are the true class, columns the predicted class."""
    y_true = np.asarray(y_true, dtype=np.int64)
    y_pred = np.asarray(y_pred, dtype=np.int64)
    return np.bincount(y_true * k + y_pred, minlength=k * k).reshape(k, k)


@dataclass(frozen=True)
class BinaryMetrics:
    """Counts and rates of a binary classifier at one threshold (0/0 counts as 0.0)."""

    tp: int
    fp: int
    tn: int
    fn: int
    precision: float
    recall: float
    f1: float
    accuracy: float

    @property
    def fpr(self) -> float:
        """False-positive rate, FP / (FP + TN): the x of this threshold's point on the ROC curve."""
        return _ratio(self.fp, self.fp + self.tn)


def _ratio(num: int, den: int) -> float:
    return num / den if den else 0.0


def binary_metrics(y_true: ArrayLike, p: ArrayLike, threshold: float) -> BinaryMetrics:
    """Metrics when predicting class 1 for every score p >= threshold."""
    y_pred = (np.asarray(p) >= threshold).astype(np.int64)
    tn, fp, fn, tp = (int(c) for c in confusion_matrix(y_true, y_pred, 2).ravel())
    return BinaryMetrics(
        tp=tp, fp=fp, tn=tn, fn=fn,
        precision=_ratio(tp, tp + fp),
        recall=_ratio(tp, tp + fn),
        f1=_ratio(2 * tp, 2 * tp + fp + fn),  # = 2PR / (P + R), without the 0/0 when tp = 0
        accuracy=_ratio(tp + tn, tp + fp + tn + fn),
    )


def _cumulative_counts(y_true: ArrayLike, p: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """False and true positives at each distinct score taken as threshold, highest score first."""
    p = np.asarray(p, dtype=np.float64)
    order = np.argsort(-p, kind="stable")
    p_sorted = p[order]
    positive = (np.asarray(y_true) == 1)[order]
    # Tied scores cross the threshold together: keep only the last index of each tie group.
    last = np.r_[np.flatnonzero(np.diff(p_sorted)), p_sorted.size - 1]
    tps = np.cumsum(positive)[last]
    fps = last + 1 - tps
    return fps, tps, p_sorted[last]


def roc_curve(y_true: ArrayLike, p: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(fpr, tpr, thresholds) from (0, 0) to (1, 1), thresholds falling from +inf.

    Every distinct score is a point (sklearn's ``drop_intermediate=False``). None when the
    labels do not hold both classes, because one of the two rates is then 0/0.
    """
    if np.asarray(p).size == 0:
        return None
    fps, tps, thresholds = _cumulative_counts(y_true, p)
    if fps[-1] == 0 or tps[-1] == 0:
        return None
    fpr = np.r_[0, fps] / fps[-1]
    tpr = np.r_[0, tps] / tps[-1]
    return fpr, tpr, np.r_[np.inf, thresholds]


def pr_curve(y_true: ArrayLike, p: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(precision, recall, thresholds) in sklearn's order and ``drop_intermediate=False``.

    Thresholds rise from the one reaching full recall; precision and recall have one more
    entry, the end point (recall 0, precision 1). None when there is no positive label
    (recall is then 0/0).
    """
    if np.asarray(p).size == 0:
        return None
    fps, tps, thresholds = _cumulative_counts(y_true, p)
    if tps[-1] == 0:
        return None
    precision = tps / (tps + fps)
    recall = tps / tps[-1]
    full = np.searchsorted(tps, tps[-1])  # first threshold reaching full recall
    keep = slice(full, None, -1)
    return np.r_[precision[keep], 1.0], np.r_[recall[keep], 0.0], thresholds[keep]


def auc(x: ArrayLike, y: ArrayLike) -> float:
    """Area under y(x) by the trapezoid rule; x must be monotonic (either direction)."""
    return abs(float(np.trapezoid(np.asarray(y, dtype=np.float64), np.asarray(x, dtype=np.float64))))


def average_precision(y_true: ArrayLike, p: ArrayLike) -> float | None:
    """Sum over thresholds of precision times the recall gained (sklearn's AP); None without positives."""
    curve = pr_curve(y_true, p)
    if curve is None:
        return None
    precision, recall, _ = curve
    return float(-np.sum(np.diff(recall) * precision[:-1]))


def majority_accuracy(y_true: ArrayLike) -> float:
    """Accuracy of always answering the most common class: the bar any accuracy must clear (0.9 when
    nine points in ten are one class, however useless that classifier is)."""
    y = np.asarray(y_true)
    if y.size == 0:
        return math.nan
    return float(np.bincount(y.astype(np.int64)).max() / y.size)
