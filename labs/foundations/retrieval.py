"""The retrieval section (the R of RAG): a question typed here finds the most similar paragraphs by cosine
similarity of TF-IDF vectors over character n-grams (sim.linalg.retrieval), over the course texts when this server
has them, else over this app's own explanations in the page's language."""
from pathlib import Path

import streamlit as st

from labs.foundations.schema import PAGE, SCHEMA
from sim.linalg.retrieval import MAX_QUERY, Index, Paragraph, QueryError, course_dir, course_paragraphs, ngrams
from sim.plots.embeddings import scores_figure
from ui import charts
from ui.i18n import catalogue, lang, t
from ui.urlstate import PageState, set_values

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = 3  # preset questions per language (fnd.rag.ask.<i>)


@st.cache_resource(show_spinner=False)
def course_index(folder: str) -> Index:
    """The course texts' paragraphs, indexed once per process (read-only: every session searches the same)."""
    return Index(course_paragraphs(Path(folder)))


@st.cache_resource(show_spinner=False)
def app_index(language: str) -> Index:
    """This app's own texts in `language` (every catalogue string of at least a paragraph's length), by key."""
    texts = [(k, v) for k, v in sorted(catalogue(language).items()) if len(v) >= 80]
    return Index([Paragraph(k, 1, v) for k, v in texts])


def corpus() -> tuple[Index, str]:
    """The index searched and the sentence that names it."""
    folder = course_dir(ROOT)
    if folder is not None:
        index = course_index(str(folder))
        files = sorted({p.source for p in index.paragraphs})
        return index, t("fnd.rag.corpus_course", n=len(index.paragraphs), files=files)
    index = app_index(lang())
    return index, t("fnd.rag.corpus_app", n=len(index.paragraphs))


def ask(question: str) -> None:
    set_values(PAGE, SCHEMA, {"rag_q": question})


def retrieval_section(state: PageState) -> None:
    index, says = corpus()
    figure, side = state.stage()
    with side:  # the question and how many paragraphs, then the example questions (their buttons wrap)
        if not state.values["rag_q"] and state.key("rag_q") not in st.session_state:  # "" in the URL: the example
            state.set("rag_q", str(t("fnd.rag.ask.0")))
        question = state.widget("rag_q", fold=False)
        k = state.widget("rag_k", fold=False)
        bar = st.container(horizontal=True, vertical_alignment="center")
        bar.caption(t("fnd.rag.presets"))
        for i in range(QUESTIONS):
            q = str(t(f"fnd.rag.ask.{i}"))
            bar.button(q, on_click=ask, args=(q,), key=f"fnd.rag.ask_{i}")
    try:
        hits = index.search(question, k)
    except QueryError as e:
        figure.warning(t(f"fnd.rag.bad.{e.code}", n=len(question), most=MAX_QUERY), icon=":material/help:")
        st.markdown(t("fnd.rag.intro"))
        return
    q = index.vector(question)
    heaviest = sorted(q, key=lambda g: (-q[g], g))[:8]
    names = [str(t("fnd.rag.name", rank=i + 1, source=h.paragraph.source, number=h.paragraph.number))
             for i, h in enumerate(hits)]
    with figure:
        charts.plotly_chart(st, scores_figure(names, [h.score for h in hits], str(t("fnd.rag.fig"))),
                            key="fnd.rag.fig")
        st.caption(says)
        st.markdown(t("fnd.rag.query", total=len(ngrams(question)), known=len(q),
                      heavy=[f"“{g}” {q[g]:.2f}" for g in heaviest]))
    st.markdown(t("fnd.rag.intro"))
    for name, h in zip(names, hits, strict=True):
        st.markdown(t("fnd.rag.hit", name=name, score=f"{h.score:.3f}", text=h.paragraph.text))
    st.caption(t("fnd.rag.explain"))
