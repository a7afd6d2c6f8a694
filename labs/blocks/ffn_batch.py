"""The FFN section's batch: the notes' 8 tokens through their tiny FFN, and the shapes at the section's sizes."""
import pandas as pd
import streamlit as st

from sim.plots.shapes import shape_text
from sim.transformers.attention import fmt
from sim.transformers.blocks import ffn_trace
from sim.transformers.claims import batch_case, width_case
from sim.transformers.transformer import NOTES_BATCH_ROWS, notes_ffn_batch
from ui.i18n import t

STAGES = ("X", "H", "A", "Y")  # input, after the up-projection, after ReLU, after the down-projection


def ffn_batch_view(d: int, h: int) -> None:
    st.subheader(t("blk.ffn.batch.title", rows=NOTES_BATCH_ROWS))
    r = notes_ffn_batch()
    st.markdown(t("blk.ffn.batch.intro", rows=NOTES_BATCH_ROWS, x=fmt(r["X"][0], 0), y=fmt(r["Y"][0], 0)))
    for col, key in zip(st.columns(len(STAGES)), STAGES, strict=True):
        col.markdown(t(f"blk.ffn.batch.{key}", shape=shape_text(r[key].shape)))
        col.code("\n".join(fmt(row, 0) for row in r[key]), language=None)
    gap = float((r["Y"] - r["loop"]).abs().max())
    st.caption(t(f"blk.ffn.batch.check.{batch_case(gap)}", rows=NOTES_BATCH_ROWS, gap=f"{gap:g}"))
    st.markdown(t(f"blk.ffn.batch.sizes.{width_case(d, h)}", rows=NOTES_BATCH_ROWS, d=d, h=h))
    steps = ffn_trace("gelu", d, h, NOTES_BATCH_ROWS)
    st.dataframe(pd.DataFrame({t("blk.ffn.batch.col.step"): [t(f"blk.ffn.batch.step.{name}") for name, _, _ in steps],
                               t("blk.ffn.batch.col.in"): [shape_text(s) for _, s, _ in steps],
                               t("blk.ffn.batch.col.out"): [shape_text(s) for _, _, s in steps]}),
                 hide_index=True, key="blk.ffn_batch_df")
