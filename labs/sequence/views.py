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
from sim.sequence.claims import cross_claim, fastest, growth, longformer_case, most_growth, window_trend
from sim.sequence.timing import MODELS, forward_times, sequential_steps
from sim.ssm.cost import (
    CONV,
    EXPAND,
    FORMS,
    STATE,
    kv_cache_numbers,
    kv_crossing,
    mamba_state_numbers,
    time_forms,
    worked_scan,
)
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
    figure, side = state.stage()
    with side:
        for n in ("s_T", "s_w", "s_globals"):
            state.widget(n, fold=False)
        state.widget("s_causal", fold=False)
        with state.more(side):
            for n in ("s_gap", "s_random", "s_layers", "s_seed"):
                state.widget(n)
    v = state.values
    args = (v["s_w"], v["s_gap"], v["s_globals"], v["s_random"], v["s_seed"], v["s_causal"])
    ms = pattern_masks(v["s_T"], *args)
    labels = {p: str(t(f"seq.sp.{p}")) for p in ("full", *PATTERNS)}
    charts.plotly_chart(figure, masks_figure(ms, labels | {k: str(t(f"seq.sp.fig.{k}"))
                                                           for k in ("share", "query", "key")}), key="seq.sp.masks")
    st.markdown(t("seq.sp.intro"))
    left, right = st.columns(2)
    charts.plotly_chart(left, share_figure(SHARE_LENGTHS, shares(*args), labels | {
        k: str(t(f"seq.sp.fig.{k}")) for k in ("title", "length", "share_axis")}), key="seq.sp.share")
    full = masks.full(v["s_T"], v["s_causal"])
    fields = {"full": masks.receptive_field(full, v["s_layers"]),
              **{p: masks.receptive_field(m, v["s_layers"]) for p, m in ms.items()}}
    charts.plotly_chart(right, reach_figure(fields, v["s_layers"], labels | {
        k: str(t(f"seq.sp.fig.{k}")) for k in ("reach_title", "query", "positions")} | {
        "title": str(t("seq.sp.fig.reach_title"))}), key="seq.sp.reach")
    T, last = v["s_T"], v["s_T"] - 1
    share = masks.share_computed(ms["window"])
    doubled = masks.share_computed(masks.window(2 * T, v["s_w"], v["s_causal"]))
    win_reach, lf_reach = int(fields["window"][last]), int(fields["longformer"][last])
    st.markdown(t("seq.sp.explain", T=T, T2=2 * T, L=v["s_layers"], w=v["s_w"], window=f"{share:.1%}",
                  window2=f"{doubled:.1%}", win_reach=win_reach, lf_reach=lf_reach,
                  bb_reach=int(fields["bigbird"][last]), full_reach=int(fields["full"][last])))
    trend = window_trend(share, doubled, masks.share_computed(full))
    relay = longformer_case(T, v["s_globals"], v["s_causal"], win_reach, lf_reach)
    st.markdown(t(f"seq.sp.trend.{trend}") + " " + t(f"seq.sp.lf.{relay}", T=T, L=v["s_layers"]))
    trained_window(state)


