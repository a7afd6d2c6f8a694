"""The shape lab's letters are the course's (issue 22): the notes write H for the hidden size and h for the heads
(B = 2, T = 5, H = 8, h = 4, d_h = 2), so the lab calls its heads h, and says on the page how its d_model and C
relate to the notes' H."""
import re

import pytest

from apptools import open_lab, texts
from ui.i18n import catalogue

PAGE = "labs/shapes/page.py"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_h_is_the_heads_and_h_capital_only_the_notes_hidden_size(lang):
    cat = catalogue(lang)
    shapes = {k: v for k, v in cat.items() if k.startswith("shp.")}
    wrong = [k for k, v in shapes.items() if re.search(r"\bH\b", v) and k != "shp.notation"
             and not re.search(r"\bH = d_model\b", v)]
    assert not wrong, f"H is the notes' hidden size, not the heads: {wrong}"
    assert "d_model / h" in cat["shp.n_head.help"] and cat["shp.n_head"].endswith(" h")
    assert "H" in cat["shp.notation"] and "d_model" in cat["shp.notation"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_says_how_its_letters_meet_the_notes(lang):
    cat = catalogue(lang)
    at = open_lab(PAGE, lang)
    text = texts(at)
    assert cat["shp.notation"] in text and cat["shp.notes_match"] in text  # the default sizes are the notes'
