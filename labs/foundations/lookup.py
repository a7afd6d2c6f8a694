"""The embedding-lookup section: token ids pick rows of the (V, d) table, equal to their one-hot vectors times the
table (sim.linalg.lookup), with the notes' ids [4, 18, 7] by default."""
import pandas as pd
import streamlit as st

from sim.core.text import Markup, md
from sim.linalg.lookup import MAX_IDS, Lookup, lookup, onehot_cost
from sim.plots.embeddings import lookup_figure, result_row
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
    text = st.text_input(t(key), key=key, max_chars=8 * param.max_len)  # ids of up to 6 digits, ", " between
    try:
        ids = parse_value(param, text.replace(" ", "").replace("，", ",").strip(",[]"))  # at least one (min_len)
    except (ValueError, OverflowError):
        st.error(t("fnd.lk.bad_ids", text=md(text[:60]), n=MAX_IDS, hi=param.hi,
                   kept=", ".join(map(str, state.values["lk_ids"]))), icon=":material/error:")
        return state.values["lk_ids"]
    state.set("lk_ids", ids)
    return ids


def lookup_text(r: Lookup, V: int, d: int) -> Markup:
    """The lookup explained with its ids: the result's first row is the row of the first id (rows counted from 1,
    ids from 0), and whether the layer and the one-hot product agreed."""
    return t("fnd.lk.explain", ids=list(r.ids), T=len(r.ids), V=V, d=d, first=r.ids[0], pos=r.ids[0] + 1,
             equal=t(f"fnd.lk.equal.{r.equal}"))


def onehot_text(T: int, V: int, d: int) -> Markup:
    """What the one-hot product would cost, and how much of it multiplies by zero."""
    mults, zeros = onehot_cost(T, V, d)
    return t("fnd.lk.onehot", T=T, V=V, mults=f"{mults:,}", zeros=f"{zeros:,}", share=f"{zeros / mults:.0%}")


def lookup_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:
        ids = ids_input(state)
        for n in ("lk_vocab", "lk_dim"):
            state.widget(n, fold=False)
        with state.more(side):
            state.widget("lk_seed")
    v = state.values
    if max(ids) >= v["lk_vocab"]:
        figure.error(t("fnd.lk.id_range", id=max(ids), V=v["lk_vocab"]), icon=":material/error:")
        st.markdown(t("fnd.lk.intro"))
        return
    r = lookup(ids, v["lk_vocab"], v["lk_dim"], v["lk_seed"])
    labels = {k: str(t(f"fnd.lk.fig.{k}", V=v["lk_vocab"], d=v["lk_dim"], T=len(ids)))
              for k in ("table", "result", "id", "dim")}
    with figure:
        charts.plotly_chart(st, lookup_figure(r.table, r.ids, r.rows, labels), key="fnd.lk.fig")
        st.markdown(lookup_text(r, v["lk_vocab"], v["lk_dim"]))
    st.markdown(t("fnd.lk.intro"))
    left, right = st.columns(2, gap="medium")  # below the stage: the one-hot table narrower than the lookup
    left.dataframe(pd.DataFrame(r.one_hot.astype(int), index=[result_row(k, i) for k, i in enumerate(ids)],
                                columns=[str(c) for c in range(v["lk_vocab"])]))
    right.caption(onehot_text(len(ids), v["lk_vocab"], v["lk_dim"]))
