"""The GPU lab against the course texts: the article's "~50 MB SRAM" set beside the H100's table entry, the
tiling's two sources (FlashAttention-1's block sizes, FlashAttention-2's loop order), the Tensor Core count,
and the Chinese catalogues' wording and punctuation."""
import dataclasses
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from apptools import open_lab, texts
from sim.gpu import memsim
from sim.gpu.memsim import (
    ARTICLE_TENSOR_CORE_FLOPS,
    GPUS,
    MemsimError,
    attention_io,
    block_rule,
    block_sizes,
    mma_ops,
    sram_claim,
)
from sim.plots.shapes import human_bytes
from ui.i18n import catalogue

FILE = "labs/gpu/page.py"
ROOT = Path(__file__).resolve().parent.parent
ZH_FILES = ("gpu", "gpu_anim", "gpu_measure")
CJK = r"[\u3400-\u9fff]"


def page(lang="en", **query):
    return open_lab(FILE, lang, **query)


# 1. the article's SRAM figure is the H100's L2

def test_the_articles_50_mb_is_the_h100_l2_not_its_shared_memory():
    c = sram_claim(GPUS["H100"])
    # NVIDIA H100 whitepaper: 50 MB L2 (50 MiB as the driver reports it), 228 KB shared memory per SM, 132 SMs
    assert (c.claim_bytes, c.l2_bytes, c.smem_per_sm_bytes, c.n_sm) == (50_000_000, 52_428_800, 233_472, 132)
    assert c.smem_total_bytes == 233_472 * 132 == 30_818_304
    assert c.closest == "l2"
    assert sram_claim(GPUS["H100"], 200 * 1024).closest == "smem_per_sm"
    with pytest.raises(MemsimError) as e:
        sram_claim(GPUS["H100"], 0)
    assert e.value.code == "not_positive"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_intro_sets_the_article_beside_the_h100_table(lang):
    at = page(lang)
    cat = catalogue(lang)
    c = sram_claim(GPUS["H100"])
    shown = [m.value for m in at.markdown]
    assert cat["gpu.course.article_says"].format(claim="50 MB") in shown
    assert cat["gpu.course.on_h100"].format(gpu=GPUS["H100"].name, l2="50.0 MiB", smem="228.0 KiB", sms=132,
                                            total=human_bytes(c.smem_total_bytes)) in shown
    # credited to the LLM article, not to the course notes; nothing about it left in the roofline's note
    assert ("文章" if lang == "zh" else "article") in cat["gpu.course.article_says"]
    for key in ("gpu.course.article_says", "gpu.course.on_h100", "gpu.roof.note"):
        assert not re.search("讲义|course notes|course text|228|132|50", cat[key]), key


def test_the_intro_numbers_come_from_the_gpu_table(monkeypatch):
    spec = dataclasses.replace(GPUS["H100"], l2_bytes=40 * 2**20, smem_per_sm_bytes=100 * 1024, n_sm=10)
    monkeypatch.setitem(GPUS, "H100", spec)
    shown = "\n".join(m.value for m in page().markdown)
    assert "40.0 MiB" in shown and "100.0 KiB" in shown and "1000.0 KiB" in shown and "228.0 KiB" not in shown


# 2. FlashAttention-1's block sizes, FlashAttention-2's loop order

@pytest.mark.parametrize("lang, sram_kib, d, dtype", [("en", 48, 64, "float16"), ("zh", 64, 64, "float16"),
                                                      ("en", 100, 32, "float32"), ("zh", 7, 16, "bfloat16")])
