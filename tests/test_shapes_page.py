"""AppTest: the shape chain lab in both languages, URL values, presets, bad sizes, and a widget fuzz."""
import random
from dataclasses import asdict

import pytest

from apptools import open_lab, shared_lab, table, texts
from labs.shapes.schema import SCHEMA
from sim.transformers.shapes import PRESETS
from ui.i18n import catalogue
from ui.schema import write_query

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


def test_the_notes_ids_looked_up_in_the_embedding():
    at = page()
    df = table(at, "7")
    assert list(df.index) == ["row 1 = E[4]", "row 2 = E[18]", "row 3 = E[7]"] and df.shape == (3, 8)
    text = texts(at)
    text = text.replace("\\", "")  # the ids reach the page through plain(): brackets escaped
    assert "ids [4, 18, 7]" in text and "E [64, 8] and the ids [3] give E[ids] [3, 8]" in text
    at = page(vocab_size="10")
    assert message_head("shp.error.id_range") in texts(at) and not any(len(d.value) == 3 for d in at.dataframe)


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


def gpt2_page(lang: str):
    """The page opened on the GPT-2 preset's link (AppTest can only run the Chinese page without interaction); one
    run shared by the tests below, which only read it."""
    return shared_lab(PAGE, lang, **write_query(SCHEMA, asdict(PRESETS["gpt2"])))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_gpt2_preset_is_tied_and_untying_is_explained(lang):
    cat = catalogue(lang)
    at = gpt2_page(lang)
    assert at.toggle(key="shp.tie_embeddings").value is True and at.query_params["tie_embeddings"] == "1"
    assert at.metric[0].value == "124 M"
    text = texts(at)
    assert "124,439,808" in text and "163,037,184" in text and "38,597,376" in text  # tied, untied, V × C
    assert cat["shp.tied.on"].split("{")[0] in text


def test_the_gpt2_button_ties_and_the_toggle_unties():
    at = page()
    at.button(key="shp.preset_gpt2").click().run()
    assert at.toggle(key="shp.tie_embeddings").value is True and at.metric[0].value == "124 M"
    at.toggle(key="shp.tie_embeddings").set_value(False).run()
    assert at.metric[0].value == "163 M" and EN["shp.tied.off"].split("{")[0] in texts(at)
    assert at.query_params["tie_embeddings"] == "0"
    at.button(key="shp.preset_gpt2").click().run()
    at.button(key="shp.preset_notes").click().run()  # a preset sets the toggle too
    assert at.toggle(key="shp.tie_embeddings").value is False


def test_tie_embeddings_comes_from_the_url_and_a_bad_value_gets_a_notice():
    at = page(tie_embeddings="true")
    assert at.toggle(key="shp.tie_embeddings").value is True and not at.error
    at = page(tie_embeddings="maybe")
    assert at.toggle(key="shp.tie_embeddings").value is False and len(at.warning) == 1
    assert "maybe" in at.warning[0].value


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_flops_split_shows_2n_6n_attention_and_head(lang):
    at = gpt2_page(lang)
    text = texts(at)
    # N = 85,056,000: 2N = 170 M and 6N = 510 M per token; 2N × 1024 tokens, attention 4·12·1024²·768, head 2·768·V·1024
    for figure in ("85.1 M", "170 M", "510 M", "174 G", "38.7 G", "79 G", "1,024"):
        assert figure in text, figure
    assert "attention's T² work" not in EN["shp.metric.flops_help"]  # the old, wrong explanation


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_training_memory_for_the_model_on_screen_and_the_articles_70b(lang):
    cat = catalogue(lang)
    at = gpt2_page(lang)
    mine = table(at, cat["shp.train.col.fp32"].format(b=16))
    assert list(mine.iloc[-1, 1:]) == ["1.9 GiB", "1.9 GiB"]  # 16 B × 124,439,808 = 1,991,036,928 B
    assert list(mine.iloc[:, 2])[:3] == ["237.4 MiB", "237.4 MiB", "474.7 MiB"]  # 2 B, 2 B, 4 B per parameter
    article = table(at, cat["shp.train.col.article"])
    assert list(article[cat["shp.train.col.computed"]]) == ["140 GB", "140 GB", "280 GB", "560 GB", "1,120 GB"]
    assert article[cat["shp.train.col.article"]].iloc[-1] == cat["shp.train.over"].format(v="420 GB")
    note = cat["shp.train.article_note"].split("{")[0]
    assert any(c.value.startswith(note) and "1,120 GB" in c.value and "420 GB" in c.value for c in at.caption)


def test_every_literal_key_of_the_lab_exists_in_both_languages():
    import ast
    from pathlib import Path

    keys = {node.args[0].value for path in (Path(__file__).parent.parent / "labs" / "shapes").glob("*.py")
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "t" and node.args
            and isinstance(node.args[0], ast.Constant)}
    assert "shp.train.article_note" in keys  # labs/shapes/training.py is read too
    for lang in ("zh", "en"):
        assert not keys - set(catalogue(lang)), lang
