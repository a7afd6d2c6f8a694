"""The live view's byte encoders: what the canvas receives must decode to the model's numbers."""
import base64

import numpy as np

from sim.plots import live


def decode(b64):
    return np.frombuffer(base64.b64decode(b64), dtype=np.uint8)


def test_binary_grid_sends_probability_of_class_one():
    grid = np.zeros((3, 3, 2))
    grid[..., 1] = np.linspace(0, 1, 9).reshape(3, 3)
    grid[..., 0] = 1 - grid[..., 1]
    out = decode(live.encode_grid(grid, "classification"))
    assert live.grid_channels(grid.shape[-1], "classification") == 1
    np.testing.assert_allclose(out / 255, grid[..., 1].reshape(-1), atol=1 / 255)


def test_multiclass_grid_sends_every_class_row_major():
    grid = np.random.default_rng(0).dirichlet(np.ones(4), size=(5, 5))
    out = decode(live.encode_grid(grid, "classification")).reshape(5, 5, 4)
    assert live.grid_channels(grid.shape[-1], "classification") == 4
    assert live.grid_channels(1, "regression") == 1
    np.testing.assert_allclose(out / 255, grid, atol=1 / 255)


def test_regression_maps_minus_one_to_zero_and_one_to_255():
    grid = np.array([[[-1.0], [0.0], [1.0], [np.nan]]])
    assert decode(live.encode_grid(grid, "regression")).tolist() == [0, 128, 255, 128]


def test_unbounded_maps_scale_by_magnitude_and_keep_zero_in_the_middle():
    out = decode(live.encode_map(np.array([[-4.0, 0.0], [2.0, 4.0]])))
    assert out.tolist() == [0, 128, 191, 255]
    assert decode(live.encode_map(np.zeros((2, 2)))).tolist() == [128] * 4  # no division by zero


def test_points_land_on_the_plane_and_keep_labels():
    xy, lab = live.encode_points(np.array([[-6.0, 6.0], [0.0, 0.0]]), np.array([0, 3]), "classification")
    assert decode(xy).tolist() == [0, 255, 128, 128] and decode(lab).tolist() == [0, 3]


def test_curve_is_thinned_but_keeps_first_and_last():
    hist = [{"epoch": i, "train_loss": 1 / i, "val_loss": 2 / i} for i in range(1, 1001)]
    c = live.curve(hist, max_points=100)
    assert len(c["epochs"]) <= 100 and c["epochs"][0] == 1 and c["epochs"][-1] == 1000
    assert c["val"][-1] == 2 / 1000


def test_link_weights_flatten_row_major():
    W = np.array([[1.0, -2.0, 3.0], [0.5, 0.0, -0.5]])
    flat, wmax = live.link_weights([(W, np.zeros(2))])
    assert flat == [[1.0, -2.0, 3.0, 0.5, 0.0, -0.5]] and 2.0 < wmax <= 3.0
