"""The transformer-block lab against the article and its own runs (issue 22): the Pre/Post-LN explanation takes its
numbers from the runs on screen, the MoE intro reads as a sentence, the article's "top-k is 2 or 4" beside published
routing, and its "MLA beats GQA by an order of magnitude" beside this lab's own KV table."""
import pytest

from apptools import open_lab, texts
from sim.transformers.blocks import (
    KV_KINDS,
    LN_MODES,
    DepthConfig,
    DepthTrainer,
    init_gradient_ratio,
    kv_bytes_per_token_layer,
    kv_ratios,
)
from sim.transformers.moe import PUBLISHED_ROUTING
from sim.transformers.tasks import lab_task
from ui.i18n import catalogue

PAGE = "labs/blocks/page.py"
EN, ZH = catalogue("en"), catalogue("zh")


def ratio_range(task: str, layers: int, width: int) -> tuple[float, float]:
    tk = lab_task(task, 5, 16)
    runs = {ln: DepthTrainer(DepthConfig(len(tk.vocab), tk.block_size, layers, 2, width, ln), tk, 0.01, 0, 0)
            for ln in LN_MODES}
    return init_gradient_ratio(runs["pre"], runs["post"])


@pytest.mark.parametrize("query,expected", [({}, "1.7–2.0×"), ({"r_task": "copy", "r_layers": "4", "r_width": "16"},
                                                                "1.4–1.5×")])
def test_the_residual_explanation_takes_its_numbers_from_the_runs(query, expected):
    v = {"r_task": "reverse", "r_layers": "12", "r_width": "32", **query}
    lo, hi = ratio_range(v["r_task"], int(v["r_layers"]), int(v["r_width"]))
    assert f"{lo:.1f}–{hi:.1f}×" == expected
    at = open_lab(PAGE, "en", section="residual", **query)
    text = texts(at)
    assert f"{expected} block by block" in text and "ln 8 ≈ 2.08" in text and "about twice" not in text
    assert "大约两倍" not in ZH["blk.res.explain.larger"] and "{lo}–{hi}" in ZH["blk.res.explain.larger"]


def test_the_moe_intro_writes_the_capacity_as_a_sentence():
    assert "接收 容量 =" not in ZH["blk.moe.intro"] and "容量 = 该批 token 数 × k ÷ E × 容量因子" in ZH["blk.moe.intro"]
    assert "at most capacity =" not in EN["blk.moe.intro"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_published_routing_beside_the_articles_top_k(lang):
    assert PUBLISHED_ROUTING["DeepSeek-V3"] == (256, 8) and PUBLISHED_ROUTING["Qwen3-235B-A22B"] == (128, 8)
    cat = catalogue(lang)
    at = open_lab(PAGE, lang, section="moe", m_experts="16", m_k="2")
    text = texts(at)
    assert cat["blk.course.topk.says"] in text
    for name, E, k, share in (("DeepSeek-V3", 256, 8, "3.1%"), ("Qwen3-235B-A22B", 128, 8, "6.2%"),
                              ("Mixtral 8×7B", 8, 2, "25.0%")):
        assert cat["blk.course.topk.model"].format(name=name, k=k, E=E, share=share) in text
    assert cat["blk.course.topk.shows"].split("{models}")[1].format(k=2, E=16, share="12.5%") in text


def test_mla_against_gqa_at_the_labs_defaults_is_not_an_order_of_magnitude():
    per = {kind: kv_bytes_per_token_layer(kind, 128, 128, 8, 512, 64, 2) for kind in KV_KINDS}
    ratios = kv_ratios(per)
    assert per["gqa"] // 2 == 2 * 8 * 128 == 2048 and per["mla"] // 2 == 576
    assert ratios["gqa"] == pytest.approx(3.56, abs=0.01) and ratios["mha"] == pytest.approx(56.9, abs=0.05)
    for lang in ("en", "zh"):
        cat = catalogue(lang)
        text = texts(open_lab(PAGE, lang, section="kv"))
        assert cat["blk.course.mla.shows"].format(
            kv=8, gqa=2048, mla=576, vs_gqa=cat["blk.course.mla.fewer"].format(ratio="3.6"),
            vs_mha=cat["blk.course.mla.magnitude"].format(ratio="56.9")) in text
    text = texts(open_lab(PAGE, "en", section="kv", k_kv="64"))
    assert EN["blk.course.mla.magnitude"].format(ratio="28.4") in text


def test_the_course_texts_are_named_the_article():
    for key in ("blk.moe.params", "blk.kv.article.match", "blk.kv.article.other"):
        assert "课程文本" not in ZH[key] and "文章" in ZH[key] and "course text" not in EN[key]
