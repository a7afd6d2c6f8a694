"""AppTest: the shape chain lab in both languages, URL values, presets, bad sizes, and a widget fuzz."""
import random

import pytest
from apptools import open_lab, texts

from sim.shapes import PRESETS
from ui.i18n import catalogue
from labs.shapes.schema import SCHEMA

PAGE = "labs/shapes/page.py"
EN = catalogue("en")


def page(lang="en", **query):
    return open_lab(PAGE, lang, **query)


def message_head(key: str) -> str:
    """The fixed start of a message, before its first placeholder."""
    return EN[key].split("{")[0][:30]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_page_in_both_languages_shows_the_notes_chain(lang):
    at = page(lang)
    assert at.title[0].value == catalogue(lang)["shp.title"]
    text = texts(at)
    for shape in ("[2, 5, 8]", "[2, 5, 4, 2]", "[2, 4, 5, 2]", "[2, 4, 5, 5]"):
        assert f"`{shape}`" in text
    assert catalogue(lang)["shp.notes_match"] in text
    assert at.get_by_key("shp.flow_fig") and at.get_by_key("shp.kv_fig")
    assert not at.error


def test_url_values_set_the_widgets_and_bad_ones_get_a_notice():
    at = page(d_model="768", n_head="12", seq_len="1024", n_kv_head="3", batch="0", n_layer="-2", dtype="float8")
    assert at.number_input(key="shp.d_model").value == 768 and at.slider(key="shp.n_head").value == 12
    assert at.number_input(key="shp.seq_len").value == 1024
    assert at.slider(key="shp.batch").value == 2 and at.slider(key="shp.n_layer").value == 2  # defaults
    assert at.selectbox(key="shp.dtype").value == "float32"
    assert len(at.warning) == 3  # batch, n_layer and dtype, each with a notice
    assert "`[2, 12, 1024, 1024]`" in texts(at)  # the scores of 12 heads over 1024 tokens
    link = at.code[0].value
    assert "d_model=768" in link and "n_head=12" in link and "lang=en" in link


def test_heads_that_do_not_divide_d_model_get_a_message_and_keep_the_settings():
    at = page(d_model="10")
    assert not at.exception and len(at.error) == 1
    assert message_head("shp.error.heads_divide") in at.error[0].value and "1, 2, 5, 10" in at.error[0].value
    assert at.number_input(key="shp.d_model").value == 10 and at.slider(key="shp.n_head").value == 4
    at.slider(key="shp.n_head").set_value(5).run()
    assert not at.exception and not at.error and "`[2, 5, 5, 2]`" in texts(at)
    assert at.slider(key="shp.n_kv_head").value == 5  # KV heads equal to the heads follow them


def test_kv_heads_that_do_not_divide_get_a_message_and_the_rest_stays():
    at = page(n_kv_head="3")
    assert len(at.error) == 1 and message_head("shp.error.kv_heads_divide") in at.error[0].value
    assert EN["shp.notes_match"] in texts(at)  # the chain is still shown
    at.slider(key="shp.n_kv_head").set_value(2).run()
    assert not at.error and "640 B" in texts(at)  # 2 layers × 2 × 5 × (2 × 2) × 4 B × B = 2


def test_presets_set_every_size():
    at = page()
    for name, config in PRESETS.items():
        at.button(key=f"shp.preset_{name}").click().run()
        assert not at.exception, name
        assert at.number_input(key="shp.d_model").value == config.d_model
        assert at.slider(key="shp.n_layer").value == config.n_layer
    assert at.query_params["seq_len"] == str(PRESETS["long"].seq_len)


def test_sizes_too_large_for_memory_warn_without_allocating():
    at = page(batch="64", seq_len="131072", d_model="16384", n_head="128", d_ff="65536", vocab_size="262144",
              n_layer="128")
    assert not at.exception
    assert message_head("shp.too_large") in "\n".join(w.value for w in at.warning)
    assert "`[64, 128, 131072, 131072]`" in texts(at)


def _fuzz_once(w, rng):
    """A random value for a widget, favouring the ends of its range (where things break)."""
    kind = type(w).__name__
    if kind == "Selectbox":
        return w.set_value(rng.choice({p.name: p.choices for p in SCHEMA}[w.key.removeprefix("shp.")]))
    lo, hi = int(w.min), int(w.max)
    small = rng.randint(lo, min(hi, lo + 16))  # small sizes make divisibility clashes likely
    return w.set_value(rng.choice([lo, hi, small, rng.randint(lo, hi)]))


def test_fuzz_every_widget():
    rng = random.Random(4)
    at = page()
    errors = 0
    for i in range(50):
        widgets = [w for kind in ("slider", "number_input", "selectbox") for w in getattr(at, kind)
                   if w.key and w.key.startswith("shp.")]
        w = rng.choice(widgets)
        _fuzz_once(w, rng).run()
        assert not at.exception, (i, w.key, w.value, at.exception)
        errors += bool(at.error)
        if rng.random() < 0.15:
            at.button(key=f"shp.preset_{rng.choice(list(PRESETS))}").click().run()
            assert not at.exception
    assert errors, "the fuzz met an invalid combination at least once"
