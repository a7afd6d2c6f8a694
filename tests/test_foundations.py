"""The foundations lab's engine and figures against independent references: NumPy's linear algebra, closed forms,
numerical derivatives; the graph's stages and layout; the matrix-product size guard."""
import math

import numpy as np
import plotly.graph_objects as go
import pytest

from sim.autograd.network import NetConfig, forward_backward, stage
from sim.linalg import matmul
from sim.linalg import matrices as mx
from sim.linalg.vectors import analyse, cosine, dot
from sim.plots import foundations as plots

RNG = np.random.default_rng(0)


# ---------- vectors ----------
@pytest.mark.parametrize("seed", range(20))
def test_vector_report_matches_numpy(seed):
    rng = np.random.default_rng(seed)
    a, b, k = rng.uniform(-5, 5, 2), rng.uniform(-5, 5, 2), rng.uniform(-3, 3)
    r = analyse(a, b, k)
    assert np.allclose(r.total, a + b) and np.allclose(r.scaled, k * a)
    assert math.isclose(r.norm_a, np.linalg.norm(a)) and math.isclose(r.dot, a @ b)
    cos = a @ b / np.linalg.norm(a) / np.linalg.norm(b)
    assert math.isclose(r.cos, cos, rel_tol=1e-12)
    assert math.isclose(r.angle_deg, math.degrees(math.atan2(abs(a[0] * b[1] - a[1] * b[0]), a @ b)), abs_tol=1e-9)
    proj = np.array(r.projection)
    assert abs((a - proj) @ b) < 1e-9 and abs(proj[0] * b[1] - proj[1] * b[0]) < 1e-9  # along b, a − proj ⟂ b


def test_zero_vectors_have_no_cosine_and_no_projection_onto_them():
    r = analyse((0, 0), (1, 2), 2.0)
    assert r.cos is None and r.angle_deg is None and r.zero == ("a",) and r.projection == (0.0, 0.0)
    r = analyse((1, 2), (0, 0), 2.0)
    assert r.projection is None and r.zero == ("b",)
    assert cosine((0, 0, 0), (1, 1, 1)) is None
    with pytest.raises(ValueError):
        dot((1, 2), (1, 2, 3))


def test_cosine_stays_in_range_for_parallel_vectors():
    for v in ((0.1, 0.3), (1e-8, 3e-8), (7.0, -2.3)):
        assert cosine(v, tuple(3 * x for x in v)) == pytest.approx(1.0, abs=1e-15)
        assert -1.0 <= cosine(v, tuple(-x for x in v)) <= -1.0 + 1e-15


# ---------- matrices ----------
def random_matrix(rng) -> mx.Matrix:
    return tuple(float(x) for x in rng.uniform(-3, 3, 4))


@pytest.mark.parametrize("seed", range(10))
def test_matrix_operations_match_numpy(seed):
    rng = np.random.default_rng(seed)
    A, B = random_matrix(rng), random_matrix(rng)
    a, b = mx.as_array(A), mx.as_array(B)
    assert np.allclose(mx.as_array(mx.product(A, B)), a @ b)
    assert np.allclose(mx.as_array(mx.transpose(A)), a.T)
    assert math.isclose(mx.det(A), np.linalg.det(a), rel_tol=1e-9, abs_tol=1e-12)
    assert np.allclose(mx.as_array(mx.inverse(A)), np.linalg.inv(a))
    # the determinant is the signed area of the unit square's image
    assert math.isclose(mx.polygon_area(mx.unit_square(A)), mx.det(A), rel_tol=1e-9, abs_tol=1e-12)
    # composition: mapping by B then by A is mapping by AB
    p = rng.uniform(-1, 1, 2)
    assert np.allclose(a @ (b @ p), mx.as_array(mx.product(A, B)) @ p)


def test_singular_maps_have_no_inverse_and_grid_lines_follow_the_map():
    assert mx.inverse(mx.PRESETS["squash"]) is None and mx.det(mx.PRESETS["squash"]) == 0
    assert mx.inverse((1e-20, 0.0, 0.0, 1.0)) is None
    lines = mx.grid_lines(mx.PRESETS["shear"], reach=2)
    assert len(lines) == 2 * 5
    assert np.allclose(lines[0], np.array([[-2, -2], [-2, 2]]) @ mx.as_array(mx.PRESETS["shear"]).T)
    assert math.isclose(mx.det(mx.rotation(33)), 1.0) and mx.det(mx.MIRROR) == -1


# ---------- matrix-product cost ----------
def test_flops_and_the_size_guard(monkeypatch):
    assert matmul.flops(3, 4, 5) == 120 and matmul.exact_flops(3, 4, 5) == 3 * 4 * 9
    assert matmul.matrix_bytes(1024) == 3 * 1024 * 1024 * 4
    monkeypatch.setattr(matmul, "available_bytes", lambda: 100 * 2**20)  # 100 MiB free: limit 50 MiB
    matmul.check_size(2048)  # 48 MiB
    with pytest.raises(matmul.TooLarge) as e:
        matmul.check_size(4096)  # 192 MiB
    assert e.value.need == 3 * 4096 ** 2 * 4 and e.value.limit == 50 * 2**20
    monkeypatch.setattr(matmul, "available_bytes", lambda: None)
    with pytest.raises(matmul.TooLarge):
        matmul.check_size(65536)  # 48 GiB: over MAX_BYTES wherever it runs


