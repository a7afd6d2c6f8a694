"""The shape lab's embedding lookup: the notes' ids [4, 18, 7] looked up in the token embedding of the lab's model."""
import pandas as pd
import streamlit as st

from sim.plots.shapes import shape_text
from sim.transformers.shapes import LOOKUP_MAX_VALUES, NOTES_IDS, ShapeConfig, ShapeError, embedding_lookup
from ui.i18n import t

SHOWN_COLUMNS = 8  # columns of the looked-up rows written out


def lookup_view(c: ShapeConfig, error_text) -> None:
    st.subheader(t("shp.lookup.title", ids=shape_text(NOTES_IDS)))
    try:
        r = embedding_lookup(c)
    except ShapeError as e:
        st.info(error_text(e), icon=":material/info:")
        return
    ids = list(r.ids)
    st.markdown(t("shp.lookup.intro", V=c.vocab_size, d=c.d_model, ids=shape_text(ids), n=len(ids),
                  table=shape_text(r.table_shape), out=shape_text(r.out_shape)))
    if r.rows is None:
        st.caption(t("shp.lookup.no_numbers", n=f"{LOOKUP_MAX_VALUES:,}"))
        return
    shown = r.rows[:, :SHOWN_COLUMNS].float().numpy()
    st.dataframe(pd.DataFrame(shown, index=[t("shp.lookup.row", i=i + 1, id=k) for i, k in enumerate(ids)],
                              columns=[str(j) for j in range(shown.shape[1])]).style.format("{:.3f}"),
                 key="shp.lookup_df")
    more = t("shp.lookup.more", shown=SHOWN_COLUMNS, d=c.d_model) if c.d_model > SHOWN_COLUMNS else ""
    st.caption(t(f"shp.lookup.check.{'same' if r.rows_are_table_rows else 'differ'}", first=ids[0]) + more)
