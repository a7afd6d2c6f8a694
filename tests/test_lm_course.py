"""The language-model lab against the article (issue 22): Chinchilla was compute-matched to Gopher, not GPT-3, and
GPT-3 trained on 300 B tokens drawn from a mix of about 500 B tokens (the article's "500 billion words"). Computed with
C ≈ 6·N·D from the published sizes, and written beside the article's sentences on the page."""
import pytest

from apptools import open_lab, texts
from sim.language.scaling import GPT3_MIX, MODELS, model_flops
from ui.i18n import catalogue

PAGE = "labs/lm/page.py"


def test_chinchilla_matches_gophers_compute_not_gpt3s():
    c, gpt3, gopher = (model_flops(n) for n in ("Chinchilla", "GPT-3", "Gopher"))
    assert c == pytest.approx(5.88e23) and gpt3 == pytest.approx(3.15e23) and gopher == pytest.approx(5.04e23)
    assert abs(c / gopher - 1) < 0.2 < abs(c / gpt3 - 1)  # 1.17 against 1.87


def test_gpt3s_tokens_and_its_mix():
    _, N, D = next(m for m in MODELS if m[0] == "GPT-3")
    assert (N, D) == (175e9, 300e9) and sum(GPT3_MIX.values()) == 499


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_laws_section_writes_both_notes(lang):
    cat = catalogue(lang)
    text = texts(open_lab(PAGE, lang, section="laws"))
    assert cat["lm.course.chinchilla.says"] in text and cat["lm.course.gpt3.says"] in text
    assert cat["lm.course.chinchilla.shows"].format(chinchilla="5.88e+23", gpt3="3.15e+23", gopher="5.04e+23",
                                                    r_gpt3="1.87", r_gopher="1.17") in text
    mix = cat["lm.list_sep"].join(f"{k} {b}" for k, b in GPT3_MIX.items())
    assert cat["lm.course.gpt3.shows"].format(pool=499, trained="300", share="60%", per_param="1.71",
                                              flops="3.15e+23", mix=mix) in text
