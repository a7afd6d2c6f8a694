"""The foundations lab's sentences about vectors, matrices, a matrix product's cost, CPU against GPU and the embedding
lookup agree with the numbers beside them: the page's own text functions (and the vector pad's JavaScript, run by
Node where it is installed) over random and preset values, in both languages."""
import math
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from apptools import open_lab, texts
from labs.foundations.backprop import chain_text
from labs.foundations.geometry import VECTOR_PRESETS, det_text, result_text, transpose_text
from labs.foundations.hardware import h100_text
from labs.foundations.lookup import lookup_text, onehot_text
from sim.autograd.network import NetConfig, chain_rule, forward_backward
from sim.gpu.memsim import GPUS
from sim.linalg import matrices as mx
from sim.linalg import roofline as rf
from sim.linalg.lookup import lookup
from sim.linalg.matmul import Timing, flops, time_matmul
from sim.linalg.vectors import analyse
from sim.plots.foundations import local_formula
from ui.i18n import catalogue, language

ROOT = Path(__file__).resolve().parent.parent
LANGS = ("en", "zh")
SEEDS = range(5)


# ---------- negative numbers in formulas ----------
PAD_RUN = """
import fs from 'fs';
let src = fs.readFileSync('labs/foundations/vector_pad.js', 'utf8');
src = src.slice(0, src.indexOf('export default'));  // the pad's arithmetic and formatting, not its component
const library = 'const PALETTE = {purple: 0, green: 0, guide: 0, ink: 0}; const rgb = (x) => x;';
const { analyse, writeNumbers } = new Function(library + src + '; return { analyse, writeNumbers };')();
const texts = JSON.parse(fs.readFileSync('assets/i18n/en/foundations.json', 'utf8'));
const kind = Object.fromEntries(['same', 'opposite', 'perpendicular', 'acute', 'obtuse'].map((k) => [k, k]));
const T = { numbers: texts['fnd.vec.numbers'], angle: texts['fnd.vec.angle'], zero: texts['fnd.vec.zero'], kind };
const S = { data: { texts: T }, numbers: {}, shown: null };
writeNumbers(S, analyse(JSON.parse(process.argv[2]), JSON.parse(process.argv[3]), 1.5));
console.log(S.numbers.innerHTML);
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node to run the pad's JavaScript")
def test_the_vector_pad_brackets_negative_coordinates(tmp_path):
    """Issue 41: a = (−1, 2) was written √(-1² + 2²), which reads −1 + 4."""
    script = tmp_path / "pad.mjs"
    script.write_text(PAD_RUN)

    def written(a, b) -> str:
        return subprocess.run(["node", str(script), str(list(a)), str(list(b))], cwd=ROOT, capture_output=True,
                              text=True, check=True, timeout=60).stdout

    shown = written((-1, 2), (3, -0.5))
    assert "√((-1)² + 2²)" in shown and "(-1)·3 + 2·(-0.5)" in shown
    assert "√(3² + 1²)" in written((3, 1), (1, 3))


NEGATIVE_TERM = re.compile(r"[−+×·] ?-\d|-\d[.\d]*²")  # "+ -0.2", "× -0.2", "·-1" or "-0.3²": an unbracketed term


@pytest.mark.parametrize("config", [NetConfig(seed=s) for s in SEEDS] + [NetConfig(2, 2, 2, "relu", 1),
                                                                        NetConfig(3, 1, 3, "sigmoid", 2)], ids=str)
def test_the_chain_rule_brackets_negative_terms(config):
    g = forward_backward(config)
    for i, node in enumerate(g.nodes[:-1]):  # the terms written sum to the gradient written
        assert math.isclose(sum(grad * local for _, grad, local in chain_rule(g, i)), node.grad, rel_tol=1e-12,
                            abs_tol=1e-15)
    with language("en"):
        written = [str(chain_text(g, i)) for i in range(len(g.nodes) - 1)]
    assert any("(-" in w for w in written)  # negative numbers occur, bracketed
    assert not [w for w in written if NEGATIVE_TERM.search(w.split("= ", 2)[-1])]
    assert local_formula("tanh", 0, [-0.3], -0.2913) == "1 − (-0.2913)²"


# ---------- matrices ----------
def matrices() -> list[mx.Matrix]:
    """Five random matrices on the sliders' 0.1 grid, the presets, and a symmetric one."""
    rng = np.random.default_rng(0)
    drawn = [tuple(float(x) for x in np.round(rng.uniform(-3, 3, 4), 1)) for _ in SEEDS]
    return drawn + list(mx.PRESETS.values()) + [(2.0, -1.5, -1.5, 0.5)]


