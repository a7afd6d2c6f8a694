"""AppTest: the assistant lab's paradigms and data sections in both languages, the numbers they write (against the
engine), the live run's buttons, bad URL values, and widget fuzzing. (The pipeline section is another branch's.)"""
import json
import random

import numpy as np
import pytest

from apptools import fuzz_widget, live_advance, live_model, open_lab, schema_choices, shared_lab, table, texts
from labs.assistant.schema import PAGE as P
from labs.assistant.schema import SCHEMA
from sim.dedup import clean as cleaning
from sim.dedup.clean import CleanConfig, clean
from sim.dedup.corpus import make_corpus
from sim.dedup.live import read
from sim.paradigms.bandit import result, train_bandit
from sim.paradigms.generative import accuracy, fit_gaussians, fit_logistic, two_classes
from ui.i18n import catalogue
from ui.schema import format_value

PAGE = "labs/assistant/page.py"
EN = catalogue("en")
OURS = ("paradigms", "data")
PARAMS = {p.name: p for p in SCHEMA}


def page(lang="en", **query):
    return open_lab(PAGE, lang, **query)


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("section", OURS)
def test_each_section_in_both_languages(lang, section):
    at = shared_lab(PAGE, lang, section=section)
    cat = catalogue(lang)
    assert at.title[0].value == cat["asst.title"]
    assert not at.error and not at.exception
    charts = len(at.get("plotly_chart"))
    assert charts == (4 if section == "paradigms" else 3)


def test_the_paradigms_section_writes_the_two_models_numbers():
    at = page(section="paradigms", p_n="60", p_sep="1.5", p_samples="40", p_seed="3", p_shared="1")
    assert not at.exception
    X, y = two_classes(60, 1.5, 3)
    lg, g = fit_logistic(X, y), fit_gaussians(X, y, shared=True)
    want = EN["asst.gen.result"].format(acc_d=f"{accuracy(lg.proba(X), y):.1%}", acc_g=f"{accuracy(g.proba(X), y):.1%}",
                                        w1=f"{lg.w[0]:.2f}", w2=f"{lg.w[1]:.2f}", b=f"{lg.b:.2f}", n_params_d=3,
                                        n_params_g=8, p0="0.50", p1="0.50", m=40)
    assert want in texts(at)
    key, params = result(train_bandit(300, 0.2, 3))
    assert EN[key].format(**params) in texts(at)


def test_the_sentence_becomes_next_token_pairs_and_a_short_one_is_a_warning():
    at = page(section="paradigms")
    df = table(at, EN["asst.sig.context"])
    assert list(df[EN["asst.sig.context"]])[:3] == ["t", "th", "the"] and list(df[EN["asst.sig.next"]])[:4] == \
        ["h", "e", "␣", "c"]
    at.text_input(key="asst.sentence.en").set_value("x").run()
    assert [w.value for w in at.warning] == [EN["asst.sig.too_short"]] and not at.exception
    zh = page("zh", section="paradigms")
    df = zh.dataframe[0].value
    assert len(df) == len("我今天吃了一碗面") - 1 and df.iloc[0, 0] == "我" and df.iloc[0, 1] == "今"


def test_the_map_links_to_the_labs_that_show_each_level():
    at = shared_lab(PAGE, "en", section="paradigms")
    spec = json.loads(next(c for c in at.get("plotly_chart") if c.proto.id.endswith("asst.fig.map")).proto.spec)
    hrefs = " ".join(a["text"] for a in spec["layout"]["annotations"])
    for lab in ("classification", "blocks", "lm", "assistant"):
        assert f'href="/{lab}?lang=en"' in hrefs
    assert len(at.get("page_link")) == 4


def test_the_data_section_writes_the_engines_scores():
    q = {"d_steps": format_value(PARAMS["d_steps"], ("exact", "near")), "d_threshold": "0.6", "d_seed": "2"}
    at = page(section="data", **q)
    assert not at.exception and not at.error
    c = make_corpus(2)
    r = clean(c, CleanConfig(steps=("exact", "near"), threshold=0.6, seed=2))
    df = table(at, EN["asst.data.col.recall"])
    assert list(df[EN["asst.data.col.removed"]]) == [len(s.removed) for s in r.steps]
    assert list(df[EN["asst.data.col.recall"]]) == [f"{s.recall:.1%}" for s in r.steps]
    for key, params in (cleaning.summary(c, r), cleaning.left(r)):
        assert EN[key].format(**params) in texts(at)


def test_no_step_says_so_and_the_near_step_off_still_shows_minhash():
    at = page(section="data", d_steps=format_value(PARAMS["d_steps"], ("quality",)))
    assert EN["asst.data.mh.off"] in texts(at) and not at.exception
    at = page(section="data", d_steps="")
    assert not at.exception


def test_step_trains_both_models_and_reset_goes_back():
    at = page(section="data", d_speed="2")
    at.button(key="asst.data.train.step").click().run()
    assert not at.exception
    with live_model(at, "asst.data.train") as run:
        assert run.trainers["raw"].steps == run.trainers["clean"].steps == 2
    live_advance(at, "asst.data.train", 24)
    at.run()
    with live_model(at, "asst.data.train") as run:
        f = run.frame()
    for key, params in read(f):  # the reading of the step the run is paused at
        assert EN[key].format(**params) in texts(at)
    at.button(key="asst.data.train.reset").click().run()
    with live_model(at, "asst.data.train") as run:
        assert run.steps == 0


def test_cleaning_that_leaves_too_little_text_is_a_message_not_a_traceback():
    at = page("zh", section="data", d_min_words="12", d_threshold="0.3",
              d_steps=format_value(PARAMS["d_steps"], ("quality", "near")))
    assert not at.exception
    r = clean(make_corpus(0), CleanConfig(steps=("quality", "near"), min_words=12, threshold=0.3))
    if len(r.kept) < 10:
        assert catalogue("zh")["asst.data.live.too_little"] in [e.value for e in at.error]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_bad_url_values_get_a_notice_in_the_users_language(lang):
    at = page(lang, section="data", d_threshold="7", d_perm="100", d_ngram="banana", p_n="-3")
    assert len(at.warning) == 4 and not at.exception
    assert at.slider(key="asst.d_threshold").value == 0.55


def test_fuzz_every_widget_in_english():
    rng = random.Random(11)
    choices = schema_choices(P, SCHEMA)
    for section in OURS:
        at = page(section=section)
        for i in range(6):
            widgets = [w for kind in ("slider", "select_slider", "selectbox", "number_input", "toggle", "button_group",
                                      "text_input")
                       for w in getattr(at, kind) if w.key and w.key.startswith("asst.") and w.key != "asst.section"]
            w = rng.choice(widgets)
            fuzz_widget(w, rng, choices, strings=("", "a", "<b>x</b> **y**", "字" * 60))
            at.run()
            assert not at.exception, (section, i, w.key, at.exception)


def test_random_url_values_in_chinese():
    rng = random.Random(5)
    for k in range(3):
        q = {"section": OURS[k % 2]}
        for p in SCHEMA:
            if p.name == "section" or p.name == "d_seed" or rng.random() < 0.6:
                continue
            if p.kind == "choice":
                q[p.name] = format_value(p, rng.choice(p.choices))
            elif p.kind in ("int", "float"):
                q[p.name] = format_value(p, rng.choice([p.lo, p.hi]) if p.kind == "float" else int(rng.choice([p.lo,
                                                                                                         p.hi])))
            elif p.kind == "bool":
                q[p.name] = rng.choice(["0", "1"])
        at = page("zh", **q)
        assert not at.exception, q
        assert np.isfinite(len(at.markdown))
