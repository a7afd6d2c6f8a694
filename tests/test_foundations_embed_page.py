"""AppTest: the foundations lab's embeddings, retrieval and lookup sections in both languages, their widgets, the
live run stepped, URL values and bad input."""
import base64
import json

import numpy as np
import pytest

from apptools import cursor, live_advance, open_lab, texts
from sim.language.embeddings import EmbedConfig, EmbedRun, cosine_matrix, nearest, vocabulary
from sim.linalg.lookup import lookup
from sim.linalg.retrieval import MAX_QUERY
from ui.i18n import catalogue

P = "labs/foundations/page.py"


def live_frames(at) -> list[dict]:
    (view,) = [e for e in at.get("bidi_component") if e.proto.component_name.endswith("mlsim_live_plots")]
    return json.loads(view.proto.json)["data"]["frames"] if "data" in json.loads(view.proto.json) else \
        json.loads(view.proto.json)["frames"]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_live_embeddings_step_and_list_the_words_neighbours(lang):
    at = open_lab(P, lang, section="embeddings", emb_word="2", emb_seed="3")
    cat = catalogue(lang)
    assert not at.exception and not at.error
    assert at.selectbox(key="fnd.emb_word").value == 2
    live_advance(at, "fnd.emb", 300)
    at.run()
    frame = live_frames(at)[-1]
    assert [p["type"] for p in frame["panels"]] == ["xy", "heatmap", "xy"]
    words, pos = vocabulary(lang)
    texts_drawn = [w for s in frame["panels"][0]["series"] for w in s["texts"]]
    assert sorted(texts_drawn) == sorted(w.strip() for w in words)
    # the caption's neighbours are those of the run at that step, computed here on a private copy
    run = EmbedRun(EmbedConfig(lang=lang, seed=3))
    run.advance(frame["step"])
    j, c = nearest(cosine_matrix(run.W_in), 2, 1)[0]
    assert f"{words[j].strip()} {c:+.2f}" in frame["caption"]
    assert cat["fnd.emb.caption"].split("{")[0].strip() in frame["caption"]
    before = cursor(at, "fnd.emb").pos
    at.button(key="fnd.emb.step").click().run()  # Step: emb_speed (10) steps more
    assert cursor(at, "fnd.emb").pos == before + 10


def test_settings_rebuild_the_run_and_bad_url_values_are_noticed():
    at = open_lab(P, "en", section="embeddings", emb_word="31", emb_lr="99", emb_dim="7")
    assert not at.exception and len(at.warning) >= 2  # the schema's notice for each bad value
    words, _ = vocabulary("en")
    assert at.selectbox(key="fnd.emb_word").value == len(words) - 1  # held to the language's words
    at.select_slider(key="fnd.emb_dim").set_value(2).run()
    with cursor(at, "fnd.emb").model() as run:
        assert run.config.dim == 2 and run.W_in.shape == (len(words), 2)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_retrieval_answers_a_question_with_scores(lang, monkeypatch, tmp_path):
    """In a clone without the course texts (no $MLSIM_COURSE_TEXTS, no ../shared/seeds): the app's own texts."""
    monkeypatch.delenv("MLSIM_COURSE_TEXTS", raising=False)
    monkeypatch.setattr("labs.foundations.retrieval.ROOT", tmp_path / "repo")
    at = open_lab(P, lang, section="retrieval", rag_k="2")
    cat = catalogue(lang)
    assert not at.exception and not at.error and not at.warning
    page = texts(at)
    assert cat["fnd.rag.corpus_app"].split("{")[0] in page
    assert at.get("plotly_chart")
    bars = json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]
    assert len(bars["x"]) == 2 and bars["x"][0] >= bars["x"][1] > 0
    at.button(key="fnd.rag.ask_1").click().run()
    assert at.text_input(key="fnd.rag_q").value == cat["fnd.rag.ask.1"]


def test_retrieval_over_the_course_texts_and_bad_questions(monkeypatch):
    monkeypatch.setenv("MLSIM_COURSE_TEXTS", "/work/shared/seeds")
    at = open_lab(P, "zh", section="retrieval")
    page = texts(at)
    if "llm-foundations-article.zh.txt" in page:  # the texts are on this machine
        assert "余弦相似度" in page
    for q, code in (("", "empty"), (" \t ", "empty"), ("ßßß", "unknown")):
        at.text_input(key="fnd.rag_q").input(q).run()
        assert not at.exception
        assert any(catalogue("zh")[f"fnd.rag.bad.{code}"].split("{")[0][:8] in w.value for w in at.warning), code
    at.text_input(key="fnd.rag_q").input("[click](https://evil.example) <b>x</b>").run()
    assert not at.exception  # user text is escaped (tests/test_text.py holds the rules)
    # the box takes at most MAX_QUERY characters; a longer question can come only from the URL, which says so
    assert at.text_input(key="fnd.rag_q").proto.max_chars == MAX_QUERY
    at = open_lab(P, "zh", section="retrieval", rag_q="x" * (MAX_QUERY + 1))
    assert not at.exception and at.warning and len(at.text_input(key="fnd.rag_q").value) <= MAX_QUERY


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_lookup_shows_the_notes_ids_and_refuses_bad_ones(lang):
    at = open_lab(P, lang, section="lookup")
    cat = catalogue(lang)
    assert not at.exception and not at.error
    r = lookup((4, 18, 7), 20, 4, 0)
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    z = fig["data"][1]["z"]
    if isinstance(z, dict):  # plotly's typed array
        z = np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(
            [int(n) for n in str(z["shape"]).split(",")])
    np.testing.assert_allclose(np.asarray(z, dtype=float), r.rows)
    assert cat["fnd.lk.equal.True"] in texts(at)
    at.text_input(key="fnd.lk_ids").input("1, 2, 99").run()  # past the schema's range
    assert at.error and not at.exception and at.query_params["lk_ids"] == "4,18,7"
    at.text_input(key="fnd.lk_ids").input("3, 0").run()
    assert at.query_params["lk_ids"] == "3,0" and not at.error
    at.slider(key="fnd.lk_vocab").set_value(3).run()
    assert at.error and not at.exception  # id 3 is not in a vocabulary of 3


def test_the_question_travels_in_the_url():
    at = open_lab(P, "en", section="retrieval", rag_q="learning rate")
    assert at.text_input(key="fnd.rag_q").value == "learning rate" and not at.warning
    at.button(key="fnd.rag.ask_2").click().run()
    assert at.query_params["rag_q"] == catalogue("en")["fnd.rag.ask.2"]
    at.text_input(key="fnd.rag_q").input("cosine").run()
    assert at.query_params["rag_q"] == "cosine"
    at = open_lab(P, "en", section="retrieval", rag_q="x" * 301)  # longer than a question may be: the notice
    assert at.warning and at.text_input(key="fnd.rag_q").value == catalogue("en")["fnd.rag.ask.0"]