ORIENT = {"en": {"flips": "is negative", "keeps": "is positive", "flat": "is 0"},
          "zh": {"flips": "行列式为负", "keeps": "行列式为正", "flat": "行列式为 0"}}


@pytest.mark.parametrize("lang", LANGS)
def test_the_determinant_sentence_reads_its_sign_and_brackets_negative_entries(lang):
    for A in matrices():
        with language(lang):
            text = str(det_text(A))
        d = np.linalg.det(np.array(A).reshape(2, 2))
        want = "flat" if abs(d) < 1e-9 else "flips" if d < 0 else "keeps"
        assert ORIENT[lang][want] in text and sum(v in text for v in ORIENT[lang].values()) == 1, (A, text)
        formula = text.split(" = ")[1]  # "a11·a22 − a12·a21"
        assert not re.search(r"(^|[·−] ?)-\d", formula), formula  # negative entries bracketed
        if want != "flat":
            assert f"**{d:.4g}**" in text or f"**{mx.det(A):.4g}**" in text


@pytest.mark.parametrize("lang", LANGS)
def test_the_transpose_is_named_and_symmetry_read_from_the_entries(lang):
    word = {"en": "**Transpose**", "zh": "**转置**"}[lang]
    for A in matrices():
        with language(lang):
            text = str(transpose_text(A))
        a = np.array(A).reshape(2, 2)
        assert word in text and f"= {a[1, 0]:g} " in text.replace("，", " ")
        symmetric = np.array_equal(a, a.T)
        assert (catalogue(lang)["fnd.mat.symmetric"] in text) == symmetric
        assert (catalogue(lang)["fnd.mat.not_symmetric"] in text) == (not symmetric)


def test_ab_and_ba_are_said_equal_exactly_when_they_are():
    ms = matrices()
    pairs = list(zip(ms[:5], ms[1:6], strict=True)) + [
        (mx.MIRROR, mx.PRESETS["rotate45"]), (mx.rotation(30), mx.rotation(45)), (ms[0], mx.PRESETS["identity"])]
    for A, B in pairs:
        a, b = np.array(A).reshape(2, 2), np.array(B).reshape(2, 2)
        assert mx.commute(A, B) == np.allclose(a @ b, b @ a, rtol=1e-9, atol=1e-12), (A, B)


def test_the_matrices_section_names_the_transpose_in_chinese():
    """Issue 41: the section showed Aᵀ only in a formula."""
    at = open_lab("labs/foundations/page.py", "zh", section="matrices")
    assert not at.exception and "转置" in texts(at)


def test_a_vectors_direction_is_the_sign_of_its_dot_product():
    rng = np.random.default_rng(1)
    pairs = [(tuple(np.round(rng.uniform(-5, 5, 2), 1)), tuple(np.round(rng.uniform(-5, 5, 2), 1))) for _ in SEEDS]
    pairs += [(p[:2], p[2:]) for p in VECTOR_PRESETS.values() if p[:2] != (0.0, 0.0)]
    for a, b in pairs:
        r = analyse(a, b, 1.0)
        dot, cross = a[0] * b[0] + a[1] * b[1], a[0] * b[1] - a[1] * b[0]
        want = ("same" if dot > 0 else "opposite") if abs(cross) < 1e-12 else \
            "perpendicular" if abs(dot) < 1e-12 else "acute" if dot > 0 else "obtuse"
        assert r.kind == want, (a, b)


# ---------- a matrix product's cost ----------
@pytest.mark.parametrize("lang", LANGS)
def test_the_published_peak_is_said_faster_or_slower_as_the_numbers_are(lang):
    a100 = GPUS["A100"].peak_flops
    n = 256
    runs = [time_matmul(n, 1), Timing(n, 0, flops(n, n, n) / 700e12, 700e3, "NVIDIA H100")]  # a device past the A100
    for m in runs:
        with language(lang):
            text = str(result_text(m))
        faster = a100 > m.gflops * 1e9
        key = "fnd.cost.vs.faster" if faster else "fnd.cost.vs.slower"
        factor = a100 / (m.gflops * 1e9) if faster else m.gflops * 1e9 / a100
        assert catalogue(lang)[key].format(ratio=f"{factor:,.1f}") in text


