"""sim.core.data against the TensorFlow Playground generators' definitions and hand formulas."""

import numpy as np
import pytest

from sim.core.data import (
    CLASSIFICATION_DATASETS,
    FEATURES,
    REGRESSION_DATASETS,
    feature_matrix,
    make_classification,
    make_regression,
    n_classes,
    split,
)

ALL = [(make_classification, name) for name in CLASSIFICATION_DATASETS] + [
    (make_regression, name) for name in REGRESSION_DATASETS
]


@pytest.mark.parametrize("make,name", ALL)
def test_same_seed_same_data_other_seed_other_data(make, name):
    X1, y1 = make(name, 200, 0.2, seed=7)
    X2, y2 = make(name, 200, 0.2, seed=7)
    X3, _ = make(name, 200, 0.2, seed=8)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.array_equal(X1, X3)


@pytest.mark.parametrize("make,name", ALL)
@pytest.mark.parametrize("noise", [0.0, 0.5])
def test_points_inside_the_plane_with_dtypes(make, name, noise):
    X, y = make(name, 301, noise, seed=1)
    assert X.shape == (301, 2) and X.dtype == np.float32
    assert y.shape == (301,)
    assert np.all(np.abs(X) <= 6.0)
    if make is make_regression:
        assert y.dtype == np.float32 and np.all(np.abs(y) <= 1.0)
    else:
        assert y.dtype == np.int64 and set(np.unique(y)) == set(range(n_classes(name)))


@pytest.mark.parametrize("name", [d for d in CLASSIFICATION_DATASETS if d != "imbalanced"])
@pytest.mark.parametrize("n", [300, 301])
def test_classes_balanced_without_noise(name, n):
    counts = np.bincount(make_classification(name, n, 0.0, seed=3)[1])
    assert len(counts) == n_classes(name)
    assert counts.sum() == n and counts.max() - counts.min() <= 1


def test_n_classes():
    assert [n_classes(name) for name in CLASSIFICATION_DATASETS] == [2, 2, 2, 2, 3, 2, 3, 4, 5, 2]


@pytest.mark.parametrize("n", [100, 300, 2000])
def test_imbalanced_is_ninety_ten(n):
    y = make_classification("imbalanced", n, 0.0, seed=3)[1]
    assert np.bincount(y).tolist() == [n - round(n / 10), round(n / 10)]


def test_points_come_shuffled_not_grouped_by_class():
    y = make_classification("gauss", 200, 0.0, seed=0)[1]
    assert np.count_nonzero(np.diff(y)) > 50  # grouped output would change label once


def test_circle_geometry():
    # Playground: class 1 inside radius 5 * 0.5, class 0 in the ring from 5 * 0.7 to 5
    X, y = make_classification("circle", 400, 0.0, seed=2)
    r = np.linalg.norm(X, axis=1)
    assert np.all(r[y == 1] < 2.5)
    assert np.all((r[y == 0] >= 3.5 - 1e-5) & (r[y == 0] <= 5 + 1e-5))


def test_circle_noise_moves_the_label_reading_point():
    # as in the Playground, noise flips labels near the boundary instead of moving the points
    X, y = make_classification("circle", 2000, 0.5, seed=2)
    r = np.linalg.norm(X, axis=1)
    assert r.max() <= 5 + 1e-5
    assert np.any(y[r < 2.5] == 0)


def test_xor_geometry():
    X, y = make_classification("xor", 400, 0.0, seed=4)
    np.testing.assert_array_equal(y, (X[:, 0] * X[:, 1] >= 0).astype(np.int64))
    assert np.all(np.abs(X) >= 0.3 - 1e-6) and np.all(np.abs(X) <= 5.3 + 1e-5)


def test_gauss_centres():
    X, y = make_classification("gauss", 4000, 0.0, seed=5)
    np.testing.assert_allclose(X[y == 1].mean(axis=0), [2, 2], atol=0.1)
    np.testing.assert_allclose(X[y == 0].mean(axis=0), [-2, -2], atol=0.1)
    np.testing.assert_allclose(X[y == 1].std(axis=0), np.sqrt(0.5), rtol=0.1)  # Playground variance 0.5


def by_radius(P: np.ndarray) -> np.ndarray:
    """The points P ordered from the centre out."""
    return P[np.argsort(np.linalg.norm(P, axis=1))]


def test_spiral_arms_are_point_reflections():
    # Playground: two arms r = 5 i/n, angle offset by pi, so without noise arm 0 is -arm 1
    X, y = make_classification("spiral", 400, 0.0, seed=6)
    np.testing.assert_allclose(by_radius(X[y == 0]), -by_radius(X[y == 1]), atol=1e-5)
    assert np.linalg.norm(X, axis=1).max() < 5
    # the positive arm starts at angle 0: (x, y) = r (sin t, cos t) points up
    first = by_radius(X[y == 1])[1]
    assert first[1] > 0 and abs(first[0]) < first[1]


