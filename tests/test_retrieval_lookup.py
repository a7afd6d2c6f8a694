"""The retrieval (sim.linalg.retrieval) against scikit-learn's TfidfVectorizer on character n-grams, and by hand; the
embedding lookup (sim.linalg.lookup) against torch.nn.Embedding, one-hot @ table and the notes' ids [4, 18, 7]."""
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from sklearn.feature_extraction.text import TfidfVectorizer

from labs.foundations.schema import SCHEMA
from sim.linalg.lookup import lookup
from sim.linalg.retrieval import Index, Paragraph, QueryError, course_dir, course_paragraphs, ngrams, split_paragraphs
from sim.transformers.shapes import NOTES_IDS

TEXTS = ["The cat sat on the mat.", "A dog chased the cat!", "余弦相似度衡量两个向量的方向。", "向量的点积除以长度",
         "Embeddings map tokens to vectors; cosine similarity compares them."]
PARAS = [Paragraph("t", i + 1, s) for i, s in enumerate(TEXTS)]
SEEDS = Path("/work/shared/seeds")


def sklearn_scores(question: str) -> np.ndarray:
    """The same vectors by scikit-learn: character 1-3-grams (blank ones dropped by our side: see below), smoothed
    IDF, L2 rows; cosine = the product of the rows."""
    vec = TfidfVectorizer(analyzer=lambda s: [g for g, k in ngrams(s).items() for _ in range(k)], smooth_idf=True)
    D = vec.fit_transform(TEXTS)
    return (D @ vec.transform([question]).T).toarray().ravel()


@pytest.mark.parametrize("question", ["cat", "the cat and the dog", "余弦相似度", "向量 cosine", "MAT?"])
def test_scores_equal_scikit_learn(question):
    np.testing.assert_allclose(Index(PARAS).scores(question), sklearn_scores(question), atol=1e-12)


def test_ngrams_by_hand():
    assert ngrams("Ab c") == {"a": 1, "b": 1, "c": 1, "ab": 1, "b ": 1, " c": 1, "ab ": 1, "b c": 1}
    assert ngrams("  \n ") == {} and ngrams("向量向") == {"向": 2, "量": 1, "向量": 1, "量向": 1, "向量向": 1}


def test_search_ranks_and_refuses_bad_questions():
    ix = Index(PARAS)
    hits = ix.search("cosine similarity of vectors", 2)
    assert hits[0].paragraph.number == 5 and hits[0].score > hits[1].score > 0
    assert math.isclose(sum(v * v for v in ix.vector("cat").values()), 1.0)
    for q, code in (("", "empty"), ("   \n", "empty"), ("x" * 301, "long"), ("ßßß", "unknown")):
        with pytest.raises(QueryError) as e:
            ix.search(q)
        assert e.value.code == code
    assert Index(PARAS).search("the cat", 1)[0].score == pytest.approx(max(sklearn_scores("the cat")))


def test_paragraphs_and_the_course_folder(tmp_path, monkeypatch):
    text = "Title\n\nfirst paragraph with enough characters\nwrapped.\n\n\nshort\n\nsecond paragraph, long enough here."
    ps = split_paragraphs(text, "x.txt")
    assert [p.text for p in ps] == ["first paragraph with enough characters wrapped.",
                                    "second paragraph, long enough here."] and [p.number for p in ps] == [1, 2]
    monkeypatch.delenv("MLSIM_COURSE_TEXTS", raising=False)
    assert course_dir(tmp_path / "repo") is None  # a clone without the texts: the page searches its own
    (tmp_path / "shared" / "seeds").mkdir(parents=True)
    (tmp_path / "shared" / "seeds" / "a.txt").write_text(text, encoding="utf-8")
    assert course_dir(tmp_path / "repo") == tmp_path / "shared" / "seeds"
    assert len(course_paragraphs(course_dir(tmp_path / "repo"))) == 2


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the course texts are not on this machine")
def test_the_article_answers_a_cosine_question():
    ix = Index(course_paragraphs(SEEDS))
    top = ix.search("什么是余弦相似度", 3)
    assert top[0].paragraph.source == "llm-foundations-article.zh.txt" and "余弦相似度" in top[0].paragraph.text


def test_lookup_equals_torch_embedding_and_one_hot_product():
    r = lookup((4, 18, 7), 20, 4, 0)
    table = torch.tensor(r.table)
    ref = torch.nn.Embedding(20, 4)
    with torch.no_grad():
        ref.weight.copy_(table)
        np.testing.assert_array_equal(ref(torch.tensor([4, 18, 7])).numpy(), r.rows)
    np.testing.assert_array_equal(r.one_hot @ r.table, r.product)
    np.testing.assert_array_equal(r.rows, r.table[[4, 18, 7]])
    assert r.equal and r.rows.shape == (3, 4) and r.one_hot.sum() == 3 and r.one_hot[0, 4] == 1
    assert np.allclose(r.table, np.round(r.table, 1))


def test_the_notes_ids_are_the_default_and_bad_ids_are_refused():
    assert {p.name: p.default for p in SCHEMA}["lk_ids"] == NOTES_IDS == (4, 18, 7)
    for ids, V in (((20,), 20), ((-1,), 20), (tuple(range(9)), 20), ((1,), 65)):
        with pytest.raises(ValueError):
            lookup(ids, V, 4, 0)


def test_the_lookup_figure_writes_every_value_with_two_decimals():
    """The numbers in the cells are short enough to read (not a float32's -1.100000023841858), and they are the table's
    and the result's values."""
    from sim.plots.embeddings import lookup_figure

    r = lookup((4, 18, 7), 20, 4, 0)
    fig = lookup_figure(r.table, r.ids, r.rows, {"table": "", "result": "", "id": "", "dim": ""})
    for trace, values in zip(fig.data, (r.table, r.rows), strict=True):
        written = np.array(trace.text)
        assert written.shape == values.shape and all(len(s) <= 5 for s in written.ravel())  # e.g. "-1.10"
        np.testing.assert_allclose(written.astype(float), values, atol=0.005)
