"""AppTest: the language-model lab in both languages, its URL values, the tokens it shows, training, the text box's
refusals, the published numbers, and widget fuzzing."""
import random

import pytest

from apptools import fuzz_widget, live_advance, live_model, metrics, open_lab, schema_choices, shared_lab, table, texts
from labs.lm.schema import SCHEMA
from sim.language.scaling import compute_optimal
from ui.i18n import catalogue

LM = "labs/lm/page.py"
EN, ZH = catalogue("en"), catalogue("zh")
CHOICES = schema_choices("lm", SCHEMA)
STRINGS = ("", "猫追狗", " the cat", "x" * 250, "小猫" * 150, "<b>$x$</b> [a](http://e.com)")


def lm_page(lang="en", **query):
    return open_lab(LM, lang, **query)


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("section", CHOICES["lm.section"])
def test_every_section_in_both_languages(lang, section):
    at = shared_lab(LM, lang, section=section)
    assert at.title[0].value == catalogue(lang)["lm.title"]
    assert not at.error


def test_bpe_tokens_and_merges_from_the_url():
    at = lm_page(section="tokens", tokenizer="bpe", vocab="384", shown="0", language="zh")
    m = metrics(at)
    assert m[EN["lm.m.tokens"]] == m[EN["lm.m.bytes"]]  # no merges applied: one token per byte
    at.slider(key="lm.shown").set_value(128).run()
    m = metrics(at)
    assert int(m[EN["lm.m.tokens"]]) < int(m[EN["lm.m.bytes"]]) and m[EN["lm.m.vocab"]] == "384"
    assert at.query_params["shown"] == "128" and at.query_params["vocab"] == "384"
    assert "�" in at.code[-1].value  # the UTF-8 pitfall: part of a character decodes to the replacement character


def test_published_laws_follow_the_budget():
    at = lm_page(section="laws", log_c="21")
    table = at.dataframe[0].value
    n = compute_optimal(1e21, "epoch")[0]
    assert f"{n:.3g}" in table.to_string()
    assert "2e+22" in texts(at)  # the article's rule spends 20 × 10²¹
    at.slider(key="lm.log_served").set_value(16.0).run()
    assert not at.exception


def test_own_text_refusals_keep_the_page_working():
    at = lm_page(section="train", source="own")
    assert EN["lm.text_error.too_short"].split("{")[0] in texts(at)
    at.text_area(key="lm.own_text").set_value("short").run()
    assert not at.exception and at.error
    at.text_area(key="lm.own_text").set_value("the notes say: a model predicts the next token. " * 10).run()
    assert not at.exception and not at.error
    assert "lm.train.cursor" in at.session_state


def test_training_steps_and_the_live_caption():
    at = lm_page(section="train", speed="5")
    next(b for b in at.button if b.key == "lm.train.step").click().run()
    assert not at.exception
    with live_model(at, "lm.train") as run:
        assert run.trainer.steps == 5 and run.val_history
    assert at.text_input(key="lm.prompt").value


def test_bad_url_values_get_a_notice():
    at = lm_page(section="train", lr="7", context="1000", temperature="-1", width="banana")
    assert len(at.warning) >= 4
    assert at.query_params["lr"] == "0.003" and at.query_params["context"] == "32"


def test_zh_sampling_settings_from_the_url():
    at = lm_page("zh", section="train", language="zh", tokenizer="bpe", vocab="280", temperature="0", top_k="3")
    assert not at.exception and at.slider(key="lm.temperature").value == 0.0
    assert ZH["lm.prompt_title"] in [s.value for s in at.subheader]


def test_fuzz_every_widget():
    rng = random.Random(5)
    at = lm_page()
    for section in ("tokens", "train", "laws", "measured", "tokens"):
        at.segmented_control(key="lm.section").set_value(section).run()
        for i in range(8):
            widgets = [w for kind in ("slider", "select_slider", "selectbox", "number_input", "toggle", "text_input",
                                      "text_area", "segmented_control")
                       for w in getattr(at, kind)
                       if w.key and w.key.startswith("lm.") and w.key != "lm.section" and not w.disabled]
            w = rng.choice(widgets)
            fuzz_widget(w, rng, CHOICES, STRINGS).run()
            assert not at.exception, (section, i, w.key, w.value, at.exception)
            if "lm.train.cursor" in at.session_state and rng.random() < 0.3:
                live_advance(at, "lm.train", 3)


