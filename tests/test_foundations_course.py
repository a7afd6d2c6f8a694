"""The article's worked numbers (llm-foundations-article: 向量的长度, 点积的几何含义, 余弦相似度, 常见矩阵运算速查,
为什么这个规则有意义, 计算量) come out of the foundations lab's engine. The text's formulas were lost from the
seeds: its 2×2 product and its dot/cosine vectors cannot be recovered, so its stated facts are checked instead."""
import math

import numpy as np

from sim.gpu.memsim import GPUS
from sim.linalg import matrices as mx
from sim.linalg.matmul import ARTICLE_N, flops
from sim.linalg.vectors import ARTICLE_VECTOR, cosine, dot, norm


def test_the_norm_example_is_root_59():
    """‖v‖ = √(9 + 1 + 49) = √59 ≈ 7.68, whatever the signs of the entries."""
    assert sorted(x * x for x in ARTICLE_VECTOR) == [1, 9, 49]
    assert norm(ARTICLE_VECTOR) == math.sqrt(59) and round(norm(ARTICLE_VECTOR), 2) == 7.68
    assert norm((3, -1, -7)) == math.sqrt(59)
    unit = [x / norm(ARTICLE_VECTOR) for x in ARTICLE_VECTOR]
    assert math.isclose(norm(unit), 1.0)  # dividing by the length gives a unit vector


def test_the_three_cases_of_the_dot_products_geometry():
    """θ = 0°: cos = 1; θ = 90°: cos = 0 and dot = 0; θ = 180°: cos = −1."""
    a = (2.0, 1.0)
    assert math.isclose(cosine(a, (4.0, 2.0)), 1.0)
    assert dot(a, (-1.0, 2.0)) == 0 and cosine(a, (-1.0, 2.0)) == 0
    assert math.isclose(cosine(a, (-4.0, -2.0)), -1.0)


def test_the_quick_reference_pseudocode():
    """dot = Σ a_i b_i; matmul(A, B)[i, j] = dot(A[i, :], B[:, j]); cosine_sim = dot / (norm · norm)."""
    rng = np.random.default_rng(25)
    a, b = rng.normal(size=7), rng.normal(size=7)
    assert math.isclose(dot(a, b), float(a @ b))
    assert math.isclose(cosine(a, b), dot(a, b) / (norm(a) * norm(b)))
    A, B = tuple(rng.normal(size=4)), tuple(rng.normal(size=4))
    C = mx.product(A, B)
    for i in range(2):
        for j in range(2):
            assert math.isclose(C[2 * i + j], dot(mx.as_array(A)[i, :], mx.as_array(B)[:, j]))


def test_rotate_then_mirror_is_not_mirror_then_rotate():
    """The article's analogy for why matrix multiplication does not commute."""
    rot, mirror = mx.PRESETS["rotate45"], mx.PRESETS["mirror"]
    assert not np.allclose(mx.product(mirror, rot), mx.product(rot, mirror))
    # both orders flip the plane (det −1), but across different lines: (1, 0) lands below the x axis one way, above it
    # the other way
    assert math.isclose(mx.det(mx.product(mirror, rot)), -1, rel_tol=1e-4)
    assert math.isclose(mx.det(mx.product(rot, mirror)), -1, rel_tol=1e-4)
    assert mx.product(mirror, rot)[2] < 0 < mx.product(rot, mirror)[2]


def test_the_cost_of_a_4096_cubed_product_and_the_a100s_half_millisecond():
    """2mnk FLOPs; m = n = k = 4096 gives about 1.37 × 10¹¹ (137 GFLOPs); at 312 TFLOP/s under 0.5 ms."""
    f = flops(ARTICLE_N, ARTICLE_N, ARTICLE_N)
    assert f == 137_438_953_472 and f"{f:.2e}" == "1.37e+11" and round(f / 1e9) == 137
    assert GPUS["A100"].peak_flops == 312e12
    assert f / GPUS["A100"].peak_flops < 0.5e-3