def test_spiral3_arms_are_rotations():
    X, y = make_classification("spiral3", 300, 0.0, seed=6)
    turn = 2 * np.pi / 3
    R = np.array([[np.cos(turn), np.sin(turn)], [-np.sin(turn), np.cos(turn)]])  # adds `turn` to the angle
    np.testing.assert_allclose(by_radius(X[y == 0]) @ R.T, by_radius(X[y == 1]), atol=1e-4)


@pytest.mark.parametrize("name", ["moons", "blobs3", "blobs4", "blobs5"])
def test_other_classes_are_separable_without_noise(name):
    from sklearn.neighbors import KNeighborsClassifier

    X, y = make_classification(name, 400, 0.0, seed=9)
    Xt, yt = make_classification(name, 400, 0.0, seed=10)
    assert KNeighborsClassifier(5).fit(X, y).score(Xt, yt) > 0.97


def test_noise_changes_the_data():
    for name in CLASSIFICATION_DATASETS:
        clean = make_classification(name, 200, 0.0, seed=1)
        noisy = make_classification(name, 200, 0.3, seed=1)
        assert not (np.array_equal(clean[0], noisy[0]) and np.array_equal(clean[1], noisy[1])), name


def test_regress_plane_is_the_playground_formula():
    X, y = make_regression("plane", 300, 0.0, seed=1)
    np.testing.assert_allclose(y, np.clip((X[:, 0] + X[:, 1]) / 10, -1, 1), atol=1e-6)


def test_regress_gaussians_by_hand():
    X, y = make_regression("gauss_multi", 300, 0.0, seed=1)
    centres = [(-4, 2.5, 1), (0, 2.5, -1), (4, 2.5, 1), (-4, -2.5, -1), (0, -2.5, 1), (4, -2.5, -1)]
    for (px, py), target in zip(X, y, strict=True):
        label = 0.0
        for cx, cy, sign in centres:
            d = np.hypot(px - cx, py - cy)
            candidate = sign * min(max(1 - d / 2, 0), 1)
            if abs(candidate) > abs(label):
                label = candidate
        assert target == pytest.approx(label, abs=1e-5)


def test_unknown_names_raise():
    with pytest.raises(ValueError, match="^invalid:dataset$"):
        make_classification("moon", 10, 0.0, 0)
    with pytest.raises(ValueError, match="^invalid:dataset$"):
        make_regression("circle", 10, 0.0, 0)
    with pytest.raises(ValueError, match="^invalid:dataset$"):
        n_classes("plane")
    with pytest.raises(ValueError, match="^invalid:features$"):
        feature_matrix(np.zeros((3, 2), np.float32), ("x1", "cosx1"))


def test_feature_matrix_by_hand():
    X = np.array([[1.5, -2.0], [0.0, 3.0], [-6.0, 6.0]], dtype=np.float32)
    F = feature_matrix(X, FEATURES)
    assert F.shape == (3, 7) and F.dtype == np.float32
    for (a, b), row in zip(X.astype(float), F, strict=True):
        np.testing.assert_allclose(row, [a, b, a * a, b * b, a * b, np.sin(a), np.sin(b)], rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(feature_matrix(X, ("x2", "x1")), X[:, ::-1])


def test_split_is_a_deterministic_shuffled_partition():
    train, test = split(100, 0.7, seed=3)
    assert len(train) == 70 and len(test) == 30
    np.testing.assert_array_equal(np.sort(np.concatenate([train, test])), np.arange(100))
    again = split(100, 0.7, seed=3)
    np.testing.assert_array_equal(train, again[0])
    assert not np.array_equal(train, split(100, 0.7, seed=4)[0])
    assert not np.array_equal(np.sort(train), np.arange(70))  # not simply the first 70


def test_split_keeps_one_point_on_each_side():
    train, test = split(2, 0.01, seed=0)
    assert len(train) == 1 and len(test) == 1


@pytest.mark.parametrize("n,train_ratio,val_share", [(500, 0.5, 0.5), (100, 0.9, 0.5), (101, 0.7, 0.3),
                                                     (3, 0.5, 0.5), (10, 0.9, 0.9), (2000, 0.1, 0.1)])
def test_split3_keeps_the_old_training_set_and_cuts_the_rest_in_two(n, train_ratio, val_share):
    from sim.core.data import split3, split_sizes

    train, val, test = split3(n, train_ratio, val_share, seed=5)
    old_train, old_test = split(n, train_ratio, seed=5)
    if len(old_test) >= 2:  # the same training points as before the validation set existed
        np.testing.assert_array_equal(train, old_train)
    assert min(len(train), len(val), len(test)) >= 1
    np.testing.assert_array_equal(np.sort(np.concatenate([train, val, test])), np.arange(n))  # a partition
    assert (len(train), len(val), len(test)) == split_sizes(n, train_ratio, val_share)
    rest = n - len(train)
    assert abs(len(val) - rest * val_share) <= 1  # validation: val_share of the held-out points


def test_split3_needs_three_points():
    from sim.core.data import split3, split_sizes

    for fn in (lambda: split3(2, 0.5, 0.5, 0), lambda: split_sizes(2, 0.5, 0.5)):
        with pytest.raises(ValueError, match="^invalid:n$"):
            fn()