# ---------- CPU against GPU ----------
@pytest.mark.parametrize("lang", LANGS)
def test_the_h100s_work_is_shared_among_the_units_of_each_peak(lang):
    """Issue 41: the work was divided among the 16,896 CUDA cores but the ridge used the Tensor Cores' 989.5 TFLOP/s;
    the CUDA cores' own FP32 peak is about 67 TFLOP/s."""
    h100 = GPUS["H100"]
    assert rf.H100_CUDA_CORES == h100.n_sm * 128 and rf.H100_TENSOR_CORES == h100.n_sm * 4
    assert math.isclose(rf.H100_FP32_FLOPS, rf.H100_CUDA_CORES * 2 * 1.98e9, rel_tol=0.002)  # FMA = 2 FLOPs, 1.98 GHz
    with language(lang):
        text = str(h100_text())
    ridge32, ridge16 = rf.H100_FP32_FLOPS / h100.hbm_bytes_per_s, h100.peak_flops / h100.hbm_bytes_per_s
    for shown in ("16,896", "67 TFLOP/s", "528", "989.5 TFLOP/s", f"{ridge32:.0f} FLOP/", f"{ridge16:.0f} FLOP/",
                  f"{1024 ** 2 / rf.H100_CUDA_CORES:.0f}"):
        assert shown in text, shown
    side = catalogue(lang)["fnd.hw.side.compute"]  # 683 and 1365 FLOP/byte: both right of their ridge
    assert rf.matmul_intensity(4096) > ridge32 and rf.matmul_intensity(4096, 2) > ridge16 and text.count(side) == 2


def sweep(peak_n: int, bandwidth: float) -> rf.Sweep:
    """A sweep whose products reach 100 GFLOP/s at every size and whose copy moves `bandwidth` bytes/s."""
    mm = tuple(rf.Point("matmul", n, 2, flops(n, n, n), rf.matmul_bytes(n), flops(n, n, n) / 100e9)
               for n in rf.SWEEP_SIZES if n <= peak_n)
    e = rf.STREAM_ELEMENTS
    copy = (rf.Point("copy", e, 2, 0, rf.copy_bytes(e), rf.copy_bytes(e) / bandwidth),)
    add = (rf.Point("add", e, 2, rf.add_flops(e), rf.add_bytes(e), rf.add_bytes(e) / (bandwidth / 2)),)
    return rf.Sweep(mm, add, copy, (2,), 1.0)


@pytest.mark.parametrize("top,bandwidth,want", [(2048, 20e9, "compute"), (256, 5e9, "compute"),
                                                (256, 2e9, "memory"), (128, 1e9, "memory")])
def test_the_largest_product_is_placed_on_its_side_of_the_ridge(top, bandwidth, want):
    s = sweep(top, bandwidth)
    big = s.matmul_at(2)[-1]
    assert rf.bound(big.intensity, s.ridge) == want == ("compute" if big.intensity >= 100e9 / bandwidth else "memory")


def test_the_product_always_does_more_arithmetic_per_byte_than_the_addition():
    """fnd.hw.intensity says "the product does {ratio} times more": at every largest size the page offers."""
    assert all(rf.matmul_intensity(n) / rf.add_intensity() > 1 for n in rf.SWEEP_SIZES[2:])


# ---------- the embedding lookup ----------
LOOKUPS = [((4, 18, 7), 20, 4, s) for s in SEEDS] + [((0, 1), 2, 1, 0), ((63, 5, 5), 64, 8, 3)]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("ids,V,d,seed", LOOKUPS)
def test_the_lookup_names_the_first_row_by_its_id(lang, ids, V, d, seed):
    """Issue 41 (zh): "第一行就是第 4 行" mixed a place counted from 1 with an id counted from 0."""
    r = lookup(ids, V, d, seed)
    with language(lang):
        text = str(lookup_text(r, V, d))
    first = ids[0]
    said = {"en": (f"the row of id {first}", f"row {first + 1} of the table"),
            "zh": (f"编号 {first} 的那一行", f"第 {first + 1} 行")}[lang]
    assert all(s in text for s in said) and f"第 {first} 行" not in text
    assert np.array_equal(r.rows[0], r.table[first])  # the result's first row is the row of that id
    one_hot = torch.nn.functional.one_hot(torch.tensor(ids), V).double() @ torch.tensor(r.table, dtype=torch.float64)
    equal = np.array_equal(r.rows, one_hot.numpy().astype(r.rows.dtype))
    assert catalogue(lang)[f"fnd.lk.equal.{equal}"] in text


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("T,V,d", [(3, 20, 4), (2, 2, 1), (8, 64, 8)])
def test_the_one_hot_products_zeros_are_counted(lang, T, V, d):
    """The old caption said "almost all by zero" whatever V; with V = 2 half are."""
    with language(lang):
        text = str(onehot_text(T, V, d))
    assert f"{T * V * d:,}" in text and f"{T * (V - 1) * d:,}" in text and f"{(V - 1) / V:.0%}" in text
