"""The sequence-models lab's sections that need no training: sparse-attention masks, and Mamba's selective scan
(a worked example, its state against a KV cache, the forms timed here)."""
import threading

import streamlit as st

from labs.sequence.memory import trained_window
from sim.plots.sequence import (
    masks_figure,
    parallel_figure,
    reach_figure,
    scan_rows,
    share_figure,
    state_figure,
    timing_figure,
)
from sim.sequence import masks
from sim.sequence.timing import MODELS, crossover, forward_times, sequential_steps
from sim.ssm.cost import FORMS, kv_cache_numbers, mamba_state_numbers, time_forms, worked_scan
from ui import charts
from ui.i18n import t
from ui.urlstate import PageState

PATTERNS = ("window", "dilated", "longformer", "bigbird")
SHARE_LENGTHS = (16, 32, 64, 128, 256, 512, 1024, 2048)
BYTES = 2  # fp16/bf16 numbers, as models are served
_timings: dict[tuple, dict] = {}  # the forms timed, per process: measured once, then shown to every session
_timing_lock = threading.Lock()


def pattern_masks(T: int, w: int, gap: int, n_globals: int, r: int, seed: int, causal: bool) -> dict:
    """Every pattern's (T, T) mask (sim.sequence.masks), the first n_globals positions global."""
    g = tuple(range(n_globals))
    return {"window": masks.window(T, w, causal), "dilated": masks.dilated(T, w, gap, causal),
            "longformer": masks.longformer(T, w, g, causal), "bigbird": masks.bigbird(T, w, g, r, seed, causal)}


@st.cache_data(show_spinner=False, max_entries=32)
def shares(w: int, gap: int, n_globals: int, r: int, seed: int, causal: bool) -> dict[str, list[float]]:
    """The share of scores each pattern computes at each length of SHARE_LENGTHS (full attention: 1, or about ½
    causal)."""
    out = {p: [] for p in ("full", *PATTERNS)}
    for T in SHARE_LENGTHS:
        ms = {"full": masks.full(T, causal), **pattern_masks(T, w, gap, n_globals, r, seed, causal)}
        for p, m in ms.items():
            out[p].append(masks.share_computed(m))
    return out


def sparse_section(state: PageState) -> None:
    st.markdown(t("seq.sp.intro"))
    with state.controls():
        names = ("s_T", "s_w", "s_gap", "s_globals", "s_random", "s_layers", "s_seed")
        for col, n in zip(st.columns(len(names)), names, strict=True):
            state.widget(n, container=col)
        state.widget("s_causal")
    v = state.values
    args = (v["s_w"], v["s_gap"], v["s_globals"], v["s_random"], v["s_seed"], v["s_causal"])
    ms = pattern_masks(v["s_T"], *args)
    labels = {p: str(t(f"seq.sp.{p}")) for p in ("full", *PATTERNS)}
    charts.plotly_chart(st, masks_figure(ms, labels | {k: str(t(f"seq.sp.fig.{k}"))
                                                       for k in ("share", "query", "key")}), key="seq.sp.masks")
    left, right = st.columns(2)
    charts.plotly_chart(left, share_figure(SHARE_LENGTHS, shares(*args), labels | {
        k: str(t(f"seq.sp.fig.{k}")) for k in ("title", "length", "share_axis")}), key="seq.sp.share")
    fields = {"full": masks.receptive_field(masks.full(v["s_T"], v["s_causal"]), v["s_layers"]),
              **{p: masks.receptive_field(m, v["s_layers"]) for p, m in ms.items()}}
    charts.plotly_chart(right, reach_figure(fields, v["s_layers"], labels | {
        k: str(t(f"seq.sp.fig.{k}")) for k in ("reach_title", "query", "positions")} | {
        "title": str(t("seq.sp.fig.reach_title"))}), key="seq.sp.reach")
    last = v["s_T"] - 1
    st.markdown(t("seq.sp.explain", T=v["s_T"], L=v["s_layers"], w=v["s_w"],
                  window=f"{masks.share_computed(ms['window']):.1%}", win_reach=int(fields["window"][last]),
                  lf_reach=int(fields["longformer"][last]), bb_reach=int(fields["bigbird"][last])))
    trained_window(state)


