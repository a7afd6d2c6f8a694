"""The transformer-block lab's KV-cache section: what MHA, GQA, MQA and MLA keep per token, and the article's MLA claim
beside this table's own ratio."""
import pandas as pd
import streamlit as st

from sim.plots.blocks import bars_figure
from sim.plots.shapes import human_bytes
from sim.transformers.blocks import KV_KINDS, kv_bytes_per_token_layer, kv_ratios
from sim.transformers.shapes import kv_cache_bytes
from ui import charts
from ui.course import course_note
from ui.i18n import t
from ui.urlstate import PageState


def kv_section(state: PageState) -> None:
    st.markdown(t("blk.kv.intro"))
    c = st.columns(5)
    L, H, dh = (state.widget(n, container=col)
                for n, col in zip(("k_layers", "k_heads", "k_dhead"), c[:3], strict=True))
    kv = state.widget("k_kv", container=c[3])
    dtype = state.widget("k_dtype", container=c[4])
    c = st.columns(4)
    dc, dr = state.widget("k_dc", container=c[0]), state.widget("k_drope", container=c[1])
    T, B = state.widget("k_seq", container=c[2]), state.widget("k_batch", container=c[3])
    if H % kv:
        st.error(t("blk.kv.bad_groups", kv=kv, h=H), icon=":material/error:")
        return
    per = {kind: kv_bytes_per_token_layer(kind, H, dh, kv, dc, dr, dtype) for kind in KV_KINDS}
    total = {kind: per[kind] * L * T * B for kind in KV_KINDS}
    heads = {"mha": H, "gqa": kv, "mqa": 1}
    shape_lab = {k: kv_cache_bytes(L, T, H * dh, H, n, dtype, B) for k, n in heads.items()}  # the shape lab's
    names = [t(f"blk.kv.name.{k}") for k in KV_KINDS]
    st.dataframe(pd.DataFrame({
        t("blk.kv.col.kind"): names,
        t("blk.kv.col.numbers"): [per[k] // dtype for k in KV_KINDS],
        t("blk.kv.col.per_token"): [human_bytes(per[k]) for k in KV_KINDS],
        t("blk.kv.col.total"): [human_bytes(total[k]) for k in KV_KINDS],
        t("blk.kv.col.shape_lab"): [human_bytes(shape_lab[k]) if k in shape_lab else "—" for k in KV_KINDS],
        t("blk.kv.col.ratio"): [per["mha"] / per[k] if per[k] else float("inf") for k in KV_KINDS]}).style.format(
        {t("blk.kv.col.ratio"): "{:.1f}×"}), hide_index=True)
    ratios = kv_ratios(per)
    st.markdown(t("blk.kv.summary", mha=2 * H * dh, mla=dc + dr, ratio=f"{ratios['mha']:.1f}", h=H, dh=dh,
                  dc=dc, dr=dr))
    verdict = t("blk.course.mla.above" if ratios["gqa"] >= 10 else "blk.course.mla.below")
    course_note(t("blk.course.mla.says"), t("blk.course.mla.shows", kv=kv, gqa=per["gqa"] // dtype,
                                             mla=per["mla"] // dtype, ratio=f"{ratios['gqa']:.1f}", verdict=verdict,
                                             mha_ratio=f"{ratios['mha']:.1f}"))
    charts.plotly_chart(st, bars_figure(names, [total[k] for k in KV_KINDS], t("blk.kv.chart", T=T, B=B),
                                        t("blk.kv.axis"), log=True, text=[human_bytes(total[k]) for k in KV_KINDS]),
                        key="blk.fig.kv")
    st.caption(t("blk.kv.help"))
