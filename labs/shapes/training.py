"""The shape lab's training-memory section: what Adam training holds per parameter, and the article's 70 B example."""
import streamlit as st

from sim.plots.shapes import gigabytes, human_bytes
from sim.transformers.shapes import ARTICLE_70B, bytes_per_param, training_memory
from ui.i18n import large, t

PARTS = ("weights", "grads", "master", "adam_m", "adam_v", "total")
ARTICLE_PARTS = ("weights", "grads", "master", "optimizer", "total")  # the article gives the two moments as one


def training_memory_view(params: int) -> None:
    """Weights, gradients, master copy and Adam's two moments for the model on screen, fp32 and mixed precision."""
    st.subheader(t("shp.train.title"))
    st.caption(t("shp.train.intro", n=f"{params:,}"))
    fp32, mixed = training_memory(params, "fp32"), training_memory(params, "mixed")
    st.dataframe({t("shp.train.col.part"): [t(f"shp.train.{k}") for k in PARTS],
                  t("shp.train.col.fp32", b=bytes_per_param("fp32")): [human_bytes(fp32[k]) for k in PARTS],
                  t("shp.train.col.mixed", b=bytes_per_param("mixed")): [human_bytes(mixed[k]) for k in PARTS]},
                 hide_index=True, key="shp.train_df")
    st.caption(t("shp.train.same", fp32=bytes_per_param("fp32"), mixed=bytes_per_param("mixed")))
    article_view()


def article_view() -> None:
    """The article's 70 B figures beside the standard mixed-precision accounting of the same model."""
    n = ARTICLE_70B["params"]
    ours, theirs = training_memory(n, "mixed"), training_memory(n, "article")
    missing = t("shp.train.not_counted")
    st.markdown(t("shp.train.article_title", params=large(n)))
    said = [gigabytes(ARTICLE_70B["weights"]), missing, missing, gigabytes(ARTICLE_70B["optimizer"]),
            t("shp.train.over", v=gigabytes(ARTICLE_70B["total"]))]
    st.dataframe({t("shp.train.col.part"): [t(f"shp.train.{k}") for k in ARTICLE_PARTS],
                  t("shp.train.col.article"): said,
                  t("shp.train.col.computed"): [gigabytes(ours[k]) for k in ARTICLE_PARTS]},
                 hide_index=True, key="shp.article_df")
    st.caption(t("shp.train.article_note", said=gigabytes(ARTICLE_70B["total"]), theirs=gigabytes(theirs["total"]),
                 b_theirs=bytes_per_param("article"), moments=gigabytes(ours["optimizer"]),
                 grads=gigabytes(ours["grads"]), master=gigabytes(ours["master"]),
                 b=bytes_per_param("mixed"), ours=gigabytes(ours["total"])))