def test_the_tiling_text_shows_the_simulators_block_sizes(lang, sram_kib, d, dtype):
    at = page(lang, sram_kib=str(sram_kib), d=str(d), dtype=dtype)
    cat = catalogue(lang)
    elem = 4 if dtype == "float32" else 2
    bm, bn = block_sizes("tiled", d, elem, None, None, sram_kib * 1024)
    assert (bm, bn) == (min(bn, d), sram_kib * 1024 // elem // (4 * d))  # the rule, written out independently
    rule = cat["gpu.tiling.rule"].format(sram=human_bytes(sram_kib * 1024), bytes=elem,
                                         m=f"{sram_kib * 1024 // elem:,}", d=d, bn=bn, bm=bm)
    order = cat["gpu.tiling.order"].format(t_r=f"{math.ceil(1024 / bm):,}", t_c=f"{math.ceil(1024 / bn):,}")
    shown = texts(at)
    assert rule in shown and order in shown
    assert "FlashAttention-1" in rule and "FlashAttention-2" in order and "FlashAttention-1" in order


def test_hand_set_blocks_are_called_so():
    at = page(block_m="32", block_n="16")
    assert catalogue("en")["gpu.tiling.manual"].format(bm=32, bn=16) in texts(at)


def test_block_rule_and_the_docstrings_name_both_papers():
    assert block_rule(64, 64 * 1024, 2) == {"m_elems": 32768, "bn": 128, "bm": 64}
    for doc in (memsim.__doc__, memsim.default_blocks.__doc__, memsim._replay_tiled.__doc__):
        assert "FlashAttention-1" in doc and "FlashAttention-2" in doc


def test_the_simulator_runs_the_outer_loop_over_query_blocks():
    r = attention_io("tiled", 256, 16, block_m=64, block_n=32, n_sm=1)
    t_r, t_c = 4, 8
    assert (r.t_r, r.t_c) == (math.ceil(256 / 64), math.ceil(256 / 32)) == (t_r, t_c)
    loads = [(e.tensor, e.row_block, e.col_block) for e in r.events if e.action == "load"]
    assert [rb for _, rb, _ in loads] == sorted(rb for _, rb, _ in loads)  # query blocks one after another
    assert [x for x in loads if x[0] == "Q"] == [("Q", i, None) for i in range(t_r)]  # each Q block read once
    assert [x for x in loads if x[0] == "K"] == [("K", i, j) for i in range(t_r) for j in range(t_c)]
    assert [e.row_block for e in r.events if e.action == "store"] == list(range(t_r))  # each O block written once


# 3. a Tensor Core's 4×4×4 multiply-accumulate

def _counted_mma(m, n, k):
    """D = A·B + C by loops, counting every multiplication and addition."""
    rng = np.random.default_rng(0)
    a, b, c = rng.normal(size=(m, k)), rng.normal(size=(k, n)), rng.normal(size=(m, n))
    d, muls, adds = c.copy(), 0, 0
    for i in range(m):
        for j in range(n):
            for p in range(k):
                d[i, j] += a[i, p] * b[p, j]
                muls += 1
                adds += 1
    assert np.allclose(d, a @ b + c)
    return muls, muls + adds


@pytest.mark.parametrize("m, n, k", [(4, 4, 4), (2, 3, 5), (16, 8, 16)])
def test_mma_ops_against_a_counted_loop(m, n, k):
    muls, flops = _counted_mma(m, n, k)
    assert mma_ops(m, n, k) == {"m": m, "n": n, "k": k, "madds": muls, "flops": flops}


def test_a_4x4_tensor_core_op_is_128_flops_not_the_articles_64():
    assert mma_ops(4, 4, 4)["flops"] == 128 == 2 * ARTICLE_TENSOR_CORE_FLOPS
    with pytest.raises(MemsimError):
        mma_ops(4, 0, 4)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_roofline_note_corrects_the_tensor_core_count(lang):
    cat = catalogue(lang)
    note = cat["gpu.tensor_core"].format(article=64, m=4, n=4, k=4, madds=64, flops=128)
    assert "128 FLOPs" in note
    assert not re.search(r"(?<![\d.])(4|64|128)(?![\d.])", cat["gpu.tensor_core"])  # computed, not typed
    at = page(lang, view="roofline")
    assert cat["gpu.roof.note"] + "\n\n" + note in [c.value for c in at.caption]
    at = page(lang, view="animate")  # the animation names the Tensor Core too
    assert note in [c.value for c in at.caption]


# 4. the Chinese catalogues

def zh_texts():
    for name in ZH_FILES:
        for key, text in json.loads((ROOT / "assets/i18n/zh" / f"{name}.json").read_text(encoding="utf-8")).items():
            yield f"{name}:{key}", text


def test_no_half_width_punctuation_next_to_chinese():
    bad = [(key, m.group()) for key, text in zh_texts()
           for m in re.finditer(rf"{CJK}[,;:()]|[,;:()]{CJK}", text)]
    assert not bad


def test_no_chinese_style_half_width_commas_or_brackets_around_chinese():
    pattern = rf",(?![ \d])|;(?! )|\([^()]*{CJK}[^()]*\)"  # "2,float32", "(参考线)" one step from a character
    bad = [(key, m.group()) for key, text in zh_texts() for m in re.finditer(pattern, text)]
    assert not bad


def test_the_course_terms():
    texts_ = dict(zh_texts())
    for word in ("峰值内存", "内核", "张量核心"):  # 峰值显存 on a GPU; the article writes kernel and Tensor Core
        assert not [k for k, v in texts_.items() if word in v], word
    assert "峰值显存" in texts_["gpu_measure:gpu.measure.col.peak"]
    assert "kernel" in texts_["gpu_anim:gpu.anim.kernel.fused"]
    assert "Tensor Core" in texts_["gpu_anim:gpu.anim.compute"]


def test_the_sram_help_takes_its_figures_from_the_table(monkeypatch):
    monkeypatch.setitem(GPUS, "A100", dataclasses.replace(GPUS["A100"], smem_per_sm_bytes=100 * 1024))
    at = page("zh")  # AppTest runs the page's script afresh, so its SMEM figures are read from the patched table
    (widget,) = [w for w in at.number_input if w.key == "gpu.sram_kib"] or [at.slider(key="gpu.sram_kib")]
    assert "228.0 KiB" in widget.help and "100.0 KiB" in widget.help and "{" not in widget.help