def mamba_section(state: PageState) -> None:
    st.markdown(t("seq.mb.intro"))
    with state.controls():
        c = st.columns(5)
        for col, n in zip(c, ("z_seed", "z_steps", "z_layers", "z_width", "z_longest"), strict=True):
            state.widget(n, container=col)
    v = state.values
    w = worked_scan(v["z_seed"], v["z_steps"])
    st.markdown(t("seq.mb.worked", A=", ".join(f"{a:g}" for a in w.A)))
    cols = {k: str(t(f"seq.mb.col.{k}")) for k in ("t", "u", "delta", "abar", "bbar", "h", "C", "y")}
    st.dataframe(scan_rows(w, cols), hide_index=True, key="seq.mb.table")
    first = 1 if len(w.u) > 1 else 0
    st.markdown(t("seq.mb.step_text", t=first, delta=f"{w.delta[first]:g}", a=f"{w.A[0]:g}",
                  abar=f"{w.abar[first][0]:.3f}", prev=f"{w.h[first - 1][0] if first else 0.0:.3f}",
                  bbar=f"{w.bbar[first][0]:.3f}", u=f"{w.u[first]:g}", h=f"{w.h[first][0]:.3f}"))
    layers, width = v["z_layers"], v["z_width"]
    tokens = [2 ** k for k in range(0, 21)]
    mamba = mamba_state_numbers(layers, width) * BYTES
    kv = [kv_cache_numbers(layers, width, n) * BYTES for n in tokens]
    charts.plotly_chart(st, state_figure(tokens, mamba, kv, {k: str(t(f"seq.mb.fig.{k}")) for k in (
        "title", "tokens", "bytes", "mamba", "kv")}), key="seq.mb.state")
    even = next((n for n, b in zip(tokens, kv, strict=True) if b >= mamba), tokens[-1])
    st.markdown(t("seq.mb.state_explain", mamba=_mib(mamba), kv=_mib(kv_cache_numbers(layers, width, 32_768) * BYTES),
                  even=even))
    lengths = [2 ** k for k in range(6, v["z_longest"].bit_length())]
    times = timings(tuple(lengths))
    charts.plotly_chart(st, timing_figure(lengths, times, {f: str(t(f"seq.mb.form.{f}")) for f in FORMS} | {
        k: str(t(f"seq.mb.fig.{k}")) for k in ("time_title", "length", "ms")} | {
        "title": str(t("seq.mb.fig.time_title"))}), key="seq.mb.time")
    st.caption(t("seq.mb.time_note", longest=lengths[-1], rec=f"{1000 * times['recurrence'][-1]:.1f}",
                 scan=f"{1000 * times['scan'][-1]:.1f}", attn=f"{1000 * times['attention'][-1]:.1f}"))


def measured(key: tuple, measure) -> dict:
    """measure(progress) once per process for `key` (a progress bar meanwhile), then kept for every session."""
    with _timing_lock:
        if key not in _timings:
            bar = st.progress(0.0, text=t("seq.timing"))
            _timings[key] = measure(lambda i, n: bar.progress(i / n, text=t("seq.timing")))
            bar.empty()
        return _timings[key]


def timings(lengths: tuple[int, ...]) -> dict:
    """The Mamba section's forms timed at these lengths (sim.ssm.cost.time_forms), once per process."""
    return measured(("mamba", lengths), lambda progress: time_forms(lengths, progress=progress))


def parallel_section(state: PageState) -> None:
    st.markdown(t("seq.par.intro"))
    with state.controls():
        for col, n in zip(st.columns(2), ("p_width", "p_longest"), strict=True):
            state.widget(n, container=col)
    v = state.values
    lengths = [2 ** k for k in range(4, v["p_longest"].bit_length())]
    width = v["p_width"]
    times = measured(("parallel", width, tuple(lengths)),
                     lambda progress: forward_times(lengths, width=width, progress=progress))
    steps = {m: [sequential_steps(m, T) for T in lengths] for m in MODELS}
    labels = {m: str(t(f"seq.par.{m}")) for m in MODELS} | {k: str(t(f"seq.par.fig.{k}")) for k in (
        "time_title", "steps_title", "length", "ms", "steps")}
    charts.plotly_chart(st, parallel_figure(lengths, times, steps, labels), key="seq.par.fig")
    cross = crossover(lengths, times)
    T = lengths[-1]
    st.markdown(t("seq.par.explain", T=T, rnn=f"{1000 * times['rnn'][-1]:.2f}",
                  attn=f"{1000 * times['attention'][-1]:.2f}", short=lengths[0],
                  rnn_short=f"{1000 * times['rnn'][0]:.3f}", attn_short=f"{1000 * times['attention'][0]:.3f}"))
    st.markdown(t("seq.par.cross", T=cross) if cross is not None else t("seq.par.no_cross", T=T))


def _mib(n_bytes: float) -> str:
    return f"{n_bytes / 2 ** 20:,.2f}"