def test_measured_sweep_is_also_fitted_with_e_held_at_the_entropy():
    """The bundled sweep: the free fit and the fit with E held at the known entropy, from the same points."""
    import json
    import math

    from sim.language.lm import SWEEPS_DIR, sweep_points
    from sim.language.scaling import fit_loss_surface

    sweep = json.loads(sorted(SWEEPS_DIR.glob("sweep-*.json"))[-1].read_text(encoding="utf-8"))
    points = sweep_points([r for r in sweep["runs"] if math.isfinite(r["loss"])])
    held = fit_loss_surface(points, sweep["floor_per_token"])
    at = lm_page("en", section="measured")
    assert not at.exception
    shown = texts(at)
    assert f"α = {held.alpha:.2f} and β = {held.beta:.2f}" in shown
    assert f"RMS error of {held.rms_log_error(points):.3f}" in shown
    assert EN["lm.col.held_n"] in at.dataframe[-1].value.columns


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_articles_sentence_as_next_token_pairs(lang):
    at = lm_page(lang, section="tokens")
    cat = catalogue(lang)
    df = table(at, cat["lm.pairs.col.target"])
    pairs = list(zip(df[cat["lm.pairs.col.input"]], df[cat["lm.pairs.col.target"]], strict=True))
    assert len(pairs) == 7 and pairs[-1] == ("我今天吃了一碗", "面") and ("我今天吃了", "一") in pairs
    at.text_input(key="lm.pairs_text").set_value("猫追狗").run()
    df = table(at, cat["lm.pairs.col.target"])
    assert list(df[cat["lm.pairs.col.target"]]) == ["追", "狗"] and not at.exception


def test_the_articles_two_plans_beside_the_inference_law():
    at = lm_page(section="laws", fit="hoffmann", log_served="13")
    df = table(at, EN["lm.plans.col.per_token"])
    assert list(df[EN["lm.plans.col.train"]]) == ["8.4e+22", "8.4e+22"]
    assert list(df[EN["lm.plans.col.per_token"]]) == ["1.4e+10", "2.8e+10"]
    assert list(df[EN["lm.plans.col.loss"]]) == ["2.020", "2.014"]
    assert EN["lm.plans.match"].split("{")[0] in texts(at) and not at.error


def test_the_tokens_figure_marks_the_merges_applied():
    """The tokens section's figure: BPE's curve from the 256 bytes to the vocabulary set, the star at the merges
    the coloured text applies (from the URL), and the metrics below it count the same tokens."""
    import json

    at = lm_page(section="tokens", tokenizer="bpe", vocab="320", shown="10")
    (chart,) = [c for c in at.get("plotly_chart") if "lm.fig.compression" in c.proto.id]
    curve, _, star = json.loads(chart.proto.spec)["data"]
    assert curve["x"][0] == 256 and curve["x"][-1] == 320 and star["x"] == [266]
    m = metrics(at)
    assert abs(star["y"][0] - int(m[EN["lm.m.tokens"]]) / int(m[EN["lm.m.chars"]])) < 1e-9


def test_the_class_sweep_is_one_choice_away():
    """The measured section shows the bundled sweep; choosing the class's shows its language and Run button, and
    says that no sweep has run yet instead of a figure."""
    at = lm_page(section="measured")
    assert at.selectbox(key="lm.sweep").value == "bundled" and at.get("vega_lite_chart")
    at.selectbox(key="lm.sweep").set_value("class").run()
    assert not at.exception and at.query_params["sweep"] == "class"
    assert any(b.key == "lm.run_sweep" for b in at.button)
    assert EN["lm.class_sweep_none"].split("{")[0] in texts(at)


def test_the_class_sweep_runs_once_per_process_whatever_the_tabs(monkeypatch):
    """Two tabs pressing Run (one after the other, or at once: a lock) run one sweep, which both show; a language
    not swept yet is run on its own press."""
    from labs.lm import measured

    measured.class_sweeps.clear()
    monkeypatch.setattr(measured, "LIVE_BUDGETS", (3e6,))
    monkeypatch.setattr(measured, "LIVE_WIDTHS", (4, 8))
    calls = []
    real = measured.sweep
    monkeypatch.setattr(measured, "sweep", lambda task, *a, **k: calls.append(task) or real(task, *a, **k))
    tabs = [lm_page(section="measured", sweep="class", language="en") for _ in range(2)]
    for at in tabs:
        at.button(key="lm.run_sweep").click().run()
        assert not at.exception and EN["lm.class_sweep_none"].split("{")[0] not in texts(at)
    assert len(calls) == 1 and len(measured.class_sweeps()["en"]["runs"]) == 2
    measured.class_sweeps.clear()
