"""The transformer-block lab's KV-cache section: what MHA, GQA, MQA and MLA keep per token, and the article's MLA claim
beside this table's own ratio."""
import pandas as pd
import streamlit as st

from sim.plots.blocks import bars_figure
from sim.plots.shapes import human_bytes
from sim.transformers.blocks import DEEPSEEK_V2_MLA, KV_KINDS, kv_bytes_per_token_layer, kv_ratios
from sim.transformers.claims import fewer_case
from sim.transformers.shapes import kv_cache_bytes
from ui import charts
from ui.course import course_note
from ui.i18n import t
from ui.urlstate import PageState


def kv_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:  # the heads, the kept latent and the context beside the bars; the model's other sizes folded
        H, kv, dc, T = (state.widget(n, fold=False) for n in ("k_heads", "k_kv", "k_dc", "k_seq"))
        with state.more(side):
            L, dh, dr, B, dtype = (state.widget(n) for n in ("k_layers", "k_dhead", "k_drope", "k_batch", "k_dtype"))
    if H % kv:
        figure.error(t("blk.kv.bad_groups", kv=kv, h=H), icon=":material/error:")
        return
    per = {kind: kv_bytes_per_token_layer(kind, H, dh, kv, dc, dr, dtype) for kind in KV_KINDS}
    total = {kind: per[kind] * L * T * B for kind in KV_KINDS}
    heads = {"mha": H, "gqa": kv, "mqa": 1}
    shape_lab = {k: kv_cache_bytes(L, T, H * dh, H, n, dtype, B) for k, n in heads.items()}  # the shape lab's
    names = [t(f"blk.kv.name.{k}") for k in KV_KINDS]
    with figure:
        charts.plotly_chart(st, bars_figure(names, [total[k] for k in KV_KINDS], t("blk.kv.chart", T=T, B=B),
                                            t("blk.kv.axis"), log=True, text=[human_bytes(total[k]) for k in KV_KINDS]),
                            key="blk.fig.kv")
    ratios = kv_ratios(per)
    case = fewer_case(ratios["mha"])
    summary = "fewer" if case == "magnitude" else case  # the order of magnitude is the course note's to weigh
    article = "match" if (H, dh, dc, dr) == DEEPSEEK_V2_MLA else "other"
    figure.caption(t(f"blk.kv.summary.{summary}", mha=2 * H * dh, mla=dc + dr, ratio=times(ratios["mha"]), h=H, dh=dh,
                     dc=dc, dr=dr) + " " + t(f"blk.kv.article.{article}"))
    st.dataframe(pd.DataFrame({
        t("blk.kv.col.kind"): names,
        t("blk.kv.col.numbers"): [per[k] // dtype for k in KV_KINDS],
        t("blk.kv.col.per_token"): [human_bytes(per[k]) for k in KV_KINDS],
        t("blk.kv.col.total"): [human_bytes(total[k]) for k in KV_KINDS],
        t("blk.kv.col.shape_lab"): [human_bytes(shape_lab[k]) if k in shape_lab else "—" for k in KV_KINDS],
        t("blk.kv.col.ratio"): [per["mha"] / per[k] if per[k] else float("inf") for k in KV_KINDS]}).style.format(
        {t("blk.kv.col.ratio"): "{:.1f}×"}), hide_index=True)
    st.caption(t("blk.kv.help"))
    vs = {k: t(f"blk.course.mla.{fewer_case(ratios[k])}", ratio=times(ratios[k])) for k in ("gqa", "mha")}
    course_note(t("blk.course.mla.says"), t("blk.course.mla.shows", kv=kv, gqa=per["gqa"] // dtype,
                                             mla=per["mla"] // dtype, vs_gqa=vs["gqa"], vs_mha=vs["mha"]))
    st.markdown(t("blk.kv.intro"))


def times(ratio: float) -> str:
    """How many times fewer (ratio ≥ 1) or more (below 1) numbers MLA caches, as the page writes it."""
    return f"{ratio if ratio >= 1 else 1 / ratio:.1f}"