def mamba_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:
        layers, width = (state.widget(n, fold=False) for n in ("z_layers", "z_width"))
        with state.more(side):
            for n in ("z_seed", "z_steps", "z_longest"):
                state.widget(n)
    v = state.values
    even, larger = kv_crossing(layers, width)
    tokens = sorted({2 ** k for k in range(0, 21)} | {larger})  # the crossing drawn where it is
    mamba = mamba_state_numbers(layers, width) * BYTES
    kv = [kv_cache_numbers(layers, width, n) * BYTES for n in tokens]
    charts.plotly_chart(figure, state_figure(tokens, mamba, kv, {k: str(t(f"seq.mb.fig.{k}")) for k in (
        "title", "tokens", "bytes", "mamba", "kv")}), key="seq.mb.state")
    st.markdown(t("seq.mb.state_explain", mamba=_mib(mamba), kv=_mib(kv_cache_numbers(layers, width, 32_768) * BYTES),
                  n=STATE, conv=CONV - 1, expand=EXPAND, per_layer=mamba_state_numbers(1, 1),
                  per_token=kv_cache_numbers(1, 1, 1), even=f"{even:g}", larger=larger))
    st.markdown(t("seq.mb.intro"))
    w = worked_scan(v["z_seed"], v["z_steps"])
    st.markdown(t("seq.mb.worked", A=", ".join(f"{a:g}" for a in w.A)))
    cols = {k: str(t(f"seq.mb.col.{k}")) for k in ("t", "u", "delta", "abar", "bbar", "h", "C", "y")}
    # as wide as its columns: a table across the page would be larger than the figure above it
    st.dataframe(scan_rows(w, cols), hide_index=True, width="content", key="seq.mb.table")
    first = 1 if len(w.u) > 1 else 0
    st.markdown(t("seq.mb.step_text", t=first, delta=f"{w.delta[first]:g}", a=f"{w.A[0]:g}",
                  abar=f"{w.abar[first][0]:.3f}", prev=f"{w.h[first - 1][0] if first else 0.0:.3f}",
                  bbar=f"{w.bbar[first][0]:.3f}", u=f"{w.u[first]:g}", h=f"{w.h[first][0]:.3f}",
                  scale=f"{w.zoh_scale[first][0]:.3f}", zoh=f"{w.zoh[first][0]:.3f}"))
    lengths = [2 ** k for k in range(6, v["z_longest"].bit_length())]
    times = timings(tuple(lengths))
    left, right = st.columns(2, gap="medium")  # below the stage: smaller than the state figure
    charts.plotly_chart(left, timing_figure(lengths, times, {f: str(t(f"seq.mb.form.{f}")) for f in FORMS} | {
        k: str(t(f"seq.mb.fig.{k}")) for k in ("time_title", "length", "ms")} | {
        "title": str(t("seq.mb.fig.time_title"))}), key="seq.mb.time")
    right.caption(t("seq.mb.time_note", longest=lengths[-1], rec=f"{1000 * times['recurrence'][-1]:.1f}",
                    scan=f"{1000 * times['scan'][-1]:.1f}", attn=f"{1000 * times['attention'][-1]:.1f}",
                    rec_x=_times(times["recurrence"]), scan_x=_times(times["scan"]),
                    attn_x=_times(times["attention"]))
                  + " " + t(f"seq.mb.faster.{fastest(times, ('recurrence', 'scan'))}") + " "
                  + t(f"seq.mb.grew.{most_growth(times)}"))


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
    figure, side = state.stage()
    with side:
        for n in ("p_width", "p_longest"):
            state.widget(n, fold=False)
    v = state.values
    lengths = [2 ** k for k in range(4, v["p_longest"].bit_length())]
    width = v["p_width"]
    with figure:
        times = measured(("parallel", width, tuple(lengths)),
                         lambda progress: forward_times(lengths, width=width, progress=progress))
    steps = {m: [sequential_steps(m, T) for T in lengths] for m in MODELS}
    labels = {m: str(t(f"seq.par.{m}")) for m in MODELS} | {k: str(t(f"seq.par.fig.{k}")) for k in (
        "time_title", "steps_title", "length", "ms", "steps")}
    charts.plotly_chart(figure, parallel_figure(lengths, times, steps, labels), key="seq.par.fig")
    st.markdown(t("seq.par.intro"))
    T = lengths[-1]
    st.markdown(t("seq.par.explain", T=T, rnn=f"{1000 * times['rnn'][-1]:.2f}",
                  attn=f"{1000 * times['attention'][-1]:.2f}", short=lengths[0],
                  rnn_short=f"{1000 * times['rnn'][0]:.3f}", attn_short=f"{1000 * times['attention'][0]:.3f}",
                  half=lengths[-2], rnn_x=_times(times["rnn"]), attn_x=_times(times["attention"])))
    case, at = cross_claim(lengths, times)
    st.markdown(t(f"seq.par.{case}", **at))


def _mib(n_bytes: float) -> str:
    return f"{n_bytes / 2 ** 20:,.2f}"


def _times(times: list[float]) -> str:
    """The growth over the last doubling of the length, as ×k."""
    return f"{growth(times):.1f}"
