"""The embedding-lookup section: token ids pick rows of the (V, d) table, equal to their one-hot vectors times the
table (sim.linalg.lookup), with the notes' ids [4, 18, 7] by default."""
import pandas as pd
import streamlit as st

from sim.core.text import md
from sim.linalg.lookup import MAX_IDS, lookup
from sim.plots.embeddings import lookup_figure
from ui import charts
from ui.i18n import t
from ui.schema import parse_value
from ui.urlstate import PageState

ss = st.session_state


def ids_input(state: PageState) -> tuple[int, ...]:
    """The ids typed as "4, 18, 7"; a bad list is reported and the last good one kept."""
    param, key = state.params["lk_ids"], state.key("lk_ids")
    if key not in ss:
        ss[key] = ", ".join(map(str, state.values["lk_ids"]))
    text = st.text_input(t(key), key=key)
    try:
        ids = parse_value(param, text.replace(" ", "").replace("，", ",").strip(",[]"))
        if not ids:
            raise ValueError(text)
    except (ValueError, OverflowError):
        st.error(t("fnd.lk.bad_ids", text=md(text[:60]), n=MAX_IDS, hi=param.hi,
                   kept=", ".join(map(str, state.values["lk_ids"]))), icon=":material/error:")
        return state.values["lk_ids"]
    state.set("lk_ids", ids)
    return ids


def lookup_section(state: PageState) -> None:
    st.markdown(t("fnd.lk.intro"))
    with state.controls():
        cols = st.columns([2, 1, 1, 1])
        with cols[0]:
            ids = ids_input(state)
        for col, n in zip(cols[1:], ("lk_vocab", "lk_dim", "lk_seed"), strict=True):
            state.widget(n, container=col)
    v = state.values
    if max(ids) >= v["lk_vocab"]:
        st.error(t("fnd.lk.id_range", id=max(ids), V=v["lk_vocab"]), icon=":material/error:")
        return
    r = lookup(ids, v["lk_vocab"], v["lk_dim"], v["lk_seed"])
    labels = {k: str(t(f"fnd.lk.fig.{k}", V=v["lk_vocab"], d=v["lk_dim"], T=len(ids)))
              for k in ("table", "result", "id", "dim")}
    charts.plotly_chart(st, lookup_figure(r.table, r.ids, r.rows, labels), key="fnd.lk.fig")
    st.markdown(t("fnd.lk.explain", ids=list(ids), T=len(ids), V=v["lk_vocab"], d=v["lk_dim"], first=ids[0],
                  equal=t(f"fnd.lk.equal.{r.equal}")))
    st.caption(t("fnd.lk.onehot", T=len(ids), V=v["lk_vocab"]))
    st.dataframe(pd.DataFrame(r.one_hot.astype(int), index=[f"{k}: id {i}" for k, i in enumerate(ids)],
                              columns=[str(c) for c in range(v["lk_vocab"])]))