def test_a_timing_reports_flops_over_its_own_time_and_restores_threads():
    import torch

    before = torch.get_num_threads()
    t = matmul.time_matmul(128, 1)
    assert t.n == 128 and t.threads == 1 and t.seconds > 0
    assert math.isclose(t.gflops, 2 * 128 ** 3 / t.seconds / 1e9)
    assert torch.get_num_threads() == before


# ---------- the graph's stages and picture ----------
def test_stages_reveal_values_forward_and_gradients_backward():
    g = forward_backward(NetConfig(2, 1, 2, "tanh", 0))
    n = len(g.nodes)
    s = stage(g, "forward", 5)
    assert [v is not None for v in s.values] == [True] * 5 + [False] * (n - 5) and s.current == 4
    assert all(x is None for x in s.grads)
    s = stage(g, "backward", 3)
    assert all(v is not None for v in s.values) and s.current == n - 3
    assert [x is not None for x in s.grads] == [False] * (n - 3) + [True] * 3 and s.grads[-1] == 1.0
    # every gradient revealed is final: each node it feeds is revealed before it
    for k in range(n + 1):
        shown = stage(g, "backward", k).grads
        for i in (i for i in range(n) if shown[i] is not None):
            assert all(shown[c] is not None for c, _ in g.children(i))
    assert stage(g, "update", 0).current is None and stage(g, "forward", 999).current == n - 1


def test_graph_layout_puts_every_node_right_of_its_inputs():
    g = forward_backward(NetConfig(3, 2, 3, "relu", 1))
    parents = [[g.index(p) for p in v.parents] for v in g.nodes]
    pos = plots.graph_layout(parents)
    assert all(pos[p, 0] < pos[c, 0] for c, ps in enumerate(parents) for p in ps)
    assert ((pos[:, 1] > 0) & (pos[:, 1] < 1)).all()
    for x in np.unique(pos[:, 0]):  # no two nodes of a column at one place
        ys = np.sort(pos[pos[:, 0] == x, 1])
        assert (np.diff(ys) > 0).all()


def test_graph_figure_marks_the_current_node_and_the_edges_explained():
    g = forward_backward(NetConfig(2, 1, 2, "sigmoid", 0))
    s = stage(g, "backward", 6)
    i = s.current
    notes = {(i, c): f"{d:.3g}" for c, d in g.children(i)}
    fig = plots.graph_figure([v.label for v in g.nodes], [v.op for v in g.nodes],
                             [[g.index(p) for p in v.parents] for v in g.nodes], s.values, s.grads, i, notes,
                             {"value": "value", "grad": "grad"})
    assert isinstance(fig, go.Figure)
    nodes = fig.data[-1]
    assert list(nodes.marker.line.width).count(4) == 1 and nodes.marker.line.width[i] == 4
    assert len(fig.layout.annotations) == len(notes) == len(g.children(i))
    assert sum("∇" in text for text in nodes.text) == 6
    assert fig.layout.height >= 360 and isinstance(fig.layout.height, int)


@pytest.mark.parametrize("op,value,parents", [("tanh", None, [0.3]), ("sigmoid", None, [-1.2]), ("relu", None, [0.5]),
                                              ("relu", None, [-0.5]), ("*", None, [0.7, -2.0]), ("-", None, [1.0, 3.0]),
                                              ("**2", None, [-0.4])])
def test_local_formulas_write_the_derivative_they_claim(op, value, parents):
    """Each formula's text, evaluated, is the numerical derivative of the op (central differences)."""
    f = {"tanh": lambda p: math.tanh(p[0]), "sigmoid": lambda p: 1 / (1 + math.exp(-p[0])),
         "relu": lambda p: max(p[0], 0.0), "*": lambda p: p[0] * p[1], "-": lambda p: p[0] - p[1],
         "**2": lambda p: p[0] ** 2}[op]
    y = f(parents)
    for k in range(len(parents)):
        h = 1e-6
        up, down = list(parents), list(parents)
        up[k] += h
        down[k] -= h
        numeric = (f(up) - f(down)) / (2 * h)
        text = plots.local_formula(op, k, parents, y).replace("−", "-").replace("·", "*").replace("²", "**2")
        text = text.replace("^", "**")
        assert math.isclose(eval(text), numeric, rel_tol=1e-4, abs_tol=1e-6), (op, k, text)


def test_forward_formula_reads_like_the_computation():
    assert plots.forward_formula("h", "tanh", ["z"], [1.5], math.tanh(1.5)) == "h = tanh(z) = tanh(1.5) = 0.9051"
    assert plots.forward_formula("p", "*", ["w", "x"], [2, 0.5], 1.0) == "p = w × x = 2 × 0.5 = 1"
    assert plots.forward_formula("L", "**2", ["e"], [0.5], 0.25) == "L = (e)^2 = (0.5)^2 = 0.25"


def test_the_other_figures_draw_what_they_are_given():
    steps = 5
    runs = {"a": (np.ones(steps), np.arange(steps)), "b": (np.full(steps, np.nan), np.zeros(5))}
    fig = plots.loop_figure(steps, runs, {"loss": "l", "grad": "g", "step": "s"})
    assert len(fig.data) == 4 and list(fig.data[1].y) == list(range(steps))
    fig = plots.depth_figure({"relu": np.array([1.0, 0.0])}, {"relu": np.array([3.0, 4.0])},
                             {"relu": np.array([1.0, 2.0])}, (5, 10),
                             {k: k for k in ("per_layer", "by_depth", "layer", "depth", "norm", "back", "weight")})
    assert min(fig.data[0].y) > 0  # a zero norm is drawn at the floor of the log scale, not dropped
    assert [d.name for d in fig.data[:2]] == ["relu · back", "relu · weight"] and list(fig.data[1].y) == [3.0, 4.0]
    assert fig.data[1].line.dash == "dot" and list(fig.data[2].x) == [5, 10]  # the weights dotted; the sweep
    pad = plots.vector_pad_payload((3, 1), (0, 0), 1.5, 5.0, 0.1, {"a": "a"}, {"zero": "z"})
    assert pad["a"] == [3.0, 1.0] and pad["b"] == [0.0, 0.0] and pad["k"] == 1.5 and pad["texts"] == {"zero": "z"}
    assert pad["range"] > pad["limit"] == 5.0 and pad["labels"] == {"a": "a"}
    fig = plots.plane_figure([("A", mx.grid_lines(mx.MIRROR), mx.unit_square(mx.MIRROR))],
                             {"before": "b", "after": "a"})
    square = next(d for d in fig.data if d.name == "a")
    assert np.allclose(list(zip(square.x, square.y, strict=True)), mx.unit_square(mx.MIRROR))
    fig = plots.throughput_figure([("cpu", 3e10, True), ("gpu", 3e14, False)], {"axis": "x", "measured": "m",
                                                                                 "published": "p"})
    assert [d.name for d in fig.data] == ["m", "p"] and fig.layout.xaxis.type == "log"


def test_the_benchmark_runs_the_functions_the_page_calls(capsys):
    from benchmarks import foundations

    foundations.main(["--no-matmul", "--no-sweep", "--no-embeddings"])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 8 and all(line.rstrip().endswith(" ms") for line in lines)


def test_the_benchmark_runs_the_embeddings_as_the_page_does(capsys):
    from benchmarks import foundations

    foundations.main(["--no-matmul", "--no-sweep", "--seeds", "1", "--steps", "200"])
    out = capsys.readouterr().out
    for lang in ("en", "zh"):
        assert f"embeddings {lang}: a step" in out
    assert out.count("  seed 0: ") == 2 and "lookup [4, 18, 7] in 20 x 4:" in out


def test_direction_commute_ratio_and_last_loss():
    from sim.autograd.depth import first_to_last
    from sim.autograd.loop import LoopRun
    from sim.linalg.vectors import direction

    assert [analyse(a, b, 1).kind for a, b in (((1, 2), (2, 4)), ((1, 2), (-2, 1)), ((1, 2), (-1, -2)),
                                                ((1, 0), (1, 1)), ((1, 0), (-1, 1)), ((0, 0), (1, 1)))] == \
        ["same", "perpendicular", "opposite", "acute", "obtuse", None]
    assert direction(None) is None
    assert mx.commute(mx.rotation(30), mx.rotation(75)) and not mx.commute(mx.MIRROR, mx.rotation(45))
    assert mx.commute(mx.PRESETS["identity"], mx.PRESETS["shear"])
    assert first_to_last(np.array([1e-6, 0.5, 2.0])) == 5e-7 and first_to_last(np.array([1.0, 0.0])) == math.inf
    run = LoopRun(np.array([3.0, 2.0, np.nan, np.nan]), np.zeros(4), np.zeros(4), 2)
    assert run.last_loss == 2.0


@pytest.mark.cuda
@pytest.mark.skipif(not matmul.cuda_available(), reason="needs a CUDA device")
def test_a_cuda_timing_is_labelled_with_its_device_and_runs_in_bf16():
    import torch

    t = matmul.time_matmul_cuda(1024)
    assert t.device == torch.cuda.get_device_name() and t.threads == 0 and t.seconds > 0
    assert math.isclose(t.gflops, 2 * 1024 ** 3 / t.seconds / 1e9)
    with pytest.raises(matmul.TooLarge):
        matmul.time_matmul_cuda(1 << 20)  # 6 TiB of bf16: refused before anything is allocated
